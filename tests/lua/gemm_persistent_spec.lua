-- The library GEMM with persistent = true | blocks: a grid of that many blocks walks the tiles in
-- grouped order with one stream of K slices whose copies run on across tile boundaries. Checked on
-- the CPU targets (the same lowering the GPUs run) element by element against the double
-- reference, outputs poisoned, sizes off the tiles, K shorter than the copies' look-ahead, grids
-- smaller and larger than the tile count; and the option's refusals.
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local checks = require "gemm_checks"
local cpu, refused = checks.cpu, checks.refused

local function run(o, M, N, K, grid_override)
  local k, grid, p = gemm.build(o)
  local e = k:compile{target = o.target}
  local R, ba, bb = checks.problem(o, p, M, N, K)
  local C = ckt.array(p.out, M * N):poison()
  local bc = cpu:alloc(p.out, #C)
  bc:upload(C)
  e:launch{grid = grid_override or grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K}
  bc:download(C)
  local ok, err, at = checks.compare(C, R, p, K)
  assert(ok, ("%s %s %dx%dx%d grid %d: max error %s at %s"):format(o.target, o.dtype, M, N, K, grid_override or grid(M, N), tostring(err), tostring(at)))
  return p, grid
end

describe("the persistent GEMM", function()
  it("on cpu:sm_90a (wgmma, MMAs left in flight): several tiles a block, K slices across tiles", function()
    local o = {target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, stages = 4, persistent = 3}
    local p, grid = run(o, 200, 136, 264)
    assert.equal(3, grid(200, 136)); assert.equal(1, p.mma_pending)
    run(o, 130, 70, 16)            -- K below the look-ahead: zero-filled slices fill the tile's stream
    run(o, 64, 64, 32, 5)          -- more blocks than tiles: the extra ones do nothing
    run({target = "cpu:sm_90a", dtype = "bf16", out = "f32", a_major = "m", b_major = "n", tile = {64, 64, 32}, block = 128,
         stages = 3, persistent = 2, epilogue = function(x) return ckt.max(x, 0) end}, 136, 72, 100)
  end)
  it("with bulk tensor copies (copy = \"tma\", warp-specialized) on cpu:sm_90a", function()
    local o = {target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, stages = 4, persistent = 3, copy = "tma"}
    local p, grid = run(o, 200, 136, 264)
    assert.equal(3, grid(200, 136)); assert.equal(1, p.mma_pending)
    run(o, 130, 70, 16)            -- one slice a tile
    run(o, 64, 64, 32, 5)          -- more blocks than tiles: the extra ones do nothing
    -- two groups of MMAs in flight: the last two slices of each tile released after the tile
    run({target = "cpu:sm_90a", dtype = "bf16", tile = {64, 128, 64}, block = 128, stages = 4, mma_pending = 2,
         persistent = 2, copy = "tma"}, 136, 264, 72)
    run({target = "cpu:sm_90a", dtype = "bf16", tile = {64, 128, 64}, block = 128, stages = 4, mma_pending = 2,
         persistent = 2, copy = "tma"}, 136, 264, 40) -- fewer slices than MMA groups in flight
    run({target = "cpu:sm_90a", dtype = "f16", out = "f32", a_major = "m", b_major = "n", tile = {64, 64, 32}, block = 128,
         stages = 3, persistent = 2, copy = "tma", epilogue = function(x) return ckt.max(x, 0) end}, 136, 72, 100)
  end)
  it("two warpgroups and bulk copies: a producer warpgroup, C through the LDS buffer tile after tile", function()
    -- the producer hands its registers to the block's warpgroups (setmaxnreg on sm_90a), which
    -- leaves room for the 16-bit C tile to go out through LDS while the next tile's stages fill
    local o = {target = "cpu:sm_90a", dtype = "f16", tile = {128, 64, 32}, block = 256, stages = 4, persistent = 3,
               copy = "tma", aligned = true}
    local _, _, p = gemm.build(o)
    assert.is_true(p.producer_warpgroup)
    local src = gemm.build(o):source("cpu:sm_90a")
    assert.truthy(src:find("store to LDS lds%d+ %(%(64,2%),%(64,1%)%):%(%(64,4096%),%(1,4096%)%) o Sw<3,3,3>"), "C through a swizzled LDS buffer a warpgroup")
    assert.truthy(src:find("bulk tensor store: lds%d+ %(128B swizzle%) %-> the 64 x 64 box of C"), "C leaves by bulk tensor stores")
    assert.truthy(src:find("the bulk stores have read their LDS tiles", 1, true), "the next tile waits for the last one's stores to read the buffer")
    run(o, 264, 200, 136)          -- 3 x 4 tiles over 3 blocks: the buffer reused
    run(o, 136, 72, 16)            -- one slice a tile
    run({target = "cpu:sm_90a", dtype = "bf16", tile = {128, 128, 64}, block = 256, stages = 3, persistent = 2, copy = "tma",
         aligned = true, a_major = "m", b_major = "n", epilogue = function(x) return ckt.max(x, 0) end}, 264, 136, 200)
    -- one warpgroup keeps the producer warp (nothing to hand over: 255 registers a thread already)
    local _, _, p1 = gemm.build{target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, persistent = 2, copy = "tma"}
    assert.is_false(p1.producer_warpgroup)
    -- asked for one tile a block too (off by default there); refused where it cannot be, naming it
    local o2 = {target = "cpu:sm_90a", dtype = "bf16", tile = {128, 64, 32}, block = 256, stages = 3, copy = "tma",
                aligned = true, producer_warpgroup = true}
    local _, _, p2 = gemm.build(o2)
    assert.is_true(p2.producer_warpgroup)
    run(o2, 200, 136, 72)
    local _, _, p3 = gemm.build{target = "cpu:sm_90a", dtype = "f16", copy = "tma"}
    assert.is_false(p3.producer_warpgroup)
    assert.truthy(gemm.build{target = "sm_90a", dtype = "f16", producer_warpgroup = true}:source("sm_90a"):find("setmaxnreg.inc.sync.aligned.u32 224;", 1, true))
    refused({target = "sm_90a", dtype = "f16", copy = "cp.async", producer_warpgroup = true}, "producer_warpgroup: bulk copies")
    refused({target = "sm_90a", dtype = "f16", tile = {64, 64, 64}, block = 128, producer_warpgroup = true}, "two or more warpgroups (block 128")
    refused({target = "sm_90", dtype = "f16", producer_warpgroup = true}, "producer_warpgroup: bulk copies")
    refused({target = "sm_90a", dtype = "f16", producer_warpgroup = "yes"}, "producer_warpgroup must be a boolean, got string")
  end)
  it("on cpu:sm_90 (mma.sync) and cpu:gfx90a (MFMA)", function()
    run({target = "cpu:sm_90", dtype = "bf16", persistent = 4}, 300, 136, 100)
    run({target = "cpu:gfx90a", dtype = "f16", persistent = 5}, 200, 136, 72)
  end)
  it("persistent = true is a grid of at most 132 blocks, or as many as 132 SMs hold of the compiled kernel", function()
    local k, grid = gemm.build{target = "cpu:sm_90a", dtype = "f16", persistent = true}
    assert.equal(132, grid(8192, 8192)); assert.equal(4, grid(256, 512))
    assert.equal(132, grid(8192, 8192, k:compile{target = "cpu:sm_90a"})) -- the CPU target: no SMs to fill
    -- sm_90's mma.sync default: 128 threads, 64 KiB of LDS and over 128 registers a thread: two
    -- blocks an SM; sm_90a's: one (NVRTC, where present)
    local k90, grid90 = gemm.build{target = "sm_90", dtype = "f16", persistent = true}
    local ok, exe = pcall(k90.compile, k90, {target = "sm_90", compile_only = true})
    if not ok and tostring(exe):find("NVRTC") and tostring(exe):find("not found") then pending("NVRTC not installed: " .. exe) return end
    assert(ok, exe)
    local regs = exe:resources().registers
    assert.equal(132 * math.min(2, 65536 // ((regs * 32 + 255) // 256 * 256 * 4)), grid90(8192, 8192, exe))
    assert.equal(4, grid90(256, 256, exe)) -- never more blocks than tiles
    local ka, grida = gemm.build{target = "sm_90a", dtype = "f16", persistent = true}
    assert.equal(132, grida(8192, 8192, ka:compile{target = "sm_90a", compile_only = true}))
    local _, grid200 = gemm.build{target = "sm_90", dtype = "f16", persistent = 200}
    assert.equal(200, grid200(8192, 8192, exe)) -- a count given stays
  end)
  it("refuses what it cannot do, naming the option", function()
    local function err(o)
      local ok, e = pcall(gemm.plan, o)
      assert.is_false(ok)
      return tostring(e)
    end
    assert.truthy(err{target = "cpu:sm_90a", persistent = 0}:find("persistent 0 must be true or a positive number of blocks", 1, true))
    assert.truthy(err{target = "cpu:sm_90a", persistent = "all"}:find("persistent all must be", 1, true))
    assert.truthy(err{target = "cpu:sm_90a", persistent = 2.5}:find("persistent 2.5 must be", 1, true))
    assert.truthy(err{target = "cpu:sm_90", persistent = true, copy = "tma"}:find("bulk tensor copies feed sm_90a's wgmma path", 1, true))
    -- b:block_order's tile number
    local ok, e = pcall(ckt.kernel, {name = "bo", block = 32, build = function(b) b:block_order{tiles = {2, 2}, id = "x"} end})
    assert.is_false(ok)
    assert.truthy(tostring(e):find("block_order: id: number or kernel expression expected, got string", 1, true), e)
  end)
  it("compiles for sm_90a without spills (NVRTC, where present)", function()
    for _, copy in ipairs{"cp.async", "tma"} do
      local k = gemm.build{target = "sm_90a", dtype = "f16", persistent = true, copy = copy}
      local ok, exe = pcall(k.compile, k, {target = "sm_90a", compile_only = true})
      if not ok and tostring(exe):find("NVRTC") and tostring(exe):find("not found") then pending("NVRTC not installed: " .. exe) return end
      assert(ok, exe)
      assert.equal(0, exe:resources().spill_stores)
      if copy == "tma" then -- the producer warpgroup's registers go to the block's: 224, not 168
        local src = k:source("sm_90a")
        assert.truthy(src:find("setmaxnreg.inc.sync.aligned.u32 224;", 1, true))
        assert.truthy(src:find("store to LDS lds%d+ %(%(64,2%),%(64,4%)%)"), "C through the LDS buffer")
        assert.truthy(src:find("ckt_tma_store_2d(", 1, true), "and bulk tensor stores")
      end
      assert.falsy((exe:log() or ""):find("serialized", 1, true))
    end
  end)
end)
