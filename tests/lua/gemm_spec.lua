-- Blockwise GEMM on the CPU target: every matrix instruction emulated lane by lane (cpu:gfx90a
-- for MFMA, cpu:sm_90 for mma.sync), A and B in either major, f16 and bf16, sizes that are and
-- are not multiples of the block tile, random data, the output poisoned, a double-precision
-- reference; f32 through the CPU-only emulated instruction. Tolerance (stated once): the products
-- of f16 / bf16 values are exact in f32 (f32 products round by 2^-24 relative) and the K-long f32
-- sum rounds each partial sum by at most 2^-24 relative, so per element
--   |C - C_ref| <= (K + 1) * 2^-24 * sum_k |A_ik B_kj|   (+ half an ulp of the output dtype, |C_ref| * 2^-p)
-- a bound that grows with K. Then the misuse of every new entry point.
local ckt = require "ckt"
local dev = ckt.device("cpu")

local cfgs = {
  mfma_f32_32x32x8f16 = {target = "cpu:gfx90a", tile = {128, 128, 32}, threads = 256, mx = 2, nx = 2, k_pack = 8},
  mfma_f32_32x32x8bf16_1k = {target = "cpu:gfx90a", tile = {128, 128, 32}, threads = 256, mx = 2, nx = 2, k_pack = 4},
  mfma_f32_16x16x16f16 = {target = "cpu:gfx90a", tile = {64, 64, 32}, threads = 256, mx = 2, nx = 2, k_pack = 4},
  mfma_f32_16x16x16bf16_1k = {target = "cpu:gfx90a", tile = {64, 64, 32}, threads = 256, mx = 2, nx = 2, k_pack = 8},
  mma_m16n8k16_f16 = {target = "cpu:sm_90", tile = {64, 64, 32}, threads = 128, mx = 2, nx = 4, k_pack = 4},
  mma_m16n8k16_bf16 = {target = "cpu:sm_90", tile = {64, 64, 32}, threads = 128, mx = 2, nx = 4, k_pack = 2},
  emu_f32_32x32x8f32 = {target = "cpu:sm_90", tile = {64, 64, 32}, threads = 256, mx = 1, nx = 1, k_pack = 4},
}

-- C (M x N, row-major) = A (M x K) * B (K x N); a_major "k": A stored M x K row-major, "m": K x M;
-- b_major "k": B stored N x K row-major (the tutorial's), "n": K x N.
local function build(instr, o)
  local cfg = cfgs[instr]
  local dt = ckt.mma(instr).a
  local MB, NB, KB = cfg.tile[1], cfg.tile[2], cfg.tile[3]
  local T = cfg.threads
  local traits = ckt.gemm_traits{instr = instr, m_per_wave = cfg.mx, n_per_wave = cfg.nx, k_pack = cfg.k_pack}
  local out = o.out or "f32"
  return ckt.kernel{name = "gemm", block = T, build = function(b)
    local A, B, C = b:pointer("A", dt, {const = true}), b:pointer("B", dt, {const = true}), b:pointer("C", out)
    local M, N, K = b:size("M"), b:size("N"), b:size("K")
    local ga = ckt.tensor(A, dt, {shape = {M, K}, stride = o.a_major == "m" and {1, M} or {K, 1}}, {pad = true})
    local gb = ckt.tensor(B, dt, {shape = {N, K}, stride = o.b_major == "n" and {1, N} or {K, 1}}, {pad = true})
    local gc = ckt.tensor(C, out, {shape = {M, N}}, {pad = true})
    -- the LDS tiles keep the global major (M- or N-contiguous tiles read their fragments element by element)
    local function lds(rows, kmajor)
      local l = kmajor and ckt.layout({rows, KB}, {o.lds_k_stride or KB, 1}) or ckt.layout({rows, KB}, {1, rows})
      return ckt.tensor("lds", dt, l, o.swizzle and {swizzle = o.swizzle} or nil)
    end
    local la, lb = lds(MB, o.a_major ~= "m"), lds(NB, o.b_major ~= "n")
    local function copy_dist(rows, kmajor)
      if kmajor then return {thread_layout = ckt.layout({T // (KB // 8), KB // 8}, {KB // 8, 1}), vector_dim = 1, scalar_per_vector = 8} end
      return {thread_layout = ckt.layout({rows // 8, T // (rows // 8)}, {1, rows // 8}), vector_dim = 0, scalar_per_vector = 8}
    end
    local tm, tn = b:block_order{tiles = {(M + MB - 1) // MB, (N + NB - 1) // NB}}
    local acc = b:make_blockwise_gemm_xdl_c_vgpr(la, lb, traits)
    b:clear(acc)
    b:loop((K + KB - 1) // KB, function(i)
      b:copy(ckt.tile_window(la, {MB, KB}, {0, 0}), ckt.local_tile(ga, {MB, KB}, {tm, i}), {dist = copy_dist(MB, o.a_major ~= "m")})
      b:copy(ckt.tile_window(lb, {NB, KB}, {0, 0}), ckt.local_tile(gb, {NB, KB}, {tn, i}), {dist = copy_dist(NB, o.b_major ~= "n")})
      b:sync()
      b:blockwise_gemm(la, lb, acc, traits)
      b:sync()
    end)
    local part = ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.local_tile(gc, {MB, NB}, {tm, tn}), traits)
    part:store(o.epilogue and b:map(o.epilogue, acc) or acc)
  end}, function(Mv, Nv) return ((Mv + MB - 1) // MB) * ((Nv + NB - 1) // NB) end, cfg
end

-- logical A (M x K) and B (K x N) as Lua numbers already rounded to dt, one set per (dt, size)
local data = {}
local function problem(dt, M, N, K)
  local key = ("%s %d %d %d"):format(dt, M, N, K)
  if data[key] then return data[key] end
  local ra = ckt.array(dt, M * K):random{seed = M + 7 * K, lo = -1, hi = 1}
  local rb = ckt.array(dt, K * N):random{seed = N + 11 * K, lo = -1, hi = 1}
  local a, bm = {}, {}
  for i = 0, M * K - 1 do a[i] = ra[i] end
  for i = 0, K * N - 1 do bm[i] = rb[i] end
  local ref, bound = {}, {}
  for i = 0, M - 1 do
    for j = 0, N - 1 do
      local s, sa = 0.0, 0.0
      for k = 0, K - 1 do
        local p = a[i * K + k] * bm[k * N + j]
        s, sa = s + p, sa + math.abs(p)
      end
      ref[i * N + j], bound[i * N + j] = s, sa
    end
  end
  data[key] = {a = a, b = bm, ref = ref, bound = bound}
  return data[key]
end

local function upload(dt, n, fill)
  local h = ckt.array(dt, n)
  for i = 0, n - 1 do h[i] = fill(i) end
  local d = dev:alloc(dt, n)
  d:upload(h)
  return d
end

local precision = {f32 = 24, f16 = 11, bf16 = 8}

-- run exe on an M x N x K problem and check every element within the stated bound
local function check(exe, grid, o, dt, M, N, K)
  local p = problem(dt, M, N, K)
  local A = upload(dt, M * K, o.a_major == "m" and function(i) return p.a[(i % M) * K + i // M] end or function(i) return p.a[i] end)
  local B = upload(dt, N * K, o.b_major == "n" and function(i) return p.b[i] end or function(i) return p.b[(i % K) * N + i // K] end)
  local out = o.out or "f32"
  local c = ckt.array(out, M * N)
  c:poison()
  local C = dev:alloc(out, M * N)
  C:upload(c)
  exe:launch{grid = grid(M, N), A = A, B = B, C = C, M = M, N = N, K = K}
  C:download(c)
  local post = o.reference or function(x) return x end
  for i = 0, M * N - 1 do
    local want = post(p.ref[i])
    local tol = (K + 1) * 2 ^ -24 * p.bound[i] * (o.reference and 2 or 1) + math.abs(want) * 2 ^ -precision[out]
    local got = c[i]
    if not (math.abs(got - want) <= tol) then
      error(("%dx%dx%d: C[%d][%d] = %.9g, reference %.9g, tolerance %.3g"):format(M, N, K, i // N, i % N, got, want, tol))
    end
  end
end

local sizes = {{1, 1, 1}, {17, 33, 9}, {128, 128, 64}, {200, 136, 264}}

describe("blockwise GEMM on the CPU target, every instruction emulated lane by lane", function()
  local names = {"mfma_f32_32x32x8f16", "mfma_f32_32x32x8bf16_1k", "mfma_f32_16x16x16f16", "mfma_f32_16x16x16bf16_1k", "mma_m16n8k16_f16", "mma_m16n8k16_bf16",
                 "emu_f32_32x32x8f32"}
  for _, instr in ipairs(names) do
    for _, majors in ipairs{{"k", "k"}, {"m", "n"}} do
      it(("%s, A %s-major, B %s-major, sizes 1x1x1 to 200x136x264"):format(instr, majors[1], majors[2]), function()
        local o = {a_major = majors[1], b_major = majors[2]}
        local k, grid, cfg = build(instr, o)
        local exe = k:compile{target = cfg.target}
        for _, s in ipairs(sizes) do check(exe, grid, o, ckt.mma(instr).a, s[1], s[2], s[3]) end
      end)
    end
  end
  for _, instr in ipairs{"mfma_f32_32x32x8f16", "mma_m16n8k16_bf16"} do
    for _, majors in ipairs{{"k", "n"}, {"m", "k"}} do
      it(("%s, A %s-major, B %s-major"):format(instr, majors[1], majors[2]), function()
        local o = {a_major = majors[1], b_major = majors[2]}
        local k, grid, cfg = build(instr, o)
        local exe = k:compile{target = cfg.target}
        for _, s in ipairs{{17, 33, 9}, {200, 136, 264}} do check(exe, grid, o, ckt.mma(instr).a, s[1], s[2], s[3]) end
      end)
    end
  end

  it("swizzled LDS tiles give the same products", function()
    local o = {swizzle = ckt.swizzle(2, 3, 3)}
    local k, grid, cfg = build("mfma_f32_32x32x8f16", o)
    assert.truthy(k:source("gfx90a"):find("o Sw<2,3,3>", 1, true))
    local exe = k:compile{target = cfg.target}
    check(exe, grid, o, "f16", 200, 136, 264)
  end)

  it("the accumulators convert to the output dtype, through an epilogue", function()
    for _, out in ipairs{"f16", "bf16"} do
      local o = {out = out, epilogue = function(x) return ckt.max(x * 0.5 + 1, 0) end,
                 reference = function(x) return math.max(x * 0.5 + 1, 0) end}
      local k, grid, cfg = build("mma_m16n8k16_f16", o)
      local exe = k:compile{target = cfg.target}
      check(exe, grid, o, "f16", 200, 136, 264)
    end
  end)

  it("repeats stay loops; mma.sync's K steps are pipelined (step s + 1 loaded before step s's math)", function()
    -- MFMA: the K steps stay a loop (AMD's compiler schedules the builtins and LDS loads itself)
    local k = build("mfma_f32_16x16x16f16", {})
    for _, t in ipairs{"gfx90a", "cpu"} do
      local src = k:source(t)
      assert.truthy(src:find("for (int ckt_mi = 0; ckt_mi < 2; ++ckt_mi)", 1, true), t)
      assert.truthy(src:find("for (ckt_i64 k1 = 0; k1 < 2; ++k1)", 1, true), t)
    end
    -- mma.sync (inline assembly, kept in order): two K steps of 16 in the 32-wide tile, both
    -- steps' operand loads before the first step's instructions, in every dialect
    local ms = build("mma_m16n8k16_bf16", {})
    for _, t in ipairs{"sm_80", "cpu:sm_90"} do
      local src = ms:source(t)
      local first_math = src:find("blockwise_gemm: ", 1, true)
      local loads = 0
      for _, what in ipairs{"load from LDS", "ldmatrix"} do
        for at in src:gmatch("()/%* line %d+: " .. what) do if at < first_math then loads = loads + 1 end end
      end
      assert.equal(4, loads, t)
      local _, steps = src:gsub("blockwise_gemm: ", "")
      assert.equal(2, steps, t)
      assert.falsy(src:find("for (ckt_i64 k1 = 0; k1 < 2; ++k1)", 1, true), t)
    end
    assert.truthy(k:source("gfx90a"):find("__builtin_amdgcn_mfma_f32_16x16x16f16(", 1, true))
    -- HIP: the accumulators are an array of the instruction's C vectors, which the builtin takes
    -- and returns whole (copied value by value they went through VGPRs around every MFMA); the
    -- CPU target keeps one value an element
    local hip = k:source("gfx90a")
    assert.truthy(hip:find("typedef float ckt_f32x4_r%d+ __attribute__%(%(ext_vector_type%(4%)%)%);"))
    assert.truthy(hip:find("ckt_f32x4_r%d+ r%d+%[%d+%]; /%* registers: %d+ f32 accumulators as %d+ vectors"))
    assert.truthy(hip:find("ckt_c = r%d+%[ckt_mi %* %d+ %+ ckt_ni%];"))
    assert.truthy(hip:find("r%d+%[%d+%]%[%d+%]")) -- (the epilogue reads elements of the vectors)
    assert.falsy(k:source("cpu"):find("ckt_f32x", 1, true))
    local m = build("mma_m16n8k16_bf16", {})
    local src = m:source("sm_80")
    assert.truthy(src:find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 1, true))
    -- K-contiguous LDS tiles: the fragments come by ldmatrix (x4 for A; x4 for B too, two of
    -- the wave's 4 N tiles a load) ...
    assert.truthy(src:find("ldmatrix.x4: A fragments", 1, true) and src:find("ldmatrix.x4: B fragments", 1, true))
    assert.truthy(src:find("ldmatrix.sync.aligned.m8n8.x4.shared.b16", 1, true))
    -- ... into fragments held as 32-bit words of two values, which ldmatrix fills and mma.sync
    -- reads as they are (both A's and B's; the CPU target keeps one value an element) ...
    local _, paired = src:gsub("ckt_u32 r%d+%[%d+%]; /%* registers: %d+ 16%-bit values in pairs", "")
    assert.equal(4, paired) -- (two K steps of 16, A and B each)
    assert.truthy(src:find("ckt_a%[ckt_r%] = r%d+%[ckt_ab / 2 %+ ckt_r%]"))
    assert.truthy(src:find("ckt_b%[ckt_r%] = r%d+%[ckt_bb / 2 %+ ckt_r%]"))
    assert.truthy(src:find("r%d+%[%d+%] = q%[0%];"))
    assert.falsy(m:source("cpu:sm_90"):find("in pairs", 1, true))
    -- ... an M-contiguous A tile has 16-byte M rows: ldmatrix.trans ...
    local mm = build("mma_m16n8k16_bf16", {a_major = "m"}):source("sm_80")
    assert.truthy(mm:find("ldmatrix.x4.trans: A fragments", 1, true))
    assert.truthy(mm:find("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", 1, true))
    assert.truthy(mm:find("ldmatrix.x4: B fragments", 1, true))
    -- ... and a tile whose 16-byte rows are not aligned (K rows of 36 elements) keeps element
    -- loads, and the source says why
    local odd = build("mma_m16n8k16_bf16", {lds_k_stride = 36}):source("sm_80")
    assert.truthy(odd:find("no ldmatrix: ", 1, true))
    assert.falsy(odd:find("ldmatrix.x4: A fragments", 1, true))
    -- (element loads write single values: those fragments stay one value an element)
    assert.falsy(odd:find("16-bit values in pairs", 1, true))
    assert.truthy(odd:find("| ((ckt_u32)r", 1, true))
  end)
end)

describe("matrix instructions as data (ckt.mma)", function()
  it("describes each instruction and draws its lane layouts", function()
    local m = ckt.mma("v_mfma_f32_32x32x8f16")
    assert.equal("mfma_f32_32x32x8f16", m.name)
    assert.same({32, 32, 8}, m.shape)
    assert.equal("f16", m.a)
    assert.equal("f32", m.c)
    assert.equal(64, m.lanes)
    assert.equal(16, m.c_values)
    assert.same({"gfx908", "gfx90a", "gfx942", "gfx950"}, m.targets)
    assert.equal("((32,2),4):((8,4),1)", tostring(m:layout("A")))
    local g = m:grid("C")
    assert.truthy(g:find("T0", 1, true))
    assert.truthy(g:find("32x32", 1, true))
    assert.truthy(tostring(m):find("v_mfma_f32_32x32x8f16", 1, true))
    assert.is_true(m:on("cpu"))
    assert.is_false(ckt.mma("mfma_f32_32x32x8bf16_1k"):on("gfx908"))
    assert.same({"mma_m16n8k16_f16", "mma_m16n8k16_bf16"}, ckt.mma_list("sm_90"))
    assert.equal(25, #ckt.mma_list()) -- 4 MFMA, 2 mma.sync, the CPU-only f32 one, 12 wgmma (wgmma_spec.lua), 6 fp8 wgmma (gemm_fp8_spec.lua)
    assert.same({"emu_f32_32x32x8f32"}, (function() local l = {} for _, n in ipairs(ckt.mma_list("cpu:sm_90")) do if ckt.mma(n).a == "f32" then l[#l + 1] = n end end return l end)())
    assert.is_false(ckt.mma("emu_f32_32x32x8f32"):on("gfx90a"))
    assert.equal("mma_m16n8k16_bf16", ckt.mma_find{target = "cpu:sm_80", a = "bf16"}.name)
    assert.equal("mfma_f32_16x16x16f16", ckt.mma_find{target = "gfx90a", m = 16}.name)
    local t = ckt.gemm_traits("32x32Xdl_4x2XdlPerWave_8K1", "bf16")
    assert.equal("mfma_f32_32x32x8bf16_1k", t.instr.name)
    assert.same({4, 2, 8}, {t.m_per_wave, t.n_per_wave, t.k_pack})
    local geo = t:geometry(256, 128, 32, 256)
    assert.same({2, 2, 16, 2}, {geo.waves_m, geo.waves_n, geo.k_step, geo.pack})
    assert.equal(256, t:tv("C", 256, 128, 32, 256):size() // 128)
    assert.truthy(ckt.help_text("blockwise_gemm"):find("make_blockwise_gemm_xdl_c_vgpr", 1, true))
  end)

  it("refuses bad names, operands and options", function()
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
    assert.truthy(err(ckt.mma, "mfma_f32_64x64x4f16"):find("unknown instruction", 1, true))
    assert.truthy(err(ckt.mma, 42):find("bad argument #1 to 'ckt.mma' (name must be an instruction name or ckt.mma, got number)", 1, true))
    assert.truthy(err(ckt.mma, nil):find("argument", 1, true))
    local m = ckt.mma("mma_m16n8k16_f16")
    assert.truthy(err(m.layout, m, "X"):find("operand", 1, true))
    assert.truthy(err(m.grid, m, "AB"):find("operand", 1, true))
    assert.truthy(err(ckt.mma_find, {a = "f16"}):find("target", 1, true))
    assert.truthy(err(ckt.mma_find, {target = "gfx908", a = "bf16"}):find("gfx908", 1, true))
    assert.truthy(err(ckt.mma_find, {target = "gfx90a", a = "f99"}):find("f99", 1, true))
    assert.truthy(err(ckt.mma_find, {target = "gfx90a", shape = 3}):find("shape", 1, true))
    assert.truthy(err(ckt.gemm_traits, {m_per_wave = 2}):find("instr", 1, true))
    assert.truthy(err(ckt.gemm_traits, {instr = "mma_m16n8k16_f16", k_pack = 3}):find("k_pack 3", 1, true))
    assert.truthy(err(ckt.gemm_traits, {instr = "mma_m16n8k16_f16", m_per_wave = 0}):find("m_per_wave", 1, true))
    assert.truthy(err(ckt.gemm_traits, {instr = "mma_m16n8k16_f16", n_per_wave = "x"}):find("n_per_wave", 1, true))
    assert.truthy(err(ckt.gemm_traits, {instr = "mma_m16n8k16_f16", bogus = 1}):find("bogus", 1, true))
    assert.truthy(err(ckt.gemm_traits, 7):find("bad argument #1 to 'ckt.gemm_traits' (table {instr=, m_per_wave=, n_per_wave=, k_pack=} or CK preset name expected, got number)", 1, true))
    assert.truthy(err(ckt.gemm_traits, "32x32Xdl_4x2XdlPerWave_8K1", "f32"):find("f32", 1, true))
    assert.truthy(err(ckt.gemm_traits, "nonsense"):find("preset", 1, true))
    local t = ckt.gemm_traits{instr = "mfma_f32_32x32x8f16", m_per_wave = 2, n_per_wave = 2, k_pack = 8}
    assert.truthy(err(t.geometry, t, 128, 128, 32, 128):find("threads", 1, true))
    assert.truthy(err(t.geometry, t, 100, 128, 32, 256):find("MPerBlock 100", 1, true))
    assert.truthy(err(t.geometry, t, 128, 128, "x", 256):find("KPerBlock", 1, true))
    assert.truthy(err(t.tv, t, "Q", 128, 128, 32, 256):find("operand", 1, true))
  end)
end)

describe("blockwise GEMM misuse in the builder", function()
  local traits = ckt.gemm_traits{instr = "mfma_f32_32x32x8f16", m_per_wave = 2, n_per_wave = 2, k_pack = 8}
  local function kernel_err(block, fn)
    local ok, e = pcall(ckt.kernel, {name = "bad", block = block, build = fn})
    assert.is_false(ok)
    return tostring(e)
  end
  local function tiles(dt)
    return ckt.tensor("lds", dt or "f16", ckt.layout({128, 32}, {32, 1})), ckt.tensor("lds", dt or "f16", ckt.layout({128, 32}, {32, 1}))
  end

  it("names the argument that is wrong", function()
    assert.truthy(kernel_err(256, function(b) local la, lb = tiles(); b:make_blockwise_gemm_xdl_c_vgpr(la, lb, {}) end):find("bad argument #3 to 'make_blockwise_gemm_xdl_c_vgpr' (GEMM traits (ckt.gemm_traits) expected, got table)", 1, true))
    assert.truthy(kernel_err(256, function(b) local la = tiles(); b:make_blockwise_gemm_xdl_c_vgpr(la, 5, traits) end):find("bad argument #2 to 'make_blockwise_gemm_xdl_c_vgpr' (b_tile: a GEMM tile has 2 modes, this layout has 1)", 1, true))
    assert.truthy(kernel_err(256, function(b)
      local la = tiles()
      b:make_blockwise_gemm_xdl_c_vgpr(la, ckt.layout({128, 64}, {64, 1}), traits)
    end):find("K = 64", 1, true))
    assert.truthy(kernel_err(256, function(b)
      local la, lb = tiles()
      b:make_blockwise_gemm_xdl_c_vgpr(la, ckt.layout({128, 32, 2}, {64, 1, 32}), traits)
    end):find("2 modes", 1, true))
    assert.truthy(kernel_err(256, function(b)
      b:make_blockwise_gemm_xdl_c_vgpr(ckt.tensor("register", "f16", 4), ckt.layout({128, 32}, {32, 1}), traits)
    end):find("register tensor", 1, true))
    -- tiles the traits do not divide, a thread count that does not match the waves
    assert.truthy(kernel_err(256, function(b)
      b:make_blockwise_gemm_xdl_c_vgpr(ckt.layout({96, 32}, {32, 1}), ckt.layout({128, 32}, {32, 1}), traits)
    end):find("MPerBlock 96", 1, true))
    assert.truthy(kernel_err(128, function(b) local la, lb = tiles(); b:make_blockwise_gemm_xdl_c_vgpr(la, lb, traits) end):find("threads", 1, true))
    assert.truthy(kernel_err(256, function(b)
      b:make_blockwise_gemm_xdl_c_vgpr(ckt.layout({128, 24}, {24, 1}), ckt.layout({128, 24}, {24, 1}), traits)
    end):find("KPerBlock 24", 1, true))
    -- operand dtypes the instruction lacks
    assert.truthy(kernel_err(256, function(b)
      local la, lb = tiles("f32")
      b:blockwise_gemm(la, lb, b:make_blockwise_gemm_xdl_c_vgpr(la, lb, traits), traits)
    end):find("a_lds is f32", 1, true))
    assert.truthy(kernel_err(256, function(b)
      local la, lb = tiles()
      b:blockwise_gemm(la, lb, ckt.tensor("register", "f32", 64), traits)
    end):find("c_reg", 1, true))
    assert.truthy(kernel_err(256, function(b)
      local la, lb = tiles()
      b:blockwise_gemm(la, "x", b:make_blockwise_gemm_xdl_c_vgpr(la, lb, traits), traits)
    end):find("bad argument #2 to 'blockwise_gemm' (b_lds: tensor (ckt.tensor) expected, got string)", 1, true))
    assert.truthy(kernel_err(256, function(b)
      local la, lb = tiles()
      b:blockwise_gemm(la, lb, b:make_blockwise_gemm_xdl_c_vgpr(la, lb, traits))
    end):find("bad argument #4 to 'blockwise_gemm' (GEMM traits (ckt.gemm_traits) expected, got no value)", 1, true))
    assert.truthy(kernel_err(256, function(b)
      local la, lb = tiles()
      local c = b:make_blockwise_gemm_xdl_c_vgpr(la, lb, traits)
      b:when(ckt.lt(b:thread_id(), 64), function() b:blockwise_gemm(la, lb, c, traits) end)
    end):find("thread id", 1, true))
    -- the C partition
    assert.truthy(kernel_err(256, function(b)
      local C = b:pointer("C", "f32")
      ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tensor(C, "f32", {shape = {256, 256}}), traits)
    end):find("bad argument #1 to 'make_blockwise_gemm_xdl_c_local_partition' (c_tile: tile window expected, got ckt.ktensor)", 1, true))
    assert.truthy(kernel_err(256, function(b)
      local C = b:pointer("C", "f32")
      local g = ckt.tensor(C, "f32", {shape = {256, 256}})
      ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(g, {128, 128}, {0, 0}), "traits")
    end):find("bad argument #2 to 'make_blockwise_gemm_xdl_c_local_partition' (GEMM traits (ckt.gemm_traits) expected, got string)", 1, true))
    assert.truthy(kernel_err(256, function(b)
      local C = b:pointer("C", "f32")
      local g = ckt.tensor(C, "f32", {shape = {256, 256}})
      ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(g, {128, 64}, {0, 0}), traits)
    end):find("threads", 1, true))
  end)

  it("refuses a target without the instruction when the source is made", function()
    local f = build("emu_f32_32x32x8f32", {})
    for _, t in ipairs{"gfx90a", "sm_90"} do
      local okf, ef = pcall(f.source, f, t)
      assert.is_false(okf)
      assert.truthy(tostring(ef):find("emu_f32_32x32x8f32", 1, true), t)
    end
    local k = build("mfma_f32_32x32x8bf16_1k", {})
    for _, t in ipairs{"sm_90", "gfx908", "cpu:sm_90"} do
      local ok, e = pcall(k.source, k, t)
      assert.is_false(ok)
      assert.truthy(tostring(e):find("v_mfma_f32_32x32x8bf16_1k", 1, true), t)
    end
    local m = build("mma_m16n8k16_f16", {})
    local ok, e = pcall(m.source, m, "cpu")
    assert.is_false(ok)
    assert.truthy(tostring(e):find("gfx90a", 1, true))
  end)

  it("the C partition is also a builder method; both forms split the tile alike", function()
    ckt.kernel{name = "ok", block = 256, build = function(b)
      local C = b:pointer("C", "f32")
      local w = ckt.tile_window(ckt.tensor(C, "f32", {shape = {256, 256}}), {128, 128}, {0, 0})
      local p1 = b:make_blockwise_gemm_xdl_c_local_partition(w, traits)
      local p2 = ckt.make_blockwise_gemm_xdl_c_local_partition(w, traits)
      assert.equal(64, p1:nvalues())
      assert.equal(p1:nvalues(), p2:nvalues())
      local ok, e = pcall(ckt.make_blockwise_gemm_xdl_c_local_partition, p1, traits)
      assert.is_false(ok)
      assert.truthy(tostring(e):find("partition", 1, true))
    end}
  end)

  it("is refused outside a build function", function()
    local la
    ckt.kernel{name = "k", block = 256, build = function() la = ckt.tensor("lds", "f16", ckt.layout({128, 32}, {32, 1})) end}
    local ok, e = pcall(ckt.make_blockwise_gemm_xdl_c_local_partition, la, traits)
    assert.is_false(ok)
    assert.truthy(tostring(e):find("c_tile", 1, true))
  end)
end)
