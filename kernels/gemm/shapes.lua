-- ckt.kernels.gemm.shapes: the configuration for a problem size. gemm.build{M =, N =, K =} (hints:
-- the sizes the kernel will mostly see; it stays correct at any size at launch) picks the tile,
-- block and stages (and persistent where it pays) from a small model of the time:
--
--   tiles  = ceil(M / TM) * ceil(N / TN)            per_sm = ceil(tiles / sm_count)   (the busiest SM)
--   slices = ceil(K / TK)                            r      = blocks an SM holds (ckt.occupancy)
--   step   = max(2 TM TN TK / (peak_sm * eff * fill), the MMA time of a K slice at the shape's sustained
--                (TM + TN) * TK * bytes / bw_sm)     efficiency (fill = sqrt(min(1, per_sm / r)): an SM
--                                                    with fewer blocks than it holds hides less latency),
--                                                    or its operand bytes at the SM's share of the bandwidth
--   time   = per_sm * slices * step + ceil(per_sm / r) * overhead     (persistent: overhead once, then
--            the per-tile cost `next` for each further tile)
--   time   = max(time, unique bytes of A, B, C / bw_mem)
--   step  *= 1 + MISALIGNED * 32 / TK where an operand's rows are not whole 128-byte lines apart
--            (4104 x 2 bytes: each row's piece of a K slice straddles lines; a wider slice less so),
--            a quarter of that in clusters of two blocks sharing B's tiles (sm_90a's bulk copies;
--            their tile rows rounded up to whole clusters); split_k S (a last wave only partly
--            full): the waves before it whole, its tiles in S parts spread over the SMs, plus the
--            last part's reads of the S partial tiles
--
-- so wave quantization (per_sm counts whole tiles), the reuse of bigger tiles (eff, bytes per MAC),
-- the per-tile cost (pipeline fill and epilogue: overhead, which short K cannot amortize) and
-- the idle SMs of small problems (bw_sm: an SM alone cannot pull the memory's bandwidth) all show.
-- The candidates are configurations the kernel supports on the target (checked by the CPU specs,
-- tests/lua/gemm_shapes_spec.lua); the constants come from the H100 sweep of bench/gemm_shapes.lua
-- (docs/gemm.md), per SM, so the SM count of the target record scales them. AMD has no
-- measurements: hints keep its defaults. The choice is plan.reason (a sentence) and plan.model
-- (every candidate's estimate); ckt.autotune refines it (autotune = true with the hints measures
-- the model's best candidates at those sizes).
local ckt = ckt or require "ckt"
local options = require "ckt.kernels.gemm.options"
local shapes = {}

-- Per-SM costs (H100 SXM, fitted to the 2026-11-27 sweep, bench/results/gemm_shapes_sweep_h100.json):
-- the dense f16 tensor peak of one SM (FLOP/s), the bandwidth one SM's copies reach (a tile's
-- rows past M or N count: the copies fill them), the L2's shared by the busy SMs, the memory's
-- (the floor of unique bytes), and a launch.
shapes.COST = {peak_sm = 989e12 / 132, bw_sm = 80e9, bw_l2 = 10e12, bw_mem = 2.5e12, launch = 3e-6,
               -- split_k: the rate at which an SM writes a part's f32 tile to the workspace and the
               -- last part reads the S tiles back (with the counters' fences), fitted to the H200's
               -- run v5 of 2026-11-28: 20-41 us a round of 128 x 256 parts beyond the model without it
               bw_fixup = 18e9}

-- The mma.sync rows of 128 x 128 were refitted to the sweep of a later run that day, once C left
-- through LDS by default (bench/results/gemm_shapes_sweep_sm90_h100_2026-11-27_s17.json: the
-- default's per-tile cost fell from ~6 to ~4 us, e.g. 8192 x 8192 x 512 282 -> 228 us), with the
-- misalignment term (MISALIGNED, fitted there at 4104^3: 1.45x a 32-wide slice, 1.28x a 64-wide).
shapes.MISALIGNED = 0.45
-- Clusters of two blocks sharing B's tiles (sm_90a, bulk copies) where the rows are misaligned: the
-- lab's H200 run of 2026-11-28 (bench/hopper_lab) put 4096 x 4096 x 4104 at 0.199 ms with them
-- against 0.239 without and 0.184-0.188 at 4096^3: a quarter of the misalignment's cost is left.
-- At aligned sizes they ran 1-2% slower, so only misaligned problems get them as candidates.
shapes.CLUSTER_MISALIGNED_SHARE = 0.25

-- The candidates: tile, block, stages; eff: the fraction of peak_sm its MMAs sustain over long K
-- with the SM full (as many blocks as it holds); overhead: seconds a tile costs beyond its K slices
-- (pipeline fill, epilogue; persistent: the first tile's, then `next` for each further one); kk:
-- measured faster only with K-major A and B (others skip it). The list's order breaks ties
-- (estimates within 2%); the target's default comes first on sm_90a. b_k: B K-major only; bulk:
-- sm_90a's bulk copies only; cluster_along: the axis of its clusters where the misaligned rows call
-- for them (default M). (The persistent kernel was
-- 5-33% slower than one tile a block at every shape of the first sweep, its C stored by the
-- threads; with bulk tensor stores it wins at short K: bench/results/gemm_shapes_*_2026-11-28_*.)
shapes.CANDIDATES = {
  hopper = {
    {tile = {128, 256, 64}, block = 256, stages = 4, eff = 0.80, overhead = 3.0e-6},
    {tile = {256, 128, 64}, block = 256, stages = 4, eff = 0.78, overhead = 3.0e-6},
    {tile = {128, 128, 64}, block = 256, stages = 4, eff = 0.68, overhead = 1.5e-6},
    -- (not a candidate: 128 x 192, wgmma n192, measured on an H100 slower than 128 x 256 wherever
    -- the waves favour it too, 4104 x 4104 x 4096 234.0 against 231.9 us: docs/gemm.md)
    -- 128 x 208 (wgmma n208): 4104 columns are 20 tiles of it, 33 x 20 = 660 = five whole waves
    -- where 128 x 256 makes 561 (4.25); its MMAs sustain less (eff fitted to the H200's runs v7,
    -- v8: 4104 x 4104 x 4096 218.5-227.1 against 231.7-242.4 us). K-major B only (208 rows are not
    -- whole 64-row atoms of an N-major tile)
    {tile = {128, 208, 64}, block = 256, stages = 4, eff = 0.70, overhead = 3.0e-6, kk = true},
    -- 192 x 176 (three warpgroups, wgmma n176; cuBLAS's 176 x 192 turned): 4104^3 is 22 x 24 = 528
    -- tiles, four whole waves; in clusters along N (B's 176 rows do not split into whole swizzle
    -- periods, A's 192 do) 91.1-92.4% of cuBLAS at 4104^3 (f16 kk and mk, bf16 kk) against 83-86%
    -- for 128 x 256 in clusters (H200, run v9; eff fitted at 4104 x 4104 x 4096: 218.6 us). K-major
    -- B only (176 rows are not whole 64-row atoms of an N-major tile); bulk copies only: 384 threads do not copy 176 x 64 in whole passes of 16 bytes)
    {tile = {192, 176, 64}, block = 384, stages = 4, eff = 0.716, overhead = 3.0e-6, b_k = true, bulk = true, cluster_along = "n"},
    -- 192 x 192 (three warpgroups, wgmma n192): any major of B. 4104^3 with N-major B (where 192 x
    -- 176 cannot go) in clusters of two along M: 247.1 us against 273.0 for 128 x 256 in clusters
    -- (H200, run y6 of 2026-11-28); at 4096 x 4096 x 16384 it lost on padding (22 tiles of 192
    -- cover 4096 with a third of the last empty), its MMAs sustaining as much as 128 x 256's (eff
    -- fitted at 4104^3 against that tile's estimate there). 3072^3 (16 x 16 tiles, one wave and
    -- 94% of a second, where 128 x 256 makes 2.2): 91.5 against 112.5 us. Bulk copies only: with
    -- element copies its threads' addresses and masks beside 96 accumulators spill (368 bytes)
    {tile = {192, 192, 64}, block = 384, stages = 4, eff = 0.79, overhead = 3.0e-6, bulk = true},
    {tile = {64, 256, 64}, block = 128, stages = 4, eff = 0.70, overhead = 1.5e-6},
    {tile = {64, 128, 64}, block = 128, stages = 6, eff = 0.51, overhead = 1.5e-6},
    {tile = {64, 64, 64}, block = 128, stages = 8, eff = 0.32, overhead = 1.3e-6},
    -- 64 x 128 x 128: more bytes in flight a block, half the blocks: 16 x 8192 x 8192 at 97.8% of
    -- cuBLAS on an H200 (run v12) where 64 x 64 x 64 ran 78.1%. The model's per-SM bandwidth (a
    -- constant, the H100's) does not see that, so it is picked only where the estimates say (for
    -- autotune = true it is measured with the others)
    {tile = {64, 128, 128}, block = 128, stages = 4, eff = 0.51, overhead = 1.5e-6},
    -- the persistent kernel whose C leaves by bulk tensor stores while the next tile's slices land:
    -- short K (8192 x 8192 x 512 / 1024: 128.6 / 216.0 us against the default's 156.2 / 238.1;
    -- at 4096^3 and longer K the default wins). 3 stages leave room for a C buffer a warpgroup.
    {tile = {128, 256, 64}, block = 256, stages = 3, persistent = true, tma_store = true, eff = 0.745, overhead = 8.0e-6, next = 1.0e-6},
  },
  nvidia = {
    {tile = {128, 128, 64}, block = 128, stages = 3, eff = 0.46, overhead = 7.0e-6, kk = true},
    {tile = {128, 128, 32}, block = 128, stages = 4, eff = 0.47, overhead = 4.0e-6},
    {tile = {128, 64, 32}, block = 128, stages = 4, eff = 0.34, overhead = 2.0e-6},
    {tile = {64, 128, 32}, block = 128, stages = 4, eff = 0.33, overhead = 2.0e-6},
    {tile = {64, 128, 64}, block = 128, stages = 3, eff = 0.37, overhead = 2.0e-6},
    {tile = {64, 64, 64}, block = 128, stages = 4, eff = 0.30, overhead = 1.5e-6},
  },
}

-- sm_90a with element copies (aligned = false, cp.async): candidate c with its K slice halved
-- until a thread's accumulators, copy elements and row addresses fit the registers
-- (hopper.element_tk); nil where none fits
function shapes.element_candidate(c, p)
  local TK = require("ckt.kernels.gemm.hopper").element_tk(c.tile[1], c.tile[2], c.tile[3], c.block, p.fp8)
  if TK == nil or TK == c.tile[3] then return TK and c end
  local e = {}
  for k, v in pairs(c) do e[k] = v end
  e.tile = {c.tile[1], c.tile[2], TK}
  return e
end

-- The hints of o (nil when none is given), checked: positive integers below 2^31
function shapes.hints(o)
  if o.M == nil and o.N == nil and o.K == nil then return nil end
  local h = {}
  for _, d in ipairs{"M", "N", "K"} do
    local v = o[d]
    if v ~= nil then
      if math.type(v) ~= "integer" or v < 1 or v > (1 << 31) - 1 then
        options.fail(("%s = %s: a size hint must be a positive integer below 2^31, got %s"):format(d, tostring(v), math.type(v) or type(v)))
      end
      h[d] = v
    end
  end
  return h
end

-- Blocks of candidate c an SM holds: LDS (the stages, and the epilogue's buffer: sm_90a's 64 rows,
-- or the batched GEMM's whole tile without bulk tensor stores, beside which the stages shrink to fit as plan.lua's do, down to
-- 2) and the registers (the f32 accumulators of a thread and what the path keeps beside them) by
-- the engine's occupancy model. Returns the blocks (0: the LDS does not fit), the LDS bytes and
-- the stages.
local function resident(c, target, rec, p, bytes)
  local TM, TN, TK, hopper = c.tile[1], c.tile[2], c.tile[3], p.hopper
  local buffer = p.batched and (p.bulk_stores and 64 or TM) * TN * ckt.array(p.out, 1):bytes() or (hopper and 64 * (TN + 8) * 2 or 0)
  local stages = c.stages
  local function bytes_at(s) return s * (TM + TN) * TK * bytes + buffer + 1024 end
  while p.batched and stages > 2 and bytes_at(stages) > rec.hw.lds_per_block do stages = stages - 1 end
  local lds = bytes_at(stages)
  if lds > rec.hw.lds_per_block then return 0, lds, stages end
  local acc = TM * TN // c.block
  local regs = hopper and math.min(168, acc + 40) or math.min(255, acc * 7 // 5 + 50)
  local threads = c.block + (hopper and 32 or 0)
  local ok, r = pcall(ckt.occupancy, target, {threads = threads, registers = regs, lds_bytes = lds})
  return ok and math.max(1, r) or 1, lds, stages
end

-- The tiles of candidate c on M x N (a cluster: whole clusters of tile rows, or along N of tile
-- columns) and the blocks of its cluster
local function cluster_tiles(c, M, N)
  local mt, nt, n = (M + c.tile[1] - 1) // c.tile[1], (N + c.tile[2] - 1) // c.tile[2], c.cluster or 1
  if c.cluster_along == "n" then nt = (nt + n - 1) // n * n else mt = (mt + n - 1) // n * n end
  return mt * nt, n
end

-- The model's time (seconds) of candidate c on an M x N x K problem (misaligned: an operand's rows
-- are not whole 128-byte lines apart)
function shapes.estimate(c, M, N, K, rec, r, bytes, misaligned)
  local C = shapes.COST
  local TM, TN, TK = c.tile[1], c.tile[2], c.tile[3]
  local sms = rec.hw.sm_count
  local tiles, n = cluster_tiles(c, M, N)
  local per_sm = (tiles + sms - 1) // sms
  local active = math.min(tiles, sms)
  local slices = (K + TK - 1) // TK
  -- an SM with fewer blocks than it holds hides less latency: eff * sqrt(blocks / r)
  local fill = math.sqrt(math.min(1, per_sm / r))
  local math_step = 2.0 * TM * TN * TK / (C.peak_sm * c.eff * fill)
  local bw = math.min(C.bw_sm, C.bw_l2 / active)
  local mem_step = (TM + TN) * TK * bytes / bw
  local step = math.max(math_step, mem_step)
  if misaligned then step = step * (1 + shapes.MISALIGNED * 32 / TK * (n > 1 and shapes.CLUSTER_MISALIGNED_SHARE or 1)) end
  local t
  if c.persistent then t = per_sm * slices * step + c.overhead + (per_sm - 1) * c.next
  elseif c.split then
    -- split_k: the units past the last whole wave in c.split parts each, spread over the wave; the
    -- last block of a split tile reads the parts' f32 tiles (the others wrote theirs)
    local units, W = tiles // n, math.max(1, sms // n)
    local full = units // W * W
    local waves, rounds = full // W, ((units - full) * c.split + W - 1) // W
    local fixup = rounds * (c.split + 1) * TM * TN * 4 / C.bw_fixup
    t = (waves * slices + rounds * ((slices + c.split - 1) // c.split)) * step + (waves + rounds) * c.overhead + fixup
    per_sm = waves + rounds
  else t = per_sm * slices * step + ((per_sm + r - 1) // r) * c.overhead end
  local floor = (M * K + N * K + M * N) * bytes / C.bw_mem
  return math.max(t, floor) + C.launch, tiles, per_sm, t
end

local function same(a, b)
  if type(a) == "table" then return a[1] == b[1] and a[2] == b[2] and a[3] == b[3] end
  return a == b
end

-- The options to plan, ordered best first: {o', estimate} for each candidate the user's own
-- options allow (a tile, block, stages or persistent given fixes it), each o' a copy of o with the
-- candidate's settings. hints: from shapes.hints; rec: the target record; p: dtype, vendor, hopper.
-- Returns nil (the defaults) where the target has no calibrated candidates.
function shapes.rank(o, h, rec, p)
  local list = p.hopper and shapes.CANDIDATES.hopper or (p.vendor == "nvidia" and shapes.CANDIDATES.nvidia) or nil
  if not list then return nil end
  local M, N, K = h.M or 8192, h.N or 8192, h.K or 8192 -- a size not hinted: large
  local bytes = p.dtype == "f32" and 4 or 2
  -- the operands' row strides: K for a K-major one, M (A) or N (B) otherwise
  local function lines(x) return (x * bytes) % 128 == 0 end
  local misaligned = not (lines(p.a_major == "k" and K or M) and lines(p.b_major == "k" and K or N))
  local ranked = {}
  -- each candidate of list followed by its variants: c with each table of variants(c) laid over it
  local function with_variants(variants)
    local more = {}
    for _, c in ipairs(list) do
      more[#more + 1] = c
      for _, over in ipairs(c.persistent and {} or variants(c)) do
        for k, v in pairs(c) do if over[k] == nil then over[k] = v end end
        more[#more + 1] = over
      end
    end
    list = more
  end
  -- misaligned rows with bulk copies (sm_90a, one tile a block): each candidate also in clusters of
  -- two (B's tiles shared by multicast: shapes.CLUSTER_MISALIGNED_SHARE)
  if misaligned and p.bulk_copies and o.cluster == nil then with_variants(function() return {{cluster = 2}} end) end
  -- a last wave only partly full (at least one whole wave before it) with bulk copies: each one-tile
  -- candidate also with that wave's tiles split 2, 3 and 4 ways along K (split_k)
  if p.bulk_copies and o.split_k == nil then
    local sms = rec.hw.sm_count
    with_variants(function(c)
      local tiles, n = cluster_tiles(c, M, N)
      local units, W = tiles // n, math.max(1, sms // n)
      if units <= W or units % W == 0 then return {} end
      return {{split = 2}, {split = 3}, {split = 4}}
    end)
  end
  for i, listed in ipairs(list) do
    -- (element copies on sm_90a: the candidate with its K slice within the registers, or none)
    local c = listed
    if p.element then c = shapes.element_candidate(listed, p) end
    -- (tma_store: measured with C leaving by bulk tensor stores, where the plan will take them: bulk
    -- copies and a 16-bit C through the LDS epilogue, p.bulk_stores; and not batched)
    if c and c.tma_store and (p.batched or not p.bulk_stores) then c = nil end
    if c then
      local fits = (not c.kk or (p.a_major == "k" and p.b_major == "k")) and (not c.b_k or p.b_major == "k") and (not c.bulk or p.bulk_copies) and (o.tile == nil or same(o.tile, c.tile)) and (o.block == nil or o.block == c.block) and (o.stages == nil or o.stages == c.stages)
                   and (o.persistent == nil or (o.persistent ~= false) == (c.persistent == true))
      local r, lds, stages = resident(c, p.target, rec, p, bytes)
      if fits and r > 0 then
        local t, tiles, per_sm, sched = shapes.estimate(c, M, N, K, rec, r, bytes, misaligned)
        local oc = {}
        for k, v in pairs(o) do oc[k] = v end
        oc.tile, oc.block, oc.stages = o.tile or c.tile, o.block or c.block, o.stages or stages
        if o.persistent == nil and c.persistent then oc.persistent = true end
        if c.cluster then oc.cluster, oc.cluster_along = c.cluster, c.cluster_along end
        if c.split then oc.split_k = c.split end
        ranked[#ranked + 1] = {options = oc, time = t, sched = sched, tiles = tiles, per_sm = per_sm, resident = r, lds = lds, order = i,
                               config = ("%dx%dx%d/%d/%d%s%s%s"):format(c.tile[1], c.tile[2], c.tile[3], c.block, stages, c.persistent and "@persistent" or "",
                                                                       c.cluster and ((c.cluster_along == "n" and "@cluster_n" or "@cluster") .. c.cluster) or "",
                                                                       c.split and ("@split" .. c.split) or "")}
      end
    end
  end
  -- the estimate; within 2% (the model cannot tell them apart: often both at the memory floor) the
  -- schedule's own time (the more slack under the floor), then the list's order
  local function near(x, y) return math.abs(x - y) <= 0.02 * math.min(x, y) end
  table.sort(ranked, function(a, b)
    if not near(a.time, b.time) then return a.time < b.time end
    if not near(a.sched, b.sched) then return a.sched < b.sched end
    return a.order < b.order
  end)
  return ranked, M, N, K
end

-- plan_of(options) -> plan: the first candidate that plans (the model's best the kernel takes
-- with the user's other options), with plan.hints, plan.reason, plan.model; without any, the
-- user's options and the target's defaults (reason says why)
function shapes.choose(o, h, plan_of)
  local probe = {}
  local rec = options.operands(probe, o)
  probe.hopper = require("ckt.kernels.gemm.hopper").available(rec) and probe.dtype ~= "f32" and (o.instr == nil or tostring(o.instr):match("^wgmma") ~= nil)
  probe.element = probe.hopper and options.element_copies(o)
  probe.batched = o.batched == true
  -- (C will likely leave by bulk tensor stores through 64 rows of LDS: plan.lua decides)
  local aligned = o.aligned
  if aligned == nil then aligned = not probe.emulated end
  probe.bulk_copies = probe.hopper and rec.hw.tma and aligned and o.copy ~= "cp.async" and not probe.batched
  probe.bulk_stores = probe.hopper and rec.hw.tma and aligned and not probe.fp8 and probe.out ~= "f32" and o.tma_store ~= false and o.copy ~= "cp.async"
  local ranked, M, N, K = shapes.rank(o, h, rec, probe)
  local tried = {}
  for _, c in ipairs(ranked or {}) do
    local ok, p = pcall(plan_of, c.options)
    if ok then
      p.hints = h
      p.model = ranked
      p.reason = ("%s for M=%d N=%d K=%d%s: %d tiles, %d per SM of %d (%d resident), est. %.1f us"):format(c.config, M, N, K,
        (h.M and h.N and h.K) and "" or " (a size not hinted taken as 8192)", c.tiles, c.per_sm, rec.hw.sm_count, c.resident, c.time * 1e6)
      if #tried > 0 then p.reason = p.reason .. "; better estimates that do not plan with these options: " .. table.concat(tried, ", ")
      elseif ranked[2] then p.reason = p.reason .. ("; next best %s est. %.1f us"):format(ranked[2].config, ranked[2].time * 1e6) end
      return p
    end
    tried[#tried + 1] = c.config
  end
  local p = plan_of(o)
  p.hints = h
  p.reason = ranked and (#ranked == 0 and "no candidate of the model matches the tile, block, stages or persistent given: those and the target's defaults"
                         or "no candidate of the model plans with these options: the target's defaults")
             or ("no calibrated model for %s: the target's defaults"):format(p.target)
  return p
end

return shapes
