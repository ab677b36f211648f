-- Autotuning benchmark (issue 18's performance items):
--   1. the library GEMM (f16, 4096^3 on a GPU) tuned over 96 candidates (8 block tiles x 2 block
--      sizes x 3 stage counts x LDS swizzled by the bank model or not) with the models pruning:
--      wall-clock seconds of the whole search, cold compiles included (the compile cache is
--      bypassed); how many each model pruned;
--   2. the same space exhaustively (no bank-model or spill pruning; the LDS limit and the
--      problem still apply, what they reject cannot launch): the model-pruned winner against the
--      exhaustive one, both timed in the exhaustive run (same winner, or the loss in %);
--   3. the overhead of a remembered lookup (median of 200 calls): naming the choice and reading
--      it (lookup_ms), and the whole call with the winner's build and compile-cache load.
-- The winner is checked against the double-precision reference at a small size first.
-- Run on a GPU host: ckt-lua bench/autotune.lua [target, default the default target] [json path]
-- (writes bench/results/autotune_<device>.json). On the CPU target it runs a smaller problem.
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local gemm = require "ckt.kernels.gemm"

local target = arg[1] or ckt.default_target()
local rec = ckt.target(target)
local dev = ckt.device(rec.runtime)
local cpu = rec.runtime == "cpu"
local dt = "f16"
local M, N, K = 4096, 4096, 4096
if cpu then M, N, K = 256, 256, 128 end
local slug = dev:name():lower():gsub("[^%w]+", "_"):gsub("^_+", ""):gsub("_+$", "")
local json_path = arg[2] or ("bench/results/autotune_" .. slug .. ".json")

local A = bench.random_buffer(dev, dt, M * K, 1)
local B = bench.random_buffer(dev, dt, K * N, 2)
local C = dev:alloc(dt, M * N)
local problem = {A = A, B = B, C = C, M = M, N = N, K = K}

local space = {tile = {{64, 64, 32}, {128, 64, 32}, {64, 128, 32}, {128, 128, 32}, {128, 256, 32}, {256, 128, 32}, {64, 64, 64}, {128, 128, 64}},
               block = {128, 256}, stages = {2, 3, 4}, swizzle = {true, false}}

-- CKT_BENCH_QUICK=1: 8 candidates (a quick try of the script, e.g. on the CPU target)
if os.getenv("CKT_BENCH_QUICK") then space.tile, space.stages = {{64, 64, 32}, {128, 64, 32}}, {2} end

-- The bank model's cycles of one block's LDS accesses: the copy-in writes and the operand reads of
-- A and B on the plan's layouts. An unswizzled plan records no read pattern, so the swizzled
-- plan's (the same accesses: ldmatrix rows / MFMA operand loads) is analysed on its layouts.
local function costs(c, p)
  local ps = c.swizzle == false and gemm.plan{dtype = dt, target = target, tile = c.tile, block = c.block, stages = c.stages} or p
  local cycles, ideal = 0, 0
  for _, x in ipairs{{p.a_copy, ps.a_copy}, {p.b_copy, ps.b_copy}} do
    local mine, with_read = x[1], x[2]
    local function an(map, vector, op)
      local a = ckt.lds.analyze_tensor{target = p.arch, tensor_layout = mine.lds, dtype = dt, thread_map = map, vector = vector, op = op}
      cycles, ideal = cycles + a.cycles, ideal + a.ideal_cycles
    end
    an(mine.write, p.aligned and p.v or 1, "write")
    if with_read.read then an(with_read.read, with_read.read_vector, "read") end
  end
  return {bank_cycles = cycles, bank_ideal = ideal}
end

local function build(c)
  local k, grid, p = gemm.build{dtype = dt, target = target, tile = c.tile, block = c.block, stages = c.stages, swizzle = c.swizzle}
  return k, grid(M, N), costs(c, p)
end

local function tune(exhaustive)
  -- exhaustive: no bank-model or spill pruning (what the LDS limit or the problem rejects cannot launch)
  return ckt.autotune{name = "bench/autotune.lua gemm", build = build, space = space, problem = problem, target = target,
                      force = true, cache = false, runs = cpu and 3 or 20, warmup = cpu and 1 or 3,
                      bank_slack = not exhaustive and 2.0 or false, allow_spills = exhaustive}
end

-- why each candidate was pruned, by model
local function kind(reason)
  if not reason then return nil end
  for _, k in ipairs{"bank model", "LDS", "does not fit the problem", "spills", "occupancy", "filter", "budget"} do
    if reason:find(k, 1, true) == 1 then return k end
  end
  return reason:match("^(%a+)") or "other"
end

print(("device: %s   target: %s   date: %s   GEMM %s %dx%dx%d, %d candidates"):format(dev:name(), target, os.date("!%Y-%m-%d"), dt, M, N, K,
      #space.tile * #space.block * #space.stages * #space.swizzle))
local best, _, rep = tune(false)
local by = {}
for _, e in ipairs(rep) do local k = kind(e.reason); if e.status == "pruned" then by[k] = (by[k] or 0) + 1 end end
print("| # | tile | block | stages | swizzle | status | LDS KiB | bank x | regs | spills | compile ms | ms | TFLOP/s | why |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
local flop = 2.0 * M * N * K
for i, e in ipairs(rep) do
  local c = e.config
  print(("| %d | %dx%dx%d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(i, c.tile[1], c.tile[2], c.tile[3], c.block, c.stages,
        tostring(c.swizzle), e.status,
        e.lds_bytes and ("%.0f"):format(e.lds_bytes / 1024) or "", e.bank_factor and ("%.2f"):format(e.bank_factor) or "",
        e.registers or "", e.spills or "", e.compile_ms and ("%.0f"):format(e.compile_ms) or "", e.ms and ("%.4f"):format(e.ms) or "",
        e.ms and ("%.1f"):format(flop / (e.ms * 1e-3) / 1e12) or "", e.reason and e.reason:sub(1, 100) or ""))
end
local s = rep.stats
print(("model-pruned search: %.1f s wall (cold compiles), %d measured, %d pruned, %d failed, %d compiled"):format(rep.seconds, s.measured, s.pruned, s.failed, s.compiled))
for k, n in pairs(by) do print(("  pruned by %s: %d"):format(k, n)) end

-- the winner at a small size against the reference
do
  local m, n, k = 2 * best.tile[1] + 8, 2 * best.tile[2] + 8, 3 * best.tile[3] + 8
  local kk, grid = gemm.build{dtype = dt, target = target, tile = best.tile, block = best.block, stages = best.stages, swizzle = best.swizzle}
  local a = ckt.array(dt, m * k):random{seed = 5, lo = -1, hi = 1}
  local b = ckt.array(dt, k * n):random{seed = 6, lo = -1, hi = 1}
  local c = ckt.array(dt, m * n):poison()
  local ba, bb, bc = dev:alloc(dt, m * k), dev:alloc(dt, k * n), dev:alloc(dt, m * n)
  ba:upload(a); bb:upload(b); bc:upload(c)
  kk:compile{target = target}:launch{grid = grid(m, n), A = ba, B = bb, C = bc, M = m, N = n, K = k}
  bc:download(c)
  local ok, err = c:compare(gemm.reference(a, b, m, n, k, {out = "f32"}), {rtol = 2 ^ -11, atol = k * 2 ^ -21})
  print(("winner checked at %dx%dx%d against the reference: %s"):format(m, n, k, ok and "yes" or ("NO (max error " .. tostring(err) .. ")")))
  ba:close(); bb:close(); bc:close()
end

local ebest, _, erep = tune(true)
local pruned_in_exh = erep[rep.best].ms
local loss = pruned_in_exh and (pruned_in_exh / erep[erep.best].ms - 1) * 100 or nil
print(("exhaustive search: %.1f s, %d measured; winner #%d (%.4f ms), model-pruned winner #%d there: %s ms -> %s"):format(
      erep.seconds, erep.stats.measured, erep.best, erep[erep.best].ms, rep.best, pruned_in_exh and ("%.4f"):format(pruned_in_exh) or "?",
      erep.best == rep.best and "same winner" or ("loss %.2f%%"):format(loss or 0)))

-- remembered lookups: the first in this process builds the winner and loads it from the compile
-- cache (a new build function, so nothing of this state is reused); repeated ones reuse its executable
local _, _, first = ckt.autotune{name = "bench/autotune.lua gemm", build = function(c) return build(c) end, space = space, problem = problem,
                                 target = target, quiet = true}
assert(first.remembered, "the choice was not remembered")
print(("remembered, first call in a process: lookup %.3f ms, whole call %.1f ms"):format(first.lookup_ms, first.seconds * 1e3))
local lookups, calls = {}, {}
for i = 1, 200 do
  local _, _, r = ckt.autotune{name = "bench/autotune.lua gemm", build = build, space = space, problem = problem, target = target, quiet = true}
  assert(r.remembered, "the choice was not remembered")
  lookups[i], calls[i] = r.lookup_ms, r.seconds * 1e3
end
local lookup, call = bench.median(lookups), bench.median(calls)
print(("remembered, repeated: lookup %.3f ms (median of 200; limit 1 ms), whole call %.3f ms"):format(lookup, call))

A:close(); B:close(); C:close()
local rows = {}
for i, e in ipairs(rep) do
  rows[i] = {tile = e.config.tile, block = e.config.block, stages = e.config.stages, swizzle = e.config.swizzle, status = e.status, reason = e.reason, ms = e.ms,
             compile_ms = e.compile_ms, lds_bytes = e.lds_bytes, bank_factor = e.bank_factor, registers = e.registers, spills = e.spills,
             exhaustive_ms = erep[i].ms}
end
bench.write_json(json_path, {device = dev:name(), target = target, date = os.date("!%Y-%m-%d"), problem = {dtype = dt, M = M, N = N, K = K},
                             candidates = #rep, search_s = rep.seconds, measured = s.measured, pruned = s.pruned, failed = s.failed,
                             pruned_by = by, winner = rep.best, exhaustive_winner = erep.best, exhaustive_s = erep.seconds,
                             loss_pct = erep.best == rep.best and 0 or loss, lookup_ms = lookup, remembered_call_ms = call,
                             first_remembered_call_ms = first.seconds * 1e3, first_lookup_ms = first.lookup_ms, rows = rows})
