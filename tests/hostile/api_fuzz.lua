-- A Lua-level API fuzzer: every ckt function and every method of every object type, called
-- with random arguments (wrong types, huge/negative numbers, NaN, nested and cyclic tables,
-- userdata of the wrong kind, nil, garbage strings). The only acceptable outcomes are a result
-- or a Lua error with a non-empty message — never a crash, hang or abort.
-- Runs in ckt-lua, in a stock lua5.4 (require "ckt"), and in the sandboxed embedding under ASan.
local ckt = ckt or require "ckt"
local function env(name) -- os.getenv is refused in the sandbox
  local ok, v = pcall(function() return os.getenv(name) end)
  return ok and v or nil
end
local seed = tonumber(env("CKT_FUZZ_SEED")) or 1234
local calls = tonumber(env("CKT_FUZZ_CALLS")) or 20000
math.randomseed(seed)

local samples = {
  ckt.layout({4, {2, 8}}, {16, {1, 2}}), ckt.layout(12), ckt.swizzle(3, 3, 3),
  ckt.composed(ckt.swizzle(2, 0, 2), 0, ckt.layout({4, 4}, "row")),
  ckt.encoding_pattern_2d{block_size = 64, y_per_tile = 16, x_per_tile = 16, vec_size = 4},
  ckt.nested_layout{subgroup_tile = {1, 1}, batch_tile = {1, 1}, outer_tile = {1, 1}, thread_tile = {4, 16},
    element_tile = {4, 1}, subgroup_strides = {0, 0}, thread_strides = {16, 1}},
  ckt.fragment("mma_m16n8k16", "C"), ckt.sfc{lengths = {4, 8}, snake = true},
}
-- object types whose constructors may be missing here (refused in the sandbox, not built yet,
-- no compiler): each one that can be made joins the samples and its methods get fuzzed
local optional = {
  function() return ckt.target("gfx90a") end,
  function() return ckt.compile{target = "cpu", source = "void k(void) {}", name = "k"} end,
  function() return ckt.device and ckt.device("cpu") end,
  function() return ckt.device and ckt.device("cpu"):alloc("f32", 16) end,
  function() return ckt.array and ckt.array("f32", {4, 4}) end,
  function() return ckt.tensor and ckt.tensor(ckt.layout({4, 4}), "f32") end,
  function() return ckt.kernel and ckt.kernel{name = "k", target = "cpu"} end,
}
for _, make in ipairs(optional) do
  local ok, v = pcall(make)
  if ok and v ~= nil and getmetatable(v) ~= nil then samples[#samples + 1] = v end
end
local cyclic = {}
cyclic[1] = cyclic
local atoms = {nil, false, true, 0, -1, 1, 2, 3, 4, 7, 8, 16, 64, 255, 2^31, 2^53, 2^63, -2^63, math.maxinteger,
  math.mininteger, 0.5, -0.0, 1/0, -1/0, 0/0, "", "x", "(4,2):(1,4)", "((((", ("9"):rep(40), ("("):rep(300),
  "row", "thread_raked", "gfx90a", "sm_90", "ds_read_b128", "f16", {}, {1}, {0}, {-1}, {4, 8}, {{2, 2}, 4}, {{}},
  cyclic, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, function() end, print}
for _, s in ipairs(samples) do atoms[#atoms + 1] = s end

local function random_value(depth)
  local r = math.random()
  if r < 0.55 or depth > 2 then return atoms[math.random(#atoms)] end
  if r < 0.8 then
    local t = {}
    for i = 1, math.random(0, 5) do t[i] = random_value(depth + 1) end
    return t
  end
  -- an options table with plausible and implausible keys
  local keys = {"lengths", "order", "scalars_per_access", "snake", "block_size", "y_per_tile", "x_per_tile", "vec_size",
    "pattern", "warp_size", "num_wave_groups", "target", "instr", "addresses", "tensor_layout", "dtype", "thread_map",
    "vector", "op", "layout", "write", "read", "labels", "title", "strict", "subgroup_tile", "batch_tile", "outer_tile",
    "thread_tile", "element_tile", "subgroup_strides", "thread_strides", "rs", "hs", "ps_to_rhs_major",
    "ps_to_rhs_minor", "ys_to_rhs_major", "ys_to_rhs_minor", "bogus"}
  local t = {}
  for _ = 1, math.random(0, 6) do t[keys[math.random(#keys)]] = random_value(depth + 1) end
  return t
end

-- the callables: module functions and methods of each sample type
local callables = {}
for name, f in pairs(ckt) do
  if type(f) == "function" and name ~= "help" then callables[#callables + 1] = {name, f, false} end
end
if ckt.lds then for name, f in pairs(ckt.lds) do callables[#callables + 1] = {"lds." .. name, f, false} end end
for si, s in ipairs(samples) do
  local mt = getmetatable(s)
  local methods = {}
  for name, f in pairs(mt) do methods[name] = f end
  if type(mt.__index) == "table" then for name, f in pairs(mt.__index) do methods[name] = methods[name] or f end end
  for name, f in pairs(methods) do
    if type(f) == "function" and name ~= "__gc" and name ~= "__close" then callables[#callables + 1] = {name, f, true, si} end
  end
end
-- a fixed order (pairs' order differs between states), so a seed replays the same calls
table.sort(callables, function(a, b)
  if a[1] ~= b[1] then return a[1] < b[1] end
  return (a[4] or 0) < (b[4] or 0)
end)

-- Allocations the API allows (ckt.array, device:alloc up to 64 GiB) are results, not bugs, but
-- gigabytes would take the test machine down: calls whose numbers multiply to between 2^24
-- and 2^40 elements are skipped; smaller ones run, larger ones must be refused.
local allocators = {array = true, alloc = true}
local function allocation_elements(args, n)
  local p = 1
  for i = 1, n do
    local a = args[i]
    if type(a) == "number" then p = p * math.abs(a)
    elseif type(a) == "table" and getmetatable(a) == nil then
      for _, v in pairs(a) do if type(v) == "number" then p = p * math.abs(v) end end
    end
  end
  return p
end

local ok_count, err_count, skipped = 0, 0, 0
for _ = 1, calls do
  local c = callables[math.random(#callables)]
  local args, n = {}, math.random(0, 4)
  if c[3] then args[1] = samples[math.random(#samples)] end
  for i = #args + 1, n do args[i] = random_value(0) end
  local elements = allocators[c[1]] and allocation_elements(args, math.max(n, #args)) or 0
  if elements > 2^24 and elements < 2^40 then skipped = skipped + 1; goto continue end
  local ok, e = pcall(c[2], table.unpack(args, 1, math.max(n, #args)))
  if ok then ok_count = ok_count + 1
  else
    if type(e) ~= "string" or #e == 0 then error(("%s returned a bad error object: %s"):format(c[1], tostring(e))) end
    err_count = err_count + 1
  end
  ::continue::
end
print(("api fuzz: %d calls over %d callables of %d object types: %d results, %d clean errors, %d huge allocations skipped (seed %d)"):format(calls, #callables, #samples, ok_count, err_count, skipped, seed))
print("1 passed, 0 failed")
