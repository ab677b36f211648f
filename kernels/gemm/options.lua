-- ckt.kernels.gemm.options: the build options, their defaults per target and their checks (a bad
-- option is a Lua error naming it).
local ckt = ckt or require "ckt"
local options = {}

function options.fail(msg) error("gemm: " .. msg, 3) end
local fail = options.fail

-- Every number an option folds into the generated arithmetic is bounded, so that no product of
-- it with a size (64-bit, sizes below 2^31) can overflow: TILE_MAX for a tile extent, GROUP_MAX
-- for the grouped order's tile rows, BLOCKS_MAX for a grid.
options.TILE_MAX, options.GROUP_MAX, options.BLOCKS_MAX = 4096, 65536, (1 << 31) - 1

-- an integer option in lo..hi (shown: how the message names it)
function options.integer(v, lo, hi, shown)
  if math.type(v) ~= "integer" or v < lo or v > hi then fail(("%s %s must be an integer in %d..%d"):format(shown, tostring(v), lo, hi)) end
  return v
end

-- a boolean option (nil: absent)
function options.boolean(o, name)
  local v = o[name]
  if v ~= nil and type(v) ~= "boolean" then fail(("%s must be a boolean, got %s"):format(name, type(v))) end
  return v
end

options.NAMES = {"dtype", "out", "a_major", "b_major", "target", "epilogue", "tile", "block", "stages", "group", "instr",
                 "k_pack", "aligned", "swizzle", "name", "autotune", "mma_pending", "copy", "persistent",
                 "M", "N", "K", -- M, N, K: size hints (ckt.kernels.gemm.shapes)
                 "batched", -- strided batched GEMM (pipeline.lua: parameters L, batch_stride_A/B/C)
                 "epilogue_lds", -- mma.sync path: C through an LDS tile (epilogue.lua)
                 "fused_prologue", -- cp.async, one tile a block: the K loop issues the first slices' copies too (pipeline.lua)
                 "producer_warpgroup", -- bulk copies: the producer a warpgroup handing its registers over (options.copies)
                 "tma_store", -- sm_90a, bulk copies: C leaves LDS by bulk tensor stores (epilogue.lua)
                 "cluster", "cluster_along", -- sm_90a, bulk copies: clusters of blocks sharing a tile of B (along M) or A (along N) (options.cluster)
                 "split_k", "split_wave", -- sm_90a, bulk copies: the last wave's tiles split along K (options.split)
                 "scales"} -- fp8: "tensor" (one scale an operand) or "block" (DeepSeek-V3's 1 x 128 and 128 x 128 blocks)

-- Defaults per target. NVIDIA: a 128 x 128 block tile in 32-wide K slices, 4 warps of 64 x 64
-- (4 x 8 m16n8 tiles each, ldmatrix.x4 for both operands), 4 stages (64 KiB of LDS at 16 bits; two
-- blocks share an SM), grouped by 8 tile rows: the fastest of bench/gemm.lua's sweep on the H100
-- for every major combination (52-57% of cuBLAS at 8192^3, 2026-11-25; docs/gemm.md has the
-- table and why the others lose). Its cold NVRTC compile is the price: docs/gemm.md.
-- AMD (not measured: there is no AMD GPU here): 128 x 128 x 32, 4 waves of 64 x 64 with the
-- 32x32x8 MFMA (2 x 2 per wave), 2 stages (32 KiB, so two blocks share a CU's 64 KiB).
options.DEFAULTS = {
  nvidia = {tile = {128, 128, 32}, block = 128, stages = 4, group = 8},
  amd = {tile = {128, 128, 32}, block = 256, stages = 2, group = 8},
  -- sm_90a (wgmma): 128 x 256 in 64-wide K slices (128-byte rows, the 128B swizzle), 2
  -- warpgroups of 64 x 256, 4 stages (192 KiB of LDS, one block an SM): the fastest of the H100
  -- sweep (8192^3 K-major 92% of cuBLAS, 2026-11-25; 3 stages or a 128 x 128 tile: 69-74%)
  hopper = {tile = {128, 256, 64}, block = 256, stages = 4, group = 8},
  -- fp8 on sm_90a: the same bytes (128-byte K rows: 128 elements), 93-97% of cuBLASLt at 8192^3
  hopper_fp8 = {tile = {128, 256, 128}, block = 256, stages = 4, group = 8},
  -- fp8 with per-block scales: a thread holds the slice's product beside the running sum (two
  -- accumulators), so 128 x 128 (64 + 64 registers a thread) where 128 x 256 would need 256
  hopper_fp8_block = {tile = {128, 128, 128}, block = 256, stages = 4, group = 8},
}

-- the option table itself: a table of known names
function options.known(o)
  o = o or {}
  if type(o) ~= "table" then fail("options must be a table") end
  local known = {}
  for _, k in ipairs(options.NAMES) do known[k] = true end
  for k in pairs(o) do if not known[k] then fail(("unknown option '%s'"):format(tostring(k))) end end
  return o
end

-- dtypes, majors, epilogue and target; the target record says what a target is (a bare "cpu"
-- emulates the default GPU). Returns the record.
function options.operands(p, o)
  p.dtype = o.dtype or "f16"
  p.fp8 = p.dtype == "e4m3" or p.dtype == "e5m2"
  if p.dtype ~= "f16" and p.dtype ~= "bf16" and p.dtype ~= "f32" and not p.fp8 then fail(("dtype '%s' is not f16, bf16, f32, e4m3 or e5m2"):format(tostring(p.dtype))) end
  p.out = o.out or (p.fp8 and "bf16" or p.dtype)
  if p.out ~= "f16" and p.out ~= "bf16" and p.out ~= "f32" then fail(("out '%s' is not f16, bf16 or f32"):format(tostring(p.out))) end
  p.a_major, p.b_major = o.a_major or "k", o.b_major or "k"
  if p.a_major ~= "k" and p.a_major ~= "m" then fail(("a_major '%s' is not \"k\" or \"m\""):format(tostring(p.a_major))) end
  if p.b_major ~= "k" and p.b_major ~= "n" then fail(("b_major '%s' is not \"k\" or \"n\""):format(tostring(p.b_major))) end
  if o.epilogue ~= nil and type(o.epilogue) ~= "function" then fail("epilogue must be a function of the f32 accumulator") end
  p.target = o.target or (ckt.default_target and ckt.default_target()) or "cpu"
  if type(p.target) ~= "string" then fail("target must be a string") end
  local okt, rec = pcall(ckt.target, p.target)
  if not okt then fail(("target '%s': %s"):format(p.target, tostring(rec))) end
  p.arch, p.emulated, p.vendor = rec.arch, rec.emulated, rec.vendor
  if p.dtype == "f32" and not p.emulated then fail(("dtype f32 runs on the CPU target only (%s has no f32 matrix instruction here)"):format(p.target)) end
  if p.fp8 then options.fp8(p, o, rec)
  elseif o.scales ~= nil then fail(("scales: dtype %s takes no scales (the fp8 dtypes e4m3 and e5m2 do)"):format(p.dtype)) end
  return rec
end

-- fp8 (e4m3, e5m2): sm_90a's 8-bit wgmma forms (and cpu:sm_90a's emulation of them), K-major A
-- and B only (the instructions have no transpose), f32 accumulation, C = scale_A . scale_B . A.B in
-- out (f16, bf16 or f32; default bf16)
function options.fp8(p, o, rec)
  if not rec.hw.wgmma then fail(("dtype %s: target '%s' has no 8-bit matrix instruction (fp8 GEMMs run on sm_90a's wgmma and cpu:sm_90a)"):format(p.dtype, p.target)) end
  if p.a_major ~= "k" then fail(("a_major '%s': the %s wgmma forms read K-major A only (a_major = \"k\")"):format(p.a_major, p.dtype)) end
  if p.b_major ~= "k" then fail(("b_major '%s': the %s wgmma forms read K-major B only (b_major = \"k\", B stored N x K)"):format(p.b_major, p.dtype)) end
  if o.instr ~= nil and not tostring(o.instr):match("^wgmma") then fail(("instr %s: dtype %s takes a wgmma k32 instruction"):format(tostring(o.instr), p.dtype)) end
  p.scales = o.scales or "tensor"
  if p.scales ~= "tensor" and p.scales ~= "block" then fail(("scales '%s' is not \"tensor\" or \"block\""):format(tostring(o.scales))) end
end

-- scales = "block" (DeepSeek-V3's recipe, the layouts DeepGEMM takes): scale_A holds one f32 a row
-- of A and 128-wide block of K, element (m, kb) at kb * M + m (M contiguous); scale_B one a 128 x 128
-- block of B (N x K), element (nb, kb) at nb * ceil(K / 128) + kb. Each K slice's product is
-- scaled into the running sum once its MMAs have retired (mma_pending 0), so a slice lies within
-- one K block (128 a multiple of TK), and a tile's columns within one N block (128 a multiple of
-- TN) with the warpgroups along M only: one scale_B value a slice. Sets p.TS, the scales'
-- distribution. (After hopper.setup: the warpgroup grid.)
function options.block_scales(p, o)
  if p.scales ~= "block" then return end
  if 128 % p.TK ~= 0 then fail(("tile TK %d with scales = \"block\": a K slice must lie within one 128-wide scale block (TK 32, 64 or 128)"):format(p.TK)) end
  if 128 % p.TN ~= 0 then fail(("tile TN %d with scales = \"block\": a tile's columns must lie within one 128-row block of B's scales (TN 64 or 128)"):format(p.TN)) end
  if p.waves_n ~= 1 then fail(("tile %dx%d with block %d and scales = \"block\": the warpgroups must split TM only (TM = 64 x warpgroups)"):format(p.TM, p.TN, p.block)) end
  if o.mma_pending ~= nil and o.mma_pending ~= 0 then fail(("mma_pending %s: with scales = \"block\" each slice's MMAs retire before its scaling (mma_pending = 0)"):format(tostring(o.mma_pending))) end
  p.mma_pending = 0
  if o.batched then fail("batched: scales = \"block\" takes one problem (no batch strides for the scales)") end
  -- a value a row of the tile, held by the lanes holding the row's accumulators (mma.sync's
  -- m16n8 rows are wgmma's: 16 a warp, lane / 4 and + 8)
  p.TS = ckt.gemm_traits{instr = "mma_m16n8k16_f16", m_per_wave = p.TM // (16 * (p.block // 32)), n_per_wave = 1, k_pack = 2}
end

-- tile, block, stages, group (d: the target's defaults)
function options.shape(p, o, d)
  local tile = o.tile or d.tile
  if type(tile) ~= "table" or #tile ~= 3 then fail("tile must be {TM, TN, TK}") end
  p.TM, p.TN, p.TK = tile[1], tile[2], tile[3]
  for i, x in ipairs{p.TM, p.TN, p.TK} do options.integer(x, 1, options.TILE_MAX, ("tile[%d] ="):format(i)) end
  p.block = options.integer(o.block or d.block, 1, 1024, "block")
  p.stages = options.integer(o.stages or d.stages, 2, 8, "stages")
  p.group = options.integer(o.group or d.group, 1, options.GROUP_MAX, "group")
  if o.instr ~= nil and type(o.instr) ~= "string" then fail(("instr must be a string (a matrix instruction name), got %s"):format(type(o.instr))) end
  options.boolean(o, "swizzle")
end

-- Are the copies asked to move one element at a time (aligned = false given, cp.async)? Then the
-- default tile fits sm_90a's registers (hopper.element_tk), and cpu:sm_90a given aligned = false
-- emulates that tile. (Before options.copies decides. An emulated target's own default, aligned
-- unset, keeps the target's tile: registers do not limit the emulation.)
function options.element_copies(o)
  return o.aligned == false and (o.copy == nil or o.copy == "cp.async")
end

-- aligned, copy, persistent (rec: the target record)
function options.copies(p, o, rec)
  -- aligned: M, N and K are promised multiples of the 16-byte vector (checked at launch), which
  -- 16-byte copies need at padded edges; the GPU default. Without it the copies move one element
  -- at a time (any M, N, K: the CPU default).
  if options.boolean(o, "aligned") == nil then p.aligned = not p.emulated else p.aligned = o.aligned end
  -- global -> LDS copies: "tma" (sm_90a's wgmma path: a producer warp issues one bulk tensor copy
  -- per operand box, paced by mbarriers; the default there with aligned sizes, the faster on the
  -- H100 measured at every major, docs/hopper.md) or "cp.async" (16-byte copies by every thread;
  -- any size: the tensor maps' strides need 16 bytes)
  p.copy = o.copy or ((p.hopper and rec.hw.tma and p.aligned) and "tma" or "cp.async")
  if p.copy ~= "tma" and p.copy ~= "cp.async" then fail(("copy '%s' is not \"tma\" or \"cp.async\""):format(tostring(p.copy))) end
  if p.copy == "tma" and not (p.hopper and rec.hw.tma) then fail(("copy = \"tma\": bulk tensor copies feed sm_90a's wgmma path (%s is not it)"):format(p.target)) end
  -- persistent = true | blocks: a grid of that many blocks (true: the target's SM / CU count,
  -- schedule.sm_count) walks the tiles, the copies running on across tile boundaries
  if o.persistent ~= nil and o.persistent ~= false then
    p.persistent = o.persistent == true and require("ckt.kernels.gemm.schedule").sm_count(rec) or o.persistent
    p.persistent_auto = o.persistent == true
    if math.type(p.persistent) ~= "integer" or p.persistent < 1 or p.persistent > options.BLOCKS_MAX then
      fail(("persistent %s must be true or a positive number of blocks (at most 2^31 - 1)"):format(tostring(o.persistent)))
    end
  end
  -- with the producer warp ptxas caps the registers at 168; the persistent kernel's f32 output
  -- then spills the accumulators of MMAs left in flight (refused at compile: wrong results on an
  -- H200), so it retires its MMAs every slice unless told otherwise. (One tile a block fits since
  -- its first slice's MMAs are in the K loop: 154 registers, 0.5-1% faster on an H100, docs/gemm.md.)
  if p.copy == "tma" and p.out == "f32" and p.persistent and o.mma_pending == nil then p.mma_pending = 0 end
  -- producer_warpgroup: the producer is a whole warpgroup that hands its registers to the block's
  -- (sm_90a's setmaxnreg: 224 a thread for two warpgroups instead of 168). By default with bulk
  -- copies, two or more warpgroups and persistent: room for the C tile to leave through LDS while
  -- the producer fills the next tile's stages (epilogue.lua)
  local pw = options.boolean(o, "producer_warpgroup")
  local can = p.copy == "tma" and p.block % 128 == 0 and p.block >= 256
  if pw and not can then
    fail(("producer_warpgroup: bulk copies (copy = \"tma\") and two or more warpgroups (block %d, copy %s)"):format(p.block, p.copy))
  end
  -- (and with fp8 block scales, one tile a block: 769.9 against 724.8 TFLOP/s at 8192^3 on an H100,
  -- docs/gemm.md; and with split_k, whose last block sums a slot at a time into its accumulators:
  -- beside two warpgroups' 128 a thread that needs the producer warpgroup's registers, the producer
  -- warp's 168 spilled 116 bytes)
  if pw == nil then pw = can and (p.persistent ~= nil or p.scales == "block" or (o.split_k ~= nil and o.split_k ~= 1)) end
  p.producer_warpgroup = pw
end

-- cluster = 1, 2 or 4: the blocks of n consecutive tile rows (same tile column) run as a cluster,
-- each copying 1/n of B's boxes into all of them (bulk copies multicast), so B's tiles cross from
-- L2 once for n tiles. Where the operands' rows are not whole 128-byte lines apart (K = 4104), the
-- lines a box straddles made L2 the limit: +20% at 4096 x 4096 x 4104 on an H200 (docs/gemm.md).
-- cluster_along = "n": the blocks of n tile columns of one tile row instead, sharing A's tiles.
function options.cluster(p, o)
  local n = o.cluster
  if o.cluster_along ~= nil and o.cluster_along ~= "m" and o.cluster_along ~= "n" then fail(("cluster_along '%s' is not \"m\" or \"n\""):format(tostring(o.cluster_along))) end
  p.cluster_along = o.cluster_along or "m"
  if n == nil or n == 1 then p.cluster = 1 return end
  if n ~= 2 and n ~= 4 then fail(("cluster %s must be 1, 2 or 4 (blocks a cluster)"):format(tostring(n))) end
  if p.copy ~= "tma" then fail(("cluster: the blocks share tiles by bulk copies (copy = \"tma\", sm_90a), not %s with copy %s"):format(p.target, p.copy)) end
  if p.persistent then fail("cluster: one tile a block (not persistent: the blocks of a cluster would walk different tiles)") end
  if o.batched then fail("cluster: one problem (not batched)") end
  p.cluster = n
end

-- split_k = S (2..16): the tiles past the last whole wave (split_wave blocks a wave, default the
-- target's SM count; in clusters, whole clusters) are split S ways along K, each part a block of
-- its own: a block stores its partial f32 tile in `workspace` and adds 1 to its tile's counter in
-- `counters` (i32, zero before the first launch, left zero by every launch); the tile's last
-- block sums the S partials in the order of their K ranges (deterministic) and stores C. The wave
-- that was a third full (4104^3: 4.4 waves of 128 x 256) becomes S times shorter.
function options.split(p, o, rec)
  local S = o.split_k
  if o.split_wave ~= nil and (S == nil or S == 1) then fail("split_wave: only with split_k") end
  if S == nil or S == 1 then p.split_k = 1 return end
  if math.type(S) ~= "integer" or S < 2 or S > 16 then fail(("split_k %s must be an integer in 1..16"):format(tostring(S))) end
  if p.copy ~= "tma" then fail(("split_k: sm_90a's bulk-copy path (copy = \"tma\"), not %s with copy %s"):format(p.target, p.copy)) end
  if p.persistent then fail("split_k: one tile a block (not persistent)") end
  if o.batched then fail("split_k: one problem (not batched)") end
  if p.scales == "block" then fail("split_k: not with scales = \"block\" (each slice's scales are read by its K block)") end
  local W = o.split_wave or rec.hw.sm_count
  if math.type(W) ~= "integer" or W < p.cluster or W > options.BLOCKS_MAX then
    fail(("split_wave %s must be an integer number of blocks a wave, at least the cluster's %d"):format(tostring(o.split_wave), p.cluster))
  end
  p.split_k, p.split_wave = S, W
end

return options
