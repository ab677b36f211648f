-- ckt kernel library: softmax along the last dimension: Y = exp(X - max) / sum exp(X - max), row by row
-- (f32 statistics; optionally of X + R with the sum written out). The machinery is ckt.kernels.rows;
-- docs/kernels.md, "Row kernels", gives the options, the parameters and what a block does.
--
--   local softmax = require "ckt.kernels.softmax"
--   local k, grid = softmax.build{dtype = "f16", N = 4096}
--   k:compile{target = "cpu"}:launch{grid = grid(M), X = x, Y = y, M = M, N = N}
local rows = require "ckt.kernels.rows"
local softmax = {}

softmax.OPTIONS = rows.options("softmax")

-- build(options) -> kernel, grid(M), plan
function softmax.build(o) return rows.build("softmax", o) end

-- reference{X =, M =, N =, dtype =, ...}: the double-precision reference (rows.reference)
function softmax.reference(a) return rows.reference("softmax", a) end

return softmax
