-- ckt kernel library: RMS normalization of each row: Y = X * rstd * W, rstd = 1 / sqrt(mean(X^2) + eps)
-- (f32 statistics; optionally of X + R with the sum written out). The machinery is ckt.kernels.rows;
-- docs/kernels.md, "Row kernels", gives the options, the parameters and what a block does.
--
--   local rmsnorm = require "ckt.kernels.rmsnorm"
--   local k, grid = rmsnorm.build{dtype = "f16", N = 4096}
--   k:compile{target = "cpu"}:launch{grid = grid(M), X = x, Y = y, M = M, N = N, W = w}
local rows = require "ckt.kernels.rows"
local rmsnorm = {}

rmsnorm.OPTIONS = rows.options("rmsnorm")

-- build(options) -> kernel, grid(M), plan
function rmsnorm.build(o) return rows.build("rmsnorm", o) end

-- reference{X =, M =, N =, dtype =, ...}: the double-precision reference (rows.reference)
function rmsnorm.reference(a) return rows.reference("rmsnorm", a) end

return rmsnorm
