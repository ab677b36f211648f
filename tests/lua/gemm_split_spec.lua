-- split_k: the tiles past the last whole wave split along K, each part a block; the parts' f32
-- tiles meet in a workspace and the tile's last block (by an atomic counter) sums them in the
-- order of their K ranges and stores C. On cpu:sm_90a (whose blocks run on threads of their own,
-- the counters' adds real atomics) element by element against the double reference, outputs
-- poisoned, sizes off the tiles, twice in a row (the counters left zero), with clusters, and the
-- refusals; b:atomic_add's own checks.
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local checks = require "gemm_checks"
local cpu, refused = checks.cpu, checks.refused

local function run(o, M, N, K, launches)
  local k, grid, p = gemm.build(o)
  local e = k:compile{target = o.target}
  local R, ba, bb = checks.problem(o, p, M, N, K)
  local sz = p.split_buffers(M, N)
  local ws, ct = cpu:alloc("f32", sz.workspace), cpu:alloc("i32", sz.counters)
  ct:upload(ckt.array("i32", sz.counters))
  local bc = cpu:alloc(p.out, M * N)
  for r = 1, launches or 2 do
    local C = ckt.array(p.out, M * N):poison()
    bc:upload(C)
    e:launch{grid = grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K, workspace = ws, counters = ct}
    bc:download(C)
    local ok, err, at = checks.compare(C, R, p, K)
    assert(ok, ("%s split %d %dx%dx%d launch %d: max error %s at %s"):format(o.dtype, p.split_k, M, N, K, r, tostring(err), tostring(at)))
    local c = ckt.array("i32", sz.counters)
    ct:download(c)
    for i = 0, #c - 1 do assert.equal(0, c[i], "a counter left non-zero") end
  end
  return p, grid, sz
end

describe("split_k", function()
  it("splits the tiles past the last whole wave, every part summed once, on cpu:sm_90a", function()
    -- 16 tiles, waves of 5: 15 whole, the last in 3 parts (18 blocks)
    local o = {target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, stages = 4, copy = "tma", split_k = 3, split_wave = 5}
    local p, grid, sz = run(o, 200, 200, 264)
    assert.equal(18, grid(200, 200)); assert.equal(3 * 64 * 64, sz.workspace); assert.equal(1, sz.counters)
    -- every tile split (less than a wave), K slices fewer than the parts (some parts empty), K = 0
    run({target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, stages = 4, copy = "tma", split_k = 4}, 136, 72, 40)
    run({target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, stages = 4, copy = "tma", split_k = 4}, 64, 72, 64)
    run({target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, stages = 4, copy = "tma", split_k = 2}, 64, 72, 0)
    -- M/N-major, f32 C through an epilogue, MMAs left in flight
    run({target = "cpu:sm_90a", dtype = "bf16", out = "f32", a_major = "m", b_major = "n", tile = {64, 64, 32}, block = 128,
         stages = 3, copy = "tma", split_k = 2, mma_pending = 1, epilogue = function(x) return ckt.max(x, 0) end}, 200, 136, 72)
    -- two warpgroups (the producer warpgroup by default: the last block's sum needs its registers),
    -- bulk tensor stores of C, in clusters of two: the split units are whole clusters
    local p2, grid2 = run({target = "cpu:sm_90a", dtype = "f16", tile = {128, 128, 64}, block = 256, stages = 3, copy = "tma",
                           aligned = true, cluster = 2, split_k = 2, split_wave = 4}, 264, 392, 200)
    assert.is_true(p2.producer_warpgroup); assert.is_true(p2.tma_store)
    assert.equal(0, grid2(264, 392) % 2)
  end)

  it("emits the counters' atomics for sm_90a and compiles without spills", function()
    local k, _, p = gemm.build{target = "sm_90a", dtype = "f16", split_k = 2}
    local src = k:source("sm_90a")
    assert.truthy(src:find("atomicAdd(&counters[", 1, true))
    assert.truthy(src:find("__threadfence(); /* this thread's global writes, device-wide */", 1, true))
    assert.is_true(p.producer_warpgroup)
    checks.compiles_clean(k)
  end)

  it("refuses split_k where it cannot be, naming the option", function()
    refused({target = "cpu:sm_90a", copy = "tma", split_k = 17}, "split_k 17 must be an integer in 1..16")
    refused({target = "cpu:sm_90a", copy = "tma", split_k = 0}, "split_k 0 must be an integer in 1..16")
    refused({target = "cpu:sm_90a", copy = "tma", split_k = 2.5}, "split_k 2.5 must be an integer in 1..16")
    refused({target = "cpu:sm_90a", split_k = 2}, "split_k: sm_90a's bulk-copy path")
    refused({target = "sm_90", split_k = 2}, "split_k: sm_90a's bulk-copy path")
    refused({target = "sm_90a", split_k = 2, persistent = true}, "split_k: one tile a block")
    refused({target = "sm_90a", split_k = 2, batched = true}, "split_k: one problem (not batched)")
    refused({target = "sm_90a", split_wave = 8}, "split_wave: only with split_k")
    refused({target = "sm_90a", split_k = 2, split_wave = 0}, "split_wave 0 must be an integer number of blocks a wave")
    refused({target = "sm_90a", split_k = 2, cluster = 2, split_wave = 1}, "at least the cluster's 2")
    assert.equal(1, gemm.plan{target = "sm_90a", split_k = 1}.split_k)
  end)

  it("refuses a launch without the workspace or with buffers too small", function()
    local k, grid, p = gemm.build{target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, stages = 4, copy = "tma", split_k = 2}
    local e = k:compile{target = "cpu:sm_90a"}
    local M, N, K = 64, 64, 32
    local ba, bb, bc = cpu:alloc("f16", M * K), cpu:alloc("f16", K * N), cpu:alloc("f16", M * N)
    local ok, err = pcall(e.launch, e, {grid = grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K})
    assert.is_false(ok); assert.truthy(tostring(err):find("workspace", 1, true), tostring(err))
    local sz = p.split_buffers(M, N)
    ok, err = pcall(e.launch, e, {grid = grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K,
                                  workspace = cpu:alloc("f32", sz.workspace - 1), counters = cpu:alloc("i32", sz.counters)})
    assert.is_false(ok); assert.truthy(tostring(err):find("'workspace'", 1, true), tostring(err))
  end)
end)

describe("b:atomic_add", function()
  local function fails(build, text)
    local ok, e = pcall(ckt.kernel, {name = "at", block = 64, build = build})
    assert.is_false(ok)
    assert.truthy(tostring(e):find(text, 1, true), tostring(e))
  end
  it("refuses what is not a rank-1 i32 array it may write, a thread-dependent index or value, the producer", function()
    fails(function(b) b:atomic_add(ckt.tensor(b:pointer("X", "f32"), "f32", {shape = {4}}), 0, 1) end, "not a rank-1 global i32 tensor")
    fails(function(b) b:atomic_add(ckt.tensor(b:pointer("X", "i32"), "i32", {shape = {4, 4}}), 0, 1) end, "not a rank-1 global i32 tensor")
    fails(function(b) b:atomic_add(ckt.tensor(b:pointer("X", "i32", {const = true}), "i32", {shape = {4}}), 0, 1) end, "'X' is read-only")
    fails(function(b) b:atomic_add(ckt.tensor(b:pointer("X", "i32"), "i32", {shape = {4}}), b:thread_id(), 1) end, "block-uniform integer")
    fails(function(b) b:atomic_add(ckt.tensor(b:pointer("X", "i32"), "i32", {shape = {4}}), 0, 1 << 40) end, "outside the i32 range")
    fails(function(b) b:atomic_add(ckt.tensor(b:pointer("X", "i32"), "i32", {shape = {4}}), 0, "x") end, "number expected")
    fails(function(b) b:atomic_add("X", 0, 1) end, "atomic_add")
  end)
  it("counts every block once on the CPU target (its blocks on threads of their own)", function()
    local k = ckt.kernel{name = "count", block = 32, build = function(b)
      local t = ckt.tensor(b:pointer("X", "i32"), "i32", {shape = {3}})
      b:atomic_add(t, b:block_id(0) % 3, 1)
    end}
    local e = k:compile{target = "cpu"}
    local x = cpu:alloc("i32", 3)
    x:upload(ckt.array("i32", 3))
    e:launch{grid = 301, X = x}
    local h = ckt.array("i32", 3)
    x:download(h)
    assert.equal(101, h[0]); assert.equal(100, h[1]); assert.equal(100, h[2])
  end)
end)
