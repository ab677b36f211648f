-- The attention forward (flash attention) step by step, as a ckt script: O = softmax(Q Kᵀ / sqrt(D)) V
-- for one head's rows, with the log-sum-exp of every row. Two blockwise GEMMs with an online
-- softmax between them, held in the MMA accumulator's own distribution. The library kernel
-- (require "ckt.kernels.attention") is the same structure with causal masks, GQA, per-batch key
-- lengths and strides; this script builds a plain one (no mask but the key edge) and shows:
--   * the distributions of the two accumulators (S = Q Kᵀ and O = P V),
--   * where each row statistic lives: b:reduce(S, "max", {dim = 1}) gives every lane that holds
--     a row of S the row's maximum (in S's distribution), and likewise the row sum,
--   * how a statistic moves to O's distribution (an LDS buffer broadcast along its columns).
-- Run: ckt-lua scripts/attention.lua   (cpu = cpu:gfx90a emulates MFMA; --target cpu:sm_90 mma.sync)
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local demo = require "kernel_demo"
local attention = require "ckt.kernels.attention"

local DataType, D, BR, BC = "f16", 64, 64, 64

-- the matrix instruction per vendor: every wave takes 16 rows of the 64-row query tile
local function config(target)
  if ckt.target(target).vendor == "amd" then
    local t = function(n) return ckt.gemm_traits{instr = "mfma_f32_16x16x16f16", m_per_wave = 1, n_per_wave = n // 16, k_pack = 8} end
    return {threads = 256, S = t(BC), O = t(D)}
  end
  local t = function(n) return ckt.gemm_traits{instr = "mma_m16n8k16_f16", m_per_wave = 1, n_per_wave = n // 8, k_pack = 2} end
  return {threads = 128, S = t(BC), O = t(D)}
end

local function build(target)
  local cfg = config(target)
  return ckt.kernel{name = "flash_fwd", block = cfg.threads, build = function(b)
    -- Step 1: parameters. Q, O: (rows = heads x S_q) x D; K, V: (heads x S_k) x D; LSE per row.
    local Q, K = b:pointer("Q", DataType, {const = true}), b:pointer("K", DataType, {const = true})
    local V, O = b:pointer("V", DataType, {const = true}), b:pointer("O", DataType)
    local LSE = b:pointer("LSE", "f32")
    local Hn, S_q, S_k = b:size("heads"), b:size("S_q"), b:size("S_k")
    b:require(ckt.gt(S_k, 0), "S_k must be positive")
    local gq = ckt.tensor(Q, DataType, {shape = {Hn, S_q, D}}, {pad = true})
    local gk = ckt.tensor(K, DataType, {shape = {Hn, S_k, D}}, {pad = true})
    local gv = ckt.tensor(V, DataType, {shape = {Hn, S_k, D}}, {pad = true})
    local go = ckt.tensor(O, DataType, {shape = {Hn, S_q, D}}, {pad = true})
    local gl = ckt.tensor(LSE, "f32", {shape = {Hn, S_q}}, {pad = true})

    -- Step 2: LDS. Q stays for every key tile; K is the N x K operand of S = Q Kᵀ as stored; V is
    -- the N x K operand of O = P V read transposed (layout (D, BC):(1, D): V's rows contiguous);
    -- P is S rounded to f16; sStat holds one f32 per row, read back along any number of columns
    -- (stride 0); sCol holds each column's index (stride 0 along the rows).
    local sQ = ckt.tensor("lds", DataType, ckt.layout({BR, D}, {D, 1}))
    local sK = ckt.tensor("lds", DataType, ckt.layout({BC, D}, {D, 1}))
    local sV = ckt.tensor("lds", DataType, ckt.layout({D, BC}, {1, D}))
    local sP = ckt.tensor("lds", DataType, ckt.layout({BR, BC}, {BC, 1}))
    local sStat = ckt.tensor("lds", "f32", ckt.layout({BR, math.max(BC, D)}, {1, 0}))
    local sCol = ckt.tensor("lds", "i32", ckt.layout({BR, BC}, {0, 1}))

    -- Step 3: the block's head and query tile; Q's tile into LDS (16-byte vectors along D)
    local nq = b:let((S_q + BR - 1) // BR, "nq")
    local hd, q0 = b:let(b:block_id() // nq, "hd"), b:let((b:block_id() % nq) * BR, "q0")
    local tid, cols = b:thread_id(), D // 8
    local thr3 = ckt.layout({1, cfg.threads // cols, cols}, {cfg.threads, cols, 1})
    local thr2 = ckt.layout({cfg.threads // cols, cols}, {cols, 1})
    local function vec(dim) return {scalar_per_vector = 8, vector_dim = dim} end
    b:copy(ckt.local_partition(ckt.tile_window(sQ, {BR, D}, {0, 0}), thr2, tid, vec(1)),
           ckt.local_partition(ckt.tile_window(gq, {1, BR, D}, {hd, q0, 0}), thr3, tid, vec(2)))
    -- column indices: thread c < BC writes c (the key mask at the edge of S_k needs them)
    local iota = ckt.tensor("register", "i32", ckt.layout({BC, 1}, {1, 0}), {lengths = {1, BC}})
    b:map(function() return tid end, iota, {into = iota})
    ckt.tile_window(sCol, {1, BC}, {0, 0}):store(iota)
    b:sync()

    -- Step 4: the accumulators in their fragments' distributions; m (running max) and l
    -- (running sum) in S's distribution; the column index of each value of S
    local S = b:make_blockwise_gemm_xdl_c_vgpr(sQ, sK, cfg.S)
    local acc = b:make_blockwise_gemm_xdl_c_vgpr(sP, sV, cfg.O)
    local m, l = b:make_blockwise_gemm_xdl_c_vgpr(sQ, sK, cfg.S), b:make_blockwise_gemm_xdl_c_vgpr(sQ, sK, cfg.S)
    local s_part = function(t) return ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(t, {BR, BC}, {0, 0}), cfg.S) end
    local o_part = function(t) return ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(t, {BR, D}, {0, 0}), cfg.O) end
    local col = s_part(sCol):load()
    b:clear(acc, 0); b:clear(m, -math.huge); b:clear(l, 0)

    -- Step 5: the loop over key tiles
    local scale = 1 / math.sqrt(D)
    b:loop((S_k + BC - 1) // BC, function(kt)
      local k0 = kt * BC
      b:copy(ckt.local_partition(ckt.tile_window(sK, {BC, D}, {0, 0}), thr2, tid, vec(1)),
             ckt.local_partition(ckt.tile_window(gk, {1, BC, D}, {hd, k0, 0}), thr3, tid, vec(2)))
      b:copy(ckt.local_partition(ckt.tile_window(sV, {D, BC}, {0, 0}), ckt.layout({cols, cfg.threads // cols}, {1, cols}), tid, vec(0)),
             ckt.local_partition(ckt.tile_window(gv, {1, BC, D}, {hd, k0, 0}), thr3, tid, vec(2)))
      b:sync()
      -- S = Q Kᵀ, scaled; keys past S_k masked to -inf
      b:clear(S, 0)
      b:blockwise_gemm(sQ, sK, S, cfg.S)
      b:map(function(s, c) return ckt.select(ckt.lt(k0 + c, S_k), s * scale, -math.huge) end, S, col, {into = S})
      -- the row max over the fragment (each lane gets its rows' maxima), the new running max,
      -- the rescale factor alpha = exp(m_old - m_new), P = exp(S - m_new), the row sum of P
      local mt = b:reduce(S, "max", {dim = 1})
      local alpha = b:map(function(mo, t) return ckt.exp(mo - ckt.max(mo, t)) end, m, mt)
      b:map(function(mo, t) return ckt.max(mo, t) end, m, mt, {into = m})
      b:map(function(s, mn) return ckt.exp(s - mn) end, S, m, {into = S})
      b:map(function(lo, a, s) return lo * a + s end, l, alpha, b:reduce(S, "sum", {dim = 1}), {into = l})
      -- P -> LDS (rounded to f16: the A operand of the second GEMM); alpha -> O's distribution
      s_part(sP):store(S)
      s_part(sStat):store(alpha)
      b:sync()
      b:map(function(o, a) return o * a end, acc, o_part(sStat):load(), {into = acc})
      -- O += P V
      b:blockwise_gemm(sP, sV, acc, cfg.O)
      b:sync()
    end)

    -- Step 6: O /= l, LSE = m + log(l); O leaves through Q's LDS tile, LSE through sStat
    s_part(sStat):store(b:map(function(s) return 1 / s end, l))
    b:sync()
    b:map(function(o, a) return o * a end, acc, o_part(sStat):load(), {into = acc})
    o_part(sQ):store(acc)
    b:sync()
    s_part(sStat):store(b:map(function(mx, s) return mx + ckt.log(s) end, m, l))
    b:sync()
    b:copy(ckt.local_partition(ckt.tile_window(go, {1, BR, D}, {hd, q0, 0}), thr3, tid, vec(2)),
           ckt.local_partition(ckt.tile_window(sQ, {BR, D}, {0, 0}), thr2, tid, vec(1)))
    b:copy(ckt.local_partition(ckt.tile_window(gl, {1, BR}, {hd, q0}), ckt.layout({1, BR}, {BR, 1}), tid),
           ckt.local_partition(ckt.tile_window(sStat, {BR, 1}, {0, 0}), ckt.layout({BR, 1}, {1, BR}), tid))
  end}, cfg
end

local target = ckt.default_target()
local k, cfg = build(target)
demo.section("the kernel (" .. target .. ")")
print(k)

demo.section("the fragments: which lane holds which element of S and of O")
for _, x in ipairs{{"S = Q Kᵀ", cfg.S, BC, D}, {"O = P V", cfg.O, D, BC}} do
  local T, N = x[2], x[3]
  local tv = T:tv("C", BR, N, x[4], cfg.threads)
  print(("%s (%d x %d): %s, TV layout %s"):format(x[1], BR, N, T.instr, tostring(tv)))
  for _, t in ipairs{0, 1, 4, 32} do
    local rows, cells = {}, {}
    for v = 0, (BR * N) // cfg.threads - 1 do
      local off = tv(t, v)
      rows[off // N] = true
      if v < 4 then cells[#cells + 1] = ("(%d,%d)"):format(off // N, off % N) end
    end
    local rl = {}
    for r in pairs(rows) do rl[#rl + 1] = r end
    table.sort(rl)
    print(("  thread %3d: values %s ...; rows %s"):format(t, table.concat(cells, " "), table.concat(rl, ",")))
  end
end
do -- who holds row 0 of S, and so row 0's max and sum
  local tv, holders = cfg.S:tv("C", BR, BC, D, cfg.threads), {}
  for t = 0, cfg.threads - 1 do
    for v = 0, (BR * BC) // cfg.threads - 1 do
      if tv(t, v) // BC == 0 then holders[#holders + 1] = t; break end
    end
  end
  print(("Row 0 of S is held by threads %s: each of them gets row 0's max and sum."):format(table.concat(holders, ",")))
end
print("Row statistics: m, l and the row max / sum of b:reduce(S, op, {dim = 1}) are registers in S's")
print("distribution: the thread holding S(r, c) holds row r's statistic at that value.")
print("alpha and 1/l reach O's distribution through sStat (layout (64, 64):(1, 0)): S's lanes write")
print("row r's value at r, O's lanes read it back along their columns.")

demo.section("generated source for sm_90: the row max along dim 1")
local src = build("sm_90"):source("sm_90")
local from = src:find("= max of", 1, true)
if from then print(src:sub(src:sub(1, from):match(".*()\n") or from, from + 700)) end

-- (the other targets: tests/lua/attention_spec.lua runs both CPU emulations, and the library
-- kernel compiles for sm_90 and gfx90a in tests/compile)
demo.compile_everywhere(function(t) return (build(t)) end, {target})

-- a small problem, S_q and S_k not multiples of the tiles, against the double reference
local Hn, S_q, S_k = 2, 70, 100
demo.section(("run on %s: %d heads, S_q %d, S_k %d, head_dim %d"):format(target, Hn, S_q, S_k, D))
local q = ckt.array(DataType, Hn * S_q * D):random{seed = 1, lo = -1, hi = 1}
local kk = ckt.array(DataType, Hn * S_k * D):random{seed = 2, lo = -1, hi = 1}
local v = ckt.array(DataType, Hn * S_k * D):random{seed = 3, lo = -1, hi = 1}
local ro, rl = attention.reference(q, kk, v, {B = 1, H = Hn, S_q = S_q, S_k = S_k, head_dim = D})
local exe = k:compile{target = target}
local grid = Hn * ((S_q + BR - 1) // BR)
-- O: f16 rounding of P and of O (|O| <= 1)
demo.run_and_check(exe, {heads = Hn, S_q = S_q, S_k = S_k}, {Q = q, K = kk, V = v, LSE = ckt.array("f32", Hn * S_q)},
                   {name = "O", array = ckt.array(DataType, Hn * S_q * D)}, ro, grid, {atol = 2e-3, rtol = 2e-3})
