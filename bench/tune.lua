-- A sweep over the configurations of the copy and transpose kernels (tile shape, block size,
-- bytes in flight per thread), each against the device-to-device copy bandwidth of the same run.
-- It is how the library's defaults were chosen; every variant is checked against the reference
-- at a small size before it is timed.
-- Run on a GPU host: ckt-lua bench/tune.lua [target=sm_90] [json path]
local target = arg[1] or "sm_90"
local json_path = arg[2] or "bench/results/tune.json"
local copy, ew, tr = require "ckt.kernels.copy", require "ckt.kernels.elementwise", require "ckt.kernels.transpose"
local dev = ckt.device(target:sub(1, 3) == "sm_" and "cuda" or target:sub(1, 3) == "cpu" and "cpu" or "hip")
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local REPS, time_launch = bench.REPS, bench.time_launch
local GiB = tonumber(os.getenv("CKT_TUNE_BYTES") or (1 << 30)) -- bytes of each buffer (smaller: a quick try on the CPU target)
local ROWS = GiB >= (1 << 30) and 16384 or 1024

local function upload(a) local b = dev:alloc(a:dtype(), #a); b:upload(a); return b end

-- the ceiling, in this run
local d2d = bench.d2d(dev, GiB)

-- one big input and output of 1 GiB each per dtype, shared by the variants
local big = {}
for i, dt in ipairs{"f32", "f16"} do
  local n = GiB // ckt.array(dt, 1):bytes()
  big[dt] = {x = upload(ckt.array(dt, n):random{seed = 1 + i}), y = dev:alloc(dt, n)}
end

local rows = {}
-- check at a small size (poisoned output vs the reference), then time on 1 GiB
-- one row of the table (and of the JSON): 1 GiB read and 1 GiB written in `ms`
local function record(kind, label, ms, correct)
  local gbs = 2 * GiB / (ms * 1e-3) / 1e9
  rows[#rows + 1] = {kernel = kind, variant = label, ms = ms, gbs = gbs, pct = 100 * gbs / d2d, correct = correct}
  io.write(("| %s | %s | %.3f | %.0f | %.1f%% | %s |\n"):format(kind, label, ms, gbs, 100 * gbs / d2d,
           correct == nil and "(not checked)" or correct and "yes" or "NO"))
end

local function measure(kind, label, k, grid, dt, M, N, reference)
  local exe = k:compile{target = target}
  local sm, sn = table.unpack(reference.size)
  local xs = ckt.array(dt, sm * sn):random{seed = 3}
  local bx, by = upload(xs), upload(ckt.array(dt, sm * sn):poison())
  exe:launch{grid = grid(sm, sn), X = bx, Y = by, M = sm, N = sn}
  local ys = ckt.array(dt, sm * sn); by:download(ys)
  local ok = ys:compare(reference.f(xs, sm, sn), {rtol = 0, atol = 0})
  bx:close(); by:close()
  record(kind, label, time_launch(exe, {grid = grid(M, N), X = big[dt].x, Y = big[dt].y, M = M, N = N}), ok)
end

print(("device: %s   target: %s   date: %s   reps: %d (median)   D2D %.0f GB/s"):format(dev:name(), target, os.date("!%Y-%m-%d"), REPS, d2d))
print("| kernel | variant | ms | GB/s | % of D2D | correct |")
print("|---|---|---|---|---|---|")

local ONLY = os.getenv("CKT_TUNE_ONLY") -- "copy" or "transpose": one half of the sweep
-- copy: tile rows x columns, block size
for _, dt in ipairs(ONLY == "transpose" and {} or {"f32", "f16"}) do
  local esz = dt == "f32" and 4 or 2
  local v = 16 // esz
  local M, N = ROWS, GiB // esz // ROWS
  for _, c in ipairs{{1, 256, 256}, {1, 512, 256}, {2, 256, 256}, {4, 256, 256}, {8, 256, 256}, {16, 256, 256},
                     {4, 512, 512}, {8, 128, 128}, {8, 512, 256}, {2, 1024, 256}, {4, 128, 256}} do
    local tm, tn, block = c[1], c[2] * v, c[3]
    local k, grid = copy.build{dtype = dt, tile = {tm, tn}, block = block}
    measure("copy " .. dt, ("%dx%d, %d threads"):format(tm, tn, block), k, grid, dt, M, N,
            {size = {2 * tm, 3 * tn}, f = function(x) return x end})
  end
  -- the elementwise kernel as a copy (1-D, thread-raked)
  for _, unroll in ipairs{2, 4, 8} do
    local k, g = ew.build{dtype = dt, inputs = 1, unroll = unroll}
    local exe = k:compile{target = target}
    local n = GiB // esz
    record("elementwise copy " .. dt, "unroll " .. unroll, time_launch(exe, {grid = g(n), X1 = big[dt].x, Z = big[dt].y, n = n}))
  end
end

-- transpose: tile TM x TN, block size (sub-blocks per thread follow)
for _, dt in ipairs(ONLY == "copy" and {} or {"f32", "f16"}) do
  local esz = dt == "f32" and 4 or 2
  local M = ROWS
  local N = GiB // esz // M
  local cfgs = dt == "f32" and {{64, 64, 256}, {32, 32, 64}, {32, 32, 32}, {64, 64, 128}, {64, 64, 64}, {32, 64, 64}, {64, 32, 64},
                                {64, 128, 128}, {128, 64, 128}, {128, 128, 128}, {128, 128, 256}}
                           or {{128, 128, 256}, {64, 64, 64}, {64, 64, 32}, {64, 128, 64}, {128, 64, 64}, {64, 128, 128},
                               {128, 128, 128}, {128, 128, 64}, {128, 256, 128}, {256, 128, 128}, {128, 256, 256}}
  for _, c in ipairs(cfgs) do
    local ok, k, grid, why, p = pcall(tr.build, {dtype = dt, target = target, tile = {c[1], c[2]}, block = c[3]})
    if not ok then
      io.write(("| transpose %s | %dx%d, %d threads | refused: %s | | | |\n"):format(dt, c[1], c[2], c[3], tostring(k)))
    else
      local rc, wc = tr.bank_cycles(p, target)
      local okm, err = pcall(measure, "transpose " .. dt, ("%dx%d, %d threads, %dx%d blocks/thread, %d KiB LDS, bank cycles r%d w%d"):format(
                c[1], c[2], c[3], p.rm, p.rn, c[1] * c[2] * esz // 1024, rc, wc), k, grid, dt, M, N,
              {size = {2 * c[1], 3 * c[2]}, f = tr.reference})
      if not okm then io.write(("| transpose %s | %dx%d, %d threads | failed: %s | | | |\n"):format(dt, c[1], c[2], c[3], tostring(err):gsub("\n", " "):sub(1, 200))) end
    end
  end
end
for _, b in pairs(big) do b.x:close(); b.y:close() end

bench.write_json(json_path, {device = dev:name(), target = target, date = os.date("!%Y-%m-%d"), reps = REPS, d2d_gbs = d2d, rows = rows})
