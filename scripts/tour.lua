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

-- ---------------------------------------------------------------------------------------------
-- Kernels. (Kept as its own section at the end: a GEMM joins it later.)
section("5. A kernel: build, read, compile everywhere, run, check")
-- Y = X^T for any M x N (edge tiles masked): each block moves one 32x32 tile; Y is viewed in X's
-- coordinates (m, n) -> n*M + m, so the transpose is a load and a store of the same registers.
local k = ckt.kernel{name = "tour_transpose", block = 256, build = function(b)
  local X, Y = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32")
  local M, N = b:size("M"), b:size("N")
  local x = ckt.tensor(X, "f32", {shape = {M, N}}, {pad = true})
  local yt = ckt.tensor(Y, "f32", {shape = {M, N}, stride = {1, M}}, {pad = true})
  local tm, tn = b:block_order{tiles = {(M + 31) // 32, (N + 31) // 32}}
  ckt.local_tile(yt, {32, 32}, {tm, tn}):store(ckt.local_tile(x, {32, 32}, {tm, tn}):load())
end}
print(k)
local gpu = "sm_90"
local src = k:source(gpu)
-- from the first access on: each index comes with the layout it came from
local body, shown = src:sub(src:find("[^\n]*/%* line") or 1), 0
print(("-- an excerpt of its %s source (%d lines in all; k:source(target) gives the whole):"):format(gpu, select(2, src:gsub("\n", ""))))
for l in body:gmatch("[^\n]+") do
  if shown < 18 then print(l) end
  shown = shown + 1
end
print("    ...")
print("-- compiled for the CPU target and every GPU target whose compiler is here:")
for _, t in ipairs{"cpu", "gfx90a", "sm_90"} do
  local ok, res = pcall(function()
    local exe = k:compile{target = t, compile_only = t ~= "cpu", cache = false}
    local r, parts = exe:resources(), {}
    for _, key in ipairs{"vgprs", "sgprs", "registers", "lds_bytes", "scratch_bytes", "spill_stores", "vgpr_spills"} do
      if r[key] then parts[#parts + 1] = key .. "=" .. r[key] end
    end
    return ("%-7s %7.1f ms  %s  (%s)"):format(t, exe:compile_ms(), table.concat(parts, " "), exe:compiler())
  end)
  print(ok and res or ("%-7s skipped: %s"):format(t, (tostring(res):gsub("\n.*", ""))))
end
-- run on the CPU target at a size the tile does not divide: random input, poisoned output
local M, N = 100, 70
local dev, xs = ckt.device("cpu"), ckt.array("f32", {M, N}):random{seed = 7}
local want = ckt.array("f32", {N, M})
for m = 0, M - 1 do for n = 0, N - 1 do want[n * M + m] = xs[m * N + n] end end
local bx, by, got = dev:alloc("f32", M * N), dev:alloc("f32", M * N), ckt.array("f32", {N, M})
bx:upload(xs)
got:poison()
by:upload(got)
local ms = k:compile{target = "cpu"}:launch{grid = ((M + 31) // 32) * ((N + 31) // 32), X = bx, Y = by, M = M, N = N}
by:download(got)
local same, err = got:compare(want, {rtol = 0, atol = 0})
print(("run on the CPU target, %dx%d (edge tiles masked): %.2f ms, %s"):format(M, N, ms, same and "equal to the reference, bit for bit" or ("MISMATCH, max error " .. tostring(err))))
assert(same, "the tour's transpose does not match its reference")
print("The kernel library does it faster (an LDS tile, 16-byte vectors, a bank-conflict-free swizzle):")
print("scripts/transpose.lua; the builder: docs/kernels.md.")

section("More")
print("scripts/layouts.lua, scripts/distributions.lua, scripts/bank_conflicts.lua; help() in the REPL (ckt-lua).")
