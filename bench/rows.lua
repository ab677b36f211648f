-- The row kernels (softmax, layernorm, rmsnorm: ckt.kernels.rows) against the device-to-device
-- copy bandwidth measured in the same run: M x N with M such that X is ~256 MB, N in 128, 512,
-- 1024, 4096, 8192, 32768; event time (median) and the wall clock of 100 launches back to back on
-- a stream; GB/s counts X read and Y written once (plus R read and Sum written with the residual;
-- W and Bias are a row, left out). Each kernel is built for its N (a hint: N stays a launch
-- argument); for N >= 8192 also with half the threads per row (rows then longer than its
-- one-pass capacity stream twice), so that both ways are measured, and with fixed = true (N a
-- constant: one path emitted). Before timing, each kernel's
-- GPU output at M = 64 is checked against the double-precision reference.
-- Run on a GPU host: ckt-lua bench/rows.lua [target=sm_90] [dtype=f16] [json=bench/results/rows_<dtype>.json]
-- torch's figures for the same shapes: python3 bench/rows_torch.py [dtype]
local target = arg[1] or "sm_90"
local dtype = arg[2] or "f16"
local json_path = arg[3] or ("bench/results/rows_" .. dtype .. ".json")
local rows_lib = require "ckt.kernels.rows"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local dev = ckt.device(ckt.target(target).runtime)
local stream <close> = dev:stream()
local esz = ckt.array(dtype, 1):bytes()
-- (CKT_BENCH_ROWS_MB and CKT_BENCH_ROWS_NS=128,1024 shrink the run: a smoke test on the CPU target)
local BYTES = math.tointeger(tonumber(os.getenv("CKT_BENCH_ROWS_MB") or "256") * (1 << 20) // 1)
local NS = {}
for n in (os.getenv("CKT_BENCH_ROWS_NS") or "128,512,1024,4096,8192,32768"):gmatch("%d+") do NS[#NS + 1] = tonumber(n) end
local TOL = {f16 = 2e-3, bf16 = 1.6e-2, f32 = 1e-4}

local d2d = bench.d2d(dev, math.min(1 << 30, 4 * BYTES))

-- the kernel's output on a small M against the reference (returns ok, max error)
local function check(kind, o, N)
  local k, grid, p = rows_lib.build(kind, o)
  local exe = k:compile{target = target}
  local M = 64
  local x = ckt.array(dtype, M * N):random{seed = 1, lo = -3, hi = 3}
  local r = o.residual and ckt.array(dtype, M * N):random{seed = 2, lo = -1, hi = 1} or nil
  local w = ckt.array(dtype, N):random{seed = 3, lo = 0.5, hi = 1.5}
  local b = ckt.array(dtype, N):random{seed = 4, lo = -1, hi = 1}
  local function up(a) local buf = dev:alloc(a:dtype(), #a); buf:upload(a); return buf end
  local y = ckt.array(dtype, M * N):poison()
  local by = up(y)
  local args = {grid = grid(M), X = up(x), Y = by, M = M, N = not p.fixed and N or nil}
  if r then args.R = up(r); args.Sum = dev:alloc(dtype, M * N) end
  if p.weight then args.W = up(w) end
  if p.bias then args.Bias = up(b) end
  exe:launch(args)
  by:download(y)
  local ry = rows_lib.reference(kind, {X = x, R = r, W = p.weight and w or nil, Bias = p.bias and b or nil,
                                       M = M, N = N, dtype = dtype})
  return y:compare(ry, {atol = TOL[dtype], rtol = TOL[dtype]})
end

local results, failed = {}, 0
local function run(kind, N, extra, label)
  local o = {dtype = dtype, N = N}
  for key, v in pairs(extra or {}) do o[key] = v end
  local ok, err = check(kind, o, N)
  if not ok then failed = failed + 1 end
  local k, grid, p = rows_lib.build(kind, o)
  local exe = k:compile{target = target}
  local M = BYTES // (N * esz)
  local n = M * N
  local x = bench.random_buffer(dev, dtype, n, 5)
  local y = dev:alloc(dtype, n)
  local args = {grid = grid(M), X = x, Y = y, M = M, N = not p.fixed and N or nil}
  local traffic = 2 * n * esz
  local r, s
  if o.residual then
    r = bench.random_buffer(dev, dtype, n, 6); s = dev:alloc(dtype, n)
    args.R, args.Sum = r, s
    traffic = traffic + 2 * n * esz
  end
  local w, b
  if p.weight then w = bench.random_buffer(dev, dtype, N, 7); args.W = w end
  if p.bias then b = bench.random_buffer(dev, dtype, N, 8); args.Bias = b end
  local ms = bench.time_launch(exe, args)
  local wall = bench.wall_launch(exe, args, stream, 100)
  local gbs, wall_gbs = traffic / (ms * 1e-3) / 1e9, traffic / (wall * 1e-3) / 1e9
  results[#results + 1] = {kernel = kind, config = label or "default", dtype = dtype, M = M, N = N,
                           threads = p.T, vectors = p.P, rows_per_block = p.R, cap = p.cap,
                           path = N <= p.cap and "one pass" or "streamed", residual = o.residual == true,
                           ms = ms, gbs = gbs, pct = 100 * gbs / d2d, wall_ms = wall, wall_gbs = wall_gbs,
                           wall_pct = 100 * wall_gbs / d2d, checked = ok, max_err = err}
  for _, buf in ipairs{x, y, r, s, w, b} do buf:close() end
end

for _, kind in ipairs{"softmax", "layernorm", "rmsnorm"} do
  for _, N in ipairs(NS) do
    run(kind, N)
    local _, _, p = rows_lib.build(kind, {dtype = dtype, N = N})
    if N >= 8192 and p.T > 32 then run(kind, N, {threads = p.T // 2}, ("threads=%d"):format(p.T // 2)) end
    -- N a build-time constant: the one path the length takes, nothing emitted for the other
    if N >= 8192 then run(kind, N, {fixed = true}, "fixed") end
  end
  if kind ~= "softmax" then run(kind, NS[#NS] >= 4096 and 4096 or NS[#NS], {residual = true, sum = true}, "residual, Sum written") end
end

print(("\ndevice: %s   target: %s   dtype: %s   date: %s   reps: %d (median)"):format(dev:name(), target, dtype,
      os.date("!%Y-%m-%d"), bench.REPS))
print(("device-to-device copy: %.0f GB/s (%d MiB, read + write)"):format(d2d, math.min(1 << 30, 4 * BYTES) >> 20))
print("| kernel | config | M x N | T x P (rows/block) | path | ms | GB/s | % of D2D | wall ms | wall % | budget (>= 90% at N >= 1024) | checked (max err) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for _, r in ipairs(results) do
  local budget = r.N < 1024 and "-" or (r.pct >= 90 and "met" or "MISSED")
  print(("| %s | %s | %d x %d | %d x %d (%d) | %s | %.3f | %.0f | %.1f%% | %.3f | %.1f%% | %s | %s (%g) |"):format(
    r.kernel, r.config, r.M, r.N, r.threads, r.vectors, r.rows_per_block, r.path, r.ms, r.gbs, r.pct, r.wall_ms,
    r.wall_pct, budget, r.checked and "yes" or "NO", r.max_err))
end
bench.write_json(json_path, {device = dev:name(), target = target, dtype = dtype, date = os.date("!%Y-%m-%d"),
                             d2d_gbs = d2d, rows = results})
if failed > 0 then print(("%d kernel(s) FAILED the check against the reference"):format(failed)); os.exit(1) end
