-- Distributions: seed examples, properties over random configurations, bad input.
local ckt = require "ckt"

local function owners(tv, cells)
  -- count how often each offset of the tile is owned
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

describe("encoding_pattern_2d", function()
  it("follows the seed 000 equations", function()
    local E = ckt.encoding_pattern_2d{block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8, pattern = "thread_raked"}
    assert.same({8, 8, 4, 8, 2}, {E.x0, E.x1, E.y0, E.y1, E.y2})
    assert.equal(256, E:num_threads()); assert.same({2, 8}, E:ys_lengths())
    local W = ckt.encoding_pattern_2d{block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8, pattern = "warp_raked"}
    assert.same({4, 2, 8}, {W.y0, W.y1, W.y2})
    local B = ckt.encoding_pattern_2d{block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8, pattern = "block_raked"}
    assert.same({2, 4, 8}, {B.y0, B.y1, B.y2})
    -- X0 clamps to TileSize/BlockSize
    local S = ckt.encoding_pattern_2d{block_size = 256, y_per_tile = 16, x_per_tile = 64, vec_size = 8}
    assert.equal(4, S.x0); assert.equal(16, S.x1)
    -- NVIDIA warps of 32 and wave groups
    local N = ckt.encoding_pattern_2d{block_size = 128, y_per_tile = 32, x_per_tile = 32, vec_size = 4, warp_size = 32}
    assert.same({4, 8, 4, 4, 2}, {N.x0, N.x1, N.y0, N.y1, N.y2})
    local G = ckt.encoding_pattern_2d{block_size = 512, y_per_tile = 64, x_per_tile = 64, vec_size = 8, num_wave_groups = 2}
    assert.equal(4, G.y0); assert.equal(256, G:num_threads())
    -- thread 65 = warp 1, lane 1: row (Y0*Y1 + Y1)*Y2 + Y2, column X1*X0 + X0
    assert.same({17, 11}, E:calculate_index(65, {1, 3}))
    local t, y = E:owner({17, 11}); assert.same({65}, t); assert.same({1, 3}, y)
  end)

  it("owns every element exactly once, and calculate_index agrees with tv_layout", function()
    local patterns = {"thread_raked", "warp_raked", "block_raked"}
    math.randomseed(7)
    local n = 0
    for _ = 1, 300 do
      local ws = ({32, 64})[math.random(2)]
      local cfg = {block_size = ws * 2 ^ math.random(0, 3) // 1, y_per_tile = 2 ^ math.random(2, 7) // 1,
                   x_per_tile = 2 ^ math.random(2, 7) // 1, vec_size = 2 ^ math.random(0, 4) // 1,
                   pattern = patterns[math.random(3)], warp_size = ws}
      local ok, E = pcall(ckt.encoding_pattern_2d, cfg)
      if ok then
        n = n + 1
        local tv = E:tv_layout()
        local xl = E:x_lengths()
        local count = owners(tv)
        for off = 0, xl[1] * xl[2] - 1 do assert.equal(1, count[off]) end
        local yl = E:ys_lengths()
        for _ = 1, 5 do
          local th, ys = math.random(0, E:num_threads() - 1), {math.random(0, yl[1] - 1), math.random(0, yl[2] - 1)}
          local x = E:calculate_index(th, ys)
          assert.equal(x[1] * xl[2] + x[2], tv(th, ys[1] * yl[2] + ys[2]))
          local who = E:owner(x); assert.equal(th, who[1])
        end
      else
        assert.truthy(E:find("encoding_pattern_2d"))
      end
    end
    assert.is_true(n > 50)
  end)

  it("refuses what CK's static_asserts refuse, naming the equation", function()
    local function err(t) local ok, e = pcall(ckt.encoding_pattern_2d, t); assert.is_false(ok); return e end
    assert.truthy(err{block_size = 256, y_per_tile = 48, x_per_tile = 64, vec_size = 8}:find("Y0%*Y1%*Y2 == YPerTile"))
    assert.truthy(err{block_size = 256, y_per_tile = 64, x_per_tile = 60, vec_size = 8}:find("XPerTile % VecSize == 0 fails: 60 % 8 = 4", 1, true))
    assert.truthy(err{block_size = 100, y_per_tile = 64, x_per_tile = 64, vec_size = 8}:find("X1*Y1*Y0*NumWaveGroups == BlockSize fails: 8*8*1*1 != 100", 1, true))
    assert.truthy(err{block_size = 256, y_per_tile = 64, x_per_tile = 1024, vec_size = 8}:find("X1*Y1 == WarpSize fails: 128*0 != 64", 1, true))
    assert.truthy(err{block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8, pattern = "diagonal"}:find("pattern"))
    assert.truthy(err{block_size = 256, y_per_tile = 64, x_per_tile = 64}:find("vec_size"))
    assert.truthy(err{block_size = -256, y_per_tile = 64, x_per_tile = 64, vec_size = 8}:find("positive"))
    assert.truthy(err{block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8, blocksize = 1}:find("unknown option"))
    assert.truthy(err{block_size = "256", y_per_tile = 64, x_per_tile = 64, vec_size = 8}:find("integer"))
    -- CK's warp- and block-raked patterns take NumWaveGroups and ignore it
    local W2 = ckt.encoding_pattern_2d{block_size = 512, y_per_tile = 64, x_per_tile = 64, vec_size = 8, pattern = "warp_raked", num_wave_groups = 2}
    assert.equal(512, W2:num_threads())
  end)
end)

describe("tile_distribution_encoding", function()
  it("matches the pattern it spells out", function()
    local E = ckt.tile_distribution_encoding{rs = {1}, hs = {{4, 8, 2}, {8, 8}}, ps_to_rhs_major = {{1}, {1, 2}},
      ps_to_rhs_minor = {{0}, {1, 0}}, ys_to_rhs_major = {1, 2}, ys_to_rhs_minor = {2, 1}}
    local P = ckt.encoding_pattern_2d{block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8}
    assert.is_true(ckt.same_distribution(E, P, {strict = true}))
    assert.equal(tostring(E:tv_layout()), tostring(P:tv_layout()))
  end)
  it("replicates over R", function()
    local E = ckt.tile_distribution_encoding{rs = {2}, hs = {{4}, {4}}, ps_to_rhs_major = {{0, 1}}, ps_to_rhs_minor = {{0, 0}},
      ys_to_rhs_major = {2}, ys_to_rhs_minor = {0}}
    assert.equal(8, E:num_threads())
    assert.same(E:calculate_index(1, {2}), E:calculate_index(5, {2}))
    local t = E:owner({1, 2}); assert.same({1, 5}, t)
  end)
  it("validates", function()
    local function err(t) local ok, e = pcall(ckt.tile_distribution_encoding, t); assert.is_false(ok); return e end
    local base = function() return {rs = {}, hs = {{4}, {4}}, ps_to_rhs_major = {{1}}, ps_to_rhs_minor = {{0}}, ys_to_rhs_major = {2}, ys_to_rhs_minor = {0}} end
    local t = base(); t.ps_to_rhs_major = {{3}}; assert.truthy(err(t):find("major 3"))
    t = base(); t.ps_to_rhs_minor = {{5}}; assert.truthy(err(t):find("minor 5"))
    t = base(); t.ys_to_rhs_major = {1}; assert.truthy(err(t):find("used twice"))
    t = base(); t.ys_to_rhs_major = {}; t.ys_to_rhs_minor = {}; assert.truthy(err(t):find("no P and no Y"))
    t = base(); t.hs = {{0}, {4}}; assert.truthy(err(t):find("positive"))
    t = base(); t.ys_to_rhs_minor = {0, 0}; assert.truthy(err(t):find("ys_to_rhs_minor"))
  end)
end)

describe("nested_layout", function()
  local seed = {subgroup_tile = {2, 1}, batch_tile = {2, 4}, outer_tile = {1, 1}, thread_tile = {16, 4},
                element_tile = {1, 4}, subgroup_strides = {1, 0}, thread_strides = {1, 16}}
  it("reproduces the seed 002 example", function()
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

describe("fragments", function()
  it("match the lane tables", function()
    local A = ckt.fragment("mfma_f32_32x32x8f16", "A"):tv_layout()
    for l = 0, 63 do for r = 0, 3 do assert.equal((l % 32) * 8 + 4 * (l // 32) + r, A(l, r)) end end
    local C = ckt.fragment("mfma_f32_32x32x8f16", "C"):tv_layout()
    for l = 0, 63 do for r = 0, 15 do assert.equal((8 * (r // 4) + 4 * (l // 32) + r % 4) * 32 + l % 32, C(l, r)) end end
    local M = ckt.fragment("mma_m16n8k16", "A"):tv_layout()
    for l = 0, 31 do
      local g, t = l >> 2, l % 4
      for i = 0, 7 do
        local row = g + 8 * ((i >> 1) & 1)
        local col = 2 * t + (i & 1) + 8 * (i >> 2)
        assert.equal(row * 16 + col, M(l, i))
      end
    end
    local MC = ckt.fragment("mma_m16n8k16", "C"):tv_layout()
    for l = 0, 31 do for i = 0, 3 do
      assert.equal(((l >> 2) + 8 * (i >> 1)) * 8 + 2 * (l % 4) + (i & 1), MC(l, i))
    end end
    assert.has_error(function() ckt.fragment("mfma_f32_64x64", "A") end)
    assert.has_error(function() ckt.fragment("mma_m16n8k16", "Q") end)
  end)
end)
