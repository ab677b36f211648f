-- The attention forward (flash attention) step by step, as a ckt script: O = softmax(Q Kᵀ / sqrt(D)) V
-- for one head's rows, with the log-sum-exp of every row. Two blockwise GEMMs with an online
-- softmax between them, held in the MMA accumulator's own distribution. The library kernel
-- (require "ckt.kernels.attention") is the same structure with causal masks, GQA, per-batch key
-- lengths and strides; this script builds a plain one (no mask but the key edge) and shows:
--   * the distributions of the two accumulators (S = Q Kᵀ and O = P V),
--   * where each row statistic lives: b:reduce(S, "max", {dim = 1}) gives every lane that holds
--     a row of S the row's maximum (in S's distribution), and likewise the row sum; the running
--     max m, sum l and the rescale alpha are kept in the distribution of a 64 x n accumulator of
--     one instruction column (the fewest values a lane holds its rows in),
--   * how a statistic moves between distributions in registers: b:broadcast(x, like, {dim = 1})
--     spreads a row statistic over S's or O's values from the lane's own registers (the
--     instruction puts a row on the same lanes in every accumulator).
-- Scores are kept in base 2 (the scale times log2(e) folded in), so each exponential is one exp2.
-- Run: ckt-lua scripts/attention.lua   (cpu = cpu:gfx90a emulates MFMA; --target cpu:sm_90 mma.sync)
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local demo = require "kernel_demo"
local attention = require "ckt.kernels.attention"

local DataType, D, BR, BC = "f16", 64, 64, 64

-- the matrix instruction per vendor: every wave takes 16 rows of the 64-row query tile
local function config(target)
  if ckt.target(target).vendor == "amd" then
    local t = function(n) return ckt.gemm_traits{instr = "mfma_f32_16x16x16f16", m_per_wave = 1, n_per_wave = n // 16, k_pack = 8} end
    return {threads = 256, S = t(BC), O = t(D), R = t(16), n = 16}
  end
  local t = function(n) return ckt.gemm_traits{instr = "mma_m16n8k16_f16", m_per_wave = 1, n_per_wave = n // 8, k_pack = 2} end
  return {threads = 128, S = t(BC), O = t(D), R = t(8), n = 8}
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
    -- P is S rounded to f16 (MFMA's accumulator holds a lane's values down a column, its A operand
    -- along a row: P goes through LDS; the library kernel keeps it in registers on mma.sync);
    -- sStat holds one f32 per row (stride 0 along the columns), the log-sum-exp's way out.
    local sQ = ckt.tensor("lds", DataType, ckt.layout({BR, D}, {D, 1}))
    local sK = ckt.tensor("lds", DataType, ckt.layout({BC, D}, {D, 1}))
    local sV = ckt.tensor("lds", DataType, ckt.layout({D, BC}, {1, D}))
    local sP = ckt.tensor("lds", DataType, ckt.layout({BR, BC}, {BC, 1}))
    local sStat = ckt.tensor("lds", "f32", ckt.layout({BR, math.max(BC, D)}, {1, 0}))

    -- Step 3: the block's head and query tile; Q's tile into LDS (16-byte vectors along D)
    local nq = b:let((S_q + BR - 1) // BR, "nq")
    local hd, q0 = b:let(b:block_id() // nq, "hd"), b:let((b:block_id() % nq) * BR, "q0")
    local tid, cols = b:thread_id(), D // 8
    local thr3 = ckt.layout({1, cfg.threads // cols, cols}, {cfg.threads, cols, 1})
    local thr2 = ckt.layout({cfg.threads // cols, cols}, {cols, 1})
    local function vec(dim) return {scalar_per_vector = 8, vector_dim = dim} end
    b:copy(ckt.local_partition(ckt.tile_window(sQ, {BR, D}, {0, 0}), thr2, tid, vec(1)),
           ckt.local_partition(ckt.tile_window(gq, {1, BR, D}, {hd, q0, 0}), thr3, tid, vec(2)))
    b:sync()

    -- Step 4: the accumulators in their fragments' distributions; m (running max) and l
    -- (running sum) in the distribution of a BR x n accumulator of one instruction column (sN: a
    -- view giving it its shape)
    local S = b:make_blockwise_gemm_xdl_c_vgpr(sQ, sK, cfg.S)
    local acc = b:make_blockwise_gemm_xdl_c_vgpr(sP, sV, cfg.O)
    local sN = sQ:view(ckt.layout({cfg.n, D}, {D, 1}))
    local m, l = b:make_blockwise_gemm_xdl_c_vgpr(sQ, sN, cfg.R), b:make_blockwise_gemm_xdl_c_vgpr(sQ, sN, cfg.R)
    local s_part = function(t) return ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(t, {BR, BC}, {0, 0}), cfg.S) end
    local o_part = function(t) return ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(t, {BR, D}, {0, 0}), cfg.O) end
    local r_part = function(t) return ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(t, {BR, cfg.n}, {0, 0}), cfg.R) end
    b:clear(acc, 0); b:clear(m, -math.huge); b:clear(l, 0)

    -- Step 5: the loop over key tiles
    local scale2 = 1 / math.sqrt(D) / math.log(2) -- the scores in base 2
    b:loop((S_k + BC - 1) // BC, function(kt)
      local k0 = kt * BC
      b:copy(ckt.local_partition(ckt.tile_window(sK, {BC, D}, {0, 0}), thr2, tid, vec(1)),
             ckt.local_partition(ckt.tile_window(gk, {1, BC, D}, {hd, k0, 0}), thr3, tid, vec(2)))
      b:copy(ckt.local_partition(ckt.tile_window(sV, {D, BC}, {0, 0}), ckt.layout({cols, cfg.threads // cols}, {1, cols}), tid, vec(0)),
             ckt.local_partition(ckt.tile_window(gv, {1, BC, D}, {hd, k0, 0}), thr3, tid, vec(2)))
      b:sync()
      -- S = Q Kᵀ, scaled to base 2; keys past S_k masked to -inf (coords: each value's (row,
      -- column) in the tile)
      b:clear(S, 0)
      b:blockwise_gemm(sQ, sK, S, cfg.S)
      b:map(function(s, _, c) return ckt.select(ckt.lt(k0 + c, S_k), s * scale2, -math.huge) end, S, {into = S, coords = true})
      -- the row max over the fragment (each lane gets its rows' maxima, then keeps them in m's
      -- distribution), the new running max, alpha = exp2(m_old - m_new), P = exp2(S - m_new) (m
      -- spread back over S's values), the row sum of P
      local mt = b:broadcast(b:reduce(S, "max", {dim = 1}), m, {dim = 1})
      local alpha = b:map(function(mo, t) return ckt.exp2(mo - ckt.max(mo, t)) end, m, mt)
      b:map(function(mo, t) return ckt.max(mo, t) end, m, mt, {into = m})
      b:map(function(s, mn) return ckt.exp2(s - mn) end, S, b:broadcast(m, S, {dim = 1}), {into = S})
      b:map(function(lo, a, s) return lo * a + s end, l, alpha, b:broadcast(b:reduce(S, "sum", {dim = 1}), l, {dim = 1}), {into = l})
      -- P -> LDS (rounded to f16: the A operand of the second GEMM); O *= alpha in registers
      s_part(sP):store(S)
      b:sync()
      b:map(function(o, a) return o * a end, acc, b:broadcast(alpha, acc, {dim = 1}), {into = acc})
      -- O += P V
      b:blockwise_gemm(sP, sV, acc, cfg.O)
      b:sync()
    end)

    -- Step 6: O /= l (spread in registers), LSE = m ln(2) + log(l); O leaves through Q's LDS
    -- tile, LSE through sStat
    b:map(function(o, a) return o * a end, acc, b:broadcast(b:map(function(s) return 1 / s end, l), acc, {dim = 1}), {into = acc})
    o_part(sQ):store(acc)
    r_part(sStat):store(b:map(function(mx, s) return mx * math.log(2) + ckt.log(s) end, m, l))
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
print("Row statistics: the row max / sum of b:reduce(S, op, {dim = 1}) are registers in S's distribution:")
print("the thread holding S(r, c) holds row r's statistic at that value. m, l and alpha are kept in a")
print(("64 x %d accumulator's distribution (%d values a lane instead of %d); b:broadcast moves them between"):format(
  cfg.n, (BR * cfg.n) // cfg.threads, (BR * BC) // cfg.threads))
print("the distributions from the lane's own registers: every accumulator of the instruction puts a row")
print("on the same lanes.")

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
