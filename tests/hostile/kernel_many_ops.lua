-- The kernel builder asked for millions of operations, tensors and expression nodes in one
-- build: every IR capacity (4096 tensors, 65536 operations, 2^20 expression nodes) must answer
-- with a clear error (or the sandbox's instruction / memory cap must stop the loop), and the
-- state must go on building a normal kernel afterwards.
local function stopped(what, pattern, build)
  local ok, e = pcall(ckt.kernel, {name = "k", block = 64, build = build})
  assert(not ok, what .. ": a kernel of millions of operations was accepted")
  e = tostring(e)
  print(what .. ": " .. e:sub(1, 160))
  assert(e:find(pattern) or e:find("sandbox") or e:find("not enough memory"), what .. ": unclear error: " .. e)
end
local function copy_in(b)
  local x = b:pointer("x", "f32")
  local t = ckt.tensor(x, "f32", {shape = {4096}})
  return ckt.tile_window(t, {64}, {0}):load()
end
-- b:map in a Lua loop: a new register tensor per call
stopped("map x 1e6", "more than 4096 tensors", function(b)
  local r = copy_in(b)
  for _ = 1, 1e6 do r = b:map(function(v) return v * 2 + 1 end, r) end
end)
-- operations that make no tensor: barriers and clears
stopped("sync x 1e6", "more than 65536 operations", function(b) for _ = 1, 1e6 do b:sync() end end)
stopped("clear x 1e6", "more than 65536 operations", function(b)
  local r = copy_in(b)
  for _ = 1, 1e6 do b:clear(r, 1) end
end)
-- expression nodes: distinct constants and sums
stopped("expressions x 2e6", "nodes", function(b)
  local e, n = b:thread_id(), b:size("n")
  for i = 1, 2e6 do e = ckt.max(e + i, n * i) end
end)
-- the host still builds and emits a normal kernel
local k = ckt.kernel{name = "ok", block = 64, build = function(b)
  local x, y = b:pointer("x", "f32"), b:pointer("y", "f32")
  local tx, ty = ckt.tensor(x, "f32", {shape = {4096}}), ckt.tensor(y, "f32", {shape = {4096}})
  local o = b:block_id() * 64
  ckt.tile_window(ty, {64}, {o}):store(b:map(function(v) return v + 1 end, ckt.tile_window(tx, {64}, {o}):load()))
end}
assert(k:source("cpu"):find("ok", 1, true))
print("kernel_many_ops: stopped")
