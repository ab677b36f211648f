-- stmatrix: where CUDA on sm_90 and later stores an MMA's accumulators to a 16-bit LDS tile as
-- 8x8 matrices (a warp's instruction per 8 values a thread), and where it must not. The
-- emitter checks every thread's every value against the instruction's layout before it uses it;
-- these specs pin which stores take it, the reasons given where they do not, and that the same
-- kernel is right on the CPU target (element stores). The GPU runs them in
-- tests/gpu/stmatrix_check.lua.
local ckt = require "ckt"
local stm = require "stmatrix_kernel"
local gemm = require "ckt.kernels.gemm"

local function reason(src) return src:match("no stmatrix: ([^*]-) %*/") end

describe("stmatrix stores of accumulators to LDS", function()
  it("takes the fragments' stores on sm_90 and sm_90a, a group of 8 values an instruction", function()
    for _, v in ipairs(stm.variants) do
      for _, dt in ipairs{"f16", "bf16"} do
        local src = stm.build(dt, v.o):source("sm_90")
        assert.equal(v.stores, stm.count(src), v.name)
        assert.truthy(src:find("stmatrix.x4: store to LDS", 1, true))
        assert.truthy(src:find(dt == "f16" and "ckt_f16x2(r" or "ckt_bf16x2(r", 1, true))
        assert.is_nil(reason(src))
      end
    end
    -- the library GEMMs' epilogues: 128 accumulators a thread (sm_90a) in 16 instructions
    local g = gemm.build{dtype = "f16", target = "sm_90a"}:source("sm_90a")
    assert.equal(16, stm.count(g))
    assert.truthy(stm.count(gemm.build{dtype = "bf16", target = "sm_90"}:source("sm_90")) > 0)
  end)

  it("leaves targets without it to element stores", function()
    for _, t in ipairs{"sm_80", "cpu:sm_90", "cpu:sm_90a"} do
      local src = stm.build("f16", {}):source(t)
      assert.equal(0, stm.count(src), t)
      assert.is_nil(reason(src), t)
    end
  end)

  it("says why where the rows or the branch forbid it", function()
    -- rows 136 bytes apart: not 16-byte aligned
    local odd = stm.build("f16", {ldc = 68}):source("sm_90")
    assert.equal(0, stm.count(odd))
    assert.equal("the values are not 8x8 matrices of rows in LDS", reason(odd))
    -- a branch that may split a warp (every lane must execute the instruction)
    local split = stm.build("f16", {cond = function(t) return ckt.lt(t, 40) end}):source("sm_90")
    assert.equal(0, stm.count(split))
    assert.equal("a branch may split a warp", reason(split))
    -- copies through registers (16-byte vectors a thread) are not fragments: no reason given
    assert.is_nil(reason(stm.build("f16", {}):source("sm_90"):match("^(.-)line %d+: stmatrix")))
  end)

  it("the same kernel is right on the CPU target", function()
    local cpu = ckt.device("cpu")
    local M, N, K = 72, 80, 40
    for _, v in ipairs(stm.variants) do
      local A = ckt.array("bf16", M * K):random{seed = 1, lo = -1, hi = 1}
      local B = ckt.array("bf16", N * K):random{seed = 2, lo = -1, hi = 1}
      local R = gemm.reference(A, B, M, N, K, {a_major = "k", b_major = "k", out = "f32"})
      local exe = stm.build("bf16", v.o):compile{target = "cpu:sm_90"}
      local C = ckt.array("bf16", M * N):poison()
      local ba, bb, bc = cpu:alloc("bf16", #A), cpu:alloc("bf16", #B), cpu:alloc("bf16", #C)
      ba:upload(A); bb:upload(B); bc:upload(C)
      exe:launch{grid = stm.grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K}
      bc:download(C)
      local ok, err = C:compare(R, {rtol = 2 ^ -7, atol = K * 2 ^ -20})
      assert.truthy(ok, v.name .. ": " .. tostring(err))
    end
  end)
end)
