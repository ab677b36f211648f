-- The sm_90a library GEMM with aligned = false at an odd K (element copies), element by element
-- against the double reference, beside cuBLAS against the same reference: which of the two the
-- large-size "valid vs cuBLAS" comparison of bench/gemm.lua disagreed with at 4097^3.
--   ckt-lua tests/gpu/gemm_odd_check.lua [M=192] [N=160] [K=4097]
package.path = "bench/lib/?.lua;" .. package.path
local bench = require "measure"
local gemm = require "ckt.kernels.gemm"
local M, N, K = tonumber(arg[1] or "192"), tonumber(arg[2] or "160"), tonumber(arg[3] or "4097")
local dev = ckt.device("cuda")
local cublas = bench.open_cublas(dev)
local bad = 0
print("| dtype | majors | ckt max err vs double | cuBLAS max err vs double | ckt within tolerance |")
print("|---|---|---|---|---|")
for _, dt in ipairs{"f16", "bf16"} do for _, mj in ipairs{{"k", "k"}, {"m", "k"}} do
  local ba, A = bench.random_buffer(dev, dt, M * K, 3)
  local bb, B = bench.random_buffer(dev, dt, K * N, 4)
  local ref = gemm.reference(A, B, M, N, K, {a_major = mj[1], b_major = mj[2], out = "f32"})
  local k, grid = gemm.build{dtype = dt, a_major = mj[1], b_major = mj[2], target = "sm_90a", aligned = false}
  local exe = k:compile{target = "sm_90a"}
  local bc = dev:alloc(dt, M * N)
  local C = ckt.array(dt, M * N)
  for i = 0, M * N - 1 do C[i] = 0 / 0 end
  bc:upload(C)
  exe:launch{grid = grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K}
  dev:synchronize()
  bc:download(C)
  local tol = {rtol = dt == "f16" and 2 ^ -10 or 2 ^ -7, atol = K * 2 ^ -20}
  local ok, err = C:compare(ref, tol)
  local cerr = "-"
  if cublas then
    local bref = dev:alloc(dt, M * N)
    cublas:gemm{dtype = dt, out = dt, a_major = mj[1], b_major = mj[2], M = M, N = N, K = K, A = ba:address(), B = bb:address(), C = bref:address(), reps = 1}
    local R = ckt.array(dt, M * N); bref:download(R)
    cerr = select(2, R:compare(ref, tol))
  end
  if not ok then bad = bad + 1 end
  print(("| %s | %s%s | %s | %s | %s |"):format(dt, mj[1], mj[2], tostring(err), tostring(cerr), ok and "yes" or "NO"))
end end
if bad > 0 then error(("%d check(s) failed"):format(bad)) end
