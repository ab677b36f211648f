-- ckt.kernels.gemm.copies: the global -> LDS copies of one K slice of a tile, as the kernel builds
-- them. Each is an entry {src = its global window, copy = function(stage)} (copy into LDS stage
-- `stage`), so a pipeline may issue a slice's copies at once or make the windows once and move
-- them along K. g: the kernel's generation context (pipeline.lua).
local ckt = ckt or require "ckt"
local copies = {}

-- the operands: global tensor, LDS ring, copy plan, tile coordinate's index in (tm, tn), rows
local function operands(g) return {{g.ga, g.sa, g.p.a_copy, 1, g.TM}, {g.gb, g.sb, g.p.b_copy, 2, g.TN}} end

-- the window of tile (row tile r, K tile kt) of len = {rows, TK} over operand x; batched
-- (l: the tile's batch), the tensor's row mode runs through the batches (pipeline.lua): batch l's
-- rows start at row l x R (g.ra, g.rb)
local function tile(g, x, len, r, kt, l)
  if g.grouped_origin then return ckt.tile_window(x[1], len, g.grouped_origin(x[4], r * len[1], kt * len[2])) end
  if not g.p.batched then return ckt.local_tile(x[1], len, {r, kt}) end
  return ckt.tile_window(x[1], len, {l * (x[4] == 1 and g.ra or g.rb) + r * len[1], kt * len[2]})
end

-- cp.async: the 16-byte copies of K slice kt of tile (tm, tn) by every thread; given a stage
-- `now`, each copy is also issued at once (as its window is made)
function copies.async(g, tm, tn, kt, now, l)
  local b, p, TK, list = g.b, g.p, g.TK, {}
  for _, x in ipairs(operands(g)) do
    local c, at_tile = x[3], x[4] == 1 and tm or tn
    local function add(src, len, at, threads, vector_dim)
      local e = {src = src, copy = function(stage)
        b:blockwise_copy{src = src, dst = ckt.tile_window(x[2]:stage(stage), len, at), thread_layout = threads,
                         vector_dim = vector_dim, scalar_per_vector = c.scalar_per_vector, async = true}
      end}
      if now then e.copy(now) end
      list[#list + 1] = e
    end
    if p.hopper and c.vector_dim == 0 then
      -- sm_90a, an M/N-contiguous tile: one copy per 64-row atom of the 128B swizzle, so that a
      -- thread's 8 rows provably stay inside one atom (16-byte copies)
      local n = x[5] // 64
      for j = 0, n - 1 do add(tile(g, x, {64, TK}, at_tile * n + j, kt, l), {64, TK}, {64 * j, 0}, c.atom_thread_layout, 0) end
    else
      add(tile(g, x, {x[5], TK}, at_tile, kt, l), {x[5], TK}, {0, 0}, c.thread_layout, c.vector_dim)
    end
  end
  return list
end

-- bulk copies (sm_90a's tensor memory accelerator) of K slice kt of tile (tm, tn), completing on
-- mbarrier set `full`: one box per 64-row atom (M/N-major) or per 64-wide K atom (K-major) of
-- each operand tile, each the hardware layout hopper.lds describes
function copies.bulk(g, full, tm, tn, kt, l)
  local b, TK, list = g.b, g.TK, {}
  if g.k0 then kt = g.k0 + kt end -- (split_k: the block's K range starts there)
  for _, x in ipairs(operands(g)) do
    local gt, ring, rows, at_tile = x[1], x[2], x[5], x[4] == 1 and tm or tn
    -- (clusters: B's tile (along M; A's along N) is the same in every block of the cluster, each
    -- copying a part of it)
    local multicast = g.p.cluster > 1 and x[4] == (g.p.cluster_along == "n" and 1 or 2) or nil
    -- (a K-major box's rows are the tile's M (N) rows: where the operand has fewer (a decode's M
    -- = 16 under 64-row tiles), only those are copied — the copy engine spends time on every row
    -- it fills with zeros, and rows of A past M (of B past N) only feed C's rows (columns) past
    -- it, which are never stored)
    local clip = not multicast and x[3].vector_dim ~= 0 or nil
    local function box(src, len, at)
      list[#list + 1] = {src = src, copy = function(stage)
        b:tma_copy{src = src, dst = ckt.tile_window(ring:stage(stage), len, at), barrier = full, at = stage, multicast = multicast, clip = clip}
      end}
    end
    if x[3].vector_dim == 0 then
      local n = rows // 64
      for j = 0, n - 1 do box(tile(g, x, {64, TK}, at_tile * n + j, kt, l), {64, TK}, {64 * j, 0}) end
    else
      local w = g.p.k_atom -- a K-major atom: 128 bytes of K (hopper.lua)
      for j = 0, TK // w - 1 do box(tile(g, x, {rows, w}, at_tile, kt * (TK // w) + j, l), {rows, w}, {0, w * j}) end
    end
  end
  return list
end

-- the mbarrier sets of the bulk-copy ring: `full` (a stage's boxes have landed: one arrival a
-- box) and `empty` (the block's threads have released a stage: one arrival a thread; in a
-- cluster, where the stage must be free in every block before a part of B lands in it, one a warp
-- of each block of the cluster)
function copies.barriers(g)
  local TK, n = g.TK, g.p.cluster
  local function boxes(c, rows) return c.vector_dim == 0 and rows // 64 or TK // g.p.k_atom end
  return g.b:mbarriers{count = g.S, arrivals = boxes(g.p.a_copy, g.TM) + boxes(g.p.b_copy, g.TN)},
         g.b:mbarriers{count = g.S, arrivals = n > 1 and g.p.block // 32 * n or g.p.block}
end

-- issue each copy of a list into `stage`, then move its windows one K slice on
function copies.refill(g, list, stage)
  for _, x in ipairs(list) do x.copy(stage) end
  for _, x in ipairs(list) do x.src:move{0, g.TK} end
end

return copies
