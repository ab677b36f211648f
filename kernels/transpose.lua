-- ckt kernel library: transpose through LDS, Y (N x M) = X (M x N)^T, both row-major.
-- A block moves one TM x TN tile (the defaults per target: tr.default_tile):
--   1. global -> LDS: threads row-major over the tile, 16-byte vectors along X's rows, stored
--      as 16-byte vectors into the LDS tile (m, n);
--   2. LDS -> global: each thread owns v x v sub-blocks (v = elements per 16 bytes), threads
--      along m first: it reads v 16-byte row vectors of the LDS tile per sub-block and writes v
--      16-byte vectors of Y's rows. The transposition is free: Y is viewed in X's coordinates,
--      (m, n) -> n*M + m, so the store just groups the same registers along m instead of n.
--      When the tile has more sub-blocks than the block has threads, a thread takes several
--      (more bytes in flight per thread).
-- Step 2 reads LDS rows v apart: the LDS layout is chosen by ckt.lds.find_swizzle (a swizzle
-- when one is conflict-free, else padding) for the target's bank model, from the two access
-- patterns of the plan. `swizzle=false` keeps the plain row-major tile (to measure the conflicts).
local ckt = ckt or require "ckt"
local vec = require("ckt.kernels.common").vec
local tr = {}

-- the GPU whose bank model applies: the target's, or the one a CPU target emulates
-- (ckt.target says which; no target: the default target's)
local function bank_target(target)
  return ckt.target(target).name
end

-- The default tile and block of a target, from bench/tune.lua (bench/results/tune_h100_*.json).
-- NVIDIA (an H100, 2026-11-23): 4-byte elements, a 64 x 64 tile moved by 128 threads (two
-- sub-blocks each): 88-90% of the device-to-device copy and a 69 ms cold NVRTC compile; 256
-- threads reach only 67%. 16-bit elements: no 16 KiB or 32 KiB tile reached 85% (best 84.6%),
-- a 64 KiB tile (256 x 128, dynamic shared memory above 48 KiB) with 128 threads reaches 95%.
-- Its 32 accesses per thread per step took 516 ms to compile cold as straight-line code; the
-- emitter now writes them as loops of 4 passes and it compiles within 10-15 ms of the f32 tile.
-- AMD (not measured: there is no AMD GPU here): a 16 KiB (f32) / 32 KiB (16-bit) tile with 256
-- threads, so that several blocks share a CU's 64 KiB of LDS; the CPU target emulates gfx90a and
-- gets the same.
function tr.default_tile(target, dtype, block)
  local v, esz = vec(dtype), ckt.array(dtype, 1):bytes()
  if target and ckt.target(target).runtime == "cuda" then
    if esz >= 4 then return {16 * v, 16 * v}, block or 128 end
    local TM = 32 * v
    return {TM, 65536 // esz // TM}, block or 128
  end
  return {16 * v, 16 * v}, block
end

-- Everything about one transpose configuration: tile, threads, the two LDS access maps as
-- (thread, value) -> the tile's colexicographic index (m + TM*n) of each vector's first element
-- (what ckt.lds.find_swizzle and ckt.lds.analyze_tensor take), and the thread -> sub-block
-- distribution of step 2 over the row-major tile index (m*TN + n).
function tr.plan(o)
  o = o or {}
  local p = {dtype = o.dtype or "f32"}
  local v = vec(p.dtype)
  local tile, block = o.tile, o.block
  if not tile then tile, block = tr.default_tile(o.target, p.dtype, block) end
  if type(tile) == "number" then tile = {tile, tile} end
  local TM, TN = tile[1], tile[2]
  block = block or math.min(256, (TM // v) * (TN // v))
  local function need(c, msg) if not c then error("transpose: " .. msg, 3) end end
  need(TM % v == 0 and TN % v == 0 and TM > 0 and TN > 0, ("tile %dx%d: both sides must be multiples of %d (16 bytes of %s)"):format(TM, TN, v, p.dtype))
  local per_row = TN // v                            -- step 1: threads along a row
  need(block % per_row == 0 and TM % (block // per_row) == 0, ("block %d must cover whole rows of %d vectors and divide the %d rows"):format(block, per_row, TM))
  local rows = block // per_row                      -- rows per pass in step 1
  local tmt = math.min(TM // v, block)               -- step 2: threads along m, then n
  local tnt = block // tmt
  need(tmt * tnt == block and (TN // v) % tnt == 0, ("block %d does not tile the %dx%d sub-blocks of %dx%d"):format(block, TM // v, TN // v, v, v))
  local rm, rn = (TM // v) // tmt, (TN // v) // tnt  -- sub-blocks per thread along m and n
  p.v, p.TM, p.TN, p.block, p.rm, p.rn = v, TM, TN, block, rm, rn
  p.write = ckt.layout({{per_row, rows}, TM // rows}, {{TM * v, 1}, rows})
  p.read = ckt.layout({{tmt, tnt}, {v, rm, rn}}, {{v, TM * v}, {1, v * tmt, TM * v * tnt}})
  p.dist = ckt.layout({{tmt, tnt}, {v, v, rm, rn}}, {{TN * v, v}, {1, TN, TN * v * tmt, v * tnt}})
  p.tile_layout = ckt.layout({TM, TN}, {TN, 1})
  if o.swizzle == false then
    p.lds, p.why = p.tile_layout, "row-major (no swizzle)"
    return p
  end
  local target = bank_target(o.target)
  local c = ckt.lds.find_swizzle{target = target, layout = p.tile_layout, dtype = p.dtype,
                                 write = {thread_map = p.write, vector = v}, read = {thread_map = p.read, vector = v}}
  p.lds = c.layout
  p.why = (c.swizzle and tostring(c.swizzle) or (c.padding_banks > 0 and (c.padding_banks .. " banks of padding") or "plain"))
          .. (c.conflict_free and ", conflict-free" or ", not conflict-free") .. " for " .. target
  return p
end

-- the bank model's cycles of the two LDS accesses of one block
function tr.bank_cycles(p, target)
  target = bank_target(target)
  local function cycles(map, op)
    return ckt.lds.analyze_tensor{target = target, tensor_layout = p.lds, dtype = p.dtype, thread_map = map, vector = p.v, op = op}.cycles
  end
  return cycles(p.read, "read"), cycles(p.write, "write")
end

function tr.build(o)
  o = o or {}
  -- autotune = true | {M=, N=, ...}: tile, block and swizzle by measurement (ckt.kernels.tuning)
  if o.autotune then return require("ckt.kernels.tuning").run("transpose", tr, o) end
  local p = tr.plan(o)
  local dtype, TM, TN = p.dtype, p.TM, p.TN
  local k = ckt.kernel{name = o.name or ("transpose_" .. dtype), block = p.block, build = function(b)
    local X = b:pointer("X", dtype, {const = true})
    local Y = b:pointer("Y", dtype)
    local M = b:size("M", {value = o.M, multiple_of = (not o.M) and TM or nil})
    local N = b:size("N", {value = o.N, multiple_of = (not o.N) and TN or nil})
    local gx = ckt.tensor(X, dtype, {shape = {M, N}})
    local gyt = ckt.tensor(Y, dtype, {shape = {M, N}, stride = {1, M}}) -- Y seen as (m, n)
    local s = ckt.tensor("lds", dtype, p.lds)
    local tm, tn = b:block_order{tiles = {M // TM, N // TN}, order = o.order or "row"}
    local tile = ckt.tile_window(s, {TM, TN}, {0, 0})
    b:copy(tile, ckt.local_tile(gx, {TM, TN}, {tm, tn}))
    b:sync()
    local r = tile:load{dist = p.dist}
    ckt.local_tile(gyt, {TM, TN}, {tm, tn}):store(r, {vector_dim = 0})
  end}
  local function grid(M, N) return (M // TM) * (N // TN) end
  return k, grid, p.why, p
end

function tr.reference(x, M, N)
  local y = ckt.array(x:dtype(), {N, M})
  for m = 0, M - 1 do for n = 0, N - 1 do y[n * M + m] = x[m * N + n] end end
  return y
end

return tr
