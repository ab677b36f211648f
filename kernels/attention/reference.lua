-- ckt.kernels.attention.reference: the attention forward in double precision on the CPU, the check
-- of every attention test (like gemm.reference).
--   O, LSE = attention.reference(Q, K, V, opts)
-- Q, K, V: ckt.arrays (or Lua tables, 0-based values at 1-based indices as totable gives them);
-- opts: B, H, H_kv (default H), S_q, S_k, head_dim, causal, lengths (per-batch key lengths: a
-- table or an i32 ckt.array; keys >= min(lengths[b], S_k) masked), scale (default
-- 1/sqrt(head_dim)), layout ("bhsd" | "bshd") or strides = {q = {sb, sh, ss}, k =, v =, o =}.
-- O (f64, laid out as the kernel's O: the layout's or strides.o's offsets) and LSE (f64, B x H x
-- S_q contiguous); a row without any visible key gets O = 0 and LSE = -inf.
local ckt = ckt or require "ckt"

local function need(opts, name)
  local v = opts[name]
  if math.type(v) ~= "integer" or v < 1 then error(("attention: reference: %s must be a positive integer, got %s"):format(name, tostring(v)), 3) end
  return v
end

return function(Q, K, V, opts)
  opts = opts or {}
  local B, H, S_q, S_k, D = need(opts, "B"), need(opts, "H"), need(opts, "S_q"), need(opts, "S_k"), need(opts, "head_dim")
  local H_kv = opts.H_kv or H
  if math.type(H_kv) ~= "integer" or H_kv < 1 or H % H_kv ~= 0 then error("attention: reference: H must be a multiple of H_kv", 2) end
  local scale = opts.scale or 1 / math.sqrt(D)
  local function strides(name, heads, S)
    if opts.strides then return table.unpack(opts.strides[name]) end
    if opts.layout == "bshd" then return S * heads * D, D, heads * D end
    return heads * S * D, S * D, D
  end
  local qb, qh, qs = strides("q", H, S_q)
  local kb, kh, ks = strides("k", H_kv, S_k)
  local vb, vh, vs = strides("v", H_kv, S_k)
  local ob, oh, os = strides("o", H, S_q)
  local q = type(Q) == "table" and Q or Q:totable()
  local k = type(K) == "table" and K or K:totable()
  local v = type(V) == "table" and V or V:totable()
  local osize = (B - 1) * ob + (H - 1) * oh + (S_q - 1) * os + D
  local O = ckt.array("f64", osize)
  local LSE = ckt.array("f64", B * H * S_q)
  local group = H // H_kv
  local s, acc = {}, {}
  for bi = 0, B - 1 do
    local n = S_k
    if opts.lengths then n = math.min(S_k, math.max(0, opts.lengths[type(opts.lengths) == "table" and bi + 1 or bi])) end
    for hi = 0, H - 1 do
      local hk = hi // group
      for i = 0, S_q - 1 do
        local last = n - 1
        if opts.causal then last = math.min(last, i + S_k - S_q) end
        local qo = bi * qb + hi * qh + i * qs + 1
        local mx = -math.huge
        for j = 0, last do
          local ko, d = bi * kb + hk * kh + j * ks + 1, 0.0
          for x = 0, D - 1 do d = d + q[qo + x] * k[ko + x] end
          d = d * scale
          s[j] = d
          if d > mx then mx = d end
        end
        for x = 0, D - 1 do acc[x] = 0.0 end
        local sum = 0.0
        for j = 0, last do
          local p = math.exp(s[j] - mx)
          sum = sum + p
          local vo = bi * vb + hk * vh + j * vs + 1
          for x = 0, D - 1 do acc[x] = acc[x] + p * v[vo + x] end
        end
        local oo = bi * ob + hi * oh + i * os
        for x = 0, D - 1 do O[oo + x] = sum > 0 and acc[x] / sum or 0.0 end
        LSE[(bi * H + hi) * S_q + i] = sum > 0 and mx + math.log(sum) or -math.huge
      end
    end
  end
  return O, LSE
end
