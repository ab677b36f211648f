-- The fp8 GEMM (e4m3 / e5m2 in, f32 accumulation, per-tensor scales) on sm_90a: checked against
-- the double reference at an awkward size, then TFLOP/s by events (median of the bench's reps) on
-- random data, beside cuBLASLt's fp8 GEMM in the same process (bench/cublas.c: the same buffers and
-- scales, bf16 out; its C checked against ckt's first). cuBLASLt has no e5m2 x e5m2 GEMM: that row
-- says so.
--
-- ckt-lua bench/gemm_fp8.lua [target=sm_90a] [json=bench/results/gemm_fp8.json] [sizes=4096,8192]
local target = arg[1] or "sm_90a"
local json_path = arg[2] or "bench/results/gemm_fp8.json"
local sizes = arg[3] or "4096,8192"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local gemm = require "ckt.kernels.gemm"
local okd, dev = pcall(ckt.device, ckt.target(target).runtime)
if not okd then print("SKIPPED: bench/gemm_fp8.lua: no device for " .. target .. ": " .. tostring(dev)); os.exit(77) end
local rows, failures = {}, 0
local cublas = bench.open_cublas(dev)
local workspace = dev:alloc("f32", 8 << 20) -- (32 MiB: cuBLASLt's workspace)
local function scales(d)
  return d:alloc("f32", 1):upload(ckt.array("f32", 1):fill(0.75)), d:alloc("f32", 1):upload(ckt.array("f32", 1):fill(-2.5))
end
print(("\n%s, %s\n"):format(dev:name(), target))
local stream <close> = dev:stream()
print("| dtype | out | M=N=K | config | ms (events) | TFLOP/s | wall ms (20 on a stream) | valid | cuBLASLt fp8 TFLOP/s (events) | ckt / cuBLASLt | same C as cuBLASLt |\n|---|---|---|---|---|---|---|---|---|---|---|")
for _, dt in ipairs{"e4m3", "e5m2"} do
  local k, grid, p = gemm.build{dtype = dt, out = "bf16", target = target}
  local exe = k:compile{target = target}
  local sa, sb = scales(dev)
  -- correctness: 208 x 144 x 272 (not multiples of the tile; each a multiple of the 16 the kernel
  -- promises) against the reference (scales applied in double)
  local M, N, K = 208, 144, 272
  local A = ckt.array(dt, M * K):random{seed = 1, lo = -4, hi = 4}
  local B = ckt.array(dt, N * K):random{seed = 2, lo = -4, hi = 4}
  local R = gemm.reference(A, B, M, N, K, {a_major = "k", b_major = "k", out = "f32", scale_A = 0.75, scale_B = -2.5})
  local bc = dev:alloc("bf16", M * N):upload(ckt.array("bf16", M * N):poison())
  exe:launch{grid = grid(M, N, exe), A = dev:alloc(dt, M * K):upload(A), B = dev:alloc(dt, N * K):upload(B), C = bc,
             M = M, N = N, K = K, scale_A = sa, scale_B = sb}
  -- the tolerance: C's rounding to bf16 (rtol 2^-8), and the tensor cores' fp8 accumulation,
  -- which is narrower than f32 (an H100 differed from the exact sum by up to ~2^-13 of the sum of
  -- |products| in tests/gpu/fp8_probe.lua): atol = 2^-12 · K · max|a| · max|b| · |scale_A·scale_B|
  local valid = bc:download():compare(R, {rtol = 2 ^ -7, atol = 2 ^ -12 * K * 4 * 4 * 0.75 * 2.5})
  if not valid then failures = failures + 1 end
  for S in sizes:gmatch("%d+") do
    S = tonumber(S)
    local ba, bb = bench.random_buffer(dev, dt, S * S, 3), bench.random_buffer(dev, dt, S * S, 4)
    local c = dev:alloc("bf16", S * S)
    local largs = {grid = grid(S, S, exe), A = ba, B = bb, C = c, M = S, N = S, K = S, scale_A = sa, scale_B = sb}
    local ms = bench.time_launch(exe, largs)
    local wall = bench.wall_launch(exe, largs, stream, 20)
    local r = {dtype = dt, out = "bf16", size = S, ms = ms, tflops = 2 * S * S * S / (ms * 1e-3) / 1e12, valid = valid,
               config = ("%dx%dx%d/%d/%d"):format(p.TM, p.TN, p.TK, p.block, p.stages), wall_ms = wall}
    local lt, same = "-", "-"
    if cublas and cublas.gemm_fp8 then
      local cref = dev:alloc("bf16", S * S)
      local args = {dtype = dt, M = S, N = S, K = S, A = ba:address(), B = bb:address(), C = cref:address(),
                    scale_A = sa:address(), scale_B = sb:address(), workspace = workspace:address(), workspace_bytes = 32 << 20}
      local ok, why = cublas:gemm_fp8(args)
      if ok then
        args.reps = bench.REPS
        r.cublaslt_ms = cublas:gemm_fp8(args)
        r.cublaslt_tflops = 2 * S * S * S / (r.cublaslt_ms * 1e-3) / 1e12
        r.ratio = r.cublaslt_ms / ms
        -- the same sums in a different order, each rounded once to bf16 (the fp8 products are
        -- exact, the accumulations narrower than f32 on both sides)
        r.same_as_cublaslt = c:download():compare(cref:download(), {rtol = 2 ^ -6, atol = 2 ^ -12 * S * 16 * 0.75 * 2.5})
        if not r.same_as_cublaslt then failures = failures + 1 end
        lt, same = ("%.1f (%.1f%%)"):format(r.cublaslt_tflops, 100 * r.ratio), tostring(r.same_as_cublaslt)
      else
        r.cublaslt = tostring(why)
        lt = tostring(why)
      end
      cref:close()
    end
    rows[#rows + 1] = r
    print(("| %s | bf16 | %d | %s | %.3f | %.1f | %.3f | %s | %s | %s | %s |"):format(dt, S, r.config, ms, r.tflops, wall, tostring(valid),
          r.cublaslt_tflops and ("%.1f"):format(r.cublaslt_tflops) or lt, r.ratio and ("%.1f%%"):format(100 * r.ratio) or "-", same))
    ba:close(); bb:close(); c:close()
  end
end
bench.write_json(json_path, {date = os.date("!%Y-%m-%d %H:%M UTC"), device = dev:name(), target = target, rows = rows})
if failures > 0 then error(failures .. " fp8 check(s) failed") end
