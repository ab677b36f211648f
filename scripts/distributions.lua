-- Who owns which element: CK Tile encodings, IREE nested layouts and MFMA fragments, shown and compared.
-- Run: ckt-lua --target cpu scripts/distributions.lua

print("== CK Tile's tile_distribution_encoding_pattern_2d: the three raked patterns of a 64x64 fp16 tile on 256 threads (vec_size 8)")
local patterns = {}
for _, p in ipairs{"thread_raked", "warp_raked", "block_raked"} do
  local E = ckt.encoding_pattern_2d{block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8, pattern = p}
  patterns[p] = E
  print(E)
  print(("   ys lengths {%s}; TV layout %s"):format(table.concat(E:ys_lengths(), ","), tostring(E:tv_layout())))
  -- thread 65 is warp 1, lane 1; its first and last values
  local first, last = E:calculate_index(65, {0, 0}), E:calculate_index(65, {E:ys_lengths()[1] - 1, 7})
  print(("   thread 65 holds rows/cols (%d,%d) .. (%d,%d)"):format(first[1], first[2], last[1], last[2]))
end
-- the iteration sits after the thread, between warp and thread, or before the warp: different owners
assert(not ckt.same_distribution(patterns.thread_raked, patterns.warp_raked))
assert(not ckt.same_distribution(patterns.warp_raked, patterns.block_raked))
local t, ys = patterns.warp_raked:owner({17, 11})
print(("   warp raked: element (17, 11) is thread %d, Y = {%d, %d}"):format(t[1], ys[1], ys[2]))

-- thread and warp raked are IREE nested layouts too: the warp is the subgroup, the lane (row, column)
-- the thread tile, the iterations elements (thread raked) or batches (warp raked)
local as_nested = ckt.nested_layout{subgroup_tile = {4, 1}, batch_tile = {2, 1}, outer_tile = {1, 1}, thread_tile = {8, 8},
  element_tile = {1, 8}, subgroup_strides = {1, 0}, thread_strides = {8, 1}}
print("   warp raked == " .. tostring(as_nested) .. ": " .. tostring(ckt.same_distribution(patterns.warp_raked, as_nested, {strict = true})))
assert(ckt.same_distribution(patterns.warp_raked, as_nested, {strict = true}))
assert(not ckt.same_distribution(patterns.block_raked, as_nested)) -- its iteration sits above the warp

print("\n== the same pattern, drawn small: a 16x16 tile on 64 threads of 32-wide warps, vectors of 4")
print(ckt.encoding_pattern_2d{block_size = 64, y_per_tile = 16, x_per_tile = 16, vec_size = 4, pattern = "warp_raked", warp_size = 32}:grid())

print("== two wave groups (CK: R = <Y0> replicates the warps of one group)")
local G = ckt.encoding_pattern_2d{block_size = 512, y_per_tile = 64, x_per_tile = 64, vec_size = 8, num_wave_groups = 2}
print(G)
print("   owners of (3, 9): " .. table.concat(G:owner({3, 9}), ", "))

print("\n== what CK refuses, ckt refuses with the equation")
for _, cfg in ipairs{
  {block_size = 256, y_per_tile = 48, x_per_tile = 64, vec_size = 8},
  {block_size = 256, y_per_tile = 64, x_per_tile = 1024, vec_size = 8, pattern = "warp_raked"},
  {block_size = 64, y_per_tile = 16, x_per_tile = 14, vec_size = 7},
} do
  local ok, err = pcall(ckt.encoding_pattern_2d, cfg)
  assert(not ok)
  print("   " .. err)
end

print("\n== IREE's NestedLayoutAttr: a nested layout for vector<64x64xf16>")
local N = ckt.nested_layout{subgroup_tile = {2, 1}, batch_tile = {2, 4}, outer_tile = {1, 1}, thread_tile = {16, 4},
  element_tile = {1, 4}, subgroup_strides = {1, 0}, thread_strides = {1, 16}}
print(N)
local function first(list, n)
  local out = {}
  for i = 1, n do out[#out + 1] = ("(%d,%d)"):format(list[i][1], list[i][2]) end
  return table.concat(out, " ")
end
local e0, e16 = N:elements(0), N:elements(16)
assert(#e0 == 32 and e16[1][1] == 0 and e16[1][2] == 4)
print("thread 0 owns  " .. first(e0, 6) .. " ... (" .. #e0 .. " elements: vector<2x16>)")
print("thread 16 owns " .. first(e16, 6) .. " ... (virtual thread (0, 1))")
print("distributed shape {" .. table.concat(N:distributed_shape(), ",") .. "}, " .. N:num_threads() ..
  " threads, TV layout " .. tostring(N:tv_layout()))

print("\n== an MFMA C fragment three ways: the lane table, an IREE nested layout, a CK encoding")
local frag = ckt.fragment("mfma_f32_16x16x16f16", "C")
-- written by hand from the reference docs ...
local nested = ckt.nested_layout{subgroup_tile = {1, 1}, batch_tile = {1, 1}, outer_tile = {1, 1}, thread_tile = {4, 16},
  element_tile = {4, 1}, subgroup_strides = {0, 0}, thread_strides = {16, 1}}
-- rows = (4 lane groups, 4 registers), columns = 16 lanes; P0 = the lane = (row group, column)
local enc = ckt.tile_distribution_encoding{rs = {}, hs = {{4, 4}, {16}}, ps_to_rhs_major = {{1, 2}},
  ps_to_rhs_minor = {{0, 0}}, ys_to_rhs_major = {1}, ys_to_rhs_minor = {1}}
print(frag)
print("nested TV   " .. tostring(nested:tv_layout()))
print("encoding TV " .. tostring(enc:tv_layout()))
local same_n, same_e = ckt.same_distribution(frag, nested, {strict = true}), ckt.same_distribution(frag, enc, {strict = true})
print("same_distribution(fragment, nested, strict)   = " .. tostring(same_n))
print("same_distribution(fragment, encoding, strict) = " .. tostring(same_e))
assert(same_n and same_e)
-- ... and as ckt ships them
assert(ckt.same_distribution(frag:nested(), nested, {strict = true}) and ckt.same_distribution(frag:encoding(), enc, {strict = true}))
-- a perturbed nested layout (thread strides swapped) is another distribution
local swapped = ckt.nested_layout{subgroup_tile = {1, 1}, batch_tile = {1, 1}, outer_tile = {1, 1}, thread_tile = {4, 16},
  element_tile = {4, 1}, subgroup_strides = {0, 0}, thread_strides = {1, 4}}
print("same_distribution(fragment, swapped strides) = " .. tostring(ckt.same_distribution(frag, swapped)))
assert(not ckt.same_distribution(frag, swapped))
print(frag:grid())

print("== the 32x32x8 C fragment: 16 registers, batches of 4 rows")
local c32 = ckt.fragment("mfma_f32_32x32x8f16", "C")
print(c32:nested())
print(c32:encoding())

print("\n== NVIDIA mma.sync m16n8k16 (32 lanes)")
for _, op in ipairs{"A", "B", "C"} do
  local F = ckt.fragment("mma_m16n8k16", op)
  print(F)
  assert(ckt.same_distribution(F, F:nested(), {strict = true}))
end
print(ckt.fragment("mma_m16n8k16", "C"):grid())
