-- Autotuning from a script, end to end on the default target (ckt-lua --target NAME, or cpu):
--   1. ckt.autotune over the transpose's tile, block and LDS swizzle: the bank model prunes the
--      unswizzled tiles before they compile, tiles that do not divide the problem are pruned,
--      the rest compile on a pool of host threads and run on the device; the winner is checked
--      element by element against the CPU reference (poisoned output first);
--   2. the same call again: the remembered choice, no measurement;
--   3. the kernel library's own `autotune = true` (the copy kernel).
local tr = require "ckt.kernels.transpose"
local copy = require "ckt.kernels.copy"

local target = ckt.default_target()
local rec = ckt.target(target)
local dev = ckt.device(rec.runtime)
local cpu = rec.runtime == "cpu"
local M, N = cpu and 192 or 8192, cpu and 256 or 8192
local dt = "f32"

local xs = ckt.array(dt, M * N):random{seed = 11, lo = -1, hi = 1}
local x, y = dev:alloc(dt, M * N), dev:alloc(dt, M * N)
x:upload(xs)

local function tune(force)
  return ckt.autotune{
    name = "scripts/autotune.lua transpose",
    space = {tile = cpu and {{32, 32}, {64, 64}, {128, 128}} or {{32, 32}, {64, 64}, {64, 128}, {128, 64}},
             block = {64, 256}, swizzle = {true, false}},
    build = function(c)
      local k, grid, why, p = tr.build{dtype = dt, tile = c.tile, block = c.block, swizzle = c.swizzle, target = target}
      -- the predicted cost: the bank model's cycles for the plan's two LDS accesses, and their
      -- conflict-free ideal (what ckt.autotune compares between candidates)
      local cycles, ideal = 0, 0
      for _, a in ipairs{{p.write, "write"}, {p.read, "read"}} do
        local r = ckt.lds.analyze_tensor{target = rec.arch, tensor_layout = p.lds, dtype = dt, thread_map = a[1], vector = p.v, op = a[2]}
        cycles, ideal = cycles + r.cycles, ideal + r.ideal_cycles
      end
      return k, grid(M, N), {bank_cycles = cycles, bank_ideal = ideal}
    end,
    problem = {X = x, Y = y, M = M, N = N},
    target = target, force = force, runs = cpu and 3 or 20,
  }
end

print(("target %s on %s, transpose %s %dx%d"):format(target, dev:name(), dt, M, N))
local best, exe, report = tune(true)
print("| # | tile | block | swizzle | status | ms | why |")
print("|---|---|---|---|---|---|---|")
for i, e in ipairs(report) do
  local c = e.config
  print(("| %d | %dx%d | %d | %s | %s | %s | %s |"):format(i, c.tile[1], c.tile[2], c.block, tostring(c.swizzle), e.status,
        e.ms and ("%.4f"):format(e.ms) or "", e.reason or ""))
end
local s = report.stats
print(("%d candidates: %d measured, %d pruned, %d failed, %d compiled; best #%d: tile %dx%d, %d threads, swizzle %s"):format(
      #report, s.measured, s.pruned, s.failed, s.compiled, report.best, best.tile[1], best.tile[2], best.block, tostring(best.swizzle)))

-- the winner against the reference
y:upload(ckt.array(dt, M * N):poison())
exe:launch{grid = (M // best.tile[1]) * (N // best.tile[2]), X = x, Y = y, M = M, N = N}
local ys = ckt.array(dt, M * N)
y:download(ys)
assert(ys:compare(tr.reference(xs, M, N), {rtol = 0, atol = 0}), "the tuned transpose is wrong")
print("the winner matches the reference")

-- the remembered choice
local again, _, r2 = tune(false)
assert(r2.remembered and again.block == best.block and again.tile[1] == best.tile[1], "the choice was not remembered")
print(("second call: remembered (#%d), nothing measured"):format(r2.index))

-- the library
local k, grid, lib = copy.build{dtype = dt, autotune = {quiet = true, runs = cpu and 2 or 10}}
print(("copy.build{autotune = true}: tile %dx%d, %d threads (%s)"):format(lib.config.tile[1], lib.config.tile[2], lib.config.block,
      lib.remembered and "remembered" or ("%d measured"):format(lib.stats.measured)))
x:close(); y:close()
