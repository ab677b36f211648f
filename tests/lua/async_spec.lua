-- Asynchronous global -> LDS copies (cp.async on sm_80+, through registers on gfx90a, deferred to
-- their wait on the CPU target) and multi-stage LDS rings on the CPU target: an S-stage pipeline
-- that copies a matrix through the ring gives the input back exactly (padded edges, sizes that are
-- not multiples of the tile) and a wait one group short does not,
-- the source shows cp.async's pieces per dialect, and misuse is refused naming the argument.
local ckt = require "ckt"
local dev = ckt.device("cpu")

-- Y = X through an S-stage LDS ring: the prologue issues S-1 tiles, each step waits for the
-- oldest, reads it back, stores it, and issues the tile S-1 steps ahead into the stage just freed.
local function ring_copy(o)
  local dt, TM, TK, S = o.dtype, o.TM or 32, o.TK or 16, o.stages
  local vec = o.vec or (16 // ckt.array(dt, 1):bytes())
  return ckt.kernel{name = "ring_copy", block = 64, build = function(b)
    local X = b:pointer("X", dt, {const = true})
    local Y = b:pointer("Y", dt)
    local M, K = b:size("M"), b:size("K", {multiple_of = o.multiple_of})
    local gx = ckt.tensor(X, dt, {shape = {M, K}}, {pad = true})
    local gy = ckt.tensor(Y, dt, {shape = {M, K}}, {pad = true})
    local ring = ckt.tensor("lds", dt, ckt.layout({TM, TK}, {TK, 1}), {stages = S})
    local tm, nk = b:block_id(0), (K + TK - 1) // TK
    local thr = ckt.layout({64 // (TK // vec), TK // vec}, {TK // vec, 1})
    local function issue(kt, stage)
      b:blockwise_copy{src = ckt.local_tile(gx, {TM, TK}, {tm, kt}), dst = ckt.tile_window(ring:stage(stage), {TM, TK}, {0, 0}),
                       thread_layout = thr, scalar_per_vector = vec, async = true}
      b:commit()
    end
    for s = 0, S - 2 do issue(s, s) end -- tiles past K are masked: zero-filled, never stored
    b:loop(nk, function(i)
      b:wait{pending = o.pending or S - 2}
      local r = ckt.tile_window(ring:stage(i % S), {TM, TK}, {0, 0}):load()
      ckt.local_tile(gy, {TM, TK}, {tm, i}):store(r)
      b:sync() -- every thread has read stage i % S before it is refilled
      issue(i + S - 1, (i + S - 1) % S)
    end)
  end}
end

local function run(k, dt, M, K)
  local x = ckt.array(dt, {M, K}):random{seed = M * 1000 + K, lo = -100, hi = 100}
  local y = ckt.array(dt, {M, K}):poison()
  local bx, by = dev:alloc(dt, M * K), dev:alloc(dt, M * K)
  bx:upload(x); by:upload(y)
  k:compile{target = "cpu"}:launch{grid = (M + 31) // 32, X = bx, Y = by, M = M, K = K}
  by:download(y)
  return x, y
end

describe("asynchronous copies through an LDS ring", function()
  for _, c in ipairs{{"f16", 3, 8}, {"bf16", 4, 8}, {"f32", 2, 4}, {"f16", 3, nil}, {"f32", 5, nil}} do
    local dt, S, mult = c[1], c[2], c[3]
    it(("%s, %d stages, K %s"):format(dt, S, mult and ("a multiple of " .. mult) or "any"), function()
      local k = ring_copy{dtype = dt, stages = S, multiple_of = mult, vec = (not mult) and 1 or nil}
      for _, mk in ipairs{{37, 40}, {64, 16}, {1, mult or 9}, {100, mult and 8 * 13 or 101}} do
        local x, y = run(k, dt, mk[1], mk[2])
        local ok, err, at = y:compare(x, {rtol = 0, atol = 0})
        assert(ok, ("M=%d K=%d: max error %s at %s"):format(mk[1], mk[2], tostring(err), tostring(at)))
      end
    end)
  end

  it("the CPU target lands a copy only at the wait that retires its group: a wait one group short reads stale LDS", function()
    for _, S in ipairs{2, 3, 4} do
      local k = ring_copy{dtype = "f32", stages = S, multiple_of = 4, pending = S - 1}
      local x, y = run(k, "f32", 64, 64)
      assert.falsy((y:compare(x, {rtol = 0, atol = 0})), ("%d stages, pending %d"):format(S, S - 1))
      local x2, y2 = run(ring_copy{dtype = "f32", stages = S, multiple_of = 4}, "f32", 64, 64)
      assert.truthy((y2:compare(x2, {rtol = 0, atol = 0})))
    end
    local src = ring_copy{dtype = "f16", stages = 3, multiple_of = 8}:source("cpu")
    assert.truthy(src:find("ckt_cp_queue ckt_cpq", 1, true) and src:find("ckt_cp_wait(&ckt_cpq", 1, true))
  end)

  it("a ring of S stages takes S times the stage, 128-byte aligned", function()
    local k = ring_copy{dtype = "f16", stages = 3, multiple_of = 8}
    assert.equal(2 * 32 * 16 * 2 + 32 * 16 * 2, k:lds_bytes())
    local k2 = ckt.kernel{name = "odd", block = 32, build = function()
      ckt.tensor("lds", "f32", ckt.layout({3, 8}, {8, 1}), {stages = 3}) -- 96 bytes a stage, 128 apart
    end}
    assert.equal(128 * 2 + 96, k2:lds_bytes())
  end)

  it("emits cp.async on sm_90, a register round trip on gfx90a and the CPU, 16-byte copies", function()
    local k = ring_copy{dtype = "f16", stages = 3, multiple_of = 8}
    local cu, hip, c = k:source("sm_90"), k:source("gfx90a"), k:source("cpu")
    assert.truthy(cu:find("cp.async.cg.shared.global [%0], [%1], 16, %2;", 1, true))
    assert.truthy(cu:find("cp.async.wait_group", 1, true) and cu:find("cp.async.commit_group", 1, true))
    assert.truthy(cu:find("CKT_CP_WAIT(1);", 1, true))
    -- CUDA: the LDS side as one shared address per thread plus an immediate per vector
    assert.truthy(cu:find("CKT_CP_ASYNC_AT(16, ckt_cb + 2u * ckt_ct, ", 1, true))
    for _, src in ipairs{hip, c} do assert.truthy(src:find("CKT_CP_ASYNC(16, ", 1, true)) end
    for _, src in ipairs{cu, hip, c} do
      assert.truthy(src:find("a stage of 3 at element", 1, true))
    end
    assert.falsy(hip:find("cp.async.cg", 1, true))
    -- a padded source: CUDA has one form of each copy, masked, its address unselected (a masked-off
    -- cp.async reads nothing); HIP also has the mask-free form for windows inside the tensor, and
    -- its masked copies (loads) name a valid address
    assert.falsy(cu:find("the window lies inside", 1, true))
    assert.truthy(cu:find("CKT_CP_ASYNC_AT%(16, ckt_cb %+ 2u %* ckt_ct, %d+, X %+ %b(), %(i0 < M%) && %(i1 < K%)%);"))
    assert.falsy(cu:find(") ? X +", 1, true))
    assert.truthy(hip:find("the window lies inside X: no masks", 1, true))
    assert.truthy(hip:find(") ? X +", 1, true))
    -- K not promised a multiple of 8: the padded edge could split a vector, so element copies
    local k1 = ring_copy{dtype = "f16", stages = 3, vec = 1}
    assert.falsy(k1:source("sm_90"):find("CKT_CP_ASYNC%(%d"))
  end)

  it("b:copy takes async = true too; a wait without sync has no barrier", function()
    local k = ckt.kernel{name = "one", block = 32, build = function(b)
      local X = b:pointer("X", "f32", {const = true})
      local Y = b:pointer("Y", "f32")
      local gx, gy = ckt.tensor(X, "f32", {shape = {8, 16}}), ckt.tensor(Y, "f32", {shape = {8, 16}})
      local s = ckt.tensor("lds", "f32", ckt.layout({8, 16}, {16, 1}))
      local w = ckt.tile_window(s, {8, 16}, {0, 0})
      b:copy(w, ckt.tile_window(gx, {8, 16}, {0, 0}), {async = true})
      b:commit()
      b:wait{pending = 0, sync = false}
      b:sync()
      ckt.tile_window(gy, {8, 16}, {0, 0}):store(w:load())
    end}
    local src = k:source("sm_90")
    assert.truthy(src:find("CKT_CP_ASYNC_AT(16, ", 1, true))
    local _, nsync = src:gsub("__syncthreads%(%)", "")
    assert.equal(1, nsync)
    local x = ckt.array("f32", 128):random{seed = 3}
    local bx, by = dev:alloc("f32", 128), dev:alloc("f32", 128)
    bx:upload(x); by:upload(ckt.array("f32", 128):poison())
    k:compile{target = "cpu"}:launch{grid = 1, X = bx, Y = by}
    local y = ckt.array("f32", 128)
    by:download(y)
    assert.truthy(y:compare(x, {rtol = 0, atol = 0}))
  end)
end)

describe("asynchronous copies and stages refuse misuse", function()
  local function fails(pattern, body)
    local ok, err = pcall(ckt.kernel, {name = "bad", block = 64, build = function(b)
      local X = b:pointer("X", "f16", {const = true})
      local Y = b:pointer("Y", "f32")
      local gx = ckt.tensor(X, "f16", {shape = {64, 64}})
      local gy = ckt.tensor(Y, "f32", {shape = {64, 64}})
      body(b, gx, gy)
    end})
    assert.falsy(ok)
    assert.truthy(tostring(err):find(pattern, 1, true), tostring(err))
  end
  local L = ckt.layout({32, 16}, {16, 1})
  local thr = ckt.layout({32, 2}, {2, 1})
  it("stages", function()
    fails("stages 0 outside 1..16", function() ckt.tensor("lds", "f16", L, {stages = 0}) end)
    fails("stages 17 outside 1..16", function() ckt.tensor("lds", "f16", L, {stages = 17}) end)
    fails("field 'stages' must be an integer", function() ckt.tensor("lds", "f16", L, {stages = "3"}) end)
    fails("field 'stages' is for LDS tensors", function(b) ckt.tensor(b:pointer("Z", "f16"), "f16", {shape = {4}}, {stages = 2}) end)
    fails("has 3 stages: window one of them", function() ckt.tile_window(ckt.tensor("lds", "f16", L, {stages = 3}), {32, 16}, {0, 0}) end)
    fails("not provably in 0..2", function() ckt.tensor("lds", "f16", L, {stages = 3}):stage(3) end)
    fails("not provably in 0..2", function(b) b:loop(10, function(i) ckt.tensor("lds", "f16", L, {stages = 3}):stage(i) end) end)
    fails("depends on the thread id", function(b) ckt.tensor("lds", "f16", L, {stages = 3}):stage(b:thread_id() % 3) end)
    fails("has no stages", function() ckt.tensor("lds", "f16", L):stage(0) end)
  end)
  it("copies", function()
    fails("the source must be a window of a global tensor", function(b)
      local s = ckt.tensor("lds", "f16", L)
      b:blockwise_copy{src = ckt.tile_window(s, {32, 16}, {0, 0}), dst = ckt.tile_window(s, {32, 16}, {0, 0}), thread_layout = thr, async = true}
    end)
    fails("the destination must be a window of an LDS tensor", function(b, gx)
      b:blockwise_copy{src = ckt.tile_window(gx, {32, 16}, {0, 0}), dst = ckt.tile_window(gx, {32, 16}, {0, 0}), thread_layout = thr, async = true}
    end)
    fails("does not convert", function(b, gx)
      local s = ckt.tensor("lds", "f32", L)
      b:blockwise_copy{src = ckt.tile_window(gx, {32, 16}, {0, 0}), dst = ckt.tile_window(s, {32, 16}, {0, 0}), thread_layout = thr, async = true}
    end)
    fails("src and dst windows differ in shape", function(b, gx)
      local s = ckt.tensor("lds", "f16", L)
      b:blockwise_copy{src = ckt.tile_window(gx, {16, 16}, {0, 0}), dst = ckt.tile_window(s, {32, 16}, {0, 0}), thread_layout = thr, async = true}
    end)
    fails("field 'thread_layout' is required", function(b, gx)
      local s = ckt.tensor("lds", "f16", L)
      b:blockwise_copy{src = ckt.tile_window(gx, {32, 16}, {0, 0}), dst = ckt.tile_window(s, {32, 16}, {0, 0}), async = true}
    end)
    fails("field 'async' must be a boolean", function(b, gx)
      local s = ckt.tensor("lds", "f16", L)
      b:blockwise_copy{src = ckt.tile_window(gx, {32, 16}, {0, 0}), dst = ckt.tile_window(s, {32, 16}, {0, 0}), thread_layout = thr, async = 1}
    end)
    fails("unknown", function(b, gx)
      local s = ckt.tensor("lds", "f16", L)
      b:copy(ckt.tile_window(s, {32, 16}, {0, 0}), ckt.tile_window(gx, {32, 16}, {0, 0}), {async = true, fill = 1})
    end)
    fails("need one thread layout", function(b, gx)
      local s = ckt.tensor("lds", "f16", L)
      local p1 = ckt.local_partition(ckt.tile_window(gx, {32, 16}, {0, 0}), ckt.layout({32, 2}, {2, 1}), b:thread_id())
      local p2 = ckt.local_partition(ckt.tile_window(s, {32, 16}, {0, 0}), ckt.layout({32, 2}, {1, 32}), b:thread_id())
      b:copy(p2, p1, {async = true})
    end)
  end)
  it("wait", function()
    fails("pending 8 outside 0..7", function(b) b:wait{pending = 8} end)
    fails("pending -1 outside 0..7", function(b) b:wait{pending = -1} end)
    fails("field 'sync' must be a boolean", function(b) b:wait{sync = 1} end)
    fails("unknown", function(b) b:wait{pendng = 1} end)
    fails("depends on the thread id", function(b) b:when(ckt.lt(b:thread_id(), 3), function() b:wait() end) end)
  end)
end)
