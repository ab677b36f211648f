-- A fused epilogue against cuBLAS, which needs a second kernel for it: C = silu(A B) (x / (1 +
-- e^-x) on the f32 accumulator) by the library GEMM with `epilogue =` in one kernel, against
-- cuBLAS's GEMM followed by ckt's elementwise kernel over C (the same function), timed in the
-- same process; the fused result checked against the two-kernel one at every size. Also with
-- NVRTC's --use_fast_math on both sides, and the persistent kernel (fast math).
--   ckt-lua bench/gemm_epilogue.lua [target=sm_90a] [json=bench/results/gemm_epilogue.json] [sizes=MxNxK,...]
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local ew = require "ckt.kernels.elementwise"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local target = arg[1] or "sm_90a"
local json_path = arg[2] or "bench/results/gemm_epilogue.json"
local size_arg = arg[3] or "8192x8192x8192,4096x4096x4096,8192x8192x1024,4096x4096x1024,2048x2048x2048"

local okd, dev = pcall(ckt.device, ckt.target(target).runtime)
if not okd then print("SKIPPED: bench/gemm_epilogue.lua: no device for " .. target .. ": " .. tostring(dev)); os.exit(77) end
dev:alloc("f32", 1):close()
package.cpath = (os.getenv("CKT_BENCH_LIB") and (os.getenv("CKT_BENCH_LIB") .. "/?.so;") or "") .. "build/?.so;/tmp/ckt-build/?.so;" .. package.cpath
local okc, mod = pcall(require, "ckt_cublas")
local cublas, why
if okc then cublas, why = mod.open() else why = mod end
if not cublas then print("SKIPPED: bench/gemm_epilogue.lua: no cuBLAS: " .. tostring(why):gsub("\n.*", "")); os.exit(77) end

local function silu(x) return x / (1 + ckt.exp(-x)) end
local dt = "f16"
local kf, gridf = gemm.build{target = target, dtype = dt, epilogue = silu}
local fused = kf:compile{target = target}
local kew, gridew = ew.build{dtype = dt, f = silu}
local act = kew:compile{target = target}
-- the same two kernels with NVRTC's --use_fast_math (approximate exp and division, f32 denormals
-- flushed): the epilogue's instructions are most of its cost
local fast = {options = {"--use_fast_math"}}
local fused_fast = kf:compile{target = target, options = fast.options}
local act_fast = kew:compile{target = target, options = fast.options}
-- and the persistent kernel (fast math): the next tile's copies land while the epilogue runs
local kp, gridp = gemm.build{target = target, dtype = dt, epilogue = silu, persistent = true}
local fused_persistent = kp:compile{target = target, options = fast.options}

local rows = {}
for s in size_arg:gmatch("[^,]+") do
  local M, N, K = s:match("^(%d+)x(%d+)x(%d+)$")
  M, N, K = tonumber(M), tonumber(N), tonumber(K)
  local a, b = bench.random_buffer(dev, dt, M * K, 1), bench.random_buffer(dev, dt, K * N, 2)
  local c, d, e = dev:alloc(dt, M * N), dev:alloc(dt, M * N), dev:alloc(dt, M * N)
  local fused_ms = bench.time_launch(fused, {grid = gridf(M, N), A = a, B = b, C = e, M = M, N = N, K = K})
  local gemm_ms = cublas:gemm{dtype = dt, out = dt, a_major = "k", b_major = "k", M = M, N = N, K = K, A = a:address(), B = b:address(), C = c:address(), reps = bench.REPS}
  local act_ms = bench.time_launch(act, {grid = gridew(M * N), X1 = c, Z = d, n = M * N})
  local fused_fast_ms = bench.time_launch(fused_fast, {grid = gridf(M, N), A = a, B = b, C = e, M = M, N = N, K = K})
  local act_fast_ms = bench.time_launch(act_fast, {grid = gridew(M * N), X1 = c, Z = d, n = M * N})
  local fast_got, fast_want = ckt.array(dt, M * N), ckt.array(dt, M * N)
  e:download(fast_got); d:download(fast_want)
  local fast_same = fast_got:compare(fast_want, {rtol = 2 ^ -8, atol = 2 ^ -10})
  e:upload(ckt.array(dt, M * N):poison())
  local persistent_ms = bench.time_launch(fused_persistent, {grid = gridp(M, N), A = a, B = b, C = e, M = M, N = N, K = K})
  e:download(fast_got)
  local persistent_same = fast_got:compare(fast_want, {rtol = 2 ^ -8, atol = 2 ^ -10})
  bench.time_launch(fused, {grid = gridf(M, N), A = a, B = b, C = e, M = M, N = N, K = K})
  bench.time_launch(act, {grid = gridew(M * N), X1 = c, Z = d, n = M * N})
  -- the fused result against the two kernels' (rounded to f16 once more between them)
  local want, got = ckt.array(dt, M * N), ckt.array(dt, M * N)
  d:download(want); e:download(got)
  local same, err = got:compare(want, {rtol = 2 ^ -8, atol = 2 ^ -10})
  local flop = 2.0 * M * N * K
  rows[#rows + 1] = {M = M, N = N, K = K, fused_ms = fused_ms, cublas_gemm_ms = gemm_ms, epilogue_ms = act_ms,
                     cublas_total_ms = gemm_ms + act_ms, fused_tflops = flop / (fused_ms * 1e-3) / 1e12,
                     speedup = (gemm_ms + act_ms) / fused_ms, valid = same, max_err = err,
                     fast_fused_ms = fused_fast_ms, fast_epilogue_ms = act_fast_ms,
                     fast_speedup = (gemm_ms + act_fast_ms) / fused_fast_ms, fast_valid = fast_same,
                     persistent_fused_ms = persistent_ms, persistent_speedup = (gemm_ms + act_fast_ms) / persistent_ms,
                     persistent_valid = persistent_same}
  for _, x in ipairs{a, b, c, d, e} do x:close() end
end
print(("| MxNxK | ckt fused ms | cuBLAS GEMM ms | + epilogue kernel ms | cuBLAS + epilogue ms | ckt fused TFLOP/s | fused / two kernels | valid | fast math: fused ms | epilogue ms | fused / two kernels | valid | persistent fused ms | fused / two kernels | valid |"))
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for _, r in ipairs(rows) do
  print(("| %dx%dx%d | %.3f | %.3f | %.3f | %.3f | %.1f | %.2fx | %s (%s) | %.3f | %.3f | %.2fx | %s | %.3f | %.2fx | %s |"):format(r.M, r.N, r.K, r.fused_ms, r.cublas_gemm_ms, r.epilogue_ms,
        r.cublas_total_ms, r.fused_tflops, r.speedup, r.valid and "yes" or "NO", tostring(r.max_err),
        r.fast_fused_ms, r.fast_epilogue_ms, r.fast_speedup, r.fast_valid and "yes" or "NO",
        r.persistent_fused_ms, r.persistent_speedup, r.persistent_valid and "yes" or "NO"))
end
bench.write_json(json_path, {target = target, epilogue = "silu", dtype = dt, rows = rows})
for _, r in ipairs(rows) do if not (r.valid and r.fast_valid and r.persistent_valid) then os.exit(1) end end
