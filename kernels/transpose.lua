-- ckt kernel library: transpose through LDS, Y (N x M) = X (M x N)^T, both row-major.
-- A block moves one T x T tile (T = 16 x the 16-byte vector: 64 for f32, 128 for f16):
--   1. global -> LDS: threads row-major over the tile, 16-byte vectors along X's rows, stored
--      as 16-byte vectors into the LDS tile (m, n);
--   2. LDS -> global: thread t owns a v x v sub-block (v = elements per 16 bytes): it reads v
--      16-byte row vectors of the LDS tile and writes v 16-byte vectors of Y's rows. The
--      transposition is free: Y is viewed in X's coordinates, (m, n) -> n*M + m, so the
--      store just groups the same registers along m instead of n.
-- Step 2 reads LDS rows v apart: the LDS layout is chosen by ckt.lds.find_swizzle (a swizzle
-- when one is conflict-free, else padding) for the target's bank model, from the two access
-- patterns below. `swizzle=false` keeps the plain row-major tile (to measure the conflicts).
local ckt = ckt or require "ckt"
local tr = {}

local function vec(dtype) return 16 // ckt.array(dtype, 1):bytes() end

-- The LDS accesses as (thread, value) -> the tile's colexicographic index (m + T*n) of each
-- vector's first element: what ckt.lds.find_swizzle and ckt.lds.analyze_tensor take.
function tr.access_maps(T, v, block)
  local per_row = T // v                      -- threads along a row in step 1
  local rows = block // per_row               -- rows per pass in step 1
  local write = ckt.layout({{per_row, rows}, T // rows}, {{T * v, 1}, rows})
  local read = ckt.layout({{T // v, T // v}, v}, {{v, T * v}, 1})
  return write, read
end

function tr.lds_layout(o, dtype, T, block)
  local tile = ckt.layout({T, T}, {T, 1})
  if o.swizzle == false then return tile, "row-major (no swizzle)" end
  local v = vec(dtype)
  local write, read = tr.access_maps(T, v, block)
  local target = o.target or "gfx90a"
  if target:sub(1, 4) == "cpu:" then target = target:sub(5) elseif target == "cpu" then target = "gfx90a" end
  local c = ckt.lds.find_swizzle{target = target, layout = tile, dtype = dtype,
                                 write = {thread_map = write, vector = v}, read = {thread_map = read, vector = v}}
  local why = c.swizzle and tostring(c.swizzle) or (c.padding_banks > 0 and (c.padding_banks .. " banks of padding") or "plain")
  return c.layout, why .. (c.conflict_free and ", conflict-free" or ", not conflict-free") .. " for " .. target
end

function tr.build(o)
  o = o or {}
  local dtype = o.dtype or "f32"
  local v = vec(dtype)
  local T = o.tile or 16 * v
  local block = o.block or (T // v) * (T // v)
  assert((T // v) * (T // v) == block, "transpose: block must be (tile / vector)^2 threads")
  local lds, why = tr.lds_layout(o, dtype, T, block)
  local k = ckt.kernel{name = o.name or ("transpose_" .. dtype), block = block, build = function(b)
    local X = b:pointer("X", dtype, {const = true})
    local Y = b:pointer("Y", dtype)
    local M = b:size("M", {value = o.M, multiple_of = (not o.M) and T or nil})
    local N = b:size("N", {value = o.N, multiple_of = (not o.N) and T or nil})
    local gx = ckt.tensor(X, dtype, {shape = {M, N}})
    local gyt = ckt.tensor(Y, dtype, {shape = {M, N}, stride = {1, M}}) -- Y seen as (m, n)
    local s = ckt.tensor("lds", dtype, lds)
    local tm, tn = b:block_order{tiles = {M // T, N // T}, order = o.order or "row"}
    local tile = ckt.tile_window(s, {T, T}, {0, 0})
    b:copy(tile, ckt.local_tile(gx, {T, T}, {tm, tn}))
    b:sync()
    local sub = ckt.layout({{T // v, T // v}, {v, v}}, {{T * v, v}, {1, T}}) -- thread -> v x v block
    local r = tile:load{dist = sub}
    ckt.local_tile(gyt, {T, T}, {tm, tn}):store(r, {vector_dim = 0})
  end}
  local function grid(M, N) return (M // T) * (N // T) end
  return k, grid, why
end

function tr.reference(x, M, N)
  local y = ckt.array(x:dtype(), {N, M})
  for m = 0, M - 1 do for n = 0, N - 1 do y[n * M + m] = x[m * N + n] end end
  return y
end

return tr
