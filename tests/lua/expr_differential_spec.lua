-- Kernel expressions mean what Lua means (issue 15): random epilogue functions run through
-- b:map on the CPU target and through plain Lua over the same inputs (integers and floats, the
-- edge values 0, -0, negatives, NaN, +-inf, INT32_MIN/MAX), stored through the same dtype; the
-- results must be the same element by element. Plus the fixed regressions of each rule.
local ckt = require "ckt"

local dev = ckt.device("cpu")
local N = 96 -- not a multiple of the 64-element tile

-- a 1-D map kernel over `nin` inputs of in_dt, stored as out_dt
local function map_kernel(fn, in_dt, out_dt, nin)
  return ckt.kernel{name = "diff", block = 64, build = function(b)
    local X = {}
    for i = 1, nin do X[i] = b:pointer("X" .. i, in_dt, {const = true}) end
    local Y = b:pointer("Y", out_dt)
    local n = b:size("n")
    local o = {b:block_id() * 64}
    local regs = {}
    for i = 1, nin do regs[i] = ckt.tile_window(ckt.tensor(X[i], in_dt, {shape = {n}}, {pad = true}), {64}, o):load() end
    regs[#regs + 1] = {dtype = out_dt}
    local r = b:map(fn, table.unpack(regs))
    ckt.tile_window(ckt.tensor(Y, out_dt, {shape = {n}}, {pad = true}), {64}, o):store(r)
  end}
end

-- the kernel's results and plain Lua's (stored through a ckt.array of out_dt)
local function both(fn, in_dt, out_dt, inputs)
  local exe = map_kernel(fn, in_dt, out_dt, #inputs):compile{target = "cpu"}
  local args = {grid = (N + 63) // 64, n = N}
  for i, a in ipairs(inputs) do
    local buf = dev:alloc(in_dt, N)
    buf:upload(a)
    args["X" .. i] = buf
  end
  local y = ckt.array(out_dt, {N}):poison()
  local by = dev:alloc(out_dt, N)
  by:upload(y)
  args.Y = by
  exe:launch(args)
  by:download(y)
  local ref = ckt.array(out_dt, {N})
  for e = 0, N - 1 do
    local vals = {}
    for i, a in ipairs(inputs) do vals[i] = a[e] end
    ref[e] = fn(table.unpack(vals))
  end
  return y, ref
end

local function same(a, b) return a == b or (a ~= a and b ~= b) end

local function check(fn, in_dt, out_dt, inputs, desc)
  local y, ref = both(fn, in_dt, out_dt, inputs)
  for e = 0, N - 1 do
    if not same(y[e], ref[e]) then
      local ins = {}
      for i, a in ipairs(inputs) do ins[i] = tostring(a[e]) end
      error(("%s: element %d (inputs %s): kernel %s, Lua %s"):format(desc, e, table.concat(ins, ", "), tostring(y[e]), tostring(ref[e])), 2)
    end
  end
end

local I32_EDGES = {0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, 2147483647, -2147483648, 16777217, -16777217, 65536}
local F32_EDGES = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, -7.0, 100.0, 0 / 0, math.huge, -math.huge, 1.5, -3.5}

local function inputs_of(dt, edges, nin, seed)
  local rng = ckt.array("f64", {1}) -- (only to keep the spec free of math.random state)
  local _ = rng
  local out = {}
  local s = seed
  local function rnd(k) s = (s * 1103515245 + 12345) % 2147483648; return s % k end
  for i = 1, nin do
    local a = ckt.array(dt, {N})
    for e = 0, N - 1 do
      if rnd(3) == 0 then a[e] = edges[rnd(#edges) + 1]
      else a[e] = dt == "i32" and (rnd(2001) - 1000) or (rnd(401) - 200) / 4 end
    end
    out[i] = a
  end
  return out, rnd
end

-- random expression trees over the inputs; only operations both sides define the same way
local function gen(rnd, depth, nin, ints)
  local function leaf()
    if rnd(3) == 0 then
      local c = ints and ({-7, -3, -1, 0, 1, 2, 5})[rnd(7) + 1] or ({-2.5, -1.0, 0.0, 0.5, 3.0})[rnd(5) + 1]
      return function() return c end, tostring(c)
    end
    local i = rnd(nin) + 1
    return function(...) return (select(i, ...)) end, "x" .. i
  end
  local function node(d)
    if d == 0 then return leaf() end
    local a, as = node(d - 1)
    local b, bs = node(d - 1)
    local k = rnd(ints and 12 or 10)
    if k == 0 then return function(...) return a(...) + b(...) end, "(" .. as .. " + " .. bs .. ")" end
    if k == 1 then return function(...) return a(...) - b(...) end, "(" .. as .. " - " .. bs .. ")" end
    if k == 2 then local c = ({-3, 2, 4})[rnd(3) + 1]; return function(...) return a(...) * c end, "(" .. as .. " * " .. c .. ")" end
    if k == 3 then local c = ints and ({-7, -3, -2, -1, 1, 2, 5})[rnd(7) + 1] or ({-3, -2, -0.5, 2, 4, 7})[rnd(6) + 1]
      return function(...) return a(...) // c end, "(" .. as .. " // " .. c .. ")" end
    if k == 4 then return function(...) return ckt.min(a(...), b(...)) end, "min(" .. as .. ", " .. bs .. ")" end
    if k == 5 then return function(...) return ckt.max(a(...), b(...)) end, "max(" .. as .. ", " .. bs .. ")" end
    if k == 6 then local c, cs = node(d - 1)
      return function(...) return ckt.select(c(...), a(...), b(...)) end, "select(" .. cs .. ", " .. as .. ", " .. bs .. ")" end
    if k == 7 then return function(...) return ckt.select(ckt.lt(a(...), b(...)), a(...), b(...)) end, "select(lt(" .. as .. ", " .. bs .. "), ...)" end
    if k == 8 then return function(...) return -a(...) end, "-" .. as end
    if k == 9 then return function(...) return ckt.abs(a(...)) end, "abs(" .. as .. ")" end
    if k == 10 then local c = ({-7, -3, -2, -1, 2, 3, 5})[rnd(7) + 1]; return function(...) return a(...) % c end, "(" .. as .. " % " .. c .. ")" end
    -- integer division by an input that is never 0 (Lua raises there, a kernel cannot)
    return function(...) local v = b(...); return a(...) // ckt.select(v, v, 1) end, "(" .. as .. " // nz(" .. bs .. "))"
  end
  return node(depth)
end

describe("kernel expressions against plain Lua (differential)", function()
  for trial = 1, 24 do
    it("random integer expression " .. trial, function()
      local ins, rnd = inputs_of("i32", I32_EDGES, 2, 7919 * trial)
      local fn, desc = gen(rnd, 1 + rnd(3), 2, true)
      check(fn, "i32", "i32", ins, desc)
    end)
  end
  for trial = 1, 24 do
    it("random float expression " .. trial, function()
      local ins, rnd = inputs_of("f32", F32_EDGES, 2, 104729 * trial)
      local fn, desc = gen(rnd, 1 + rnd(3), 2, false)
      check(fn, "f32", "f32", ins, desc)
    end)
  end
  for _, dt in ipairs{"i32", "i8", "u8"} do
    it("f32 results stored to " .. dt .. " saturate like ckt.array (NaN, inf, out of range)", function()
      local ins = inputs_of("f32", {0 / 0, math.huge, -math.huge, 300.0, -300.0, 3e9, -3e9, 2.75, -2.75, 255.5, -0.0}, 1, 11)
      check(function(x) return x * 2 end, "f32", dt, ins, "x * 2 -> " .. dt)
    end)
  end
end)

describe("the rules, one by one", function()
  local function one(fn, in_dt, out_dt, vals)
    local a = ckt.array(in_dt, {N})
    for e = 0, N - 1 do a[e] = vals[e % #vals + 1] end
    local y = both(fn, in_dt, out_dt, {a})
    local got = {}
    for i = 1, #vals do got[i] = y[i - 1] end
    return got
  end
  it("// floors and % takes the divisor's sign, integers and floats", function()
    assert.same({-2, 1, -2, 1}, one(function(x) return x // 2 end, "i32", "i32", {-3, 3, -4, 2}))
    assert.same({2, 1, 0, 2}, one(function(x) return x % 3 end, "i32", "i32", {-7, 7, -3, 2}))
    assert.same({-1, -2, -1, -2}, one(function(x) return x % -3 end, "i32", "i32", {-7, 7, -1, -2}))
    assert.same({1.0, -2.0, 1.0}, one(function(x) return x // 2.0 end, "f32", "f32", {3.0, -3.0, 2.5}))
  end)
  it("ckt.select(0, a, b) is b in a kernel and in Lua", function()
    assert.equal(20, ckt.select(0, 10, 20))
    assert.equal(10, ckt.select(-1, 10, 20))
    assert.equal(20, ckt.select(false, 10, 20))
    assert.same({20, 10, 10}, one(function(x) return ckt.select(x, 10, 20) end, "i32", "i32", {0, 1, -5}))
    assert.same({20, 10, 20}, one(function(x) return ckt.select(x, 10, 20) end, "f32", "i32", {0.0, 0 / 0, -0.0}))
  end)
  it("an i32 -> i32 map stays integer (no trip through f32)", function()
    assert.same({2147483647, 16777217, -2147483648}, one(function(x) return x end, "i32", "i32", {2147483647, 16777217, -2147483648}))
  end)
  it("integer stores saturate like ckt.array", function()
    assert.same({127, -128, 44}, one(function(x) return x end, "i32", "i8", {300, -300, 44}))
    assert.same({255, 0, 0}, one(function(x) return x end, "f32", "u8", {1e9, -5.0, 0 / 0}))
    assert.same({2147483647, -2147483648, 0}, one(function(x) return x end, "f32", "i32", {math.huge, -math.huge, 0 / 0}))
  end)
  it("ckt.int/float/cast/land/lor/lnot compute on plain numbers", function()
    assert.equal(3, ckt.int(3.7)); assert.equal(-3, ckt.int(-3.7)); assert.equal(0, ckt.int(0 / 0))
    assert.equal(math.maxinteger, ckt.int(math.huge)); assert.equal(5, ckt.int(5))
    assert.equal(16777216.0, ckt.float(16777217)); assert.equal(0.1 + 0.0, ckt.float(0.1) + (0.1 - ckt.float(0.1)))
    assert.equal(127, ckt.cast(300, "i8")); assert.equal(0, ckt.cast(0 / 0, "i32")); assert.equal(255, ckt.cast(1e9, "u8"))
    assert.equal(1.0, ckt.cast(1.0001, "f16")); assert.equal(-7, ckt.cast(-7.9, "i32"))
    assert.is_true(ckt.land(1, 2)); assert.is_false(ckt.land(1, 0)); assert.is_true(ckt.lor(0, 3)); assert.is_false(ckt.lor(0, false))
    assert.is_true(ckt.lnot(0)); assert.is_false(ckt.lnot(2))
    -- and the same in a kernel
    assert.same({127, -128, 5}, one(function(x) return ckt.cast(x, "i8") end, "f32", "i32", {300.0, -1e6, 5.5}))
    assert.same({3, -3, 0}, one(function(x) return ckt.int(x) end, "f32", "i32", {3.7, -3.7, 0 / 0}))
    assert.same({1, 0, 0}, one(function(x) return ckt.select(ckt.land(x, ckt.lnot(ckt.eq(x, 2))), 1, 0) end, "i32", "i32", {1, 0, 2}))
  end)
end)

describe("reductions", function()
  it("a block reduction with idle threads does not read their registers", function()
    -- 16 elements in 4-element vectors: 4 of the 16 threads hold values, 12 are idle
    local k = ckt.kernel{name = "idle_sum", block = 16, build = function(b)
      local X, Y = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32")
      local r = ckt.tile_window(ckt.tensor(X, "f32", {shape = {16}}), {16}, {0}):load()
      local acc = ckt.tensor("register", "f32", ckt.layout({1, 1}, {0, 0}), {lengths = {1}})
      b:clear(acc, 0)
      b:fold(acc, r, "sum")
      b:block_reduce(acc, "sum")
      ckt.tile_window(ckt.tensor(Y, "f32", {shape = {1}}), {1}, {0}):store(b:map(function(x) return x end, acc))
    end}
    local exe = k:compile{target = "cpu"}
    local x, y = dev:alloc("f32", 16), dev:alloc("f32", 1)
    local ones = ckt.array("f32", {16})
    for i = 0, 15 do ones[i] = 1 end
    x:upload(ones)
    for _ = 1, 3 do
      local out = ckt.array("f32", {1}):poison()
      y:upload(out)
      exe:launch{grid = 1, X = x, Y = y}
      y:download(out)
      assert.equal(16, out[0])
    end
  end)
  it("the library reduce's i8 max/min start from the type's extremes", function()
    local red = require "ckt.kernels.reduce"
    for _, case in ipairs{{"max", -5}, {"min", 7}} do
      local k, grid = red.build{dtype = "i8", op = case[1]}
      local exe = k:compile{target = "cpu"}
      local M, N = 2, 16
      local xa = ckt.array("i8", {M, N})
      for i = 0, M * N - 1 do xa[i] = case[2] end
      local x, y = dev:alloc("i8", M * N), dev:alloc("f32", M)
      x:upload(xa)
      local out = ckt.array("f32", {M}):poison()
      y:upload(out)
      exe:launch{grid = grid(M), X = x, Y = y, M = M, N = N}
      y:download(out)
      assert.equal(case[2], out[0]); assert.equal(case[2], out[1])
    end
  end)
end)

describe("parameter names", function()
  it("names the dialects already use are refused at b:pointer / b:size, not in the device compiler", function()
    for _, name in ipairs{"NAN", "INT64_MAX", "INFINITY", "threadIdx", "blockDim", "_Pragma", "_Bool", "class", "template",
                          "sqrtf", "memcpy", "float4", "v"} do
      for _, make in ipairs{function(b) b:pointer(name, "f32") end, function(b) b:size(name) end} do
        local ok, e = pcall(ckt.kernel, {name = "names", block = 32, build = make})
        assert.is_false(ok, name)
        assert.truthy(tostring(e):find(name, 1, true) and tostring(e):find("dialects", 1, true), tostring(e))
      end
    end
    assert.is_false((pcall(ckt.kernel, {name = "NAN", block = 32, build = function() end})))
    -- ordinary names still work, on every dialect
    local k = ckt.kernel{name = "names_ok", block = 32, build = function(b) b:pointer("Nx", "f32"); b:size("n_rows") end}
    for _, t in ipairs{"cpu", "gfx90a", "sm_90"} do assert.truthy(k:source(t):find("n_rows", 1, true)) end
  end)
end)

-- Issue 30: shifts, %, //, integer wrap-around and unary ~ mean what Lua means (or are refused)
describe("integer operators with Lua's meaning", function()
  local function pairs_of(xs, ns)
    local a, c = ckt.array("i32", {N}), ckt.array("i32", {N})
    local k = 0
    for _, x in ipairs(xs) do for _, n in ipairs(ns) do a[k % N] = x; c[k % N] = n; k = k + 1 end end
    assert(k <= N)
    for e = k, N - 1 do a[e] = 0; c[e] = 1 end
    return {a, c}, k
  end
  local XS = {1, -1, -2, 7, 2147483647, -2147483648}
  local NS = {0, 1, 2, 31, 32, 63, 64, 65, -1, -2, -31, -63, -64, -65}
  it("x << n and x >> n, counts as inputs (" .. #XS * #NS .. " cases each, i64 results stored as i32)", function()
    local ins = pairs_of(XS, NS)
    check(function(x, n) return x << n end, "i32", "i32", ins, "x << n")
    check(function(x, n) return x >> n end, "i32", "i32", ins, "x >> n")
    -- the low and high halves of the 64-bit result, so that saturation hides nothing
    check(function(x, n) return (x >> n) & 0x7fffffff end, "i32", "i32", ins, "(x >> n) & 0x7fffffff")
    check(function(x, n) return ((x >> n) >> 32) & 0x7fffffff end, "i32", "i32", ins, "(x >> n) >> 32")
    check(function(x, n) return ((x << n) >> 33) end, "i32", "i32", ins, "(x << n) >> 33")
  end)
  it("x << c and x >> c with constant counts, 64 and beyond, negative", function()
    for _, c in ipairs(NS) do
      local ins = pairs_of(XS, {0})
      check(function(x) return (x << c) >> 1 end, "i32", "i32", {ins[1]}, "(x << " .. c .. ") >> 1")
      check(function(x) return (x >> c) & 0x7fffffff end, "i32", "i32", {ins[1]}, "(x >> " .. c .. ") & mask")
      check(function(x) return x >> c end, "i32", "i32", {ins[1]}, "x >> " .. c)
    end
  end)
  it("unary ~, // and % of negative numbers, wrap-around of products", function()
    local ins = pairs_of(XS, {1, -1, 3, -7})
    check(function(x) return ~x end, "i32", "i32", {ins[1]}, "~x")
    check(function(x, y) return x // y end, "i32", "i32", ins, "x // y")
    check(function(x, y) return x % y end, "i32", "i32", ins, "x % y")
    check(function(x) return (x * (1 << 33)) // (1 << 33) end, "i32", "i32", {ins[1]}, "(x * 2^33) // 2^33")
    check(function(x) return (x * (1 << 40) * (1 << 30)) >> 40 end, "i32", "i32", {ins[1]}, "x * 2^70 wraps")
    check(function(x) return -(x * (1 << 32) * (1 << 31)) >> 33 end, "i32", "i32", {ins[1]}, "-(INT64_MIN) wraps")
    check(function(x, y) return (x - (1 << 62)) - (y * (1 << 62)) >> 40 end, "i32", "i32", ins, "sums wrap")
  end)
  it("float % as Lua computes it (fmod with the divisor's sign)", function()
    local a, c = ckt.array("f32", {N}), ckt.array("f32", {N})
    local xs, ys = {5.5, -5.5, 0.0, -0.0, 7.0, -7.0, 1 / 0, 0 / 0}, {2.0, -2.0, 3.0, -3.0, 1 / 0, -1 / 0, 0.5}
    local k = 0
    for _, x in ipairs(xs) do for _, y in ipairs(ys) do a[k] = x; c[k] = y; k = k + 1 end end
    for e = k, N - 1 do a[e] = 1; c[e] = 1 end
    check(function(x, y) return x % y end, "f32", "f32", {a, c}, "x % y (floats)")
    check(function(x) return x % 2.5 end, "f32", "f32", {a}, "x % 2.5")
  end)
  it("refused with a clear error: bitwise operators on floats", function()
    local ok, e = pcall(map_kernel, function(x) return x & 1 end, "f32", "f32", 1)
    assert.is_false(ok)
    assert.truthy(tostring(e):find("integer operands", 1, true), tostring(e))
  end)
end)
