-- Launches from a sandboxed script (issue 15): kernels with no pointers (a sandbox has no device
-- buffers) whose windows go where the script says -- LDS windows at runtime origins far out of
-- range, padded windows at negative origins, sizes of 0 -- and compile options that would run or
-- read host files. Each must end in a result or a clear error, never a signal.
local function expect_error(f, needle)
  local ok, e = pcall(f)
  assert(not ok, "expected an error mentioning " .. needle)
  assert(tostring(e):find(needle, 1, true), tostring(e))
end

local lds = ckt.kernel{name = "lds_far", block = 64, build = function(b)
  local o = b:size("o")
  local s = ckt.tensor("lds", "f32", ckt.layout{64})
  local w = ckt.tile_window(s, {64}, {o})
  w:store(w:load())
end}:compile{target = "cpu"}
lds:launch{grid = 1, o = 0}
for _, o in ipairs{1, 63, 64, 1 << 20, (1 << 31) - 1} do
  expect_error(function() lds:launch{grid = {3, 2}, o = o} end, "left its tensor")
end

-- an LDS window at an origin below zero, through a runtime size
local neg = ckt.kernel{name = "lds_neg", block = 64, build = function(b)
  local o = b:size("o")
  local s = ckt.tensor("lds", "f32", ckt.layout{128})
  local w = ckt.tile_window(s, {64}, {o - 1000})
  w:store(w:load())
end}:compile{target = "cpu"}
expect_error(function() neg:launch{grid = 1, o = 0} end, "left its tensor")
neg:launch{grid = 1, o = 1000}

-- the compile options a sandbox may not pass
local k = ckt.kernel{name = "opts", block = 32, build = function(b) end}
for _, opt in ipairs{"-wrapper", "/bin/sh,-c,id", "-B/tmp", "@/etc/passwd", "-fplugin=x.so", "-specs=x", "--help"} do
  expect_error(function() k:compile{target = "cpu", options = {opt}} end, "not allowed in a sandboxed state")
end
assert(package.searchpath == nil)
-- the instruction budget is not pcall-able: counted here only as far as the state is concerned
print("sandbox launches: all refused or run")
