-- ckt.kernels.gemm.reference: C = A . B in double precision on the CPU, the check of every GEMM
-- test (DESIGN.md 3.7 names it as gemm.reference).
local ckt = ckt or require "ckt"

-- C = A . B in double precision (then rounded to opts.out, default the dtype of A), with A and B
-- ckt.arrays stored as opts.a_major / opts.b_major say; opts.epilogue applies to the double.
return function(A, B, M, N, K, opts)
  opts = opts or {}
  local am, bm = opts.a_major or "k", opts.b_major or "k"
  if #A < M * K or #B < K * N then
    error(("gemm: reference: A holds %d and B %d elements, fewer than M*K = %d and K*N = %d"):format(#A, #B, M * K, K * N), 2)
  end
  local a, bb = A:totable(), B:totable()
  local c = ckt.array(out, {M, N})
  local f = opts.epilogue
  -- fp8 (8-bit A and B): C = scale_A . scale_B . (A . B), opts.scale_A / opts.scale_B numbers
  -- (default 1), the scaling in double before the epilogue and the rounding to out (default bf16)
  local s = (opts.scale_A or 1) * (opts.scale_B or 1)
  if s ~= 1 then local e = f; f = function(x) x = x * s; if e then return e(x) end return x end end
  local out = opts.out or ((A:dtype() == "e4m3" or A:dtype() == "e5m2") and "bf16" or A:dtype())
  local acc = {}
  for m = 0, M - 1 do
    for n = 0, N - 1 do acc[n] = 0.0 end
    for kk = 0, K - 1 do
      local x = am == "k" and a[m * K + kk + 1] or a[kk * M + m + 1]
      if x ~= 0 then
        if bm == "n" then
          local base = kk * N + 1
          for n = 0, N - 1 do acc[n] = acc[n] + x * bb[base + n] end
        else
          for n = 0, N - 1 do acc[n] = acc[n] + x * bb[n * K + kk + 1] end
        end
      end
    end
    for n = 0, N - 1 do c[m * N + n] = f and f(acc[n]) or acc[n] end
  end
  return c
end
