-- Huge, negative and overflowing window lengths, origins and steps, shared subexpressions that
-- multiply when written out (x = x * x forty times is 2^40 nodes; every analysis walked them),
-- and register tiles beyond the per-thread capacity: refused with clear errors, never a hang.
local function refused(what, pattern, build)
  local ok, e = pcall(ckt.kernel, {name = "k", block = 256, build = build})
  assert(not ok, what .. ": accepted")
  e = tostring(e)
  print(what .. ": " .. e:sub(1, 160))
  assert(e:find(pattern) or e:find("sandbox") or e:find("not enough memory"), what .. ": unclear error: " .. e)
end
local function tensor(b, n) return ckt.tensor(b:pointer("x", "f32"), "f32", {shape = {n or (1 << 40)}}) end
refused("window (1 << 40)", "not a tile", function(b) ckt.tile_window(tensor(b), {(1 << 40)}, {0}) end)
refused("window (1 << 62)", "window length 4611686018427387904 of dim 0 is not a tile", function(b) ckt.tile_window(tensor(b, (1 << 62)), {(1 << 62)}, {0}) end)
refused("window -1", ">= 1", function(b) ckt.tile_window(tensor(b), {-1}, {0}) end)
refused("window origin -2^63", "negative", function(b) ckt.tile_window(tensor(b), {64}, {math.mininteger}) end)
refused("window (1 << 20) loaded", "values per thread", function(b) ckt.tile_window(tensor(b, (1 << 20)), {(1 << 20)}, {0}):load() end)
refused("(1 << 20) x (1 << 20) window", "more than 256 values per thread", function(b)
  local t = ckt.tensor(b:pointer("x", "f32"), "f32", {shape = {(1 << 20), (1 << 20)}})
  ckt.tile_window(t, {(1 << 20), (1 << 20)}, {0, 0}):load()
end)
refused("local_tile coords overflow", "overflow", function(b) ckt.local_tile(tensor(b), {(1 << 20)}, {(1 << 62)}) end)
-- origins moved past 2^63: the kernel may build; its source for every target is a result or an error
local ok, k = pcall(ckt.kernel, {name = "far", block = 256, build = function(b)
  local w = ckt.tile_window(tensor(b), {64}, {0})
  for _ = 1, 8 do w:move({1 << 62}) end
  w:load()
end})
if ok then for _, t in ipairs{"cpu", "gfx90a", "sm_90"} do pcall(k.source, k, t) end end
refused("x = x * x forty times", "written out", function(b)
  local e = b:thread_id() + b:size("n")
  for _ = 1, 40 do e = e * e end
  ckt.min(e, 5)
end)
refused("select chain sharing its operands", "written out", function(b)
  local e = b:thread_id()
  for _ = 1, 60 do e = ckt.select(ckt.lt(e, 3), e, e + 1) end
end)
refused("exp chain 10^5 deep", "written out", function(b)
  local r = ckt.tile_window(tensor(b, 4096), {256}, {0}):load()
  b:map(function(v) for _ = 1, 1e5 do v = ckt.exp(v) end return v end, r)
end)
refused("an input kept from another map", "beyond", function(b)
  local r = ckt.tile_window(tensor(b, 4096), {64}, {0}):load()
  local third
  b:map(function(p, _, s) third = s return p end, r, r, r)
  b:map(function(v) return v + third end, r)
end)
local k = ckt.kernel{name = "ok", block = 256, build = function(b)
  local w = ckt.tile_window(tensor(b, 4096), {256}, {b:block_id() * 256})
  w:move({256})
  b:map(function(v) return v end, w:load())
end}
assert(#k:source("gfx90a") > 0)
print("kernel_huge_windows: refused")
