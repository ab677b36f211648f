-- Strided batched GEMM (gemm.build{batched = true}, DESIGN.md 3.7): C_l = A_l . B_l for l < L,
-- each operand's batch l at l x batch_stride_* elements. Element by element against
-- gemm.reference (double) on random data, C poisoned before each run and the padding between
-- C's batches checked untouched, at sizes that are not tile multiples, batch 1 and 7, padded
-- strides, every major pair, f16 and bf16, on the CPU targets (mma.sync, wgmma with cp.async
-- and bulk tensor copies, persistent, MFMA); compile-only sm_90 / sm_90a / gfx90a where NVRTC /
-- hipRTC load; bad input refused naming the argument.
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local dev = ckt.device("cpu")

local RTOL = {f16 = 2 ^ -11, bf16 = 2 ^ -8, f32 = 2 ^ -22}
local MAJORS = {{"k", "k"}, {"k", "n"}, {"m", "k"}, {"m", "n"}}

local function has(s, part) assert(tostring(s):find(part, 1, true), ("%q lacks %q"):format(tostring(s), part)) end

-- batch strides with `pad` batches' worth of padding: whole rows for a K-major operand and for C
-- (what the fold needs, docs/gemm.md), a multiple of 8 elements along an M/N-major one
local function strides(p, M, N, K, pad)
  if not pad then return M * K, K * N, M * N end
  return p.a_major == "k" and (M + 3) * K or M * K + 24, p.b_major == "k" and (N + 2) * K or K * N + 16, (M + 5) * N
end

local function run(o, M, N, K, L, pad)
  local k, grid, p = gemm.build(o)
  local sa, sb, sc = strides(p, M, N, K, pad)
  local function extent(s, n) return L > 0 and (L - 1) * s + n or 1 end
  local A = ckt.array(p.dtype, math.max(extent(sa, M * K), 1)):random{seed = M + L, lo = -1, hi = 1}
  local B = ckt.array(p.dtype, math.max(extent(sb, K * N), 1)):random{seed = N + L, lo = -1, hi = 1}
  local C = ckt.array(p.out, math.max(extent(sc, M * N), 1)):poison()
  local before = C:totable()
  local ba, bb, bc = dev:alloc(p.dtype, #A), dev:alloc(p.dtype, #B), dev:alloc(p.out, #C)
  ba:upload(A); bb:upload(B); bc:upload(C)
  k:compile{target = o.target}:launch{grid = grid(M, N, L), A = ba, B = bb, C = bc, M = M, N = N, K = K, L = L,
                                      batch_stride_A = sa, batch_stride_B = sb, batch_stride_C = sc}
  bc:download(C)
  local R = gemm.reference(A, B, M, N, K, {a_major = p.a_major, b_major = p.b_major, out = "f32", batched = true, L = L,
                                           batch_stride_A = sa, batch_stride_B = sb, batch_stride_C = sc}):totable()
  local c, rtol, atol = C:totable(), RTOL[p.out], K * 2 ^ -21
  local what = ("%s %s%s %dx%dx%d L=%d on %s (%s%s)"):format(p.dtype, p.a_major, p.b_major, M, N, K, L, o.target, p.copy, p.persistent and ", persistent" or "")
  for i = 1, #c do
    local l, r = (i - 1) // sc, (i - 1) % sc
    if l < L and r < M * N then
      assert(math.abs(c[i] - R[i]) <= rtol * math.abs(R[i]) + atol,
             ("%s: C[%d] (batch %d, row %d, column %d) = %s, reference %s"):format(what, i - 1, l, r // N, r % N, c[i], R[i]))
    else
      assert(c[i] == before[i] or (c[i] ~= c[i] and before[i] ~= before[i]), ("%s: C[%d] outside the batches was written"):format(what, i - 1))
    end
  end
end

-- a case per major pair, alternating f16 / bf16, batch 1 and 7, packed and padded strides
local function cases(target, extra, M, N, K)
  for i, mj in ipairs(MAJORS) do
    local dt = i % 2 == 1 and "f16" or "bf16"
    it(("%s %s a_major=%s b_major=%s%s"):format(target, dt, mj[1], mj[2], extra and (" " .. extra.label) or ""), function()
      local o = {target = target, dtype = dt, a_major = mj[1], b_major = mj[2], batched = true}
      for k, v in pairs(extra or {}) do if k ~= "label" then o[k] = v end end
      run(o, M, N, K, 1, false)
      run(o, M, N, K, 7, true)
    end)
  end
end

describe("gemm.build{batched = true} on the CPU targets", function()
  cases("cpu:sm_90", nil, 70, 40, 33)
  cases("cpu:gfx90a", nil, 70, 40, 33)
  cases("cpu:sm_90a", {label = "copy=cp.async", copy = "cp.async"}, 70, 40, 33)
  -- bulk copies: the tensor maps' strides need 16 bytes (M, N, K multiples of 8 where a stride)
  cases("cpu:sm_90a", {label = "copy=tma", copy = "tma", aligned = true}, 72, 40, 48)
  cases("cpu:sm_90a", {label = "copy=tma persistent", copy = "tma", aligned = true, persistent = 3}, 72, 40, 48)
  cases("cpu:sm_90", {label = "persistent", persistent = 2}, 70, 40, 33)
  -- (copy = "tma" above: C leaves by bulk tensor stores into C as (L, M, N), each batch's boxes
  -- stopped at its M rows; here the threads' stores through the whole tile's buffer)
  cases("cpu:sm_90a", {label = "copy=tma tma_store=false", copy = "tma", aligned = true, tma_store = false}, 72, 40, 48)

  it("bulk tensor stores: the default with bulk copies, 4 stages beside 64 rows of C; batch_stride_C in whole 16 bytes", function()
    local k, grid, p = gemm.build{target = "cpu:sm_90a", dtype = "f16", batched = true, aligned = true}
    assert.is_true(p.tma_store); assert.equal(4, p.stages)
    assert.is_false(gemm.plan{target = "cpu:sm_90a", dtype = "f16", batched = true, aligned = true, tma_store = false}.tma_store)
    assert.equal(3, gemm.plan{target = "cpu:sm_90a", dtype = "f16", batched = true, aligned = true, tma_store = false}.stages)
    local src = k:source("sm_90a")
    assert.truthy(src:find("bulk tensor store: lds%d+ %(128B swizzle%) %-> the 64 x 64 x 1 box of C"), "C as (L, M, N)")
    local exe = k:compile{target = "cpu:sm_90a"}
    local M, N, K, L = 72, 264, 16, 2
    local ba, bb, bc = dev:alloc("f16", L * M * K), dev:alloc("f16", L * K * N), dev:alloc("f16", L * M * N + 64)
    local ok, e = pcall(exe.launch, exe, {grid = grid(M, N, L), A = ba, B = bb, C = bc, M = M, N = N, K = K, L = L, batch_stride_A = M * K, batch_stride_B = K * N, batch_stride_C = M * N + 4})
    assert.is_false(ok); has(tostring(e), "batch_stride_C")
  end)

  it("L = 0 runs nothing; zero-sized batches", function()
    run({target = "cpu:sm_90", batched = true}, 70, 40, 33, 0, true)
    run({target = "cpu:sm_90", batched = true}, 0, 40, 33, 3, true)
    run({target = "cpu:sm_90", batched = true}, 17, 9, 0, 3, true) -- K = 0: C = 0
  end)

  it("f32 output", function() run({target = "cpu:sm_90", batched = true, out = "f32", dtype = "bf16"}, 33, 20, 17, 7, true) end)
end)

describe("gemm batched: bad input", function()
  local function build_err(o)
    local ok, e = pcall(gemm.build, o)
    assert.is_false(ok)
    return tostring(e)
  end
  it("batched must be a boolean", function()
    has(build_err{target = "cpu", batched = "yes"}, "batched must be a boolean, got string")
    has(build_err{target = "cpu", batched = 1}, "batched must be a boolean, got number")
  end)
  it("grid(M, N, L) checks L", function()
    local _, grid = gemm.build{target = "cpu:sm_90", batched = true}
    assert.equal(1 * 1 * 7, grid(70, 40, 7))
    assert.equal(1, grid(70, 40, 0))
    local ok, e = pcall(grid, 70, 40, -1); assert.is_false(ok); has(e, "L must be a non-negative integer, got -1")
    ok, e = pcall(grid, 70, 40, "x"); assert.is_false(ok); has(e, "L must be a non-negative integer, got string")
    ok, e = pcall(grid, 1 << 20, 1 << 20, 1 << 20); assert.is_false(ok); has(e, "more than a grid holds")
  end)
  it("the launch refuses buffers too small for the last batch, negative strides and L, strides that are not whole rows", function()
    local k, grid = gemm.build{target = "cpu:sm_90", batched = true}
    local exe = k:compile{target = "cpu:sm_90"}
    local M, N, K, L = 20, 16, 8, 3
    local ba, bb, bc = dev:alloc("f16", L * M * K), dev:alloc("f16", L * K * N), dev:alloc("f16", L * M * N)
    local small = dev:alloc("f16", L * M * N - 1)
    local args = {grid = grid(M, N, L), A = ba, B = bb, C = bc, M = M, N = N, K = K, L = L, batch_stride_A = M * K, batch_stride_B = K * N, batch_stride_C = M * N}
    local function err(changes)
      local a = {}
      for key, v in pairs(args) do a[key] = v end
      for key, v in pairs(changes) do a[key] = v end
      local ok, e = pcall(exe.launch, exe, a)
      assert.is_false(ok)
      return tostring(e)
    end
    assert.is_true(pcall(exe.launch, exe, args))
    has(err{C = small}, "'C'")
    has(err{batch_stride_A = M * K + 1}, "A") -- not a whole number of K-major rows
    has(err{batch_stride_C = M * N + 3}, "C")
    has(err{batch_stride_B = -K * N}, "batch_stride_B")
    has(err{L = -1, grid = 1}, "L = -1")
  end)
end)

describe("gemm batched compiles for the GPU targets", function()
  for _, t in ipairs{{"sm_90", {}}, {"sm_90a", {copy = "cp.async"}}, {"sm_90a", {}}, {"sm_90a", {persistent = true}}, {"gfx90a", {}}} do
    it(("%s %s"):format(t[1], t[2].copy or (t[2].persistent and "persistent" or "default")), function()
      for _, mj in ipairs(MAJORS) do
        local o = {target = t[1], a_major = mj[1], b_major = mj[2], batched = true}
        for key, v in pairs(t[2]) do o[key] = v end
        local k = gemm.build(o)
        local ok, e = pcall(k.compile, k, {target = t[1], compile_only = true})
        if not ok then
          local s = tostring(e)
          -- only a missing compiler library skips
          if s:find("NVRTC", 1, true) and s:find("not found", 1, true) or s:find("hiprtc", 1, true) and s:find("not found", 1, true) then
            pending(("%s: %s"):format(t[1], s))
            return
          end
          error(s)
        end
      end
    end)
  end
end)
