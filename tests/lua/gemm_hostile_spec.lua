-- The library GEMM under hostile input (issue 30): K = 0 writes C (as zeros, or the epilogue of
-- zero) on every CPU target and copy path; every numeric option that reaches generated arithmetic
-- is bounded (no SIGFPE at launch), booleans are booleans, and grid() answers zero-sized,
-- overflowing and non-numeric sizes clearly.
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local cpu = ckt.device("cpu")

local function plan_err(o)
  local ok, e = pcall(gemm.plan, o)
  assert.is_false(ok, "accepted: " .. tostring(e))
  return tostring(e)
end
local function has(s, part) assert(s:find(part, 1, true), ("%q does not contain %q"):format(s, part)) end

-- launch o at M x N x K with C poisoned first; returns C
local function run(o, M, N, K)
  local k, grid, p = gemm.build(o)
  local e = k:compile{target = o.target}
  local A = ckt.array(p.dtype, math.max(1, M * K)):random{seed = 5, lo = -1, hi = 1}
  local B = ckt.array(p.dtype, math.max(1, K * N)):random{seed = 7, lo = -1, hi = 1}
  local C = ckt.array(p.out, math.max(1, M * N)):fill(7)
  local ba, bb, bc = cpu:alloc(p.dtype, #A), cpu:alloc(p.dtype, #B), cpu:alloc(p.out, #C)
  ba:upload(A); bb:upload(B); bc:upload(C)
  e:launch{grid = grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K}
  bc:download(C)
  return C, p
end

describe("gemm with K = 0", function()
  local cases = {
    {target = "cpu", dtype = "f16"},
    {target = "cpu", dtype = "f32", a_major = "m", b_major = "n"},
    {target = "cpu:gfx90a", dtype = "bf16", out = "f32"},
    {target = "cpu:sm_90", dtype = "f16", persistent = 2},
    {target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, copy = "cp.async"},
    {target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, copy = "tma", aligned = true},
    {target = "cpu:sm_90a", dtype = "bf16", tile = {64, 64, 32}, block = 128, copy = "tma", aligned = true, persistent = 2},
    {target = "cpu:sm_90a", dtype = "f16", tile = {64, 64, 32}, block = 128, persistent = 3},
  }
  for _, o in ipairs(cases) do
    it(("writes C as zeros on %s (copy %s, persistent %s)"):format(o.target, tostring(o.copy), tostring(o.persistent)), function()
      local C = run(o, 72, 136, 0)
      for i = 0, #C - 1 do assert(C[i] == 0, ("C[%d] = %s, not 0"):format(i, tostring(C[i]))) end
    end)
  end
  it("applies the epilogue to zero", function()
    local C = run({target = "cpu", dtype = "f32", epilogue = function(x) return x + 2 end}, 40, 24, 0)
    for i = 0, #C - 1 do assert.equal(2, C[i]) end
  end)
end)

describe("gemm option bounds", function()
  it("refuses a group, tile, k_pack or persistent count that could overflow the generated arithmetic", function()
    has(plan_err{target = "cpu", group = 1 << 62}, "group")
    has(plan_err{target = "cpu", group = 1 << 62}, "1..65536")
    has(plan_err{target = "cpu", group = math.mininteger}, "group")
    has(plan_err{target = "cpu", tile = {1 << 40, 128, 32}}, "tile[1]")
    has(plan_err{target = "cpu", tile = {128, 1 << 62, 32}}, "tile[2]")
    has(plan_err{target = "cpu", tile = {128, 128, 1 << 33}}, "tile[3]")
    has(plan_err{target = "cpu", k_pack = 1 << 62}, "k_pack")
    has(plan_err{target = "cpu:sm_90", persistent = 1 << 62}, "persistent")
    has(plan_err{target = "cpu:sm_90", persistent = 2.5}, "persistent")
    has(plan_err{target = "cpu", block = 1 << 62}, "block")
    has(plan_err{target = "cpu", stages = 1 << 62}, "stages")
    has(plan_err{target = "cpu:sm_90a", mma_pending = 1 << 62}, "mma_pending")
  end)
  it("random hostile values of every numeric option end in a plan or an error naming the option", function()
    local hostile = {0, -1, 1, 3, 7, 64, 1000, 1 << 20, 1 << 31, 1 << 32, 1 << 62, math.maxinteger, math.mininteger, 2 ^ 62, 0.5, -0.0, 1 / 0, 0 / 0, "8", true}
    local rng = 12345
    local function pick()
      rng = (rng * 1103515245 + 12345) % 2147483648
      return hostile[rng % #hostile + 1]
    end
    for _ = 1, 60 do
      for _, name in ipairs{"group", "block", "stages", "k_pack", "persistent", "mma_pending", "tile"} do
        local v = pick()
        -- (the plain cpu target and several tiles a side: group = 2^62 over 4 tile columns wrapped
        -- to 0 there; cpu:sm_90a at one tile, as this loop was, launched fine before the fix)
        local target = (rng >> 4) % 2 == 0 and "cpu" or "cpu:sm_90a"
        local o = {target = target, dtype = "f16", tile = {64, 64, 32}, block = 128}
        if name == "tile" then o.tile = {64, v, 32} else o[name] = v end
        local ok, k, grid = pcall(gemm.build, o)
        if ok then
          -- accepted: it must also launch (no SIGFPE) at a small size
          local e = k:compile{target = target}
          local ba, bb, bc = cpu:alloc("f16", 256 * 32), cpu:alloc("f16", 32 * 256), cpu:alloc("f16", 256 * 256)
          e:launch{grid = grid(256, 256), A = ba, B = bb, C = bc, M = 256, N = 256, K = 32}
        else
          has(tostring(k), name == "tile" and "tile" or name)
        end
      end
    end
  end)
  it("booleans must be booleans", function()
    has(plan_err{target = "cpu", aligned = "yes"}, "aligned must be a boolean, got string")
    has(plan_err{target = "cpu", swizzle = "no"}, "swizzle must be a boolean, got string")
    has(plan_err{target = "cpu", aligned = 1}, "aligned must be a boolean, got number")
    has(plan_err{target = "cpu:sm_90a", persistent = "yes"}, "persistent")
    local _, _, p = gemm.build{target = "cpu", aligned = false, swizzle = false}
    assert.is_false(p.aligned)
  end)
end)

describe("gemm grid()", function()
  local _, grid = gemm.build{target = "cpu", dtype = "f16"}
  local _, pgrid = gemm.build{target = "cpu:sm_90", dtype = "f16", persistent = 4}
  it("gives a launchable grid for a zero-sized problem, which then runs no blocks", function()
    assert.equal(1, grid(0, 8)); assert.equal(1, grid(8, 0)); assert.equal(1, grid(0, 0))
    assert.equal(1, pgrid(0, 8))
    local k, g = gemm.build{target = "cpu", dtype = "f32", tile = {32, 32, 16}, block = 64}
    local e = k:compile{target = "cpu"}
    local ba, bb, bc = cpu:alloc("f32", 4), cpu:alloc("f32", 32), cpu:alloc("f32", 4)
    e:launch{grid = g(0, 8), A = ba, B = bb, C = bc, M = 0, N = 8, K = 4}
  end)
  it("refuses sizes whose tile count overflows, naming the argument", function()
    local ok, e = pcall(grid, 1 << 40, 1 << 40)
    assert.is_false(ok); has(tostring(e), "grid")
    ok, e = pcall(grid, math.maxinteger, 1)
    assert.is_false(ok); has(tostring(e), "M")
    ok, e = pcall(grid, -1, 8)
    assert.is_false(ok); has(tostring(e), "grid: M must be a non-negative integer, got -1")
  end)
  it("refuses sizes that are not integers with a clear error", function()
    local ok, e = pcall(grid, "a", 8)
    assert.is_false(ok); has(tostring(e), "grid: M must be a non-negative integer, got string")
    ok, e = pcall(grid, 8, 2.5)
    assert.is_false(ok); has(tostring(e), "grid: N must be a non-negative integer, got 2.5")
    ok, e = pcall(grid, 8)
    assert.is_false(ok); has(tostring(e), "grid: N must be")
    assert.equal(4, grid(256.0, 256)) -- an integral float is an integer
  end)
end)
