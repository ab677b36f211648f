-- fp8 GEMM (DESIGN.md 3.7): dtype = "e4m3" | "e5m2" on sm_90a's 8-bit wgmma forms (m64nNk32, A and
-- B K-major in shared memory through descriptors, f32 accumulators) and their emulation on
-- cpu:sm_90a, C = scale_A . scale_B . (A . B) rounded to out (f16, bf16, f32), the scales f32
-- pointer parameters of one element each. Checked element by element against gemm.reference (in
-- double, scaled, then compared at out's rounding) at sizes that are not multiples of the tile,
-- random data, C poisoned, both formats, every out dtype, scales other than 1; compile-only
-- sm_90a through NVRTC; the refusals.
--
-- Tolerance: |C - R| <= rtol |R| + atol, rtol one rounding of out, atol = K x 2^-21 x |scale_A x
-- scale_B| x max|a| max|b| (f32 accumulation of exact products).
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local dev = ckt.device("cpu")

local RTOL = {f16 = 2 ^ -11, bf16 = 2 ^ -8, f32 = 2 ^ -22}

local function run(o, M, N, K, seed, sa, sb)
  o.target = o.target or "cpu:sm_90a"
  local k, grid, p = gemm.build(o)
  local dt = p.dtype
  local A = ckt.array(dt, M * K):random{seed = seed, lo = -4, hi = 4}
  local B = ckt.array(dt, N * K):random{seed = seed + 1, lo = -4, hi = 4}
  local C = ckt.array(p.out, M * N):poison()
  local SA, SB = ckt.array("f32", 1):fill(sa), ckt.array("f32", 1):fill(sb)
  local ba, bb, bc = dev:alloc(dt, #A), dev:alloc(dt, #B), dev:alloc(p.out, #C)
  local bsa, bsb = dev:alloc("f32", 1), dev:alloc("f32", 1)
  ba:upload(A); bb:upload(B); bc:upload(C); bsa:upload(SA); bsb:upload(SB)
  k:compile{target = o.target}:launch{grid = grid(M, N), A = ba, B = bb, C = bc, scale_A = bsa, scale_B = bsb, M = M, N = N, K = K}
  bc:download(C)
  local R = gemm.reference(A, B, M, N, K, {out = "f64", scale_A = sa, scale_B = sb})
  local ok, err, at = C:compare(R, {rtol = RTOL[p.out], atol = K * 2 ^ -21 * 16 * math.abs(sa * sb)})
  assert(ok, ("%s -> %s %dx%dx%d tile %dx%dx%d scales %g %g: max error %s at %s"):format(dt, p.out, M, N, K, p.TM, p.TN, p.TK, sa, sb, tostring(err), tostring(at)))
  return p, k
end

describe("fp8 GEMM on cpu:sm_90a", function()
  it("e4m3 and e5m2, every out dtype, scales other than 1, sizes past the tile", function()
    for _, dt in ipairs{"e4m3", "e5m2"} do
      for i, out in ipairs{"f16", "bf16", "f32"} do
        local p = run({dtype = dt, out = out, tile = {128, 128, 64}, block = 128}, 130, 77 + i, 100, 10 * i, 0.75, -2.5)
        assert.equal(("wgmma_m64n128k32_%s"):format(dt), p.instr)
      end
    end
  end)

  it("the default tile (128 x 256 x 128, two warpgroups) and K = 1", function()
    local p = run({dtype = "e4m3"}, 129, 257, 161, 5, 0.5, 3)
    assert.equal("bf16", p.out); assert.equal("wgmma_m64n256k32_e4m3", p.instr); assert.equal(128, p.TK)
    run({dtype = "e5m2", out = "f32", tile = {64, 64, 32}, block = 128}, 65, 70, 1, 7, 2, 0.125)
  end)

  it("emulates the exact products: large values saturated on the host stay exact in f32", function()
    -- 448 x 448 x K = 1 and the e5m2 max 57344^2 x 2^-30 (scaled back): products exact in f32
    local k, grid, p = gemm.build{dtype = "e4m3", out = "f32", target = "cpu:sm_90a", tile = {64, 64, 32}, block = 128}
    local A, B = ckt.array("e4m3", 64 * 32):fill(1000), ckt.array("e4m3", 64 * 32):fill(-448) -- 1000 saturates to 448
    local C = ckt.array("f32", 64 * 64):poison()
    local SA, SB = ckt.array("f32", 1):fill(2 ^ -10), ckt.array("f32", 1):fill(1)
    local b = {}
    for n, x in pairs{A = A, B = B, C = C, scale_A = SA, scale_B = SB} do b[n] = dev:alloc(x:dtype(), #x); b[n]:upload(x) end
    k:compile{target = "cpu:sm_90a"}:launch{grid = grid(64, 64), A = b.A, B = b.B, C = b.C, scale_A = b.scale_A, scale_B = b.scale_B, M = 64, N = 64, K = 32}
    b.C:download(C)
    for i = 0, 64 * 64 - 1 do assert.equal(-448 * 448 * 32 * 2 ^ -10, C[i]) end
  end)

  it("refuses what the hardware has not, naming the option", function()
    local function err(o) local ok, e = pcall(gemm.build, o) assert.is_false(ok) return tostring(e) end
    assert.matches("target 'sm_90'", err{dtype = "e4m3", target = "sm_90"})
    assert.matches("target 'cpu'", err{dtype = "e5m2", target = "cpu"})
    assert.matches("out 'e4m3'", err{dtype = "e4m3", out = "e4m3", target = "cpu:sm_90a"})
    assert.matches("a_major 'm'", err{dtype = "e4m3", a_major = "m", target = "cpu:sm_90a"})
    assert.matches("b_major 'n'", err{dtype = "e5m2", b_major = "n", target = "sm_90a"})
  end)

  it("a launch without the scale buffers is refused by the launch", function()
    local k, grid = gemm.build{dtype = "e4m3", target = "cpu:sm_90a", tile = {64, 64, 32}, block = 128}
    local a, c = dev:alloc("e4m3", 64 * 32), dev:alloc("bf16", 64 * 64)
    local ok, e = pcall(function() k:compile{target = "cpu:sm_90a"}:launch{grid = grid(64, 64), A = a, B = a, C = c, M = 64, N = 64, K = 32} end)
    assert.is_false(ok)
    assert.matches("scale_A", tostring(e))
  end)

  it("compiles for sm_90a through NVRTC with the e4m3 wgmma", function()
    local k = gemm.build{dtype = "e4m3", out = "bf16", target = "sm_90a"}
    local src = k:source("sm_90a")
    assert.truthy(src:find("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3", 1, true))
    assert.falsy(src:find("k32.f32.e4m3.e4m3 {[^}]*}, %%%d+, %%%d+, p, 1, 1, %d"), "no transpose immediates")
    local ok, exe = pcall(k.compile, k, {target = "sm_90a", compile_only = true})
    if not ok and tostring(exe):find("NVRTC") and tostring(exe):find("not found") then pending("NVRTC not installed: " .. tostring(exe)) return end
    assert(ok, tostring(exe)) -- a compile error (or a refused spill) fails
    local r = exe:resources()
    assert.equal(0, r.spill_stores); assert.equal(0, r.spill_loads)
    local dis = exe:disassembly()
    if dis and dis ~= "" then assert.truthy(dis:lower():find("e4m3"), "the disassembly names the e4m3 MMA") end
  end)
end)

describe("grouped fp8 GEMM on cpu:sm_90a", function()
  it("per-tensor scales applied to every group (groups of 0, 64 and 130 rows, K = 32 and 96)", function()
    local sizes, offs = {{64, 64, 64}, {0, 64, 32}, {130, 70, 96}}, {}
    local na, nb, nc = 0, 0, 0
    for i, r in ipairs(sizes) do offs[i] = {na, nb, nc}; na, nb, nc = na + r[1] * r[3] + 16, nb + r[2] * r[3] + 16, nc + r[1] * r[2] + 16 end
    local k, grid, p = gemm.build{dtype = "e4m3", out = "f32", grouped = true, target = "cpu:sm_90a", tile = {64, 64, 32}, block = 128}
    local A = ckt.array("e4m3", na):random{seed = 41, lo = -4, hi = 4}
    local B = ckt.array("e4m3", nb):random{seed = 42, lo = -4, hi = 4}
    local C = ckt.array("f32", nc):poison()
    local function flat(rows) local t = ckt.array(p.index_type, 3 * #rows); for i, r in ipairs(rows) do for c = 1, 3 do t[3 * (i - 1) + c - 1] = r[c] end end; return t end
    local b = {}
    for name, x in pairs{A = A, B = B, C = C, sizes = flat(sizes), offsets = flat(offs), scale_A = ckt.array("f32", 1):fill(0.75), scale_B = ckt.array("f32", 1):fill(-2.5)} do
      b[name] = dev:alloc(x:dtype(), #x); b[name]:upload(x)
    end
    k:compile{target = "cpu:sm_90a"}:launch{grid = grid(sizes), A = b.A, B = b.B, C = b.C, G = #sizes, sizes = b.sizes, offsets = b.offsets,
                                            scale_A = b.scale_A, scale_B = b.scale_B}
    b.C:download(C)
    local R = gemm.reference(A, B, 0, 0, 0, {out = "f64", grouped = true, sizes = sizes, offsets = offs, count = nc, scale_A = 0.75, scale_B = -2.5})
    for g, r in ipairs(sizes) do
      for i = 0, r[1] * r[2] - 1 do
        local at = offs[g][3] + i
        assert(math.abs(C[at] - R[at]) <= 2 ^ -20 * math.abs(R[at]) + r[3] * 2 ^ -21 * 16 * 2, ("group %d element %d: %g vs %g"):format(g, i, C[at], R[at]))
      end
    end
  end)
end)

-- scales = "block" (DeepSeek-V3's recipe): scale_A one f32 a row and 128-wide K block (element
-- (m, kb) at kb M + m), scale_B one a 128 x 128 block of B (element (nb, kb) at nb KB + kb), each
-- K slice's product scaled into the f32 sum. Against the reference's block sums in double, random
-- scales of both signs, K not a multiple of 128 (the last block partial), M and N past the tile.
describe("fp8 GEMM with block scales on cpu:sm_90a", function()
  local function data(dt, M, N, K, seed)
    local KB, NB = (K + 127) // 128, (N + 127) // 128
    return ckt.array(dt, M * K):random{seed = seed, lo = -4, hi = 4}, ckt.array(dt, N * K):random{seed = seed + 1, lo = -4, hi = 4},
           ckt.array("f32", KB * M):random{seed = seed + 2, lo = 0.01, hi = 2}, ckt.array("f32", NB * KB):random{seed = seed + 3, lo = -2, hi = 2}
  end
  local function launch(o, M, N, K, A, B, SA, SB)
    o.target = o.target or "cpu:sm_90a"
    o.scales = "block"
    local k, grid, p = gemm.build(o)
    local C = ckt.array(p.out, M * N):poison()
    local b = {}
    for n, x in pairs{A = A, B = B, C = C, scale_A = SA, scale_B = SB} do b[n] = dev:alloc(x:dtype(), #x); b[n]:upload(x) end
    k:compile{target = o.target}:launch{grid = grid(M, N), A = b.A, B = b.B, C = b.C, scale_A = b.scale_A, scale_B = b.scale_B, M = M, N = N, K = K}
    b.C:download(C)
    return C, p
  end
  -- |C - R| <= rtol |R| + atol: out's rounding, and f32 sums of exact products (K terms of at most
  -- 16, each block's sum times scales of at most 2 x 2)
  local function check(o, M, N, K, seed)
    local A, B, SA, SB = data(o.dtype or "e4m3", M, N, K, seed)
    o.dtype = o.dtype or "e4m3"
    local C, p = launch(o, M, N, K, A, B, SA, SB)
    local R = gemm.reference(A, B, M, N, K, {out = "f64", scales = "block", scale_A = SA, scale_B = SB})
    local ok, err, at = C:compare(R, {rtol = RTOL[p.out], atol = K * 2 ^ -21 * 16 * 4})
    assert(ok, ("%s -> %s %dx%dx%d tile %dx%dx%d: max error %s at %s"):format(p.dtype, p.out, M, N, K, p.TM, p.TN, p.TK, tostring(err), tostring(at)))
    return p, C, R, A, B, SA, SB
  end

  it("the default (128 x 128 x 128, two warpgroups) at sizes past the tile, K past a block", function()
    local p = check({}, 130, 200, 300, 1)
    assert.same({128, 128, 128, 256}, {p.TM, p.TN, p.TK, p.block})
    assert.equal("block", p.scales); assert.equal(0, p.mma_pending); assert.equal("gemm_e4m3_kk_blockscaled", p.name)
  end)

  it("e5m2, every out dtype, slices of 32 and 64 within a block, 64-wide tiles, K = 1", function()
    check({dtype = "e5m2", out = "f32", tile = {64, 64, 64}, block = 128}, 65, 190, 257, 3)
    check({dtype = "e4m3", out = "f16", tile = {64, 128, 32}, block = 128}, 70, 129, 200, 4)
    check({dtype = "e5m2", out = "bf16", tile = {64, 64, 32}, block = 128}, 64, 64, 1, 5)
  end)

  it("bulk copies (copy = \"tma\") and a persistent walk", function()
    check({out = "f16", tile = {64, 128, 64}, block = 128, aligned = true, copy = "tma"}, 64, 272, 400, 6)
    check({out = "bf16", aligned = true, copy = "tma"}, 144, 272, 400, 8)
    check({out = "f32", aligned = true, copy = "tma", tile = {128, 128, 64}}, 128, 128, 16, 10)
    check({out = "f32", aligned = true, copy = "tma", persistent = 2}, 272, 256, 400, 11) -- (a producer warpgroup)
    check({out = "f32", tile = {128, 128, 128}, block = 256, persistent = 2}, 200, 300, 260, 7)
  end)

  it("each block takes its own scales: the transposed scale_A's layout does not pass", function()
    -- (the check above would pass a kernel that ignored the layout only if every scale were alike)
    local M, N, K = 64, 128, 256
    local A, B, SA, SB = data("e4m3", M, N, K, 9)
    local C = launch({dtype = "e4m3", out = "f32", tile = {64, 128, 64}, block = 128}, M, N, K, A, B, SA, SB)
    local KB = K // 128
    local T = ckt.array("f32", #SA)
    for m = 0, M - 1 do for kb = 0, KB - 1 do T[m * KB + kb] = SA[kb * M + m] end end -- (m, kb) at m KB + kb
    local wrong = gemm.reference(A, B, M, N, K, {out = "f64", scales = "block", scale_A = T, scale_B = SB})
    assert.is_false((C:compare(wrong, {rtol = 2 ^ -20, atol = 2 ^ -20})))
  end)

  it("refuses what the schedule cannot take, naming the option", function()
    local function err(o) o.target = o.target or "cpu:sm_90a"; local ok, e = pcall(gemm.build, o) assert.is_false(ok) return tostring(e) end
    assert.matches("scales 'row'", err{dtype = "e4m3", scales = "row"})
    assert.matches("scales: dtype f16", err{dtype = "f16", scales = "block"})
    assert.matches("tile TK 256", err{dtype = "e4m3", scales = "block", tile = {128, 128, 256}})
    assert.matches("tile TN 256", err{dtype = "e4m3", scales = "block", tile = {128, 256, 128}})
    assert.matches("split TM only", err{dtype = "e4m3", scales = "block", tile = {64, 128, 128}, block = 256})
    assert.matches("mma_pending 1", err{dtype = "e4m3", scales = "block", mma_pending = 1})
    assert.matches("batched", err{dtype = "e4m3", scales = "block", batched = true})
    assert.matches("grouped", err{dtype = "e4m3", scales = "block", grouped = true})
  end)

  it("a launch with scale buffers too small for the sizes is refused, naming the buffer", function()
    local k, grid = gemm.build{dtype = "e4m3", scales = "block", target = "cpu:sm_90a", tile = {64, 64, 64}, block = 128}
    local a, c = dev:alloc("e4m3", 64 * 256), dev:alloc("bf16", 64 * 64)
    local exe = k:compile{target = "cpu:sm_90a"}
    local function try(na, nb)
      return pcall(function() exe:launch{grid = grid(64, 64), A = a, B = a, C = c, scale_A = dev:alloc("f32", na), scale_B = dev:alloc("f32", nb), M = 64, N = 64, K = 256} end)
    end
    assert.is_true((try(128, 2))) -- 2 K blocks: 2 x 64 of A's, 1 x 2 of B's
    local ok, e = try(127, 2); assert.is_false(ok); assert.matches("scale_A", tostring(e))
    ok, e = try(128, 1); assert.is_false(ok); assert.matches("scale_B", tostring(e))
  end)

  it("compiles for sm_90a through NVRTC without spills (two accumulator sets a thread)", function()
    local k = gemm.build{dtype = "e4m3", scales = "block", target = "sm_90a"}
    local ok, exe = pcall(k.compile, k, {target = "sm_90a", compile_only = true})
    if not ok and tostring(exe):find("NVRTC") and tostring(exe):find("not found") then pending("NVRTC not installed: " .. tostring(exe)) return end
    assert(ok, tostring(exe))
    local r = exe:resources()
    assert.equal(0, r.spill_stores); assert.equal(0, r.spill_loads)
    assert.truthy(k:source("sm_90a"):find("m64n128k32.f32.e4m3.e4m3", 1, true))
  end)
end)
