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
-- Kernels: a transpose built by hand, then the library GEMM.
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
  if ok then
    print(res)
  elseif tostring(res):find("NVRTC not found (", 1, true) or tostring(res):find("hipRTC not found (", 1, true) then
    -- only a compiler library that is not installed skips a target; a compile error stops the tour
    print(("%-7s SKIPPED (compiler not installed): %s"):format(t, (tostring(res):gsub("\n.*", ""))))
  else
    error(("compile for %s failed: %s"):format(t, tostring(res)), 0)
  end
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
local ms = k:compile{target = "cpu"}:launch{grid = ((M + 31) // 32) * ((N + 31) // 32), X = bx, Y = by, M = M, N = N, timed = true}
by:download(got)
local same, err = got:compare(want, {rtol = 0, atol = 0})
print(("run on the CPU target, %dx%d (edge tiles masked): %.2f ms, %s"):format(M, N, ms, same and "equal to the reference, bit for bit" or ("MISMATCH, max error " .. tostring(err))))
assert(same, "the tour's transpose does not match its reference")
print("The kernel library does it faster (an LDS tile, 16-byte vectors, a bank-conflict-free swizzle):")
print("scripts/transpose.lua; the builder: docs/kernels.md.")

section("6. A GEMM: the library kernel, mma.sync emulated lane by lane on the CPU")
-- C = A . B with the library GEMM (require "ckt.kernels.gemm"): a multi-stage LDS ring fed by
-- asynchronous copies, swizzled LDS tiles, mma.sync m16n8k16 fragments loaded by ldmatrix. The
-- CPU target "cpu:sm_90" runs the same lowering, emulating each mma.sync with its lane layouts.
local gemm = require "ckt.kernels.gemm"
local gk, ggrid, plan = gemm.build{dtype = "f16", out = "f32", target = "cpu:sm_90", tile = {64, 64, 32}, block = 128, stages = 3}
print(("plan: %dx%dx%d tile, %d threads, %d stages, A LDS %s"):format(plan.TM, plan.TN, plan.TK, plan.block, plan.stages, plan.a_copy.why or "?"))
local gsrc = gk:source("sm_90")
local at = gsrc:find("[^\n]*ldmatrix[^\n]*\n") or 1
print("-- the sm_90 source, where the operands are loaded and multiplied:")
local n, gap = 0, false
for l in gsrc:sub(at):gmatch("[^\n]+") do
  local mma = l:find("asm volatile%(\"mma%.sync") or l:find("blockwise_gemm:")
  if n < 7 or mma then print(l) elseif not gap then print("    ..."); gap = true end
  n = n + 1
  if l:find("asm volatile%(\"mma%.sync") then break end
end
print("    ...")
local GM, GN, GK = 70, 45, 100 -- not multiples of the tile
local ga = ckt.array("f16", GM * GK):random{seed = 11, lo = -1, hi = 1}
local gb = ckt.array("f16", GK * GN):random{seed = 12, lo = -1, hi = 1}
local gwant = gemm.reference(ga, gb, GM, GN, GK, {a_major = "k", b_major = "k", out = "f32"})
local gba, gbb, gbc, ggot = dev:alloc("f16", GM * GK), dev:alloc("f16", GK * GN), dev:alloc("f32", GM * GN), ckt.array("f32", GM * GN)
gba:upload(ga); gbb:upload(gb)
ggot:poison()
gbc:upload(ggot)
local gexe = gk:compile{target = "cpu:sm_90"}
local gms = gexe:launch{grid = ggrid(GM, GN), A = gba, B = gbb, C = gbc, M = GM, N = GN, K = GK, timed = true}
gbc:download(ggot)
-- f32 accumulation of f16 products: a tolerance that grows with K
local gsame, gerr = ggot:compare(gwant, {rtol = 2 ^ -11, atol = GK * 2 ^ -21})
print(("run on cpu:sm_90, %dx%dx%d: compiled in %.0f ms, ran in %.1f ms, %s"):format(GM, GN, GK, gexe:compile_ms(), gms,
      gsame and "equal to the double-precision reference within the tolerance" or ("MISMATCH, max error " .. tostring(gerr))))
assert(gsame, "the tour's GEMM does not match its reference")
print("scripts/gemm.lua is the CK wrapper GEMM tutorial step by step; docs/gemm.md the library GEMM.")

section("More")
print("scripts/layouts.lua, scripts/distributions.lua, scripts/bank_conflicts.lua; help() in the REPL (ckt-lua).")
