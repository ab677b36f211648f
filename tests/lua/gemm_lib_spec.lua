-- The library GEMM (require "ckt.kernels.gemm") on the CPU target: every dtype and major
-- combination, the emulated instruction of gfx90a (MFMA, the default CPU target) and of sm_90
-- (mma.sync), sizes that are and are not multiples of the tile, random data, poisoned outputs,
-- a double-precision reference; the bank model of the plan's LDS layouts; refusals of bad options.
--
-- Tolerance: |C - R| <= rtol |R| + atol with rtol = one rounding of the output dtype (2^-11 f16,
-- 2^-8 bf16, 2^-22 f32) and atol = K x 2^-21: inputs lie in [-1, 1], so each of the K products
-- is at most 1 and the f32 accumulation adds at most about 2^-24 per term, doubled for the
-- order the instruction sums in; it grows with K.
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local dev = ckt.device("cpu")

local RTOL = {f16 = 2 ^ -11, bf16 = 2 ^ -8, f32 = 2 ^ -22}

local function run(o, M, N, K, seed)
  local k, grid, p = gemm.build(o)
  local dt = p.dtype
  local A = ckt.array(dt, math.max(M * K, 1)):random{seed = seed, lo = -1, hi = 1}
  local B = ckt.array(dt, math.max(K * N, 1)):random{seed = seed + 1, lo = -1, hi = 1}
  local C = ckt.array(p.out, M * N):poison()
  local ba, bb, bc = dev:alloc(dt, #A), dev:alloc(dt, #B), dev:alloc(p.out, #C)
  ba:upload(A); bb:upload(B); bc:upload(C)
  k:compile{target = o.target or "cpu"}:launch{grid = grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K}
  bc:download(C)
  local R = gemm.reference(A, B, M, N, K, {a_major = p.a_major, b_major = p.b_major, out = "f32", epilogue = o.epilogue})
  local ok, err, at = C:compare(R, {rtol = RTOL[p.out], atol = K * 2 ^ -21})
  assert(ok, ("%s %s%s %dx%dx%d on %s: max error %s at %s"):format(dt, p.a_major, p.b_major, M, N, K, o.target or "cpu", tostring(err), tostring(at)))
  return p
end

local SIZES = {{1, 1, 1}, {17, 33, 9}, {128, 128, 64}, {200, 136, 264}}

describe("ckt.kernels.gemm on the CPU target", function()
  for _, target in ipairs{"cpu", "cpu:sm_90"} do
    for _, dt in ipairs{"f16", "bf16", "f32"} do
      for _, mj in ipairs{{"k", "k"}, {"k", "n"}, {"m", "k"}, {"m", "n"}} do
        it(("%s %s a_major=%s b_major=%s"):format(target, dt, mj[1], mj[2]), function()
          for i, s in ipairs(SIZES) do
            run({dtype = dt, a_major = mj[1], b_major = mj[2], target = target}, s[1], s[2], s[3], 10 * i)
          end
        end)
      end
    end
  end

  it("16-byte copies (aligned = true) at sizes that are multiples of 8 but not of the tile", function()
    for _, target in ipairs{"cpu", "cpu:sm_90"} do
      for _, mj in ipairs{{"k", "k"}, {"m", "n"}} do
        run({dtype = "f16", a_major = mj[1], b_major = mj[2], target = target, aligned = true}, 136, 200, 88, 7)
      end
    end
    local k = gemm.build{dtype = "f16", target = "cpu:sm_90", aligned = true}
    assert.truthy(k:source("sm_90"):find("CKT_CP_ASYNC_AT(16, ", 1, true))
  end)

  it("epilogue_lds and fused_prologue (the mma.sync path's compile-time forms) on and off", function()
    -- epilogue_lds on by default where the LDS tile keeps the blocks an SM holds (16-bit C at the
    -- default tile; not f32 C there, not unaligned sizes, not AMD), fused_prologue off (slower on
    -- an H100: plan.lua says by how much); asked for on sm_90 (aligned, 16-bit C) they are taken;
    -- persistent cannot fuse the prologue; the grouped GEMM has its own store
    local p = gemm.plan{dtype = "f16", target = "sm_90"}
    assert.is_true(p.epilogue_lds); assert.is_false(p.fused_prologue)
    assert.is_false(gemm.plan{dtype = "f16", out = "f32", target = "sm_90"}.epilogue_lds)
    assert.is_false(gemm.plan{dtype = "f16", aligned = false, target = "sm_90"}.epilogue_lds)
    assert.is_false(gemm.plan{dtype = "f16", target = "sm_90", epilogue_lds = false}.epilogue_lds)
    local _, _, gp = gemm.build{dtype = "f16", target = "sm_90", grouped = true}
    assert.is_false(gp.epilogue_lds)
    assert.has_error(function() gemm.build{dtype = "f16", target = "sm_90", grouped = true, epilogue_lds = true} end,
                     "gemm: epilogue_lds: the grouped GEMM stores C through each group's masked partition")
    p = gemm.plan{dtype = "f16", target = "sm_90", epilogue_lds = true, fused_prologue = true}
    assert.is_true(p.epilogue_lds); assert.is_true(p.fused_prologue)
    assert.has_error(function() gemm.plan{dtype = "f16", target = "sm_90", persistent = true, fused_prologue = true} end)
    p = gemm.plan{dtype = "f16", target = "gfx90a"}
    assert.is_false(p.epilogue_lds); assert.is_false(p.fused_prologue)
    local k = gemm.build{dtype = "f16", target = "sm_90", epilogue_lds = true}
    assert.truthy(k:source("sm_90"):find("CKT_ST16(C + ", 1, true)) -- 16-byte row passes out of LDS
    assert.truthy(gemm.build{dtype = "f16", target = "sm_90"}:source("sm_90"):find("CKT_ST16(C + ", 1, true))
    assert.falsy(gemm.build{dtype = "f16", target = "sm_90", epilogue_lds = false}:source("sm_90"):find("CKT_ST16(C + ", 1, true))
    -- every combination at edges in M, N and K; both on: K shorter than the look-ahead, two
    -- tiles of each, M-major A, an epilogue and f32 C, element copies
    for _, e in ipairs{false, true} do
      for _, f in ipairs{false, true} do
        run({dtype = "f16", target = "cpu:sm_90", aligned = true, epilogue_lds = e, fused_prologue = f}, 136, 200, 88, 20)
      end
    end
    local on = {target = "cpu:sm_90", aligned = true, epilogue_lds = true, fused_prologue = true}
    local function with(o) for k, v in pairs(on) do if o[k] == nil then o[k] = v end end return o end
    run(with{dtype = "f16"}, 8, 8, 8, 21)
    run(with{dtype = "f16", a_major = "m", b_major = "n"}, 264, 136, 40, 22)
    run(with{dtype = "bf16", out = "f32", epilogue = function(x) return ckt.max(x, 0) end}, 72, 136, 48, 9)
    run(with{dtype = "f16", aligned = false, tile = {64, 64, 32}, stages = 3}, 65, 70, 40, 11)
    assert.has_error(function() gemm.plan{target = "sm_90", epilogue_lds = 1} end, "gemm: epilogue_lds must be a boolean, got number")
    assert.has_error(function() gemm.plan{target = "sm_90a", epilogue_lds = true} end, "gemm: epilogue_lds: sm_90a's wgmma path has its own LDS epilogue")
    assert.has_error(function() gemm.plan{target = "sm_90", persistent = 2, fused_prologue = true} end,
                     "gemm: fused_prologue: the cp.async path of one tile a block only (not sm_90a's wgmma, not persistent)")
  end)

  it("f32 output, an epilogue, other tiles, stages and groups", function()
    run({dtype = "bf16", out = "f32", target = "cpu:sm_90"}, 65, 70, 40, 3)
    run({dtype = "f16", out = "bf16", target = "cpu"}, 65, 70, 40, 4)
    run({dtype = "f16", target = "cpu:sm_90", epilogue = function(x) return ckt.max(x, 0) * 0.5 end}, 70, 65, 48, 5)
    run({dtype = "f16", target = "cpu:sm_90", tile = {64, 64, 32}, block = 128, stages = 4, group = 2}, 200, 136, 264, 6)
    run({dtype = "f16", target = "cpu:sm_90", tile = {128, 256, 32}, block = 256, stages = 2}, 130, 260, 70, 8)
    run({dtype = "bf16", target = "cpu", tile = {64, 64, 32}, block = 256, stages = 5}, 100, 100, 200, 9)
  end)

  it("the plan's LDS layouts are conflict-free for copy-in and operand reads by the bank model", function()
    for _, target in ipairs{"sm_90", "sm_80", "gfx90a"} do
      for _, dt in ipairs{"f16", "bf16"} do
        local p = gemm.plan{dtype = dt, target = target}
        local r = gemm.bank_report(p)
        for _, op in ipairs{"A", "B"} do
          assert.truthy(p[op == "A" and "a_copy" or "b_copy"].conflict_free, target .. " " .. op)
          for _, acc in ipairs{"write", "read"} do
            local x = r[op][acc]
            assert.equal(x.ideal, x.cycles, ("%s %s %s %s: %d cycles for %d ideal"):format(target, dt, op, acc, x.cycles, x.ideal))
          end
        end
        -- without the swizzle the operand reads conflict: the search is what removes them
        local q = gemm.bank_report(gemm.plan{dtype = dt, target = target, swizzle = false})
        assert.is_nil(q.A.read)
      end
    end
    local plain = gemm.plan{dtype = "f16", target = "sm_90"}
    local tile = ckt.layout({plain.TM, plain.TK}, {plain.TK, 1})
    local a = ckt.lds.analyze_tensor{target = "sm_90", tensor_layout = tile, dtype = "f16", thread_map = plain.a_copy.read, vector = plain.a_copy.read_vector, op = "read"}
    assert.truthy(a.cycles > a.ideal_cycles, "the row-major tile has conflicting ldmatrix reads")
  end)

  it("the operand read maps are what the emitter reads: ldmatrix rows on NVIDIA, the traits' distributions on AMD", function()
    local k, _, pn = gemm.build{dtype = "f16", target = "sm_90"}
    local src = k:source("sm_90")
    -- x4 for both: B's loads take two N tiles each (an even number per wave)
    assert.truthy(src:find("ldmatrix.sync.aligned.m8n8.x4", 1, true) and not src:find("ldmatrix.sync.aligned.m8n8.x2", 1, true))
    -- one shared address per thread: K-major tiles (Sw<2,3,3>) take an immediate per matrix; the
    -- .trans tiles' matrices (Sw<3,3,4>) share swizzled bits with the thread's, so an XOR each
    assert.truthy(src:find("[%4+1024]", 1, true) and not src:find("ckt_lt ^", 1, true))
    local mn = gemm.build{dtype = "f16", target = "sm_90", a_major = "m", b_major = "n"}:source("sm_90")
    assert.truthy(mn:find("ldmatrix.sync.aligned.m8n8.x4.trans", 1, true) and mn:find("ckt_lt ^", 1, true))
    assert.equal(8, pn.a_copy.read_vector)
    assert.equal(8, pn.b_copy.read_vector)
    -- A: lane l of warp w reads the 16-byte K row (l % 8 + 8 ((l // 8) % 2) + rows of its warp, 8 ((l // 16) % 2))
    for t = 0, pn.block - 1, 5 do
      local l, w = t % 32, t // 32
      local wm = w // pn.waves_n
      local row, kk = l % 8 + 8 * ((l // 8) % 2) + wm * pn.m_per_wave * 16, 8 * ((l // 16) % 2)
      assert.equal(row + pn.TM * kk, pn.a_copy.read(t, 0), "A thread " .. t)
      -- B (x4): row l % 8, the next N tile for lanes 16..31, K + 8 for lanes 8..15 and 24..31
      local wn = w % pn.waves_n
      local nrow, nk = l % 8 + 8 * ((l // 16) % 2) + wn * pn.n_per_wave * 8, 8 * ((l // 8) % 2)
      assert.equal(nrow + pn.TN * nk, pn.b_copy.read(t, 0), "B thread " .. t)
    end
    for _, target in ipairs{"gfx90a"} do
      local p = gemm.plan{dtype = "f16", target = target}
      for _, x in ipairs{{"A", p.a_copy, p.TM}, {"B", p.b_copy, p.TN}} do
        local tv, read, run, rows = p.traits:tv(x[1], p.TM, p.TN, p.TK, p.block), x[2].read, x[2].read_vector, x[3]
        local nv, per_step = tv:mode(1):size(), read:mode(1):size() // (p.TK // p.k_step)
        assert.equal(tv:mode(0):size(), read:mode(0):size())
        for t = 0, p.block - 1, 7 do
          local want, got = {}, {}
          for v = 0, nv - 1 do
            local off = tv(t, v)
            local m, k = off // p.k_step, off % p.k_step
            if k % run == 0 then want[#want + 1] = m + rows * k end
          end
          for v = 0, per_step - 1 do got[#got + 1] = read(t, v) end
          table.sort(want); table.sort(got)
          assert.same(want, got, ("%s %s thread %d"):format(target, x[1], t))
        end
      end
    end
  end)

  it("grid(M, N) counts the tiles; the plan says what it chose", function()
    local k, grid, p = gemm.build{dtype = "f16", target = "sm_90"}
    assert.equal(((1000 + p.TM - 1) // p.TM) * ((300 + p.TN - 1) // p.TN), grid(1000, 300))
    assert.equal("mma_m16n8k16_f16", p.instr)
    assert.truthy(p.a_copy.why:find("conflict-free", 1, true))
    local sig = k:signature()
    local names = {}
    for i, s in ipairs(sig) do names[i] = s.name or s[2] end
    assert.same({"A", "B", "C", "M", "N", "K"}, names)
    local _, _, pa = gemm.build{dtype = "bf16", target = "gfx90a"}
    assert.truthy(pa.instr:find("mfma", 1, true) and pa.instr:find("bf16", 1, true))
  end)

  it("refuses bad options naming the option", function()
    local function bad(o, pat)
      local ok, err = pcall(gemm.build, o)
      assert.falsy(ok)
      assert.truthy(tostring(err):find(pat, 1, true), tostring(err))
    end
    bad({dtype = "f64"}, "dtype 'f64'")
    bad({out = "i8"}, "out 'i8'")
    bad({a_major = "n"}, "a_major 'n'")
    bad({b_major = "m"}, "b_major 'm'")
    bad({target = "tpu"}, "target 'tpu'")
    bad({target = 5}, "target must be a string")
    bad({tile = {128, 128}}, "tile must be {TM, TN, TK}")
    bad({tile = {0, 128, 32}}, "tile[1] = 0")
    bad({tile = {100, 128, 32}, target = "sm_90"}, "tile TM 100")
    bad({tile = {128, 100, 32}, target = "sm_90"}, "tile TN 100")
    bad({tile = {128, 128, 24}, target = "sm_90"}, "tile TK 24")
    bad({block = 100, target = "sm_90"}, "block 100")
    bad({block = 0}, "block 0")
    bad({stages = 1}, "stages 1")
    bad({stages = 2.5}, "stages 2.5")
    bad({group = 0}, "group 0")
    bad({k_pack = 3, target = "sm_90"}, "k_pack 3")
    bad({epilogue = 3}, "epilogue must be a function")
    bad({dtype = "f32", target = "sm_90"}, "dtype f32 runs on the CPU target only")
    bad({tile_m = 64}, "unknown option 'tile_m'")
    bad({instr = "mma_m16n8k16_f16", target = "gfx90a"}, "mma_m16n8k16_f16")
    local ok, err = pcall(gemm.reference, ckt.array("f16", 4), ckt.array("f16", 4), 3, 3, 3)
    assert.falsy(ok)
    assert.truthy(tostring(err):find("reference: A holds 4", 1, true), tostring(err))
    -- launch-time promises: 16-byte copies need K a multiple of 8
    local k, grid = gemm.build{dtype = "f16", target = "cpu", aligned = true}
    local b = dev:alloc("f16", 4096)
    local ok2, err2 = pcall(function() k:compile{target = "cpu"}:launch{grid = 1, A = b, B = b, C = b, M = 8, N = 8, K = 9} end)
    assert.falsy(ok2)
    assert.truthy(tostring(err2):find("K = 9 is not a multiple of 8", 1, true), tostring(err2))
  end)
end)
