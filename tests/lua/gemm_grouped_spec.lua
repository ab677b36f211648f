-- Grouped GEMM (gemm.build{grouped = true}, docs/gemm.md "Grouped GEMM"): C_g = A_g . B_g for G
-- groups of one launch, sizes and offsets in device arrays. Element by element against
-- gemm.reference (double) on the CPU targets (mma.sync, MFMA): G = 1 and 7, groups of 0, 1 and
-- 129 rows, K = 1, packed with gaps between the groups; C poisoned and the gaps checked
-- untouched; hostile arrays (negative sizes, offsets past the buffers) never leave the buffers;
-- bad input refused naming the argument; compile-only sm_90 / gfx90a where NVRTC / hipRTC load.
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local dev = ckt.device("cpu")

local RTOL = {f16 = 2 ^ -11, bf16 = 2 ^ -8, f32 = 2 ^ -22}
local function has(s, part) assert(tostring(s):find(part, 1, true), ("%q lacks %q"):format(tostring(s), part)) end

-- the groups packed one after another with `gap` elements between them
local function layout(sizes, gap)
  local offs, na, nb, nc = {}, 0, 0, 0
  for i, r in ipairs(sizes) do
    local M, N, K = math.max(r[1], 0), math.max(r[2], 0), math.max(r[3], 0)
    offs[i] = {na, nb, nc}
    na, nb, nc = na + M * K + gap, nb + K * N + gap, nc + M * N + gap
  end
  return offs, math.max(na, 1), math.max(nb, 1), math.max(nc, 1)
end

local function upload(dt, t)
  local a = ckt.array(dt, math.max(#t, 1))
  for i = 1, #t do a[i - 1] = t[i] end
  local buf = dev:alloc(dt, #a)
  buf:upload(a)
  return buf
end

local function flat(rows) local t = {}; for _, r in ipairs(rows) do for c = 1, 3 do t[#t + 1] = r[c] end end; return t end

local function run(o, sizes, opts)
  opts = opts or {}
  local k, grid, p = gemm.build(o)
  local gap = opts.gap or (p.aligned and 8 or 3)
  local offs, na, nb, nc = layout(sizes, gap)
  if opts.offsets then offs = opts.offsets end
  local A = ckt.array(p.dtype, na):random{seed = #sizes + na, lo = -1, hi = 1}
  local B = ckt.array(p.dtype, nb):random{seed = #sizes + nb, lo = -1, hi = 1}
  local C = ckt.array(p.out, nc):poison()
  local before = C:totable()
  local ba, bb, bc = dev:alloc(p.dtype, #A), dev:alloc(p.dtype, #B), dev:alloc(p.out, #C)
  ba:upload(A); bb:upload(B); bc:upload(C)
  local it = p.index_type
  local bs, bo = upload(it, flat(sizes)), upload(it, flat(offs))
  k:compile{target = o.target}:launch{grid = opts.grid or grid(sizes), A = ba, B = bb, C = bc, G = #sizes, sizes = bs, offsets = bo}
  bc:download(C)
  if opts.hostile then return C end
  local R = gemm.reference(A, B, 0, 0, 0, {a_major = p.a_major, b_major = p.b_major, out = "f32", grouped = true, sizes = sizes, offsets = offs, count = nc}):totable()
  local owner = {}
  for g, r in ipairs(sizes) do
    for i = 0, math.max(r[1], 0) * math.max(r[2], 0) - 1 do owner[offs[g][3] + i + 1] = g end
  end
  local c = C:totable()
  local what = ("%s %s%s G=%d on %s"):format(p.dtype, p.a_major, p.b_major, #sizes, o.target)
  for i = 1, #c do
    local g = owner[i]
    if g then
      local K = math.max(sizes[g][3], 0)
      assert(math.abs(c[i] - R[i]) <= RTOL[p.out] * math.abs(R[i]) + K * 2 ^ -21,
             ("%s: C[%d] (group %d) = %s, reference %s"):format(what, i - 1, g, c[i], R[i]))
    else
      assert(c[i] == before[i] or (c[i] ~= c[i] and before[i] ~= before[i]), ("%s: C[%d] outside the groups was written"):format(what, i - 1))
    end
  end
  return C
end

local SEVEN = {{129, 40, 33}, {0, 40, 33}, {1, 17, 1}, {70, 1, 20}, {33, 65, 0}, {16, 24, 129}, {5, 9, 1}}

describe("gemm.build{grouped = true} on the CPU targets", function()
  for _, t in ipairs{"cpu:sm_90", "cpu:gfx90a"} do
    it(t .. " f16 k/k, G = 1 and 7", function()
      run({target = t, grouped = true}, {{129, 40, 33}})
      run({target = t, grouped = true}, SEVEN)
    end)
    it(t .. " bf16 k/n (sm_90) or m/n (MFMA), i32 arrays, fewer blocks than tiles", function()
      run({target = t, grouped = true, dtype = "bf16", a_major = t == "cpu:sm_90" and "k" or "m", b_major = "n", index = "i32"}, SEVEN, {grid = 2})
    end)
  end
  -- sm_90a: wgmma (its emulation) with cp.async copies; element copies (the CPU default) and
  -- 16-byte ones (aligned: groups whose sizes and offsets are not multiples of 8 are skipped)
  it("cpu:sm_90a f16 k/k, G = 1 and 7, element and 16-byte copies", function()
    run({target = "cpu:sm_90a", grouped = true}, {{129, 40, 33}})
    run({target = "cpu:sm_90a", grouped = true}, SEVEN, {grid = 3})
    run({target = "cpu:sm_90a", grouped = true, aligned = true, tile = {64, 64, 64}, block = 128}, {{136, 72, 40}, {0, 8, 8}, {8, 16, 8}, {64, 128, 24}})
  end)
  it("cpu:sm_90a bf16 m/n, f32 output", function()
    run({target = "cpu:sm_90a", grouped = true, dtype = "bf16", a_major = "m", b_major = "n", out = "f32"}, {{70, 33, 20}, {1, 17, 1}, {33, 65, 0}})
  end)
  it("cpu:sm_90 m/k, f32 output", function()
    run({target = "cpu:sm_90", grouped = true, a_major = "m", out = "f32"}, {{129, 40, 33}, {0, 8, 8}, {1, 17, 1}})
  end)
  it("negative sizes are empty groups", function()
    run({target = "cpu:sm_90", grouped = true}, {{-5, 40, 33}, {20, 8, 9}, {20, -1, 9}})
  end)
  it("offsets past the buffers and negative offsets stay inside them", function()
    -- one group whose offsets lie far outside, one whose C overlaps the end: no fault, the
    -- other elements untouched (the CPU target runs with guard pages: an access past a buffer
    -- would crash the test)
    local sizes = {{40, 40, 40}, {8, 8, 8}}
    local C = run({target = "cpu:sm_90", grouped = true}, sizes,
                  {hostile = true, offsets = {{1 << 40, -(1 << 40), 1 << 45}, {0, 0, 1600 + 16 - 20}}})
    assert.is_true(#C > 0)
  end)
end)

describe("gemm grouped: bad input", function()
  local function build_err(o)
    local ok, e = pcall(gemm.build, o)
    assert.is_false(ok)
    return tostring(e)
  end
  it("options", function()
    has(build_err{target = "cpu", grouped = "yes"}, "grouped must be a boolean, got string")
    has(build_err{target = "cpu", grouped = true, index = "i16"}, "index 'i16'")
    has(build_err{target = "cpu", index = "i32"}, "index: only a grouped GEMM")
    has(build_err{target = "cpu:sm_90", grouped = true, batched = true}, "grouped and batched")
    has(build_err{target = "cpu:sm_90a", grouped = true, copy = "tma"}, "needs a tensor map per group")
  end)
  it("grid(sizes)", function()
    local _, grid = gemm.build{target = "cpu:sm_90", grouped = true}
    assert.equal(2 + 1, grid({{129, 128, 5}, {0, 3, 3}, {-1, 5, 5}, {1, 1, 1}}))
    local ok, e = pcall(grid, {}); assert.is_false(ok); has(e, "sizes holds 0 numbers")
    ok, e = pcall(grid, "x"); assert.is_false(ok); has(e, "sizes must be a table")
  end)
  it("the launch refuses G < 1 and arrays too small", function()
    local k = gemm.build{target = "cpu:sm_90", grouped = true}
    local exe = k:compile{target = "cpu:sm_90"}
    local a, b, c = dev:alloc("f16", 64), dev:alloc("f16", 64), dev:alloc("f16", 64)
    local s, o, small = dev:alloc("i64", 6), dev:alloc("i64", 6), dev:alloc("i64", 5)
    local args = {grid = 1, A = a, B = b, C = c, G = 2, sizes = s, offsets = o}
    local function err(changes)
      local x = {}
      for key, v in pairs(args) do x[key] = v end
      for key, v in pairs(changes) do x[key] = v end
      local ok, e = pcall(exe.launch, exe, x)
      assert.is_false(ok)
      return tostring(e)
    end
    has(err{G = 0}, "G must be at least 1")
    has(err{sizes = small}, "'sizes'")
    has(err{offsets = small}, "'offsets'")
  end)
end)

describe("gemm grouped compiles for the GPU targets", function()
  for _, t in ipairs{"sm_90", "sm_80", "gfx90a", "sm_90a"} do
    it(t, function()
      for _, mj in ipairs{{"k", "k"}, {"m", "n"}} do
        local k = gemm.build{target = t, grouped = true, a_major = mj[1], b_major = mj[2]}
        local ok, e = pcall(k.compile, k, {target = t, compile_only = true})
        if not ok then
          local s = tostring(e)
          if s:find("NVRTC", 1, true) and s:find("not found", 1, true) or s:find("hiprtc", 1, true) and s:find("not found", 1, true) then
            pending(("%s: %s"):format(t, s))
            return
          end
          error(s)
        end
      end
    end)
  end
end)
