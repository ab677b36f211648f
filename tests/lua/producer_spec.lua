-- Warp specialization on the CPU target (cpu:sm_90a): b:producer runs a producer warp beside the
-- block's threads that issues bulk tensor copies into a ring of LDS stages as soon as the block's
-- threads release them (b:mbarrier_arrive on an `empty` set); the block's threads wait for each
-- stage (`full`), use it and release it. The emulation runs the producer ahead and checks, when
-- each copy lands, that the release it waited for has happened: a pipeline without releases is a
-- launch fault, not a silent race. Also the CUDA source (the producer branch, the named barrier,
-- the launch bounds) and the builder's refusals.
local ckt = require "ckt"
local dev = ckt.device("cpu")

local function cdiv(a, b) return (a + b - 1) // b end

-- building a kernel of `block` threads (64) with `build` is refused: the message
local function err(build, block)
  local ok, e = pcall(ckt.kernel, {name = "bad", block = block or 64, build = build})
  assert.is_false(ok)
  return tostring(e)
end

-- kernel k's source for each target is refused, the message holding `text`
local function refused_on(k, targets, text)
  for _, t in ipairs(targets) do
    local ok, e = pcall(k.source, k, t)
    assert.is_false(ok, t)
    assert.truthy(tostring(e):find(text, 1, true), e)
  end
end

-- Y = X (M x K f16, row-major) through a ring of S stages of 16 x 64 tiles (128B swizzle):
-- the producer copies tile kt into stage kt % S once the stage is released; the block's threads
-- store it to Y, then release it (unless o.no_release)
local function ring(o)
  local S, TR, TC = o.stages, 16, 64
  return ckt.kernel{name = "ws_ring", block = o.block or 64, build = function(b)
    local X = b:pointer("X", "f16", {const = true})
    local Y = b:pointer("Y", "f16")
    local M, K = b:size("M"), b:size("K")
    local gx = ckt.tensor(X, "f16", {shape = {M, K}}, {pad = true})
    local gy = ckt.tensor(Y, "f16", {shape = {M, K}}, {pad = true})
    local lds = ckt.tensor("lds", "f16", ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({TR, TC}, {TC, 1})), {stages = S})
    local full = b:mbarriers{count = S, arrivals = 1}
    local empty = b:mbarriers{count = S, arrivals = o.block or 64}
    local tm, nk = b:block_id(0), (K + TC - 1) // TC
    b:producer(function()
      b:loop(nk, function(kt)
        b:mbarrier_wait{barrier = empty, at = kt % S, phase = (kt // S + 1) % 2}
        b:tma_copy{src = ckt.local_tile(gx, {TR, TC}, {tm, kt}), dst = ckt.tile_window(lds:stage(kt % S), {TR, TC}, {0, 0}), barrier = full, at = kt % S}
      end)
    end, o.warpgroup and {warpgroup = true} or nil)
    b:loop(nk, function(i)
      b:mbarrier_wait{barrier = full, at = i % S, phase = (i // S) % 2}
      ckt.local_tile(gy, {TR, TC}, {tm, i}):store(ckt.tile_window(lds:stage(i % S), {TR, TC}, {0, 0}):load())
      if not o.no_release then b:mbarrier_arrive{barrier = empty, at = i % S} end
    end)
  end}
end

local function run(k, M, K)
  local x = ckt.array("f16", M * K):random{seed = M + K, lo = -2, hi = 2}
  local y = ckt.array("f16", M * K):poison()
  local bx, by = dev:alloc("f16", M * K), dev:alloc("f16", M * K)
  bx:upload(x); by:upload(y)
  k:compile{target = "cpu:sm_90a"}:launch{grid = cdiv(M, 16), X = bx, Y = by, M = M, K = K}
  by:download(y)
  return x, y
end

describe("a producer warp feeding a ring of LDS stages", function()
  for _, S in ipairs{2, 3, 4} do
    it(("%d stages, several rounds of each, sizes off the tile"):format(S), function()
      local k = ring{stages = S}
      for _, mk in ipairs{{40, 9 * 64 + 8}, {16, 64}, {7, 8}} do
        local x, y = run(k, mk[1], mk[2])
        local ok, err, at = y:compare(x, {rtol = 0, atol = 0})
        assert(ok, ("M=%d K=%d: max error %s at %s"):format(mk[1], mk[2], tostring(err), tostring(at)))
      end
    end)
  end

  it("without releases the producer's copies would overwrite stages in use: a launch fault", function()
    local ok, e = pcall(run, ring{stages = 2, no_release = true}, 16, 5 * 64)
    assert.is_false(ok)
    assert.truthy(tostring(e):find("would land in a stage before the block's threads released it", 1, true), e)
    -- within the first round every stage is free: no release is needed
    local x, y = run(ring{stages = 4, no_release = true}, 16, 4 * 64)
    assert.is_true((y:compare(x, {rtol = 0, atol = 0})))
  end)

  it("the CUDA source: a producer branch beside the block's threads, their own barrier", function()
    local src = ring{stages = 3}:source("sm_90a")
    assert.truthy(src:find("__launch_bounds__(96)", 1, true))
    assert.truthy(src:find("if (tid >= 64) { /* the producer warp", 1, true))
    assert.truthy(src:find("if (tid == 64) { /* one elected thread issues */", 1, true))
    assert.truthy(src:find("return; /* the producer warp is done", 1, true))
    assert.truthy(src:find("ckt_mbar_arrive(ckt_smem_addr(", 1, true))
    assert.falsy(src:find("__syncthreads(); /* sync", 1, true))
    -- a barrier of the block's threads is the named barrier 1 over them
    local k = ckt.kernel{name = "named", block = 64, build = function(b)
      local Y = b:pointer("Y", "f32")
      local full = b:mbarriers{count = 1}
      b:producer(function() b:mbarrier_wait{barrier = full, at = 0, phase = 1} end)
      b:sync()
    end}
    assert.truthy(k:source("sm_90a"):find('asm volatile("bar.sync 1, 64;" ::: "memory"); /* sync */', 1, true))
  end)

  it("a producer warpgroup: 128 threads beside the block, its registers handed over with setmaxnreg", function()
    -- two warpgroups and the producer's: each of a register quarter's 16 K holds one warp of each,
    -- so the producer keeps 56 and the block's threads take (512 - 56) / 2 -> 224
    local k = ring{stages = 3, block = 256, warpgroup = true}
    local src = k:source("sm_90a")
    assert.truthy(src:find("__launch_bounds__(384)", 1, true))
    assert.truthy(src:find("if (tid >= 256) { /* the producer warpgroup", 1, true))
    assert.truthy(src:find('setmaxnreg.dec.sync.aligned.u32 56;', 1, true))
    assert.truthy(src:find('setmaxnreg.inc.sync.aligned.u32 224;', 1, true))
    -- three warpgroups: (512 - 56) / 3 -> 152
    assert.truthy(ring{stages = 3, block = 384, warpgroup = true}:source("sm_90a"):find("setmaxnreg.inc.sync.aligned.u32 152;", 1, true))
    -- the C dialect runs it as the producer warp's emulation: the same results
    local x, y = run(k, 40, 5 * 64)
    assert.is_true((y:compare(x, {rtol = 0, atol = 0})))
    -- sm_90 has no setmaxnreg: refused at the source, naming the target
    local ok, e = pcall(k.source, k, "sm_90")
    assert.is_false(ok)
    assert.truthy(tostring(e):find("setmaxnreg, which sm_90 lacks", 1, true), tostring(e))
  end)
end)

describe("the builder refuses", function()
  it("a second producer, a nested one, one after the block's threads' work, one that does their work", function()
    assert.truthy(err(function(b) b:producer(function() end); b:producer(function() end) end):find("has one already", 1, true))
    assert.truthy(err(function(b) b:loop(2, function() b:producer(function() end) end) end):find("inside a loop or branch", 1, true))
    assert.truthy(err(function(b)
      b:sync()
      b:producer(function() end)
    end):find("comes before it", 1, true))
    assert.truthy(err(function(b) b:producer(function() b:sync() end) end):find("not one the producer warp runs", 1, true))
    assert.truthy(err(function(b) b:producer(function() end) end, 1024):find("exceed 1024", 1, true))
    assert.truthy(err(function(b) b:producer() end):find("bad argument", 1, true))
    -- a producer warpgroup: whole warpgroups, two at least; its one option
    assert.truthy(err(function(b) b:producer(function() end, {warpgroup = true}) end, 128):find("at least two (the block has 128 threads)", 1, true))
    assert.truthy(err(function(b) b:producer(function() end, {warpgroup = true}) end, 320):find("whole warpgroups", 1, true))
    assert.truthy(err(function(b) b:producer(function() end, {warpgroup = true}) end, 1024):find("warpgroup's 128 exceed 1024", 1, true))
    assert.truthy(err(function(b) b:producer(function() end, {warp_group = true}) end, 256):find("warp_group", 1, true))
    assert.truthy(err(function(b) b:producer(function() end, {warpgroup = 1}) end, 256):find("warpgroup", 1, true))
    assert.truthy(err(function(b) b:producer(function() end, 5) end, 256):find("bad argument", 1, true))
  end)
  it("arrivals the producer makes, or that do not match the block", function()
    assert.truthy(err(function(b)
      local m = b:mbarriers{count = 2, arrivals = 64}
      b:producer(function() b:mbarrier_arrive{barrier = m, at = 0} end)
    end):find("the block's threads arrive", 1, true))
    assert.truthy(err(function(b)
      local m = b:mbarriers{count = 2, arrivals = 1}
      b:mbarrier_arrive{barrier = m, at = 0}
    end):find("expects 1 arrivals a phase and the block has 64 threads", 1, true))
    assert.truthy(err(function(b)
      local m = b:mbarriers{count = 2, arrivals = 64}
      b:mbarrier_arrive{barrier = m, at = 2}
    end):find("not provably in 0..1", 1, true))
  end)
  it("b:mbarrier_arrive's options: argument errors naming the field", function()
    local function has(f, text)
      local e = err(f)
      assert.truthy(e:find(text, 1, true), ("%q lacks %q"):format(e, text))
    end
    has(function(b) b:mbarrier_arrive{at = 0} end, "bad argument #1 to 'mbarrier_arrive' (field 'barrier' (from b:mbarriers{...}) is required)")
    has(function(b) b:mbarrier_arrive{barrier = b:mbarriers{count = 2, arrivals = 64}} end, "bad argument #1 to 'mbarrier_arrive' (field 'at' is required)")
    has(function(b) b:mbarrier_arrive{barrier = ckt.layout(2), at = 0} end,
        "bad argument #1 to 'mbarrier_arrive' (field 'barrier' must be mbarriers (b:mbarriers{...}), got ckt.layout)")
    has(function(b) b:mbarrier_arrive{barrier = b:mbarriers{count = 2, arrivals = 64}, at = true} end,
        "bad argument #1 to 'mbarrier_arrive' (field 'at': number or kernel expression expected, got boolean)")
    has(function(b) b:mbarrier_arrive{barrier = b:mbarriers{count = 2, arrivals = 64}, at = 0, phase = 0} end,
        "bad argument #1 to 'mbarrier_arrive' (unknown option 'phase')")
  end)
  it("targets without mbarriers", function()
    refused_on(ring{stages = 2}, {"gfx90a", "cpu:gfx90a", "sm_80"}, "no bulk tensor copies or mbarriers")
  end)
end)

-- b:named_barrier: the warpgroups' turns (FlashAttention-3's ping-pong). Two warpgroups of a
-- 256-thread block hand turns back and forth at barriers 2 and 3; on the GPU that orders when
-- their warps run, and the CPU target (threads one after another) emits it as nothing: the
-- kernel's result is the same, every thread writing its own element.
describe("b:named_barrier", function()
  local function turns(o)
    o = o or {}
    return ckt.kernel{name = "turns", block = 256, build = function(b)
      local Y = b:pointer("Y", "f32")
      local gy = ckt.tensor(Y, "f32", {shape = {256}})
      local tid = b:thread_id()
      local wg = tid // 128
      b:when(ckt.eq(wg, 1), function() b:named_barrier{id = 3 - wg + (o.shift or 0), threads = 256, arrive = true} end)
      b:loop(3, function()
        b:named_barrier{id = 2 + wg, threads = 256}
        b:named_barrier{id = 3 - wg, threads = 256, arrive = true}
      end)
      b:when(ckt.eq(wg, 0), function() b:named_barrier{id = 2 + wg, threads = 256} end)
      local r = b:map(function(t) return ckt.cast(t, "f32") * 2 end, ckt.local_partition(ckt.tile_window(gy, {256}, {0}), ckt.layout(256), tid):load())
      ckt.local_partition(ckt.tile_window(gy, {256}, {0}), ckt.layout(256), tid):store(r)
    end}
  end

  it("the CUDA source: bar.sync waits, bar.arrive counts itself, the id an expression of the warpgroup", function()
    local cu = turns():source("sm_90a")
    assert.truthy(cu:find('asm volatile("bar.sync %0, 256;" :: "r"((ckt_u32)(tid / 128 + 2)) : "memory");', 1, true), cu)
    assert.truthy(cu:find('asm volatile("bar.arrive %0, 256;" :: "r"((ckt_u32)(-(tid / 128) + 3)) : "memory");', 1, true), cu)
    assert.truthy(turns():source("sm_90"):find("bar.arrive", 1, true))
  end)

  it("runs on cpu:sm_90a as nothing (the C source says why)", function()
    local k = turns()
    assert.truthy(k:source("cpu:sm_90a"):find("/* named barrier (tid / 128 + 2) (sync, 256 threads)", 1, true) or
                  k:source("cpu:sm_90a"):find("named barrier", 1, true))
    local y = ckt.array("f32", 256)
    for i = 0, 255 do y[i] = i * 0.5 - 7 end
    local by = dev:alloc("f32", 256)
    by:upload(y)
    k:compile{target = "cpu:sm_90a"}:launch{grid = 1, Y = by}
    local out = ckt.array("f32", 256)
    by:download(out)
    for i = 0, 255 do assert.equal((i * 0.5 - 7) * 2, out[i]) end
  end)

  it("refuses ids outside 2..15, thread counts that are not whole warps of the block, the producer, targets without it", function()
    local function refuses(text, body)
      local e = err(body, 256)
      assert.truthy(e:find(text, 1, true), ("%q lacks %q"):format(e, text))
    end
    refuses("named_barrier: id is not provably in 2..15 (range 1..1; 0 is the block's barrier, 1 its threads' beside a producer)",
            function(b) b:named_barrier{id = 1, threads = 256} end)
    refuses("named_barrier: id is not provably in 2..15 (range 16..16;", function(b) b:named_barrier{id = 16, threads = 256} end)
    refuses("named_barrier: id is not provably in 2..15 (range 2..17;", function(b) b:named_barrier{id = 2 + b:thread_id() // 16, threads = 256} end)
    refuses("named_barrier: threads 48 is not a multiple of 32 in 32..256 (the block)", function(b) b:named_barrier{id = 2, threads = 48} end)
    refuses("named_barrier: threads 0 is not a multiple of 32 in 32..256 (the block)", function(b) b:named_barrier{id = 2, threads = 0} end)
    refuses("named_barrier: threads 512 is not a multiple of 32 in 32..256 (the block)", function(b) b:named_barrier{id = 2, threads = 512} end)
    refuses("bad argument #1 to 'named_barrier' (field 'threads' is required)", function(b) b:named_barrier{id = 2} end)
    refuses("bad argument #1 to 'named_barrier' (field 'id' is required)", function(b) b:named_barrier{threads = 256} end)
    refuses("bad argument #1 to 'named_barrier' (unknown option 'count')", function(b) b:named_barrier{id = 2, threads = 256, count = 1} end)
    refuses("named_barrier: the producer's one elected thread cannot join a barrier of whole warps", function(b)
      b:producer(function() b:named_barrier{id = 2, threads = 256} end)
    end)
    refused_on(turns(), {"gfx90a", "cpu:gfx90a"}, "named_barrier: target")
  end)
end)
