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

-- fp8 with scales = "block" (A and B K-major): C(m, n) = sum over K blocks kb of scale_A(m, kb) .
-- scale_B(n // 128, kb) . (the block's sum of A(m, k) B(n, k)), scale_A's element (m, kb) at
-- kb M + m and scale_B's (nb, kb) at nb ceil(K / 128) + kb (ckt.arrays or tables from index 0)
local function block_scaled(A, B, M, N, K, opts, f, out)
  local KB = (K + 127) // 128
  local function values(x, name, n)
    if type(x) ~= "table" and type(x) ~= "userdata" then error(("gemm: reference: scales = \"block\" needs %s, an array of %d scales"):format(name, n), 3) end
    if #x < n then error(("gemm: reference: %s holds %d scales, fewer than the %d of these sizes"):format(name, #x, n), 3) end
    local t = {}
    for i = 0, n - 1 do t[i] = x[i] end
    return t
  end
  local sa, sb = values(opts.scale_A, "scale_A", KB * M), values(opts.scale_B, "scale_B", ((N + 127) // 128) * KB)
  local a, bb = A:totable(), B:totable()
  local c = ckt.array(out, {M, N})
  for m = 0, M - 1 do
    for n = 0, N - 1 do
      local sum, nb = 0.0, n // 128
      for kb = 0, KB - 1 do
        local part = 0.0
        for kk = kb * 128, math.min(K, kb * 128 + 128) - 1 do part = part + a[m * K + kk + 1] * bb[n * K + kk + 1] end
        sum = sum + part * sa[kb * M + m] * sb[nb * KB + kb]
      end
      c[m * N + n] = f and f(sum) or sum
    end
  end
  return c
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
  -- (default 1), the scaling in double before the epilogue and the rounding to out (default bf16);
  -- opts.scales = "block": the block scales (block_scaled above)
  if opts.scales == "block" then
    if #A < M * K or #B < N * K then error(("gemm: reference: A holds %d and B %d elements, fewer than M*K = %d and N*K = %d"):format(#A, #B, M * K, N * K), 2) end
    return block_scaled(A, B, M, N, K, opts, f, opts.out or "bf16")
  end
  local s = (opts.scale_A or 1) * (opts.scale_B or 1)
  if s ~= 1 then local e = f; f = function(x) x = x * s; if e then return e(x) end return x end end
  local out = opts.out or ((A:dtype() == "e4m3" or A:dtype() == "e5m2") and "bf16" or A:dtype())
  -- grouped (opts.grouped = true; M, N, K unused): C_g = A_g . B_g for each row {M, N, K} of
  -- opts.sizes and {oa, ob, oc} of opts.offsets (element offsets into A, B and C; the kernel's
  -- layout: each group row-major by the majors, leading dimensions its own sizes). A negative
  -- size is an empty group. C holds opts.count elements (default: up to the last group's end),
  -- zero outside the groups.
  if opts.grouped then
    local sz, of = opts.sizes, opts.offsets
    if type(sz) ~= "table" or type(of) ~= "table" or #sz ~= #of or #sz < 1 then
      error("gemm: reference: grouped needs sizes and offsets, tables of as many {M, N, K} and {oa, ob, oc} rows (at least one)", 2)
    end
    local n, a, bb = opts.count or 1, A:totable(), B:totable()
    for g, r in ipairs(sz) do
      local Mg, Ng, Kg = math.max(r[1], 0), math.max(r[2], 0), math.max(r[3], 0)
      local o = of[g]
      if o[1] + Mg * Kg > #A or o[2] + Kg * Ng > #B then error(("gemm: reference: group %d leaves A or B"):format(g), 2) end
      if not opts.count then n = math.max(n, o[3] + Mg * Ng) end
    end
    local c = ckt.array(out, n)
    for i = 0, n - 1 do c[i] = 0 end
    for g, r in ipairs(sz) do
      local Mg, Ng, Kg = math.max(r[1], 0), math.max(r[2], 0), math.max(r[3], 0)
      product(a, bb, c, Mg, Ng, Kg, am, bm, f, of[g][1], of[g][2], of[g][3])
    end
    return c
  end
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
