-- The library GEMM's size hints (gemm.build{M =, N =, K =}, ckt.kernels.gemm.shapes): every
-- configuration the model can pick runs correctly on the CPU targets (element by element against
-- the double reference, random data, poisoned output, sizes that are not multiples of the tile,
-- with the GPU's aligned bulk-copy path and the any-size path), a kernel built for hinted sizes
-- stays correct at other sizes, each branch of the model is taken, and bad hints are refused
-- naming the option.
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local shapes = require "ckt.kernels.gemm.shapes"
local cpu = ckt.device("cpu")

local function run(o, M, N, K)
  local k, grid, p = gemm.build(o)
  local e = k:compile{target = o.target}
  local dt = o.dtype or "f16"
  local A = ckt.array(dt, M * K):random{seed = M + 7 * N, lo = -1, hi = 1}
  local B = ckt.array(dt, K * N):random{seed = K + 11, lo = -1, hi = 1}
  local R = gemm.reference(A, B, M, N, K, {a_major = p.a_major, b_major = p.b_major, out = "f32"})
  local C = ckt.array(p.out, M * N):poison()
  local ba, bb, bc = cpu:alloc(dt, #A), cpu:alloc(dt, #B), cpu:alloc(p.out, #C)
  ba:upload(A); bb:upload(B); bc:upload(C)
  local args = {grid = grid(M, N, e), A = ba, B = bb, C = bc, M = M, N = N, K = K}
  if p.split_k > 1 then -- (split_k: a workspace and zeroed counters)
    local sz = p.split_buffers(M, N)
    args.workspace, args.counters = cpu:alloc("f32", sz.workspace), cpu:alloc("i32", sz.counters)
    args.counters:upload(ckt.array("i32", sz.counters))
  end
  e:launch(args)
  bc:download(C)
  ba:close(); bb:close(); bc:close()
  local ok, err, at = C:compare(R, {rtol = 2 ^ -8, atol = K * 2 ^ -20})
  assert(ok, ("%s %dx%dx%d/%d/%d at %dx%dx%d: max error %s at %s"):format(o.target, p.TM, p.TN, p.TK, p.block, p.stages, M, N, K, tostring(err), tostring(at)))
  return p
end

local function cfg(p) return ("%dx%dx%d/%d/%d%s"):format(p.TM, p.TN, p.TK, p.block, p.stages, p.persistent and "@persistent" or "") end

describe("gemm.build with size hints", function()
  for _, t in ipairs{"cpu:sm_90a", "cpu:sm_90"} do
    local list = ckt.target(t).hw.wgmma and shapes.CANDIDATES.hopper or shapes.CANDIDATES.nvidia
    it("runs every candidate of the model on " .. t .. " at sizes off the tile (any-size and aligned paths)", function()
      for _, c in ipairs(list) do
        local o = {target = t, dtype = "f16", tile = c.tile, block = c.block, stages = c.stages, persistent = c.persistent, M = 130, N = 200, K = 100}
        if c.bulk and c.tile[2] == 176 then -- (bulk copies only: refused on the any-size path, naming the tile)
          local ok, e = pcall(gemm.build, o)
          assert.is_false(ok); assert.truthy(tostring(e):find("whole passes", 1, true), tostring(e))
        elseif c.bulk then -- (192 x 192: the model offers it with bulk copies only — on a GPU its
          -- element copies spill — but given as options it builds and runs on the any-size path)
          local p = run(o, 130, 200, 100)
          assert.equal(c.tile[1], p.TM); assert.equal(c.tile[2], p.TN)
          assert.truthy(p.reason:find("no candidate", 1, true), p.reason)
        else
          local p = run(o, 130, 200, 100)
          assert.equal(c.tile[1], p.TM); assert.equal(c.tile[2], p.TN); assert.equal(c.stages, p.stages)
          if c.tma_store then -- (measured with bulk tensor stores: no candidate of the any-size path)
            assert.truthy(p.reason:find("no candidate", 1, true), p.reason)
          else
            assert.truthy(p.reason:find(cfg(p), 1, true), p.reason)
          end
        end
        o.aligned = true -- the GPU default: 16-byte copies (sm_90a: bulk tensor copies)
        local p = run(o, 136, 200, 104)
        assert.truthy(p.reason:find(cfg(p), 1, true), p.reason)
        if t == "cpu:sm_90a" then assert.equal("tma", p.copy) end
        if c.tma_store then assert.is_true(p.tma_store) end
      end
    end)
  end

  it("takes each branch of the model on cpu:sm_90a, and the kernel stays correct at other sizes", function()
    -- small M, long K: at the memory floor, the most SMs busy (64 x 64 tiles, 8 stages)
    local p = run({target = "cpu:sm_90a", M = 16, N = 8192, K = 8192}, 17, 130, 72)
    assert.equal("64x64x64/128/8", cfg(p))
    -- 1024^3: 64 x 128 tiles fill the SMs (32 tiles of the default would leave 100 idle)
    p = run({target = "cpu:sm_90a", M = 1024, N = 1024, K = 1024}, 70, 200, 100)
    assert.equal("64x128x64/128/6", cfg(p))
    -- large: the default (byte-identical kernel to the one built without hints)
    p = run({target = "cpu:sm_90a", M = 4096, N = 4096, K = 4096}, 130, 260, 72)
    assert.equal("128x256x64/256/4", cfg(p))
    local k1 = gemm.build{target = "cpu:sm_90a", M = 8192, N = 8192, K = 8192}
    local k0 = gemm.build{target = "cpu:sm_90a"}
    assert.equal(k0:source("cpu:sm_90a"), k1:source("cpu:sm_90a"))
    -- short K with many tiles: the persistent kernel, its C leaving by bulk tensor stores while the
    -- next tile's slices land (GPU sizes: aligned, bulk copies)
    p = run({target = "cpu:sm_90a", M = 8192, N = 8192, K = 512, aligned = true}, 264, 520, 72)
    assert.equal("128x256x64/256/3@persistent", cfg(p)); assert.is_true(p.tma_store); assert.equal("tma", p.copy)
    -- (not where the bulk stores cannot be or are turned off: element copies, the CPU target's own
    -- unaligned default, batched, f32 C, tma_store = false, cp.async take the default)
    for _, o in ipairs{{aligned = false}, {}, {batched = true}, {out = "f32"}, {aligned = true, tma_store = false}, {aligned = true, copy = "cp.async"}} do
      o.target, o.M, o.N, o.K = "cpu:sm_90a", 8192, 8192, 512
      local p = gemm.plan(o)
      assert.falsy(p.persistent, p.reason)
    end
    -- hints the model is given only partly: the others taken as large
    p = gemm.plan{target = "cpu:sm_90a", M = 64}
    assert.equal("64x64x64/128/8", cfg(p)); assert.truthy(p.reason:find("not hinted", 1, true))
    -- the options given fix the candidates: block = 256 keeps the two-warpgroup tiles
    p = run({target = "cpu:sm_90a", M = 128, N = 4096, K = 4096, block = 256}, 130, 200, 100)
    assert.equal(256, p.block); assert.equal("128x128x64/256/4", cfg(p))
    -- a tile no candidate has: the user's tile and the target's defaults, said so
    p = gemm.plan{target = "cpu:sm_90a", M = 16, N = 16, K = 16, tile = {64, 64, 32}, block = 128}
    assert.equal("64x64x32/128/4", cfg(p)); assert.truthy(p.reason:find("no candidate", 1, true), p.reason)
    -- the model's estimates are there for every candidate, best first
    -- (the any-size path leaves out the candidate measured with bulk tensor stores; rows not whole
    -- 128-byte lines apart with bulk copies add each one-tile candidate in clusters of two)
    -- (counted without the cluster and split variants: the candidates themselves)
    local function plain(model)
      local n = 0
      for _, c in ipairs(model) do if not c.config:find("@cluster", 1, true) and not c.config:find("@split", 1, true) then n = n + 1 end end
      return n
    end
    local function count(model, what) local n = 0 for _, c in ipairs(model) do if c.config:find(what, 1, true) then n = n + 1 end end return n end
    local one_tile = 0
    for _, c in ipairs(shapes.CANDIDATES.hopper) do if not c.persistent then one_tile = one_tile + 1 end end
    local m1000 = gemm.plan{target = "cpu:sm_90a", M = 1000, N = 1000, K = 1000, aligned = true}.model
    local clustered = 0
    for _, c in ipairs(m1000) do if c.config:find("@cluster", 1, true) and not c.config:find("@split", 1, true) then clustered = clustered + 1 end end
    assert.equal(#shapes.CANDIDATES.hopper, plain(m1000)); assert.equal(one_tile, clustered)
    local m1024 = gemm.plan{target = "cpu:sm_90a", M = 1024, N = 1024, K = 1024, aligned = true}.model
    assert.equal(#shapes.CANDIDATES.hopper, plain(m1024)); assert.equal(0, count(m1024, "@cluster"))
    local any_size = 0 -- (the candidates of the any-size path: not measured with bulk stores, not bulk-only)
    for _, c in ipairs(shapes.CANDIDATES.hopper) do if not c.tma_store and not c.bulk then any_size = any_size + 1 end end
    assert.equal(any_size, #gemm.plan{target = "cpu:sm_90a", M = 1000, N = 1000, K = 1000}.model)
    -- K-major rows 8208 bytes apart with bulk copies: clusters of two blocks sharing B's tiles (their
    -- tile rows rounded up to whole clusters), correct at sizes whose tile rows are odd; aligned rows
    -- (K = 4096, or the same sizes M/N-major with M = N = 4096) keep one block a tile
    -- (K-major B: 192 x 176 tiles, four whole waves at 4104^3, in clusters along N sharing A's
    -- tiles; N-major B cannot take 176 rows: 192 x 192 in clusters along M sharing B's)
    p = run({target = "cpu:sm_90a", M = 4104, N = 4104, K = 4104, aligned = true}, 264, 200, 136)
    assert.equal("192x176x64/384/4", cfg(p)); assert.equal(2, p.cluster); assert.equal("n", p.cluster_along)
    assert.truthy(p.reason:find("@cluster_n2", 1, true), p.reason)
    p = run({target = "cpu:sm_90a", M = 4104, N = 4104, K = 4104, aligned = true, b_major = "n"}, 264, 200, 136)
    assert.equal("192x192x64/384/4", cfg(p)); assert.equal(2, p.cluster); assert.equal("m", p.cluster_along)
    -- (at K = 4104 splitting the last of 4.4 waves along K costs what it gains; at long K it pays:
    -- split_k, run at a size whose tiles all split)
    assert.equal(1, p.split_k)
    p = run({target = "cpu:sm_90a", M = 4104, N = 4104, K = 16384, aligned = true}, 264, 200, 136)
    assert.equal("128x256x64/256/4", cfg(p)); assert.equal(3, p.split_k); assert.truthy(p.reason:find("@split3", 1, true), p.reason)
    -- whole waves (4096^3: 3.9 waves, one tile a block estimated faster) and one wave or less keep whole tiles
    assert.equal(1, gemm.plan{target = "cpu:sm_90a", M = 4096, N = 4096, K = 4096, aligned = true}.split_k)
    -- 3072^3: 192 x 192 makes 1.9 waves where 128 x 256 makes 2.2
    p = gemm.plan{target = "cpu:sm_90a", M = 3072, N = 3072, K = 3072, aligned = true}
    assert.equal("192x192x64/384/4", cfg(p)); assert.equal(1, p.cluster)
    assert.equal(1, gemm.plan{target = "cpu:sm_90a", M = 1000, N = 1000, K = 1000, aligned = true}.split_k)
    assert.equal(1, gemm.plan{target = "cpu:sm_90a", M = 4104, N = 4104, K = 4096, aligned = true}.cluster)
    assert.equal(1, gemm.plan{target = "cpu:sm_90a", M = 4096, N = 4096, K = 4104, aligned = true, a_major = "m", b_major = "n"}.cluster)
    -- (not with element copies, cp.async or a cluster given)
    assert.equal(1, gemm.plan{target = "cpu:sm_90a", M = 4104, N = 4104, K = 4104, aligned = true, copy = "cp.async"}.cluster)
    assert.equal(1, gemm.plan{target = "cpu:sm_90a", M = 4104, N = 4104, K = 4104}.cluster)
    assert.equal(1, gemm.plan{target = "cpu:sm_90a", M = 4104, N = 4104, K = 4104, aligned = true, cluster = 1}.cluster)
  end)

  it("takes each branch of the model on cpu:sm_90 (mma.sync)", function()
    local p = run({target = "cpu:sm_90", M = 64, N = 8192, K = 8192}, 65, 130, 72)
    assert.equal("64x64x64/128/4", cfg(p))
    -- large and aligned: the default
    p = run({target = "cpu:sm_90", M = 4096, N = 4096, K = 4096}, 130, 136, 100)
    assert.equal("128x128x32/128/4", cfg(p))
    -- large, K-major, rows not whole 128-byte lines apart: 128 x 128 x 64 in 3 stages (its 64-wide
    -- slices straddle fewer lines; measured faster than the default only there)
    p = run({target = "cpu:sm_90", M = 4104, N = 4104, K = 4104}, 130, 136, 100)
    assert.equal("128x128x64/128/3", cfg(p))
    -- the same M/N-major: the default (the 64-wide tile was measured faster with K-major operands only)
    p = run({target = "cpu:sm_90", M = 4104, N = 4104, K = 4104, a_major = "m", b_major = "n"}, 130, 136, 100)
    assert.equal("128x128x32/128/4", cfg(p))
    p = run({target = "cpu:sm_90", dtype = "bf16", out = "f32", M = 1000, N = 1000, K = 1000}, 129, 67, 40)
    assert.equal("64x64x64/128/4", cfg(p))
  end)

  it("keeps the defaults without hints, and on targets without a calibrated model", function()
    local d = gemm.plan{target = "cpu:sm_90a"}
    assert.equal("128x256x64/256/4", cfg(d)); assert.is_nil(d.reason)
    local p = gemm.plan{target = "cpu", M = 16, N = 8192, K = 8192}
    local q = gemm.plan{target = "cpu"}
    assert.equal(cfg(q), cfg(p)); assert.truthy(p.reason:find("no calibrated model", 1, true), p.reason)
  end)

  it("plans a batched GEMM with hints within the target's LDS (its whole-tile C buffer counted), and runs it", function()
    -- (the model once took a candidate's stages as they were: sm_90a's 128 x 256 x 64 with 4 stages
    -- and the batched C tile needed 262208 bytes of 232448, and the compile refused it)
    for _, t in ipairs{"cpu:sm_90a", "cpu:sm_90"} do
      local limit = ckt.target(t).hw.lds_per_block
      for _, h in ipairs{{4096, 4096, 4096}, {8192, 8192, 512}, {64, 8192, 8192}, {1024, 1024, 1024}} do
        for _, out in ipairs{"f16", "f32"} do
          local k, _, p = gemm.build{target = t, dtype = "f16", out = out, batched = true, M = h[1], N = h[2], K = h[3]}
          assert.truthy(k:lds_bytes() <= limit, ("%s out %s hints %dx%dx%d: %s needs %d bytes of LDS, the target has %d"):format(t, out, h[1], h[2], h[3], cfg(p), k:lds_bytes(), limit))
          assert.truthy(p.reason:find(cfg(p), 1, true), p.reason) -- the reason names the stages planned
        end
      end
    end
    -- the hinted batched kernel computes: L = 2 batches of an off-tile size
    local k, grid, p = gemm.build{target = "cpu:sm_90a", dtype = "f16", batched = true, M = 4096, N = 4096, K = 4096}
    local e = k:compile{target = "cpu:sm_90a"}
    local M, N, K, L = 136, 72, 40, 2
    local A = ckt.array("f16", L * M * K):random{seed = 5, lo = -1, hi = 1}
    local B = ckt.array("f16", L * K * N):random{seed = 6, lo = -1, hi = 1}
    local C = ckt.array(p.out, L * M * N):poison()
    local ba, bb, bc = cpu:alloc("f16", #A), cpu:alloc("f16", #B), cpu:alloc(p.out, #C)
    ba:upload(A); bb:upload(B); bc:upload(C)
    e:launch{grid = grid(M, N, L, e), A = ba, B = bb, C = bc, M = M, N = N, K = K, L = L, batch_stride_A = M * K, batch_stride_B = N * K, batch_stride_C = M * N}
    bc:download(C)
    ba:close(); bb:close(); bc:close()
    local R = gemm.reference(A, B, M, N, K, {a_major = p.a_major, b_major = p.b_major, out = "f32", batched = true, L = L,
                                             batch_stride_A = M * K, batch_stride_B = N * K, batch_stride_C = M * N})
    local ok, err, at = C:compare(R, {rtol = 2 ^ -8, atol = K * 2 ^ -20})
    assert(ok, ("hinted batched %s: max error %s at %s"):format(cfg(p), tostring(err), tostring(at)))
  end)

  it("refuses bad hints naming the option", function()
    for _, d in ipairs{"M", "N", "K"} do
      for _, v in ipairs{0, -3, 1.5, "16", true, 1 << 31} do
        local o = {target = "cpu:sm_90a"}
        o[d] = v
        local ok, err = pcall(gemm.build, o)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("gemm: " .. d .. " = ", 1, true), tostring(err))
        assert.truthy(tostring(err):find("positive integer", 1, true), tostring(err))
      end
    end
    -- the options themselves are still checked with hints
    local ok, err = pcall(gemm.build, {target = "cpu:sm_90a", M = 16, dtype = "f64"})
    assert.is_false(ok); assert.truthy(tostring(err):find("dtype", 1, true))
    ok, err = pcall(gemm.build, {target = "cpu:sm_90a", M = 16, tile = {64, 64}})
    assert.is_false(ok); assert.truthy(tostring(err):find("tile", 1, true))
  end)
end)
