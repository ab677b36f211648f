-- The attention forward (ckt.kernels.attention) on the CPU targets against the double-precision
-- reference, element by element (outputs poisoned before every run; sizes that do not divide the
-- tiles; GQA; causal with S_q ~= S_k; per-batch key lengths; BSHD and runtime strides), the bad
-- input it refuses before anything runs, and the builder pieces it added: b:reduce{dim=},
-- b:map{into=}, b:require.
local ckt = require "ckt"
local attention = require "ckt.kernels.attention"

local dev = ckt.device("cpu")
local function up(a) local b = dev:alloc(a:dtype(), #a); b:upload(a); return b end

-- one run of case c on target t; returns the kernel's O and LSE and the reference's
local function run(t, c)
  local D, B, H, H_kv, S_q, S_k = c.D, c.B, c.H, c.H_kv or c.H, c.S_q, c.S_k
  local k, grid = attention.build{dtype = c.dtype, head_dim = D, causal = c.causal, lengths = c.lengths ~= nil,
                                  target = t, layout = c.layout, tile = c.tile, overlap = c.overlap, pingpong = c.pingpong}
  local exe = k:compile{target = t}
  local function arr(n, seed) return ckt.array(c.dtype, n):random{seed = seed, lo = -1, hi = 1} end
  local q, kk, v = arr(B * H * S_q * D, 1), arr(B * H_kv * S_k * D, 2), arr(B * H_kv * S_k * D, 3)
  local o, lse = ckt.array(c.dtype, B * H * S_q * D), ckt.array("f32", B * H * S_q)
  o:poison(); lse:poison()
  local bo, bl = up(o), up(lse)
  local args = {grid = grid(B, H, S_q), Q = up(q), K = up(kk), V = up(v), O = bo, LSE = bl,
                B = B, H = H, H_kv = H_kv, S_q = S_q, S_k = S_k}
  local lens
  if c.lengths then
    lens = ckt.array("i32", B)
    for i = 1, B do lens[i - 1] = c.lengths[i] end
    args.lengths = up(lens)
  end
  exe:launch(args)
  bo:download(o); bl:download(lse)
  local ro, rl = attention.reference(q, kk, v, {B = B, H = H, H_kv = H_kv, S_q = S_q, S_k = S_k, head_dim = D,
                                                causal = c.causal, lengths = lens, layout = c.layout})
  return o, lse, ro, rl
end

-- f16: P and O rounded once each (2^-11 relative, |O| <= 1); bf16: 2^-8
local function check(t, c)
  local o, lse, ro, rl = run(t, c)
  local tol = c.dtype == "f16" and 2e-3 or 1.6e-2
  local ok, err, at = o:compare(ro, {atol = tol, rtol = tol})
  assert.is_true(ok, ("%s O: max error %g at %s"):format(t, err, tostring(at)))
  ok, err, at = lse:compare(rl, {atol = 1e-4, rtol = 1e-4})
  assert.is_true(ok, ("%s LSE: max error %g at %s"):format(t, err, tostring(at)))
end

-- small shapes: S not a multiple of the tiles, two query tiles, GQA ratio 2 or 4
local CASES = {
  {dtype = "f16", D = 64, B = 1, H = 2, H_kv = 1, S_q = 70, S_k = 45},
  {dtype = "f16", D = 64, B = 2, H = 4, H_kv = 1, S_q = 37, S_k = 83, causal = true},
  {dtype = "bf16", D = 64, B = 2, H = 2, S_q = 33, S_k = 70, causal = true, lengths = {50, 0}},
  {dtype = "f16", D = 128, B = 2, H = 2, H_kv = 1, S_q = 65, S_k = 40, causal = true}, -- S_q > S_k: rows without keys
  {dtype = "bf16", D = 128, B = 2, H = 2, H_kv = 2, S_q = 20, S_k = 50, lengths = {7, 80}, layout = "bshd"},
  -- 128-row query tiles (two instruction rows a warp): a partial second query tile, causal with
  -- S_q < S_k; key lengths
  {dtype = "f16", D = 64, B = 1, H = 2, H_kv = 1, S_q = 150, S_k = 201, causal = true, tile = {128, 64}},
  {dtype = "bf16", D = 128, B = 2, H = 2, S_q = 129, S_k = 70, lengths = {70, 33}, tile = {128, 32}},
}

describe("attention forward on the CPU targets", function()
  -- every case on mma.sync's emulation, two on MFMA's (cpu = cpu:gfx90a): the suite stays quick
  for _, t in ipairs{"cpu:sm_90", "cpu"} do
    for i, c in ipairs(CASES) do
      if t == "cpu:sm_90" or i == 3 or i == 4 then it(("%s: case %d (%s, head_dim %d, %s%s%s%s)"):format(t, i, c.dtype, c.D, c.causal and "causal" or "not causal",
                                                     c.lengths and ", key lengths" or "", c.layout and (", " .. c.layout) or "",
                                                     c.tile and (", tile %dx%d"):format(c.tile[1], c.tile[2]) or ""), function()
        check(t, c)
      end) end
    end
  end

  -- sm_90a's wgmma path (its emulation): bulk copies from a producer, one or two consumer
  -- warpgroups of 64 rows, P in registers; the next tile's Q Kᵀ overlapping this tile's P V or not
  it("cpu:sm_90a: wgmma, head_dim 128 and 64, causal and not, GQA, key lengths, partial tiles", function()
    check("cpu:sm_90a", {dtype = "f16", D = 128, B = 1, H = 2, H_kv = 1, S_q = 150, S_k = 201, causal = true})
    check("cpu:sm_90a", {dtype = "bf16", D = 64, B = 2, H = 2, S_q = 70, S_k = 45, lengths = {30, 45}, tile = {64, 128}})
  end)
  it("cpu:sm_90a: the overlapped schedule and the serial one, one key tile and many, causal with S_q > S_k", function()
    for _, ov in ipairs{true, false} do
      check("cpu:sm_90a", {dtype = "f16", D = 128, B = 1, H = 2, H_kv = 1, S_q = 150, S_k = 333, causal = true, tile = {128, 64}, overlap = ov})
      check("cpu:sm_90a", {dtype = "bf16", D = 64, B = 2, H = 4, H_kv = 2, S_q = 70, S_k = 60, tile = {64, 128}, overlap = ov})
      check("cpu:sm_90a", {dtype = "f16", D = 64, B = 2, H = 1, S_q = 200, S_k = 90, causal = true, lengths = {90, 1}, tile = {128, 64}, overlap = ov})
    end
  end)
  it("cpu:sm_90a: head_dim 256 (its default 64 x 64), causal, GQA; the ping-pong of two consumer warpgroups", function()
    check("cpu:sm_90a", {dtype = "bf16", D = 256, B = 1, H = 2, H_kv = 1, S_q = 70, S_k = 90, causal = true})
    check("cpu:sm_90a", {dtype = "f16", D = 128, B = 1, H = 2, S_q = 150, S_k = 270, causal = true, tile = {128, 128}, pingpong = true})
  end)
  it("strides given at launch: Q and O in BSHD, K and V in BHSD", function()
    local dt, D, B, H, H_kv, S_q, S_k = "f16", 64, 2, 2, 1, 30, 50
    local k, grid = attention.build{dtype = dt, head_dim = D, strides = true, target = "cpu:sm_90"}
    local exe = k:compile{target = "cpu:sm_90"}
    local function arr(n, seed) return ckt.array(dt, n):random{seed = seed, lo = -1, hi = 1} end
    local q, kk, v = arr(B * S_q * H * D, 1), arr(B * H_kv * S_k * D, 2), arr(B * H_kv * S_k * D, 3)
    local o, lse = ckt.array(dt, B * S_q * H * D), ckt.array("f32", B * H * S_q)
    o:poison(); lse:poison()
    local bo, bl = up(o), up(lse)
    local qs, ks = {S_q * H * D, D, H * D}, {H_kv * S_k * D, S_k * D, D}
    local a = {grid = grid(B, H, S_q), Q = up(q), K = up(kk), V = up(v), O = bo, LSE = bl, B = B, H = H, H_kv = H_kv, S_q = S_q, S_k = S_k}
    for _, x in ipairs{{"q", qs}, {"o", qs}, {"k", ks}, {"v", ks}} do
      a[x[1] .. "_stride_b"], a[x[1] .. "_stride_h"], a[x[1] .. "_stride_s"] = table.unpack(x[2])
    end
    exe:launch(a)
    bo:download(o); bl:download(lse)
    local ro, rl = attention.reference(q, kk, v, {B = B, H = H, H_kv = H_kv, S_q = S_q, S_k = S_k, head_dim = D,
                                                  strides = {q = qs, k = ks, v = ks, o = qs}})
    assert.is_true((o:compare(ro, {atol = 2e-3, rtol = 2e-3})))
    assert.is_true((lse:compare(rl, {atol = 1e-4, rtol = 1e-4})))
    a.q_stride_s = 12 -- not a multiple of 8
    assert.matches("q_stride_s", select(2, pcall(exe.launch, exe, a)))
  end)

  it("rows that see no key give O = 0 and LSE = -inf", function()
    local o, lse = run("cpu:sm_90", {dtype = "f16", D = 64, B = 1, H = 1, S_q = 40, S_k = 10, causal = true})
    -- query i sees keys j <= i - 30: rows 0..29 see none
    for i = 0, 29 do
      assert.are.equal(-math.huge, lse[i])
      assert.are.equal(0, o[i * 64])
    end
    assert.is_true(lse[30] > -math.huge)
  end)

  it("a GPU kernel whose reductions are all lane exchanges does not take the scratch LDS", function()
    local function header_lds(src) return tonumber(src:match("(%d+) bytes of LDS")) end
    local k = attention.build{dtype = "f16", head_dim = 128, tile = {128, 64}, target = "cpu:sm_90a"}
    local all = k:lds_bytes()
    assert.are.equal(all, header_lds(k:source("cpu:sm_90a"))) -- the C dialect exchanges through it
    local gpu = header_lds(k:source("sm_90a"))
    assert.are.equal(all - 4 * 128 * 64, gpu) -- the score tile's f32 scratch, never touched there
    assert.is_true(gpu <= 116 * 1024) -- two blocks fit an H100 SM's 228 KiB
    -- a tree over the block keeps it
    local t = ckt.kernel{name = "tree", block = 128, build = function(b)
      local r = ckt.tensor("register", "f32", ckt.layout({128, 1}, {1, 0}), {lengths = {128, 1}})
      b:clear(r, 1)
      b:block_reduce(r, "sum")
    end}
    assert.are.equal(t:lds_bytes(), header_lds(t:source("sm_90")))
    assert.is_true(t:lds_bytes() > 0)
  end)

  it("wgmma takes A from registers only in its accumulator's distribution (the RS form)", function()
    -- (mma.sync's m16n8 accumulator over 4 warps puts the elements where wgmma's m64n64 one does:
    -- accepted as well; a plain partition of the tile does not)
    local function build(traits_a)
      return pcall(ckt.kernel, {name = "rs", block = 128, build = function(b)
        local SW = ckt.swizzle(3, 3, 3)
        local sB = ckt.tensor("lds", "f16", ckt.layout({64, 64}, {64, 1}), {swizzle = SW})
        local src = ckt.tensor("lds", "f32", ckt.layout({64, 64}, {1, 0}))
        local w = ckt.tile_window(src, {64, 64}, {0, 0})
        local a = traits_a and ckt.make_blockwise_gemm_xdl_c_local_partition(w, traits_a):load()
                  or ckt.local_partition(w, ckt.layout({16, 8}, {8, 1}), b:thread_id()):load()
        local T = ckt.gemm_traits{instr = "wgmma_m64n64k16_f16", m_per_wave = 1, n_per_wave = 1, k_pack = 16}
        local c = b:make_blockwise_gemm_xdl_c_vgpr(ckt.layout({64, 64}, {64, 1}), sB, T)
        b:clear(c, 0)
        b:blockwise_gemm(b:map(function(x) return x end, a, {dtype = "f16"}), sB, c, T)
      end})
    end
    local ok, e = build(ckt.gemm_traits{instr = "wgmma_m64n64k16_f16", m_per_wave = 1, n_per_wave = 1, k_pack = 16})
    assert.is_true(ok, tostring(e))
    assert.matches("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {.-}, {%%32, %%33, %%34, %%35}", e:source("sm_90a"))
    ok, e = build(ckt.gemm_traits{instr = "mma_m16n8k16_f16", m_per_wave = 1, n_per_wave = 8, k_pack = 2})
    assert.is_true(ok, tostring(e))
    ok, e = build(nil)
    assert.is_false(ok)
    assert.matches("a register A on wgmma must be in wgmma_m64n64k16_f16's accumulator distribution: thread", tostring(e))
  end)

  it("the statistics live in the score fragment's distribution", function()
    local k = attention.build{dtype = "f16", head_dim = 64, target = "cpu:sm_90"}
    local src = k:source("cpu:sm_90")
    assert.is_truthy(src:find("max of", 1, true))
    assert.is_truthy(src:find("along dim 1", 1, true))
  end)
end)

describe("attention compiles for the GPUs (where their compilers are installed)", function()
  it("sm_90a: the default (bulk copies, wgmma), causal, key lengths: no spills, wgmma and the 4-d bulk copies in the source", function()
    local k = attention.build{dtype = "f16", head_dim = 128, causal = true, lengths = true, target = "sm_90a"}
    local ok, exe = pcall(k.compile, k, {target = "sm_90a", compile_only = true})
    if not ok and tostring(exe):find("NVRTC not found (", 1, true) then print("SKIPPED sm_90a: " .. tostring(exe)) return end
    assert.is_true(ok, tostring(exe))
    assert.are.equal(0, exe:resources().spill_stores or 0)
    assert.is_truthy(k:source("sm_90a"):find("wgmma.mma_async", 1, true))
    assert.is_truthy(k:source("sm_90a"):find("ckt_tma_load_4d(", 1, true))
    assert.is_truthy(k:source("sm_90a"):find("setmaxnreg.inc", 1, true)) -- two consumer warpgroups beside the producer's
  end)
  for _, t in ipairs{"sm_90", "gfx90a"} do
    -- (the 64-row tile: NVIDIA's default 128 x 32 at head_dim 128 holds 255 registers and spills
    -- 24-76 bytes, measured faster all the same: docs/attention.md. On sm_90 the 64-row tile with
    -- causal masks and key lengths spills 20 bytes since 2026-11-28: ptxas picks 168 registers
    -- for three blocks an SM there; the plain forward holds 164 without spilling)
    local masked = t == "gfx90a"
    it(t .. ": head_dim 128, 64-row tile" .. (masked and ", causal, key lengths" or "") .. ": no scratch" .. (t == "gfx90a" and ", v_mfma" or ", mma.sync"), function()
      local k = attention.build{dtype = "bf16", head_dim = 128, causal = masked, lengths = masked, target = t, tile = {64, 32}}
      local ok, exe = pcall(k.compile, k, {target = t, compile_only = true})
      if not ok and (tostring(exe):find("NVRTC not found (", 1, true) or tostring(exe):find("hipRTC not found (", 1, true)) then
        print("SKIPPED " .. t .. ": " .. tostring(exe)) return
      end
      assert.is_true(ok, tostring(exe))
      assert.are.equal(0, exe:resources().scratch_bytes or 0)
      if t == "gfx90a" then assert.is_truthy(exe:disassembly():find("v_mfma", 1, true)) end
      if t == "sm_90" then
        local src = k:source(t)
        assert.is_truthy(src:find("mma.sync", 1, true))
        -- Q, K and V fragments come by ldmatrix and are held in pairs; P, which the softmax's map
        -- writes value by value, is an A operand one value an element
        assert.is_truthy(src:find("16-bit values in pairs", 1, true))
        assert.is_truthy(src:find("ckt_a%[ckt_r%] = %(ckt_u32%)r%d+%[ckt_ab %+ 2 %* ckt_r%]"))
      end
    end)
  end
end)

describe("attention refuses bad input before anything runs", function()
  local k, grid = attention.build{dtype = "f16", head_dim = 64, target = "cpu:sm_90"}
  local exe = k:compile{target = "cpu:sm_90"}
  local B, H, H_kv, S_q, S_k, D = 1, 4, 2, 16, 16, 64
  local function bufs(o)
    o = o or {}
    local function z(dt, n) local b = dev:alloc(dt, n); b:upload(ckt.array(dt, n)); return b end
    return {Q = z(o.qdt or "f16", o.qn or B * H * S_q * D), K = z("f16", B * H_kv * S_k * D), V = z("f16", B * H_kv * S_k * D),
            O = z("f16", B * H * S_q * D), LSE = z(o.ldt or "f32", B * H * S_q)}
  end
  local function launch(over, o)
    local a = bufs(o)
    a.grid, a.B, a.H, a.H_kv, a.S_q, a.S_k = grid(B, H, S_q), B, H, H_kv, S_q, S_k
    for key, v in pairs(over) do a[key] = v end
    return select(2, pcall(exe.launch, exe, a))
  end
  it("H not a multiple of H_kv", function() assert.matches("H must be a multiple of H_kv", launch{H_kv = 3}) end)
  it("zero and negative sizes", function()
    assert.matches("S_k must be positive", launch{S_k = 0})
    assert.matches("H_kv must be positive", launch{H_kv = 0})
    assert.matches("S_q", launch{S_q = -1})
  end)
  it("sizes larger than the buffers (a wrong head dim among them)", function()
    assert.matches("'Q'", launch({}, {qn = B * H * S_q * 32}))
    assert.matches("'K'", launch{S_k = 17})
  end)
  it("wrong dtypes", function()
    assert.matches("Q", launch({}, {qdt = "bf16"}))
    assert.matches("LSE", launch({}, {ldt = "f16"}))
  end)
  it("bad options name the option", function()
    assert.has_error(function() attention.build{dtype = "f32", head_dim = 64} end, nil)
    assert.matches("head_dim", select(2, pcall(attention.build, {dtype = "f16", head_dim = 60})))
    assert.matches("unknown option 'heads'", select(2, pcall(attention.build, {head_dim = 64, heads = 2})))
    assert.matches("grid: S_q", select(2, pcall(grid, 1, 1, 0)))
  end)
  -- issue 30: values that reach the generated arithmetic are bounded where they are given
  it("a grid past 2^31 - 1 blocks and a scale outside f32 are refused, naming them", function()
    for _, c in ipairs{{1 << 32, 1 << 32, 64}, {1 << 40, 1, 64}, {1 << 20, 1 << 20, 1 << 20}, {1, 1, math.maxinteger}, {2, 1 << 30, 64}} do
      assert.matches("grid: B = .* more blocks than a grid holds", select(2, pcall(grid, c[1], c[2], c[3])))
    end
    assert.equal((1 << 31) - 1, grid((1 << 31) - 1, 1, 64))
    for _, v in ipairs{1e300, -1e39, 1 / 0, 0 / 0, "0.5", true} do
      assert.matches("scale must be a finite number of f32 range, got", select(2, pcall(attention.build, {head_dim = 64, scale = v})))
    end
    assert.matches("BC must be .* got string", select(2, pcall(attention.build, {head_dim = 64, tile = {64, "32"}})))
    assert.matches("BR must be 64 or 128 .* got 96", select(2, pcall(attention.build, {head_dim = 64, tile = {96, 32}, target = "cpu:sm_90"})))
    assert.matches("BC must be 64, 128 or 256 on cpu:sm_90a %(wgmma's N%), got 32", select(2, pcall(attention.build, {head_dim = 64, tile = {64, 32}, target = "cpu:sm_90a"})))
    assert.matches("head_dim 32: cpu:sm_90a's wgmma path takes 64, 128 or 256", select(2, pcall(attention.build, {head_dim = 32, target = "cpu:sm_90a"})))
    assert.matches("overlap must be a boolean, got string", select(2, pcall(attention.build, {head_dim = 64, overlap = "yes", target = "cpu:sm_90a"})))
    assert.matches("overlap: cpu:sm_90 has no asynchronous MMAs", select(2, pcall(attention.build, {head_dim = 64, overlap = true, target = "cpu:sm_90"})))
    assert.matches("needs %d+ bytes of LDS", select(2, pcall(attention.build, {head_dim = 256, tile = {128, 256}, target = "cpu:sm_90a"})))
    assert.matches("BR must be 64 %(the query tile of 4 waves%), got 128", select(2, pcall(attention.build, {head_dim = 64, tile = {128, 32}, target = "cpu:gfx90a"})))
  end)
end)

describe("builder pieces the attention kernel added", function()
  local T = ckt.gemm_traits{instr = "mma_m16n8k16_f16", m_per_wave = 1, n_per_wave = 4, k_pack = 2}
  local M, N = 64, 32
  local function kernel(body)
    return ckt.kernel{name = "rowred", block = 128, build = function(b)
      local X = b:pointer("X", "f32", {const = true})
      local Y = b:pointer("Y", "f32")
      local n = b:size("n")
      local gx = ckt.tensor(X, "f32", {shape = {M, N}})
      local gy = ckt.tensor(Y, "f32", {shape = {M, N}})
      local part = function(g) return ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(g, {M, N}, {0, 0}), T) end
      part(gy):store(body(b, part(gx):load(), n))
    end}
  end
  local x = ckt.array("f32", M * N):random{seed = 5, lo = -4, hi = 4}
  local function exec(k, nv)
    local exe = k:compile{target = "cpu:sm_90"}
    local by = dev:alloc("f32", M * N)
    local ok, e = pcall(exe.launch, exe, {grid = 1, X = up(x), Y = by, n = nv or 1})
    if not ok then return nil, e end
    local y = ckt.array("f32", M * N); by:download(y)
    return y
  end

  it("b:reduce{dim=} gives every holder of a row (dim 1) or column (dim 0) its reduction", function()
    local y = exec(kernel(function(b, r)
      local mx, sm = b:reduce(r, "max", {dim = 1}), b:reduce(r, "sum", {dim = 0})
      return b:map(function(m, s) return m * 1024 + s end, mx, sm)
    end))
    for i = 0, M - 1 do
      local m = -math.huge
      for j = 0, N - 1 do m = math.max(m, x[i * N + j]) end
      for j = 0, N - 1 do
        local s = 0.0
        for ii = 0, M - 1 do s = s + x[ii * N + j] end
        assert.is_true(math.abs(y[i * N + j] - (m * 1024 + s)) < 1e-3)
      end
    end
  end)

  it("a row reduction inside a warp is a butterfly of shuffles on the GPU, the same exchange emulated", function()
    local k = kernel(function(b, r)
      local mx, sm = b:reduce(r, "max", {dim = 1}), b:reduce(r, "sum", {dim = 0})
      return b:map(function(m, s) return m * 1024 + s end, mx, sm)
    end)
    local cuda = k:source("sm_90")
    -- the rows (dim 1) lie in the four lanes of a quad: lane XOR 1 and 2; the columns (dim 0)
    -- cross the warps: through LDS scratch
    assert.matches("ckt_shfl_xor%(ckt_p0, 1%)", cuda)
    assert.matches("ckt_shfl_xor%(ckt_p0, 2%)", cuda)
    assert.matches("lane XOR 1, 2", k:source("cpu:sm_90"))
    assert.matches("the tile through LDS scratch", cuda)
    assert.is_nil(k:source("cpu:sm_90"):find("ckt_shfl_xor(ckt_p0", 1, true))
  end)

  it("b:broadcast spreads a row statistic over another tile of the same rows, in registers", function()
    local T2 = ckt.gemm_traits{instr = "mma_m16n8k16_f16", m_per_wave = 1, n_per_wave = 2, k_pack = 2}
    local k = ckt.kernel{name = "rowbc", block = 128, build = function(b)
      local X = b:pointer("X", "f32", {const = true})
      local Y = b:pointer("Y", "f32")
      local gx = ckt.tensor(X, "f32", {shape = {M, N}})
      local gy = ckt.tensor(Y, "f32", {shape = {M, 16}})
      local r = ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(gx, {M, N}, {0, 0}), T):load()
      local out = ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(gy, {M, 16}, {0, 0}), T2)
      local like = out:load() -- (any register tensor of the 64 x 16 tile's distribution)
      local mx = b:reduce(r, "max", {dim = 1})
      local spread = b:broadcast(mx, like, {dim = 1})
      out:store(b:map(function(m) return m end, spread))
    end}
    assert.matches("spread along dim 1", k:source("cpu:sm_90"))
    local exe = k:compile{target = "cpu:sm_90"}
    local by = dev:alloc("f32", M * 16)
    local y = ckt.array("f32", M * 16)
    for i = 0, M * 16 - 1 do y[i] = 0 / 0 end
    by:upload(y)
    exe:launch{grid = 1, X = up(x), Y = by}
    by:download(y)
    for i = 0, M - 1 do
      local m = -math.huge
      for j = 0, N - 1 do m = math.max(m, x[i * N + j]) end
      for j = 0, 15 do assert.are.equal(m, y[i * 16 + j]) end
    end
  end)

  it("blockwise_gemm refuses a register A whose lanes do not hold their fragments", function()
    local T2 = ckt.gemm_traits{instr = "mma_m16n8k16_f16", m_per_wave = 1, n_per_wave = 2, k_pack = 2}
    local e = select(2, pcall(function()
      return ckt.kernel{name = "rega", block = 128, build = function(b)
        local X = b:pointer("X", "f16", {const = true})
        local gx = ckt.tensor(X, "f16", {shape = {M, N}})
        -- A (64 x 32) in a copy's partition, not an accumulator's fragments
        local a = ckt.local_partition(ckt.tile_window(gx, {M, N}, {0, 0}), ckt.layout({32, 4}, {4, 1}), b:thread_id()):load()
        local sB = ckt.tensor("lds", "f16", ckt.layout({16, N}, {N, 1})) -- the N x K operand
        local acc = b:make_blockwise_gemm_xdl_c_vgpr(ckt.tensor("lds", "f16", ckt.layout({M, N}, {N, 1})), sB, T2)
        b:blockwise_gemm(a, sB, acc, T2)
      end}:source("cpu:sm_90")
    end))
    assert.matches("regather: thread %d+ holds value %d+ of the result on an element %(exactly%) that it does not hold in the source", e)
  end)

  it("t:view reads an LDS tile through another layout, and refuses one that spans more", function()
    local function src(body)
      return select(2, pcall(function()
        return ckt.kernel{name = "views", block = 128, build = function(b) body(b) end}:source("cpu:sm_90")
      end))
    end
    local function ring() return ckt.tensor("lds", "f16", ckt.layout({1, 1, 32, 64}, {0, 0, 64, 1}), {stages = 2}) end
    assert.matches("spans 4096 elements, more than the 2048", src(function() ring():view(ckt.layout({64, 64}, {64, 1})) end))
    assert.matches("view: not an LDS tensor", src(function(b)
      ckt.tensor(b:pointer("X", "f16"), "f16", {shape = {4}}):view(ckt.layout(4)) end))
    assert.matches("view: layout", src(function() ring():view("no layout") end))
    -- a view keeps the ring: its stages are the ring's
    local stages
    local ok = pcall(function()
      return ckt.kernel{name = "views2", block = 128, build = function()
        local v = ring():view(ckt.layout({32, 64}, {64, 1}))
        stages = v:stages()
        v:stage(1)
      end}:source("cpu:sm_90")
    end)
    assert.is_true(ok)
    assert.are.equal(2, stages)
  end)

  it("b:broadcast refuses what registers cannot do, naming why", function()
    local function refused(body)
      return select(2, pcall(function()
        return ckt.kernel{name = "bcbad", block = 128, build = function(b)
          local X = b:pointer("X", "f32", {const = true})
          local gx = ckt.tensor(X, "f32", {shape = {M, N}})
          local r = ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(gx, {M, N}, {0, 0}), T):load()
          body(b, r, gx)
        end}:source("cpu:sm_90")
      end))
    end
    -- a row statistic of the MMA fragment spread over a copy's partition: other lanes hold the rows
    assert.matches("does not hold in the source", refused(function(b, r, gx)
      local other = ckt.local_partition(ckt.tile_window(gx, {M, N}, {0, 0}), ckt.layout({32, 4}, {4, 1}), b:thread_id()):load()
      b:broadcast(b:reduce(r, "max", {dim = 1}), other, {dim = 1})
    end))
    assert.matches("dim 2 outside", refused(function(b, r) b:broadcast(r, r, {dim = 2}) end))
    assert.matches("dim must be an integer", refused(function(b, r) b:broadcast(r, r, {dim = -1}) end))
    assert.matches("unknown", refused(function(b, r) b:broadcast(r, r, {dim = 1, axis = 0}) end))
    assert.matches("distributed register", refused(function(b, r)
      b:broadcast(ckt.tensor("register", "f32", 4), r, {dim = 0}) end))
  end)

  it("b:map{into=} updates a register in place; b:require refuses a launch", function()
    local k = kernel(function(b, r, n)
      b:require(ckt.gt(n, 2), "n must exceed 2")
      b:map(function(v) return v * 2 end, r, {into = r})
      return r
    end)
    local y = exec(k, 3)
    for i = 0, M * N - 1 do assert.are.equal(x[i] * 2, y[i]) end
    local _, e = exec(k, 2)
    assert.matches("n must exceed 2", e)
  end)

  it("refusals name the argument", function()
    local function refused(body) return select(2, pcall(function() return kernel(body):source("cpu:sm_90") end)) end
    assert.matches("dim 2 outside", refused(function(b, r) return b:reduce(r, "max", {dim = 2}) end))
    assert.matches("dim and block", refused(function(b, r) return b:reduce(r, "max", {dim = 1, block = true}) end))
    assert.matches("distributed register", refused(function(b, r)
      b:reduce(ckt.tensor("register", "f32", 4), "max", {dim = 0}); return r end))
    assert.matches("into", refused(function(b, r)
      b:map(function(v) return v end, r, {into = ckt.tensor("register", "f32", 4)}); return r end))
    assert.matches("require: the condition", refused(function(b, r) b:require(b:thread_id(), "x"); return r end))
  end)
end)
