-- Hopper's warpgroup MMA on the CPU target (cpu:sm_90a): the library GEMM's sm_90a path (wgmma
-- reading 128B/64B/32B-swizzled LDS tiles through shared-memory descriptors, emulated warpgroup by
-- warpgroup by reading A and B THROUGH the decoded descriptors), every dtype, output dtype and
-- major, sizes that are not multiples of the tile, random data, poisoned outputs, the double
-- reference; the descriptors from Lua (ckt.wgmma_desc); the builder's refusals; compile-only
-- sm_90a through NVRTC (registers, no spills) where NVRTC is installed.
--
-- Tolerance (gemm_lib_spec.lua's): |C - R| <= rtol |R| + atol, rtol one rounding of the output
-- dtype, atol = K x 2^-21 (inputs in [-1, 1], f32 accumulation).
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local dev = ckt.device("cpu")

local RTOL = {f16 = 2 ^ -11, bf16 = 2 ^ -8, f32 = 2 ^ -22}

local function run(o, M, N, K, seed)
  o.target = o.target or "cpu:sm_90a"
  local k, grid, p = gemm.build(o)
  local dt = p.dtype
  local A = ckt.array(dt, M * K):random{seed = seed, lo = -1, hi = 1}
  local B = ckt.array(dt, K * N):random{seed = seed + 1, lo = -1, hi = 1}
  -- C's buffer runs 64 elements past C, poisoned: nothing may be written there (the bulk stores'
  -- boxes past C's edges write nothing)
  local CP = ckt.array(p.out, M * N + 64):poison()
  local ba, bb, bc = dev:alloc(dt, #A), dev:alloc(dt, #B), dev:alloc(p.out, #CP)
  ba:upload(A); bb:upload(B); bc:upload(CP)
  local poison = CP[M * N]
  k:compile{target = o.target}:launch{grid = grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K}
  bc:download(CP)
  local C = ckt.array(p.out, M * N)
  for i = 0, M * N - 1 do C[i] = CP[i] end
  for i = M * N, M * N + 63 do
    local v = CP[i]
    assert(v ~= v or v == poison, ("C[%d], past C's %d elements, was written: %s"):format(i, M * N, tostring(v)))
  end
  local R = gemm.reference(A, B, M, N, K, {a_major = p.a_major, b_major = p.b_major, out = "f32", epilogue = o.epilogue})
  local ok, err, at = C:compare(R, {rtol = RTOL[p.out], atol = K * 2 ^ -21})
  assert(ok, ("%s %s%s -> %s %dx%dx%d tile %dx%dx%d: max error %s at %s"):format(dt, p.a_major, p.b_major, p.out, M, N, K, p.TM, p.TN, p.TK, tostring(err), tostring(at)))
  return p
end

describe("the sm_90a GEMM on cpu:sm_90a (wgmma emulated through its descriptors)", function()
  it("plans wgmma with the hardware's swizzled LDS layouts", function()
    -- the default: 128 x 256 x 64, two warpgroups of 64 x 256, 4 stages
    local p = gemm.plan{target = "cpu:sm_90a", dtype = "bf16"}
    assert.equal("wgmma_m64n256k16_bf16", p.instr)
    assert.equal(2, p.waves_m); assert.equal(1, p.waves_n)
    assert.equal(128, p.TM); assert.equal(256, p.TN); assert.equal(64, p.TK); assert.equal(4, p.stages)
    assert.truthy(p.a_copy.why:find("128B swizzle"))
    assert.equal("wgmma_m64n128k16_f16", gemm.plan{target = "cpu:sm_90a", tile = {128, 128, 64}}.instr)
    assert.equal("wgmma_m64n64k16_f16", gemm.plan{target = "cpu:sm_90a", tile = {64, 64, 32}, block = 128}.instr)
    -- sm_90 keeps mma.sync
    assert.equal("mma_m16n8k16_f16", gemm.plan{target = "cpu:sm_90"}.instr)
  end)

  -- sizes off the tile by major: with bulk tensor copies (copy = "tma") the tensor maps' strides
  -- are multiples of 8 elements (K for a K-major operand, M / N for an M / N-major one), every
  -- other size is free
  local EDGE = {kk = {{130, 136, 72}, {1, 3, 8}}, kn = {{130, 136, 72}, {1, 8, 8}},
                mk = {{136, 130, 72}, {8, 3, 8}}, mn = {{136, 136, 70}, {8, 8, 5}}}
  for _, dt in ipairs{"f16", "bf16"} do
    for _, mj in ipairs{{"k", "k"}, {"k", "n"}, {"m", "k"}, {"m", "n"}} do
      it(("%s, A %s-major, B %s-major, edges"):format(dt, mj[1], mj[2]), function()
        -- one kernel per case (the compile dominates on the CPU target); the output dtypes on the
        -- K-major pair only
        local outs = (mj[1] == "k" and mj[2] == "k") and {"f32", dt} or {mj[1] == "m" and "f32" or dt}
        local e = EDGE[mj[1] .. mj[2]]
        for i, out in ipairs(outs) do
          local o = {dtype = dt, out = out, a_major = mj[1], b_major = mj[2], copy = "tma"}
          assert.equal("tma", run(o, e[1][1], e[1][2], e[1][3], 10 * i).copy)
          run(o, 64, 128, 64, 3) -- exactly one tile
          run(o, e[2][1], e[2][2], e[2][3], 4) -- far below one tile
        end
        -- the per-thread asynchronous copies at any size
        local o = {dtype = dt, a_major = mj[1], b_major = mj[2]}
        assert.equal("cp.async", run(o, 130, 136, 70, 5).copy) -- the default at any size
        run(o, 1, 3, 5, 6)
      end)
    end
  end

  it("a 128 x 192 tile: one wgmma n192 a K step and warpgroup, C by bulk tensor stores of three atoms", function()
    -- (192 columns: fewer waves than 256 where 256-wide tiles leave the last one short; the stages
    -- are 12288 elements apart, not a power of two, which the swizzled stage offsets must add)
    local p = gemm.plan{target = "cpu:sm_90a", dtype = "bf16", tile = {128, 192, 64}, block = 256, stages = 4, aligned = true}
    assert.equal("wgmma_m64n192k16_bf16", p.instr); assert.is_true(p.tma_store)
    assert.equal("wgmma_m64n64k32_e4m3", gemm.plan{target = "cpu:sm_90a", dtype = "e4m3", tile = {128, 192, 128}, block = 256}.instr) -- (8-bit: no n192, three n64)
    for i, c in ipairs{{"f16", "k", "k", 200, 392, 136}, {"bf16", "m", "n", 136, 200, 72}, {"f16", "k", "n", 264, 136, 40}} do
      run({dtype = c[1], a_major = c[2], b_major = c[3], aligned = true, tile = {128, 192, 64}, block = 256, stages = 4}, c[4], c[5], c[6], 80 + i)
    end
    run({dtype = "f16", tile = {128, 192, 64}, block = 256, stages = 4}, 130, 200, 70, 84) -- element copies, any size
  end)

  it("the GPU's default (aligned sizes, bulk copies): a 16-bit tile leaves through a swizzled LDS buffer by bulk tensor stores, one warpgroup's rows at a time", function()
    -- sizes multiples of 8, not of the tile: the stores write nothing past C's edges; several
    -- tiles in both directions (the buffer reused tile by tile)
    for i, c in ipairs{{"f16", "k", "k", 200, 264, 136}, {"bf16", "m", "n", 136, 520, 72}, {"f16", "k", "n", 264, 136, 40}} do
      local o = {dtype = c[1], a_major = c[2], b_major = c[3], aligned = true}
      local src = gemm.build{target = "cpu:sm_90a", dtype = c[1], a_major = c[2], b_major = c[3], aligned = true}:source("cpu:sm_90a")
      assert.truthy(src:find("store to LDS lds%d+ %(%(64,2%),%(64,4%)%):%(%(64,0%),%(1,4096%)%) o Sw<3,3,3>"), "the fragments' store into the swizzled buffer")
      assert.truthy(src:find("bulk tensor store: lds%d+ %(128B swizzle%) %-> the 64 x 64 box of C"), "bulk tensor stores of 64 x 64 atoms")
      local p = run(o, c[4], c[5], c[6], 60 + i)
      assert.equal("tma", p.copy); assert.is_true(p.tma_store)
    end
    run({dtype = "f16", aligned = true, epilogue = function(x) return ckt.max(x, 0) * 0.5 end}, 136, 264, 64, 70)
    -- the threads' stores (tma_store = false): the padded buffer, 16-byte reads of whole rows
    local src = gemm.build{target = "cpu:sm_90a", dtype = "f16", aligned = true, tma_store = false}:source("cpu:sm_90a")
    assert.truthy(src:find("store to LDS lds%d+ %(%(64,2%),256%):%(%(264,0%),1%)"), "the fragments' store into the padded buffer")
    assert.truthy(src:find("8-element accesses along dim 1", 1, true), "16-byte reads of whole rows")
    assert.falsy(src:find("ckt_tma_store_2d(", 1, true))
    run({dtype = "bf16", aligned = true, tma_store = false}, 200, 264, 136, 71)
    -- a buffer a warpgroup where the stages leave room (3 stages): the stores not waited for, the
    -- next tile's epilogue (persistent) and the kernel's end waiting for their reads
    local three = gemm.build{target = "cpu:sm_90a", dtype = "f16", aligned = true, stages = 3}:source("cpu:sm_90a")
    assert.truthy(three:find("store to LDS lds%d+ %(%(64,2%),%(64,4%)%):%(%(64,16384%),%(1,4096%)%) o Sw<3,3,3>"), three)
    run({dtype = "f16", aligned = true, stages = 3}, 200, 264, 136, 72)
    run({dtype = "f16", aligned = true, stages = 3, persistent = 2}, 264, 520, 72, 73) -- 3 x 3 tiles over 2 blocks
    local cu = gemm.build{target = "sm_90a", dtype = "f16", stages = 3, persistent = true}:source("sm_90a")
    assert.truthy(cu:find("if (tid == 0) ckt_bulk_read_wait(); /* the bulk stores have read their LDS tiles", 1, true))
    -- the persistent kernel too, its producer a warpgroup (gemm_persistent_spec.lua); f32 output
    -- and unaligned sizes keep the fragments' own stores
    assert.truthy(gemm.build{target = "cpu:sm_90a", dtype = "f16", aligned = true, persistent = 2}:source("cpu:sm_90a"):find("store to LDS lds%d+ %(%(64,2%),%(64,4%)%)"))
    for _, o in ipairs{{out = "f32", aligned = true}, {copy = "tma"}} do
      o.dtype = "f16"; o.target = "cpu:sm_90a"
      assert.falsy(gemm.build(o):source("cpu:sm_90a"):find("store to LDS lds%d+ %(%(64,2%)"))
    end
  end)

  it("every swizzle width and instruction N: 32B (TK 16), 64B (TK 32), 128B in two K atoms (TK 128), n256, n64", function()
    run({dtype = "f16", tile = {128, 64, 16}, block = 256, copy = "tma"}, 200, 72, 40, 21)
    run({dtype = "bf16", tile = {64, 64, 32}, block = 128, stages = 2, copy = "tma"}, 100, 70, 88, 22)
    run({dtype = "f16", tile = {128, 128, 128}, stages = 2, copy = "tma"}, 136, 130, 200, 23)
    run({dtype = "bf16", tile = {128, 256, 64}, stages = 3, out = "f32", copy = "tma"}, 130, 260, 72, 24)
    run({dtype = "f16", tile = {128, 128, 64}, block = 128, copy = "tma"}, 140, 130, 72, 25) -- one warpgroup, 2 m64 repeats
    run({dtype = "f16", copy = "tma", epilogue = function(x) return ckt.max(x, 0) end}, 70, 80, 88, 26)
  end)

  it("with the GPU's 16-byte cp.async copies (aligned = true): every major, M/N-contiguous tiles copied per 64-row atom", function()
    for i, mj in ipairs{{"k", "k"}, {"k", "n"}, {"m", "k"}, {"m", "n"}} do
      run({dtype = i % 2 == 0 and "bf16" or "f16", a_major = mj[1], b_major = mj[2], aligned = true, copy = "cp.async"}, 136, 200, 72, 30 + i)
    end
  end)

  it("MMAs left in flight across K slices (mma_pending 0, 1, 2) and a peeled first slice", function()
    for pend = 0, 2 do
      run({dtype = "f16", mma_pending = pend, stages = 4}, 72, 136, 200, 40 + pend)
      run({dtype = "bf16", mma_pending = pend, stages = 4, b_major = "n"}, 130, 64, 64, 50 + pend) -- one slice: the loop runs 0 times
    end
    assert.equal(1, gemm.plan{target = "cpu:sm_90a"}.mma_pending)
    -- bulk copies by default where the sizes are promised aligned (the GPU's default), per-thread
    -- copies otherwise (the CPU target's default: any size)
    assert.equal("tma", gemm.plan{target = "sm_90a"}.copy)
    assert.equal("tma", gemm.plan{target = "cpu:sm_90a", aligned = true}.copy)
    assert.equal("cp.async", gemm.plan{target = "cpu:sm_90a"}.copy)
    assert.equal("cp.async", gemm.plan{target = "sm_90a", aligned = false}.copy)
    assert.equal("cp.async", gemm.plan{target = "sm_90"}.copy)
    assert.equal(0, gemm.plan{target = "cpu:sm_90a", stages = 2}.mma_pending)
  end)

  it("refuses what wgmma cannot do, naming the option", function()
    local function err(o)
      o.target = o.target or "cpu:sm_90a"
      local ok, e = pcall(gemm.plan, o)
      assert.is_false(ok)
      return e
    end
    assert.truthy(err{block = 192}:find("warpgroups"))
    assert.truthy(err{tile = {96, 128, 64}}:find("TM"))
    assert.truthy(err{tile = {128, 96, 64}}:find("TN"))
    assert.truthy(err{tile = {128, 128, 48}}:find("TK"))
    assert.truthy(err{k_pack = 8}:find("k_pack"))
    assert.truthy(err{swizzle = false}:find("swizzle"))
    assert.truthy(err{mma_pending = 3}:find("mma_pending"))
    assert.truthy(err{mma_pending = 1, stages = 2}:find("0..stages%-2"))
    assert.truthy(err{mma_pending = 1, target = "cpu:sm_90"}:find("only sm_90a"))
    assert.truthy(err{instr = "wgmma_m64n64k16_f16"}:find("wgmma_m64n256k16_f16"))
    assert.truthy(err{instr = "wgmma_m64n128k16_f16", target = "cpu:sm_90"}:find("not an instruction of"))
    -- the GPU's 16-byte copies into several 64-row atoms of an M-contiguous tile
    assert.truthy(err{tile = {128, 128, 16}, a_major = "m", aligned = true, copy = "cp.async"}:find("atom"))
    -- (a bulk tensor copy writes whole boxes: no per-thread constraint)
    assert.equal("tma", gemm.plan{target = "cpu:sm_90a", tile = {128, 128, 16}, a_major = "m", aligned = true, copy = "tma"}.copy)
    -- the copy option: a known name, and bulk copies only where wgmma reads them
    assert.truthy(err{copy = "dma"}:find("copy 'dma'"))
    assert.truthy(err{copy = "tma", target = "cpu:sm_90"}:find("cpu:sm_90 is not it"))
    assert.truthy(err{copy = "tma", target = "gfx90a"}:find("gfx90a is not it"))
    -- tma_store: a boolean, only where C leaves through sm_90a's LDS buffer after bulk copies
    assert.truthy(err{tma_store = "yes", aligned = true}:find("tma_store must be a boolean, got string", 1, true))
    assert.truthy(err{tma_store = true, copy = "cp.async", aligned = true}:find("tma_store: bulk tensor stores come with sm_90a's bulk copies", 1, true))
    assert.truthy(err{tma_store = true, target = "cpu:sm_90", aligned = true}:find("tma_store: bulk tensor stores come with sm_90a's bulk copies", 1, true))
    assert.truthy(err{tma_store = true, out = "f32", aligned = true}:find("tma_store: C must leave through the LDS epilogue", 1, true))
    assert.truthy(err{tma_store = true, tile = {256, 128, 64}, aligned = true}:find("tma_store: C must leave through the LDS epilogue", 1, true))
  end)
end)

describe("ckt.wgmma_desc", function()
  local sw128 = ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({128, 64}, {64, 1}))
  it("derives start, LBO, SBO, swizzle and major from the layout (hand-worked)", function()
    local d = ckt.wgmma_desc{layout = sw128, dtype = "f16", origin = {64, 16}, base = 4096}
    assert.equal(64 * 128 + 32, d.start); assert.equal(1024, d.sbo); assert.equal(128, d.swizzle)
    assert.equal("k", d.major); assert.equal(1024, d.alignment)
    -- (4096 + 8224) >> 4 = 770 = 0x302, LBO 1, SBO 64 = 0x40, mode 1 in bits 62-63
    assert.equal("0x4000004000010302", d.bits)
    local mn = ckt.wgmma_desc{layout = ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({{64, 2}, 64}, {{1, 4096}, 64})), rows = 128}
    assert.equal("mn", mn.major); assert.equal(8192, mn.lbo); assert.equal(1024, mn.sbo)
    local plain = ckt.wgmma_desc{layout = ckt.layout({{8, 8}, {8, 2}}, {{8, 128}, {1, 64}})}
    assert.equal(0, plain.swizzle); assert.equal(128, plain.lbo); assert.equal(256, plain.sbo)
  end)
  it("refuses layouts the hardware cannot read and bad arguments", function()
    local function err(t) local ok, e = pcall(ckt.wgmma_desc, t); assert.is_false(ok); return e end
    assert.truthy(err{layout = ckt.layout({64, 64}, {64, 1})}:find("the hardware reads"))
    assert.truthy(err{layout = ckt.composed(ckt.swizzle(3, 4, 3), 0, ckt.layout({64, 64}, {64, 1}))}:find("hardware swizzles"))
    assert.truthy(err{layout = sw128, base = 512}:find("1024"))
    assert.truthy(err{layout = sw128, dtype = "f32"}:find("only f16, bf16, e4m3 and e5m2 operands", 1, true))
    assert.truthy(err{layout = sw128, rows = 12}:find("multiple of 8"))
    assert.truthy(err{layout = sw128, origin = {0, 60}}:find("does not fit"))
    assert.truthy(err{layout = sw128, bogus = 1}:find("bogus"))
    assert.truthy(err{}:find("layout"))
    assert.truthy(err{layout = sw128, dtype = "nope"}:find("dtype"))
  end)
end)

describe("b:blockwise_gemm with a wgmma instruction", function()
  local T = ckt.gemm_traits{instr = "wgmma_m64n64k16_f16", m_per_wave = 1, n_per_wave = 1}
  local function build(la_layout, pre)
    return ckt.kernel{name = "wg", block = 128, build = function(b)
      if pre then ckt.tensor("lds", "f16", ckt.layout({pre}, {1})) end
      local la = ckt.tensor("lds", "f16", la_layout)
      local lb = ckt.tensor("lds", "f16", ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, 64}, {64, 1})))
      local acc = b:make_blockwise_gemm_xdl_c_vgpr(la, lb, T)
      b:blockwise_gemm(la, lb, acc, T)
    end}
  end
  it("refuses an LDS tile the descriptors cannot describe; places a swizzled one on the swizzle's boundary", function()
    local ok, e = pcall(build, ckt.layout({64, 64}, {64, 1}))
    assert.is_false(ok); assert.truthy(e:find("the hardware reads"))
    assert.truthy(build(ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, 64}, {64, 1}))))
    -- after 16 bytes of another tensor, the 128B-swizzled tiles start at 1024 and 9216, not at 16
    -- and 8208: the builder aligns them (the hardware swizzles absolute addresses)
    local k = build(ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, 64}, {64, 1})), 8)
    assert.equal(1024 + 2 * 8192, k:lds_bytes())
    local cu = k:source("sm_90a")
    assert.truthy(cu:find("(ckt_lds + 1024);", 1, true), cu)
    assert.truthy(cu:find("(ckt_lds + 9216);", 1, true), cu)
  end)
  it("pending MMAs: b:blockwise_gemm{pending=} and b:wgmma_wait, refused where they make no sense", function()
    local function try(f)
      return pcall(ckt.kernel, {name = "wg", block = 128, build = function(b)
        local la = ckt.tensor("lds", "f16", ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, 64}, {64, 1})))
        local lb = ckt.tensor("lds", "f16", ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, 64}, {64, 1})))
        f(b, la, lb, b:make_blockwise_gemm_xdl_c_vgpr(la, lb, T))
      end})
    end
    assert.is_true(try(function(b, la, lb, acc) b:blockwise_gemm(la, lb, acc, T, {pending = 1}); b:wgmma_wait(acc, 0) end))
    local ok, e = try(function(b, la, lb, acc) b:blockwise_gemm(la, lb, acc, T, {pending = 9}) end)
    assert.is_false(ok); assert.truthy(e:find("pending"))
    ok, e = try(function(b, la, lb, acc) b:blockwise_gemm(la, lb, acc, T, {later = 1}) end)
    assert.is_false(ok); assert.truthy(e:find("later"))
    ok, e = try(function(b, la, lb, acc) b:wgmma_wait(acc, -1) end)
    assert.is_false(ok); assert.truthy(e:find("pending"))
    ok, e = try(function(b, la, lb, acc) b:wgmma_wait(la, 0) end)
    assert.is_false(ok); assert.truthy(e:find("register"))
    local M = ckt.gemm_traits{instr = "mma_m16n8k16_f16", m_per_wave = 2, n_per_wave = 4}
    ok, e = pcall(ckt.kernel, {name = "mm", block = 128, build = function(b)
      local la, lb = ckt.tensor("lds", "f16", ckt.layout({64, 32}, {32, 1})), ckt.tensor("lds", "f16", ckt.layout({64, 32}, {32, 1}))
      b:blockwise_gemm(la, lb, b:make_blockwise_gemm_xdl_c_vgpr(la, lb, M), M, {pending = 1})
    end})
    assert.is_false(ok); assert.truthy(e:find("only wgmma"))
  end)

  it("CUDA: every K step of every instruction tile in one statement, a statement a step past 200 operands", function()
    local sw = ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, 64}, {64, 1}))
    local function source(instr, n_per_wave, rows_b)
      local T = ckt.gemm_traits{instr = instr, m_per_wave = 1, n_per_wave = n_per_wave}
      return ckt.kernel{name = "one_statement", block = 128, build = function(b)
        local la = ckt.tensor("lds", "f16", sw)
        local lb = ckt.tensor("lds", "f16", ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({rows_b, 64}, {64, 1})))
        local acc = b:make_blockwise_gemm_xdl_c_vgpr(la, lb, T)
        b:blockwise_gemm(la, lb, acc, T, {zero = true})
      end}:source("sm_90a")
    end
    local function count(s, what) return select(2, s:gsub(what, "")) end
    -- 32 accumulators, 4 K steps: one statement of 4 wgmma (41 operands)
    local one = source("wgmma_m64n64k16_f16", 1, 64)
    assert.equal(1, count(one, "every K step of every instruction tile in one statement"))
    assert.equal(4, count(one, '"wgmma%.mma_async'))
    assert.falsy(one:find("for (int ckt_kk = 0;", 1, true))
    -- two m64n256 tiles a warpgroup: 256 accumulators, past the limit: a statement a step
    local many = source("wgmma_m64n256k16_f16", 2, 512)
    assert.equal(0, count(many, "every K step of every instruction tile in one statement"))
    assert.truthy(many:find("for (int ckt_kk = 0; ckt_kk < 4; ++ckt_kk)", 1, true))
  end)

  it("b:blockwise_gemm{zero = true}: c = a x bᵀ whatever c held (wgmma's scale-d 0; a clear on mma.sync)", function()
    local A = ckt.array("f16", 64 * 64):random{seed = 31, lo = -1, hi = 1}
    local B = ckt.array("f16", 64 * 64):random{seed = 32, lo = -1, hi = 1}
    local R = gemm.reference(A, B, 64, 64, 64, {b_major = "k", out = "f32"})
    local function product(target, traits, lay)
      local k = ckt.kernel{name = "zero_" .. target:gsub("%W", "_"), block = 128, build = function(b)
        local pa, pb, pc = b:pointer("A", "f16", {const = true}), b:pointer("B", "f16", {const = true}), b:pointer("C", "f32")
        local la, lb = ckt.tensor("lds", "f16", lay), ckt.tensor("lds", "f16", lay)
        ckt.tile_window(la, {64, 64}, {0, 0}):store(ckt.tile_window(ckt.tensor(pa, "f16", {shape = {64, 64}}), {64, 64}, {0, 0}):load())
        ckt.tile_window(lb, {64, 64}, {0, 0}):store(ckt.tile_window(ckt.tensor(pb, "f16", {shape = {64, 64}}), {64, 64}, {0, 0}):load())
        b:sync()
        local acc = b:make_blockwise_gemm_xdl_c_vgpr(la, lb, traits)
        b:clear(acc, 0 / 0) -- NaN: what zero must not read
        b:blockwise_gemm(la, lb, acc, traits, {zero = true})
        b:blockwise_gemm(la, lb, acc, traits) -- (and then it accumulates: 2 a bᵀ)
        ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(ckt.tensor(pc, "f32", {shape = {64, 64}}), {64, 64}, {0, 0}), traits):store(acc)
      end}
      local ba, bb, bc = dev:alloc("f16", #A), dev:alloc("f16", #B), dev:alloc("f32", 64 * 64)
      ba:upload(A); bb:upload(B); bc:upload(ckt.array("f32", 64 * 64):poison())
      k:compile{target = target}:launch{grid = 1, A = ba, B = bb, C = bc}
      return bc:download(), k
    end
    local sw = ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, 64}, {64, 1}))
    local C, k = product("cpu:sm_90a", T, sw)
    for i = 0, 64 * 64 - 1 do assert(math.abs(C[i] - 2 * R[i]) <= 64 * 2 ^ -20, ("wgmma: %d: %g vs %g"):format(i, C[i], 2 * R[i])) end
    local cu = k:source("sm_90a")
    -- (every K step in one statement: the first step's scale-d the operand, the later ones' true)
    assert.truthy(cu:find('"r"(0)', 1, true), "scale-d 0 on the first K step")
    assert.truthy(cu:find("setp.eq.b32 q, 0, 0;", 1, true) and cu:find(", q, 1, 1, 0, 0; ", 1, true), "the later K steps accumulate")
    assert.truthy(cu:find('"r"(1)', 1, true), "the second product accumulates")
    local M = ckt.gemm_traits{instr = "mma_m16n8k16_f16", m_per_wave = 2, n_per_wave = 4}
    C = product("cpu:sm_90", M, ckt.layout({64, 64}, {64, 1}))
    for i = 0, 64 * 64 - 1 do assert(math.abs(C[i] - 2 * R[i]) <= 64 * 2 ^ -20, ("mma.sync: %d: %g vs %g"):format(i, C[i], 2 * R[i])) end
    local ok, e = pcall(ckt.kernel, {name = "z", block = 128, build = function(b)
      local la = ckt.tensor("lds", "f16", sw)
      b:blockwise_gemm(la, la, b:make_blockwise_gemm_xdl_c_vgpr(la, la, T), T, {zero = 1})
    end})
    assert.is_false(ok); assert.truthy(e:find("zero must be a boolean or a kernel expression, got number", 1, true))
  end)

  it("b:blockwise_gemm{zero = expression}: the sum starts where it holds (a K loop's first slice, no peeled iteration)", function()
    local A = ckt.array("f16", 64 * 64):random{seed = 33, lo = -1, hi = 1}
    local B = ckt.array("f16", 64 * 64):random{seed = 34, lo = -1, hi = 1}
    local R = gemm.reference(A, B, 64, 64, 64, {b_major = "k", out = "f32"})
    local function product(target, traits, lay, pending)
      local k = ckt.kernel{name = "zero_if_" .. target:gsub("%W", "_"), block = 128, build = function(b)
        local pa, pb, pc = b:pointer("A", "f16", {const = true}), b:pointer("B", "f16", {const = true}), b:pointer("C", "f32")
        local n = b:size("n")
        local la, lb = ckt.tensor("lds", "f16", lay), ckt.tensor("lds", "f16", lay)
        ckt.tile_window(la, {64, 64}, {0, 0}):store(ckt.tile_window(ckt.tensor(pa, "f16", {shape = {64, 64}}), {64, 64}, {0, 0}):load())
        ckt.tile_window(lb, {64, 64}, {0, 0}):store(ckt.tile_window(ckt.tensor(pb, "f16", {shape = {64, 64}}), {64, 64}, {0, 0}):load())
        b:sync()
        local acc = b:make_blockwise_gemm_xdl_c_vgpr(la, lb, traits)
        b:clear(acc, 0 / 0) -- NaN: what the first product must not read
        -- n products, the first one zeroing: n a bᵀ
        b:loop(n, function(i)
          b:blockwise_gemm(la, lb, acc, traits, {zero = ckt.eq(i, 0), pending = pending})
        end)
        if pending then b:wgmma_wait(acc, 0) end
        ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(ckt.tensor(pc, "f32", {shape = {64, 64}}), {64, 64}, {0, 0}), traits):store(acc)
      end}
      local e = k:compile{target = target}
      local out = {}
      for _, n in ipairs{1, 3} do
        local ba, bb, bc = dev:alloc("f16", #A), dev:alloc("f16", #B), dev:alloc("f32", 64 * 64)
        ba:upload(A); bb:upload(B); bc:upload(ckt.array("f32", 64 * 64):poison())
        e:launch{grid = 1, A = ba, B = bb, C = bc, n = n}
        out[n] = bc:download()
      end
      return out, k
    end
    local sw = ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, 64}, {64, 1}))
    local M = ckt.gemm_traits{instr = "mma_m16n8k16_f16", m_per_wave = 2, n_per_wave = 4}
    for _, case in ipairs{{"cpu:sm_90a", T, sw, 1}, {"cpu:sm_90a", T, sw, nil}, {"cpu:sm_90", M, ckt.layout({64, 64}, {64, 1}), nil}} do
      local out, k = product(case[1], case[2], case[3], case[4])
      for _, n in ipairs{1, 3} do
        for i = 0, 64 * 64 - 1 do
          assert(math.abs(out[n][i] - n * R[i]) <= n * 64 * 2 ^ -20, ("%s n = %d: %d: %g vs %g"):format(case[1], n, i, out[n][i], n * R[i]))
        end
      end
      if case[1] == "cpu:sm_90a" then
        assert.truthy(k:source("sm_90a"):find('"r"((int)!(', 1, true), "scale-d 0 on the first K step where the condition holds")
      end
    end
    -- wgmma's scale-d is one operand of a warpgroup-wide instruction: a condition that differs
    -- between threads is refused
    local ok, e = pcall(ckt.kernel, {name = "z", block = 128, build = function(b)
      local la = ckt.tensor("lds", "f16", sw)
      b:blockwise_gemm(la, la, b:make_blockwise_gemm_xdl_c_vgpr(la, la, T), T, {zero = ckt.eq(b:thread_id(), 0), pending = 0})
    end})
    assert.is_false(ok); assert.truthy(tostring(e):find("same on every thread", 1, true), e)
  end)

  it("is refused by targets without wgmma", function()
    local k = build(ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, 64}, {64, 1})))
    local ok, e = pcall(k.compile, k, {target = "cpu:sm_90"})
    assert.is_false(ok); assert.truthy(e:find("sm_90a"))
    ok, e = pcall(k.compile, k, {target = "gfx90a", compile_only = true})
    assert.is_false(ok); assert.truthy(e:find("sm_90a"))
  end)
  it("the instruction description: lane layouts, no B lane layout, targets", function()
    local m = ckt.mma("wgmma_m64n128k16_bf16")
    assert.equal(128, m.lanes); assert.equal(64, m.c_values); assert.equal("bf16", m.a)
    assert.is_true(m:on("sm_90a")); assert.is_false(m:on("sm_90"))
    assert.equal(64 * 128, m:layout("C"):size())
    local ok, e = pcall(m.layout, m, "B")
    assert.is_false(ok); assert.truthy(e:find("descriptor"))
    assert.truthy(tostring(m:grid("C")):find("T0"))
  end)
end)

describe("sm_90a through NVRTC (compile only)", function()
  for _, cfg in ipairs{{tile = {128, 128, 64}, stages = 4}, {tile = {128, 256, 64}, stages = 3}} do
    it(("%dx%dx%d, %d stages: wgmma, registers, no spills"):format(cfg.tile[1], cfg.tile[2], cfg.tile[3], cfg.stages), function()
      -- bulk tensor copies from a producer warp, paced by mbarriers (the default; call sites: the
      -- prelude defines the functions); cp.async with the proxy fence with copy = "cp.async"
      local k = gemm.build{target = "sm_90a", dtype = "bf16", tile = cfg.tile, stages = cfg.stages}
      local tma = k:source("sm_90a")
      assert.truthy(tma:find("wgmma.mma_async.sync.aligned.m64n" .. cfg.tile[2] .. "k16.f32.bf16.bf16", 1, true))
      assert.truthy(tma:find("wgmma.commit_group", 1, true))
      assert.truthy(tma:find("ckt_tma_load_2d(ckt_smem_addr(", 1, true)); assert.truthy(tma:find("ckt_mbar_wait(ckt_smem_addr(", 1, true))
      assert.truthy(tma:find("if (tid >= 256) { /* the producer warp", 1, true)); assert.truthy(tma:find("ckt_mbar_arrive(ckt_smem_addr(", 1, true))
      assert.truthy(tma:find("__launch_bounds__(288)", 1, true))
      local ka = gemm.build{target = "sm_90a", dtype = "bf16", tile = cfg.tile, stages = cfg.stages, copy = "cp.async"}
      local src = ka:source("sm_90a")
      assert.truthy(src:find("fence.proxy.async", 1, true)); assert.falsy(src:find("ckt_tma_load_2d(ckt_smem_addr(", 1, true))
      for _, kk in ipairs{k, ka} do
        local ok, exe = pcall(kk.compile, kk, {target = "sm_90a", compile_only = true})
        if not ok and tostring(exe):find("NVRTC") and tostring(exe):find("not found") then pending("NVRTC not installed: " .. exe) return end
        assert(ok, exe)
        local r = exe:resources()
        -- ptxas serializes wgmma when another instruction defines accumulators while MMAs are in flight
        assert.falsy((exe:log() or ""):find("serialized", 1, true))
        assert.falsy((exe:log() or ""):find("warpgroup.wait is injected", 1, true))
        assert.is_true(r.registers > 64 and r.registers <= 255)
        assert.equal(0, r.spill_stores); assert.equal(0, r.spill_loads)
      end
    end)
  end
  it("refuses a wgmma kernel whose registers spill (its accumulators would be torn)", function()
    -- the persistent 128 x 256 kernel with an f32 output and MMAs in flight: ptxas caps the
    -- registers at 168 and spills (the one-tile kernel fits since its first K slice's MMAs are
    -- in the loop, 154 registers), so the persistent kernel with an f32 output defaults to
    -- mma_pending = 0 and the one-tile kernel to 1
    assert.equal(0, gemm.plan{target = "sm_90a", dtype = "f16", out = "f32", copy = "tma", persistent = true}.mma_pending)
    assert.equal(1, gemm.plan{target = "sm_90a", dtype = "f16", out = "f32", copy = "tma"}.mma_pending)
    local k = gemm.build{target = "sm_90a", dtype = "f16", out = "f32", copy = "tma", persistent = true, mma_pending = 1}
    local ok, e = pcall(k.compile, k, {target = "sm_90a", compile_only = true})
    if not ok and tostring(e):find("NVRTC") and tostring(e):find("not found") then pending("NVRTC not installed: " .. e) return end
    assert.is_false(ok)
    assert.truthy(tostring(e):find("spills %d+ bytes of registers"), e)
    assert.truthy(tostring(e):find("has wgmma", 1, true), e)
  end)
end)
