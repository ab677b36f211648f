-- What the library GEMM's specs of the schedules (clusters, split-K, the persistent kernel) share:
-- a problem's random data and double-precision reference on the CPU device, the comparison's
-- tolerance, the refusal of a build naming its reason, and the sm_90a compile without spills.
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
local assert = require "luassert"
local G = {cpu = ckt.device("cpu")}

-- A and B random in [-1, 1] (seeds from the sizes) for the build's majors, the reference C (f32,
-- with the epilogue), and buffers on the CPU device holding A and B
function G.problem(o, p, M, N, K)
  local dt = o.dtype
  local A = ckt.array(dt, math.max(1, M * K)):random{seed = M + 3 * N, lo = -1, hi = 1}
  local B = ckt.array(dt, math.max(1, K * N)):random{seed = K + 5, lo = -1, hi = 1}
  local R = gemm.reference(A, B, M, N, K, {a_major = p.a_major, b_major = p.b_major, out = "f32", epilogue = o.epilogue})
  local ba, bb = G.cpu:alloc(dt, #A), G.cpu:alloc(dt, #B)
  ba:upload(A); bb:upload(B)
  return R, ba, bb
end

-- C against the reference: 2^-20 relative for an f32 output, 2^-8 for 16-bit, K 2^-20 absolute
function G.compare(C, R, p, K)
  return C:compare(R, {rtol = p.out == "f32" and 2 ^ -20 or 2 ^ -8, atol = K * 2 ^ -20})
end

-- gemm.build(o) fails, and its message holds `text`
function G.refused(o, text)
  local ok, e = pcall(gemm.build, o)
  assert.is_false(ok)
  assert.truthy(tostring(e):find(text, 1, true), tostring(e))
end

-- k compiles for sm_90a without spilling; nil (printed as skipped) where NVRTC is not installed
function G.compiles_clean(k)
  local ok, exe = pcall(k.compile, k, {target = "sm_90a", compile_only = true})
  if not ok and tostring(exe):find("NVRTC not found (", 1, true) then
    print("SKIPPED the sm_90a compile: " .. tostring(exe))
    return nil
  end
  assert.is_true(ok, tostring(exe))
  assert.equal(0, exe:resources().spill_stores or 0)
  return exe
end

return G
