-- Thread-block clusters: the library GEMM with cluster = 2 | 4 (the blocks of n tile rows of one
-- tile column share B's tiles, each copying a part of every box into all of them, and release a
-- stage in all of them) on cpu:sm_90a element by element against the double reference, outputs
-- poisoned, at sizes whose tile rows are not a multiple of the cluster; the builder's pieces
-- (b:cluster, multicast copies, arrivals in the cluster) and their refusals; the launch's grid.
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local checks = require "gemm_checks"
local cpu, refused = checks.cpu, checks.refused

local function run(o, M, N, K)
  local k, grid, p = gemm.build(o)
  local e = k:compile{target = o.target}
  local R, ba, bb = checks.problem(o, p, M, N, K)
  local C = ckt.array(p.out, M * N):poison()
  local bc = cpu:alloc(p.out, #C)
  bc:upload(C)
  e:launch{grid = grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K}
  bc:download(C)
  local ok, err, at = checks.compare(C, R, p, K)
  assert(ok, ("%s %s cluster %d %dx%dx%d: max error %s at %s"):format(o.target, o.dtype, p.cluster, M, N, K, tostring(err), tostring(at)))
  return p, grid, e, {A = ba, B = bb, C = bc}
end

describe("the GEMM in clusters of blocks", function()
  it("runs on cpu:sm_90a at sizes off the tiles, every major, clusters of 2 and 4", function()
    local o = {target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, stages = 4, copy = "tma", cluster = 2}
    local p, grid = run(o, 136, 200, 264) -- 3 tile rows: the last cluster's second block past M
    assert.equal(2, p.cluster)
    assert.equal(16, grid(136, 200)); assert.equal(0, grid(136, 200) % 2)
    run(o, 64, 64, 8)                     -- one slice; a cluster of one tile and one past M
    run(o, 200, 136, 0)                   -- K = 0: C = 0, the producer's last waits at once
    run({target = "cpu:sm_90a", dtype = "bf16", out = "f32", a_major = "m", b_major = "n", tile = {64, 64, 32}, block = 128,
         stages = 3, copy = "tma", cluster = 2, epilogue = function(x) return ckt.max(x, 0) end}, 200, 136, 72)
    -- four blocks a cluster, two MMA groups in flight (the last two slices released after the loop)
    local p4, grid4 = run({target = "cpu:sm_90a", dtype = "bf16", tile = {64, 128, 64}, block = 128, stages = 4, copy = "tma",
                           mma_pending = 2, cluster = 4}, 136, 264, 72)
    assert.equal(2, p4.mma_pending); assert.equal(12, grid4(136, 264))
    -- two warpgroups and bulk tensor stores of C (the GPU default's shape)
    run({target = "cpu:sm_90a", dtype = "f16", tile = {128, 128, 64}, block = 256, stages = 3, copy = "tma", aligned = true,
         cluster = 2}, 264, 136, 200)
    -- along N: tile columns of one tile row share A's tile (3 tile columns: the last cluster's
    -- second block past N); 128 x 208 (wgmma n208, 4104 = 20 x 208 columns) along N
    local pn, gn = run({target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, stages = 4, copy = "tma",
                        cluster = 2, cluster_along = "n"}, 200, 136, 264)
    assert.equal("n", pn.cluster_along); assert.equal(16, gn(200, 136))
    run({target = "cpu:sm_90a", dtype = "bf16", out = "f32", a_major = "m", tile = {64, 64, 32}, block = 128, stages = 4,
         copy = "tma", cluster = 4, cluster_along = "n"}, 136, 200, 72)
    local p208 = run({target = "cpu:sm_90a", dtype = "f16", tile = {128, 208, 64}, block = 256, stages = 4, copy = "tma",
                      aligned = true, cluster = 2, cluster_along = "n"}, 264, 424, 136)
    assert.equal("wgmma_m64n208k16_f16", p208.instr)
  end)

  it("emits the cluster for sm_90a: its dimensions, the multicast of B's parts, releases in every block", function()
    local k, _, p = gemm.build{target = "sm_90a", dtype = "f16", cluster = 2}
    local src = k:source("sm_90a")
    assert.truthy(src:find("__cluster_dims__(2, 1, 1) __launch_bounds__(288)", 1, true))
    assert.truthy(src:find("ckt_cluster_sync();", 1, true))
    -- A's box alone, B's 256 x 64 box in two parts of 128 rows (16 KiB apart in LDS)
    assert.truthy(src:find("ckt_tma_load_2d(", 1, true))
    assert.truthy(src:find("ckt_mbar_expect_tx(ckt_bar, 32768); /* the whole box", 1, true))
    assert.truthy(src:find("+ ckt_rank * 16384u, &ckt_tmap1, (int)(w1_1), (int)((w1_0) + (int)ckt_rank * 128), ckt_bar, 0x3);", 1, true))
    assert.truthy(src:find("ckt_mbar_arrive_cluster(", 1, true))
    assert.truthy(p.tma_store)
    checks.compiles_clean(k)
  end)

  it("refuses a cluster where it cannot be, naming the option", function()
    refused({target = "cpu:sm_90a", cluster = 3, copy = "tma"}, "cluster 3 must be 1, 2 or 4")
    refused({target = "cpu:sm_90a", cluster = "2", copy = "tma"}, "cluster 2 must be 1, 2 or 4")
    refused({target = "cpu:sm_90a", cluster = 2}, "cluster: the blocks share tiles by bulk copies")
    refused({target = "sm_90", cluster = 2}, "cluster: the blocks share tiles by bulk copies")
    refused({target = "sm_90a", cluster = 2, persistent = true}, "cluster: one tile a block")
    refused({target = "sm_90a", cluster = 2, batched = true}, "cluster: one problem (not batched)")
    refused({target = "sm_90a", cluster = 2, cluster_along = "k"}, "cluster_along 'k' is not \"m\" or \"n\"")
    -- (208 rows are not whole 64-row atoms of an N-major B tile)
    refused({target = "sm_90a", tile = {128, 208, 64}, b_major = "n"}, "tile of 208 rows is not whole 64-row atoms")
    local _, _, p = gemm.build{target = "sm_90a", cluster = 1}
    assert.equal(1, p.cluster)
  end)

  it("refuses a launch whose grid is not whole clusters", function()
    local _, grid, e, buf = run({target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, stages = 4, copy = "tma",
                                 cluster = 2}, 64, 64, 32)
    assert.equal(2, grid(64, 64)) -- one tile row: a cluster of it and a block past M
    local ok, err = pcall(e.launch, e, {grid = 3, A = buf.A, B = buf.B, C = buf.C, M = 64, N = 64, K = 32})
    assert.is_false(ok)
    assert.truthy(tostring(err):find("grid.x is 3, not a multiple of the kernel's clusters of 2 blocks", 1, true), tostring(err))
  end)
end)

describe("b:cluster and the cluster's copies and arrivals", function()
  local function kernel(build) return ckt.kernel{name = "cl", block = 64, build = build} end
  it("gives the block's rank and its cluster's index", function()
    local rank, id
    kernel(function(b) rank, id = b:cluster(4) end)
    assert.truthy(tostring(rank):find("% 4", 1, true) or tostring(rank):find("mod", 1, true), tostring(rank))
    assert.truthy(tostring(id):find("4", 1, true), tostring(id))
  end)
  it("refuses bad sizes, a second cluster, a cluster after operations, and the cluster's ops without one", function()
    local function fails(build, text)
      local ok, e = pcall(kernel, build)
      assert.is_false(ok)
      assert.truthy(tostring(e):find(text, 1, true), tostring(e))
    end
    fails(function(b) b:cluster(3) end, "cluster: 3 blocks a cluster (2, 4 or 8)")
    fails(function(b) b:cluster(0) end, "cluster: 0 blocks a cluster")
    fails(function(b) b:cluster(-2) end, "cluster: -2 blocks a cluster")
    fails(function(b) b:cluster("x") end, "number expected")
    fails(function(b) b:cluster(2); b:cluster(2) end, "the kernel has one already")
    fails(function(b)
      b:loop(2, function() end)
      b:cluster(2)
    end, "comes before it (a kernel's blocks are in clusters from its start)")
    fails(function(b)
      local e = b:mbarriers{count = 1, arrivals = 2}
      b:mbarrier_arrive{barrier = e, at = 0, cluster = true}
    end, "arriving in the cluster needs a cluster of blocks")
    fails(function(b)
      b:cluster(2)
      local e = b:mbarriers{count = 1, arrivals = 64}
      b:mbarrier_arrive{barrier = e, at = 0, cluster = true}
    end, "expects 64 arrivals a phase, not 4")
    fails(function(b)
      b:cluster(2)
      local e = b:mbarriers{count = 1, arrivals = 4}
      b:mbarrier_arrive{barrier = e, at = 0, cluster = "yes"}
    end, "cluster")
  end)
  it("on the CPU targets, refuses a launch whose blocks of one cluster share different boxes", function()
    -- each block lands the whole shared box (its cluster's parts) and stores it at its own rows
    local function kernel2(shared)
      return ckt.kernel{name = "mc", block = 128, build = function(b)
        local _, id = b:cluster(2)
        local gx = ckt.tensor(b:pointer("X", "f16", {const = true}), "f16", {shape = {256, 64}}, {pad = true})
        local gy = ckt.tensor(b:pointer("Y", "f16"), "f16", {shape = {256, 64}}, {pad = true})
        local s = ckt.tensor("lds", "f16", ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, 64}, {64, 1})))
        local full = b:mbarriers{count = 1, arrivals = 1}
        local row = shared and id * 64 or b:block_id(0) * 64 -- (not shared: each block its own rows)
        b:tma_copy{src = ckt.tile_window(gx, {64, 64}, {row, 0}), dst = ckt.tile_window(s, {64, 64}, {0, 0}), barrier = full, at = 0, multicast = true}
        b:mbarrier_wait{barrier = full, at = 0, phase = 0}
        ckt.tile_window(gy, {64, 64}, {b:block_id(0) * 64, 0}):store(ckt.tile_window(s, {64, 64}, {0, 0}):load())
      end}
    end
    local x = ckt.array("f16", 256 * 64):random{seed = 5, lo = -1, hi = 1}
    local bx, by = cpu:alloc("f16", #x), cpu:alloc("f16", #x)
    bx:upload(x)
    local k = kernel2(true)
    assert.truthy(k:source("sm_90a"):find("ckt_tma_load_2d_multicast(", 1, true))
    k:compile{target = "cpu:sm_90a"}:launch{grid = 4, X = bx, Y = by}
    local y = ckt.array("f16", #x)
    by:download(y)
    for blk = 0, 3 do -- block b holds its cluster's box: rows (b // 2) 64 ..
      for i = 0, 64 * 64 - 1, 97 do assert.equal(x[(blk // 2) * 4096 + i], y[blk * 4096 + i]) end
    end
    local ok, err = pcall(function()
      kernel2(false):compile{target = "cpu:sm_90a"}:launch{grid = 4, X = bx, Y = by}
      by:download(y) -- (the launch's error, as a GPU's, is the stream's once it has run)
    end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("block 1 of a cluster of 2 shared other boxes by its multicast copies than block 0", 1, true), tostring(err))
  end)

  it("refuses clusters on targets without them", function()
    local k = kernel(function(b) b:cluster(2) end)
    local ok, e = pcall(k.source, k, "gfx90a")
    assert.is_false(ok)
    assert.truthy(tostring(e):find("clusters of blocks: target 'gfx90a' has none", 1, true), tostring(e))
    assert.truthy(k:source("sm_90"):find("__cluster_dims__(2, 1, 1)", 1, true))
  end)
end)
