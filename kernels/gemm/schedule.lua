-- ckt.kernels.gemm.schedule: which tiles a block computes, in which order, and how many blocks
-- the grid has. Tiles go in grouped order (`group` tile rows at a time, so that neighbouring
-- blocks share A and B tiles in L2); a persistent grid's blocks walk tiles bid, bid + G, ...
local ckt = ckt or require "ckt"
local schedule = {}
local BLOCKS_MAX = require("ckt.kernels.gemm.options").BLOCKS_MAX

-- The hardware comes from the target record (ckt.target(t).hw) and the engine's one occupancy
-- model (ckt.occupancy), which autotune shares.

-- the SMs / CUs a persistent = true grid fills (one block each unless the compiled kernel says more)
function schedule.sm_count(rec) return rec.hw.sm_count end

-- blocks of the compiled kernel exe (k: the kernel) an SM holds at once, by its registers, LDS and
-- threads (the bulk-copy path's producer warp counted)
function schedule.resident(p, k, exe)
  local regs = exe:resources().registers
  if type(regs) ~= "number" or regs < 1 then return 1 end
  local threads = p.block + (p.producer_warpgroup and 128 or p.copy == "tma" and 32 or 0)
  return math.max(1, (ckt.occupancy(p.target, {threads = threads, registers = regs, lds_bytes = k:lds_bytes()})))
end

-- the tiles along a size (name: M or N; TX: the tile's extent), checked: a non-negative integer
-- (an integral float is one) whose tile count a grid can hold
local function tiles_along(name, v, TX)
  local i = math.type(v) and math.tointeger(v)
  if not i or i < 0 then
    error(("gemm: grid: %s must be a non-negative integer, got %s"):format(name, math.type(v) and tostring(v) or type(v)), 3)
  end
  local n = i // TX + (i % TX > 0 and 1 or 0)
  if n > BLOCKS_MAX then
    error(("gemm: grid: %s = %d makes %d tiles of %d, more than a grid holds (2^31 - 1 blocks)"):format(name, i, n, TX), 3)
  end
  return n
end

-- the blocks of a persistent grid: the number asked for, or (persistent = true, the kernel
-- compiled for a GPU) the SMs times the blocks an SM holds of it
local function persistent_blocks(p, k, exe)
  if p.persistent_auto and exe and not p.emulated then return schedule.sm_count(ckt.target(p.target)) * schedule.resident(p, k, exe) end
  return p.persistent
end

-- mt x nt tiles in whole clusters: the tile rows (or, clusters along N, columns) rounded up to
-- the cluster's blocks
local function whole_clusters(p, mt, nt)
  local n = p.cluster or 1
  if p.cluster_along == "n" then return mt, (nt + n - 1) // n * n end
  return (mt + n - 1) // n * n, nt
end

-- grid(M, N [, exe]): the tiles, or with persistent the smaller of the tiles and the blocks; a
-- zero-sized problem gets one block (the launch then runs none). persistent = true is one block an
-- SM; given the compiled kernel, as many blocks as the SMs hold at once (the block count the caller
-- gave stays as it is)
function schedule.grid(p, k)
  local TM, TN = p.TM, p.TN
  if p.batched then return schedule.batched_grid(p, k) end
  return function(M, N, exe)
    local mt, nt = tiles_along("M", M, TM), tiles_along("N", N, TN)
    if mt == 0 or nt == 0 then return p.cluster or 1 end
    mt, nt = whole_clusters(p, mt, nt)
    if (p.split_k or 1) > 1 then return schedule.split(p, mt, nt).blocks end
    local tiles = mt * nt
    if not p.persistent and tiles > BLOCKS_MAX then
      error(("gemm: grid: M = %d and N = %d make %d x %d tiles, more than a grid holds (2^31 - 1 blocks); persistent = true walks them with fewer"):format(M, N, mt, nt), 2)
    end
    if not p.persistent then return tiles end
    return math.min(tiles, persistent_blocks(p, k, exe))
  end
end

-- split_k (options.split): of the units (clusters of tile rows, or tiles), those up to the last
-- whole wave run whole, the rest in split_k parts each -> {units, full, blocks, workspace (f32
-- elements), counters (i32 elements)} for mt (whole clusters) x nt tiles
function schedule.split(p, mt, nt)
  local n, S = p.cluster or 1, p.split_k
  local W = math.max(1, p.split_wave // n)
  local units = mt * nt // n
  local full = units // W * W
  local parts = (units - full) * S
  -- (the kernel's workspace and counters hold at least one split tile: an empty tensor would make
  -- the launch run nothing)
  local tiles = math.max(1, (units - full) * n)
  return {units = units, full = full, blocks = n * (full + parts), workspace = tiles * S * p.TM * p.TN, counters = tiles}
end

-- split_k: the buffers a launch at M x N needs: {workspace = f32 elements, counters = i32
-- elements}
function schedule.split_buffers(p)
  return function(M, N)
    local s = schedule.split(p, whole_clusters(p, tiles_along("M", M, p.TM), tiles_along("N", N, p.TN)))
    return {workspace = s.workspace, counters = s.counters}
  end
end

-- batched: grid(M, N, L [, exe]), the tiles of all L batches (or, persistent, the smaller of
-- them and the blocks); L = 0 or a zero-sized problem gets one block (the launch runs none)
function schedule.batched_grid(p, k)
  local TM, TN = p.TM, p.TN
  return function(M, N, L, exe)
    local mt, nt = tiles_along("M", M, TM), tiles_along("N", N, TN)
    local nl = tiles_along("L", L, 1)
    if mt == 0 or nt == 0 or nl == 0 then return 1 end
    if mt * nt > BLOCKS_MAX // nl then
      if not p.persistent then
        error(("gemm: grid: M = %d, N = %d and L = %d make %d x %d x %d tiles, more than a grid holds (2^31 - 1 blocks); persistent = true walks them with fewer"):format(M, N, L, mt, nt, nl), 2)
      end
      return persistent_blocks(p, k, exe)
    end
    local tiles = mt * nt * nl
    if not p.persistent then return tiles end
    return math.min(tiles, persistent_blocks(p, k, exe))
  end
end

-- The tiles this block computes, for the pipeline (g: the kernel context, with g.tm, g.tn the
-- block's tile in grouped order). walk.each(body, per_tile) calls body(t) for each tile t = {tm,
-- tn, it (persistent: the block's tile count so far), base (persistent: the K slices of the
-- block's tiles before this one, per_tile each), more (a tile follows), next() (its coordinates)};
-- walk.first(): the first tile; walk.guard(f): f where the block has a tile at all.
function schedule.walk(g)
  local b, p = g.b, g.p
  if not p.persistent then
    -- computed once: the grouped order costs several 64-bit divisions, which the producer warp's
    -- one thread would otherwise pay before every slice's copies (1450 cycles a slice on an H100,
    -- the TMA path's whole deficit: it was 30% slower than cp.async)
    local t = {}
    t.tm, t.tn = b:let(g.tm, "tm"), b:let(g.tn, "tn")
    if p.batched then t.l = b:let(g.l, "l") end
    return {persistent = false, first = function() return t end, each = function(body) body(t) end, guard = function(f) f() end}
  end
  local G, bid = b:num_blocks(0), b:block_id(0)
  local mt, nt = (g.M + g.TM - 1) // g.TM, (g.N + g.TN - 1) // g.TN
  local mine = (mt * nt - bid + G - 1) // G
  local function coords(t) return b:block_order{tiles = {mt, nt}, order = "grouped", group = p.group, id = t} end
  if p.batched then -- tile t of the batches one after another: batch t // (mt nt), then grouped order
    local per = ckt.max(mt * nt, 1)
    mine = (mt * nt * g.L - bid + G - 1) // G
    coords = function(t)
      local tm, tn = b:block_order{tiles = {mt, nt}, order = "grouped", group = p.group, id = t % per}
      return tm, tn, t // per
    end
  end
  local w = {persistent = true, mine = mine}
  function w.first() local tm, tn, l = coords(bid); return {tm = tm, tn = tn, l = l} end
  function w.guard(f) b:when(ckt.gt(mine, 0), f) end
  function w.each(body, per_tile)
    b:loop(mine, function(it)
      local t = {it = it, base = it * per_tile, more = ckt.lt(it + 1, mine)}
      t.tm, t.tn, t.l = coords(bid + it * G)
      function t.next() return coords(bid + (it + 1) * G) end
      body(t)
    end)
  end
  return w
end

return schedule
