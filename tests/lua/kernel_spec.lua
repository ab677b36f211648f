-- The kernel builder on the CPU target: every library kernel against a CPU reference (random,
-- never all-zero data; outputs poisoned before each run; sizes that do not divide the tiles),
-- exact f16/bf16 rounding, the generated source, and clear refusals of bad input.
local ckt = require "ckt"
local copy, ew = require "ckt.kernels.copy", require "ckt.kernels.elementwise"
local tr, red = require "ckt.kernels.transpose", require "ckt.kernels.reduce"

local dev = ckt.device("cpu")

-- run a compiled kernel: inputs uploaded, the output poisoned, downloaded
local function run(exe, args, inputs, out_name, out)
  for name, a in pairs(inputs) do
    local b = dev:alloc(a:dtype(), #a)
    b:upload(a)
    args[name] = b
  end
  out:poison()
  local bo = dev:alloc(out:dtype(), #out)
  bo:upload(out)
  args[out_name] = bo
  exe:launch(args)
  bo:download(out)
  return out
end

local function exact(got, want)
  local ok, err, bad = got:compare(want, {rtol = 0, atol = 0})
  assert(ok, ("mismatch: max error %s at %s"):format(tostring(err), tostring(bad)))
end

describe("library kernels on the CPU target", function()
  for _, dt in ipairs{"f32", "f16", "bf16", "i32"} do
    it("copy " .. dt .. ": padded edge tiles, bit for bit", function()
      local M, N = 77, 200
      local k, grid = copy.build{dtype = dt, tile = {16, 64}, pad = true}
      local x = ckt.array(dt, {M, N}):random{seed = 5, lo = -100, hi = 100}
      local y = run(k:compile{target = "cpu"}, {grid = grid(M, N), M = M, N = N}, {X = x}, "Y", ckt.array(dt, {M, N}))
      exact(y, x)
    end)
  end

  it("copy with specialized sizes folds them into the source", function()
    local k, grid = copy.build{dtype = "f32", tile = {8, 32}, M = 64, N = 96}
    local src = k:source("cpu")
    assert.truthy(src:find("M = 64 (specialized at build time)", 1, true))
    assert.equal(2, #k:signature())
    local x = ckt.array("f32", {64, 96}):random{seed = 9}
    exact(run(k:compile{target = "cpu"}, {grid = grid(64, 96)}, {X = x}, "Y", ckt.array("f32", {64, 96})), x)
  end)

  for _, dt in ipairs{"f32", "f16", "bf16"} do
    it("transpose " .. dt .. " through a swizzled LDS tile, bit for bit", function()
      local k, grid, why = tr.build{dtype = dt}
      assert.truthy(why:find("conflict-free", 1, true))
      local T = dt == "f32" and 64 or 128
      local M, N = 2 * T, 3 * T
      local x = ckt.array(dt, {M, N}):random{seed = 3}
      local y = run(k:compile{target = "cpu"}, {grid = grid(M, N), M = M, N = N}, {X = x}, "Y", ckt.array(dt, {N, M}))
      exact(y, tr.reference(x, M, N))
    end)
  end

  it("transpose without a swizzle gives the same result", function()
    local k, grid = tr.build{dtype = "f32", swizzle = false}
    local x = ckt.array("f32", {64, 128}):random{seed = 4}
    exact(run(k:compile{target = "cpu"}, {grid = grid(64, 128), M = 64, N = 128}, {X = x}, "Y", ckt.array("f32", {128, 64})), tr.reference(x, 64, 128))
  end)

  it("transpose refuses sizes that are not multiples of the tile at launch", function()
    local k = tr.build{dtype = "f32"}
    local exe = k:compile{target = "cpu"}
    local b = dev:alloc("f32", 100 * 64)
    local ok, e = pcall(exe.launch, exe, {grid = 1, X = b, Y = b, M = 100, N = 64})
    assert.is_false(ok)
    assert.truthy(e:find("M = 100 is not a multiple of 64"), e)
  end)

  for _, dt in ipairs{"f32", "f16", "bf16"} do
    it("elementwise " .. dt .. ": relu(x*y + 1) with exact rounding to " .. dt, function()
      local n = 5000 -- not a multiple of the block tile
      local f = function(x, y) return ckt.max(x * y + 1, 0) end
      local k, grid = ew.build{dtype = dt, inputs = 2, f = f}
      local x = ckt.array(dt, n):random{seed = 1, lo = -3, hi = 3}
      local y = ckt.array(dt, n):random{seed = 2, lo = -3, hi = 3}
      local z = run(k:compile{target = "cpu"}, {grid = grid(n), n = n}, {X1 = x, X2 = y}, "Z", ckt.array(dt, n))
      -- the reference in double precision; the kernel computes in f32, then rounds to dt
      local want = ew.reference(f, dt, x, y)
      -- f32 arithmetic then one rounding to dt: at most 1 ulp from the double reference
      local ok, err = z:compare(want, {rtol = dt == "f32" and 1e-6 or 1e-3, atol = dt == "f32" and 1e-6 or 1e-3})
      assert(ok, "max error " .. tostring(err))
    end)
  end

  it("elementwise with exp, select, cast and a different output dtype", function()
    local n = 1024
    local f = function(x) return ckt.select(ckt.lt(x, 0), ckt.exp(x) - 1, ckt.cast(x * 3, "f16")) end
    local k, grid = ew.build{dtype = "f32", out_dtype = "f16", f = f}
    local x = ckt.array("f32", n):random{seed = 8, lo = -2, hi = 2}
    local z = run(k:compile{target = "cpu"}, {grid = grid(n), n = n}, {X1 = x}, "Z", ckt.array("f16", n))
    local want = ckt.array("f16", n)
    for i = 0, n - 1 do local v = x[i]; want[i] = v < 0 and math.exp(v) - 1 or v * 3 end
    local ok, err = z:compare(want, {rtol = 1e-3, atol = 1e-3})
    assert(ok, "max error " .. tostring(err))
  end)

  for _, op in ipairs{"sum", "max", "min"} do
    for _, dt in ipairs{"f32", "f16"} do
      it("row reduction " .. op .. " over " .. dt .. " (rows not a multiple of the tile)", function()
        local M, N = 37, 3000
        local k, grid = red.build{dtype = dt, op = op}
        local x = ckt.array(dt, {M, N}):random{seed = 6, lo = -1, hi = 1}
        local y = run(k:compile{target = "cpu"}, {grid = grid(M), M = M, N = N}, {X = x}, "Y", ckt.array("f32", M))
        local want = red.reference(x, M, N, op)
        local ok, err = y:compare(want, {rtol = op == "sum" and 1e-4 or 0, atol = op == "sum" and 1e-4 or 0})
        assert(ok, "max error " .. tostring(err))
      end)
    end
  end
end)

describe("loading compiled kernels", function()
  it("runs the kernel it was given, with many kernels loaded one after another (no stale module)", function()
    local x = ckt.array("f32", 256):random{seed = 12}
    for i = 1, 6 do
      local k = ckt.kernel{name = "scale" .. i, block = 64, build = function(b)
        local X, Y = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32")
        local w = ckt.tile_window(ckt.tensor(X, "f32", {shape = {256}}), {256}, {0})
        local r = b:map(function(v) return v * i end, w:load())
        ckt.tile_window(ckt.tensor(Y, "f32", {shape = {256}}), {256}, {0}):store(r)
      end}
      local y = run(k:compile{target = "cpu", cache = false}, {grid = 1}, {X = x}, "Y", ckt.array("f32", 256))
      for j = 0, 255, 17 do assert.equal((string.unpack("f", string.pack("f", x[j] * i))), y[j]) end
      k = nil
      collectgarbage()
    end
  end)
end)

describe("generated source", function()
  local k = copy.build{dtype = "f32", tile = {8, 32}}
  it("is the same index arithmetic in all three dialects", function()
    local c, h, u = k:source("cpu"), k:source("gfx90a"), k:source("sm_90")
    local function body(s) return s:match("const ckt_i64 i0 = ([^;]+);") end
    assert.equal(body(c), body(h)); assert.equal(body(h), body(u))
    assert.truthy(h:find("extern \"C\" __global__", 1, true)); assert.truthy(c:find("for (int tid = 0; tid < 256; ++tid)", 1, true))
  end)
  it("comments each access with its tensor, window and thread arrangement", function()
    local s = k:source("gfx90a")
    assert.truthy(s:find("load from global X (M,N):(N,1), window 8x32", 1, true), s)
    assert.truthy(s:find("4-element accesses along dim 1", 1, true))
  end)
  it("refuses unknown targets", function()
    local ok, e = pcall(k.source, k, "vax780")
    assert.is_false(ok); assert.truthy(e:find("target 'vax780'"))
  end)
end)

describe("builder refusals", function()
  local function build_err(fn, block)
    local ok, e = pcall(ckt.kernel, {name = "bad", block = block or 64, build = fn})
    assert.is_false(ok)
    return e
  end
  it("kernel options", function()
    assert.truthy(select(2, pcall(ckt.kernel, {name = "k", block = 0, build = function() end})):find("block"))
    assert.truthy(select(2, pcall(ckt.kernel, {name = "k", block = -3, build = function() end})):find("block"))
    assert.truthy(select(2, pcall(ckt.kernel, {name = "1x", block = 64, build = function() end})):find("name"))
    assert.truthy(select(2, pcall(ckt.kernel, {name = "k", block = 64})):find("build"))
    assert.truthy(select(2, pcall(ckt.kernel, {name = "k", block = 64, build = function() end, bogus = 1})):find("bogus"))
    assert.truthy(select(2, pcall(ckt.kernel, "k")):find("table"))
  end)
  it("builder calls outside the build function", function()
    local saved
    local k = ckt.kernel{name = "k", block = 64, build = function(b) saved = b end}
    local ok, e = pcall(saved.pointer, saved, "X", "f32")
    assert.is_false(ok); assert.truthy(e:find("already built"))
    assert.truthy(select(2, pcall(ckt.tensor, "lds", "f32", ckt.layout{8, 8})):find("only inside a kernel's build function"))
    assert.equal("k", k:name())
  end)
  it("tensors: wrong types, ranks, dtypes, sizes", function()
    assert.truthy(build_err(function(b) ckt.tensor("flash", "f32", ckt.layout(8)) end):find("flash"))
    assert.truthy(build_err(function(b) ckt.tensor("lds", "f99", ckt.layout(8)) end):find("f99"))
    assert.truthy(build_err(function(b) local X = b:pointer("X", "f16"); ckt.tensor(X, "f32", {shape = {8}}) end):find("holds f16"))
    assert.truthy(build_err(function(b) local X = b:pointer("X", "f32"); ckt.tensor(X, "f32", {shape = {0}}) end):find(">= 1"))
    assert.truthy(build_err(function(b) local X = b:pointer("X", "f32"); ckt.tensor(X, "f32", {shape = {1, 2, 3, 4, 5}}) end):find("rank"))
    assert.truthy(build_err(function(b) ckt.tensor("lds", "f32", ckt.layout{100000, 100}) end):find("LDS"))
    assert.truthy(build_err(function(b) ckt.tensor("register", "f32", 0) end):find("values per thread"))
  end)
  it("windows: non-divisible tiles, rank mismatches, thread-dependent origins", function()
    local function with_x(f) return build_err(function(b)
      local X = b:pointer("X", "f32")
      f(b, ckt.tensor(X, "f32", {shape = {100, 64}}))
    end) end
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {32, 64}, {0, 0}) end):find("does not divide shape 100"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4}, {0}) end):find("rank"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, 4}, {0}) end):find("origin"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, 4}, {b:thread_id(), 0}) end):find("thread id"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, -4}, {0, 0}) end):find(">= 1"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, 4}, {-8, 0}) end):find("negative"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, 4}, {0, 0}):load{dist = ckt.layout({64, 1}, {1, 0})} end):find("distribution"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, 4}, {0, 0}):load{scalar_per_vector = 3} end):find("scalar_per_vector"))
  end)
  it("a runtime size must divide the window, checked at launch", function()
    local k = ckt.kernel{name = "rt", block = 64, build = function(b)
      local X, Y = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32")
      local n = b:size("n")
      local w = ckt.tile_window(ckt.tensor(X, "f32", {shape = {n}}), {256}, {b:block_id() * 256})
      ckt.tile_window(ckt.tensor(Y, "f32", {shape = {n}}), {256}, {b:block_id() * 256}):store(w:load())
    end}
    local exe = k:compile{target = "cpu"}
    local bx, by = dev:alloc("f32", 300), dev:alloc("f32", 300)
    local ok, e = pcall(exe.launch, exe, {grid = 1, X = bx, Y = by, n = 300})
    assert.is_false(ok); assert.truthy(e:find("multiple of the window length 256"), e)
  end)
  it("stores to const pointers, syncs in divergent branches, unbalanced scopes", function()
    assert.truthy(build_err(function(b)
      local X = b:pointer("X", "f32", {const = true})
      local w = ckt.tile_window(ckt.tensor(X, "f32", {shape = {64}}), {64}, {0})
      w:store(w:load())
    end):find("read%-only"))
    assert.truthy(build_err(function(b) b:when(ckt.lt(b:thread_id(), 3), function() b:sync() end) end):find("sync"))
    assert.truthy(build_err(function(b) b:loop(b:thread_id(), function() end) end):find("thread id"))
    assert.truthy(build_err(function(b) error("my own failure") end):find("my own failure"))
  end)
  it("expressions: mixing kernels, comparing with <, float bit operations", function()
    local other
    ckt.kernel{name = "o", block = 32, build = function(b) other = b:size("n") end}
    assert.truthy(build_err(function(b) local n = b:size("n"); local _ = n + other end):find("another kernel"))
    assert.truthy(build_err(function(b) local n = b:size("n"); local _ = n < 3 end):find("ckt.lt"))
    assert.truthy(build_err(function(b) local s = b:scalar("s"); local _ = s & 3 end):find("integer"))
    assert.truthy(build_err(function(b) local _ = b:size("n") + {} end):find("expected a number"))
    local e
    ckt.kernel{name = "u", block = 32, build = function(b) e = b:size("n") end}
    assert.is_false(pcall(getmetatable(e).__unm, 5)) -- a metamethod called directly: an error, not a crash
    assert.is_false(pcall(getmetatable(e).__add, 5, 6))
    assert.equal(3, ckt.max(1, 3)); assert.equal(-2.5, ckt.min(-2.5, 0)); assert.is_true(ckt.lt(1, 2))
  end)
  it("launch: missing, unknown and mistyped arguments, other dtypes, wrong block", function()
    local k, grid = copy.build{dtype = "f32", tile = {8, 32}}
    local exe = k:compile{target = "cpu"}
    local bx, by, bh = dev:alloc("f32", 256), dev:alloc("f32", 256), dev:alloc("f16", 256)
    local function err(args) local ok, e = pcall(exe.launch, exe, args); assert.is_false(ok); return e end
    assert.truthy(err{grid = 1, X = bx, M = 8, N = 32}:find("'Y'"))
    assert.truthy(err{grid = 1, X = bx, Y = by, M = 8, N = 32, Z = 1}:find("'Z'"))
    assert.truthy(err{grid = 1, X = bx, Y = by, M = "8", N = 32}:find("'M'"))
    assert.truthy(err{grid = 1, X = bh, Y = by, M = 8, N = 32}:find("holds f16"))
    assert.truthy(err{grid = 1, block = 128, X = bx, Y = by, M = 8, N = 32}:find("block 128"))
    assert.truthy(err{grid = 1, X = 42, Y = by, M = 8, N = 32}:find("buffer"))
    assert.truthy(err{X = bx, Y = by, M = 8, N = 32}:find("grid"))
    assert.truthy(err{grid = 1, X = bx, Y = by, M = -8, N = 32}:find("negative"))
    assert.truthy(err{grid = 1, args = {bx, by, 8}}:find("3"))
    exe:launch{grid = grid(8, 32), args = {bx, by, 8, 32}}
  end)
  it("gfx and sm targets are compile-only here: launching them is refused, not crashed", function()
    local k = copy.build{dtype = "f32", tile = {8, 32}}
    local ok, exe = pcall(k.compile, k, {target = "gfx90a", compile_only = true})
    if not ok then pending("hipRTC not installed: " .. exe) return end
    local bx = dev:alloc("f32", 256)
    local ok2, e = pcall(exe.launch, exe, {grid = 1, X = bx, Y = bx, M = 8, N = 32})
    assert.is_false(ok2); assert.truthy(e)
  end)
end)
