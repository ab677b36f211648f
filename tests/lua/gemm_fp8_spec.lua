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
