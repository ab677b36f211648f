-- Launches that cannot corrupt memory (issue 15): buffers too small for the sizes, windows at
-- origins that go negative or past the tiles, negative strides, zero-sized problems, and a FIFO
-- where a cache entry should be. Each refusal names what is wrong; no launch touches memory
-- outside its buffers (the CPU target runs under ASan in the sanitizer build).
local ckt = require "ckt"
local copy = require "ckt.kernels.copy"

local dev = ckt.device("cpu")

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

-- y[i] = x[i] over a 1-D runtime size n, one 64-element tile per block
local function copy_1d(pad, origin)
  return ckt.kernel{name = "c1d", block = 64, build = function(b)
    local X, Y = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32")
    local n = b:size("n")
    local o = origin and origin(b) or b:block_id() * 64
    local gx = ckt.tensor(X, "f32", {shape = {n}}, {pad = pad})
    local gy = ckt.tensor(Y, "f32", {shape = {n}}, {pad = pad})
    ckt.tile_window(gy, {64}, {o}):store(ckt.tile_window(gx, {64}, {o}):load())
  end}
end

describe("launch memory safety", function()
  it("a buffer smaller than the sizes need is refused, naming the argument and the bytes", function()
    local exe = copy_1d(true):compile{target = "cpu"}
    local x, y = dev:alloc("f32", 16), dev:alloc("f32", 16)
    local e = err_of(exe.launch, exe, {grid = (1 << 20) // 64, X = x, Y = y, n = 1 << 20})
    assert.truthy(e:find("argument 'X' needs 4194304 bytes", 1, true), e)
    assert.truthy(e:find("holds 64", 1, true), e)
    -- exactly enough is fine
    local ok = pcall(exe.launch, exe, {grid = 1, X = x, Y = y, n = 16})
    assert.is_true(ok)
  end)

  it("pad = true masks both edges: a window at a negative runtime origin reads nothing below 0", function()
    local exe = copy_1d(true, function(b) return b:block_id() * 64 + b:size("shift") - 32 end):compile{target = "cpu"}
    local n = 100
    local xa = ckt.array("f32", {n}):random{seed = 1, lo = 1, hi = 2}
    local x, y = dev:alloc("f32", n), dev:alloc("f32", n)
    x:upload(xa)
    local ya = ckt.array("f32", {n}):poison()
    y:upload(ya)
    exe:launch{grid = 3, X = x, Y = y, n = n, shift = 0}
    y:download(ya)
    for i = 0, n - 1 do assert.equal(xa[i], ya[i]) end
  end)

  it("a grid with more blocks than tiles is refused before anything runs (no pad)", function()
    local exe = copy_1d(false):compile{target = "cpu"}
    local x, y = dev:alloc("f32", 128), dev:alloc("f32", 128)
    local e = err_of(exe.launch, exe, {grid = 3, X = x, Y = y, n = 128})
    assert.truthy(e:find("more blocks than tiles", 1, true), e)
    assert.is_true((pcall(exe.launch, exe, {grid = 2, X = x, Y = y, n = 128})))
  end)

  it("the grid check reads through a let origin (b:let): more blocks than tiles still refused", function()
    local exe = copy_1d(false, function(b) return b:let(b:block_id() * 64, "o") end):compile{target = "cpu"}
    local x, y = dev:alloc("f32", 128), dev:alloc("f32", 128)
    local e = err_of(exe.launch, exe, {grid = 3, X = x, Y = y, n = 128})
    assert.truthy(e:find("more blocks than tiles", 1, true), e)
    local xa = ckt.array("f32", {128}):random{seed = 3, lo = -4, hi = 4}
    x:upload(xa)
    y:upload(ckt.array("f32", {128}):poison())
    exe:launch{grid = 2, X = x, Y = y, n = 128}
    local ya = ckt.array("f32", {128})
    y:download(ya)
    for i = 0, 127 do assert.equal(xa[i], ya[i]) end
  end)

  it("a window at a runtime origin out of range is skipped and the launch fails (no pad)", function()
    local exe = copy_1d(false, function(b) return b:size("o") end):compile{target = "cpu"}
    local x, y = dev:alloc("f32", 128), dev:alloc("f32", 128)
    local e = err_of(exe.launch, exe, {grid = 1, X = x, Y = y, n = 128, o = 1 << 30})
    assert.truthy(e:find("left its tensor", 1, true) or e:find("more blocks than tiles", 1, true), e)
  end)

  it("a window wholly outside a static shape is refused at build time", function()
    local e = err_of(ckt.kernel, {name = "out", block = 64, build = function(b)
      local X = b:pointer("X", "f32")
      local g = ckt.tensor(X, "f32", {shape = {64}}, {pad = true})
      ckt.tile_window(g, {64}, {128}):store(ckt.tile_window(g, {64}, {0}):load())
    end})
    assert.truthy(e:find("outside", 1, true), e)
    e = err_of(ckt.kernel, {name = "out2", block = 64, build = function(b)
      local X = b:pointer("X", "f32")
      local g = ckt.tensor(X, "f32", {shape = {128}})
      ckt.tile_window(g, {64}, {128}):store(ckt.tile_window(g, {64}, {0}):load())
    end})
    assert.truthy(e:find("outside", 1, true) or e:find("leaves", 1, true), e)
  end)

  it("a stride that becomes negative at launch is refused", function()
    local exe = ckt.kernel{name = "negs", block = 64, build = function(b)
      local X = b:pointer("X", "f32")
      local s = b:size("s")
      local g = ckt.tensor(X, "f32", {shape = {1, 64}, stride = {1, s - 4}}, {pad = true})
      local w = ckt.tile_window(g, {1, 64}, {0, 0})
      w:store(w:load())
    end}:compile{target = "cpu"}
    local x = dev:alloc("f32", 1024)
    local e = err_of(exe.launch, exe, {grid = 1, X = x, s = 0})
    assert.truthy(e:find("stride of dim 1", 1, true) and e:find("-4", 1, true), e)
    assert.is_true((pcall(exe.launch, exe, {grid = 1, X = x, s = 5})))
  end)

  it("zero-sized problems run no blocks and return (no division by zero)", function()
    local k, grid = copy.build{dtype = "f32", tile = {8, 64}, pad = true}
    local exe = k:compile{target = "cpu"}
    local x, y = dev:alloc("f32", 4), dev:alloc("f32", 4)
    for _, mn in ipairs{{1, 0}, {0, 4}, {0, 0}} do
      local ms = exe:launch{grid = math.max(1, grid(mn[1], mn[2])), X = x, Y = y, M = mn[1], N = mn[2], timed = true}
      assert.equal(0, ms)
    end
  end)
end)

describe("the compile cache", function()
  it("a FIFO in place of an entry does not block the compile", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    local src = "void fifo_k(void *const *a, const void *l) { (void)a; (void)l; }"
    -- compile once to learn the entry's name, then put a FIFO in its place
    local ctx_env = "CKT_CACHE_DIR=" .. dir
    local script = dir .. ".lua"
    local f = assert(io.open(script, "w"))
    f:write(("package.cpath = %q; local ckt = require 'ckt'; ckt.compile{target = 'cpu', name = 'fifo_k', source = %q}")
      :format(package.cpath, src))
    f:close()
    local function run() return os.execute(("timeout 60 env %s lua5.4 %s"):format(ctx_env, script)) end
    assert.is_true(run())
    local p = io.popen("find " .. dir .. " -type f")
    local entries = {}
    for line in p:lines() do entries[#entries + 1] = line end
    p:close()
    assert.is_true(#entries >= 1, "no cache entry was written under " .. dir)
    for _, f in ipairs(entries) do os.remove(f); assert(os.execute("mkfifo " .. f)) end
    assert.is_true(run(), "the compile blocked on (or failed at) a FIFO cache entry")
    os.execute("rm -rf " .. dir)
    os.remove(script)
  end)
end)

-- Issue 30: index arithmetic over sizes means Lua's integers in the kernel and in the launch check
-- alike. Before, the check evaluated in doubles and the kernel in C's types: (S * S * S) % 16
-- with S = 2^21 + 7 was 0 to the check (a double past 2^63) and 7 to Lua, so a 64-element buffer
-- was accepted for a window the kernel put at element 448; and S * 3000 was computed in 32 bits
-- (the size parameter is an int), wrapping for S > 715827.
describe("index arithmetic past 2^31 and 2^63", function()
  local function window_at(origin, len) -- a kernel adding 1 to the 64 elements at origin(S)
    return ckt.kernel{name = "at", block = 64, build = function(b)
      local X = b:pointer("X", "f32")
      local S = b:size("S")
      local o = origin(S)
      local w = ckt.tile_window(ckt.tensor(X, "f32", {shape = {len or o + 64}}), {64}, {o})
      w:store(b:map(function(x) return x + 1 end, w:load()))
    end}
  end
  local function written(exe, n, S)
    local buf = dev:alloc("f32", n)
    buf:upload(ckt.array("f32", n))
    exe:launch{grid = 1, X = buf, S = S}
    local a = ckt.array("f32", n)
    buf:download(a)
    local at
    for i = 0, n - 1 do if a[i] == 1 and not at then at = i end end
    return at, a
  end
  it("a product that leaves int64 wraps in the kernel and in the check", function()
    local exe = window_at(function(S) return (S * S * S) % 16 * 64 end):compile{target = "cpu"}
    local S = (1 << 21) + 7
    local want = (S * S * S) % 16 * 64
    assert.equal(448, want)
    assert.matches("needs 2048 bytes", err_of(exe.launch, exe, {grid = 1, X = dev:alloc("f32", 64), S = S}))
    local at = written(exe, 512, S)
    assert.equal(want, at)
    assert.equal(0, written(exe, 512, 4)) -- 64 % 16 = 0
  end)
  it("a product of a 32-bit size past 2^31 is computed in 64 bits", function()
    local exe = window_at(function(S) return (S * 3000) % 1024 end, 1088):compile{target = "cpu"}
    for _, S in ipairs{5, 715827, 715828, 1000003, (1 << 31) - 1} do
      assert.equal((S * 3000) % 1024, written(exe, 1088, S), ("S = %d"):format(S))
    end
  end)
end)
