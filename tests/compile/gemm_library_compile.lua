-- Compile-only test of the library GEMM (kernels/gemm) for sm_90 and sm_90a through NVRTC: the
-- CUDA-only paths the CPU target emulates but does not compile -- sm_90's mma.sync with ldmatrix
-- fragment loads; sm_90a's wgmma (inline PTX) fed by bulk tensor copies and mbarriers, its
-- cp.async variant and the persistent kernel -- must be accepted by NVRTC and ptxas, for every
-- dtype and both majors. Each case checks that the generated source has the instruction the path
-- promises (so a case cannot pass by taking another path), that the compile succeeds with no
-- spills, and, where cuobjdump is present, that the SASS has it.
-- A compile error FAILS the test. Only a missing NVRTC library ("NVRTC not found (", the engine's
-- message in engine/src/jit_cuda.c) skips it: "SKIPPED: ..." and exit 77, which ctest reports as
-- skipped ("Not Run"), not passed.
--   ckt-lua tests/compile/gemm_library_compile.lua sm_90|sm_90a
local gemm = require "ckt.kernels.gemm"
local target = arg[1] or "sm_90"

local failures, passed = 0, 0
local function check(cond, what)
  print(("%s %s"):format(cond and "ok  " or "FAIL", what))
  if cond then passed = passed + 1 else failures = failures + 1 end
end

local function has(src, text) return src:find(text, 1, true) ~= nil end
-- the kernel itself, without the prelude (which defines every helper, used or not)
local function body(src) return src:sub(src:find('extern "C" __global__', 1, true) or 1) end
local TMA = {"wgmma.mma_async", "ckt_tma_load_2d(", "ckt_mbar_expect_tx(", "ckt_mbar_wait("}
local CPASYNC = {"wgmma.mma_async", "CKT_CP_COMMIT()", "fence.proxy.async"}

-- the cases: options for gemm.build, and the texts the source must contain
local cases = {}
for _, dt in ipairs{"f16", "bf16"} do
  for _, majors in ipairs{{"k", "k"}, {"m", "n"}} do
    local name = ("%s %s%s"):format(dt, majors[1], majors[2])
    if target == "sm_90" then
      cases[#cases + 1] = {name = name .. " mma.sync", opts = {dtype = dt, a_major = majors[1], b_major = majors[2]},
                           want = {"mma.sync.aligned.m16n8k16", "ldmatrix.sync.aligned"}, sass = {"HMMA", "LDSM"}}
    else
      cases[#cases + 1] = {name = name .. " wgmma + bulk tensor copies", opts = {dtype = dt, a_major = majors[1], b_major = majors[2]},
                           want = TMA, sass = {"HGMMA", "UTMALDG", "SYNCS"}}
    end
  end
end
if target == "sm_90a" then
  cases[#cases + 1] = {name = "f16 kk wgmma + cp.async", opts = {dtype = "f16", copy = "cp.async"},
                       want = CPASYNC, not_want = {"ckt_tma_load_2d("}, sass = {"HGMMA", "LDGSTS"}}
  cases[#cases + 1] = {name = "f16 kk persistent, bulk tensor copies", opts = {dtype = "f16", persistent = true},
                       want = TMA, sass = {"HGMMA", "UTMALDG"}}
  cases[#cases + 1] = {name = "bf16 kk persistent, cp.async", opts = {dtype = "bf16", persistent = true, copy = "cp.async"},
                       want = CPASYNC, not_want = {"ckt_tma_load_2d("}, sass = {"HGMMA"}}
end

for i, c in ipairs(cases) do
  c.opts.target = target
  local k = gemm.build(c.opts)
  local src = body(k:source(target))
  for _, w in ipairs(c.want) do check(has(src, w), ("%s GEMM %s: the kernel uses %s"):format(target, c.name, w)) end
  for _, w in ipairs(c.not_want or {}) do check(not has(src, w), ("%s GEMM %s: the kernel does not use %s"):format(target, c.name, w)) end
  local ok, exe = pcall(k.compile, k, {target = target, compile_only = true, cache = false})
  if not ok then
    if i == 1 and tostring(exe):find("NVRTC not found (", 1, true) then
      print(("SKIPPED: %s library GEMM compile tests (the NVRTC library is not installed): %s"):format(target, exe))
      os.exit(77)
    end
    check(false, ("%s GEMM %s: compiles: %s"):format(target, c.name, tostring(exe)))
  else
    local r = exe:resources()
    local spills = (r.spill_stores or 0) + (r.spill_loads or 0) + (r.scratch_bytes or 0)
    check(spills == 0, ("%s GEMM %s: NVRTC and ptxas accept it (%.0f ms, %s registers, no spills, no stack)"):format(
          target, c.name, exe:compile_ms(), tostring(r.registers)))
    local d, why = exe:disassembly()
    if d then
      for _, s in ipairs(c.sass) do check(has(d, s), ("%s GEMM %s: the SASS has %s"):format(target, c.name, s)) end
    elseif i == 1 then
      print(("note: %s SASS checks not run (%s); the compile checks above ran"):format(target, why or "no disassembler"))
    end
  end
end

if failures > 0 then error(("%d of %d check(s) failed"):format(failures, failures + passed), 0) end
print(("all %d library GEMM compile checks passed for %s"):format(passed, target))
