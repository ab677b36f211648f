-- ckt.kernels.gemm.grouped: grouped GEMM (gemm.build{grouped = true}): C_g = A_g . B_g for the G
-- groups of one launch, their sizes and offsets in device arrays. Parameters: A, B, C (one buffer
-- each holding every group), G, sizes and offsets (i64 or i32 arrays of G x 3: M_g, N_g, K_g and
-- the element offsets of A_g, B_g, C_g). Each group is row-major by the majors with leading
-- dimensions its own sizes. A persistent walk: block b takes tiles b, b + gridDim, ... of all the
-- groups' tiles (each group's row-major, the groups one after another), finding a tile's group
-- by a scan of the groups' tile counts (G fetches a tile: meant for G up to a few hundred). fp8
-- (e4m3, e5m2 on sm_90a): scale_A and scale_B, one f32 each for all the groups, as in gemm.build.
--   An operand at offset o with contiguous extent ld (K for a K-major one, M for M-major A, N for
-- N-major B and C) is a tensor whose origin is (o // ld, o % ld) in the (rows, ld) grid: its
-- shape that origin plus the group's sizes, so the copies mask each group's M, N and K edges
-- (a group's K tail never reads past its K). The tensors are limited to their buffers (opts.limit
-- = true): whatever the arrays hold, no access leaves A, B or C.
--   Device data the launch cannot check: a negative size counts as 0 (an empty group); offsets
-- below 0 count as 0; an access past the end of a buffer reads 0 and a store there is dropped
-- (so a group whose offsets overlap or leave the buffers gets wrong values, never a fault);
-- with aligned (the GPU default) a group whose sizes or offsets are not multiples of the 16-byte
-- vector is skipped (its C is not written).
local ckt = ckt or require "ckt"
local epilogue = require "ckt.kernels.gemm.epilogue"
local grouped = {}

local BIG, OFF_MAX, TILES_MAX = (1 << 31) - 1, 1 << 50, 1 << 62

-- the body: g is pipeline.lua's context (b, p, TM, TN, TK, S, T, P); run(g, store, walk)
function grouped.body(g, run)
  local b, p = g.b, g.p
  local TM, TN, TK = g.TM, g.TN, g.TK
  local A = b:pointer("A", p.dtype, {const = true})
  local B = b:pointer("B", p.dtype, {const = true})
  local C = b:pointer("C", p.out)
  -- fp8: the per-tensor scales of every group (one f32 element each), as the one-problem kernel's
  if p.fp8 then g.scale_A, g.scale_B = b:pointer("scale_A", "f32", {const = true}), b:pointer("scale_B", "f32", {const = true}) end
  local G = b:size("G")
  b:require(ckt.ge(G, 1), "G must be at least 1")
  local it = p.index_type
  local sizes = ckt.tensor(b:pointer("sizes", it, {const = true}), it, {shape = {3 * G}, stride = {1}})
  local offsets = ckt.tensor(b:pointer("offsets", it, {const = true}), it, {shape = {3 * G}, stride = {1}})
  local v = p.aligned and p.v or 1
  -- group j's sizes and offsets, clamped; valid: a 1 / 0 expression (aligned: multiples of v)
  local function group(j)
    local function sz(a, c) return ckt.min(ckt.max(b:fetch(a, 3 * j + c), 0), a == sizes and BIG or OFF_MAX) end
    local d = {m = sz(sizes, 0), n = sz(sizes, 1), k = sz(sizes, 2), oa = sz(offsets, 0), ob = sz(offsets, 1), oc = sz(offsets, 2)}
    d.tiles = ((d.m + TM - 1) // TM) * ((d.n + TN - 1) // TN)
    if v > 1 then
      local ok
      for _, key in ipairs{"m", "n", "k", "oa", "ob", "oc"} do
        local c = ckt.eq(d[key] % v, 0)
        ok = ok and ckt.land(ok, c) or c
      end
      d.tiles = ckt.select(ok, d.tiles, 0)
    end
    return d
  end
  -- the walk's state: tiles in all, and the group of the tile at hand (vars, set per tile)
  local function var(name, hi, mult) return b:var(0, {lo = 0, hi = hi, multiple_of = mult, name = name}) end
  local total = var("total", TILES_MAX)
  local m, n, k = var("m", BIG, v), var("n", BIG, v), var("k", BIG, v)
  -- an operand's origin (q, r) in its (rows, ld) grid, r a multiple of v
  local qa, ra, qb, rb, qc, rc = var("qa", OFF_MAX), var("ra", BIG, v), var("qb", OFF_MAX), var("rb", BIG, v), var("qc", OFF_MAX), var("rc", BIG, v)
  b:loop(G, function(j) b:assign(total, ckt.min(total + group(j).tiles, TILES_MAX)) end)
  local lda = p.a_major == "k" and k or m
  local ldb = p.b_major == "k" and k or n
  -- operand tensors over (rows, K) / C over (M, N): origin + the group's extent
  local function operand(ptr, dt, rows, ld, q, r, contiguous_k)
    if contiguous_k then return ckt.tensor(ptr, dt, {shape = {q + rows, r + ld}, stride = {ld, 1}}, {pad = true, limit = true}) end
    return ckt.tensor(ptr, dt, {shape = {r + ld, q + k}, stride = {1, ld}}, {pad = true, limit = true})
  end
  g.ga = operand(A, p.dtype, m, lda, qa, ra, p.a_major == "k")
  g.gb = operand(B, p.dtype, n, ldb, qb, rb, p.b_major == "k")
  g.gc = ckt.tensor(C, p.out, {shape = {qc + m, rc + n}, stride = {n, 1}}, {pad = true, limit = true})
  -- window origins: row (of M or N) and K offsets within the group
  g.grouped_origin = function(which, row, col)
    local major = which == 1 and p.a_major == "k" or which == 2 and p.b_major == "k"
    local q, r = which == 1 and qa or qb, which == 1 and ra or rb
    if major then return {q + row, r + col} end
    return {r + row, q + col}
  end
  g.nk = (k + TK - 1) // TK
  g.sa = ckt.tensor("lds", p.dtype, p.a_copy.lds, {stages = g.S})
  g.sb = ckt.tensor("lds", p.dtype, p.b_copy.lds, {stages = g.S})
  local bid, nblk = b:block_id(0), b:num_blocks(0)
  local mine = ckt.max((total - bid + nblk - 1) // nblk, 0)
  local tm, tn = var("tm", BIG), var("tn", BIG)
  local cur = {tm = tm, tn = tn}
  local walk = {persistent = false}
  function walk.first() return cur end
  function walk.guard(f) f() end
  function walk.each(body)
    -- the group of the tile at hand (sel) and its first tile (base), carried from tile to tile: a
    -- block's tiles t = bid, bid + nblk, ... only grow, so each scan starts at the last one's
    -- group and reads the sizes of the groups it passes (usually none or one; a scan of all G
    -- groups a tile, each a dependent read of device memory, made 64 groups 37% slower than 8)
    local sel, base = var("sel", BIG), var("base", TILES_MAX)
    local acc, start, found = var("acc", TILES_MAX), var("start", BIG), var("found", 1)
    b:loop(mine, function(i)
      local t = bid + i * nblk
      b:assign(acc, base); b:assign(start, sel); b:assign(found, 0)
      b:loop(G - start, function(jj)
        b:when(ckt.eq(found, 0), function()
          local j = ckt.min(start + jj, BIG)
          local c = group(j).tiles
          b:when(ckt.lt(t, acc + c), function() b:assign(sel, j); b:assign(base, acc); b:assign(found, 1) end)
          b:when(ckt.ge(t, acc + c), function() b:assign(acc, ckt.min(acc + c, TILES_MAX)) end)
        end)
      end)
      local d = group(sel)
      local function mult(x) return (x // v) * v end
      b:assign(m, mult(d.m)); b:assign(n, mult(d.n)); b:assign(k, mult(d.k))
      local function split(o, ld, q, r)
        local l = ckt.max(ld, 1)
        b:assign(q, ckt.min(mult(o) // l, OFF_MAX)); b:assign(r, mult(ckt.min(mult(o) % l, BIG)))
      end
      split(d.oa, lda, qa, ra); split(d.ob, ldb, qb, rb); split(d.oc, n, qc, rc)
      local nt = ckt.max((n + TN - 1) // TN, 1)
      local loc = ckt.max(t - base, 0)
      b:assign(tm, ckt.min(loc // nt, BIG)); b:assign(tn, ckt.min(loc % nt, BIG))
      body(cur)
    end)
  end
  -- C's tile through the local partition, masked by the group's M and N and the buffer
  local function store(acc, tm_, tn_)
    acc = epilogue.scaled(g, acc)
    local res = p.epilogue and b:map(p.epilogue, acc) or acc
    local w = ckt.tile_window(g.gc, {TM, TN}, {qc + tm_ * TM, rc + tn_ * TN})
    ckt.make_blockwise_gemm_xdl_c_local_partition(w, g.T):store(res)
  end
  run(g, store, walk)
end

-- grid(sizes [, exe]): sizes a table of G {M, N, K} rows (or a flat table / ckt.array of 3 G
-- numbers): the tiles of all groups (a negative size: an empty group), at most the SMs x the
-- blocks an SM holds (exe given, a GPU target; else the target's SM count); at least 1
function grouped.grid(p, k, schedule)
  return function(sizes, exe)
    if type(sizes) ~= "table" and type(sizes) ~= "userdata" then
      error(("gemm: grid: sizes must be a table of {M, N, K} rows, got %s"):format(type(sizes)), 2)
    end
    local flat = {}
    if type(sizes) == "table" and type(sizes[1]) == "table" then
      for i, r in ipairs(sizes) do
        if #r ~= 3 then error(("gemm: grid: sizes[%d] must be {M, N, K}"):format(i), 2) end
        for c = 1, 3 do flat[#flat + 1] = r[c] end
      end
    else
      local t = type(sizes) == "table" and sizes or sizes:totable()
      for i = 1, #t do flat[i] = t[i] end
    end
    if #flat == 0 or #flat % 3 ~= 0 then error(("gemm: grid: sizes holds %d numbers, not G x 3 with G >= 1"):format(#flat), 2) end
    local total = 0
    for i = 1, #flat, 3 do
      local M, N = math.tointeger(flat[i]), math.tointeger(flat[i + 1])
      if not M or not N then error(("gemm: grid: sizes of group %d must be integers"):format((i - 1) // 3 + 1), 2) end
      if M > 0 and N > 0 then total = total + ((M + p.TM - 1) // p.TM) * ((N + p.TN - 1) // p.TN) end
    end
    local rec = ckt.target(p.target)
    local cap = schedule.sm_count(rec) * ((exe and not p.emulated) and schedule.resident(p, k, exe) or 1)
    return math.max(1, math.min(total, cap))
  end
end

-- gemm.build{..., grouped = true [, index = "i64" | "i32"]} (init.lua hands it here): the plan of
-- the other options, on the cp.async / mma.sync (MFMA) path
function grouped.build(gemm, o, schedule)
  local function fail(msg) error("gemm: " .. msg, 3) end
  if o.index ~= nil and not o.grouped then fail("index: only a grouped GEMM (grouped = true) takes device arrays") end
  if type(o.grouped) ~= "boolean" then fail(("grouped must be a boolean, got %s"):format(type(o.grouped))) end
  local c = {}
  for key, val in pairs(o) do if key ~= "grouped" and key ~= "index" then c[key] = val end end
  if not o.grouped then return gemm.build(c) end
  if o.batched then fail("grouped and batched exclude each other") end
  if o.persistent ~= nil and o.persistent ~= false then fail("grouped: the walk is persistent already (grid(sizes) picks the blocks); drop persistent") end
  if o.autotune then fail("grouped: autotune does not measure grouped GEMMs yet") end
  if o.scales == "block" then fail("scales = \"block\": the grouped GEMM takes per-tensor fp8 scales only") end
  if o.copy == "tma" then fail("grouped: copy = \"tma\" needs a tensor map per group; the grouped GEMM copies by cp.async") end
  -- sm_90a: wgmma with cp.async copies (a bulk copy would need a tensor map per group)
  if c.copy == nil then c.copy = "cp.async" end
  local p = gemm.plan(c)
  p.grouped = true
  -- (the mma.sync path was built and measured with the fused prologue, which the plan leaves off
  -- unless asked; sm_90a's wgmma keeps MMAs in flight across slices, which it does not take)
  if c.fused_prologue == nil then p.fused_prologue = p.copy == "cp.async" and not p.persistent and p.vendor == "nvidia" and not p.hopper end
  if o.epilogue_lds then fail("epilogue_lds: the grouped GEMM stores C through each group's masked partition") end
  p.epilogue_lds = false -- (its own store, below)
  p.index_type = o.index or "i64"
  if p.index_type ~= "i64" and p.index_type ~= "i32" then fail(("index '%s' is not \"i64\" or \"i32\""):format(tostring(o.index))) end
  local pipeline = require "ckt.kernels.gemm.pipeline"
  local k = ckt.kernel{name = p.name .. "_grouped", block = p.block, build = function(b) pipeline.body(b, p) end}
  return k, grouped.grid(p, k, schedule), p
end

return grouped
