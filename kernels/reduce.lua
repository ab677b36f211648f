-- ckt kernel library: row reduction Y[m] = op over n of X[m, n] (sum, max or min), block-raked.
-- One block per row: the block walks the row in tiles of block x vector x unroll elements (a
-- window moved along the row), each thread folds its values into one f32 accumulator, then a
-- tree over LDS combines the threads and thread 0 stores the row's result.
--
--   local red = require "ckt.kernels.reduce"
--   local k, grid = red.build{dtype="f32", op="sum"}
--   exe:launch{grid=grid(M), X=bx, Y=by, M=M, N=N}
local ckt = ckt or require "ckt"
local red = {}

local vec = require("ckt.kernels.common").vec

local identity = {sum = 0, max = -math.huge, min = math.huge}

function red.build(o)
  o = o or {}
  local dtype = o.dtype or "f32"
  local out_dtype = o.out_dtype or "f32"
  local op = o.op or "sum"
  assert(identity[op], "reduce: op must be sum, max or min")
  local block = o.block or 256
  local v = vec(dtype)
  local unroll = o.unroll or 2
  local tile = block * v * unroll
  local k = ckt.kernel{name = o.name or ("reduce_" .. op .. "_" .. dtype), block = block, build = function(b)
    local X = b:pointer("X", dtype, {const = true})
    local Y = b:pointer("Y", out_dtype)
    local M = b:size("M", {value = o.M})
    local N = b:size("N", {value = o.N, multiple_of = (not o.N) and v or nil})
    local gx = ckt.tensor(X, dtype, {shape = {M, N}}, {pad = true})
    local gy = ckt.tensor(Y, out_dtype, {shape = {M}})
    local row = b:block_id()
    local raked = {thread_layout = ckt.layout({1, block}, {0, 1}), scalar_per_vector = v}
    local w = ckt.tile_window(gx, {1, tile}, {row, 0}, raked)
    local acc = ckt.tensor("register", "f32", ckt.layout({1, 1}, {0, 0}), {lengths = {1}})
    b:clear(acc, identity[op])
    b:loop((N + tile - 1) // tile, function()
      b:fold(acc, w:load{fill = identity[op]}, op)
      w:move{0, tile}
    end)
    b:block_reduce(acc, op)
    local out = b:map(function(x) return x end, acc, {dtype = out_dtype})
    ckt.tile_window(gy, {1}, {row}):store(out) -- thread 0 (the register's distribution) stores
  end}
  local function grid(M) return M end
  return k, grid
end

function red.reference(x, M, N, op, out_dtype)
  local y = ckt.array(out_dtype or "f32", M)
  for m = 0, M - 1 do
    local a = identity[op]
    for n = 0, N - 1 do
      local v = x[m * N + n]
      if op == "sum" then a = a + v elseif op == "max" then a = math.max(a, v) else a = math.min(a, v) end
    end
    y[m] = a
  end
  return y
end

return red
