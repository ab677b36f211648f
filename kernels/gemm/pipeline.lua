-- ckt.kernels.gemm.pipeline: the kernel's body — one producer/consumer schedule of K slices
-- through an S-stage LDS ring of A (TM x TK) and B (TN x TK, the N x K tile blockwise_gemm takes),
-- the MMAs of each slice, then the epilogue, for each tile the block computes (schedule.walk).
-- Two settings shape it:
--   copy = "cp.async": every thread issues 16-byte asynchronous copies (zero-filled past the
--     padded edges of M, N and K) D = S - 1 - P slices ahead of the math; each slice: wait for its
--     copies and a barrier, issue the copy of the slice D ahead into the stage every thread has
--     just finished reading, then b:blockwise_gemm over the slice;
--   copy = "tma" (sm_90a): warp specialization — a producer warp issues the bulk tensor copies of
--     slice i into stage i % S as soon as the block's threads have released that stage (mbarrier
--     `empty`); they wait for the slice's boxes (mbarrier `full`: each box arrives once with its
--     bytes), run its MMAs, and release the stage of slice i - P once its MMAs have retired, never
--     behind a barrier of the whole block;
--   persistent: the block walks several tiles with one stream of K slices running on across tile
--     boundaries (stages and phases counted across tiles), so the next tile's first slices land
--     while this one's epilogue runs; the copies' windows are then made once a tile and moved
--     along K. (One tile: the windows are made per slice, the stream begins and ends with the tile.)
-- P: sm_90a's wgmma groups left in flight (hopper.setup), 0 elsewhere.
local ckt = ckt or require "ckt"
local copies = require "ckt.kernels.gemm.copies"
local schedule = require "ckt.kernels.gemm.schedule"
local epilogue = require "ckt.kernels.gemm.epilogue"
local pipeline = {}

-- slice i of tile t in the block's stream (persistent: after the slices of its earlier tiles)
local function at(t, i) return t.base and t.base + i or i end

-- cp.async: the block's threads copy and compute. A persistent tile takes at least D slices
-- (those past K zero-filled) so that the look-ahead never reaches beyond the next tile.
local function async_feed(g, walk)
  local b, S, D = g.b, g.S, g.S - 1 - g.P
  local f = {per_tile = walk.persistent and ckt.max(g.nk, D) or g.nk}
  local nop = function() end
  f.producer, f.retire, f.retire_pipelined, f.drain = nop, nop, nop, nop
  f.merged = g.p.fused_prologue and not walk.persistent
  function f.open() -- the first D slices (past K: zero-filled and never read)
    if f.merged then return end
    walk.guard(function()
      local t0 = walk.first()
      for s = 0, D - 1 do copies.async(g, t0.tm, t0.tn, s, s, t0.l); b:commit() end
    end)
  end
  function f.close() b:wait{pending = 0, sync = false} end -- no copy (the zero-filled ones past K) outlives the block
  function f.tile(t) -- persistent: this tile's slice D and the next tile's slice 0, moved along K copy by copy
    if not walk.persistent then return end
    t.this = copies.async(g, t.tm, t.tn, D, nil, t.l)
    local tm2, tn2, l2 = t.next()
    t.following = copies.async(g, tm2, tn2, 0, nil, l2)
  end
  function f.ready(t, i)
    b:wait{pending = D - 1} -- slice i has landed, and every thread is done with slice i - 1
    -- refill the stage of slice i - 1 - P, whose MMAs have retired: slice i + D of this tile, or
    -- (persistent) of the next
    if not walk.persistent then copies.async(g, t.tm, t.tn, i + D, (i + D) % S, t.l); b:commit() return end
    local k = i + D
    b:when(ckt.lt(k, f.per_tile), function() copies.refill(g, t.this, at(t, k) % S) end)
    b:when(ckt.land(ckt.ge(k, f.per_tile), t.more), function() copies.refill(g, t.following, at(t, k) % S) end)
    b:commit() -- one group a slice, empty or not
  end
  return f
end

-- the producer's options: a whole warpgroup where the plan hands its registers to the block's
local function p_opts(g) return g.p.producer_warpgroup and {warpgroup = true} or nil end

-- bulk copies: the producer warp feeds the ring, the block's threads compute
local function bulk_feed(g, walk)
  local b, S, P, nk = g.b, g.S, g.P, g.nk
  local f = {per_tile = nk}
  local full, empty
  local nop = function() end
  f.open, f.close, f.tile = nop, nop, nop
  function f.producer()
    full, empty = copies.barriers(g)
    b:producer(function()
      walk.each(function(t)
        local list = walk.persistent and copies.bulk(g, full, t.tm, t.tn, 0, t.l) or nil -- the grouped order's divisions: once a tile
        b:loop(nk, function(kt)
          -- the first round finds every stage free (the phase before phase 0 counts as done)
          local i = at(t, kt)
          b:mbarrier_wait{barrier = empty, at = i % S, phase = (i // S + 1) % 2}
          if list then copies.refill(g, list, i % S)
          else for _, x in ipairs(copies.bulk(g, full, t.tm, t.tn, kt, t.l)) do x.copy(i % S) end end
        end)
      end, nk)
      -- a cluster: the block stays until every block of it has released its last S slices here
      -- (their arrivals land in this block's LDS, which must outlive them)
      if g.p.cluster > 1 then
        b:loop(S, function(j) local i = nk + j; b:mbarrier_wait{barrier = empty, at = i % S, phase = (i // S + 1) % 2} end)
      end
    end, p_opts(g))
  end
  function f.ready(t, i) b:mbarrier_wait{barrier = full, at = at(t, i) % S, phase = (at(t, i) // S) % 2} end
  -- (+ S: the range analysis then sees a non-negative index; i >= -P only as it reads nk - min(nk, P))
  local function release(t, i) b:mbarrier_arrive{barrier = empty, at = (at(t, i) + S) % S, cluster = g.p.cluster > 1 or nil} end
  f.retire = release
  function f.retire_pipelined(t, i) -- after slice i's MMAs: slice i - P has retired
    b:when(ckt.ge(i, P), function() release(t, i - P) end)
  end
  -- persistent or a cluster: the last min(P, nk) slices are released once the tile's MMAs retire,
  -- since the producer waits for their stages (a lone tile leaves them: nothing comes after it)
  function f.drain(t)
    if not t.base and g.p.cluster == 1 then return end
    local last = ckt.min(nk, P)
    b:loop(last, function(i) release(t, nk - last + i) end)
  end
  return f
end

-- fp8 with scales = "block" (options.block_scales): slice i of tile t lies in K block kb = i TK / 128
-- and its columns in N block nb = tn TN / 128. block_scales(g) makes the registers of one slice's
-- scales: scale_A's rows in the row statistics' distribution (p.TS), scale_B's value (one, every
-- thread reading it). new(t) makes a set (holding slice 0's), read(t, i, r) loads slice i's into r,
-- copy(from, to) copies a set; promote(acc, tmp, r) is acc += tmp . (scale_A(row, kb) . scale_B(nb, kb)),
-- the scales' product in f32 a row (DeepSeek-V3's promotion of each K block's sum into the f32
-- accumulators).
local function block_scales(g)
  local b, p = g.b, g.p
  local x = {}
  local function rows(t, i) return ckt.tile_window(g.bsA, {g.TM, 8}, {(i * g.TK) // 128 * g.M + t.tm * g.TM, 0}) end
  local function col(t, i) return ckt.tile_window(g.bsB, {1, 1}, {(t.tn * g.TN) // 128 * g.KB + (i * g.TK) // 128, 0}, ckt.layout({p.block, 1}, {0, 0})) end
  local function part(w) return ckt.make_blockwise_gemm_xdl_c_local_partition(w, p.TS) end
  function x.new(t) return {a = part(rows(t, 0)):load(), b = col(t, 0):load()} end
  function x.read(t, i, r)
    b:map(function(v) return v end, part(rows(t, i)):load(), {into = r.a})
    b:map(function(v) return v end, col(t, i):load(), {into = r.b})
  end
  function x.copy(from, to)
    b:map(function(v) return v end, from.a, {into = to.a})
    b:map(function(v) return v end, from.b, {into = to.b})
  end
  function x.promote(acc, tmp, r)
    local s = b:map(function(u, v) return u * v end, r.a, r.b)
    b:map(function(c, u, v) return c + u * v end, acc, tmp, b:broadcast(s, acc, {dim = 1}), {into = acc})
  end
  return x
end

-- The K slices of tile t with block scales: each slice's product alone in registers of its own
-- (the slice's MMAs, retired), then scaled into acc. (Measured on an H100 and not kept,
-- docs/gemm.md: the two consumer warpgroups taking turns at their MMAs, slower; two sets of
-- products taking turns, slice i + 1's MMAs in flight while slice i's is scaled in, needs ~240
-- registers a thread and spilled 560-780 bytes at the 168 a 384-thread block gets.)
local function consume_scaled(g, feed, acc, t)
  local b = g.b
  local x = block_scales(g)
  local tmp, r, ahead = b:make_blockwise_gemm_xdl_c_vgpr(g.sa, g.sb, g.T), x.new(t), x.new(t) -- (slice 0's)
  b:loop(feed.per_tile, function(i)
    -- slice i's scales, read an iteration ahead (their loads took longer than a slice's MMAs:
    -- 740 -> 964 TFLOP/s on an H100, docs/gemm.md), and slice i + 1's issued (past the last slice:
    -- reads of other blocks' scales or 0, unused)
    x.copy(ahead, r)
    x.read(t, i + 1, ahead)
    feed.ready(t, i)
    -- (zero: the slice's product alone, wgmma's scale-d 0 on its first K step, no clear)
    b:blockwise_gemm(g.sa:stage(at(t, i) % g.S), g.sb:stage(at(t, i) % g.S), tmp, g.T, {zero = true})
    feed.retire(t, i)
    x.promote(acc, tmp, r)
  end)
end

-- The K slices of tile t into accumulators acc: each slice waits for its copies, runs its MMAs
-- (leaving `pending` wgmma groups in flight) and lets the feed retire what has been read
local function consume(g, feed, acc, t)
  local b, P = g.b, g.P
  if feed.merged or g.bsA or P == 0 then b:clear(acc, 0) end -- (P > 0: the first slice's MMAs start the sum)
  local function slice(i, opts)
    feed.ready(t, i)
    local st = at(t, i) % g.S
    b:blockwise_gemm(g.sa:stage(st), g.sb:stage(st), acc, g.T, opts)
  end
  if feed.merged then
    -- fused_prologue (plan.lua): one copy site, the first D slices' copies issued by the K
    -- loop's. Iteration k issues slice k's copies, computes slice k - D (the first D iterations
    -- only copy), then waits for slice k - D + 1 and for every thread to be done with slice
    -- k - D, whose stage iteration k + 1 refills: the same order of copies, waits and MMAs as
    -- the prologue + loop, in D more iterations (the copies twice over cost ~40 ms of NVRTC)
    local S, D = g.S, g.S - 1
    b:loop(feed.per_tile + D, function(k)
      copies.async(g, t.tm, t.tn, k, k % S, t.l); b:commit()
      b:when(ckt.ge(k, D), function()
        local st = (k + 1) % S
        b:blockwise_gemm(g.sa:stage(st), g.sb:stage(st), acc, g.T)
      end)
      b:wait{pending = D - 1}
    end)
  elseif g.bsA then
    consume_scaled(g, feed, acc, t)
  elseif P > 0 then
    -- one loop, P groups of MMAs left in flight a slice; slice 0's start the sum (wgmma's scale-d
    -- 0 where i = 0) and nothing clears the accumulators before: no instruction but wgmma may
    -- define them while MMAs are in flight, or ptxas serializes the MMAs (a clear before the loop
    -- can become copies inside it). Before, slice 0 ran first, retired before the loop: the
    -- kernel's MMA code twice, ~30% of the sm_90a GEMM's NVRTC time.
    b:loop(feed.per_tile, function(i) slice(i, {pending = P, zero = ckt.eq(i, 0)}); feed.retire_pipelined(t, i) end)
    b:wgmma_wait(acc, 0) -- the accumulators settled
    b:when(ckt.eq(feed.per_tile, 0), function() b:clear(acc, 0) end) -- K = 0: C = 0
    feed.drain(t)
  else
    b:loop(feed.per_tile, function(i) slice(i); feed.retire(t, i) end)
  end
end

-- The schedule: the feed's producer side, then for each tile: consume, epilogue. The
-- slice stream opens and closes around the block's walk of tiles (one tile: around its K loop).
-- split_k: a block of a split tile stores its partial sum in its workspace slot and counts itself
-- in; the tile's last block (the counter was S - 1) sums the S slots in the order of their K
-- ranges, sets the counter back to 0 for the next launch and stores C. Blocks of whole tiles store
-- at once.
local function split_store(g, acc, t, store)
  local b, sp = g.b, g.split
  local S, n = sp.S, g.p.cluster
  local rank = n > 1 and g.cluster_rank or 0
  local tile = (sp.q // S) * n + rank -- the split tile's index among the split tiles
  local function slot(j)
    local w = ckt.tile_window(g.workspace, {g.TM, g.TN}, {(tile * S + j) * g.TM, 0})
    return ckt.make_blockwise_gemm_xdl_c_local_partition(w, g.T)
  end
  local whole = b:var(1, {lo = 0, hi = 1, name = "stores"})
  b:when(sp.on, function()
    slot(sp.s):store(acc)
    local old = b:atomic_add(g.counters, tile, 1)
    b:assign(whole, ckt.select(ckt.eq(old, S - 1), 1, 0))
    b:when(ckt.eq(old, S - 1), function()
      -- (a loop, not S copies of the loads: one slot's registers live at a time; kept a loop by
      -- the compiler too, which would write out a constant S)
      b:clear(acc, 0)
      b:loop(S, function(j) b:map(function(x, y) return x + y end, acc, slot(j):load(), {into = acc}) end, {unroll = false})
      b:atomic_add(g.counters, tile, -S)
    end)
  end)
  b:when(ckt.eq(whole, 1), function() store(acc, t.tm, t.tn, t.l) end)
end

local function run(g, store, walk)
  walk = walk or schedule.walk(g)
  local feed = (g.p.copy == "tma" and bulk_feed or async_feed)(g, walk)
  feed.producer()
  local acc = g.b:make_blockwise_gemm_xdl_c_vgpr(g.sa, g.sb, g.T)
  if walk.persistent then feed.open() end
  walk.each(function(t)
    feed.tile(t)
    if not walk.persistent then feed.open() end
    consume(g, feed, acc, t)
    if not walk.persistent then feed.close() end
    if g.split then split_store(g, acc, t, store) else store(acc, t.tm, t.tn, t.l) end
  end, feed.per_tile)
  if walk.persistent then feed.close() end
end

-- Strided batched (p.batched): sizes L (the batch count) and the element strides batch_stride_A,
-- batch_stride_B, batch_stride_C between batches. Each operand stays a rank-2 tensor (the copies,
-- the tensor maps and wgmma take rank 2) whose row mode (m of A, n of B, m of C) runs on through
-- all the batches: batch l's rows start at row l x R, R the batch stride in rows (the stride
-- itself along a contiguous row mode: M-major A, N-major B; batch_stride / K for a K-major
-- operand, batch_stride_C / N for C, which must then divide it). The tensors' extent is the last
-- batch's, so the launch's bounds check covers every batch; a tile's rows past M (or N) read the
-- next batch's rows or the padding between batches, which only feeds rows (columns) of C that are
-- never stored: C leaves through LDS, its rows guarded thread by thread (epilogue.lua). A stride
-- that is not a whole number of rows makes the tensor's K (A, B) or N (C) extent negative at
-- launch, so the launch refuses it naming the buffer. L = 0: every extent is empty, nothing runs.
local function batched_tensors(g, A, B, C)
  local b, p = g.b, g.p
  g.L = b:size("L")
  local function stride(name, mo) return b:size(name, {type = "i64", multiple_of = mo}) end
  -- along a contiguous row mode the batch offset is a row offset of its own: aligned, a whole
  -- number of 16-byte vectors (the copies' vectors start there)
  local function vectors(contiguous_rows) return contiguous_rows and (p.aligned or p.copy == "tma") and p.v or nil end
  local sa, sb = stride("batch_stride_A", vectors(p.a_major == "m")), stride("batch_stride_B", vectors(p.b_major == "n"))
  -- (bulk tensor stores: C's tensor map takes its batch stride in multiples of 16 bytes)
  local sc = stride("batch_stride_C", p.tma_store and 16 // ckt.array(p.out, 1):bytes() or nil)
  local last = ckt.max(g.L - 1, 0)
  -- rows R of a batch along the row mode, and the other mode's extent (below 0 when the stride is
  -- not a whole number of rows: ext - (s % row) x (ext + v), v keeping what ext is a multiple of)
  local function fold(ptr, dt, rows, cols, s, row_stride, name)
    local R = s // ckt.max(row_stride, 1)
    local ext = row_stride == 1 and cols or cols - (s % ckt.max(row_stride, 1)) * (cols + p.v)
    return ckt.tensor(ptr, dt, {shape = {ckt.min(g.L, 1) * (last * R + rows), ext}, stride = row_stride == 1 and {1, rows} or {row_stride, 1}}, {pad = true}), R
  end
  g.ga, g.ra = fold(A, p.dtype, g.M, g.K, sa, p.a_major == "k" and g.K or 1)
  g.gb, g.rb = fold(B, p.dtype, g.N, g.K, sb, p.b_major == "k" and g.K or 1)
  -- C: rows of N; with L = 0 no columns (an empty C: the launch runs nothing)
  local Rc = sc // ckt.max(g.N, 1)
  g.rc = Rc
  g.gc = ckt.tensor(C, p.out, {shape = {last * Rc + g.M, ckt.min(g.L, 1) * (g.N - (sc % ckt.max(g.N, 1)) * (g.N + p.v))}, stride = {g.N, 1}}, {pad = true})
  -- bulk tensor stores: C as (L, M, N), whose map stops each batch's boxes at its M rows
  if p.tma_store then g.gc3 = ckt.tensor(C, p.out, {shape = {g.L, g.M, g.N}, stride = {sc, g.N, 1}}, {pad = true}) end
end

-- split_k: the unit (cluster or tile) of block (or cluster) `id` among `units`: the first `full`
-- (whole waves) one each, then each later unit split_k consecutive ones, part s = q % split_k.
-- Sets g.split and the parameters `workspace` (f32: a TM x TN slot a part) and `counters` (i32:
-- one a split tile).
local function split_units(g, units, id)
  local b, p = g.b, g.p
  local S, n = p.split_k, p.cluster
  local W = math.max(1, p.split_wave // n)
  local full = b:let((units // W) * W, "full")
  -- (q: the part's index among the split units' parts, in 0..W S - 1 for them; clamped so that the
  -- slots' arithmetic stays small for the analyses whatever the block)
  local q = ckt.min(ckt.max(id - full, 0), W * S - 1)
  g.split = {S = S, on = ckt.ge(id, full), q = q, s = q % S}
  local WS, CT = b:pointer("workspace", "f32"), b:pointer("counters", "i32")
  -- (the units past the last whole wave; at least one slot, since a launch with an empty tensor
  -- runs nothing)
  local split_tiles = ckt.max((units % W) * n, 1)
  g.workspace = ckt.tensor(WS, "f32", {shape = {split_tiles * S * g.TM, g.TN}}, {pad = true})
  g.counters = ckt.tensor(CT, "i32", {shape = {split_tiles}})
  return ckt.select(g.split.on, full + (id - full) // S, id)
end

-- The kernel's body for plan p: parameters A, B, C (pointers), M, N, K (sizes), the global
-- tensors, the LDS rings, the block's tile in grouped order, then the schedule
function pipeline.body(b, p)
  local g = {b = b, p = p, TM = p.TM, TN = p.TN, TK = p.TK, S = p.stages, T = p.traits, P = p.hopper and p.mma_pending or 0}
  if p.grouped then return require("ckt.kernels.gemm.grouped").body(g, run) end -- grouped.lua
  if p.cluster > 1 then g.cluster_rank, g.cluster_id = b:cluster(p.cluster) end
  local A = b:pointer("A", p.dtype, {const = true})
  local B = b:pointer("B", p.dtype, {const = true})
  local C = b:pointer("C", p.out)
  -- fp8: the per-tensor scales (one f32 element each), applied in the epilogue; or the block
  -- scales, applied slice by slice
  local SA, SB
  if p.fp8 then SA, SB = b:pointer("scale_A", "f32", {const = true}), b:pointer("scale_B", "f32", {const = true}) end
  if p.fp8 and p.scales == "tensor" then g.scale_A, g.scale_B = SA, SB end
  -- aligned: every size a multiple of 16 bytes of elements (16-byte copies of A and B at any
  -- major, 4-byte stores of C pairs); bulk copies: the tensor maps' strides; refused at launch otherwise
  local mo = p.multiple_of
  g.M, g.N, g.K = b:size("M", {multiple_of = mo.M}), b:size("N", {multiple_of = mo.N}), b:size("K", {multiple_of = mo.K})
  -- A as (m, k), B as (n, k), whatever their majors
  if p.batched then batched_tensors(g, A, B, C)
  else
    g.ga = ckt.tensor(A, p.dtype, {shape = {g.M, g.K}, stride = p.a_major == "k" and {g.K, 1} or {1, g.M}}, {pad = true})
    g.gb = ckt.tensor(B, p.dtype, {shape = {g.N, g.K}, stride = p.b_major == "k" and {g.K, 1} or {1, g.N}}, {pad = true})
    g.gc = ckt.tensor(C, p.out, {shape = {g.M, g.N}}, {pad = true})
  end
  if p.scales == "block" then
    -- scale_A: element (m, kb) at kb M + m, a column of ceil(K / 128) M rows read 8 wide (the row
    -- statistics' tile, every column the row's value); rows of a tile past M read the next K
    -- block's (rows of C never stored) or, past the last, 0. scale_B: (nb, kb) at nb KB + kb.
    g.KB = (g.K + 127) // 128
    g.bsA = ckt.tensor(SA, "f32", {shape = {g.KB * g.M, 8}, stride = {1, 0}}, {pad = true})
    g.bsB = ckt.tensor(SB, "f32", {shape = {((g.N + 127) // 128) * g.KB, 1}, stride = {1, 0}}, {pad = true})
  end
  g.sa = ckt.tensor("lds", p.dtype, p.a_copy.lds, {stages = g.S})
  g.sb = ckt.tensor("lds", p.dtype, p.b_copy.lds, {stages = g.S})
  if p.batched then
    -- the blocks walk the batches one after another, each batch's tiles in grouped order
    local per = ((g.M + g.TM - 1) // g.TM) * ((g.N + g.TN - 1) // g.TN)
    local bid = b:block_id(0)
    g.tm, g.tn = b:block_order{tiles = {(g.M + g.TM - 1) // g.TM, (g.N + g.TN - 1) // g.TN}, order = "grouped", group = p.group, id = bid % ckt.max(per, 1)}
    g.l = bid // ckt.max(per, 1)
  elseif p.cluster > 1 or p.split_k > 1 then
    -- a cluster: n tile rows of one tile column (so that they share B's tile), the clusters in
    -- grouped order of p.group tile rows; with tile rows not a multiple of n, the last cluster's
    -- rows past M read zeros and store nothing. split_k: of these units (clusters, or tiles) those
    -- up to the last whole wave take a block (a cluster) each, the rest split_k, each part a K range
    -- (along N: n tile columns of one tile row, sharing A's tile)
    local n, along_n = p.cluster, p.cluster_along == "n"
    local mu = along_n and (g.M + g.TM - 1) // g.TM or (g.M + n * g.TM - 1) // (n * g.TM)
    local nu = along_n and (g.N + n * g.TN - 1) // (n * g.TN) or (g.N + g.TN - 1) // g.TN
    local unit = n > 1 and g.cluster_id or b:block_id(0)
    if p.split_k > 1 then unit = split_units(g, mu * nu, unit) end
    local tm, tn = b:block_order{tiles = {mu, nu}, order = "grouped", group = along_n and p.group or math.max(1, p.group // n), id = unit}
    if n == 1 then g.tm, g.tn = tm, tn
    elseif along_n then g.tm, g.tn = tm, tn * n + g.cluster_rank
    else g.tm, g.tn = tm * n + g.cluster_rank, tn end
  else
    g.tm, g.tn = b:block_order{tiles = {(g.M + g.TM - 1) // g.TM, (g.N + g.TN - 1) // g.TN}, order = "grouped", group = p.group}
  end
  g.nk = (g.K + g.TK - 1) // g.TK
  if g.split then -- the block's K range: part s of a split tile, or all of it
    local sp, S = g.split, g.split.S
    g.k0 = b:let(ckt.select(sp.on, (sp.s * g.nk) // S, 0), "k0")
    g.nk = b:let(ckt.max(ckt.select(sp.on, ((sp.s + 1) * g.nk) // S - (sp.s * g.nk) // S, g.nk), 0), "nk")
  end
  run(g, epilogue.new(g))
end

return pipeline
