-- Benchmark (not a test): layout evaluation from Lua. Budget (issue 3): >= 5 M evaluations/s.
-- Run: ckt-lua bench/layout_algebra.lua   (writes bench/results/layout_algebra_lua.json)
local L = ckt.layout({4, {2, 8}}, {16, {1, 2}})
local clock = os.clock
local n, sink, t0 = 0, 0, clock()
repeat
  for i = 0, 99999 do sink = sink + L(i & 63) end
  n = n + 100000
until clock() - t0 >= 1.0
local rate = n / (clock() - t0)
local A, B = ckt.layout("(4,3):(3,1)"), ckt.layout("6:2")
local m, t1 = 0, clock()
repeat
  for _ = 1, 10000 do ckt.composition(A, B) end
  m = m + 10000
until clock() - t1 >= 0.5
local comp_us = (clock() - t1) / m * 1e6
print("| measurement | value | budget |\n|---|---|---|")
print(("| Lua evaluations/s of %s | %.2f M/s | >= 5 M/s |"):format(tostring(L), rate / 1e6))
print(("| Lua ckt.composition (4,3):(3,1) o 6:2 | %.3f us | - |"):format(comp_us))
local f = io.open("bench/results/layout_algebra_lua.json", "w")
if f then f:write(('{"lua_evals_per_s": %.0f, "lua_composition_us": %.4f}\n'):format(rate, comp_us)); f:close() end
