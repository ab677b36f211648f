-- ckt kernel library: attention forward (flash attention), O = softmax(Q Kᵀ · scale + mask) V with
-- the log-sum-exp of every row kept (LSE, f32), built from the builder's own pieces:
--   * b:blockwise_gemm for both products (mma.sync m16n8k16 on NVIDIA, MFMA 32x32x8 on AMD, and
--     their lane-exact emulation on the CPU targets), operands in LDS;
--   * the row max and row sum of the score accumulator S as b:reduce(S, op, {dim = 1}) over the
--     fragment's own distribution (every lane that holds a row gets its statistic: a butterfly of
--     lane exchanges inside the warp), spread over O's distribution by b:broadcast (registers);
--   * K and V through two-stage LDS rings, the next key tile loaded into registers while this one
--     is computed;
--   * the running max m, sum l and output O as loop-carried registers (b:map{into = }), O rescaled
--     by exp(m_old - m_new) each key tile (online softmax), O /= l and LSE = m + log(l) at the end.
-- One block per (batch, head, query tile of BR rows); a loop over key tiles of BC columns.
--
--   local attention = require "ckt.kernels.attention"
--   local k, grid = attention.build{dtype = "f16", head_dim = 64, causal = true, target = "cpu:sm_90"}
--   exe:launch{grid = grid(B, H, S_q), Q = q, K = kk, V = v, O = o, LSE = lse,
--              B = B, H = H, H_kv = H_kv, S_q = S_q, S_k = S_k [, lengths = lens]}
--
-- Options: dtype ("f16" | "bf16"), head_dim (64, 128, 256; 32, and 16 on NVIDIA, where BC allows: docs/attention.md; 64, 128 tested),
-- causal (bottom-right aligned: query i sees keys j <= i + S_k - S_q), lengths (true: an i32
-- parameter `lengths` with each batch's key length; keys >= min(lengths[b], S_k) are masked),
-- scale (default 1/sqrt(head_dim)), layout ("bhsd", default, or "bshd": contiguous either way),
-- strides (true: runtime sizes q_stride_b, q_stride_h, q_stride_s and the same for k_, v_, o_,
-- each a promised multiple of 8 elements; the head dim contiguous), tile ({BR, BC}), target, name.
-- Rows that see no key at all (causal with S_q > S_k, a zero length) give O = 0 and LSE = -inf.
local ckt = ckt or require "ckt"
local attention = {}

local function fail(msg, level) error("attention: " .. msg, level or 3) end

attention.OPTIONS = {"dtype", "head_dim", "causal", "lengths", "scale", "layout", "strides", "tile", "overlap", "pingpong", "target", "name"}

-- The matrix instruction's traits for an M x N accumulator: every wave along M (one instruction
-- row a wave), the instruction tiles of a wave along N.
-- (AMD: the 16x16x16 MFMA, so that the O accumulator of head_dim 128 takes 32 registers a lane
-- and 4 waves share the tile; with the 32x32x8 one and 2 waves it spilled to scratch on gfx90a.)
local function traits(p, M, N, wgmma)
  if wgmma then -- sm_90a: one m64nNk16 instruction a warpgroup (its 64 rows), N = all the columns
    assert(M == 64 * (p.block // 128))
    return ckt.gemm_traits{instr = ("wgmma_m64n%dk16_%s"):format(N, p.dtype), m_per_wave = 1, n_per_wave = 1, k_pack = 16}
  end
  local instr = p.amd and (p.dtype == "f16" and "mfma_f32_16x16x16f16" or "mfma_f32_16x16x16bf16_1k")
                      or ("mma_m16n8k16_" .. p.dtype)
  local n, waves = p.amd and 16 or 8, p.block // (p.amd and 64 or 32)
  assert(M % (16 * waves) == 0)
  return ckt.gemm_traits{instr = instr, m_per_wave = M // (16 * waves), n_per_wave = N // n, k_pack = p.amd and 8 or 2}
end

-- the kernel's name: the one given (a string), or prefix_<dtype>_d<head_dim>[_causal][_varlen]
local function name(p, o, prefix)
  if o.name ~= nil and type(o.name) ~= "string" then fail(("name must be a string, got %s"):format(type(o.name)), 4) end
  p.name = o.name or (prefix .. p.dtype .. "_d" .. p.D .. (p.causal and "_causal" or "") .. (p.lengths and "_varlen" or ""))
end

-- sm_90a: a warpgroup (128 threads) a 64 query rows, BR 64 or 128; both products by wgmma, K and
-- V in LDS in the hardware's 128-byte swizzled layouts (wgmma's N: BC for Q Kᵀ, head_dim for
-- P V, each 64, 128 or 256), P from registers (wgmma's register-A form)
function attention.plan_hopper(p, rec, o)
  if p.BR ~= 64 and p.BR ~= 128 then fail(("tile: BR must be 64 or 128 (one or two warpgroups of 64 rows), got %s"):format(tostring(p.BR))) end
  local function n_ok(x) return x == 64 or x == 128 or x == 256 end
  if not n_ok(p.BC) then fail(("tile: BC must be 64, 128 or 256 on %s (wgmma's N), got %s"):format(p.target, tostring(p.BC))) end
  if not n_ok(p.D) then fail(("head_dim %d: %s's wgmma path takes 64, 128 or 256"):format(p.D, p.target)) end
  p.block = 128 * (p.BR // 64)
  p.stages = 2
  -- the copies: bulk tensor copies issued by a producer (a warpgroup that hands its registers to
  -- the consumers' when they are two or more warpgroups, a warp beside one)
  p.producer_warpgroup = p.block >= 256
  -- Q, the K and V rings (16-bit), the row statistics (f32), the mbarriers, and the 1024-byte
  -- alignment of the swizzled tiles (P stays in registers; the GPU leaves the score tile's
  -- reduction scratch out, ckt_emit_lds_bytes)
  local bytes = 2 * (p.BR * p.D + 2 * 2 * p.BC * p.D) + 4 * p.BR + 1024 + 64
  if bytes > rec.hw.lds_per_block then
    fail(("tile {%d, %d} with head_dim %d needs %d bytes of LDS, more than %s's %d"):format(p.BR, p.BC, p.D, bytes, p.target, rec.hw.lds_per_block))
  end
  -- overlap: the next key tile's Q Kᵀ in flight with this tile's P V. Off by default: on an H100
  -- it was slower at every tile and shape measured (run 24, docs/attention.md), ptxas keeping
  -- the MMAs apart for want of registers
  if o.overlap ~= nil and type(o.overlap) ~= "boolean" then fail(("overlap must be a boolean, got %s"):format(type(o.overlap))) end
  p.overlap = o.overlap == true
  -- pingpong: two consumer warpgroups take turns at their MMAs. Off by default: on an H100 it was
  -- 20-25% slower than letting them run free (run 25, docs/attention.md)
  if o.pingpong ~= nil and type(o.pingpong) ~= "boolean" then fail(("pingpong must be a boolean, got %s"):format(type(o.pingpong))) end
  if o.pingpong == true and p.block ~= 256 then fail(("pingpong: two consumer warpgroups take turns (tile {128, BC}), this tile has %d"):format(p.block // 128)) end
  p.pingpong = o.pingpong == true
  p.T1 = traits(p, p.BR, p.BC, true) -- S = Q Kᵀ
  p.T2 = traits(p, p.BR, p.D, true)  -- O += P V
  p.n = 8
  -- the row statistics: in the distribution of mma.sync's m16n8 accumulator over the block's
  -- warps, whose rows are wgmma's (warp w of the block: rows 16 w .. 16 w + 15)
  p.TS = ckt.gemm_traits{instr = "mma_m16n8k16_" .. p.dtype, m_per_wave = 1, n_per_wave = 1, k_pack = 2}
  name(p, o, "attnw_")
  return p
end

-- Checks the options and derives the plan.
function attention.plan(o)
  if type(o) ~= "table" then fail("build takes a table of options") end
  local known = {}
  for _, n in ipairs(attention.OPTIONS) do known[n] = true end
  for key in pairs(o) do if not known[key] then fail(("unknown option '%s' (known: %s)"):format(tostring(key), table.concat(attention.OPTIONS, ", "))) end end
  local p = {}
  p.dtype = o.dtype or "f16"
  if p.dtype ~= "f16" and p.dtype ~= "bf16" then fail(("dtype must be f16 or bf16, got %s"):format(tostring(p.dtype))) end
  p.D = o.head_dim
  if math.type(p.D) ~= "integer" or p.D < 16 or p.D > 256 or p.D % 16 ~= 0 then
    fail(("head_dim must be an integer multiple of 16 in 16..256, got %s"):format(tostring(o.head_dim)))
  end
  for _, b in ipairs{"causal", "lengths", "strides"} do
    if o[b] ~= nil and type(o[b]) ~= "boolean" then fail(("%s must be a boolean, got %s"):format(b, type(o[b]))) end
  end
  p.causal, p.lengths, p.strides = o.causal == true, o.lengths == true, o.strides == true
  p.layout = o.layout or "bhsd"
  if p.layout ~= "bhsd" and p.layout ~= "bshd" then fail(("layout must be \"bhsd\" or \"bshd\", got %s"):format(tostring(p.layout))) end
  if o.layout and p.strides then fail("layout and strides exclude each other (strides = true takes the strides at launch)") end
  p.scale = o.scale or 1 / math.sqrt(p.D)
  -- folded into the f32 arithmetic of the scores: a finite f32 (1e300 raised a raw 'mul' error)
  -- (at most 3e38 in magnitude, the kernel builder's bound for a constant: 3.4e38 passed a
  -- FLT_MAX check here and then raised the raw 'mul' error; found by kernels_hostile_spec)
  if type(p.scale) ~= "number" or p.scale ~= p.scale or math.abs(p.scale) > 3.0e38 then
    fail(("scale must be a finite number of f32 range, got %s"):format(o.scale == nil and tostring(p.scale) or (type(o.scale) == "number" and tostring(o.scale) or type(o.scale))))
  end
  p.target = o.target or ckt.default_target()
  local ok, rec = pcall(ckt.target, p.target)
  if not ok then fail(("target: %s"):format(tostring(rec))) end
  p.amd = rec.vendor == "amd"
  -- sm_90a (and its emulation): both products by wgmma from LDS, P through LDS
  p.hopper = rec.hw.wgmma == true
  if p.amd and p.dtype == "bf16" and (rec.arch or ""):match("gfx908") then fail("bf16 needs gfx90a or newer (gfx908 has no bf16_1k MFMA)") end
  p.block = p.amd and 256 or 128 -- 4 warps (mma.sync) or 4 waves (MFMA) of 16 rows: a 64-row query tile
  -- default tiles, the fastest of bench/attention.lua on an H100 (2026-11-27, checked outputs):
  -- head_dim 128 on NVIDIA 128 x 32 (315-322 TFLOP/s, 276-295 causal; 64 x 32: 223-243), head_dim
  -- 64 64 x 64 (218 / 172; 128 x 64: 170 / 125); elsewhere a 64-row tile whose LDS fits 64 KiB
  -- sm_90a (bulk copies from a producer, wgmma; H100, run 24): head_dim 128 128 x 128, two
  -- consumer warpgroups (521-540 TFLOP/s, 473-540 causal; 128 x 64: 457-466 / 388-431; 64 x 128:
  -- 391-402 / 346-402), with key lengths 128 x 64 (128 x 128 spills 68 bytes at the 168 registers
  -- a thread of three warpgroups); head_dim 64 64 x 64 (run 27: 370 / 264; 64 x 128: 335 / 225;
  -- 128 x 64: 239 / 180); head_dim 256 64 x 64 (what fits)
  local hopper_tile = (p.D == 128 and not p.lengths) and {128, 128} or (p.D == 128 and {128, 64}) or {64, 64}
  local tile = o.tile or (p.hopper and hopper_tile)
               or ((not p.amd and p.D == 128) and {128, 32} or {64, p.D <= 64 and 64 or 32})
  if type(tile) ~= "table" then fail("tile must be {BR, BC}") end
  p.BR, p.BC = tile[1], tile[2]
  if p.hopper then return attention.plan_hopper(p, rec, o) end
  if o.overlap ~= nil then fail(("overlap: %s has no asynchronous MMAs (it is sm_90a's wgmma schedule)"):format(p.target)) end
  if o.pingpong ~= nil then fail(("pingpong: %s's warps take no turns (it is sm_90a's schedule of two consumer warpgroups)"):format(p.target)) end
  -- BR: 64 (a wave's 16 rows each) or, on NVIDIA, 128 (two instruction rows a warp: each K and V
  -- fragment read from LDS feeds two MMAs)
  if p.BR ~= 64 and (p.amd or p.BR ~= 128) then
    fail(("tile: BR must be 64%s (the query tile of 4 waves), got %s"):format(p.amd and "" or " or 128", tostring(p.BR)))
  end
  local nmin = p.amd and 32 or 16
  if math.type(p.BC) ~= "integer" or p.BC < nmin or p.BC > 128 or p.BC % nmin ~= 0 then
    fail(("tile: BC must be a multiple of %d in %d..128, got %s"):format(nmin, nmin, math.type(p.BC) and tostring(p.BC) or type(p.BC)))
  end
  -- K and V in two-stage LDS rings where they fit (AMD's 64 KiB: with head_dim 64 and 64-key
  -- tiles the score tile's reduction scratch leaves room for one stage)
  local function lds_bytes(stages) return 2 * (p.BR * p.D + stages * 2 * p.BC * p.D + p.BR * p.BC) + 4 * p.BR * p.BC + 1024 end
  p.stages = lds_bytes(2) <= (rec.hw and rec.hw.lds_per_block or 65536) and 2 or 1
  -- the copies of a row of head_dim take head_dim / 8 threads (16-byte vectors): they must tile
  -- the block, and the block's rows of them the query and key tiles (head_dim 48 or 96, or 16
  -- with BC 32, failed an assert in the kernel body; found by kernels_hostile_spec)
  local function fits(D)
    local cols = D // 8
    return p.block % cols == 0 and p.BR % (p.block // cols) == 0 and p.BC % (p.block // cols) == 0
  end
  if not fits(p.D) then
    local ok = {}
    for D = 16, 256, 16 do if fits(D) then ok[#ok + 1] = tostring(D) end end
    fail(("head_dim %d with tile {%d, %d}: a row's copy takes head_dim / 8 = %d threads, which must divide the %d-thread block into rows that tile BR and BC (here head_dim %s)"):format(
      p.D, p.BR, p.BC, p.D // 8, p.block, table.concat(ok, ", ")))
  end
  p.T1 = traits(p, p.BR, p.BC) -- S = Q Kᵀ: BR x BC, K = head_dim
  p.T2 = traits(p, p.BR, p.D)  -- O += P V: BR x D, K = BC
  p.n = p.amd and 16 or 8
  p.TS = traits(p, p.BR, p.n)  -- the row statistics: BR x one instruction's columns
  name(p, o, "attn_")
  return p
end

-- The copies of a rows x D tile: 16-byte vectors along D, D/8 threads along a row
local function copy_threads(p, rank4)
  local cols = p.D // 8
  local rows = p.block // cols
  if rank4 then return ckt.layout({1, 1, rows, cols}, {p.block, p.block, cols, 1}), rows, cols end
  return ckt.layout({rows, cols}, {cols, 1}), rows, cols
end

-- The XOR swizzle of a row-major 16-bit tile with rows of W elements (a power of two >= 16) that
-- gives the 8 rows of an ldmatrix 8 distinct 16-byte bank groups: the chunk's low bits XOR the
-- bits just above a 128-byte line (rows of >= 64 elements: the row's low bits; shorter rows share
-- a line, and the bits above it tell them apart)
local function chunk_swizzle(W)
  local bits = math.min(3, math.floor(math.log(W // 8, 2) + 0.5))
  local shift = W >= 64 and math.floor(math.log(W, 2) + 0.5) - 3 or 3
  return ckt.swizzle(bits, 3, shift)
end

-- cp.async: every thread copies Q, then key tile t's K and V into stage t % stages of the rings
-- (16-byte vectors, rows past the tensor read 0), one commit group a tile: the next tile's copies
-- fly while this one is computed (one stage: after it)
local function async_feed(b, p, w)
  local BR, BC, D = p.BR, p.BC, p.D
  local f = {}
  local function fetch(t, st)
    local function copy(g, ring)
      b:copy(ckt.local_partition(ckt.tile_window(ring:stage(st), {1, 1, BC, D}, {0, 0, 0, 0}), w.thr4, w.tid, {scalar_per_vector = 8, vector_dim = 3}),
             ckt.local_partition(ckt.tile_window(g, {1, 1, BC, D}, {w.bi, w.hk, t * BC, 0}), w.thr4, w.tid, {scalar_per_vector = 8, vector_dim = 3}),
             {async = true})
    end
    copy(w.gk, w.sK)
    copy(w.gv, w.sV)
    b:commit()
  end
  function f.start()
    w.to_lds(ckt.tile_window(w.sQ, {BR, D}, {0, 0}), ckt.tile_window(w.gq, {1, 1, BR, D}, {w.bi, w.hi, w.q0, 0}))
    fetch(0, 0)
  end
  function f.key_ready(kt)
    -- tile kt has landed, and every thread is done with tile kt - 1 (a barrier): its stage takes
    -- tile kt + 1 now
    b:wait{pending = 0}
    if p.stages > 1 then fetch(kt + 1, (kt + 1) % 2) end
  end
  function f.value_ready() end
  function f.release(kt) if p.stages == 1 then b:sync(); fetch(kt + 1, 0) end end
  function f.finish() b:wait{pending = 0} end -- the last (unread) tile's copies land; every thread is done with the rings
  return f
end

-- sm_90a: warp specialization. A producer issues the bulk tensor copies: Q's atoms once (mbarrier
-- qbar), then key tile t's K and V atoms into stage t % stages (mbarriers kbar, vbar: the block's
-- threads start Q Kᵀ before V has landed) as soon as the block's threads have released that
-- stage (mbarrier empty, after the tile's P V). No barrier of the whole block in the loop: each
-- warpgroup runs on as its own tiles land, so one's softmax overlaps the other's MMAs. The
-- copies' windows are one (batch, head) of the rank-4 tensors: keys past S_k read 0.
local function bulk_feed(b, p, w)
  local BR, BC, D, S = p.BR, p.BC, p.D, p.stages
  local atoms = D // 64
  local f = {}
  local qbar = b:mbarriers{count = 1, arrivals = atoms}
  local kbar = b:mbarriers{count = S, arrivals = atoms}
  local vbar = b:mbarriers{count = S, arrivals = atoms}
  local empty = b:mbarriers{count = S, arrivals = p.block}
  b:producer(function()
    for j = 0, atoms - 1 do
      b:tma_copy{src = ckt.tile_window(w.gq, {1, 1, BR, 64}, {w.bi, w.hi, w.q0, 64 * j}), dst = ckt.tile_window(w.sQ, {BR, 64}, {0, 64 * j}),
                 barrier = qbar, at = 0}
    end
    b:loop(w.nk, function(kt)
      local st = kt % S
      -- the first round finds every stage free (the phase before phase 0 counts as done)
      b:mbarrier_wait{barrier = empty, at = st, phase = (kt // S + 1) % 2}
      for _, x in ipairs{{w.gk, w.sK, kbar}, {w.gv, w.sV, vbar}} do
        for j = 0, atoms - 1 do
          b:tma_copy{src = ckt.tile_window(x[1], {1, 1, BC, 64}, {w.bi, w.hk, kt * BC, 64 * j}),
                     dst = ckt.tile_window(x[2]:stage(st), {BC, 64}, {0, 64 * j}), barrier = x[3], at = st}
        end
      end
    end)
  end, p.producer_warpgroup and {warpgroup = true} or nil)
  function f.start() b:mbarrier_wait{barrier = qbar, at = 0, phase = 0} end
  -- (kt >= -1 only as the range analysis sees nk - 1: + S keeps the index provably in 0..S-1)
  local function at(kt) return (kt + S) % S end
  function f.key_ready(kt) b:mbarrier_wait{barrier = kbar, at = at(kt), phase = (kt // S) % 2} end
  function f.value_ready(kt) b:mbarrier_wait{barrier = vbar, at = at(kt), phase = (kt // S) % 2} end
  function f.release(kt) b:mbarrier_arrive{barrier = empty, at = at(kt)} end
  function f.finish() end
  return f
end

-- The kernel body
local function body(b, p)
  local dt, D, BR, BC = p.dtype, p.D, p.BR, p.BC
  local NEG = -math.huge
  local Q = b:pointer("Q", dt, {const = true})
  local K = b:pointer("K", dt, {const = true})
  local V = b:pointer("V", dt, {const = true})
  local O = b:pointer("O", dt)
  local LSE = b:pointer("LSE", "f32")
  local LEN = p.lengths and b:pointer("lengths", "i32", {const = true}) or nil
  local B, H, H_kv = b:size("B"), b:size("H"), b:size("H_kv")
  local S_q, S_k = b:size("S_q"), b:size("S_k")
  -- refused at launch, before anything runs
  for _, s in ipairs{{B, "B"}, {H, "H"}, {H_kv, "H_kv"}, {S_q, "S_q"}, {S_k, "S_k"}} do
    b:require(ckt.gt(s[1], 0), ("attention: %s must be positive"):format(s[2]))
  end
  b:require(ckt.eq(H % H_kv, 0), "attention: H must be a multiple of H_kv (the K/V heads)")

  -- strides (elements) of (b, h, s) for each of Q, K, V, O; the head dim is contiguous
  local function strides(name, heads, S)
    if p.strides then
      return {b:size(name .. "_stride_b", {multiple_of = 8}), b:size(name .. "_stride_h", {multiple_of = 8}),
              b:size(name .. "_stride_s", {multiple_of = 8}), 1}
    -- (a constant times one size first: the range analysis refuses a constant times a product of
    -- sizes that could leave 64 bits)
    elseif p.layout == "bshd" then return {S * (heads * D), D, heads * D, 1} end
    return {heads * (S * D), S * D, D, 1}
  end
  local sq, sk, sv, so = strides("q", H, S_q), strides("k", H_kv, S_k), strides("v", H_kv, S_k), strides("o", H, S_q)
  local gq = ckt.tensor(Q, dt, {shape = {B, H, S_q, D}, stride = sq}, {pad = true})
  local gk = ckt.tensor(K, dt, {shape = {B, H_kv, S_k, D}, stride = sk}, {pad = true})
  local gv = ckt.tensor(V, dt, {shape = {B, H_kv, S_k, D}, stride = sv}, {pad = true})
  local go = ckt.tensor(O, dt, {shape = {B, H, S_q, D}, stride = so}, {pad = true})
  local gl = ckt.tensor(LSE, "f32", {shape = {B, H, S_q}}, {pad = true})

  -- LDS: Q (kept for every key tile, then the output's way out), K (BC x D), V as the N x K
  -- operand (D x BC, rows of V contiguous), P (BR x BC), a row-statistic buffer broadcast along
  -- its columns, the row / column indices and the batch's key length
  local W = math.max(BC, D)
  -- Each tile XOR-swizzled by 16-byte chunks (rows of W elements): an ldmatrix reads one chunk of
  -- 8 consecutive rows, which without it share banks (8-way for W = 64 or 128: the kernel's
  -- LDS traffic was 90% of L1's throughput at 12% of the SM's compute, ncu on an H100)
  local sQ, sK4, sV4, sK, sV, sP
  if p.hopper then
    -- sm_90a: wgmma's 128-byte swizzled layouts (Sw<3,3,3> on 16-bit elements), K-major tiles of
    -- 64-element rows, further 64 columns in further atoms after all rows. K and V share the
    -- layout: K read as the BC x D operand (K-major), V as the D x BC one (N-major: wgmma's
    -- transposed B, the same bytes)
    -- K, V and Q arrive by bulk tensor copies, one a 64-column atom (the 128-byte swizzle's span)
    local SW = ckt.swizzle(3, 3, 3)
    local function kmajor(rows, K) return ckt.layout({rows, {64, K // 64}}, {64, {1, rows * 64}}) end
    sQ = ckt.tensor("lds", dt, kmajor(BR, D), {swizzle = SW})
    sK = ckt.tensor("lds", dt, kmajor(BC, D), {stages = p.stages, swizzle = SW})
    sV4 = ckt.tensor("lds", dt, kmajor(BC, D), {stages = p.stages, swizzle = SW})
    sV = sV4:view(ckt.layout({{64, D // 64}, BC}, {{1, BC * 64}, 64}))
    sP = nil -- P stays in registers: wgmma's A from registers (the RS form)
  else
  sQ = ckt.tensor("lds", dt, ckt.layout({BR, D}, {D, 1}), {swizzle = chunk_swizzle(D)})
  -- K and V in two-stage rings: the next key tile is stored while this one is read
  -- K and V rings as rank-4 tiles (1, 1, BC, D), what the asynchronous copies from the rank-4
  -- global windows fill, read through rank-2 views as the GEMMs' operands: K as the BC x D one, V
  -- as the D x BC one (the same memory: V's rows contiguous)
  local tile4 = ckt.layout({1, 1, BC, D}, {0, 0, D, 1})
  sK4 = ckt.tensor("lds", dt, tile4, {stages = p.stages, swizzle = chunk_swizzle(D)})
  sV4 = ckt.tensor("lds", dt, tile4, {stages = p.stages, swizzle = chunk_swizzle(D)})
  sK = sK4:view(ckt.layout({BC, D}, {D, 1}))
  sV = sV4:view(ckt.layout({D, BC}, {1, D}))
  sP = ckt.tensor("lds", dt, ckt.layout({BR, BC}, {BC, 1}), {swizzle = chunk_swizzle(BC)})
  end
  local sStat = ckt.tensor("lds", "f32", ckt.layout({BR, W}, {1, 0}))
  local sLen = p.lengths and ckt.tensor("lds", "i32", ckt.layout({BR, BC}, {0, 0})) or nil

  -- the block's (batch, head, query tile); the K/V head of a query head (GQA)
  local nq = b:let((S_q + BR - 1) // BR, "nq")
  local bid = b:block_id()
  -- causal: the last query tiles see the most keys; they take the first blocks, so that the
  -- short ones fill the last wave
  local qt = b:let(p.causal and nq - 1 - bid % nq or bid % nq, "qt")
  local bh = b:let(bid // nq, "bh")
  local bi, hi = b:let(bh // H, "bi"), b:let(bh % H, "hi")
  local hk = b:let(hi // (H // H_kv), "hk")
  local q0 = b:let(qt * BR, "q0")

  -- key tiles: all of them, or (causal) up to the one holding key q0 + BR - 1 + S_k - S_q
  local nk = (S_k + BC - 1) // BC
  if p.causal then nk = ckt.min(nk, ckt.max(q0 + BR + S_k - S_q + BC - 1, 0) // BC) end
  nk = b:let(nk, "nk")

  local tid = b:thread_id()
  local thr4, rows = copy_threads(p, true)
  local thr2 = copy_threads(p, false)
  local function to_lds(dst, src)
    b:copy(ckt.local_partition(dst, thr2, tid, {scalar_per_vector = 8, vector_dim = 1}),
           ckt.local_partition(src, thr4, tid, {scalar_per_vector = 8, vector_dim = 3}))
  end
  assert(BR % rows == 0 and BC % rows == 0)

  -- the copies of Q and of the key tiles (feed.start: Q in LDS; key_ready / value_ready(kt): key
  -- tile kt's K / V in stage kt % stages; release(kt): its stages free again; finish: no copy
  -- left in flight)
  local feed = p.hopper and bulk_feed(b, p, {gq = gq, gk = gk, gv = gv, sQ = sQ, sK = sK, sV = sV4, bi = bi, hi = hi, hk = hk, q0 = q0, nk = nk})
               or async_feed(b, p, {gq = gq, gk = gk, gv = gv, sQ = sQ, sK = sK4, sV = sV4, bi = bi, hi = hi, hk = hk, q0 = q0,
                                    to_lds = to_lds, thr4 = thr4, tid = tid})
  feed.start()
  -- the batch's key length (what the masks compare), read back in the score's distribution
  if p.lengths then
    local gn = ckt.tensor(LEN, "i32", {shape = {B, 1}, stride = {1, 0}})
    ckt.tile_window(sLen, {1, 1}, {0, 0}):store(ckt.tile_window(gn, {1, 1}, {bi, 0}):load())
  end
  b:sync()

  -- the accumulators: S (BR x BC) and O (BR x D) in their fragments' distributions; the running
  -- max and sum (and the rescaling factor) in the distribution of a BR x n accumulator of one
  -- instruction column a wave (TS): a row's value held by every lane holding the row, in the
  -- fewest values (4 a lane, not S's BC / 2: a running max in S's distribution took 16 registers
  -- and 16 exponentials a key tile where 2 hold it)
  local T1, T2, TS = p.T1, p.T2, p.TS
  local S = b:make_blockwise_gemm_xdl_c_vgpr(sQ, sK:stage(0), T1)
  local acc = b:make_blockwise_gemm_xdl_c_vgpr(sP or ckt.layout({BR, BC}, {BC, 1}), sV:stage(0), T2)
  local sN = sQ:view(ckt.layout({p.n, D}, {D, 1})) -- (only its shape: TS's N)
  local m = b:make_blockwise_gemm_xdl_c_vgpr(sQ, sN, TS)
  local l = b:make_blockwise_gemm_xdl_c_vgpr(sQ, sN, TS)
  local function s_part(t, lengths) return ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(t, lengths or {BR, BC}, {0, 0}), T1) end
  local function o_part(t) return ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(t, {BR, D}, {0, 0}), T2) end
  -- the key length in the statistics' distribution (a value a row a lane, not one a score),
  -- spread over the scores where a mask reads it
  local len = p.lengths and ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(sLen, {BR, p.n}, {0, 0}), TS):load() or nil
  b:clear(acc, 0)
  b:clear(m, NEG)
  b:clear(l, 0)

  -- the scores in base 2: S · scale · log2(e), so that each exponential is one exp2 (the
  -- hardware's) of a difference; LSE = (m + log2(l)) · ln(2) at the end
  local scale2 = p.scale / math.log(2)
  local shift = S_k - S_q -- causal: query i sees keys j <= i + shift

  -- scale the scores of key tile kt, and mask where the tile needs it: keys past the length (or
  -- S_k), and above the diagonal when causal (coordinates (r, c) of each value in the score
  -- tile). Without per-batch lengths only the tiles that reach past S_k or the diagonal of the
  -- block's first row pay for the compares (the others: one multiply a score)
  -- (a positive scale is folded into the exponential instead, exp2(x · scale2 - m) one fused
  -- multiply-add a score: the scores stay unscaled, their row maximum is scaled, and the tiles
  -- without masks take no pass over the scores here)
  local fold = p.scale > 0
  local function scaled(s) return fold and s or s * scale2 end
  local function scores(kt)
    local k0 = kt * BC
    local function masked(s, n, r, c)
      local j = k0 + c
      local ok = ckt.lt(j, n and ckt.min(n, S_k) or S_k)
      if p.causal then ok = ckt.land(ok, ckt.le(j, q0 + r + shift)) end
      return ckt.select(ok, scaled(s), NEG)
    end
    if len then b:map(masked, S, b:broadcast(len, S, {dim = 1}), {into = S, coords = true})
    else
      local edge = ckt.lt(S_k, k0 + BC)
      if p.causal then edge = ckt.lor(edge, ckt.lt(q0 + shift, k0 + BC - 1)) end
      b:when(edge, function() b:map(function(x, r, c) return masked(x, nil, r, c) end, S, {into = S, coords = true}) end)
      if not fold then b:when(ckt.lnot(edge), function() b:map(function(x) return x * scale2 end, S, {into = S}) end) end
    end
  end
  -- online softmax of the scores in S: the row max over the fragment, the new running max, P
  -- (in S), the row sum; returns alpha = exp2(m_old - m_new), what O is rescaled by
  local function softmax()
    local mt = b:broadcast(b:reduce(S, "max", {dim = 1}), m, {dim = 1})
    if fold then mt = b:map(function(t) return t * scale2 end, mt) end
    local function safe(x) return ckt.select(ckt.eq(x, NEG), 0, x) end -- an all-masked row: exp2(-inf) = 0, never NaN
    local alpha = b:map(function(mo, t) return ckt.exp2(mo - safe(ckt.max(mo, t))) end, m, mt)
    b:map(function(mo, t) return ckt.max(mo, t) end, m, mt, {into = m})
    local ms = b:map(safe, m)
    b:map(function(x, mn) return ckt.exp2((fold and x * scale2 or x) - mn) end, S, b:broadcast(ms, S, {dim = 1}), {into = S})
    local ls = b:broadcast(b:reduce(S, "sum", {dim = 1}), l, {dim = 1})
    b:map(function(lo, a, x) return lo * a + x end, l, alpha, ls, {into = l})
    return alpha
  end
  -- O *= alpha: alpha spread over O's distribution from the lane's own registers (the rows of S
  -- and O are the same lanes')
  local function rescale(alpha) b:map(function(o, a) return o * a end, acc, b:broadcast(alpha, acc, {dim = 1}), {into = acc}) end

  -- pingpong (sm_90a, two consumer warpgroups): each MMA is a turn; a warpgroup waits for its
  -- turn at its named barrier and hands the next to the other one after its MMA, so that one's
  -- softmax runs while the other's MMAs do (FlashAttention-3's ping-pong). Warpgroup 1 gives the
  -- first turn to warpgroup 0, which takes the last one back: every hand-over meets a wait.
  local wg = (tid % 256) // 128 -- (the consumer warpgroup: the same over each of its warps)
  local function my_turn() if p.pingpong then b:named_barrier{id = 2 + wg, threads = 256} end end
  local function your_turn() if p.pingpong then b:named_barrier{id = 3 - wg, threads = 256, arrive = true} end end
  if p.pingpong then b:when(ckt.eq(wg, 1), your_turn) end
  -- a turn of the serial schedule: the MMA issued (gemm(pending): its groups left in flight), the
  -- next turn handed over, then its wait
  local function turn(gemm, c)
    if not p.pingpong then return gemm(nil) end
    my_turn()
    gemm(1)
    your_turn()
    b:wgmma_wait(c, 0)
  end
  if p.overlap then
    -- sm_90a: P V of key tile kt - 1 and Q Kᵀ of tile kt in flight together, the softmax of tile
    -- kt under them (FlashAttention-3's intra-warpgroup overlap). P is the previous iteration's
    -- (registers wgmma reads while it runs); O is rescaled by tile kt's alpha once P V has
    -- retired. Tile 0's scores before the loop, the last P V after it. P: the scores rounded to
    -- the input dtype, in the m64nBC accumulator's distribution (wgmma's RS form: K step kk's A
    -- fragment is its values 8 kk .. 8 kk + 7).
    local P = b:map(function(x) return x end, S, {dtype = dt})
    local function stage(t, kt) return t:stage((kt + p.stages) % p.stages) end
    local function take_p() b:map(function(x) return x end, S, {into = P}) end
    b:when(ckt.gt(nk, 0), function()
      feed.key_ready(0)
      my_turn()
      b:blockwise_gemm(sQ, stage(sK, 0), S, T1, {zero = true})
      your_turn()
      scores(0)
      softmax() -- (O is 0: nothing to rescale)
      take_p()
    end)
    b:loop(ckt.max(nk - 1, 0), function(i)
      local kt = i + 1
      feed.key_ready(kt)
      feed.value_ready(kt - 1)
      my_turn()
      b:blockwise_gemm(sQ, stage(sK, kt), S, T1, {pending = 1, zero = true})
      b:blockwise_gemm(P, stage(sV, kt - 1), acc, T2, {pending = 1}) -- (S retired, P V in flight)
      your_turn()
      scores(kt)
      local alpha = softmax()
      b:wgmma_wait(acc, 0)
      feed.release(kt - 1)
      rescale(alpha)
      take_p()
    end)
    b:when(ckt.gt(nk, 0), function()
      feed.value_ready(nk - 1)
      my_turn()
      b:blockwise_gemm(P, stage(sV, nk - 1), acc, T2)
      your_turn()
      feed.release(nk - 1)
    end)
  else
    b:loop(nk, function(kt)
      local st = kt % p.stages
      feed.key_ready(kt)
      local sKt, sVt = sK:stage(st), sV:stage(st)
      -- S = Q Kᵀ (zero: S's old values ignored, wgmma's scale-d 0 on the first K step; a clear
      -- before the MMAs on the other instructions)
      turn(function(pending) b:blockwise_gemm(sQ, sKt, S, T1, {zero = true, pending = pending}) end, S)
      scores(kt)
      rescale(softmax())
      -- O += P V, P rounded to the input dtype. mma.sync: P stays in registers, the score
      -- accumulator's fragments relabelled as the A operand's (two 16 x 8 accumulator tiles hold
      -- one 16 x 16 A fragment, lane for lane); wgmma likewise (its m64nN accumulator holds K
      -- step kk's m64k16 A fragment at values 8 kk .. 8 kk + 7: the RS form); MFMA's accumulator
      -- puts a lane's values down a column, its A operand along a row: P goes through LDS there
      if p.amd then
        s_part(sP):store(S)
        b:sync()
        feed.value_ready(kt)
        b:blockwise_gemm(sP, sVt, acc, T2)
      else
        local P = b:map(function(x) return x end, S, {dtype = dt})
        feed.value_ready(kt)
        turn(function(pending) b:blockwise_gemm(P, sVt, acc, T2, {pending = pending}) end, acc)
      end
      feed.release(kt)
    end)
  end
  if p.pingpong then b:when(ckt.eq(wg, 0), my_turn) end
  feed.finish()

  -- O /= l (0 for a row without keys), LSE = m + log(l) (-inf then)
  local inv = b:map(function(s) return ckt.select(ckt.gt(s, 0), 1 / s, 0) end, l)
  b:map(function(o, a) return o * a end, acc, b:broadcast(inv, acc, {dim = 1}), {into = acc})
  o_part(sQ):store(acc) -- rounded to dtype, through Q's buffer (Q is no longer read)
  b:sync()
  if p.hopper then
    -- sm_90a: O's tile leaves by bulk tensor stores, a 64-column atom each, the way Q's came in
    -- (rows past S_q write nothing); thread 0 issues them and goes on, the block's end waiting
    -- only for their reads of the buffer. (Measured on an H100 against the threads' 16-byte
    -- copies: within 0.3% at every shape of bench/attention.lua, run 9 of 2026-11-28: the store
    -- is a small part of a block's time here; kept as the one way sm_90a's tiles leave LDS)
    for j = 0, D // 64 - 1 do
      b:tma_store{src = ckt.tile_window(sQ, {BR, 64}, {0, 64 * j}), dst = ckt.tile_window(go, {1, 1, BR, 64}, {bi, hi, q0, 64 * j}), wait = false}
    end
  end
  local ln2 = math.log(2)
  local lse = b:map(function(mx, x) return ckt.select(ckt.gt(x, 0), mx * ln2 + ckt.log(x), NEG) end, m, l)
  ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(sStat, {BR, p.n}, {0, 0}), TS):store(lse)
  b:sync()
  if not p.hopper then
    b:copy(ckt.local_partition(ckt.tile_window(go, {1, 1, BR, D}, {bi, hi, q0, 0}), thr4, tid, {scalar_per_vector = 8, vector_dim = 3}),
           ckt.local_partition(ckt.tile_window(sQ, {BR, D}, {0, 0}), thr2, tid, {scalar_per_vector = 8, vector_dim = 1}))
  end
  b:copy(ckt.local_partition(ckt.tile_window(gl, {1, 1, BR}, {bi, hi, q0}), ckt.layout({1, 1, BR}, {BR, BR, 1}), tid),
         ckt.local_partition(ckt.tile_window(sStat, {BR, 1}, {0, 0}), ckt.layout({BR, 1}, {1, BR}), tid))
end

-- attention.build(options) -> kernel, grid(B, H, S_q) (the block count), plan
function attention.build(o)
  local p = attention.plan(o)
  local k = ckt.kernel{name = p.name, block = p.block, build = function(b) body(b, p) end}
  -- the block count, at most a grid's 2^31 - 1 (B * H * tiles wrapped: 2^32 x 2^32 gave 0)
  local function grid(B, H, S_q)
    for _, x in ipairs{{B, "B"}, {H, "H"}, {S_q, "S_q"}} do
      if math.type(x[1]) ~= "integer" or x[1] < 1 then error(("attention: grid: %s must be a positive integer, got %s"):format(x[2], tostring(x[1])), 2) end
    end
    local MAX, tiles = (1 << 31) - 1, (S_q + p.BR - 1) // p.BR
    if B > MAX // H or B * H > MAX // tiles then
      error(("attention: grid: B = %d, H = %d and S_q = %d make more blocks than a grid holds (2^31 - 1)"):format(B, H, S_q), 2)
    end
    return B * H * tiles
  end
  return k, grid, p
end

attention.reference = require "ckt.kernels.attention.reference"

return attention
