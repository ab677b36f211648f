-- The sweep over the configurations of the copy and transpose kernels (tile shape, block size,
-- bytes in flight per thread) that chose the library's defaults, as a user of ckt.autotune: each
-- kernel and dtype is one ckt.autotune call over the configs below on 1 GiB buffers (candidates
-- the bank model rates far worse or that do not fit are pruned, the rest compile in parallel),
-- every measured one against the device-to-device copy bandwidth of the same run; the winner is
-- checked against the reference at a small size (poisoned output first).
-- Run on a GPU host: ckt-lua bench/tune.lua [target=sm_90] [json path]
local target = arg[1] or "sm_90"
local json_path = arg[2] or "bench/results/tune.json"
local copy, ew, tr = require "ckt.kernels.copy", require "ckt.kernels.elementwise", require "ckt.kernels.transpose"
local dev = ckt.device(ckt.target(target).runtime)
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local REPS = bench.REPS
local GiB = tonumber(os.getenv("CKT_TUNE_BYTES") or (1 << 30)) -- bytes of each buffer (smaller: a quick try on the CPU target)
local ROWS = GiB >= (1 << 30) and 16384 or 1024

local d2d = bench.d2d(dev, GiB)
local rows = {}

local function record(kind, label, e)
  local gbs = e.ms and 2 * GiB / (e.ms * 1e-3) / 1e9
  rows[#rows + 1] = {kernel = kind, variant = label, status = e.status, reason = e.reason, ms = e.ms, gbs = gbs, pct = gbs and 100 * gbs / d2d,
                     compile_ms = e.compile_ms}
  if e.ms then io.write(("| %s | %s | %.3f | %.0f | %.1f%% | %s |\n"):format(kind, label, e.ms, gbs, 100 * gbs / d2d, e.status))
  else io.write(("| %s | %s | | | | %s: %s |\n"):format(kind, label, e.status, tostring(e.reason):gsub("\n", " "):sub(1, 160))) end
end

-- the winner of one search at a small size against the reference
local function check(kind, build, best, dt, size, reference)
  local k, grid = build(best)
  local sm, sn = size[1], size[2]
  local xs = ckt.array(dt, sm * sn):random{seed = 3}
  local bx, by = dev:alloc(dt, sm * sn), dev:alloc(dt, sm * sn)
  bx:upload(xs); by:upload(ckt.array(dt, sm * sn):poison())
  k:compile{target = target}:launch{grid = grid(sm, sn), X = bx, Y = by, M = sm, N = sn}
  local ys = ckt.array(dt, sm * sn)
  by:download(ys)
  bx:close(); by:close()
  local ok = ys:compare(reference(xs, sm, sn), {rtol = 0, atol = 0})
  print(("%s winner checked against the reference at %dx%d: %s"):format(kind, sm, sn, ok and "yes" or "NO"))
  return ok
end

-- one search: configs (a list), build(config) -> kernel, grid, costs
local function search(kind, dt, configs, build, label, M, N)
  local n = GiB // ckt.array(dt, 1):bytes()
  local x, y = bench.random_buffer(dev, dt, n, 1), dev:alloc(dt, n)
  local best, _, report = ckt.autotune{name = "bench/tune.lua " .. kind, space = configs, target = target, force = true, runs = REPS, warmup = 3,
    problem = {X = x, Y = y, M = M, N = N},
    build = function(c) local k, grid, costs = build(c); return k, grid(M, N), costs end}
  for _, e in ipairs(report) do record(kind, label(e.config), e) end
  x:close(); y:close()
  return best, report
end

print(("device: %s   target: %s   date: %s   reps: %d (median)   D2D %.0f GB/s"):format(dev:name(), target, os.date("!%Y-%m-%d"), REPS, d2d))
print("| kernel | variant | ms | GB/s | % of D2D | status |")
print("|---|---|---|---|---|---|")

local ONLY = os.getenv("CKT_TUNE_ONLY") -- "copy" or "transpose": one half of the sweep
local winners = {}
-- copy: tile rows x (16-byte vectors per row), block size
for _, dt in ipairs(ONLY == "transpose" and {} or {"f32", "f16"}) do
  local esz = ckt.array(dt, 1):bytes()
  local v = 16 // esz
  local configs = {}
  for _, c in ipairs{{1, 256, 256}, {1, 512, 256}, {2, 256, 256}, {4, 256, 256}, {8, 256, 256}, {16, 256, 256},
                     {4, 512, 512}, {8, 128, 128}, {8, 512, 256}, {2, 1024, 256}, {4, 128, 256}} do
    configs[#configs + 1] = {tile = {c[1], c[2] * v}, block = c[3]}
  end
  local function build(c) return copy.build{dtype = dt, tile = c.tile, block = c.block} end
  local best = search("copy " .. dt, dt, configs, build, function(c) return ("%dx%d, %d threads"):format(c.tile[1], c.tile[2], c.block) end,
                      ROWS, GiB // esz // ROWS)
  winners[#winners + 1] = {kernel = "copy " .. dt, config = best, correct = check("copy " .. dt, build, best, dt, {2 * best.tile[1], 3 * best.tile[2]}, function(x) return x end)}
  -- the elementwise kernel as a copy (1-D, thread-raked), by unroll
  local n = GiB // esz
  local x, z = bench.random_buffer(dev, dt, n, 2), dev:alloc(dt, n)
  local _, _, report = ckt.autotune{name = "bench/tune.lua elementwise " .. dt, space = {unroll = {2, 4, 8}}, target = target, force = true,
    runs = REPS, warmup = 3, problem = {X1 = x, Z = z, n = n},
    build = function(c) local k, g = ew.build{dtype = dt, inputs = 1, unroll = c.unroll}; return k, g(n) end}
  for _, e in ipairs(report) do record("elementwise copy " .. dt, "unroll " .. e.config.unroll, e) end
  x:close(); z:close()
end

-- transpose: tile TM x TN, block size (sub-blocks per thread follow); the bank model's cost of
-- each plan's two LDS accesses goes to the search
for _, dt in ipairs(ONLY == "copy" and {} or {"f32", "f16"}) do
  local esz = ckt.array(dt, 1):bytes()
  local cfgs = dt == "f32" and {{64, 64, 256}, {32, 32, 64}, {32, 32, 32}, {64, 64, 128}, {64, 64, 64}, {32, 64, 64}, {64, 32, 64},
                                {64, 128, 128}, {128, 64, 128}, {128, 128, 128}, {128, 128, 256}}
                           or {{128, 128, 256}, {64, 64, 64}, {64, 64, 32}, {64, 128, 64}, {128, 64, 64}, {64, 128, 128},
                               {128, 128, 128}, {128, 128, 64}, {128, 256, 128}, {256, 128, 128}, {128, 256, 256}}
  local configs = {}
  for _, c in ipairs(cfgs) do configs[#configs + 1] = {tile = {c[1], c[2]}, block = c[3]} end
  local arch = ckt.target(target).arch
  local function build(c)
    local k, grid, _, p = tr.build{dtype = dt, target = target, tile = c.tile, block = c.block}
    local cycles, ideal = 0, 0
    for _, a in ipairs{{p.write, "write"}, {p.read, "read"}} do
      -- a block smaller than a wave has no bank model's rating: the candidate goes unrated
      local ok, r = pcall(ckt.lds.analyze_tensor, {target = arch, tensor_layout = p.lds, dtype = dt, thread_map = a[1], vector = p.v, op = a[2]})
      if not ok then return k, grid end
      cycles, ideal = cycles + r.cycles, ideal + r.ideal_cycles
    end
    return k, grid, {bank_cycles = cycles, bank_ideal = ideal}
  end
  local M = ROWS
  local best = search("transpose " .. dt, dt, configs, build, function(c)
    return ("%dx%d, %d threads, %d KiB LDS"):format(c.tile[1], c.tile[2], c.block, c.tile[1] * c.tile[2] * esz // 1024)
  end, M, GiB // esz // M)
  winners[#winners + 1] = {kernel = "transpose " .. dt, config = best,
                           correct = check("transpose " .. dt, build, best, dt, {2 * best.tile[1], 3 * best.tile[2]}, tr.reference)}
end

bench.write_json(json_path, {device = dev:name(), target = target, date = os.date("!%Y-%m-%d"), reps = REPS, d2d_gbs = d2d, rows = rows, winners = winners})
