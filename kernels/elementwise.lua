-- ckt kernel library: elementwise map over n elements, Z = f(X1, X2, ...), thread-raked.
-- Each thread owns 16-byte vectors (the widest access), neighbouring threads neighbouring
-- vectors, `unroll` vectors per thread per block tile; the epilogue `f` is a Lua function of
-- kernel expressions (arithmetic in f32, ckt.max/ckt.exp/ckt.select/... allowed), rounded to the
-- output dtype exactly (RNE) at the store.
--
--   local ew = require "ckt.kernels.elementwise"
--   local k, grid = ew.build{dtype="f16", inputs=2, f=function(x, y) return ckt.max(x + y, 0) end}
--   exe:launch{grid=grid(n), X1=b1, X2=b2, Z=bz, n=n}
local ckt = ckt or require "ckt"
local ew = {}

local vec = require("ckt.kernels.common").vec

function ew.build(o)
  o = o or {}
  local dtype = o.dtype or "f32"
  local out_dtype = o.out_dtype or dtype
  local inputs = o.inputs or 1
  local f = o.f or function(x) return x end
  local block = o.block or 256
  local v = math.min(vec(dtype), vec(out_dtype))
  local unroll = o.unroll or 4
  local tile = block * v * unroll
  local k = ckt.kernel{name = o.name or ("elementwise_" .. dtype), block = block, build = function(b)
    local X = {}
    for i = 1, inputs do X[i] = b:pointer("X" .. i, dtype, {const = true}) end
    local Z = b:pointer("Z", out_dtype)
    local n = b:size("n", {value = o.n, multiple_of = (not o.n) and v or nil})
    -- thread t holds vectors t, t + block, t + 2 block, ... of the tile: a thread-raked layout
    local raked = {thread_layout = ckt.layout(block), scalar_per_vector = v}
    local regs = {}
    for i = 1, inputs do
      local g = ckt.tensor(X[i], dtype, {shape = {n}}, {pad = true})
      regs[i] = ckt.local_tile(g, {tile}, {b:block_id()}, raked):load()
    end
    regs[#regs + 1] = {dtype = out_dtype}
    local z = b:map(f, table.unpack(regs))
    ckt.local_tile(ckt.tensor(Z, out_dtype, {shape = {n}}, {pad = true}), {tile}, {b:block_id()}, raked):store(z)
  end}
  local function grid(n) return (n + tile - 1) // tile end
  return k, grid
end

-- the reference in double precision over host arrays (then rounded to the output dtype by the array)
function ew.reference(f, out_dtype, ...)
  local xs = {...}
  local z = ckt.array(out_dtype, #xs[1])
  local args = {}
  for i = 0, #xs[1] - 1 do
    for j = 1, #xs do args[j] = xs[j][i] end
    z[i] = f(table.unpack(args))
  end
  return z
end

return ew
