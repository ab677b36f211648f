-- The library's attention and row kernels (softmax, layernorm, rmsnorm) under hostile options
-- (issue 30, as gemm_hostile_spec.lua does for the GEMM): random values -- int64 edges, 2^62 as an
-- integer and a float, negatives, 0, NaN, +-inf, fractions, strings, booleans, tables, functions --
-- for every option in the module's OPTIONS, one or two at a time over a valid base, and for every
-- argument of grid(). Each ends in a result or a Lua error naming the module (never a raw
-- "attempt to ..." internals error); a kernel that builds emits its C source for the CPU or refuses
-- cleanly, and a grid that answers is a block count a launch takes (1 .. 2^31 - 1). Seeded; a few
-- seconds in all.
local ckt = require "ckt"

local MODULES = {
  {name = "attention", base = {head_dim = 64, target = "cpu"}},
  {name = "softmax", base = {N = 256, target = "cpu"}},
  {name = "layernorm", base = {N = 512, dtype = "f32", target = "cpu"}},
  {name = "rmsnorm", base = {dtype = "bf16", target = "cpu"}},
}

-- hostile values for any option, and plausible ones for each (so that builds succeed often enough
-- for the emitter to see the odd-but-valid ones)
local HOSTILE = {0, -1, 1, 2, 3, 7, 16, 64, 1000, 1 << 20, 1 << 31, 1 << 32, 1 << 62, -(1 << 62),
  math.maxinteger, math.mininteger, 2 ^ 62, 2 ^ 63, -2 ^ 63, 0.5, 64.5, -0.0, 1e-300, 1e300,
  1 / 0, -1 / 0, 0 / 0, "", "8", "64", "f16", "yes", true, false, {}, {64}, {64, 64}, {64, 1 << 62},
  {1 << 62, 32}, {64, 0 / 0}, {64, "32"}, {64, 32, 16}, function() end}
local PLAUSIBLE = {
  dtype = {"f16", "bf16", "f32"}, out = {"f16", "bf16", "f32"}, target = {"cpu", "cpu:sm_90", "cpu:gfx90a", "cpu:sm_90a", "bogus"},
  head_dim = {16, 32, 64, 128, 256, 48, 272}, tile = {{64, 32}, {64, 64}, {64, 128}, {64, 16}, {32, 32}, {128, 32}, {128, 64}, {256, 32}},
  layout = {"bhsd", "bshd", "bsdh"}, scale = {0.125, 1, 0, -2, 3.4e38, 3.5e38}, name = {"k", "kern_x", "1k", ""},
  N = {1, 3, 8, 64, 4096, 8193, 1 << 20, (1 << 31) - 1}, threads = {1, 32, 64, 256, 1024, 48, 2048},
  vectors = {1, 2, 4, 8, 32, 33}, eps = {0, 1e-5, 1, 1e30},
}

local function rng(seed)
  local s = seed
  return function(n)
    s = (s * 6364136223846793005 + 1442695040888963407)
    return (s >> 33) % n + 1
  end
end

-- a clean error: a non-empty string naming the module, no Lua internals error
local function clean(what, mod, e)
  assert(type(e) == "string" and #e > 0, ("%s: a bad error object: %s"):format(what, tostring(e)))
  for _, raw in ipairs{"attempt to ", "number has no integer representation", "stack overflow", "(null)"} do
    assert(not e:find(raw, 1, true), ("%s: a raw internal error: %s"):format(what, e))
  end
  -- (a name that is no C identifier: the kernel builder's own message, naming the option)
  assert(e:find(mod .. ":", 1, true) or e:find("kernel: name '", 1, true), ("%s: the error does not name %s: %s"):format(what, mod, e))
end

local function show(o)
  local parts = {}
  for k, v in pairs(o) do parts[#parts + 1] = ("%s = %s"):format(k, type(v) == "table" and "{" .. table.concat((function()
    local t = {}; for i, x in ipairs(v) do t[i] = tostring(x) end; return t end)(), ", ") .. "}" or tostring(v)) end
  table.sort(parts)
  return "{" .. table.concat(parts, ", ") .. "}"
end

local MAX_GRID = (1 << 31) - 1

for mi, m in ipairs(MODULES) do
  describe(m.name .. " under hostile options", function()
    local mod = require("ckt.kernels." .. m.name)
    local GRID_ARGS = {0, -1, 1, 2, 63, 64, 65, 1000, 1 << 20, 1 << 31, 1 << 32, 1 << 40, 1 << 62, math.maxinteger,
      math.mininteger, 2 ^ 31, 2 ^ 62, 0.5, 1 / 0, 0 / 0, "8", "a", true, {}}

    it("every option: a plan or a clean error naming the module; what builds emits C for the CPU", function()
      local r = rng(7919 * mi)
      local built, refused, emitted, emit_refused = 0, 0, 0, 0
      local t0 = os.clock()
      for _ = 1, 300 do
        local o = {}
        for k, v in pairs(m.base) do o[k] = v end
        for _ = 1, r(2) do
          local name = mod.OPTIONS[r(#mod.OPTIONS)]
          local pl = PLAUSIBLE[name]
          if pl and r(2) == 1 then o[name] = pl[r(#pl)] else o[name] = HOSTILE[r(#HOSTILE)] end
        end
        if r(20) == 1 then o["bogus" .. r(3)] = 1 end
        local what = m.name .. ".build" .. show(o)
        local ok, k, grid = pcall(mod.build, o)
        if not ok then
          refused = refused + 1
          clean(what, m.name, k)
        else
          built = built + 1
          local sok, src = pcall(k.source, k, "cpu")
          if sok then
            emitted = emitted + 1
            assert(type(src) == "string" and #src > 0, what .. ": empty source")
          else
            emit_refused = emit_refused + 1
            assert(type(src) == "string" and #src > 0 and not src:find("attempt to ", 1, true), what .. ": k:source: " .. tostring(src))
          end
          -- and its grid with a hostile argument among valid ones
          local args = m.name == "attention" and {2, 3, 100} or {100}
          args[r(#args)] = GRID_ARGS[r(#GRID_ARGS)]
          local gok, n = pcall(grid, table.unpack(args))
          if gok then
            assert(math.type(n) == "integer" and n >= 1 and n <= MAX_GRID, ("%s: grid(%s) gave %s"):format(what, table.concat((function()
              local t = {}; for i, x in ipairs(args) do t[i] = tostring(x) end; return t end)(), ", "), tostring(n)))
          else
            clean(what .. " grid", m.name, n)
          end
        end
      end
      assert(built > 10 and refused > 10, ("%d built, %d refused: the mix is off"):format(built, refused))
      assert(os.clock() - t0 < 20, "slow")
    end)

    it("grid(): every argument hostile, the others valid -- a launchable block count or a clean error", function()
      local _, grid = mod.build(m.base)
      local arity = m.name == "attention" and 3 or 1
      for i = 1, arity do
        for _, v in ipairs(GRID_ARGS) do
          local args = {2, 3, 100}
          args[i] = v
          local ok, n = pcall(grid, table.unpack(args, 1, arity))
          if ok then
            assert(math.type(n) == "integer" and n >= 1 and n <= MAX_GRID,
              ("grid argument %d = %s gave %s"):format(i, tostring(v), tostring(n)))
          else
            clean(("grid argument %d = %s"):format(i, tostring(v)), m.name, n)
          end
        end
      end
      -- all huge at once, and all at the int64 edge
      for _, v in ipairs{1 << 40, math.maxinteger} do
        local ok, n = pcall(grid, v, v, v)
        if ok then assert(n >= 1 and n <= MAX_GRID, tostring(n)) else clean("grid(huge)", m.name, n) end
      end
    end)
  end)
end

describe("what this fuzzer found (each failed before its fix)", function()
  local attention = require "ckt.kernels.attention"
  local softmax = require "ckt.kernels.softmax"
  local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok, "accepted"); return tostring(e) end
  it("a row kernel's grid refuses more than 2^31 - 1 blocks (2^63 - 1 rows gave a negative count)", function()
    local _, grid, p = softmax.build{N = 256, target = "cpu"}
    assert.matches("softmax: grid: M = .* more blocks than a grid holds", err(grid, math.maxinteger))
    assert.matches("more blocks than a grid holds", err(grid, 1 << 40))
    assert.equal(MAX_GRID, grid(MAX_GRID * p.R))
  end)
  it("attention: scale 3.4e38 (a finite f32 past the builder's 3e38) is refused naming scale, not by 'mul'", function()
    assert.matches("attention: scale must be a finite number of f32 range", err(attention.build, {head_dim = 64, scale = 3.4e38, target = "cpu"}))
  end)
  it("attention: a head_dim whose copies do not tile the block is refused naming it (48 failed an assert)", function()
    assert.matches("attention: head_dim 48 with tile", err(attention.build, {head_dim = 48, target = "cpu"}))
    assert.matches("attention: head_dim 16", err(attention.build, {head_dim = 16, target = "cpu"}))
    attention.build{head_dim = 16, tile = {64, 64}, target = "cpu:sm_90"}
  end)
  it("a name that is not a string is refused naming the module", function()
    assert.matches("attention: name must be a string, got number", err(attention.build, {head_dim = 64, name = 5}))
    assert.matches("softmax: name must be a string, got table", err(softmax.build, {name = {}}))
  end)
end)
