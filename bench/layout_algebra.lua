-- Benchmark (not a test): layouts from Lua on one core. Budget (issue 3): >= 5 M evaluations/s.
-- Run: ckt-lua bench/layout_algebra.lua   (writes bench/results/layout_algebra_lua.json)
local L = ckt.layout({4, {2, 8}}, {16, {1, 2}})
local clock = os.clock

local function rate(f, seconds)
  local n, t0 = 0, clock()
  repeat f(); n = n + 1 until clock() - t0 >= seconds
  return n / (clock() - t0)
end

local sink = 0
local evals = rate(function() for i = 0, 99999 do sink = sink + L(i & 63) end end, 1.0) * 100000
local coords = rate(function() for i = 0, 9999 do sink = sink + L(i & 3, {1, i & 7}) end end, 0.5) * 10000
local ops = {
  {"composition", "(4,3):(3,1)", "6:2"}, {"composition", "12:2", "(4,3):(3,1)"},
  {"logical_divide", "32:1", "2:8"}, {"blocked_product", "(2,5):(5,1)", "(3,4):(1,3)"},
}
print("| measurement | value | budget |\n|---|---|---|")
print(("| Lua evaluations/s of %s, L(i) | %.2f M/s | >= 5 M/s |"):format(tostring(L), evals / 1e6))
print(("| Lua evaluations/s, L(i, {j, k}) | %.2f M/s | - |"):format(coords / 1e6))
local rows = {}
for _, op in ipairs(ops) do
  local f, a, b = ckt[op[1]], ckt.layout(op[2]), ckt.layout(op[3])
  local us = 1e6 / (rate(function() for _ = 1, 1000 do f(a, b) end end, 0.3) * 1000)
  print(("| ckt.%s(%s, %s) from Lua | %.3f us | - |"):format(op[1], op[2], op[3], us))
  rows[#rows + 1] = ('    {"op": "%s", "a": "%s", "b": "%s", "us": %.4f}'):format(op[1], op[2], op[3], us)
end
local f = io.open("bench/results/layout_algebra_lua.json", "w")
if f then
  f:write(('{\n  "what": "layouts from Lua, one core, bench/layout_algebra.lua",\n  "lua_evals_per_s": %.0f,\n  "lua_coord_evals_per_s": %.0f,\n  "ops_us": [\n%s\n  ]\n}\n')
    :format(evals, coords, table.concat(rows, ",\n")))
  f:close()
end
