-- OPEN (this regression fails; registered WILL_FAIL until it is fixed): a kernel's IR is
-- allocated by the engine (calloc in ckt_kernel_create, about 270 KB each for the expression
-- pool's leaf tables, plus up to 2^20 expression nodes) outside the Lua allocator, so a sandbox's
-- memory cap does not see it. Kernels kept alive in a table grow the host without limit: 3,000
-- empty kernels took 830 MB of RSS in a state capped at 16 MiB. The cap must stop this loop.
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
