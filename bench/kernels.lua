-- Bandwidth of the kernel library against the device-to-device copy bandwidth measured in the
-- same run, plus a correctness pass (GPU vs the CPU target bit for bit, and vs the double
-- reference) and the LDS bank model's predicted wavefronts for the ncu comparison.
-- Run on a GPU host: ckt-lua bench/kernels.lua [target=sm_90] [json path]
local target = arg[1] or "sm_90"
local json_path = arg[2] or "bench/results/kernels.json"
local copy, ew = require "ckt.kernels.copy", require "ckt.kernels.elementwise"
local tr, red = require "ckt.kernels.transpose", require "ckt.kernels.reduce"
local dev = ckt.device(ckt.target(target).runtime)
local cpu = ckt.device("cpu")
local EXACT = {"--fmad=false"} -- no fused multiply-add: the GPU rounds like the CPU target
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local REPS, random_buffer = bench.REPS, bench.random_buffer
local stream <close> = dev:stream() -- the application loop's stream (the wall-clock column)
-- the kernel's median event time and the wall clock of 100 launches back to back on the stream
local function time_launch(exe, args)
  return {ms = bench.time_launch(exe, args), wall_ms = bench.wall_launch(exe, args, stream, 100)}
end

-- device-to-device copy bandwidth: the ceiling, in this run
local GiB = 1 << 30
local d2d = bench.d2d(dev, GiB)

local rows = {}
local function report(name, bytes, t, floor)
  local gbs, wall_gbs = bytes / (t.ms * 1e-3) / 1e9, bytes / (t.wall_ms * 1e-3) / 1e9
  rows[#rows + 1] = {kernel = name, ms = t.ms, gbs = gbs, pct = 100 * gbs / d2d, floor = floor,
                     wall_ms = t.wall_ms, wall_gbs = wall_gbs, wall_pct = 100 * wall_gbs / d2d}
end

-- correctness at a moderate size: GPU == CPU target bit for bit; both against the reference
local checks = {}
local function check(name, k, args, inputs, out_name, out_dtype, out_n, reference, tol)
  local function run(d, t, opts)
    local exe = k:compile{target = t, options = opts}
    local a = {}
    for key, v in pairs(args) do a[key] = v end
    for key, arr in pairs(inputs) do local b = d:alloc(arr:dtype(), #arr); b:upload(arr); a[key] = b end
    local o = ckt.array(out_dtype, out_n):poison()
    local bo = d:alloc(out_dtype, out_n); bo:upload(o); a[out_name] = bo
    exe:launch(a)
    bo:download(o)
    return o
  end
  local g = run(dev, target, EXACT)
  local c = run(cpu, "cpu")
  local same = g:compare(c, {rtol = 0, atol = 0})
  local ok, err = g:compare(reference, tol or {rtol = 0, atol = 0})
  checks[#checks + 1] = {kernel = name, gpu_equals_cpu_bitwise = same, matches_reference = ok, max_abs_err = err}
end

-- copy
for _, dt in ipairs{"f32", "f16"} do
  local esz = dt == "f32" and 4 or 2
  local k, grid = copy.build{dtype = dt}
  local M, N = 16384, GiB // esz // 16384
  local x = random_buffer(dev, dt, M * N, 2); local y = dev:alloc(dt, M * N)
  report("copy " .. dt, 2 * GiB, time_launch(k:compile{target = target}, {grid = grid(M, N), X = x, Y = y, M = M, N = N}), 90)
  x:close(); y:close()
  local sm, sn = 300, 1024
  local xs = ckt.array(dt, {sm, sn}):random{seed = 3}
  local kp, gp = copy.build{dtype = dt, pad = true}
  check("copy " .. dt .. " (padded 300x1024)", kp, {grid = gp(sm, sn), M = sm, N = sn}, {X = xs}, "Y", dt, sm * sn, xs)
end

-- elementwise: z = relu(x * y + 1) over f16 and f32
for _, dt in ipairs{"f32", "f16"} do
  local esz = dt == "f32" and 4 or 2
  local f = function(x, y) return ckt.max(x * y + 1, 0) end
  local k, grid = ew.build{dtype = dt, inputs = 2, f = f}
  local n = (GiB // 2) // esz
  local x1, x2, z = random_buffer(dev, dt, n, 4), random_buffer(dev, dt, n, 5), dev:alloc(dt, n)
  report("elementwise " .. dt .. " relu(x*y+1)", 3 * (GiB // 2), time_launch(k:compile{target = target}, {grid = grid(n), X1 = x1, X2 = x2, Z = z, n = n}), 90)
  x1:close(); x2:close(); z:close()
  local ns = 100000
  local a, b = ckt.array(dt, ns):random{seed = 6}, ckt.array(dt, ns):random{seed = 7}
  check("elementwise " .. dt, k, {grid = grid(ns), n = ns}, {X1 = a, X2 = b}, "Z", dt, ns, ew.reference(f, dt, a, b),
        dt == "f32" and {rtol = 1e-6, atol = 1e-6} or {rtol = 1e-3, atol = 1e-3}) -- f32 math then one rounding: <= 1 ulp of dt
end

-- transpose
local bank = {}
for _, dt in ipairs{"f32", "f16"} do
  local esz = dt == "f32" and 4 or 2
  for _, sw in ipairs{true, false} do
    local k, grid, why, plan = tr.build{dtype = dt, target = target, swizzle = sw}
    local M = 16384
    local N = GiB // esz // M
    local x = random_buffer(dev, dt, M * N, 8); local y = dev:alloc(dt, M * N)
    report(("transpose %s %dx%d (%s)"):format(dt, plan.TM, plan.TN, sw and why or "no swizzle"), 2 * GiB, time_launch(k:compile{target = target}, {grid = grid(M, N), X = x, Y = y, M = M, N = N}), 85)
    x:close(); y:close()
    local sm, sn = 2 * plan.TM, 3 * plan.TN
    local xs = ckt.array(dt, {sm, sn}):random{seed = 9}
    check(("transpose %s %s"):format(dt, sw and "swizzled" or "plain"), k, {grid = grid(sm, sn), M = sm, N = sn}, {X = xs}, "Y", dt,
          sm * sn, tr.reference(xs, sm, sn))
    -- the bank model's prediction for one launch over a 4 x 4 grid of tiles (ncu compares)
    local r, w = tr.bank_cycles(plan, target)
    bank[#bank + 1] = {kernel = k:name() .. (sw and "" or "_plain"), dtype = dt, swizzled = sw, blocks = 16,
                       ld_wavefronts = 16 * r, st_wavefronts = 16 * w, kernel_obj = k}
  end
end

-- transpose block orders (f32, swizzled): how the order of tiles over the grid matters
for _, order in ipairs{"col", "grouped"} do
  local k, grid = tr.build{dtype = "f32", target = target, order = order}
  local M = 16384
  local x = random_buffer(dev, "f32", M * M // 4, 8); local y = dev:alloc("f32", M * M // 4)
  report("transpose f32 (" .. order .. " block order)", 2 * GiB // 4, time_launch(k:compile{target = target}, {grid = grid(M, M // 4), X = x, Y = y, M = M, N = M // 4}), 85)
  x:close(); y:close()
end

-- row reduction
for _, dt in ipairs{"f32", "f16"} do
  local esz = dt == "f32" and 4 or 2
  local k, grid = red.build{dtype = dt, op = "sum"}
  local M = 16384
  local N = GiB // esz // M
  local x = random_buffer(dev, dt, M * N, 10); local y = dev:alloc("f32", M)
  report("row reduction sum " .. dt, GiB + 4 * M, time_launch(k:compile{target = target}, {grid = grid(M), X = x, Y = y, M = M, N = N}), 85)
  x:close(); y:close()
  local sm, sn = 64, 5000
  local xs = ckt.array(dt, {sm, sn}):random{seed = 11}
  check("row reduction " .. dt, k, {grid = grid(sm), M = sm, N = sn}, {X = xs}, "Y", "f32", sm, red.reference(xs, sm, sn, "sum"), {rtol = 1e-5, atol = 1e-5})
end

print(("\ndevice: %s   target: %s   date: %s   reps: %d (median)"):format(dev:name(), target, os.date("!%Y-%m-%d"), REPS))
print(("device-to-device copy: %.0f GB/s (1 GiB, read + write)"):format(d2d))
print("| kernel | ms | GB/s | % of D2D | wall clock ms (100 on a stream) | wall % of D2D | budget |")
print("|---|---|---|---|---|---|---|")
for _, r in ipairs(rows) do
  print(("| %s | %.3f | %.0f | %.1f%% | %.3f | %.1f%% | >= %d%% %s |"):format(r.kernel, r.ms, r.gbs, r.pct, r.wall_ms, r.wall_pct, r.floor, r.pct >= r.floor and "met" or "MISSED"))
end
print("\n| correctness | GPU == CPU target (bit for bit) | matches reference | max abs error |")
print("|---|---|---|---|")
for _, c in ipairs(checks) do
  print(("| %s | %s | %s | %g |"):format(c.kernel, c.gpu_equals_cpu_bitwise and "yes" or "NO", c.matches_reference and "yes" or "NO", c.max_abs_err))
end

for _, b in ipairs(bank) do b.kernel_obj = nil end

bench.write_json(json_path, {date = os.date("!%Y-%m-%d"), device = dev:name(), target = target, reps = REPS, d2d_gbs = d2d,
                              kernels = rows, checks = checks, bank_model = bank})
