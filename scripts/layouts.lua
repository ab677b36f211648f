-- A tour of the layout algebra on the examples of the CuTe reference (https://docs.nvidia.com/cutlass/media/docs/cpp/cute/02_layout_algebra.html).
local L = ckt.layout
local function show(what, v, extra) print(("%-52s %s%s"):format(what, tostring(v), extra and ("   " .. extra) or "")) end

print("== layouts: shape:stride, 1-D and hierarchical coordinates")
local A = L({4, {2, 8}}, {16, {1, 2}})
show("ckt.layout({4,{2,8}}, {16,{1,2}})", A, ("size %d cosize %d rank %d depth %d"):format(A:size(), A:cosize(), A:rank(), A:depth()))
show("A(5) == A(1, {1, 0}) == A({1,{1,0}})", A(5), tostring(A(1, {1, 0}) == A(5)))
show("column-major default ckt.layout{4,8}", L{4, 8})
show('row-major ckt.layout({4,8}, "row")', L({4, 8}, "row"))
print(L{4, 8}:grid())

print("== coalesce, composition, complement, inverses")
show("coalesce (2,(1,6)):(1,(6,2))", ckt.coalesce(L"(2,(1,6)):(1,(6,2))"))
show("composition (4,3):(3,1) o 6:2", ckt.composition(L"(4,3):(3,1)", L"6:2"))
show("composition 12:2 o (4,3):(3,1)", ckt.composition(L"12:2", L"(4,3):(3,1)"))
show("complement(4:2, 24)", ckt.complement(L"4:2", 24))
show("complement((2,4):(1,6), 24)", ckt.complement(L"(2,4):(1,6)", 24))
show("right_inverse (8,4):(4,1)", ckt.right_inverse(L"(8,4):(4,1)"))
show("left_inverse (4,2):(2,1)", ckt.left_inverse(L"(4,2):(2,1)"))
local ok, err = pcall(ckt.composition, L"(4,3):(3,1)", L"4:3")
show("composition that CuTe refuses", err)

print("== divides and products")
show("logical_divide(32:1, 2:8)", ckt.logical_divide(L"32:1", L"2:8"))
local T = L{8, 16}
show("zipped_divide(8x16, {4,8})", ckt.zipped_divide(T, {4, 8}))
show("tiled_divide(8x16, {4,8})", ckt.tiled_divide(T, {4, 8}))
show("flat_divide(8x16, {4,8})", ckt.flat_divide(T, {4, 8}))
show("blocked_product((2,5):(5,1), (3,4):(1,3))", ckt.blocked_product(L"(2,5):(5,1)", L"(3,4):(1,3)"))
show("raked_product((2,2):(1,2), (3,3):(1,3))", ckt.raked_product(L"(2,2):(1,2)", L"(3,3):(1,3)"))
show("make_ordered_layout({2,2,2,2}, {0,2,3,1})", ckt.make_ordered_layout({2, 2, 2, 2}, {0, 2, 3, 1}))
show("tile_to_shape((2,2):(1,2), {4,6})", ckt.tile_to_shape(L"(2,2):(1,2)", {4, 6}))

print("== vectors, nullspace, tiles and partitions")
show("max_common_vector((4,8):(1,4), (4,8):(1,8))", ckt.max_common_vector(L"(4,8):(1,4)", L"(4,8):(1,8)"))
show("max_common_layout((4,8):(1,4), itself)", ckt.max_common_layout(L"(4,8):(1,4)", L"(4,8):(1,4)"))
show("nullspace (2,(3,4)):(0,(1,0))", ckt.nullspace(L"(2,(3,4)):(0,(1,0))"))
local tile, off = ckt.local_tile(T, {4, 8}, {1, 1})
show("local_tile(8x16, {4,8}, {1,1})", tile, "offset " .. off)
local part, poff = ckt.local_partition(T, L"(2,4):(1,2)", 5)
show("local_partition(8x16, (2,4):(1,2), 5)", part, "offset " .. poff)
show("pad((5,7):(1,5), {4,4})  (CK wrapper)", ckt.pad(L{5, 7}, {4, 4}))

print("== thread-value layouts: make_tiled_copy(thr, val)")
local tiler, tv = ckt.make_layout_tv(L"(2,3):(3,1)", L"(2,2):(2,1)")
show("make_layout_tv((2,3):(3,1), (2,2):(2,1))", tv, "tiler (" .. table.concat(tiler, ",") .. ")")

print("== swizzles and composed layouts")
local sw = ckt.swizzle(2, 0, 2)
local vals = {}
for i = 0, 15 do vals[#vals + 1] = sw(i) end
show("Sw<2,0,2> over 0..15", table.concat(vals, ","))
local C = ckt.composed(ckt.swizzle(3, 3, 3), 0, L({8, 64}, "row"))
show("ComposedLayout Sw<3,3,3> o 0 o (8,64):(64,1)", C, "C(1, 8) = " .. C(1, 8))
local svg = L{16, 16}:svg{labels = function(m, n, v) return ("%d"):format(v) end}
show("an SVG picture of a 16x16 layout", #svg .. " bytes")

print("== composition beyond A's domain, and pictures with options")
show("(4,1):(1,0) o 8:1  (A's last mode extends A)", ckt.composition(L"(4,1):(1,0)", L"8:1"))
show("(4,8):(1,4) o 4:-1  (negative strides of B)", ckt.composition(L"(4,8):(1,4)", L"4:-1"))
print(ckt.composed(ckt.swizzle(2, 0, 2), 0, L({4, 4}, "row")):grid())
local tv_svg = tv:svg{cell = 24, title = "make_layout_tv: T#/V#",
                      labels = function(t, v, off) return ("T%d/V%d"):format(t, v) end}
show("an SVG of the TV layout with T#/V# labels", #tv_svg .. " bytes")
