-- ckt.kernels.gemm.reference: C = A . B in double precision on the CPU, the check of every GEMM
-- test (DESIGN.md 3.7 names it as gemm.reference).
local ckt = ckt or require "ckt"

-- batch at element offsets (oa, ob, oc) of the tables a, bb and the array c
local function product(a, bb, c, M, N, K, am, bm, f, oa, ob, oc)
  local acc = {}
  for m = 0, M - 1 do
    for n = 0, N - 1 do acc[n] = 0.0 end
    for kk = 0, K - 1 do
      local x = am == "k" and a[oa + m * K + kk + 1] or a[oa + kk * M + m + 1]
      if x ~= 0 then
        if bm == "n" then
          local base = ob + kk * N + 1
          for n = 0, N - 1 do acc[n] = acc[n] + x * bb[base + n] end
        else
          for n = 0, N - 1 do acc[n] = acc[n] + x * bb[ob + n * K + kk + 1] end
        end
      end
    end
    for n = 0, N - 1 do c[oc + m * N + n] = f and f(acc[n]) or acc[n] end
  end
end

-- C = A . B in double precision (then rounded to opts.out, default the dtype of A), with A and B
-- ckt.arrays stored as opts.a_major / opts.b_major say; opts.epilogue applies to the double.
-- Batched (opts.batched = true): C_l = A_l . B_l for l < opts.L, batch l of each at l times
-- opts.batch_stride_A / _B / _C elements (default: packed, M*K, K*N, M*N); C holds
-- (L - 1) * batch_stride_C + M * N elements, zero between the batches.
return function(A, B, M, N, K, opts)
  opts = opts or {}
  local am, bm = opts.a_major or "k", opts.b_major or "k"
  local f = opts.epilogue
  -- fp8 (8-bit A and B): C = scale_A . scale_B . (A . B), opts.scale_A / opts.scale_B numbers
  -- (default 1), the scaling in double before the epilogue and the rounding to out (default bf16)
  local s = (opts.scale_A or 1) * (opts.scale_B or 1)
  if s ~= 1 then local e = f; f = function(x) x = x * s; if e then return e(x) end return x end end
  local out = opts.out or ((A:dtype() == "e4m3" or A:dtype() == "e5m2") and "bf16" or A:dtype())
  if opts.batched then
    local L = opts.L or 1
    local sa, sb, sc = opts.batch_stride_A or M * K, opts.batch_stride_B or K * N, opts.batch_stride_C or M * N
    for name, v in pairs{L = L, batch_stride_A = sa, batch_stride_B = sb, batch_stride_C = sc} do
      if math.type(v) ~= "integer" or v < 0 then error(("gemm: reference: %s must be a non-negative integer, got %s"):format(name, tostring(v)), 2) end
    end
    local na, nb = L > 0 and (L - 1) * sa + M * K or 0, L > 0 and (L - 1) * sb + K * N or 0
    if #A < na or #B < nb then
      error(("gemm: reference: A holds %d and B %d elements, fewer than the %d and %d of %d batches"):format(#A, #B, na, nb, L), 2)
    end
    local a, bb = A:totable(), B:totable()
    local c = ckt.array(out, math.max(L > 0 and (L - 1) * sc + M * N or 0, 1))
    for i = 0, #c - 1 do c[i] = 0 end
    for l = 0, L - 1 do product(a, bb, c, M, N, K, am, bm, f, l * sa, l * sb, l * sc) end
    return c
  end
  if #A < M * K or #B < K * N then
    error(("gemm: reference: A holds %d and B %d elements, fewer than M*K = %d and K*N = %d"):format(#A, #B, M * K, K * N), 2)
  end
  local c = ckt.array(out, {M, N})
  product(A:totable(), B:totable(), c, M, N, K, am, bm, f, 0, 0, 0)
  return c
end
