-- The layout algebra from Lua: bad input for every function, seeded properties, pictures.
local ckt = require "ckt"
local L = ckt.layout

local function err(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  assert.is_string(e)
  return e
end

describe("layout functions refuse bad input with a reason", function()
  local A = L{8, 16}
  -- every function with its good arguments; each argument is replaced in turn by garbage
  local calls = {
    {"coalesce", {A}}, {"filter", {A}}, {"composition", {A, L"4:2"}}, {"complement", {L"4:2", 24}},
    {"right_inverse", {A}}, {"left_inverse", {A}}, {"logical_divide", {A, {4, 8}}}, {"zipped_divide", {A, {4, 8}}},
    {"tiled_divide", {A, {4, 8}}}, {"flat_divide", {A, {4, 8}}}, {"logical_product", {L"(2,2):(1,2)", L"3:1"}},
    {"zipped_product", {L"(2,2):(1,2)", L"3:1"}}, {"tiled_product", {L"(2,2):(1,2)", L"3:1"}},
    {"flat_product", {L"(2,2):(1,2)", L"3:1"}}, {"logical_product", {A, {2, L"3:1"}}}, {"zipped_product", {A, {2, 3}}},
    {"tiled_product", {A, {{2, 2}, 3}}}, {"flat_product", {A, {L"2:2"}}},
    {"blocked_product", {L"(2,2):(1,2)", L"(3,4):(1,3)"}}, {"raked_product", {L"(2,2):(1,2)", L"(3,4):(1,3)"}},
    {"make_ordered_layout", {{2, 2, 2}, {0, 2, 1}}}, {"tile_to_shape", {L{2, 2}, {4, 6}}},
    {"max_common_vector", {A, A}}, {"max_common_layout", {A, A}}, {"nullspace", {A}},
    {"make_layout_tv", {L"(2,3):(3,1)", L"(2,2):(2,1)"}}, {"local_tile", {A, {4, 8}, {1, 1}}},
    {"local_partition", {A, L"(2,4):(1,2)", 5}}, {"pad", {L{5, 7}, {4, 4}}}, {"swizzle", {2, 0, 2}},
    {"composed", {ckt.swizzle(2, 0, 2), 0, L{4, 4}}},
  }
  local garbage = {
    {"nil", nil}, {"a boolean", true}, {"a float", 2.5}, {"NaN", 0 / 0}, {"a huge float", 1e300},
    {"a function", print}, {"nested garbage", {{"x"}, {true}}}, {"a malformed string", "(4,2:(1"},
  }
  -- the garbage that is legitimate input: an optional argument left nil (name, argument, garbage);
  -- the call must then return a layout. Every other garbage value must be refused with a message.
  local optional = {["complement 2 nil"] = true}
  for _, c in ipairs(calls) do
    local name, args = c[1], c[2]
    it(name .. " works on good input and refuses garbage in each argument", function()
      assert.is_true((pcall(ckt[name], table.unpack(args, 1, #args))))
      for i = 1, #args do
        for _, g in ipairs(garbage) do
          local bad = {table.unpack(args, 1, #args)}
          bad[i] = g[2]
          local ok, e = pcall(ckt[name], table.unpack(bad, 1, #args))
          local what = ("%s with %s as argument %d"):format(name, g[1], i)
          if optional[("%s %d %s"):format(name, i, g[1])] then
            assert.is_true(ok, what .. " (an optional argument) was refused: " .. tostring(e))
            assert.truthy(tostring(e):find(":", 1, true), what .. ": not a layout: " .. tostring(e))
          else
            assert.is_false(ok, what .. " was accepted")
            assert.is_string(e)
            assert.truthy(#e > 10 and not e:find("^%s*$"), what .. ": empty message")
            assert.truthy(e:find(name, 1, true), what .. ": the message does not name the function: " .. e)
            assert.falsy(e:find("attempt to", 1, true), what .. " leaked a Lua internals error: " .. e)
          end
        end
      end
    end)
  end

  it("names the reason", function()
    assert.truthy(err(L, {4, 0}):find("positive"))
    assert.truthy(err(L, {4, 2}, {1, 2, 3}):find("congruent"))
    assert.truthy(err(L, {2.5}):find("integer"))
    assert.truthy(err(L, {0 / 0}):find("NaN"))
    assert.truthy(err(L, "4:"):find("expected an integer"))
    assert.truthy(err(L, "(,)"):find("expected an integer"))
    assert.truthy(err(L, "99999999999999999999:1"):find("64%-bit"))
    assert.truthy(err(L, {2^40, 2^40}):find("overflow"))
    assert.truthy(err(L, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}):find("capacity"))
    assert.truthy(err(L, {4, 8}, "diagonal"):find('"row" or "col"'))
    assert.truthy(err(ckt.composition, L"(4,3):(3,1)", L"4:3"):find("stride 3 of B"))
    assert.truthy(err(ckt.composition, L{8, 16}, {4, 8, 2}):find("3 modes"))
    assert.truthy(err(ckt.composition, L{8, 16}, {}):find("1 to 16 modes"))
    assert.truthy(err(ckt.complement, L"(2,2):(1,1)", 8):find("not injective"))
    assert.truthy(err(ckt.complement, L"4:2", -3):find("positive"))
    assert.truthy(err(ckt.logical_divide, L"((4,2),16):((1,64),4)", {3}):find("mode 0"))
    assert.truthy(err(ckt.logical_product, L{8, 16}, {2, 3, 4}):find("the tiler has 3 modes but the layout only 2"))
    assert.truthy(err(ckt.zipped_product, L{8, 16}, {}):find("1 to 16 modes"))
    assert.truthy(err(ckt.tiled_product, L{8, 16}, {2, "x"}):find("tiler mode 1"))
    assert.truthy(err(ckt.flat_product, L{8, 16}, {0}):find("flat_product: tiler mode 0: size 0 must be positive"))
    assert.truthy(err(ckt.logical_product, L"((2,2),4):((1,1),4)", {L"2:1"}):find("mode 0: .*not injective"))
    assert.truthy(err(ckt.blocked_product, L{2, 2}, {2, 3}):find("one layout"))
    assert.truthy(err(ckt.raked_product, L{2, 2}, {L"2:1", L"3:1"}):find("rank%-sensitive"))
    assert.truthy(err(ckt.make_ordered_layout, {2, 2, 2}, {0, 1}):find("order has 2"))
    assert.truthy(err(ckt.tile_to_shape, L{4, 8}, {3, 5}):find("not divisible"))
    assert.truthy(err(ckt.local_tile, L{8, 16}, {4, 8}, {2, 0}):find("out of range"))
    assert.truthy(err(ckt.local_partition, L{8, 16}, L{2, 4}, -1):find("thread index %-1"))
    assert.truthy(err(ckt.pad, L{8, 16}, {4}):find("rank 2"))
    assert.truthy(err(ckt.swizzle, 3, 0, 2):find("overlap"))
    assert.truthy(err(ckt.swizzle, 1, 1, 100):find("small integers"))
    assert.truthy(err(ckt.composed, ckt.swizzle(1, 1, 1), -1, L{4}):find("non%-negative"))
    assert.truthy(err(function() return L{4, 8}(32) end):find("out of range"))
    assert.truthy(err(function() return L{4, 8}(1.5) end):find("integer"))
    assert.truthy(err(function() return L{4, 8}() end):find("expected an index"))
    assert.truthy(err(function() return L{4, 8}({1, {2, 3}}) end):find("rank"))
    assert.truthy(err(function() return L{4, 8}:mode(2) end):find("out of range"))
    assert.truthy(err(function() return L{4, 8}:mode("x") end):find("integer"))
    assert.truthy(err(function() return ckt.swizzle(2, 0, 2)(-1) end):find("non%-negative"))
    assert.truthy(err(function() return L{2, 2, 2}:grid() end):find("rank%-3"))
    assert.truthy(err(function() return L{4, 4}:svg{cell = 1} end):find("between 4 and 200"))
    assert.truthy(err(function() return L{4, 4}:svg{colour = "red"} end):find("colour"))
    assert.truthy(err(function() return L{2, 2}:svg{labels = {"a", "b"}} end):find("4 cells"))
    assert.truthy(err(function() return L{2, 2}:svg{labels = 3} end):find("function"))
    assert.truthy(err(function() return L{2, 2}:svg{labels = function() return {} end} end):find("must return a string"))
    assert.truthy(err(function() return L{4096, 4096}:grid() end):find("too many"))
  end)
end)

describe("layout properties from Lua", function()
  math.randomseed(7)
  local function random_layout(compact)
    local shape, stride, cur, order = {}, {}, 1, {}
    local r = math.random(1, 3)
    for i = 1, r do shape[i] = math.random(1, 4); order[i] = i end
    for i = r, 2, -1 do local j = math.random(1, i); order[i], order[j] = order[j], order[i] end
    for _, m in ipairs(order) do
      stride[m] = cur * (compact and 1 or math.random(1, 2)); cur = stride[m] * shape[m]
    end
    return L(shape, stride)
  end

  it("coalesce, print/parse and evaluation agree", function()
    for _ = 1, 300 do
      local a = random_layout(false)
      local c = ckt.coalesce(a)
      assert.equal(a:size(), c:size())
      assert.is_true(c:depth() <= 1)
      assert.equal(a, L(tostring(a)))
      for i = 0, a:size() - 1 do assert.equal(a(i), c(i)) end
    end
  end)

  it("inverses invert and products of compact layouts are bijections", function()
    for _ = 1, 300 do
      local a = random_layout(false)
      local ri, li = ckt.right_inverse(a), ckt.left_inverse(a)
      for i = 0, ri:size() - 1 do assert.equal(i, a(ri(i))) end
      for i = 0, a:size() - 1 do assert.equal(i, li(a(i))) end
      local p, q = random_layout(true), random_layout(true)
      for _, f in ipairs{ckt.blocked_product, ckt.raked_product} do
        local r, seen = f(p, q), {}
        assert.equal(p:size() * q:size(), r:size())
        for i = 0, r:size() - 1 do
          local o = r(i); assert.is_true(o >= 0 and o < r:size()); assert.is_nil(seen[o]); seen[o] = true
        end
      end
    end
  end)

  it("products with a tuple tiler: mode i of A times tiler i, the rest kept; zipped/tiled/flat the same function", function()
    local n = 0
    for _ = 1, 300 do
      local a = random_layout(math.random(2) == 1)
      local flat = type(a:shape()) == "number" -- an integer shape is one mode, itself
      local k = flat and 1 or math.random(1, a:rank())
      local T = {}
      for i = 1, k do T[i] = random_layout(true) end
      local ok, lp = pcall(ckt.logical_product, a, T)
      if ok then
        n = n + 1
        local zp, td, fl = ckt.zipped_product(a, T), ckt.tiled_product(a, T), ckt.flat_product(a, T)
        local modes = {}      -- per mode of A: {block, rest} or {kept}
        for i = 0, (flat and 0 or a:rank() - 1) do
          local ai = flat and a or a:mode(i)
          if i < k then
            local want = ckt.logical_product(ai, T[i + 1])
            assert.equal(want, flat and lp or lp:mode(i))
            modes[#modes + 1] = {ai:size(), T[i + 1]:size()}
          else
            assert.equal(ai, lp:mode(i))
            modes[#modes + 1] = {ai:size()}
          end
        end
        -- digits b0 q0 b1 q1 ... others (logical) vs b0 b1 ... q0 q1 ... others (zipped, tiled, flat)
        local sz, zorder = {}, {}
        for i, m in ipairs(modes) do for j, s in ipairs(m) do sz[#sz + 1] = s; m[j] = #sz end end
        for _, m in ipairs(modes) do if #m == 2 then zorder[#zorder + 1] = m[1] end end
        for _, m in ipairs(modes) do if #m == 2 then zorder[#zorder + 1] = m[2] end end
        for _, m in ipairs(modes) do if #m == 1 then zorder[#zorder + 1] = m[1] end end
        assert.equal(lp:size(), zp:size()); assert.equal(lp:size(), fl:size())
        for x = 0, math.min(lp:size(), 2048) - 1 do
          local d, r = {}, x
          for i, s in ipairs(sz) do d[i] = r % s; r = r // s end
          local zi, mul = 0, 1
          for _, j in ipairs(zorder) do zi = zi + d[j] * mul; mul = mul * sz[j] end
          local want = lp(x)
          assert.equal(want, zp(zi)); assert.equal(want, td(zi)); assert.equal(want, fl(zi))
        end
      else
        assert.truthy(lp:find("logical_product"), lp)
      end
    end
    assert.is_true(n > 100)
  end)

  it("logical_divide is A o (B, complement(B, size A))", function()
    local n = 0
    for _ = 1, 300 do
      local a, b = random_layout(false), random_layout(false)
      local ok, d = pcall(ckt.logical_divide, a, b)
      if ok then
        n = n + 1
        assert.equal(2, d:rank()); assert.equal(b:size(), d:mode(0):size())
        local c = ckt.complement(b, a:size())
        local pair = L({b:shape(), c:shape()}, {b:stride(), c:stride()})
        local comp = ckt.composition(a, pair)
        for i = 0, d:size() - 1 do assert.equal(comp(i), d(i)) end
      else
        assert.truthy(d:find("logical_divide"))
      end
    end
    assert.is_true(n > 100)
  end)
end)

describe("pictures", function()
  it("draws CuTe's print_layout table", function()
    local want = table.concat({
      "(2,3):(3,1)",
      "      0   1   2 ",
      "    +---+---+---+",
      " 0  | 0 | 1 | 2 |",
      "    +---+---+---+",
      " 1  | 3 | 4 | 5 |",
      "    +---+---+---+", ""}, "\n")
    assert.equal(want, L({2, 3}, "row"):grid())
    assert.truthy(L(8):grid():find(" 0  | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 |\n", 1, true)) -- rank 1: one row
  end)

  it("draws SVG with labels, titles and cell sizes; composed layouts too", function()
    local s = L{4, 4}:svg{title = "a <title>", cell = 30, labels = function(m, n, v) return "T" .. v end}
    assert.truthy(s:find("^<svg")); assert.truthy(s:find("</svg>\n$"))
    assert.truthy(s:find("a &lt;title&gt;", 1, true)); assert.truthy(s:find(">T15<", 1, true))
    local seq = {}
    for i = 1, 4 do seq[i] = "x" .. i end
    assert.truthy(L{2, 2}:svg{labels = seq}:find(">x4<", 1, true))
    local big = L{128, 128}:svg{labels = function(m, n, v) return ("T%d/V%d"):format(v % 64, v // 64) end}
    assert.is_true(#big < 1000000)
    local _, cells = big:gsub("<text x=", "")
    assert.equal(128 * 128 + 2 * 128, cells) -- the cells, the column and the row numbers
    local c = ckt.composed(ckt.swizzle(2, 0, 2), 0, L({4, 4}, "row"))
    assert.truthy(c:grid():find("Sw<2,0,2> o 0 o (4,4):(4,1)", 1, true))
    assert.truthy(c:svg{cell = 20}:find("^<svg"))
  end)
end)
