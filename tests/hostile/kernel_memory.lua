-- Regression: a kernel's IR is allocated by the engine (about 270 KB each for the expression
-- pool's leaf tables, more as it grows) outside the Lua allocator; kept alive in a table, 3,000
-- empty kernels once took 830 MB of RSS in a state capped at 16 MiB. The bindings now charge each
-- kernel's footprint to the state (a ballast userdata), so the cap stops this loop.
local kept = {}
local ok, e = pcall(function()
  for i = 1, 400 do kept[i] = ckt.kernel{name = "k", block = 1, build = function() end} end
end)
local n = #kept
kept = nil
collectgarbage()
assert(not ok and tostring(e):find("memory"),
  ("%d kernels (about %d MiB of IR outside the Lua allocator) held in a state capped at %d MiB"):format(n, n * 270 // 1024, MEMORY_LIMIT >> 20))
print("kernel_memory: stopped by the memory cap")
