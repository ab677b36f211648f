-- ckt kernel library: GEMM, C (M x N, row-major) = A (M x K) . B (K x N), f32 accumulation.
--   a_major = "k": A row-major M x K;        "m": A stored K x M row-major (M contiguous)
--   b_major = "n": B row-major K x N;        "k": B stored N x K row-major (the CK wrapper
--                                               GEMM tutorial's case: K contiguous)
-- A block computes one TM x TN tile of C (blocks in grouped order, `group` tile rows at a time,
-- so neighbouring blocks share A and B tiles in L2):
--   1. an S-stage LDS ring of A (TM x TK) and B (TN x TK, the N x K tile blockwise_gemm takes):
--      16-byte asynchronous copies (cp.async on sm_80+, zero-filled past the padded edges of M,
--      N and K) issued S-1 K slices ahead of the math;
--   2. each K slice: wait for its copies, a barrier, issue the copy of the slice S-1 ahead into
--      the stage every thread has just finished reading, then b:blockwise_gemm over the slice
--      (mma.sync m16n8k16 with ldmatrix operand loads on NVIDIA, MFMA on AMD, the instruction
--      emulated lane by lane on the CPU target);
--   3. the f32 accumulators through the epilogue (b:map), converted to the output dtype, stored
--      through the C local partition (masked at the edges).
-- The LDS layouts come from ckt.lds.find_swizzle, from the copy-in (write) and operand (read)
-- access maps of the plan, so both are conflict-free by the target's bank model.
local ckt = ckt or require "ckt"
local gemm = {}

local function fail(msg) error("gemm: " .. msg, 3) end

-- Defaults per target. NVIDIA: a 128 x 128 block tile in 32-wide K slices, 4 warps of 64 x 64
-- (4 x 8 m16n8 tiles each, ldmatrix.x4 for both operands), 4 stages (64 KiB of LDS at 16 bits; two
-- blocks share an SM), grouped by 8 tile rows: the fastest of bench/gemm.lua's sweep on the H100
-- for every major combination (52-57% of cuBLAS at 8192^3, 2026-11-25; docs/gemm.md has the
-- table and why the others lose). Its cold NVRTC compile is the price: docs/gemm.md.
-- AMD (not measured: there is no AMD GPU here): 128 x 128 x 32, 4 waves of 64 x 64 with the
-- 32x32x8 MFMA (2 x 2 per wave), 2 stages (32 KiB, so two blocks share a CU's 64 KiB).
local DEFAULTS = {
  nvidia = {tile = {128, 128, 32}, block = 128, stages = 4, group = 8},
  amd = {tile = {128, 128, 32}, block = 256, stages = 2, group = 8},
  -- sm_90a (wgmma): 128 x 256 in 64-wide K slices (128-byte rows, the 128B swizzle), 2
  -- warpgroups of 64 x 256, 4 stages (192 KiB of LDS, one block an SM): the fastest of the H100
  -- sweep (8192^3 K-major 92% of cuBLAS, 2026-11-25; 3 stages or a 128 x 128 tile: 69-74%)
  hopper = {tile = {128, 256, 64}, block = 256, stages = 4, group = 8},
}

gemm.OPTIONS = {"dtype", "out", "a_major", "b_major", "target", "epilogue", "tile", "block", "stages", "group", "instr",
                "k_pack", "aligned", "swizzle", "name", "autotune", "mma_pending", "copy", "persistent"}

-- sm_90a: the warpgroup grid and the wgmma instruction. Warpgroups split TM first (each at
-- least 64 rows, one m64 instruction per 64 rows), then TN; the instruction's N is the largest
-- of 256, 128, 64 that divides a warpgroup's columns.
local function hopper(p, o)
  if p.block % 128 ~= 0 then fail(("block %d is not a whole number of 128-thread warpgroups (wgmma on sm_90a)"):format(p.block)) end
  local wgs = p.block // 128
  local wm = 1
  for c = wgs, 1, -1 do
    if wgs % c == 0 and p.TM % (c * 64) == 0 then wm = c; break end
  end
  local wn = wgs // wm
  if p.TM % (wm * 64) ~= 0 then fail(("tile TM %d is not a multiple of 64 rows per warpgroup (wgmma m64)"):format(p.TM)) end
  if p.TN % wn ~= 0 then fail(("tile TN %d does not split over %d warpgroups"):format(p.TN, wn)) end
  local cols, n = p.TN // wn, nil
  for _, c in ipairs{256, 128, 64} do if cols % c == 0 then n = c; break end end
  if not n then fail(("tile TN %d gives %d columns per warpgroup, not a multiple of 64 (wgmma n64/n128/n256)"):format(p.TN, cols)) end
  if not (p.TK == 16 or p.TK == 32 or p.TK % 64 == 0) then fail(("tile TK %d must be 16, 32, or a multiple of 64 (whole swizzle rows of 16-bit elements)"):format(p.TK)) end
  if o.k_pack and o.k_pack ~= 16 then fail(("k_pack %s: wgmma takes its whole K of 16 from LDS (k_pack 16)"):format(tostring(o.k_pack))) end
  if o.swizzle == false then fail("swizzle = false: wgmma's LDS layouts are the hardware's swizzled ones") end
  p.instr = ("wgmma_m64n%dk16_%s"):format(n, p.dtype)
  if o.instr and o.instr ~= p.instr then fail(("instr %s: this tile and block take %s"):format(o.instr, p.instr)) end
  p.waves_m, p.waves_n = wm, wn
  -- wgmma groups left in flight while the next slice's copies and barrier run: each one costs a
  -- slice of copy look-ahead (a stage they still read cannot be refilled), so S - 2 at most
  p.mma_pending = o.mma_pending or (p.stages >= 3 and 1 or 0)
  if math.type(p.mma_pending) ~= "integer" or p.mma_pending < 0 or p.mma_pending > p.stages - 2 then
    fail(("mma_pending %s must be an integer in 0..stages-2 = %d"):format(tostring(o.mma_pending), p.stages - 2))
  end
end

-- sm_90a: the LDS tile (rows x TK) in the layout wgmma's descriptors describe, as a ckt layout
-- composed with the hardware swizzle (Sw<B,3,3> on 16-bit elements is Sw<B,4,3> on bytes: 32B,
-- 64B, 128B for B = 1, 2, 3). K-major: rows of min(TK, 64) elements (32, 64 or 128 bytes), K
-- beyond 64 in further 64-wide atoms after all rows; M/N-major: 64-row atoms of 128-byte K rows.
local function hopper_lds(p, rows, contiguous_rows)
  if contiguous_rows then
    if rows % 64 ~= 0 then fail(("an M/N-contiguous tile of %d rows is not whole 64-row atoms of the 128B swizzle"):format(rows)) end
    return ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({{64, rows // 64}, p.TK}, {{1, 64 * p.TK}, 64})),
           "M/N-major 128B swizzle (64-row atoms, 128-byte K rows), read by wgmma through descriptors"
  end
  local w = math.min(p.TK, 64)
  local b = ({[16] = 1, [32] = 2, [64] = 3})[w]
  local l = p.TK <= 64 and ckt.layout({rows, p.TK}, {p.TK, 1}) or ckt.layout({rows, {64, p.TK // 64}}, {64, {1, rows * 64}})
  return ckt.composed(ckt.swizzle(b, 3, 3), 0, l), ("K-major %dB swizzle (rows of %d bytes), read by wgmma through descriptors"):format(w * 2, w * 2)
end

-- Everything about one configuration, without building the kernel.
function gemm.plan(o)
  o = o or {}
  if type(o) ~= "table" then fail("options must be a table") end
  local known = {}
  for _, k in ipairs(gemm.OPTIONS) do known[k] = true end
  for k in pairs(o) do if not known[k] then fail(("unknown option '%s'"):format(tostring(k))) end end
  local p = {}
  p.dtype = o.dtype or "f16"
  if p.dtype ~= "f16" and p.dtype ~= "bf16" and p.dtype ~= "f32" then fail(("dtype '%s' is not f16, bf16 or f32"):format(tostring(p.dtype))) end
  p.out = o.out or p.dtype
  if p.out ~= "f16" and p.out ~= "bf16" and p.out ~= "f32" then fail(("out '%s' is not f16, bf16 or f32"):format(tostring(p.out))) end
  p.a_major, p.b_major = o.a_major or "k", o.b_major or "k"
  if p.a_major ~= "k" and p.a_major ~= "m" then fail(("a_major '%s' is not \"k\" or \"m\""):format(tostring(p.a_major))) end
  if p.b_major ~= "k" and p.b_major ~= "n" then fail(("b_major '%s' is not \"k\" or \"n\""):format(tostring(p.b_major))) end
  if o.epilogue ~= nil and type(o.epilogue) ~= "function" then fail("epilogue must be a function of the f32 accumulator") end
  p.target = o.target or (ckt.default_target and ckt.default_target()) or "cpu"
  if type(p.target) ~= "string" then fail("target must be a string") end
  -- the target record says what a target is (a bare "cpu" emulates the default GPU)
  local okt, rec = pcall(ckt.target, p.target)
  if not okt then fail(("target '%s' has no matrix instructions (cpu, cpu:<gpu>, gfx90a, sm_80, sm_90)"):format(p.target)) end
  p.arch, p.emulated = rec.arch, rec.emulated
  local vendor = rec.vendor
  p.vendor = vendor
  if p.dtype == "f32" and not p.emulated then fail(("dtype f32 runs on the CPU target only (%s has no f32 matrix instruction here)"):format(p.target)) end
  -- sm_90a: Hopper's warpgroup MMA with operands read from LDS through descriptors (see hopper())
  local has_wgmma = false
  for _, name in ipairs(rec.matrix) do has_wgmma = has_wgmma or name:match("^wgmma") ~= nil end
  p.hopper = has_wgmma and p.dtype ~= "f32" and (o.instr == nil or tostring(o.instr):match("^wgmma") ~= nil)
  local d = p.hopper and DEFAULTS.hopper or DEFAULTS[vendor]
  local tile = o.tile or d.tile
  if type(tile) ~= "table" or #tile ~= 3 then fail("tile must be {TM, TN, TK}") end
  p.TM, p.TN, p.TK = tile[1], tile[2], tile[3]
  for i, x in ipairs{p.TM, p.TN, p.TK} do
    if math.type(x) ~= "integer" or x < 1 then fail(("tile[%d] = %s must be a positive integer"):format(i, tostring(x))) end
  end
  p.block = o.block or d.block
  if math.type(p.block) ~= "integer" or p.block < 1 or p.block > 1024 then fail(("block %s must be an integer in 1..1024"):format(tostring(p.block))) end
  p.stages = o.stages or d.stages
  if math.type(p.stages) ~= "integer" or p.stages < 2 or p.stages > 8 then fail(("stages %s must be an integer in 2..8"):format(tostring(p.stages))) end
  p.group = o.group or d.group
  if math.type(p.group) ~= "integer" or p.group < 1 then fail(("group %s must be a positive integer"):format(tostring(p.group))) end
  if p.hopper then hopper(p, o)
  elseif o.mma_pending ~= nil then fail("mma_pending: only sm_90a's wgmma leaves MMAs in flight") end
  -- aligned: M, N and K are promised multiples of the 16-byte vector (checked at launch), which
  -- 16-byte copies need at padded edges; the GPU default. Without it the copies move one element
  -- at a time (any M, N, K: the CPU default).
  if o.aligned == nil then p.aligned = not p.emulated else p.aligned = o.aligned end
  -- global -> LDS copies: "tma" (sm_90a's wgmma path: a producer warp issues one bulk tensor copy
  -- per operand box, paced by mbarriers; the default there with aligned sizes, the faster on the
  -- H100 measured at every major, docs/hopper.md) or "cp.async" (16-byte copies by every thread;
  -- any size: the tensor maps' strides need 16 bytes)
  p.copy = o.copy or ((p.hopper and rec.tma and p.aligned) and "tma" or "cp.async")
  if p.copy ~= "tma" and p.copy ~= "cp.async" then fail(("copy '%s' is not \"tma\" or \"cp.async\""):format(tostring(p.copy))) end
  if p.copy == "tma" and not (p.hopper and rec.tma) then fail(("copy = \"tma\": bulk tensor copies feed sm_90a's wgmma path (%s is not it)"):format(p.target)) end
  -- persistent = true | blocks: a grid of that many blocks (true: 132, the SMs of an H100 / H200)
  -- walks the tiles, the copies running on across tile boundaries
  if o.persistent ~= nil and o.persistent ~= false then
    p.persistent = o.persistent == true and 132 or o.persistent
    p.persistent_auto = o.persistent == true
    if math.type(p.persistent) ~= "integer" or p.persistent < 1 then fail(("persistent %s must be true or a positive number of blocks"):format(tostring(o.persistent))) end
  end
  -- with the producer warp ptxas caps the registers at 168; an f32 output's epilogue then spills
  -- the accumulators of MMAs left in flight (refused at compile: wrong results on an H200), so
  -- the TMA path with an f32 output retires its MMAs every slice unless told otherwise
  if p.copy == "tma" and p.out == "f32" and o.mma_pending == nil then p.mma_pending = 0 end
  -- the instruction: the target's for these dtypes (f32: the CPU target's emulation-only
  -- instruction, MFMA lane layouts with f32 operands)
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
    ok, m = pcall(ckt.mma_find, {target = p.arch, a = p.dtype, b = p.dtype, c = "f32", m = vendor == "amd" and 32 or 16})
  end
  if not ok or not m then fail(("instr: no matrix instruction for %s on %s: %s"):format(p.dtype, p.target, tostring(m))) end
  p.instr = m.name
  -- waves: the grid whose wave tiles are the most square (ties: more rows per wave, which on
  -- NVIDIA loads more of C's tile by ldmatrix.x4 and less by .x2) among those the instruction divides
  local lanes = m.lanes
  if p.block % lanes ~= 0 then fail(("block %d is not a whole number of %d-lane %s"):format(p.block, lanes, vendor == "amd" and "waves" or "warps")) end
  local waves = p.block // lanes
  local wm, best = p.hopper and p.waves_m or 1, p.hopper and -1 or math.huge
  for c = 1, waves do
    if waves % c == 0 and p.TM % (c * m.m) == 0 and p.TN % ((waves // c) * m.n) == 0 then
      local a, b = p.TM // c, p.TN // (waves // c)
      local skew = math.max(a, b) / math.min(a, b)
      if skew < best then wm, best = c, skew end
    end
  end
  local wn = waves // wm
  if p.TM % (wm * m.m) ~= 0 then fail(("tile TM %d is not a multiple of %d waves x %d rows of %s"):format(p.TM, wm, m.m, m.name)) end
  if p.TN % (wn * m.n) ~= 0 then fail(("tile TN %d is not a multiple of %d waves x %d columns of %s"):format(p.TN, wn, m.n, m.name)) end
  -- k_pack: contiguous K a lane reads per step (CK's K1); one K step is instr.k x k_pack / k_chunk
  p.k_pack = o.k_pack or (vendor == "amd" and 8 or m.k_chunk)
  if math.type(p.k_pack) ~= "integer" or p.k_pack < 1 or p.k_pack % m.k_chunk ~= 0 then fail(("k_pack %s must be a multiple of %s's %d contiguous K per lane"):format(tostring(p.k_pack), m.name, m.k_chunk)) end
  p.k_step = m.k * p.k_pack // m.k_chunk
  if p.TK % p.k_step ~= 0 then fail(("tile TK %d is not a multiple of the K step %d (%s's K %d x k_pack %d / %d)"):format(p.TK, p.k_step, m.name, m.k, p.k_pack, m.k_chunk)) end
  p.waves_m, p.waves_n = wm, wn
  p.m_per_wave, p.n_per_wave = p.TM // (wm * m.m), p.TN // (wn * m.n)
  p.traits = ckt.gemm_traits{instr = m.name, m_per_wave = p.m_per_wave, n_per_wave = p.n_per_wave, k_pack = p.k_pack}
  -- global -> LDS copies: 16-byte vectors along the contiguous dim of each operand
  local esz = ckt.array(p.dtype, 1):bytes()
  p.v = 16 // esz
  -- what M, N, K are promised to be multiples of (checked at launch): every one with aligned; with
  -- bulk copies at least the tensor maps' strides (a multiple of 16 bytes: K for a K-major
  -- operand, M for an M-major A, N for an N-major B)
  local function stride_dim(d)
    return p.copy == "tma" and ((d == "K" and (p.a_major == "k" or p.b_major == "k")) or (d == "M" and p.a_major == "m") or (d == "N" and p.b_major == "n"))
  end
  p.multiple_of = {}
  for _, d in ipairs{"M", "N", "K"} do p.multiple_of[d] = (p.aligned or stride_dim(d)) and p.v or nil end
  local v = p.aligned and p.v or 1
  local function copy_plan(rows, contiguous_rows, name)
    -- the LDS tile is rows x TK; contiguous_rows: the row dim is contiguous in global memory
    -- bulk copies: no thread moves an element (the tensor memory accelerator writes the tile)
    if p.copy == "tma" then return {vector_dim = contiguous_rows and 0 or 1, scalar_per_vector = p.v} end
    local len = contiguous_rows and rows or p.TK
    if len % v ~= 0 then fail(("tile %s of %d is not a multiple of %d-element vectors"):format(name, len, v)) end
    local along = len // v
    if p.block % along ~= 0 and along % p.block ~= 0 then fail(("block %d and the %d vectors along %s do not tile each other"):format(p.block, along, name)) end
    local t_along = math.min(along, p.block)
    local t_other = p.block // t_along
    local other = contiguous_rows and p.TK or rows
    if other % t_other ~= 0 then fail(("block %d does not divide the %dx%d %s tile into whole passes"):format(p.block, rows, p.TK, name)) end
    local c = {vector_dim = contiguous_rows and 0 or 1, scalar_per_vector = v}
    if contiguous_rows then
      c.thread_layout = ckt.layout({t_along, t_other}, {1, t_along})
      c.lds = ckt.layout({rows, p.TK}, {1, rows})
      -- write map: thread -> the first element of its vector, tile index row + rows * k
      c.write = ckt.layout({{t_along, t_other}, other // t_other}, {{v, rows}, rows * t_other})
    else
      c.thread_layout = ckt.layout({t_other, t_along}, {t_along, 1})
      c.lds = ckt.layout({rows, p.TK}, {p.TK, 1})
      c.write = ckt.layout({{t_along, t_other}, other // t_other}, {{rows * v, 1}, t_other})
    end
    return c
  end
  p.a_copy = copy_plan(p.TM, p.a_major == "m", "A (TM x TK)")
  p.b_copy = copy_plan(p.TN, p.b_major == "n", "B (TN x TK)")
  -- operand reads: what b:blockwise_gemm loads from LDS per K step is the traits' block-level
  -- distribution of the operand (or, on NVIDIA, ldmatrix's row addresses, below) (T:tv: (thread, value) -> m * k_step + k over one K step of the
  -- rows x k_step tile); a lane's run of contiguous K (k_chunk on NVIDIA: 4-byte reads; k_pack
  -- on AMD: 16-byte reads) is one vector. As a bank-model thread map: (thread, vector) -> the
  -- tile index row + rows * k of the vector's first element, for every K step of the slice.
  local function flat(t, out)
    out = out or {}
    if type(t) == "table" then for _, x in ipairs(t) do flat(x, out) end else out[#out + 1] = t end
    return out
  end
  local function read_map(operand, rows, trans)
    local tv = p.traits:tv(operand, p.TM, p.TN, p.TK, p.block)
    local ks = p.k_step
    if trans then
      -- ldmatrix.trans from an M- / N-contiguous tile: lane l points at a 16-byte M / N row at
      -- one K (the row + rows * k index of its first element); A x4: K + l % 8, M + 8 for
      -- matrices 1, 3, K + 8 for 2, 3; B x4: K + l % 8 (+ 8 for matrices 1, 3), the next N tile
      -- for 2, 3; B x2: K + l % 8 (+ 8 for matrix 1). Vectors of 8 along the rows.
      local pw = operand == "A" and p.m_per_wave or p.n_per_wave
      local mm = operand == "A" and m.m or m.n
      local tsh, tst, vsh, vst
      if operand == "A" then
        tsh, tst = {8, 2, 2, wn, wm}, {rows, 8, 8 * rows, 0, pw * mm}
        vsh, vst = {pw}, {mm}
      elseif pw % 2 == 0 then
        tsh, tst = {8, 2, 2, wn, wm}, {rows, 8 * rows, mm, pw * mm, 0}
        vsh, vst = {pw // 2}, {2 * mm}
      else
        tsh, tst = {8, 2, 2, wn, wm}, {rows, 8 * rows, 0, pw * mm, 0}
        vsh, vst = {pw}, {mm}
      end
      vsh[#vsh + 1], vst[#vst + 1] = p.TK // ks, rows * ks
      return ckt.layout({tsh, vsh}, {tst, vst}), 8
    end
    if vendor == "nvidia" and m.ldmatrix and p.k_pack == m.k_chunk then
      -- ldmatrix (what the CUDA dialect emits for K-contiguous 16-bit tiles): lane l of a warp
      -- points at one 16-byte K row of one 8 x 8 matrix; A x4: row l % 8 (+8 for matrices 1, 3),
      -- K + 8 for matrices 2, 3; B x4 (an even number of N tiles per wave): row l % 8, K + 8 for
      -- matrices 1, 3, the next N tile for matrices 2, 3; B x2 (odd): row l % 8, K + 8 for matrix 1
      local pw = operand == "A" and p.m_per_wave or p.n_per_wave
      local mm = operand == "A" and m.m or m.n
      if operand == "A" then
        tv = ckt.layout({{8, 2, 2, wn, wm}, {8, pw}}, {{ks, 8 * ks, 8, 0, pw * mm * ks}, {1, mm * ks}})
      elseif pw % 2 == 0 then
        -- x4 over N tiles 2j, 2j+1: lanes 16..31 point at the odd tile
        tv = ckt.layout({{8, 2, 2, wn, wm}, {8, pw // 2}}, {{ks, 8, mm * ks, pw * mm * ks, 0}, {1, 2 * mm * ks}})
      else
        tv = ckt.layout({{8, 2, 2, wn, wm}, {8, pw}}, {{ks, 8, 0, pw * mm * ks, 0}, {1, mm * ks}})
      end
    end
    local function conv(st) return (st // ks) + rows * (st % ks) end
    local ts, tt = flat(tv:mode(0):shape()), flat(tv:mode(0):stride())
    local vs, vt = flat(tv:mode(1):shape()), flat(tv:mode(1):stride())
    local run, i = 1, 1
    while i <= #vs and vt[i] == run do run = run * vs[i]; i = i + 1 end
    local tsh, tst, vsh, vst = {}, {}, {}, {}
    for j = 1, #ts do tsh[j], tst[j] = ts[j], conv(tt[j]) end
    for j = i, #vs do vsh[#vsh + 1], vst[#vst + 1] = vs[j], conv(vt[j]) end
    vsh[#vsh + 1], vst[#vst + 1] = p.TK // ks, rows * ks
    return ckt.layout({tsh, vsh}, {tst, vst}), run
  end
  local function lds_layout(c, rows, per_wave, name, contiguous_rows)
    if p.hopper then
      c.lds, c.why = hopper_lds(p, rows, contiguous_rows)
      if contiguous_rows and p.copy ~= "tma" then -- copies per 64-row atom (gemm.build): 64 / v threads along the rows
        local v = p.aligned and p.v or 1
        local along = 64 // v
        if p.block % along ~= 0 or p.TK % (p.block // along) ~= 0 then
          fail(("block %d does not divide a 64 x %d atom of the M/N-contiguous %s tile into whole passes of %d-element copies"):format(p.block, p.TK, name, v))
        end
        c.atom_thread_layout = ckt.layout({along, p.block // along}, {1, along})
      end
      return
    end
    -- M/N-contiguous tiles: ldmatrix.trans on NVIDIA; element reads from MFMA's fragments on AMD
    local trans = contiguous_rows and vendor == "nvidia" and m.ldmatrix and p.k_pack == m.k_chunk
    if (contiguous_rows and not trans) or o.swizzle == false or p.dtype == "f32" then
      c.why = contiguous_rows and not trans and "M/N-contiguous tile, element operand reads" or p.dtype == "f32" and "row-major (f32 runs on the CPU only)" or "row-major (no swizzle)"
      return
    end
    local read, rv = read_map(name, rows, trans)
    c.read, c.read_vector = read, rv
    local s = ckt.lds.find_swizzle{target = p.arch, layout = c.lds, dtype = p.dtype,
                                   write = {thread_map = c.write, vector = v}, read = {thread_map = read, vector = rv}}
    c.lds, c.conflict_free = s.layout, s.conflict_free
    c.why = (s.swizzle and tostring(s.swizzle) or (s.padding_banks > 0 and (s.padding_banks .. " banks of padding") or "plain"))
            .. (s.conflict_free and ", conflict-free" or ", not conflict-free") .. " for " .. p.arch
  end
  lds_layout(p.a_copy, p.TM, p.m_per_wave, "A", p.a_major == "m")
  lds_layout(p.b_copy, p.TN, p.n_per_wave, "B", p.b_major == "n")
  p.name = o.name or ("gemm_" .. p.dtype .. "_" .. p.a_major .. p.b_major)
  p.epilogue = o.epilogue
  return p
end

-- the bank model's cycles and ideal cycles of one block's copy-in (write) and operand reads of
-- A and B, by ckt.lds.analyze_tensor on the plan's layouts
function gemm.bank_report(p)
  local r = {}
  for _, x in ipairs{{"A", p.a_copy}, {"B", p.b_copy}} do
    local c = x[2]
    local function an(map, vector, op)
      local a = ckt.lds.analyze_tensor{target = p.arch, tensor_layout = c.lds, dtype = p.dtype, thread_map = map, vector = vector, op = op}
      return {cycles = a.cycles, ideal = a.ideal_cycles}
    end
    -- (bulk copies have no per-thread write map)
    r[x[1]] = {write = c.write and an(c.write, p.aligned and p.v or 1, "write") or nil, read = c.read and an(c.read, c.read_vector, "read") or nil}
  end
  return r
end

function gemm.build(o)
  -- autotune = true | {M=, N=, K=, ...}: tile, block and stages by measurement (ckt.kernels.tuning)
  if type(o) == "table" and o.autotune then return require("ckt.kernels.tuning").run("gemm", gemm, o) end
  local p = gemm.plan(o)
  local dt, out, TM, TN, TK, S = p.dtype, p.out, p.TM, p.TN, p.TK, p.stages
  local T = p.traits
  local k = ckt.kernel{name = p.name, block = p.block, build = function(b)
    local A = b:pointer("A", dt, {const = true})
    local B = b:pointer("B", dt, {const = true})
    local C = b:pointer("C", out)
    -- aligned: every size a multiple of 16 bytes of elements (16-byte copies of A and B at any
    -- major, 4-byte stores of C pairs); bulk copies: the tensor maps' strides; refused at launch otherwise
    local mo = p.multiple_of
    local M, N, K = b:size("M", {multiple_of = mo.M}), b:size("N", {multiple_of = mo.N}), b:size("K", {multiple_of = mo.K})
    -- A as (m, k), B as (n, k), whatever their majors
    local ga = ckt.tensor(A, dt, {shape = {M, K}, stride = p.a_major == "k" and {K, 1} or {1, M}}, {pad = true})
    local gb = ckt.tensor(B, dt, {shape = {N, K}, stride = p.b_major == "k" and {K, 1} or {1, N}}, {pad = true})
    local gc = ckt.tensor(C, out, {shape = {M, N}}, {pad = true})
    local sa = ckt.tensor("lds", dt, p.a_copy.lds, {stages = S})
    local sb = ckt.tensor("lds", dt, p.b_copy.lds, {stages = S})
    local tm, tn = b:block_order{tiles = {(M + TM - 1) // TM, (N + TN - 1) // TN}, order = "grouped", group = p.group}
    local nk = (K + TK - 1) // TK
    local function boxes(c, rows) return c.vector_dim == 0 and rows // 64 or TK // math.min(TK, 64) end
    local P = p.hopper and p.mma_pending or 0
    -- the MMAs of LDS stage st, leaving `pending` wgmma groups in flight
    local function mma_stage(st, acc, pending)
      if pending > 0 then b:blockwise_gemm(sa:stage(st), sb:stage(st), acc, T, {pending = pending})
      else b:blockwise_gemm(sa:stage(st), sb:stage(st), acc, T) end
    end
    -- The bulk copies of K slice kt of tile (tm, tn), completing on mbarrier set `full`: one box
    -- per 64-row atom (M/N-major) or per 64-wide K atom (K-major) of each operand tile, each the
    -- hardware layout hopper_lds describes. Each entry: its global window and copy(stage).
    local function tma_boxes(full, tm, tn, kt)
      local list = {}
      for _, x in ipairs{{ga, sa, p.a_copy, tm, TM}, {gb, sb, p.b_copy, tn, TN}} do
        local g, lds, rows = x[1], x[2], x[5]
        local function box(src, len, at)
          list[#list + 1] = {src = src, copy = function(stage)
            b:tma_copy{src = src, dst = ckt.tile_window(lds:stage(stage), len, at), barrier = full, at = stage}
          end}
        end
        if x[3].vector_dim == 0 then
          local n = rows // 64
          for j = 0, n - 1 do box(ckt.local_tile(g, {64, TK}, {x[4] * n + j, kt}), {64, TK}, {64 * j, 0}) end
        else
          local w = math.min(TK, 64)
          for j = 0, TK // w - 1 do box(ckt.local_tile(g, {rows, w}, {x[4], kt * (TK // w) + j}), {rows, w}, {0, w * j}) end
        end
      end
      return list
    end
    local function tma_barriers()
      return b:mbarriers{count = S, arrivals = boxes(p.a_copy, TM) + boxes(p.b_copy, TN)}, b:mbarriers{count = S, arrivals = p.block}
    end
    -- The block's threads' side of the bulk-copy pipeline, one tile's K slices: wait for slice i's
    -- boxes (mbarrier `full`), run its MMAs, release slice i - P once they have retired (`empty`).
    -- base (persistent): the slices before this tile's, so that stages and phases run on across
    -- tiles; the last min(P, nk) slices are then released once the tile's MMAs retire, since the
    -- producer waits for their stages (a lone tile leaves them: nothing comes after it).
    local function tma_consume(acc, full, empty, base)
      local function at(i) return base and base + i or i end
      local function slice(i, pending)
        b:mbarrier_wait{barrier = full, at = at(i) % S, phase = (at(i) // S) % 2}
        mma_stage(at(i) % S, acc, pending)
      end
      -- (+ S: the range analysis then sees a non-negative index; i >= -P only as it reads nk - min(nk, P))
      local function release(i) b:mbarrier_arrive{barrier = empty, at = (at(i) + S) % S} end
      if P > 0 then
        -- slice 0 first, its MMAs retired (see the cp.async path below), released in the loop
        b:when(ckt.gt(nk, 0), function() slice(0, 0) end)
        b:loop(nk - 1, function(j)
          slice(j + 1, P)
          if P == 1 then release(j) else b:when(ckt.ge(j + 1, P), function() release(j + 1 - P) end) end
        end)
        b:wgmma_wait(acc, 0)
        if base then
          local last = ckt.min(nk, P)
          b:loop(last, function(i) release(nk - last + i) end)
        end
      else
        b:loop(nk, function(i) slice(i, 0); release(i) end)
      end
    end
    local function mainloop_tma()
      -- Warp specialization: a producer warp issues the bulk tensor copies of slice kt into stage
      -- kt % S as soon as the block's threads have released that stage (mbarrier `empty`); they
      -- wait for the slice's boxes (mbarrier `full`: each box arrives once with its bytes), run its
      -- MMAs, and release the stage of slice i - P once its MMAs have retired. The copies run up to
      -- S - P slices ahead, never behind a barrier of the whole block.
      local full, empty = tma_barriers()
      b:producer(function()
        b:loop(nk, function(kt)
          -- the first round finds every stage free (the phase before phase 0 counts as done)
          b:mbarrier_wait{barrier = empty, at = kt % S, phase = (kt // S + 1) % 2}
          for _, x in ipairs(tma_boxes(full, tm, tn, kt)) do x.copy(kt % S) end
        end)
      end)
      local acc = b:make_blockwise_gemm_xdl_c_vgpr(sa, sb, T)
      b:clear(acc, 0)
      tma_consume(acc, full, empty)
      return acc
    end
    -- cp.async: the 16-byte copies of K slice kt of tile (tm, tn), an entry per copy: its global
    -- window, copy(stage) into LDS stage `stage`; given a stage, each copy is also issued at once
    -- (as its window is made)
    local function async_copies(tm, tn, kt, now)
      local list = {}
      for _, x in ipairs{{ga, sa, p.a_copy, tm, TM}, {gb, sb, p.b_copy, tn, TN}} do
        local c = x[3]
        local function add(src, len, at, threads, vector_dim)
          local e = {src = src, copy = function(stage)
            b:blockwise_copy{src = src, dst = ckt.tile_window(x[2]:stage(stage), len, at), thread_layout = threads,
                             vector_dim = vector_dim, scalar_per_vector = c.scalar_per_vector, async = true}
          end}
          if now then e.copy(now) end
          list[#list + 1] = e
        end
        if p.hopper and c.vector_dim == 0 then
          -- sm_90a, an M/N-contiguous tile: one copy per 64-row atom of the 128B swizzle, so that
          -- a thread's 8 rows provably stay inside one atom (16-byte copies)
          local n = x[5] // 64
          for j = 0, n - 1 do add(ckt.local_tile(x[1], {64, TK}, {x[4] * n + j, kt}), {64, TK}, {64 * j, 0}, c.atom_thread_layout, 0) end
        else
          add(ckt.local_tile(x[1], {x[5], TK}, {x[4], kt}), {x[5], TK}, {0, 0}, c.thread_layout, c.vector_dim)
        end
      end
      return list
    end
    local function copy_slice(tm, tn, kt, stage) async_copies(tm, tn, kt, stage) end
    -- Hopper, a 16-bit C whose warpgroups own 64 whole rows each: the tile leaves through LDS. A
    -- thread's fragments are pairs of 4 bytes per row, so a warp's store instruction writes eight
    -- 16-byte pieces of eight rows (8 sectors, about 9000 cycles a 128 x 256 tile on an H100,
    -- traced: 5% of the 8192^3 GEMM); through LDS one warpgroup's 64 rows at a time (a 64 x TN
    -- buffer, rows padded by 8 elements: the pairs' writes hit 32 distinct banks), read back as
    -- 16-byte vectors whole rows at a time. Both warpgroups' rows map onto the one buffer
    -- (stride 0), so it fits beside the stages.
    local stage_c
    if p.hopper and p.copy == "tma" and not p.persistent and out ~= "f32" and p.aligned and p.waves_n == 1 and p.m_per_wave == 1 and p.block % (TN // p.v) == 0 and 64 % (p.block // (TN // p.v)) == 0 then
      stage_c = ckt.tensor("lds", out, ckt.layout({{64, p.waves_m}, TN}, {{TN + 8, 0}, 1}))
    end
    local function epilogue(acc, tm, tn)
      local res = p.epilogue and b:map(p.epilogue, acc) or acc
      if not stage_c then
        ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.local_tile(gc, {TM, TN}, {tm, tn}), T):store(res)
        return
      end
      local part = ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(stage_c, {TM, TN}, {0, 0}), T)
      -- read back one pass of rows at a time (a loop: a vector a thread in flight, no registers
      -- beside the accumulators that the other warpgroup still holds)
      local tid, per_row = b:thread_id(), TN // p.v
      local rows = p.block // per_row
      local threads = ckt.layout({rows, per_row}, {per_row, 1})
      for w = 0, p.waves_m - 1 do
        b:when(ckt.land(ckt.ge(tid, 128 * w), ckt.lt(tid, 128 * (w + 1))), function() part:store(res) end)
        b:sync()
        b:loop(64 // rows, function(i)
          b:blockwise_copy{src = ckt.tile_window(stage_c, {rows, TN}, {64 * w + rows * i, 0}), dst = ckt.tile_window(gc, {rows, TN}, {tm * TM + 64 * w + rows * i, tn * TN}),
                           thread_layout = threads, vector_dim = 1, scalar_per_vector = p.v}
        end)
        b:sync() -- the buffer is free again
      end
    end
    -- cp.async: every thread copies 16-byte pieces, D slices ahead
    local function mainloop_async()
      local function issue(kt, stage) copy_slice(tm, tn, kt, stage); b:commit() end
      local acc = b:make_blockwise_gemm_xdl_c_vgpr(sa, sb, T)
      b:clear(acc, 0)
      -- copies run D slices ahead; sm_90a: D = S - 1 - P with P wgmma groups left in flight (the
      -- stages of slices i - P .. i are still read when slice i + D's copy is issued)
      local D = S - 1 - P
      for s = 0, D - 1 do issue(s, s) end -- slices past K are zero-filled and never read
      local function slice(i, pending)
        b:wait{pending = D - 1} -- slice i has landed, and every thread is done with slice i - 1
        issue(i + D, (i + D) % S) -- into the stage of slice i - 1 - P, whose MMAs have retired
        mma_stage(i % S, acc, pending)
      end
      if P > 0 then
        -- slice 0 first, its MMAs retired before the pipelined loop: no instruction but wgmma may
        -- define the accumulators (b:clear's) while MMAs are in flight, or ptxas serializes them
        -- (with K = 0 the slice is all zero-filled copies)
        slice(0, 0)
        b:loop(nk - 1, function(j) slice(j + 1, P) end)
        b:wgmma_wait(acc, 0) -- the accumulators settled
      else
        b:loop(nk, function(i) slice(i, 0) end)
      end
      b:wait{pending = 0, sync = false} -- no copy (the zero-filled ones past K) outlives the block
      return acc
    end
    -- Persistent (cp.async): a grid of `p.persistent` blocks walks the tiles in grouped order,
    -- tile bid, bid + G, ... of this block; one stream of K slices runs through all of them, the
    -- copies D slices ahead across tile boundaries, so the next tile's first slices land while
    -- this one's epilogue runs. A tile takes at least D slices (those past K zero-filled) so that
    -- the look-ahead never reaches beyond the next tile.
    local function persistent_async()
      local G, bid = b:num_blocks(0), b:block_id(0)
      local mt, nt = (M + TM - 1) // TM, (N + TN - 1) // TN
      local mine = (mt * nt - bid + G - 1) // G
      local D = S - 1 - P
      local nke = ckt.max(nk, D)
      local function coords(t) return b:block_order{tiles = {mt, nt}, order = "grouped", group = p.group, id = t} end
      local acc = b:make_blockwise_gemm_xdl_c_vgpr(sa, sb, T)
      local tm0, tn0 = coords(bid)
      b:when(ckt.gt(mine, 0), function()
        for st = 0, D - 1 do copy_slice(tm0, tn0, st, st); b:commit() end
      end)
      b:loop(mine, function(it)
        local tm1, tn1 = coords(bid + it * G)
        local base = it * nke
        -- the windows of this tile's slice D and of the next tile's slice 0, made once a tile (the
        -- grouped order's divisions) and moved along K copy by copy
        local this_tile = async_copies(tm1, tn1, D)
        local tm2, tn2 = coords(bid + (it + 1) * G)
        local next_tile = async_copies(tm2, tn2, 0)
        local function refill(list, stage)
          for _, x in ipairs(list) do x.copy(stage) end
          for _, x in ipairs(list) do x.src:move{0, TK} end
        end
        b:clear(acc, 0)
        local function slice(k, pending)
          b:wait{pending = D - 1} -- slice k has landed, every thread is done with slice k - 1
          -- refill the stage of slice k - 1 - P: this tile's slice k + D, or the next tile's
          local g = k + D
          b:when(ckt.lt(g, nke), function() refill(this_tile, (base + g) % S) end)
          b:when(ckt.land(ckt.ge(g, nke), ckt.lt(it + 1, mine)), function() refill(next_tile, (base + g) % S) end)
          b:commit() -- one group a slice, empty or not
          mma_stage((base + k) % S, acc, pending)
        end
        if P > 0 then
          slice(0, 0)
          b:loop(nke - 1, function(j) slice(j + 1, P) end)
          b:wgmma_wait(acc, 0)
        else
          b:loop(nke, function(k0) slice(k0, 0) end)
        end
        epilogue(acc, tm1, tn1)
      end)
      b:wait{pending = 0, sync = false}
    end
    -- Persistent and warp-specialized (bulk copies): a grid of `p.persistent` blocks walks the
    -- tiles in grouped order, tile bid, bid + G, ... of this block. The producer warp streams
    -- every K slice of those tiles through the S stages (one slice count g across tiles, so both
    -- sides agree on stages and phases), its windows made once a tile and moved along K; the
    -- next tile's first slices land while the block's threads run this tile's epilogue.
    local function persistent_tma()
      local G, bid = b:num_blocks(0), b:block_id(0)
      local mt, nt = (M + TM - 1) // TM, (N + TN - 1) // TN
      local mine = (mt * nt - bid + G - 1) // G
      local function coords(t) return b:block_order{tiles = {mt, nt}, order = "grouped", group = p.group, id = t} end
      local full, empty = tma_barriers()
      b:producer(function()
        b:loop(mine, function(it)
          local tm1, tn1 = coords(bid + it * G)
          local list = tma_boxes(full, tm1, tn1, 0) -- the grouped order's divisions: once a tile
          b:loop(nk, function(kt)
            local g = it * nk + kt
            b:mbarrier_wait{barrier = empty, at = g % S, phase = (g // S + 1) % 2}
            for _, x in ipairs(list) do x.copy(g % S) end
            for _, x in ipairs(list) do x.src:move{0, TK} end
          end)
        end)
      end)
      local acc = b:make_blockwise_gemm_xdl_c_vgpr(sa, sb, T)
      b:loop(mine, function(it)
        b:clear(acc, 0)
        tma_consume(acc, full, empty, it * nk)
        epilogue(acc, coords(bid + it * G))
      end)
    end
    if p.persistent then
      if p.copy == "tma" then persistent_tma() else persistent_async() end
      return
    end
    -- computed once: the grouped order costs several 64-bit divisions, which the producer warp's
    -- one thread would otherwise pay before every slice's copies (1450 cycles a slice on an H100,
    -- the TMA path's whole deficit: it was 30% slower than cp.async)
    tm, tn = b:let(tm, "tm"), b:let(tn, "tn")
    epilogue(p.copy == "tma" and mainloop_tma() or mainloop_async(), tm, tn)
  end}
  -- grid(M, N [, exe]): the tiles, or with persistent the smaller of the tiles and the blocks.
  -- persistent = true is 132 blocks (one an SM of an H100 / H200); given the compiled kernel, as
  -- many blocks as 132 SMs hold at once by its registers, LDS and threads (the block count the
  -- caller gave stays as it is)
  local function resident(exe)
    local regs = exe:resources().registers
    if type(regs) ~= "number" or regs < 1 then return 1 end
    local threads = p.block + (p.copy == "tma" and 32 or 0)
    local warps = (threads + 31) // 32
    local per_warp = (regs * 32 + 255) // 256 * 256 -- registers are given to warps 256 at a time
    local by_regs = 65536 // (per_warp * warps)
    local by_lds = ckt.target(p.target).lds_bytes // (k:lds_bytes() + 1024) -- 1 KiB a block the hardware keeps
    return math.max(1, math.min(by_regs, by_lds, 2048 // threads, 32))
  end
  local function grid(M, N, exe)
    local tiles = ((M + TM - 1) // TM) * ((N + TN - 1) // TN)
    if not p.persistent then return tiles end
    local blocks = p.persistent
    if p.persistent_auto and exe and not p.emulated then blocks = 132 * resident(exe) end
    return math.min(tiles, blocks)
  end
  return k, grid, p
end

-- C = A . B in double precision (then rounded to opts.out, default the dtype of A), with A and B
-- ckt.arrays stored as opts.a_major / opts.b_major say; opts.epilogue applies to the double.
function gemm.reference(A, B, M, N, K, opts)
  opts = opts or {}
  local am, bm = opts.a_major or "k", opts.b_major or "k"
  if #A < M * K or #B < K * N then fail(("reference: A holds %d and B %d elements, fewer than M*K = %d and K*N = %d"):format(#A, #B, M * K, K * N)) end
  local a, bb = A:totable(), B:totable()
  local c = ckt.array(opts.out or A:dtype(), {M, N})
  local f = opts.epilogue
  local acc = {}
  for m = 0, M - 1 do
    for n = 0, N - 1 do acc[n] = 0.0 end
    for kk = 0, K - 1 do
      local x = am == "k" and a[m * K + kk + 1] or a[kk * M + m + 1]
      if x ~= 0 then
        if bm == "n" then
          local base = kk * N + 1
          for n = 0, N - 1 do acc[n] = acc[n] + x * bb[base + n] end
        else
          for n = 0, N - 1 do acc[n] = acc[n] + x * bb[n * K + kk + 1] end
        end
      end
    end
    for n = 0, N - 1 do c[m * N + n] = f and f(acc[n]) or acc[n] end
  end
  return c
end

return gemm
