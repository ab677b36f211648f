-- Layouts from Lua: the DESIGN 3.1 contract, reference examples and bad input.
local ckt = require "ckt"
local L = ckt.layout

describe("ckt.layout", function()
  it("builds, prints and evaluates", function()
    local a = L({4, {2, 8}}, {16, {1, 2}})
    assert.equal("(4,(2,8)):(16,(1,2))", tostring(a))
    assert.equal("12:1", tostring(L(12)))
    assert.equal("(4,8):(8,1)", tostring(L({4, 8}, "row")))
    assert.equal("(4,8):(1,4)", tostring(L({4, 8})))
    assert.equal(a, L("(4,(2,8)):(16,(1,2))"))
    assert.same({4, {2, 8}}, a:shape())
    assert.same({16, {1, 2}}, a:stride())
    assert.equal(64, a:size()); assert.equal(2, a:rank()); assert.equal(2, a:depth())
    assert.equal(17, a(5)); assert.equal(17, a(1, 1)); assert.equal(17, a({1, {1, 0}}))
    assert.equal("(2,8):(1,2)", tostring(a:mode(1)))
  end)

  it("reproduces the reference examples", function()
    assert.equal("12:1", tostring(ckt.coalesce(L"(2,(1,6)):(1,(6,2))")))
    assert.equal("(2,3):(6,1)", tostring(ckt.composition(L"(4,3):(3,1)", L"6:2")))
    assert.equal("(4,3):(6,2)", tostring(ckt.composition(L"12:2", L"(4,3):(3,1)")))
    assert.equal("(2,3):(1,8)", tostring(ckt.complement(L"4:2", 24)))
    assert.equal("(4,8):(8,1)", tostring(ckt.right_inverse(L"(8,4):(4,1)")))
    assert.equal("(2,(8,2)):(8,(1,16))", tostring(ckt.logical_divide(L"32:1", L"2:8")))
    assert.equal("((2,3),(5,4)):((5,10),(1,30))", tostring(ckt.blocked_product(L"(2,5):(5,1)", L"(3,4):(1,3)")))
    assert.equal("(2,2,2,2):(1,4,8,2)", tostring(ckt.make_ordered_layout({2,2,2,2}, {0,2,3,1})))
    assert.equal(4, ckt.max_common_vector(L"(4,8):(1,4)", L"(4,8):(1,8)"))
    assert.equal("32:1", tostring(ckt.max_common_layout(L"(4,8):(1,4)", L"(4,8):(1,4)")))
    assert.equal("(2,4):(1,6)", tostring(ckt.nullspace(L"(2,(3,4)):(0,(1,0))")))
    local t, off = ckt.local_tile(L{8, 16}, {4, 8}, {1, 1})
    assert.equal("(4,8):(1,8)", tostring(t)); assert.equal(68, off)
    local p, poff = ckt.local_partition(L{8, 16}, L"(2,4):(1,2)", 5)
    assert.equal("(4,4):(2,32)", tostring(p)); assert.equal(17, poff)
    local tiler, tv = ckt.make_layout_tv(L"(2,3):(3,1)", L"(2,2):(2,1)")
    assert.same({4, 6}, tiler); assert.equal("((3,2),(2,2)):((8,2),(4,1))", tostring(tv))
    assert.equal("((4,8),(2,2)):((1,8),(4,64))", tostring(ckt.zipped_divide(L{8, 16}, {4, 8})))
    assert.equal("((4,8),2,2):((1,8),4,64)", tostring(ckt.tiled_divide(L{8, 16}, {4, 8})))
    assert.equal("(4,8,2,2):(1,8,4,64)", tostring(ckt.flat_divide(L{8, 16}, {4, 8})))
    assert.equal("(8,8):(1,5)", tostring(ckt.pad(L{5, 7}, {4, 4})))
  end)

  it("swizzles and composed layouts", function()
    local sw = ckt.swizzle(2, 0, 2)
    local got = {}
    for i = 0, 15 do got[#got + 1] = sw(i) end
    assert.same({0,1,2,3,5,4,7,6,10,11,8,9,15,14,13,12}, got)
    assert.equal("Sw<2,0,2>", tostring(sw))
    local c = ckt.composed(sw, 0, L({4, 4}, "row"))
    assert.equal(4, c(1, 1)); assert.equal(5, c(1, 0)); assert.equal(16, c:size())
    assert.truthy(c:grid():find("15"))
  end)

  it("draws grids and SVG", function()
    local g = L{4, 8}:grid()
    assert.truthy(g:find("(4,8):(1,4)", 1, true)); assert.truthy(g:find("| 31 |", 1, true))
    local svg = L{128, 128}:svg{labels = function(i, j, v) return ("T%d/V%d"):format(v % 64, v // 64) end}
    assert.truthy(svg:match("^<svg")); assert.truthy(svg:find("T63/V255", 1, true))
    assert.has_error(function() L{2, 2, 2}:grid() end)
  end)

  it("refuses bad input with a reason", function()
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); assert.is_string(e); return e end
    assert.truthy(err(L, {4, 0}):find("positive"))
    assert.truthy(err(L, {4, -2}):find("positive"))
    assert.truthy(err(L, {4, 2}, {1}):find("congruent"))
    assert.truthy(err(L, "(4,2:(1"):find("parse"))
    assert.truthy(err(L, {2.5}):find("integer"))
    assert.truthy(err(L, {0/0}):find("NaN"))
    assert.truthy(err(L, {"x"}):find("integer"))
    assert.truthy(err(L, {}):find("empty"))
    assert.truthy(err(L, true):find("integer"))
    assert.truthy(err(L, {2^62, 4}, {1, 2^62}):find("overflow"))
    assert.truthy(err(ckt.composition, L"(4,3):(3,1)", L"4:3"):find("do not divide"))
    assert.truthy(err(ckt.complement, L"(2,2):(1,1)", 8):find("injective"))
    assert.truthy(err(ckt.tile_to_shape, L{4, 8}, {3, 5}):find("divisible"))
    assert.truthy(err(ckt.swizzle, 3, 0, 2):find("overlap"))
    assert.truthy(err(ckt.composition, {}, 3):find("layout"))
    assert.truthy(err(ckt.local_partition, L{8, 16}, L{2, 4}, 8):find("out of range"))
    assert.truthy(err(function() return L{4, 8}(32) end):find("out of range"))
    assert.truthy(err(function() return L{4, 8}(1, 2, 3) end):find("rank"))
    local deep = 1
    for _ = 1, 12 do deep = {deep} end
    assert.truthy(err(L, deep):find("deeper"))
  end)

  it("keeps composition R(i) == A(B(i)) over random layouts", function()
    math.randomseed(42)
    local function rl()
      local shape, stride, cur = {}, {}, 1
      for i = 1, math.random(1, 3) do
        shape[i] = math.random(1, 4); stride[i] = cur * math.random(1, 2); cur = stride[i] * shape[i]
      end
      return L(shape, stride)
    end
    local n = 0
    for _ = 1, 500 do
      local a, b = rl(), rl()
      local ok, r = pcall(ckt.composition, a, b)
      if ok then
        local inside = true
        for i = 0, b:size() - 1 do if b(i) >= a:size() then inside = false end end
        if inside then
          n = n + 1
          for i = 0, b:size() - 1 do assert.equal(a(b(i)), r(i)) end
        end
      end
    end
    assert.is_true(n > 50)
  end)
end)
