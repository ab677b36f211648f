-- Who owns which element: CK Tile encodings, IREE nested layouts and MFMA fragments, shown and compared.
print("== the three raked patterns of seed 000: a 64x64 fp16 tile on 256 threads, vectors of 8")
for _, p in ipairs{"thread_raked", "warp_raked", "block_raked"} do
  local E = ckt.encoding_pattern_2d{block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8, pattern = p}
  print(E)
  print(("   ys lengths {%s}, TV layout %s"):format(table.concat(E:ys_lengths(), ","), tostring(E:tv_layout())))
  local x = E:calculate_index(65, {1, 3})
  print(("   thread 65, Y = {1, 3} -> row %d, column %d"):format(x[1], x[2]))
end
-- a small one drawn in full: 16x16 tile, 64 threads of a 32-wide warp, vectors of 4
local small = ckt.encoding_pattern_2d{block_size = 64, y_per_tile = 16, x_per_tile = 16, vec_size = 4, pattern = "warp_raked", warp_size = 32}
print(small:grid())

print("== seed 002: IREE nested layout for vector<64x64xf16>")
local N = ckt.nested_layout{subgroup_tile = {2, 1}, batch_tile = {2, 4}, outer_tile = {1, 1}, thread_tile = {16, 4},
  element_tile = {1, 4}, subgroup_strides = {1, 0}, thread_strides = {1, 16}}
print(N)
local function first(list, n)
  local t = {}
  for i = 1, n do t[#t + 1] = ("(%d,%d)"):format(list[i][1], list[i][2]) end
  return table.concat(t, " ")
end
print("thread 0 owns  " .. first(N:elements(0), 8) .. " ... (" .. #N:elements(0) .. " elements: vector<2x16>)")
print("thread 16 owns " .. first(N:elements(16), 8) .. " ... (virtual thread (0, 1))")
print("distributed shape {" .. table.concat(N:distributed_shape(), ",") .. "}, TV layout " .. tostring(N:tv_layout()))

print("== an MFMA C fragment three ways: lane table, nested layout, CK encoding")
local frag = ckt.fragment("mfma_f32_16x16x16f16", "C")
local nested = ckt.nested_layout{subgroup_tile = {1, 1}, batch_tile = {1, 1}, outer_tile = {1, 1}, thread_tile = {4, 16},
  element_tile = {4, 1}, subgroup_strides = {0, 0}, thread_strides = {16, 1}}
-- CK: rows = (4 lane groups, 4 values), columns = 16 lanes; P0 = lane = (row group, column)
local enc = ckt.tile_distribution_encoding{rs = {}, hs = {{4, 4}, {16}}, ps_to_rhs_major = {{1, 2}},
  ps_to_rhs_minor = {{0, 0}}, ys_to_rhs_major = {1}, ys_to_rhs_minor = {1}}
print(frag)
print("nested TV   " .. tostring(nested:tv_layout()))
print("encoding TV " .. tostring(enc:tv_layout()))
print("same_distribution(fragment, nested)   = " .. tostring(ckt.same_distribution(frag, nested, {strict = true})))
print("same_distribution(fragment, encoding) = " .. tostring(ckt.same_distribution(frag, enc, {strict = true})))
assert(ckt.same_distribution(frag, nested, {strict = true}) and ckt.same_distribution(frag, enc, {strict = true}))
print(frag:grid())
print("NVIDIA mma.sync m16n8k16 C: " .. tostring(ckt.fragment("mma_m16n8k16", "C")))
