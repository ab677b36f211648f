-- A probe of the fp8 GEMM on a GPU against the CPU target's emulation and the reference, per
-- copy path, unit scales: which elements differ and how (prints the first differences).
local gemm = require "ckt.kernels.gemm"
local t = arg[1] or "sm_90a"
local dev = ckt.device(ckt.target(t).runtime)
local M, N, K = tonumber(arg[2] or 128), tonumber(arg[3] or 256), tonumber(arg[4] or 128)
local A = ckt.array("e4m3", M * K):random{seed = 1, lo = -2, hi = 2}
local B = ckt.array("e4m3", N * K):random{seed = 2, lo = -2, hi = 2}
local sa_v, sb_v, out = tonumber(arg[5] or 1), tonumber(arg[6] or 1), arg[7] or "f32"
local R = gemm.reference(A, B, M, N, K, {a_major = "k", b_major = "k", out = "f32", scale_A = sa_v, scale_B = sb_v})
for _, cfg in ipairs{{copy = "tma"}, {copy = "cp.async"}} do
  local ok, k, grid, p = pcall(gemm.build, {dtype = "e4m3", out = out, target = t, copy = cfg.copy})
  if not ok then print(cfg.copy, "build failed", k) else
    local exe = k:compile{target = t}
    local bc = dev:alloc(out, M * N):upload(ckt.array(out, M * N):poison())
    local sa = dev:alloc("f32", 1):upload(ckt.array("f32", 1):fill(sa_v))
    local sb = dev:alloc("f32", 1):upload(ckt.array("f32", 1):fill(sb_v))
    exe:launch{grid = grid(M, N, exe), A = dev:alloc("e4m3", M * K):upload(A), B = dev:alloc("e4m3", N * K):upload(B), C = bc, M = M, N = N, K = K, scale_A = sa, scale_B = sb}
    local C = bc:download()
    local okc, err, bad = C:compare(R, {rtol = 1e-5, atol = 1e-3})
    local okl = C:compare(R, {rtol = 2 ^ -7, atol = 1e-2})
    print(("%s (%dx%dx%d/%d/%d): match %s, max err %g, first bad %s; within rtol 2^-7: %s"):format(cfg.copy, p.TM, p.TN, p.TK, p.block, p.stages, tostring(okc), err, tostring(bad), tostring(okl)))
    local shown = 0
    for i = 0, M * N - 1 do
      if math.abs(C[i] - R[i]) > 1e-3 and shown < 6 then
        shown = shown + 1
        print(("  C[%d,%d] = %g, want %g"):format(i // N, i % N, C[i], R[i]))
      end
    end
    local nbad = 0
    for i = 0, M * N - 1 do if math.abs(C[i] - R[i]) > 1e-3 then nbad = nbad + 1 end end
    print(("  %d of %d elements differ"):format(nbad, M * N))
  end
end
