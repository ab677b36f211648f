-- Deep nesting and misbehaving build functions: loops and branches nested beyond the IR's
-- depth, a build function that recurses without end, errors midway (also with error objects
-- whose __tostring loops), builds a kernel inside a kernel, yields, or leaks its builder. Each
-- must end in a clear error (or the sandbox's caps), and the state must stay usable.
local function fails(what, f)
  local ok, e = pcall(f)
  assert(not ok, what .. ": no error")
  return e
end
local function kernel(build) return ckt.kernel{name = "k", block = 64, build = build} end
local function has(e, pattern, what)
  local ok, s = pcall(tostring, e)
  print(what .. ": " .. tostring(ok and s:sub(1, 160)))
  assert(ok and type(s) == "string" and (s:find(pattern) or s:find("sandbox") or s:find("stack") or s:find("memory")), what .. ": unclear error: " .. tostring(ok and s))
end
has(fails("loops 10^4 deep", function()
  kernel(function(b)
    local function nest(d) if d < 1e4 then b:loop(2, function() nest(d + 1) end) end end
    nest(0)
  end)
end), "nested deeper", "loops 10^4 deep")
has(fails("branches 10^4 deep", function()
  kernel(function(b)
    local t = b:thread_id()
    local function nest(d) if d < 1e4 then b:when(ckt.lt(t, 32), function() nest(d + 1) end) end end
    nest(0)
  end)
end), "nested deeper", "branches 10^4 deep")
has(fails("recursing build", function()
  kernel(function(b) local function r(n) return r(n + 1) + 1 end r(0) end)
end), "stack", "recursing build")
has(fails("build that errors midway", function()
  kernel(function(b)
    local x = b:pointer("x", "f32")
    b:loop(8, function() b:sync() error("midway") end)
  end)
end), "midway", "build that errors midway")
fails("error object with a looping __tostring", function()
  kernel(function() error(setmetatable({}, {__tostring = function() while true do end end})) end)
end)
has(fails("kernel inside a kernel", function()
  kernel(function() kernel(function() end) end)
end), "inside another kernel", "kernel inside a kernel")
has(fails("yield from build", function()
  coroutine.wrap(function() kernel(function() coroutine.yield(1) end) end)()
end), "yield", "yield from build")
-- a loop whose body failed under pcall stays open: the kernel must not be built
has(fails("unbalanced loop", function()
  kernel(function(b) pcall(b.loop, b, 4, function() error("inner") end) end)
end), "left open", "unbalanced loop")
-- the builder kept after the build refuses further calls
local saved
kernel(function(b) saved = b end)
has(fails("builder after build", function() saved:loop(2, function() end) end), "already built", "builder after build")
has(fails("builder after build: sync", function() saved:sync() end), "already built", "builder after build: sync")
-- still serving
local k = kernel(function(b) b:loop(4, function(i) b:when(ckt.lt(i, 2), function() b:sync() end) end) end)
assert(k:source("cpu"):find("for", 1, true))
print("kernel_deep_nesting: stopped")
