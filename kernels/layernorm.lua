-- ckt kernel library: layer normalization of each row: Y = (X - mean) * rstd * W + Bias, rstd = 1 / sqrt(var + eps)
-- (f32 statistics; optionally of X + R with the sum written out). The machinery is ckt.kernels.rows;
-- docs/kernels.md, "Row kernels", gives the options, the parameters and what a block does.
--
--   local layernorm = require "ckt.kernels.layernorm"
--   local k, grid = layernorm.build{dtype = "f16", N = 4096}
--   k:compile{target = "cpu"}:launch{grid = grid(M), X = x, Y = y, M = M, N = N, W = w, Bias = b}
local rows = require "ckt.kernels.rows"
local layernorm = {}

layernorm.OPTIONS = rows.options("layernorm")

-- build(options) -> kernel, grid(M), plan
function layernorm.build(o) return rows.build("layernorm", o) end

-- reference{X =, M =, N =, dtype =, ...}: the double-precision reference (rows.reference)
function layernorm.reference(a) return rows.reference("layernorm", a) end

return layernorm
