-- ckt.kernels.gemm.plan: everything about one configuration, without building the kernel — the
-- options checked, the matrix instruction, the wave grid, the copies and the LDS layouts.
local ckt = ckt or require "ckt"
local options = require "ckt.kernels.gemm.options"
local hopper = require "ckt.kernels.gemm.hopper"
local lds = require "ckt.kernels.gemm.lds"
local shapes = require "ckt.kernels.gemm.shapes"
local epilogue = require "ckt.kernels.gemm.epilogue"
local fail = options.fail

-- The instruction: sm_90a's wgmma (hopper.setup chose it), the one named, or the target's for
-- these dtypes (f32: the CPU target's emulation-only instruction, MFMA lane layouts with f32
-- operands)
local function instruction(p, o)
  local ok, m
  if p.hopper then
    ok, m = pcall(ckt.mma, p.instr)
  elseif o.instr then
    ok, m = pcall(ckt.mma, o.instr)
    if ok and not m:on(p.target) then ok, m = false, ("%s is not an instruction of %s (%s)"):format(m.name, p.target, table.concat(m.targets, ", ")) end
    if ok and (m.a ~= p.dtype or m.b ~= p.dtype) then ok, m = false, ("%s takes %s operands, not %s"):format(m.name, m.a, p.dtype) end
  elseif p.dtype == "f32" then
    ok, m = pcall(ckt.mma_find, {target = p.target, a = "f32", b = "f32", c = "f32"})
  else
    ok, m = pcall(ckt.mma_find, {target = p.arch, a = p.dtype, b = p.dtype, c = "f32", m = p.vendor == "amd" and 32 or 16})
  end
  if not ok or not m then fail(("instr: no matrix instruction for %s on %s: %s"):format(p.dtype, p.target, tostring(m))) end
  p.instr = m.name
  return m
end

-- The wave grid: the one whose wave tiles are the most square (ties: more rows per wave, which on
-- NVIDIA loads more of C's tile by ldmatrix.x4 and less by .x2) among those the instruction
-- divides (sm_90a: the warpgroup grid hopper.setup chose)
local function waves(p, m)
  local lanes = m.lanes
  if p.block % lanes ~= 0 then fail(("block %d is not a whole number of %d-lane %s"):format(p.block, lanes, p.vendor == "amd" and "waves" or "warps")) end
  local n = p.block // lanes
  local wm, best = p.hopper and p.waves_m or 1, p.hopper and -1 or math.huge
  for c = 1, n do
    if n % c == 0 and p.TM % (c * m.m) == 0 and p.TN % ((n // c) * m.n) == 0 then
      local a, b = p.TM // c, p.TN // (n // c)
      local skew = math.max(a, b) / math.min(a, b)
      if skew < best then wm, best = c, skew end
    end
  end
  local wn = n // wm
  if p.TM % (wm * m.m) ~= 0 then fail(("tile TM %d is not a multiple of %d waves x %d rows of %s"):format(p.TM, wm, m.m, m.name)) end
  if p.TN % (wn * m.n) ~= 0 then fail(("tile TN %d is not a multiple of %d waves x %d columns of %s"):format(p.TN, wn, m.n, m.name)) end
  p.waves_m, p.waves_n = wm, wn
  p.m_per_wave, p.n_per_wave = p.TM // (wm * m.m), p.TN // (wn * m.n)
end

-- k_pack: contiguous K a lane reads per step (CK's K1); one K step is instr.k x k_pack / k_chunk
local function k_steps(p, m, o)
  p.k_pack = o.k_pack or (p.vendor == "amd" and 8 or m.k_chunk)
  if math.type(p.k_pack) ~= "integer" or p.k_pack < 1 or p.k_pack > options.TILE_MAX or p.k_pack % m.k_chunk ~= 0 then
    fail(("k_pack %s must be a multiple of %s's %d contiguous K per lane, at most %d"):format(tostring(p.k_pack), m.name, m.k_chunk, options.TILE_MAX))
  end
  p.k_step = m.k * p.k_pack // m.k_chunk
  if p.TK % p.k_step ~= 0 then fail(("tile TK %d is not a multiple of the K step %d (%s's K %d x k_pack %d / %d)"):format(p.TK, p.k_step, m.name, m.k, p.k_pack, m.k_chunk)) end
end

-- What M, N, K are promised to be multiples of (checked at launch): every one with aligned (the
-- 16-byte vector of the global -> LDS copies); with bulk copies at least the tensor maps' strides
-- (a multiple of 16 bytes: K for a K-major operand, M for an M-major A, N for an N-major B)
local function multiples(p)
  local function stride_dim(d)
    return p.copy == "tma" and ((d == "K" and (p.a_major == "k" or p.b_major == "k")) or (d == "M" and p.a_major == "m") or (d == "N" and p.b_major == "n"))
  end
  p.multiple_of = {}
  for _, d in ipairs{"M", "N", "K"} do p.multiple_of[d] = (p.aligned or stride_dim(d)) and p.v or nil end
end

-- batched: C leaves through an LDS buffer of the whole tile (epilogue.lua), or with bulk tensor
-- stores through 64 rows of it; without stages given, as many as fit beside it (sm_90a's default
-- 4 of 128 x 256 x 64 leave no room for the whole tile: 3), the wgmma groups left in flight
-- within them
local function batched_stages(p, rec, o)
  if not rec.hw.lds_per_block then return end
  local e = ckt.array(p.dtype, 1):bytes()
  local room = rec.hw.lds_per_block - (p.tma_store and 64 or p.TM) * p.TN * ckt.array(p.out, 1):bytes() - 1024
  while p.stages > 2 and p.stages * (p.TM + p.TN) * p.TK * e > room do p.stages = p.stages - 1 end
  if p.hopper and o.mma_pending == nil then p.mma_pending = math.min(p.mma_pending, p.stages - 2) end
end

local function plan_of(o)
  local p = {}
  local rec = options.operands(p, o)
  -- sm_90a: Hopper's warpgroup MMA with operands read from LDS through descriptors (hopper.lua)
  p.hopper = hopper.available(rec) and p.dtype ~= "f32" and (o.instr == nil or tostring(o.instr):match("^wgmma") ~= nil)
  local d = p.hopper and (p.fp8 and (p.scales == "block" and "hopper_fp8_block" or "hopper_fp8") or "hopper") or p.vendor
  options.shape(p, o, options.DEFAULTS[d])
  -- sm_90a's element copies: the default tile's K slice within the register budget
  if p.hopper and o.tile == nil and options.element_copies(o) then
    local sums = p.scales == "block" and 2 or 1
    local TK = hopper.element_tk(p.TM, p.TN, p.TK, p.block, p.fp8, sums)
    -- no K slice fits beside the accumulators: half as many columns
    while TK == nil and p.TN > 64 do p.TN = p.TN // 2; TK = hopper.element_tk(p.TM, p.TN, p.TK, p.block, p.fp8, sums) end
    p.TK = TK or p.TK
  end
  if p.hopper then hopper.setup(p, o)
  elseif o.mma_pending ~= nil then fail("mma_pending: only sm_90a's wgmma leaves MMAs in flight") end
  options.copies(p, o, rec)
  options.cluster(p, o)
  options.split(p, o, rec)
  options.block_scales(p, o)
  local m = instruction(p, o)
  waves(p, m)
  k_steps(p, m, o)
  p.traits = ckt.gemm_traits{instr = m.name, m_per_wave = p.m_per_wave, n_per_wave = p.n_per_wave, k_pack = p.k_pack}
  p.v = 16 // ckt.array(p.dtype, 1):bytes() -- global -> LDS copies: 16-byte vectors along each operand's contiguous dim
  multiples(p)
  p.a_copy = lds.copy_plan(p, p.TM, p.a_major == "m", "A (TM x TK)")
  p.b_copy = lds.copy_plan(p, p.TN, p.b_major == "n", "B (TN x TK)")
  lds.layout(p, m, o, p.a_copy, p.TM, "A", p.a_major == "m")
  lds.layout(p, m, o, p.b_copy, p.TN, "B", p.b_major == "n")
  p.name = o.name or ("gemm_" .. p.dtype .. "_" .. p.a_major .. p.b_major .. (p.scales == "block" and "_blockscaled" or ""))
  p.epilogue = o.epilogue
  if options.boolean(o, "batched") then p.batched = true end -- strided batched (docs/gemm.md, Batched)
  -- epilogue_lds: C through an LDS tile and 16-byte row passes on the mma.sync path (epilogue.lua).
  -- On by default where the tile keeps the blocks an SM holds (epilogue.lds_default): alone it ran
  -- within the run-to-run spread of the direct stores at 8192^3 (H100, 2026-11-27: 53.7-57.6% of
  -- cuBLAS against 53.5-56.4%, every dtype and major measured) and cut ~110 ms of the default's
  -- cold compile on the GPU host (664 against 772 ms); with fused_prologue as well the kernel was
  -- slower (42-53%), so that one stays off (bench/results/gemm_sm90_h100_2026-11-27_s12.*)
  local e = options.boolean(o, "epilogue_lds")
  if e == nil then p.epilogue_lds = epilogue.lds_default(p, rec)
  elseif e then
    if p.hopper then fail("epilogue_lds: sm_90a's wgmma path has its own LDS epilogue") end
    if p.batched then fail("epilogue_lds: the batched GEMM's C leaves through LDS already") end
    epilogue.passes(p, "epilogue_lds")
    p.epilogue_lds = true
  else p.epilogue_lds = false end
  -- tma_store (sm_90a, bulk copies, the LDS epilogue): C leaves by bulk tensor stores (epilogue.lua).
  -- On by default where it applies: measured on an H100 (2026-11-28) against the threads' stores,
  -- within 1% for the default tile one tile a block (8192^3 100.6% of cuBLAS both ways), and what
  -- lets the persistent kernel hide its epilogue (8192 x 8192 x 512: 60% -> 88-93% of cuBLAS)
  local ts = options.boolean(o, "tma_store")
  if ts == nil then ts = p.hopper and p.copy == "tma" and epilogue.tma_storable(p) end
  if ts then
    if not (p.hopper and p.copy == "tma") then fail(("tma_store: bulk tensor stores come with sm_90a's bulk copies (copy = \"tma\"), not %s with copy %s"):format(p.target, p.copy)) end
    if not epilogue.tma_storable(p) then fail("tma_store: C must leave through the LDS epilogue (16-bit C, aligned sizes, warpgroups split along M, TN a multiple of 64; persistent kernels with a producer warpgroup), which this plan does not take") end
  end
  p.tma_store = ts == true
  if p.batched and o.stages == nil then batched_stages(p, rec, o) end
  -- fused_prologue: one copy site instead of the prologue's and the K loop's (pipeline.lua); off
  -- unless asked (see epilogue_lds above; grouped.lua turns it on: the grouped GEMM was built and
  -- measured with it)
  local f = options.boolean(o, "fused_prologue")
  local fusable = not p.hopper and p.copy == "cp.async" and not p.persistent
  if f and not fusable then fail("fused_prologue: the cp.async path of one tile a block only (not sm_90a's wgmma, not persistent)") end
  if f == nil then f = false end
  p.fused_prologue = f
  return p
end

-- With size hints (M =, N =, K =) the model of shapes.lua picks the configuration; without, the
-- target's defaults
local function plan(o)
  o = options.known(o)
  local h = shapes.hints(o)
  if h then return shapes.choose(o, h, plan_of) end
  return plan_of(o)
end

return plan
