-- A guided tour of ckt: what exists, shown live. Run: ckt-lua scripts/tour.lua
local function section(title) print(("\n== %s %s"):format(title, ("="):rep(math.max(0, 70 - #title)))) end
print(("ckt %s — a Lua-scriptable tiling engine for GPU kernel authors (default target: %s)"):format(ckt.version, ckt.default_target()))

section("1. Layouts are live values (CuTe semantics)")
local A = ckt.layout({4, 8}, "row")
print("ckt.layout({4,8}, \"row\")  ->", A, " A(1, 2) =", A(1, 2))
print("composition (4,3):(3,1) o 6:2 ->", ckt.composition(ckt.layout"(4,3):(3,1)", ckt.layout"6:2"))
print("zipped_divide of an 8x16 tensor by 4x8 tiles ->", ckt.zipped_divide(ckt.layout{8, 16}, {4, 8}))
print("a refused composition says why:", select(2, pcall(ckt.composition, ckt.layout"(4,3):(3,1)", ckt.layout"4:3")))
print(ckt.layout{4, 8}:grid())

section("2. Who owns what: CK Tile patterns, IREE nested layouts, MFMA fragments")
local E = ckt.encoding_pattern_2d{block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8, pattern = "warp_raked"}
print(E)
print("thread 65 with Y = {1, 3} reaches X =", table.concat(E:calculate_index(65, {1, 3}), ", "))
local N = ckt.nested_layout{subgroup_tile = {1, 1}, batch_tile = {1, 1}, outer_tile = {1, 1}, thread_tile = {4, 16},
  element_tile = {4, 1}, subgroup_strides = {0, 0}, thread_strides = {16, 1}}
print("MFMA 16x16x16 C as an IREE nested layout equals the lane table:",
  ckt.same_distribution(N, ckt.fragment("mfma_f32_16x16x16f16", "C"), {strict = true}))

section("3. Traversal orders (space-filling curves)")
local S = ckt.sfc{lengths = {4, 8}, order = {0, 1}, snake = true}
local path = {}
for i, c in S:iter() do if i < 12 then path[#path + 1] = ("(%d,%d)"):format(c[1], c[2]) end end
print(tostring(S) .. ": " .. table.concat(path, " ") .. " ...")
local loc, lin = S:locality(), ckt.sfc{lengths = {4, 8}}:locality()
print(("snake: %d sequential steps of %d; linear: %d"):format(loc.sequential, loc.steps, lin.sequential))

section("4. LDS bank conflicts and their remedies (AMD's note on LDS bank conflicts)")
local tile = ckt.layout({64, 64}, "row")
local read_map = ckt.layout({{16, 4}, 4}, {{1, 512}, 16})
local r = ckt.lds.analyze_tensor{target = "gfx90a", tensor_layout = tile, dtype = "f16", thread_map = read_map, vector = 8}
print(("MFMA-style ds_read_b128 of a row-major 64x64 fp16 tile: %d-way, %d cycles for %d ideal"):format(r.ways, r.cycles, r.ideal_cycles))
local x = ckt.lds.analyze_tensor{target = "gfx90a", tensor_layout = ckt.lds.xor_preshuffle(64, 8, 64), dtype = "f16", thread_map = read_map, vector = 8}
print(("with the XOR preshuffle: %d-way, %d cycles"):format(x.ways, x.cycles))

section("More")
print("scripts/layouts.lua, scripts/distributions.lua, scripts/bank_conflicts.lua; help() in the REPL (ckt-lua).")
