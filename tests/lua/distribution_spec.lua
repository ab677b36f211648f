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
  it("follows the equations of tile_distribution_encoding_pattern_2d", function()
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

local function errmsg(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

local function has(msg, text) assert.truthy(msg:find(text, 1, true), ("%q lacks %q"):format(msg, text)) end

describe("encoding_pattern_2d (more)", function()
  local base = {block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8}
  local function with(t) local r = {} for k, v in pairs(base) do r[k] = v end for k, v in pairs(t) do r[k] = v end return r end

  it("exposes the parameters and prints a summary", function()
    local E = ckt.encoding_pattern_2d(with{pattern = "warp_raked"})
    assert.equal("warp_raked", E.pattern)
    assert.same({256, 64, 64, 8, 64, 1}, {E.block_size, E.y_per_tile, E.x_per_tile, E.vec_size, E.warp_size, E.num_wave_groups})
    assert.is_false(E.shuffled)
    assert.equal(16, E:num_values())
    assert.same({64, 64}, E:x_lengths())
    local s = tostring(E)
    has(s, "warp_raked"); has(s, "X0=8 (vector) X1=8"); has(s, "Y0=4 Y1=2 Y2=8")
    local G = ckt.tile_distribution_encoding{rs = {}, hs = {{4}}, ps_to_rhs_major = {{1}}, ps_to_rhs_minor = {{0}}}
    assert.equal("general", G.pattern); assert.is_nil(G.x0)
    has(tostring(G), "tile_distribution_encoding{R=<>, H=<<4>>")
  end)

  it("builds CK's wave-group encoding: R = <Y0> replicates the warps", function()
    local G = ckt.encoding_pattern_2d(with{block_size = 512, num_wave_groups = 2})
    assert.same({8, 8, 4, 8, 2}, {G.x0, G.x1, G.y0, G.y1, G.y2})
    assert.same({16, 64}, G:x_lengths()) -- CK's H0 = <Y1, Y2>
    local t = G:owner({3, 9})
    assert.same({9, 73, 137, 201}, t) -- lane 9 of each of the 4 warps
    has(tostring(G), "2 wave groups")
  end)

  it("shuffled = true is CK's MakeShuffled2DStaticTileDistribution (the transpose)", function()
    local E = ckt.encoding_pattern_2d(with{x_per_tile = 32, pattern = "block_raked"})
    local S = ckt.encoding_pattern_2d(with{x_per_tile = 32, pattern = "block_raked", shuffled = true})
    assert.is_true(S.shuffled)
    assert.same({32, 64}, S:x_lengths())
    for _, th in ipairs{0, 1, 63, 64, 200, 255} do
      local yl = E:ys_lengths()
      for a = 0, yl[1] - 1 do for b = 0, yl[2] - 1 do
        local x = E:calculate_index(th, {a, b})
        local y = S:calculate_index(th, {b, a})
        assert.same({x[2], x[1]}, y)
      end end
    end
    has(tostring(S), "shuffled")
  end)

  it("owner() inverts calculate_index for every element of a small tile", function()
    local E = ckt.encoding_pattern_2d{block_size = 64, y_per_tile = 16, x_per_tile = 16, vec_size = 4, pattern = "block_raked", warp_size = 32}
    for r = 0, 15 do for c = 0, 15 do
      local t, y = E:owner({r, c})
      assert.equal(1, #t)
      assert.same({r, c}, E:calculate_index(t[1], y))
    end end
  end)

  it("draws T#/V# grids and SVG", function()
    local E = ckt.encoding_pattern_2d{block_size = 64, y_per_tile = 8, x_per_tile = 32, vec_size = 4}
    local g = E:grid()
    has(g, "T0/V0"); has(g, "T0/V3"); has(g, "T63/V3")
    local svg = E:svg{title = "thread raked", cell = 20}
    has(svg, "<svg"); has(svg, "thread raked"); has(svg, "T7/V1")
    has(errmsg(E.svg, E, {colour = "red"}), "unknown option")
    has(errmsg(E.svg, E, {cell = 1}), "cell 1 must be between 4 and 200")
    has(errmsg(E.svg, E, 5), "options must be a table")
    has(errmsg(E.grid, E, {title = "x"}), "unknown option")
    local three = ckt.tile_distribution_encoding{hs = {{2}, {2}, {2}}, ps_to_rhs_major = {{1, 2, 3}}, ps_to_rhs_minor = {{0, 0, 0}}}
    has(errmsg(three.grid, three), "grid: only 1-D and 2-D encodings can be drawn (this one has 3 X dimensions)")
    has(errmsg(three.svg, three), "svg: only 1-D")
    local one = ckt.tile_distribution_encoding{hs = {{8}}, ps_to_rhs_major = {{1}}, ps_to_rhs_minor = {{0}}}
    has(one:grid(), "T7/V0") -- one row
  end)

  it("refuses bad input with the reason", function()
    local function err(t) return errmsg(ckt.encoding_pattern_2d, t) end
    has(err(with{y_per_tile = 20, vec_size = 2, pattern = "warp_raked"}), "encoding_pattern_2d: Y0*Y1*Y2 == YPerTile fails: 4*2*2 != 20")
    has(err(with{block_size = 100}), "X1*Y1*Y0*NumWaveGroups == BlockSize fails: 8*8*1*1 != 100")
    has(err(with{num_wave_groups = 3}), "8*8*1*3 != 256")
    has(err(with{warp_size = 32, x_per_tile = 512}), "X1*Y1 == WarpSize fails: 64*0 != 32")
    has(err(with{block_size = 32}), "BlockSize / WarpSize is 0")
    has(err(with{y_per_tile = 2, x_per_tile = 8}), "TileSize / BlockSize is 0")
    has(err{block_size = 64, y_per_tile = 16, x_per_tile = 14, vec_size = 7}, "X0*X1 == XPerTile fails: 3*4 != 14")
    for _, f in ipairs{"block_size", "y_per_tile", "x_per_tile", "vec_size"} do
      has(err(with{[f] = 0}), f .. " is 0, must be positive")
      has(err(with{[f] = -8}), f .. " is -8")
      has(err(with{[f] = 2.5}), "integer")
      local t = with{}; t[f] = nil; has(err(t), "field '" .. f .. "' is required")
    end
    has(err(with{warp_size = 0}), "warp_size is 0")
    has(err(with{num_wave_groups = -1}), "num_wave_groups is -1")
    has(err(with{pattern = 3}), "pattern")
    has(err(with{shuffled = "yes"}), "shuffled")
    has(err(with{y_per_tile = math.maxinteger}), "overflows")
    has(errmsg(ckt.encoding_pattern_2d), "table expected")
    has(errmsg(ckt.encoding_pattern_2d, "thread_raked"), "table expected")
  end)
end)

describe("tile_distribution_encoding (more)", function()
  local function enc(t) return ckt.tile_distribution_encoding(t) end
  local base = function()
    return {rs = {2}, hs = {{4, 2}, {8}}, ps_to_rhs_major = {{0, 1}, {2}}, ps_to_rhs_minor = {{0, 0}, {0}},
            ys_to_rhs_major = {1}, ys_to_rhs_minor = {1}}
  end
  it("has CK's meaning: thread = P0 * size(P1) + P1, replication over R", function()
    local E = enc(base())
    assert.equal(64, E:num_threads()); assert.same({2}, E:ys_lengths()); assert.same({8, 8}, E:x_lengths())
    assert.same({3, 5}, E:calculate_index(45, {1}))
    assert.same({3, 5}, E:calculate_index(13, {1}))
    local t, y = E:owner({3, 5}); assert.same({13, 45}, t); assert.same({1}, y)
    assert.equal("((8,4,2),2):((1,16,0),8)", tostring(E:tv_layout()))
  end)
  it("checks random general encodings: ownership and round trips", function()
    math.randomseed(11)
    for _ = 1, 60 do
      local hs, comps = {}, {}
      local nx = math.random(1, 2)
      for x = 1, nx do
        hs[x] = {}
        for k = 1, math.random(1, 3) do hs[x][k] = math.random(1, 3); comps[#comps + 1] = {x, k - 1} end
      end
      for i = #comps, 2, -1 do local j = math.random(i); comps[i], comps[j] = comps[j], comps[i] end
      local pm, pn, ym, yn = {{}}, {{}}, {}, {}
      for i, c in ipairs(comps) do
        if i == 1 or math.random(2) == 1 then pm[1][#pm[1] + 1] = c[1]; pn[1][#pn[1] + 1] = c[2]
        else ym[#ym + 1] = c[1]; yn[#yn + 1] = c[2] end
      end
      local E = enc{hs = hs, ps_to_rhs_major = pm, ps_to_rhs_minor = pn, ys_to_rhs_major = ym, ys_to_rhs_minor = yn}
      local xl, yl, tv = E:x_lengths(), E:ys_lengths(), E:tv_layout()
      local cells = 1 for _, v in ipairs(xl) do cells = cells * v end
      assert.equal(cells, E:num_threads() * E:num_values())
      local seen = {}
      for t = 0, E:num_threads() - 1 do
        for v = 0, E:num_values() - 1 do
          local ys, r = {}, v
          for i = #yl, 1, -1 do ys[i] = r % yl[i]; r = r // yl[i] end
          local x = E:calculate_index(t, ys)
          local off = 0 for i = 1, #xl do off = off * xl[i] + x[i] end
          assert.is_nil(seen[off]); seen[off] = true
          assert.equal(off, tv(t, v))
          local who = E:owner(x); assert.same({t}, who)
        end
      end
    end
  end)
  it("refuses bad input with the reason", function()
    local function err(edit) local t = base(); edit(t); return errmsg(enc, t) end
    has(err(function(t) t.ps_to_rhs_major = {{3, 1}, {2}} end), "has major 3, out of range [0, 2]")
    has(err(function(t) t.ps_to_rhs_minor = {{5, 0}, {0}} end), "minor 5, out of range for R")
    has(err(function(t) t.ys_to_rhs_minor = {0} end), "RH component (1, 0) is used twice (again by Y0)")
    has(err(function(t) t.ys_to_rhs_major = {}; t.ys_to_rhs_minor = {} end), "H0 component 1 (length 2) is reached by no P and no Y")
    has(err(function(t) t.ys_to_rhs_major = {0}; t.ys_to_rhs_minor = {0}; t.ps_to_rhs_major = {{1}, {2}}; t.ps_to_rhs_minor = {{0}, {0}} end), "Y0 maps to R component 0")
    has(err(function(t) t.rs = {0} end), "R length 0 is 0, must be positive")
    has(err(function(t) t.hs = {{4, -2}, {8}} end), "H0 length 1 is -2")
    has(err(function(t) t.hs = {} end), "0 X dimensions")
    has(err(function(t) t.hs = {{1}, {1}, {1}, {1}, {1}} end), "at most 4")
    has(err(function(t) t.hs = nil end), "field 'hs' must be a list of lists")
    has(err(function(t) t.hs = {4, 8} end), "hs[1]")
    has(err(function(t) t.hs = {{4, "2"}, {8}} end), "integer")
    has(err(function(t) t.ps_to_rhs_minor = {{0, 0}} end), "ps_to_rhs_major has 2 Ps but ps_to_rhs_minor 1")
    has(err(function(t) t.ps_to_rhs_minor = {{0}, {0}} end), "P0 lists 2 majors but 1 minors")
    has(err(function(t) t.ys_to_rhs_minor = nil end), "ys_to_rhs_major has 1 Ys but ys_to_rhs_minor 0")
    has(err(function(t) t.ps_to_rhs_major = {} ; t.ps_to_rhs_minor = {} end), "0 P dimensions")
    has(err(function(t) t.ps_to_rhs_major = {{0, 1}, {}}; t.ps_to_rhs_minor = {{0, 0}, {}} end), "P1 lists 0 components")
    has(err(function(t) t.ps = {} end), "unknown option")
    has(err(function(t) t.hs = {{math.maxinteger // 2, 4}, {8}} end), "overflows")
    has(err(function(t) t.ys_to_rhs_major = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}; t.ys_to_rhs_minor = t.ys_to_rhs_major end), "ys_to_rhs_major")
    has(errmsg(enc, nil), "table expected")
  end)
  it("methods refuse bad arguments", function()
    local E = enc(base())
    has(errmsg(E.calculate_index, E, 64, {0}), "calculate_index: thread 64 is out of range [0, 64)")
    has(errmsg(E.calculate_index, E, -1, {0}), "out of range")
    has(errmsg(E.calculate_index, E, 0, {2}), "calculate_index: Y0 = 2 is out of range [0, 2)")
    has(errmsg(E.calculate_index, E, 0, {0, 0}), "y_coords has 2 entries, the encoding has 1 Ys")
    has(errmsg(E.calculate_index, E, 0), "y_coords")
    has(errmsg(E.calculate_index, E, "0", {0}), "thread_id")
    has(errmsg(E.calculate_index, E, 0.5, {0}), "thread_id")
    has(errmsg(E.calculate_index, E, nil, {0}), "thread_id")
    has(errmsg(E.owner, E, {8, 0}), "owner: X0 = 8 is out of range [0, 8)")
    has(errmsg(E.owner, E, {0}), "x_coords has 1 entries, the encoding has 2 X dimensions")
    has(errmsg(E.owner, E, "x"), "x_coords")
    has(errmsg(E.ys_lengths, 5), "ckt.encoding expected")
    has(errmsg(E.tv_layout, {}), "ckt.encoding expected")
  end)
end)

describe("fragments (more)", function()
  it("are CK encodings and nested layouts too, value order included", function()
    for _, name in ipairs{"mfma_f32_32x32x8f16", "mfma_f32_16x16x16f16", "mfma_f32_32x32x8bf16_1k", "mfma_f32_16x16x16bf16_1k", "mma_m16n8k16"} do
      for _, op in ipairs{"A", "B", "C"} do
        local F = ckt.fragment(name, op)
        local E, N = F:encoding(), F:nested()
        assert.is_true(ckt.same_distribution(F, E, {strict = true}), name .. " " .. op)
        assert.is_true(ckt.same_distribution(F, N, {strict = true}), name .. " " .. op)
        assert.is_true(ckt.same_distribution(E, N, {strict = true}))
        assert.equal(F.lanes, E:num_threads()); assert.equal(F.lanes, N:num_threads())
        assert.equal(F.values, E:num_values())
        assert.same({F.rows, F.cols}, N:undistributed_shape())
        assert.same({F.rows, F.cols}, E:x_lengths())
        assert.equal(op, F.operand); assert.equal(name, F.name)
      end
    end
    assert.equal(32, ckt.fragment("mma_m16n8k16", "c"):nested():num_threads()) -- 32-lane subgroups
    assert.equal(tostring(ckt.fragment("mma_m16n8k16", "C"):tv_layout()), tostring(ckt.fragment("mma_m16n8k16", "D"):tv_layout()))
  end)
  it("draw and print", function()
    local F = ckt.fragment("mfma_f32_16x16x16f16", "C")
    has(tostring(F), "fragment mfma_f32_16x16x16f16 C (16x16, 64 lanes x 4 values): ((16,4),4):((1,64),16)")
    has(F:grid(), "T17/V0")
    has(F:svg{cell = 12}, "<svg")
  end)
  it("refuse bad input", function()
    has(errmsg(ckt.fragment, "mfma_f32_64x64", "A"), "fragment: unknown instruction 'mfma_f32_64x64'")
    has(errmsg(ckt.fragment, "mma_m16n8k16", "Q"), "operand 'Q' of mma_m16n8k16 is not one of A, B, C")
    has(errmsg(ckt.fragment, "mma_m16n8k16", "AB"), "operand must be \"A\", \"B\" or \"C\"")
    has(errmsg(ckt.fragment, "mma_m16n8k16"), "string expected")
    has(errmsg(ckt.fragment, nil, "A"), "string expected")
    has(errmsg(ckt.fragment, {}, "A"), "string expected")
  end)
end)

describe("same_distribution", function()
  it("compares any two of encodings, nested layouts, fragments and TV layouts", function()
    local C = ckt.fragment("mfma_f32_16x16x16f16", "C")
    local tv = ckt.layout("((16,4),4):((1,64),16)")
    assert.is_true(ckt.same_distribution(C, tv))
    assert.is_true(ckt.same_distribution(tv, C:encoding(), {strict = true}))
    -- the same elements per thread in another order: equal, but not strictly
    local perm = ckt.layout("((16,4),(2,2)):((1,64),(32,16))")
    assert.is_true(ckt.same_distribution(tv, perm))
    assert.is_false(ckt.same_distribution(tv, perm, {strict = true}))
    assert.is_true(ckt.same_distribution(tv, perm, {strict = false}))
    -- perturbed: threads permuted, fewer values, another operand
    assert.is_false(ckt.same_distribution(tv, ckt.layout("((4,16),4):((64,1),16)")))
    assert.is_false(ckt.same_distribution(tv, ckt.layout("((16,4),2):((1,64),16)")))
    assert.is_false(ckt.same_distribution(C, ckt.fragment("mfma_f32_16x16x16f16", "A")))
    -- the three raked patterns differ from each other
    local p = {block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8}
    local T = ckt.encoding_pattern_2d(p); p.pattern = "warp_raked"
    local W = ckt.encoding_pattern_2d(p)
    assert.is_false(ckt.same_distribution(T, W))
    assert.is_true(ckt.same_distribution(W, W:tv_layout(), {strict = true}))
  end)
  it("refuses what is not a distribution", function()
    local tv = ckt.layout("((16,4),4):((1,64),16)")
    local what = "distribution (encoding, nested layout, fragment or TV layout) expected"
    has(errmsg(function() return ckt.same_distribution(tv, 5) end), "bad argument #2 to 'same_distribution' (" .. what .. ", got number)")
    has(errmsg(ckt.same_distribution, nil, tv), "bad argument #1 to 'ckt.same_distribution' (" .. what .. ", got nil)")
    has(errmsg(ckt.same_distribution, tv, "((16,4),4):((1,64),16)"), "bad argument #2 to 'ckt.same_distribution' (" .. what .. ", got string)")
    has(errmsg(ckt.same_distribution, tv, {}), "bad argument #2 to 'ckt.same_distribution' (" .. what .. ", got table)")
    has(errmsg(ckt.same_distribution, ckt.layout(16), tv), "the first argument is not a (thread, value) layout (rank 1, need 2)")
    has(errmsg(ckt.same_distribution, tv, tv, {strict = 1}), "strict")
    has(errmsg(ckt.same_distribution, tv, tv, {exact = true}), "unknown option")
    has(errmsg(ckt.same_distribution, ckt.layout("((65536,65536),2):((0,0),1)"), ckt.layout("((65536,65536),2):((0,0),1)")), "analysis limit")
  end)
end)
