-- ckt.array's elements are host memory: in a sandbox they must count against the state's memory
-- cap, or one line takes gigabytes from the host. Found by the fuzz helper: ckt.array("f32", 2^28)
-- allocated 1 GiB in a state capped at 16 MiB (l_array.c allocates with aligned_alloc, outside
-- the Lua allocator that enforces the cap).
local n = MEMORY_LIMIT -- 4 bytes each: four times the cap
local ok, e = pcall(ckt.array, "f32", n)
if ok then
  local bytes = e:bytes()
  e:close()
  error(("a %d-byte ckt.array was allocated in a sandbox capped at %d bytes (host memory outside the cap)"):format(bytes, MEMORY_LIMIT))
end
assert(type(e) == "string" and #e > 0)
-- many small arrays add up too
local keep, made = {}, 0
ok, e = pcall(function()
  for i = 1, 64 do keep[i] = ckt.array("u8", MEMORY_LIMIT // 8); made = i end
end)
keep = nil
collectgarbage()
assert(not ok and made < 8, ("%d arrays of %d bytes were allocated in a sandbox capped at %d bytes"):format(made, MEMORY_LIMIT // 8, MEMORY_LIMIT))
print("sandbox_array_memory: capped")
