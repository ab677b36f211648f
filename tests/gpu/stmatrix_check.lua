-- stmatrix on the GPU: mma.sync accumulators stored to an LDS tile as 8x8 matrices (sm_90), then
-- copied to global memory, against the CPU target's emulation (cpu:sm_90: the same kernel with
-- element stores) and the double reference, f16 and bf16, for LDS tiles that take stmatrix
-- (row-major, rows 144 bytes apart, 128B-swizzled) and a store under a branch that keeps whole
-- warps; sizes off the tile, random data, outputs poisoned. Exit code 1 on any mismatch, 77
-- without a CUDA device.
--   ckt-lua tests/gpu/stmatrix_check.lua
local stm = dofile("tests/lua/stmatrix_kernel.lua")
local gemm = require "ckt.kernels.gemm"
local okd, gpu = pcall(ckt.device, "cuda")
if not okd then print("SKIPPED: tests/gpu/stmatrix_check.lua: no CUDA device: " .. tostring(gpu)); os.exit(77) end
local cpu = ckt.device("cpu")
local M, N, K = 136, 200, 72
local bad = 0
print("| variant | dtype | stmatrix stores | GPU vs double (max error) | GPU vs cpu:sm_90 (max error) |")
print("|---|---|---|---|---|")
for _, v in ipairs(stm.variants) do for _, dt in ipairs{"f16", "bf16"} do
  local ok, err = pcall(function()
    local k = stm.build(dt, v.o)
    local n = stm.count(k:source("sm_90"))
    local A = ckt.array(dt, M * K):random{seed = 5, lo = -1, hi = 1}
    local B = ckt.array(dt, N * K):random{seed = 6, lo = -1, hi = 1}
    local R = gemm.reference(A, B, M, N, K, {a_major = "k", b_major = "k", out = "f32"})
    local res = {}
    for _, d in ipairs{{gpu, "sm_90"}, {cpu, "cpu:sm_90"}} do
      local exe = k:compile{target = d[2]}
      local C = ckt.array(dt, M * N):poison()
      local ba, bb, bc = d[1]:alloc(dt, #A), d[1]:alloc(dt, #B), d[1]:alloc(dt, #C)
      ba:upload(A); bb:upload(B); bc:upload(C)
      exe:launch{grid = stm.grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K}
      bc:download(C)
      res[#res + 1] = C
      ba:close(); bb:close(); bc:close()
    end
    local rtol = dt == "f16" and 2 ^ -10 or 2 ^ -7
    local ok_ref, e_ref = res[1]:compare(R, {rtol = rtol, atol = K * 2 ^ -20})
    local ok_cpu, e_cpu = res[1]:compare(res[2], {rtol = 2 * rtol, atol = 2 * K * 2 ^ -20})
    if not (ok_ref and ok_cpu) or n ~= v.stores then bad = bad + 1 end
    print(("| %s | %s | %d (expected %d) | %s (%s) | %s (%s) |"):format(v.name, dt, n, v.stores, ok_ref and "yes" or "NO", tostring(e_ref), ok_cpu and "yes" or "NO", tostring(e_cpu)))
  end)
  if not ok then bad = bad + 1; print(("| %s | %s | FAILED: %s | | |"):format(v.name, dt, tostring(err):gsub("\n.*", ""))) end
end end
if bad > 0 then print(("%d check(s) FAILED"):format(bad)); os.exit(1) end
print("all checks passed")
