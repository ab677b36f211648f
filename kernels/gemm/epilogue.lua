-- ckt.kernels.gemm.epilogue: the f32 accumulators through the user's epilogue (b:map), converted
-- to the output dtype and stored through the C local partition (masked at the edges) — or, on
-- sm_90a, through an LDS buffer.
local ckt = ckt or require "ckt"
local options = require "ckt.kernels.gemm.options"
local epilogue = {}

-- Hopper, a 16-bit C whose warpgroups own 64 whole rows each: the tile leaves through LDS. A
-- thread's fragments are pairs of 4 bytes per row, so a warp's store instruction writes eight
-- 16-byte pieces of eight rows (8 sectors, about 9000 cycles a 128 x 256 tile on an H100,
-- traced: 5% of the 8192^3 GEMM); through LDS one warpgroup's 64 rows at a time (a 64 x TN
-- buffer, rows padded by 8 elements: the pairs' writes hit 32 distinct banks), read back as
-- 16-byte vectors whole rows at a time. Both warpgroups' rows map onto the one buffer (stride 0),
-- so it fits beside the stages. Persistent, where the producer is a warpgroup handing its registers
-- over (options.lua): the buffer is not the ring, so the producer fills the next tile's stages
-- meanwhile. (With a producer warp the persistent kernel needs ~188 registers for it and gets 168;
-- with the fragments stored directly it was 5-33% slower than one tile a block on an H100: 8
-- sectors a warp's store, ~9000 cycles a 128 x 256 tile, paid once per tile.)
local function through_lds(p)
  return p.hopper and not p.fp8 and p.copy == "tma" and (not p.persistent or p.producer_warpgroup) and p.out ~= "f32" and p.aligned and p.waves_n == 1 and p.m_per_wave == 1
end
function epilogue.staged(p)
  return through_lds(p) and p.block % (p.TN // p.v) == 0 and 64 % (p.block // (p.TN // p.v)) == 0
end

-- Where C can leave that buffer by bulk tensor stores (tma_store, below): its 64-column atoms
-- cover TN (the threads' passes of epilogue.staged need not divide it: 128 x 192)
function epilogue.tma_storable(p) return through_lds(p) and p.TN % 64 == 0 end

-- tma_store: C leaves LDS by bulk tensor stores, one a 64 x 64 atom under the 128B swizzle (the
-- fragments' 4-byte pairs of 8 rows then hit 32 distinct banks, as the padded rows' did), issued
-- by thread 0; the writes to C go on while the block moves on (the next tile's K slices,
-- persistent) or exits, and past C's edges they write nothing. Two forms, by the LDS left beside
-- the stages:
--   a buffer a warpgroup (parallel): every thread writes its fragments at once, one barrier, the
--     stores issued without waiting; the next tile's epilogue first waits for their reads;
--   one 64-row buffer (the default 4 stages of 128 x 256 x 64 leave 32 KiB): each warpgroup's rows
--     in turn, thread 0 waiting for the stores' reads before the next warpgroup's writes.
-- (Wherever the LDS epilogue applies, epilogue.staged: a 16-bit C, and wgmma's TN a multiple of 64.)
local function buffer_bytes(p, rows) return rows * p.TN * ckt.array(p.out, 1):bytes() end

-- room for a buffer per warpgroup beside the stages (and the mbarriers)
local function tma_parallel(p)
  local hw = ckt.target(p.target).hw
  local stages = p.stages * (p.TM + p.TN) * p.TK * ckt.array(p.dtype, 1):bytes()
  return hw.lds_per_block ~= nil and stages + buffer_bytes(p, 64 * p.waves_m) + 1024 <= hw.lds_per_block
end

-- the LDS buffer, and whether it holds a buffer a warpgroup (each one's rows apart) or one that
-- the warpgroups take in turn (their rows on the same buffer)
local function tma_buffer(p)
  local parallel = tma_parallel(p)
  local rows = parallel and 64 * p.TN or 0
  return {t = ckt.tensor("lds", p.out, ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({{64, p.waves_m}, {64, p.TN // 64}}, {{64, rows}, {1, 64 * 64}}))),
          parallel = parallel}
end

-- (l: the batch, C then the (L, M, N) tensor g.gc3)
local function store_tma(g, buffer, res, tm, tn, l)
  local b, p, TM, TN, buf = g.b, g.p, g.TM, g.TN, buffer.t
  local part = ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(buf, {TM, TN}, {0, 0}), g.T)
  local function dst(w, j)
    if l then return ckt.tile_window(g.gc3, {1, 64, 64}, {l, tm * TM + 64 * w, tn * TN + 64 * j}) end
    return ckt.tile_window(g.gc, {64, 64}, {tm * TM + 64 * w, tn * TN + 64 * j})
  end
  local function stores(w, wait)
    for j = 0, TN // 64 - 1 do
      b:tma_store{src = ckt.tile_window(buf, {64, 64}, {buffer.parallel and 64 * w or 0, 64 * j}), dst = dst(w, j), wait = wait}
    end
  end
  if buffer.parallel then
    b:tma_store_wait() -- (the last tile's stores have read the buffers)
    b:sync()
    part:store(res)
    b:sync() -- (and fenced for the stores' reads, the async proxy)
    for w = 0, p.waves_m - 1 do stores(w, false) end
    return
  end
  -- the turns as a loop: the fragments' stores are written once (unrolled, each warpgroup's turn
  -- was the epilogue's code again: ~50 ms of NVRTC for the default); not unrolled by the compiler
  -- either (NVVM did, for two turns: 5% of the default's compile, run x1), as the barriers
  -- serialize the turns anyway
  local tid = b:thread_id()
  b:loop(p.waves_m, function(w)
    b:when(ckt.eq(tid // 128, w), function() part:store(res) end)
    b:sync()
    stores(w, true)
    b:sync() -- the buffer is free again (thread 0 saw the stores read it)
  end, {unroll = false})
end

-- through the LDS buffer: each warpgroup's rows in turn, read back one pass of rows at a time (a
-- loop: a vector a thread in flight, no registers beside the accumulators that the other
-- warpgroup still holds)
local function store_staged(g, stage_c, res, tm, tn)
  local b, p, TM, TN = g.b, g.p, g.TM, g.TN
  local part = ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(stage_c, {TM, TN}, {0, 0}), g.T)
  local tid, per_row = b:thread_id(), TN // p.v
  local rows = p.block // per_row
  local threads = ckt.layout({rows, per_row}, {per_row, 1})
  for w = 0, p.waves_m - 1 do
    b:when(ckt.land(ckt.ge(tid, 128 * w), ckt.lt(tid, 128 * (w + 1))), function() part:store(res) end)
    b:sync()
    b:loop(64 // rows, function(i)
      b:blockwise_copy{src = ckt.tile_window(stage_c, {rows, TN}, {64 * w + rows * i, 0}), dst = ckt.tile_window(g.gc, {rows, TN}, {tm * TM + 64 * w + rows * i, tn * TN}),
                       thread_layout = threads, vector_dim = 1, scalar_per_vector = p.v}
    end)
    b:sync() -- the buffer is free again
  end
end

-- The row passes of a tile leaving through LDS: vector, threads a row, rows a pass, chunks a row.
-- Batched (pipeline.lua): C's row mode runs on into the next batch, so a tile's rows past M must
-- not be stored. The tile goes through an LDS buffer (TM x TN), then out a pass of rows at a time
-- (vectors of the output along the rows), each thread's row guarded against M.
function epilogue.passes(p, what)
  what = what or "batched"
  local vec = p.aligned and math.min(p.v, 16 // ckt.array(p.out, 1):bytes()) or 1
  local per_row, chunks = p.TN // vec, 1
  if per_row > p.block then
    if p.TN % (p.block * vec) ~= 0 then options.fail(("%s: tile TN %d is not a whole number of %d-thread passes of %d-element vectors"):format(what, p.TN, p.block, vec)) end
    per_row, chunks = p.block, p.TN // (p.block * vec)
  end
  local rows = p.block // per_row
  if p.block % per_row ~= 0 or p.TM % rows ~= 0 then
    options.fail(("%s: block %d does not copy the %d x %d C tile out in whole passes of %d-element rows"):format(what, p.block, p.TM, p.TN, per_row * vec))
  end
  return vec, per_row, rows, chunks
end

local function store_batched(g, buf, res, tm, tn, l)
  local b, p, TM, TN = g.b, g.p, g.TM, g.TN
  local vec, per_row, rows, chunks = epilogue.passes(p)
  local cw = per_row * vec
  ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(buf, {TM, TN}, {0, 0}), g.T):store(res)
  b:sync()
  local threads = ckt.layout({rows, per_row}, {per_row, 1})
  local mine = b:thread_id() // per_row -- this thread's row in a pass
  local row0 = l * g.rc + tm * TM
  b:loop(TM // rows, function(i)
    for j = 0, chunks - 1 do -- (windows are block-uniform: made outside the thread's guard)
      local src, dst = ckt.tile_window(buf, {rows, cw}, {rows * i, cw * j}), ckt.tile_window(g.gc, {rows, cw}, {row0 + rows * i, tn * TN + cw * j})
      b:when(ckt.lt(tm * TM + rows * i + mine, g.M), function()
        b:blockwise_copy{src = src, dst = dst, thread_layout = threads, vector_dim = 1, scalar_per_vector = vec}
      end)
    end
  end)
  b:sync() -- the buffer is free again
end

-- The mma.sync path (sm_90 and the other NVIDIA targets without wgmma), epilogue_lds: the tile
-- leaves through an LDS buffer of its own (TM x TN, rows padded by 8 elements: a warp's 4-byte
-- fragment pairs, 8 rows x 4 threads, hit 32 distinct banks), written by every thread without
-- masks, then a barrier, then a loop of row passes of 16-byte vectors, masked at C's edges by the
-- copy. Written straight to C, the fragments were 64 masked 4-byte stores a thread; this form
-- compiles faster (with fused_prologue, the default's NVRTC time ~430 -> ~275 ms on the 2-core
-- machine: docs/gemm.md, Cold compile) and a warp's passes write whole 256-byte rows (NVVM splits
-- each 16-byte store into four 4-byte ones, as on sm_90a's LDS epilogue).
-- On by default with aligned sizes where the buffer keeps the blocks an SM holds (the engine's
-- occupancy model, registers estimated as shapes.lua does): the default 128 x 128 tile, 16-bit C,
-- 64 KiB of stages + 34 KiB, still two blocks an SM; off for f32 C at that tile (68 KiB more).
local LDS_PAD = 8

local function lds_tile_bytes(p) return p.TM * (p.TN + LDS_PAD) * ckt.array(p.out, 1):bytes() end

function epilogue.lds_default(p, rec)
  if p.hopper or p.vendor ~= "nvidia" or not p.aligned or p.batched or not rec.hw.lds_per_block then return false end
  if not pcall(epilogue.passes, p) then return false end
  local stages = p.stages * (p.TM + p.TN) * p.TK * ckt.array(p.dtype, 1):bytes()
  local with = stages + lds_tile_bytes(p)
  if with > rec.hw.lds_per_block then return false end
  local regs = math.min(255, (p.TM * p.TN // p.block) * 7 // 5 + 50)
  local function blocks(lds)
    local ok, r = pcall(ckt.occupancy, p.target, {threads = p.block, registers = regs, lds_bytes = lds})
    return ok and r or nil
  end
  local a, b = blocks(stages), blocks(with)
  return a ~= nil and a == b
end

local function store_lds(g, buf, res, tm, tn)
  local b, p, TM, TN = g.b, g.p, g.TM, g.TN
  local vec, per_row, rows, chunks = epilogue.passes(p, "epilogue_lds")
  local cw = per_row * vec
  ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(buf, {TM, TN}, {0, 0}), g.T):store(res)
  b:sync()
  local threads = ckt.layout({rows, per_row}, {per_row, 1})
  -- the passes holding rows below M only: a trip count known at run time, which NVVM leaves a
  -- loop (a constant one it unrolled: 16 passes, ~45 ms more of NVRTC for the default)
  b:loop(ckt.min(TM // rows, (g.M - tm * TM + rows - 1) // rows), function(i)
    for j = 0, chunks - 1 do
      b:blockwise_copy{src = ckt.tile_window(buf, {rows, cw}, {rows * i, cw * j}), dst = ckt.tile_window(g.gc, {rows, cw}, {tm * TM + rows * i, tn * TN + cw * j}),
                       thread_layout = threads, vector_dim = 1, scalar_per_vector = vec}
    end
  end)
  if p.persistent then b:sync() end -- the buffer is free again for the next tile
end

-- fp8: C = scale_A . scale_B . (A . B): the one-element scales read in the accumulators' own
-- distribution from tensors of stride 0 (every value the element), the product in f32 (scale_A x
-- scale_B rounded to f32 once, then times each accumulator), before the user's epilogue
function epilogue.scaled(g, acc)
  if not g.scale_A then return acc end
  local function load(ptr)
    local t = ckt.tensor(ptr, "f32", {shape = {g.TM, g.TN}, stride = {0, 0}})
    return ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(t, {g.TM, g.TN}, {0, 0}), g.T):load()
  end
  return g.b:map(function(x, a, b) return x * (a * b) end, acc, load(g.scale_A), load(g.scale_B))
end

-- The epilogue of kernel context g: a function(acc, tm, tn [, l]) storing C's tile (tm, tn) (of
-- batch l): the scales and the user's epilogue on the accumulators, then one of the stores. Makes
-- its LDS buffer, if any, at once (before the pipeline's mbarriers).
function epilogue.new(g)
  local p = g.p
  local function with(store, buf)
    return function(acc, tm, tn, l)
      acc = epilogue.scaled(g, acc)
      return store(g, buf, p.epilogue and g.b:map(p.epilogue, acc) or acc, tm, tn, l)
    end
  end
  if p.tma_store then return with(store_tma, tma_buffer(p)) end -- (batched or not)
  if p.batched then
    epilogue.passes(p)
    return with(store_batched, ckt.tensor("lds", p.out, ckt.layout({g.TM, g.TN}, {g.TN, 1})))
  end
  if p.epilogue_lds then return with(store_lds, ckt.tensor("lds", p.out, ckt.layout({g.TM, g.TN}, {g.TN + LDS_PAD, 1}))) end
  if epilogue.staged(p) then return with(store_staged, ckt.tensor("lds", p.out, ckt.layout({{64, p.waves_m}, g.TN}, {{g.TN + 8, 0}, 1}))) end
  return with(function(_, _, res, tm, tn)
    ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.local_tile(g.gc, {g.TM, g.TN}, {tm, tn}), g.T):store(res)
  end)
end

return epilogue
