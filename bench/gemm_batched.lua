-- The strided batched GEMM (gemm.build{batched = true}) on a GPU: checked against the double
-- reference at an awkward size (batch 7, padded strides), then L x M x N x K = 64 x 1024³ (and the
-- other shapes given) by events and as a loop of 100 on a stream, against cuBLAS: the same batch as
-- L GEMMs enqueued back to back on one stream (the module has no strided-batched call yet).
--
-- ckt-lua bench/gemm_batched.lua [target=sm_90a] [json=bench/results/gemm_batched.json] [shapes=64x1024,8x4096]
local target = arg[1] or "sm_90a"
local json_path = arg[2] or "bench/results/gemm_batched.json"
local shape_arg = arg[3] or "64x1024,16x2048,8x4096"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local gemm = require "ckt.kernels.gemm"
local okd, dev = pcall(ckt.device, ckt.target(target).runtime)
if not okd then print("SKIPPED: bench/gemm_batched.lua: no device for " .. target .. ": " .. tostring(dev)); os.exit(77) end
local cublas = bench.open_cublas(dev)
local s <close> = dev:stream()
local k, grid = gemm.build{dtype = "f16", target = target, batched = true, a_major = "k", b_major = "k"}
local exe = k:compile{target = target}
local failures = 0
-- correctness: L = 7, M = 72, N = 40, K = 48, padded strides
do
  local L, M, N, K = 7, 72, 40, 48
  local sa, sb, sc = M * K + 8 * K, N * K + 16 * K, M * N + 4 * N
  local A = ckt.array("f16", (L - 1) * sa + M * K):random{seed = 1, lo = -2, hi = 2}
  local B = ckt.array("f16", (L - 1) * sb + N * K):random{seed = 2, lo = -2, hi = 2}
  local R = gemm.reference(A, B, M, N, K, {a_major = "k", b_major = "k", out = "f32", batched = true, L = L, batch_stride_A = sa, batch_stride_B = sb, batch_stride_C = sc})
  local bc = dev:alloc("f16", (L - 1) * sc + M * N):upload(ckt.array("f16", (L - 1) * sc + M * N):fill(0))
  exe:launch{grid = grid(M, N, L, exe), A = dev:alloc("f16", #A):upload(A), B = dev:alloc("f16", #B):upload(B), C = bc,
             M = M, N = N, K = K, L = L, batch_stride_A = sa, batch_stride_B = sb, batch_stride_C = sc}
  local ok, err = bc:download():compare(R, {rtol = 2 ^ -9, atol = K * 2 ^ -12})
  print(("check L=7 72x40x48 padded strides: %s (max err %g)"):format(ok and "ok" or "WRONG", err))
  if not ok then failures = failures + 1 end
end
local rows = {}
print("\n| L x M=N=K | ckt event µs | ckt wall µs (100 on a stream) | cuBLAS loop of L GEMMs wall µs | ckt / cuBLAS wall | TFLOP/s (ckt wall) |\n|---|---|---|---|---|---|")
for spec in shape_arg:gmatch("[^,]+") do
  local L, S = spec:match("(%d+)x(%d+)")
  L, S = tonumber(L), tonumber(S)
  local A, B = bench.random_buffer(dev, "f16", L * S * S, 3), bench.random_buffer(dev, "f16", L * S * S, 4)
  local C = dev:alloc("f16", L * S * S)
  local args = {grid = grid(S, S, L, exe), A = A, B = B, C = C, M = S, N = S, K = S, L = L, batch_stride_A = S * S, batch_stride_B = S * S, batch_stride_C = S * S}
  local r = {L = L, size = S, event_ms = bench.time_launch(exe, args), wall_ms = bench.wall_launch(exe, args, s, 100)}
  if cublas then
    local base = {dtype = "f16", out = "f16", a_major = "k", b_major = "k", M = S, N = S, K = S, stream = s:handle()}
    local ps = {}
    for l = 0, L - 1 do
      local p = setmetatable({A = A:address() + 2 * l * S * S, B = B:address() + 2 * l * S * S, C = C:address() + 2 * l * S * S}, {__index = base})
      ps[#ps + 1] = p
    end
    local function batch() for i = 1, #ps do cublas:gemm_async(ps[i]) end end
    r.cublas_wall_ms = bench.wall_ms(batch, s, 100)
    r.ratio = r.cublas_wall_ms / r.wall_ms
  end
  r.tflops = 2 * L * S * S * S / (r.wall_ms * 1e-3) / 1e12
  rows[#rows + 1] = r
  print(("| %d x %d | %.1f | %.1f | %s | %s | %.1f |"):format(L, S, r.event_ms * 1e3, r.wall_ms * 1e3, r.cublas_wall_ms and ("%.1f"):format(r.cublas_wall_ms * 1e3) or "-",
        r.ratio and ("%.1f%%"):format(100 * r.ratio) or "-", r.tflops))
  A:close(); B:close(); C:close()
end
bench.write_json(json_path, {date = os.date("!%Y-%m-%d %H:%M UTC"), device = dev:name(), target = target, rows = rows})
if failures > 0 then error(failures .. " batched check(s) failed") end
