-- IREE nested layouts (NestedLayoutAttr): the documented example, the MFMA fragments, random layouts, bad input.
local ckt = require "ckt"

local function owners(tv)
  local count = {}
  local t, v = tv:mode(0), tv:mode(1)
  for th = 0, t:size() - 1 do
    for va = 0, v:size() - 1 do
      local off = tv(th, va)
      count[off] = (count[off] or 0) + 1
    end
  end
  return count
end

local function errmsg(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

local function has(msg, text) assert.truthy(msg:find(text, 1, true), ("%q lacks %q"):format(msg, text)) end

describe("nested_layout", function()
  local seed = {subgroup_tile = {2, 1}, batch_tile = {2, 4}, outer_tile = {1, 1}, thread_tile = {16, 4},
                element_tile = {1, 4}, subgroup_strides = {1, 0}, thread_strides = {1, 16}}
  it("reproduces the NestedLayoutAttr documentation's example", function()
    local N = ckt.nested_layout(seed)
    assert.same({64, 64}, N:undistributed_shape())
    assert.same({2, 4, 1, 1, 1, 4}, N:distributed_shape())
    assert.same({2, 1, 2, 4, 1, 1, 16, 4, 1, 4}, N:packed_shape())
    local e0, e16 = N:elements(0), N:elements(16)
    assert.equal(32, #e0) -- vector<2x16>
    assert.same({0, 0}, e0[1]); assert.same({0, 3}, e0[4]); assert.same({0, 16}, e0[5]); assert.same({16, 0}, e0[17])
    assert.same({0, 4}, e16[1]); assert.same({16, 55}, e16[32]) -- thread 16 is virtual thread (0, 1)
    assert.same({1, 0}, N:elements(1)[1])
    local count = owners(N:tv_layout())
    for off = 0, 64 * 64 - 1 do assert.equal(1, count[off]) end
  end)
  it("describes the MFMA C fragment the same way the lane table does", function()
    local C = ckt.nested_layout{subgroup_tile = {1, 1}, batch_tile = {1, 1}, outer_tile = {1, 1}, thread_tile = {4, 16},
      element_tile = {4, 1}, subgroup_strides = {0, 0}, thread_strides = {16, 1}}
    assert.is_true(ckt.same_distribution(C, ckt.fragment("mfma_f32_16x16x16f16", "C"), {strict = true}))
    local C32 = ckt.nested_layout{subgroup_tile = {1, 1}, batch_tile = {4, 1}, outer_tile = {1, 1}, thread_tile = {2, 32},
      element_tile = {4, 1}, subgroup_strides = {0, 0}, thread_strides = {32, 1}}
    assert.is_true(ckt.same_distribution(C32, ckt.fragment("mfma_f32_32x32x8f16", "C"), {strict = true}))
    -- lane 17 owns C rows 4..7 of column 1
    local e = C:elements(17)
    assert.same({{4, 1}, {5, 1}, {6, 1}, {7, 1}}, e)
    -- perturbed: swapped strides are a different distribution
    local P = ckt.nested_layout{subgroup_tile = {1, 1}, batch_tile = {1, 1}, outer_tile = {1, 1}, thread_tile = {4, 16},
      element_tile = {4, 1}, subgroup_strides = {0, 0}, thread_strides = {1, 4}}
    assert.is_false(ckt.same_distribution(C, P))
  end)
  it("verifies", function()
    local function err(t) local ok, e = pcall(ckt.nested_layout, t); assert.is_false(ok); return e end
    local function with(k, v) local t = {} for a, b in pairs(seed) do t[a] = b end t[k] = v return t end
    assert.truthy(err(with("batch_tile", {2})):find("same rank"))
    assert.truthy(err(with("thread_tile", {0, 4})):find("positive"))
    assert.truthy(err(with("thread_strides", {1, 2})):find("do not nest"))
    assert.truthy(err(with("outer_tile", nil)):find("required"))
    assert.truthy(err(with("element_tile", {1, "4"})):find("integer"))
    assert.has_error(function() ckt.nested_layout(seed):elements(128) end)
    assert.has_error(function() ckt.nested_layout(seed):elements(0, 0) end)
  end)
end)


describe("nested_layout (more)", function()
  local function example()
    return {subgroup_tile = {2, 1}, batch_tile = {2, 4}, outer_tile = {1, 1}, thread_tile = {16, 4},
            element_tile = {1, 4}, subgroup_strides = {1, 0}, thread_strides = {1, 16}}
  end
  local function with(k, v) local t = example(); t[k] = v; return t end

  it("gives thread 0 and thread 16 of the documented example their full element sets", function()
    local N = ckt.nested_layout(example())
    local set0, set16 = {}, {}
    for _, c in ipairs(N:elements(0)) do set0[c[1] * 64 + c[2]] = true end
    for _, c in ipairs(N:elements(16)) do set16[c[1] * 64 + c[2]] = true end
    for _, r in ipairs{0, 16} do
      for b = 0, 3 do for e = 0, 3 do
        assert.is_true(set0[r * 64 + 16 * b + e]); assert.is_true(set16[r * 64 + 16 * b + 4 + e])
      end end
    end
    local n0, n16 = 0, 0
    for _ in pairs(set0) do n0 = n0 + 1 end
    for _ in pairs(set16) do n16 = n16 + 1 end
    assert.equal(32, n0); assert.equal(32, n16)
    assert.equal(128, N:num_threads()); assert.equal(32, N:values_per_thread())
    has(tostring(N), "nested_layout<subgroup_tile = [2, 1], batch_tile = [2, 4]")
  end)

  it("normalises: a tile of 1 is not distributed", function()
    local N = ckt.nested_layout{subgroup_tile = {1}, batch_tile = {2}, outer_tile = {1}, thread_tile = {1}, element_tile = {4},
                                subgroup_strides = {9}, thread_strides = {5}}
    has(tostring(N), "subgroup_strides = [0], thread_strides = [0]")
    assert.equal(64, N:num_threads())
    assert.same(N:elements(0), N:elements(63)) -- every lane holds the whole vector
  end)

  it("takes a subgroup size (NVIDIA: 32)", function()
    local t = with("subgroup_size", 128)
    local N = ckt.nested_layout(t)
    assert.equal(256, N:num_threads())
    assert.equal(128, N:num_threads(64)) -- an explicit size wins
    assert.equal(256, N:tv_layout():mode(0):size())
    assert.equal(128, N:tv_layout{subgroup_size = 64}:mode(0):size())
    assert.same(N:elements(0), N:elements(64)) -- lanes 64..127 repeat the tile
    has(tostring(N), "subgroup_size = 128")
  end)

  it("agrees with its TV layout over random layouts", function()
    math.randomseed(3)
    for _ = 1, 40 do
      local rank = math.random(1, 2)
      local t = {subgroup_tile = {}, batch_tile = {}, outer_tile = {}, thread_tile = {}, element_tile = {}, subgroup_strides = {}, thread_strides = {}}
      for i = 1, rank do
        t.subgroup_tile[i] = math.random(1, 2); t.batch_tile[i] = math.random(1, 2); t.outer_tile[i] = math.random(1, 2)
        t.thread_tile[i] = math.random(1, 4); t.element_tile[i] = math.random(1, 3)
      end
      for _, lv in ipairs{{"subgroup_tile", "subgroup_strides"}, {"thread_tile", "thread_strides"}} do
        local order, running = {}, 1
        for i = 1, rank do order[i] = i end
        if math.random(2) == 1 then order[1], order[rank] = order[rank], order[1] end
        for _, i in ipairs(order) do t[lv[2]][i] = running * math.random(1, 2); running = t[lv[2]][i] * t[lv[1]][i] end
        t.subgroup_size = running * math.random(1, 2) -- the thread level is handled last: its span, or twice it
      end
      local N = ckt.nested_layout(t)
      local shape, tv = N:undistributed_shape(), N:tv_layout()
      local cells = 1 for _, v in ipairs(shape) do cells = cells * v end
      local count = {}
      for th = 0, N:num_threads() - 1 do
        for v, c in ipairs(N:elements(th)) do
          local off = 0 for i = 1, rank do off = off * shape[i] + c[i] end
          assert.equal(off, tv(th, v - 1))
          count[off] = (count[off] or 0) + 1
        end
      end
      local first = count[0]
      for off = 0, cells - 1 do assert.equal(first, count[off]) end
    end
  end)

  it("draws", function()
    local C = ckt.nested_layout{subgroup_tile = {1, 1}, batch_tile = {1, 1}, outer_tile = {1, 1}, thread_tile = {4, 16},
      element_tile = {4, 1}, subgroup_strides = {0, 0}, thread_strides = {16, 1}}
    has(C:grid(), "T17/V0")
    has(C:svg{title = "MFMA C", cell = 10}, "MFMA C")
    has(C:svg{subgroup_size = 128}, "<svg")
    has(errmsg(C.svg, C, {subgroup_size = 0}), "subgroup_size is 0, must be positive")
    has(errmsg(C.svg, C, {color = 1}), "unknown option")
    local R1 = ckt.nested_layout{subgroup_tile = {1}, batch_tile = {1}, outer_tile = {1}, thread_tile = {4}, element_tile = {1},
      subgroup_strides = {0}, thread_strides = {1}}
    has(errmsg(R1.grid, R1), "only rank-2 nested layouts can be drawn (rank 1)")
  end)

  it("refuses bad input with the reason", function()
    local function err(t) return errmsg(ckt.nested_layout, t) end
    for _, f in ipairs{"subgroup_tile", "batch_tile", "outer_tile", "thread_tile", "element_tile"} do
      has(err(with(f, {0, 1})), f .. "[0] is 0; tiles must be positive")
      has(err(with(f, {1, -2})), f .. "[1] is -2")
      has(err(with(f, {1})), "all fields must have the same rank as the layout")
      has(err(with(f, nil)), "field '" .. f .. "' is required")
      has(err(with(f, "x")), f)
      has(err(with(f, {1, 2.5})), "integer")
    end
    has(err(with("thread_strides", {1, 2})), "thread_strides do not nest: dim 1 has stride 2, which is not a multiple of 16")
    has(err(with("thread_strides", {-1, 16})), "thread_strides[0] is negative")
    has(err(with("thread_strides", {1, 0})), "thread_tile[1] = 4 but its stride is 0")
    has(err(with("subgroup_strides", {0, 0})), "subgroup_tile[0] = 2 but its stride is 0")
    has(err(with("subgroup_size", 48)), "the thread tile spans 64 lanes, which does not divide subgroup_size 48")
    has(err(with("subgroup_size", 0)), "subgroup_size is 0, must be positive")
    has(err(with("lanes", 64)), "unknown option")
    local five = {}
    for k, v in pairs(example()) do five[k] = {1, 1, 1, 1, 1} end
    has(err(five), "has 5 entries: rank 5 is beyond the capacity 4")
    local zero = {}
    for k in pairs(example()) do zero[k] = {} end
    has(err(zero), "rank 0 is out of range")
    has(err(with("batch_tile", {math.maxinteger, 2})), "overflows")
    has(errmsg(ckt.nested_layout), "table expected")
    has(errmsg(ckt.nested_layout, 5), "table expected")
  end)

  it("methods refuse bad arguments", function()
    local N = ckt.nested_layout(example())
    has(errmsg(N.elements, N, 128), "elements: thread id 128 is out of range [0, 128)")
    has(errmsg(N.elements, N, -1), "out of range")
    -- argument errors in Lua's form, the function's name from the call
    has(errmsg(function() return N:elements("0") end), "bad argument #1 to 'elements' (tid must be an integer, got string)")
    has(errmsg(function() return N:elements(nil) end), "bad argument #1 to 'elements' (tid must be an integer, got nil)")
    has(errmsg(N.elements, N, 0, 0), "subgroup_size is 0, must be positive")
    has(errmsg(N.elements, N, 0, -64), "subgroup_size is -64")
    has(errmsg(N.elements, N, 0, 32), "the thread tile spans 64 lanes, which does not divide the subgroup size 32")
    has(errmsg(N.elements, N, 0, {lanes = 64}), "unknown option")
    has(errmsg(N.elements, N, 0, "64"), "subgroup_size")
    has(errmsg(N.tv_layout, N, 96), "does not divide the subgroup size 96")
    has(errmsg(N.num_threads, N, 0), "subgroup_size is 0")
    has(errmsg(N.undistributed_shape, 5), "ckt.nested_layout expected")
    has(errmsg(N.elements, {}, 0), "ckt.nested_layout expected")
  end)
end)
