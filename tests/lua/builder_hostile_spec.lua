-- Issue 30: builder options that reach the generated arithmetic end in a clear error, never in a
-- process-killing launch; asynchronous-copy calls without a copy and thread-dependent tile ids are
-- refused when the kernel is built.
local ckt = require "ckt"

local dev = ckt.device("cpu")

-- a kernel writing its tile coordinates through b:block_order{...} (opts), unpadded so that the
-- launch checks and the guards read the origins
local function order_kernel(opts, tiles)
  return ckt.kernel{name = "order", block = 32, build = function(b)
    local Y = b:pointer("Y", "i32")
    local M, N = b:size("M"), b:size("N")
    local o = {tiles = tiles and tiles(b, M, N) or {M, N}}
    for k, v in pairs(opts) do o[k] = v end
    local tm, tn = b:block_order(o)
    local t = ckt.tensor(Y, "i32", {shape = {M * N}})
    local w = ckt.tile_window(t, {1}, {tm * N + tn})
    w:store(b:map(function(x) return x + 1 end, w:load()))
  end}
end

local function launch(k, M, N)
  local exe = k:compile{target = "cpu"}
  local y = dev:alloc("i32", M * N)
  y:upload(ckt.array("i32", {M * N}))
  exe:launch{grid = M * N, Y = y, M = M, N = N}
  local out = ckt.array("i32", {M * N})
  y:download(out)
  return out
end

-- a deterministic stream of hostile integers: the int64 edges, powers of two, near-powers
local function hostile(seed, count)
  local s, out = seed, {}
  local edges = {0, -1, 1, math.mininteger, math.maxinteger, 1 << 31, (1 << 31) - 1, 1 << 32, 1 << 62, -(1 << 62)}
  for i = 1, count do
    s = (s * 6364136223846793005 + 1442695040888963407)
    local k = (s >> 33) % 4
    if k == 0 then out[i] = edges[(s >> 40) % #edges + 1]
    elseif k == 1 then out[i] = 1 << ((s >> 40) % 63)
    elseif k == 2 then out[i] = (1 << ((s >> 40) % 63)) + ((s >> 20) % 3) - 1
    else out[i] = (s >> 1) * (((s >> 50) % 2 == 0) and 1 or -1) end
  end
  return out
end

describe("block_order", function()
  it("group = 1 << 62 is refused naming 'group' (it ended in SIGFPE at launch)", function()
    local ok, e = pcall(order_kernel, {order = "grouped", group = 1 << 62})
    assert.is_false(ok)
    assert.truthy(tostring(e):find("'group'", 1, true), tostring(e))
  end)
  it("random hostile groups: a clear error or a kernel that runs and visits every tile once", function()
    local ran, refused = 0, 0
    for _, g in ipairs(hostile(17, 40)) do
      local ok, k = pcall(order_kernel, {order = "grouped", group = g})
      if ok then
        ran = ran + 1
        local out = launch(k, 3, 5)
        for i = 0, 14 do assert.equal(1, out[i], ("group %d, element %d"):format(g, i)) end
      else
        refused = refused + 1
        assert.truthy(tostring(k):find("group", 1, true) or tostring(k):find("overflow", 1, true), tostring(k))
      end
    end
    assert.is_true(ran >= 5 and refused >= 5, ("%d ran, %d refused"):format(ran, refused))
  end)
  it("random hostile constant tile counts fold or are refused, never overflow", function()
    for _, c in ipairs(hostile(29, 40)) do
      local ok, e = pcall(order_kernel, {order = "grouped", group = 8}, function(_, M, N) return {M, N * c} end)
      if not ok then assert.truthy(tostring(e):find("overflow", 1, true) or tostring(e):find("division", 1, true), tostring(e)) end
    end
  end)
  it("a folded constant times a size that can leave int64 is refused where it is built", function()
    local ok, e = pcall(ckt.kernel, {name = "big", block = 32, build = function(b)
      local n = b:size("n")
      local _ = n * (1 << 40) -- n < 2^31: 2^71
    end})
    assert.is_false(ok)
    assert.truthy(tostring(e):find("overflow 64 bits", 1, true), tostring(e))
    -- within range it folds as before
    ckt.kernel{name = "fine", block = 32, build = function(b) local _ = b:size("n") * (1 << 32) end}
  end)
  it("a tile number that depends on the thread id is refused naming 'id'", function()
    local ok, e = pcall(order_kernel, {id = "tid"})
    assert.is_false(ok)
    ok, e = pcall(ckt.kernel, {name = "tid_order", block = 32, build = function(b)
      b:block_order{tiles = {4, 4}, id = b:thread_id()}
    end})
    assert.is_false(ok)
    assert.truthy(tostring(e):find("'id'", 1, true) and tostring(e):find("thread", 1, true), tostring(e))
    ok, e = pcall(ckt.kernel, {name = "tid_tiles", block = 32, build = function(b)
      b:block_order{tiles = {b:thread_id() + 1, 4}}
    end})
    assert.is_false(ok)
    assert.truthy(tostring(e):find("'tiles'", 1, true), tostring(e))
    ok, e = pcall(order_kernel, {order = "diagonal"})
    assert.is_false(ok)
    assert.truthy(tostring(e):find("block_order: order 'diagonal' is not row, col or grouped", 1, true), tostring(e))
    -- block-uniform ids still work (the persistent GEMM's loop counters)
    ckt.kernel{name = "uniform_id", block = 32, build = function(b)
      b:block_order{tiles = {4, 4}, id = b:block_id() * 2 + 1}
    end}
  end)
  it("grouped coordinates are never negative: padded windows mask only their upper edges, and blocks past the tiles write nothing", function()
    -- tiles of 4 x 8 elements over M x N, grouped by 3 tile rows; the window adds 1 where it lands
    local k = ckt.kernel{name = "grouped_pad", block = 32, build = function(b)
      local Y = b:pointer("Y", "i32")
      local M, N = b:size("M"), b:size("N")
      local tm, tn = b:block_order{tiles = {(M + 3) // 4, (N + 7) // 8}, order = "grouped", group = 3}
      local t = ckt.tensor(Y, "i32", {shape = {M, N}}, {pad = true})
      local w = ckt.tile_window(t, {4, 8}, {tm * 4, tn * 8})
      w:store(b:map(function(x) return x + 1 end, w:load()))
    end}
    local src = k:source("cpu")
    assert.falsy(src:find("(0 <= ", 1, true), "a lower-bound check in the masks")
    local M, N = 13, 21 -- 4 x 3 tiles, the last row and column of them partial
    local exe = k:compile{target = "cpu"}
    local y = dev:alloc("i32", M * N)
    y:upload(ckt.array("i32", {M * N}))
    exe:launch{grid = 4 * 3 + 7, Y = y, M = M, N = N} -- 7 blocks past the tiles
    local out = ckt.array("i32", {M * N})
    y:download(out)
    for i = 0, M * N - 1 do assert.equal(1, out[i], "element " .. i) end
  end)
end)

describe("asynchronous copies", function()
  for _, call in ipairs{"commit", "wait"} do
    it("b:" .. call .. " with no asynchronous copy before it is refused (the C source did not compile)", function()
      local ok, e = pcall(ckt.kernel, {name = "no_copy", block = 32, build = function(b)
        b:pointer("X", "f32")
        if call == "commit" then b:commit() else b:wait{pending = 0} end
      end})
      assert.is_false(ok)
      assert.truthy(tostring(e):find(call .. ": no asynchronous copy", 1, true), tostring(e))
    end)
  end
  it("after an asynchronous copy they are accepted and the kernel compiles", function()
    local k = ckt.kernel{name = "copy_then_wait", block = 32, build = function(b)
      local X = b:pointer("X", "f32", {const = true})
      local g = ckt.tensor(X, "f32", {shape = {32}})
      local l = ckt.tensor("lds", "f32", ckt.layout({32}))
      b:copy(ckt.tile_window(l, {32}, {0}), ckt.tile_window(g, {32}, {0}), {async = true})
      b:commit()
      b:wait{pending = 0}
    end}
    k:compile{target = "cpu"}
  end)
end)
