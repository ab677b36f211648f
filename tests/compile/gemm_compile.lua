-- Compile test of the blockwise GEMM for one GPU target (argument: gfx90a or sm_90), compile
-- only: for every matrix instruction the target has, the GEMM compiles with no spills and no
-- scratch, its resources are reported, and the code contains the instruction (gfx90a: v_mfma in
-- the ISA, 128-bit global loads and 64/128-bit LDS fragment reads; sm_90: mma.sync and ldmatrix
-- in the source ptxas accepted, HMMA and LDSM in the SASS where a disassembler is present).
-- gfx90a also checks the table against the compiler: gfx908 compiles the f16 MFMAs, and ckt
-- refuses the bf16_1k ones for gfx908 before the compiler sees them (hipRTC of ROCm 5.2 aborts
-- the whole process with "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.mfma.f32.32x32x8bf16.1k"
-- when asked, which is how the table's gfx908 entry was checked). Exits 77 ("SKIPPED: ...") without the compiler.
local target = arg[1] or "gfx90a"

local function compile(k, t) return k:compile{target = t or target, compile_only = true, cache = false} end
local probe = ckt.kernel{name = "probe", block = 64, build = function(b) end}
local ok, e = pcall(compile, probe)
if not ok then
  if tostring(e):find("not found") or tostring(e):find("cannot load") or tostring(e):find("no NVRTC") then
    print(("SKIPPED: %s GEMM compile tests: %s"):format(target, e))
    os.exit(77)
  end
  error(e)
end

local failures = 0
local function check(cond, what)
  print(("%s %s"):format(cond and "ok  " or "FAIL", what))
  if not cond then failures = failures + 1 end
end

-- the tutorial's structure: K-major A (M x K) and B (N x K), 16-byte copies (K a multiple of 8)
local function build(instr, cfg)
  local dt = ckt.mma(instr).a
  local MB, NB, KB, T = cfg.tile[1], cfg.tile[2], cfg.tile[3], cfg.threads
  local traits = ckt.gemm_traits{instr = instr, m_per_wave = cfg.mx, n_per_wave = cfg.nx, k_pack = cfg.k_pack}
  return ckt.kernel{name = "gemm", block = T, build = function(b)
    local A, B, C = b:pointer("A", dt, {const = true}), b:pointer("B", dt, {const = true}), b:pointer("C", dt)
    local M, N, K = b:size("M"), b:size("N"), b:size("K", {multiple_of = 8})
    local ga = ckt.tensor(A, dt, {shape = {M, K}}, {pad = true})
    local gb = ckt.tensor(B, dt, {shape = {N, K}}, {pad = true})
    local gc = ckt.tensor(C, dt, {shape = {M, N}}, {pad = true})
    local la = ckt.tensor("lds", dt, ckt.layout({MB, KB}, {KB, 1}))
    local lb = ckt.tensor("lds", dt, ckt.layout({NB, KB}, {KB, 1}))
    local tm, tn = b:block_order{tiles = {(M + MB - 1) // MB, (N + NB - 1) // NB}}
    local acc = b:make_blockwise_gemm_xdl_c_vgpr(la, lb, traits)
    b:clear(acc)
    local thr = ckt.layout({T // (KB // 8), KB // 8}, {KB // 8, 1})
    b:loop((K + KB - 1) // KB, function(i)
      b:blockwise_copy{src = ckt.local_tile(ga, {MB, KB}, {tm, i}), dst = ckt.tile_window(la, {MB, KB}, {0, 0}), thread_layout = thr, vector_dim = 1, scalar_per_vector = 8}
      b:blockwise_copy{src = ckt.local_tile(gb, {NB, KB}, {tn, i}), dst = ckt.tile_window(lb, {NB, KB}, {0, 0}), thread_layout = thr, vector_dim = 1, scalar_per_vector = 8}
      b:sync()
      b:blockwise_gemm(la, lb, acc, traits)
      b:sync()
    end)
    ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.local_tile(gc, {MB, NB}, {tm, tn}), traits):store(acc)
  end}
end

local cfgs = {
  mfma_f32_32x32x8f16 = {tile = {128, 128, 32}, threads = 256, mx = 2, nx = 2, k_pack = 8},
  mfma_f32_32x32x8bf16_1k = {tile = {128, 128, 32}, threads = 256, mx = 2, nx = 2, k_pack = 8},
  mfma_f32_16x16x16f16 = {tile = {128, 128, 32}, threads = 256, mx = 4, nx = 4, k_pack = 8},
  mfma_f32_16x16x16bf16_1k = {tile = {128, 128, 32}, threads = 256, mx = 4, nx = 4, k_pack = 4},
  mma_m16n8k16_f16 = {tile = {128, 128, 32}, threads = 128, mx = 4, nx = 8, k_pack = 2},
  mma_m16n8k16_bf16 = {tile = {128, 128, 32}, threads = 128, mx = 4, nx = 8, k_pack = 4},
}

for _, instr in ipairs(ckt.mma_list(target)) do
  local k = build(instr, cfgs[instr])
  local exe = compile(k)
  local r = exe:resources()
  local spills = (r.vgpr_spills or 0) + (r.sgpr_spills or 0) + (r.spill_stores or 0) + (r.spill_loads or 0) + (r.scratch_bytes or 0)
  local regs = r.vgprs and ("vgprs=%d agprs=%s sgprs=%d"):format(r.vgprs, tostring(r.agprs), r.sgprs) or ("registers=" .. tostring(r.registers))
  check(spills == 0, ("%s GEMM %s: compiled in %.0f ms, %s, LDS %d bytes, no spills, no scratch"):format(target, instr, exe:compile_ms(), regs, r.lds_bytes))
  check(r.lds_bytes == k:lds_bytes(), ("%s GEMM %s: LDS %d bytes as built"):format(target, instr, r.lds_bytes))
  local src = k:source(target)
  local d, why = exe:disassembly()
  if target:sub(1, 3) == "gfx" then
    check(src:find("__builtin_amdgcn_" .. instr .. "(", 1, true) ~= nil, ("%s GEMM %s: the source calls the builtin"):format(target, instr))
    if not d then
      print(("SKIPPED: %s disassembly checks: %s"):format(target, why or "no disassembler"))
    else
      check(d:find("v_" .. instr, 1, true) ~= nil, ("%s GEMM %s: the ISA has v_%s"):format(target, instr, instr))
      check(d:find("global_load_dwordx4", 1, true) ~= nil, ("%s GEMM %s: 128-bit global loads"):format(target, instr))
      check(d:find("ds_read_b128", 1, true) ~= nil or d:find("ds_read_b64", 1, true) ~= nil or d:find("ds_read2_b64", 1, true) ~= nil, ("%s GEMM %s: 64/128-bit LDS fragment reads"):format(target, instr))
    end
  else
    check(src:find("mma.sync.aligned.m16n8k16", 1, true) ~= nil, ("%s GEMM %s: mma.sync in the source ptxas compiled"):format(target, instr))
    local ldm = cfgs[instr].k_pack == 2
    check((src:find("ldmatrix.sync.aligned.m8n8.x4", 1, true) ~= nil) == ldm, ("%s GEMM %s: ldmatrix %s"):format(target, instr, ldm and "loads the fragments" or "not used (k_pack 4: no 16-byte K rows per matrix)"))
    if not d then
      print(("SKIPPED: %s SASS checks: %s"):format(target, why or "no disassembler"))
    else
      check(d:find("HMMA", 1, true) ~= nil, ("%s GEMM %s: the SASS has HMMA"):format(target, instr))
      if ldm then check(d:find("LDSM", 1, true) ~= nil, ("%s GEMM %s: the SASS has LDSM"):format(target, instr)) end
    end
  end
end

if target == "gfx90a" then
  -- the instruction table against the compiler: gfx908 has the f16 MFMAs, not the bf16_1k ones
  local f16 = build("mfma_f32_16x16x16f16", cfgs.mfma_f32_16x16x16f16)
  local okc, err = pcall(compile, f16, "gfx908")
  check(okc, "gfx908 compiles v_mfma_f32_16x16x16f16" .. (okc and "" or (": " .. tostring(err))))
  local bf = build("mfma_f32_32x32x8bf16_1k", cfgs.mfma_f32_32x32x8bf16_1k)
  local oks, serr = pcall(bf.source, bf, "gfx908")
  check(not oks and tostring(serr):find("gfx908", 1, true) ~= nil, "ckt refuses v_mfma_f32_32x32x8bf16_1k for gfx908 at source time")
end

if failures > 0 then error(failures .. " check(s) failed") end
print("all GEMM compile checks passed for " .. target)
