-- Hopper's bulk tensor copies (the tensor memory accelerator) and mbarriers on the CPU target
-- (cpu:sm_90a, cpu:sm_90: kernels/prelude/c.h emulates the copies and the mbarrier phases):
-- hand-built kernels copy global tiles into LDS with b:tma_copy, wait with b:mbarrier_wait and
-- store the LDS tile to a global output, compared element by element with the input (random
-- data, poisoned outputs, sizes that are not multiples of the box: elements past the tensor's
-- edge read 0), every swizzle (none, 32B, 64B, 128B) composed on the LDS layout, both majors,
-- LDS stages, a multi-stage ring that reuses its mbarriers across phases; the CUDA and C sources
-- at the call sites; the builder's refusals, each naming the argument and the reason; targets
-- without bulk copies; and the emulation's launch fault for a phase that can never complete.
local ckt = require "ckt"
local dev = ckt.device("cpu")

local function esz(dt) return ckt.array(dt, 1):bytes() end
local function log2(n) local r = 0; while n > 1 do n = n // 2; r = r + 1 end; return r end
local function cdiv(a, b) return (a + b - 1) // b end

-- the LDS tile a copy of a TR x TC box writes: row by row along the contiguous mode (inner 1:
-- row-major, inner 0: column-major), under swizzle sw (0: none, 1..3: 32B, 64B, 128B), i.e.
-- Sw<sw, 4 - log2(element bytes), 3> on element offsets
local function box_layout(dt, TR, TC, inner, sw)
  local L = inner == 1 and ckt.layout({TR, TC}, {TC, 1}) or ckt.layout({TR, TC}, {1, TR})
  if sw and sw > 0 then L = ckt.composed(ckt.swizzle(sw, 4 - log2(esz(dt)), 3), 0, L) end
  return L
end

-- X (M x N, contiguous along mode `inner`) -> LDS by one bulk copy per block -> Y, the whole
-- boxes (ceil(M / TR) TR x ceil(N / TC) TC, row-major): Y shows what the copy put in LDS,
-- the elements past X's edges included. o.mbar_first: the mbarriers declared before the LDS
-- tile; o.before: an LDS tensor of that many f32 declared before it (the builder places both
-- where the copy's alignment is kept)
local function box_kernel(o)
  local dt, TR, TC, inner = o.dtype, o.box[1], o.box[2], o.inner or 1
  return ckt.kernel{name = "tma_box", block = o.block or 64, build = function(b)
    local X = b:pointer("X", dt, {const = true})
    local Y = b:pointer("Y", dt)
    local M, N = b:size("M"), b:size("N")
    local gx = ckt.tensor(X, dt, {shape = {M, N}, stride = inner == 1 and {N, 1} or {1, M}}, {pad = true})
    local gy = ckt.tensor(Y, dt, {shape = {(M + TR - 1) // TR * TR, (N + TC - 1) // TC * TC}})
    local full = o.mbar_first and b:mbarriers{count = 1}
    if o.before then ckt.tensor("lds", "f32", ckt.layout(o.before)) end
    local s = ckt.tensor("lds", dt, box_layout(dt, TR, TC, inner, o.swizzle))
    full = full or b:mbarriers{count = 1}
    local tr, tc = b:block_id(0), b:block_id(1)
    local w = ckt.tile_window(s, {TR, TC}, {0, 0})
    b:tma_copy{src = ckt.local_tile(gx, {TR, TC}, {tr, tc}), dst = w, barrier = full, at = 0}
    b:mbarrier_wait{barrier = full, at = 0, phase = 0}
    ckt.local_tile(gy, {TR, TC}, {tr, tc}):store(w:load())
  end}
end

local function random_input(dt, n, seed)
  local x = ckt.array(dt, n):random{seed = seed, lo = -100, hi = 100}
  local nonzero = 0
  for i = 0, n - 1 do if x[i] ~= 0 then nonzero = nonzero + 1 end end
  assert(nonzero > n // 2, "the random input is mostly zero")
  return x
end

local function run_box(k, o, M, N, target)
  local dt, TR, TC, inner = o.dtype, o.box[1], o.box[2], o.inner or 1
  local MP, NP = cdiv(M, TR) * TR, cdiv(N, TC) * TC
  local x = random_input(dt, M * N, M * 1000 + N)
  local y = ckt.array(dt, MP * NP):poison()
  local bx, by = dev:alloc(dt, M * N), dev:alloc(dt, MP * NP)
  bx:upload(x); by:upload(y)
  k:compile{target = target or "cpu:sm_90a"}:launch{grid = {cdiv(M, TR), cdiv(N, TC)}, X = bx, Y = by, M = M, N = N}
  by:download(y)
  local want = ckt.array(dt, MP * NP):fill(0)
  for r = 0, M - 1 do
    for c = 0, N - 1 do want[r * NP + c] = x[inner == 1 and r * N + c or r + c * M] end
  end
  local ok, err, at = y:compare(want, {rtol = 0, atol = 0})
  assert(ok, ("%s box %dx%d inner %d swizzle %s, %dx%d: max error %s at %s"):format(dt, TR, TC, inner, tostring(o.swizzle), M, N, tostring(err), tostring(at)))
  -- the zero fill is really there: some element past the edge, none of the poison
  if MP * NP > M * N then assert.equal(0, y[MP * NP - 1]) end
end

describe("bulk tensor copies on cpu:sm_90a", function()
  -- {dtype, box, swizzle, inner, sizes}: sizes keep X's strides multiples of 16 bytes (a tensor
  -- map's rule) and are not multiples of the box
  local CASES = {
    {"f16", {16, 64}, 3, 1, {{40, 72}, {16, 64}, {1, 8}}},    -- 128B: 128-byte rows
    {"bf16", {8, 32}, 2, 1, {{20, 40}, {3, 96}}},             -- 64B
    {"f16", {32, 16}, 1, 1, {{33, 24}, {100, 8}}},             -- 32B
    {"f16", {16, 24}, 0, 1, {{17, 56}, {40, 8}}},              -- none, a 48-byte row
    {"f32", {8, 32}, 3, 1, {{13, 36}, {8, 4}}},                -- 128B of 4-byte elements
    {"f32", {4, 8}, 1, 1, {{9, 12}}},                          -- 32B of 4-byte elements
    {"i8", {16, 64}, 2, 1, {{30, 80}}},                        -- 64B of bytes (Sw<2,4,3>)
    {"f16", {64, 16}, 3, 0, {{72, 20}, {8, 1}}},               -- M-major: mode 0 contiguous
    {"bf16", {16, 8}, 1, 0, {{24, 13}}},                       -- M-major, 32B
  }
  for _, c in ipairs(CASES) do
    local o = {dtype = c[1], box = c[2], swizzle = c[3], inner = c[4]}
    it(("%s, a %dx%d box, %s, mode %d contiguous"):format(c[1], c[2][1], c[2][2], c[3] == 0 and "no swizzle" or (16 << c[3]) .. "B swizzle", c[4]), function()
      local k = box_kernel(o)
      for _, mn in ipairs(c[5]) do run_box(k, o, mn[1], mn[2]) end
    end)
  end

  it("the LDS placement: mbarriers or a tensor declared before the tile do not move it off the copy's boundary", function()
    -- every case with its mbarriers declared first; the swizzled ones also after a 3-float
    -- tensor (12 bytes): the tile goes to the swizzle's 8 x span boundary, the mbarriers after it
    for _, c in ipairs(CASES) do
      local variants = {{mbar_first = true}}
      if c[3] > 0 then variants[2] = {mbar_first = true, before = 3} end
      for _, v in ipairs(variants) do
        local o = {dtype = c[1], box = c[2], swizzle = c[3], inner = c[4], mbar_first = v.mbar_first, before = v.before}
        local k = box_kernel(o)
        local tile = c[2][1] * c[2][2] * esz(c[1])
        local at = v.before and 8 * (16 << c[3]) or 0
        local src = k:source("sm_90a")
        assert.truthy(src:find(("ckt_tma_load_2d(ckt_smem_addr(ckt_lds) + %d, &ckt_tmap0"):format(at), 1, true), src)
        local bar = (at + tile + 7) // 8 * 8
        assert.truthy(src:find(("ckt_mbar_init(ckt_smem_addr(ckt_lds) + %d + 8 * ckt_i, 1);"):format(bar), 1, true), src)
        assert.equal(bar + 8, k:lds_bytes())
        run_box(k, o, c[5][1][1], c[5][1][2])
      end
    end
  end)

  it("cpu:sm_90 copies too", function()
    local o = {dtype = "f16", box = {16, 64}, swizzle = 3}
    run_box(box_kernel(o), o, 40, 72, "cpu:sm_90")
  end)

  it("a copy lands only at its wait: reading the LDS before the wait reads what was there", function()
    -- box 0 (rows 0..7) lands in phase 0; box 1 (rows 8..15) is issued into the same tile on
    -- phase 1: read before its wait the tile still holds box 0, after it box 1
    local k = ckt.kernel{name = "early", block = 64, build = function(b)
      local X = b:pointer("X", "f32", {const = true})
      local Y = b:pointer("Y", "f32")
      local gx = ckt.tensor(X, "f32", {shape = {16, 32}})
      local gy = ckt.tensor(Y, "f32", {shape = {24, 32}})
      local s = ckt.tensor("lds", "f32", ckt.layout({8, 32}, {32, 1}))
      local full = b:mbarriers{count = 1}
      local w = ckt.tile_window(s, {8, 32}, {0, 0})
      b:tma_copy{src = ckt.tile_window(gx, {8, 32}, {0, 0}), dst = w, barrier = full, at = 0}
      b:mbarrier_wait{barrier = full, at = 0, phase = 0}
      ckt.tile_window(gy, {8, 32}, {0, 0}):store(w:load())
      b:sync()
      b:tma_copy{src = ckt.tile_window(gx, {8, 32}, {8, 0}), dst = w, barrier = full, at = 0}
      ckt.tile_window(gy, {8, 32}, {8, 0}):store(w:load())
      b:mbarrier_wait{barrier = full, at = 0, phase = 1}
      ckt.tile_window(gy, {8, 32}, {16, 0}):store(w:load())
    end}
    local x = random_input("f32", 512, 5)
    local bx, by = dev:alloc("f32", 512), dev:alloc("f32", 768)
    bx:upload(x); by:upload(ckt.array("f32", 768):poison())
    k:compile{target = "cpu:sm_90a"}:launch{grid = 1, X = bx, Y = by}
    local y = ckt.array("f32", 768)
    by:download(y)
    for i = 0, 255 do
      assert.equal(x[i], y[i])
      assert.equal(x[i], y[256 + i]) -- box 1 not landed yet
      assert.equal(x[256 + i], y[512 + i])
    end
  end)

  it("two boxes at constant origins of one tile complete one mbarrier of two arrivals", function()
    -- rows 0..15 and 16..31 of a 32 x 64 128B-swizzled tile, one box each
    local k = ckt.kernel{name = "halves", block = 128, build = function(b)
      local X = b:pointer("X", "f16", {const = true})
      local Y = b:pointer("Y", "f16")
      local M = b:size("M")
      local gx = ckt.tensor(X, "f16", {shape = {M, 64}}, {pad = true})
      local gy = ckt.tensor(Y, "f16", {shape = {M, 64}}, {pad = true})
      local s = ckt.tensor("lds", "f16", box_layout("f16", 32, 64, 1, 3))
      local full = b:mbarriers{count = 1, arrivals = 2}
      local tm = b:block_id(0)
      for h = 0, 1 do
        b:tma_copy{src = ckt.local_tile(gx, {16, 64}, {2 * tm + h, 0}), dst = ckt.tile_window(s, {16, 64}, {16 * h, 0}), barrier = full, at = 0}
      end
      b:mbarrier_wait{barrier = full, at = 0, phase = 0}
      ckt.local_tile(gy, {32, 64}, {tm, 0}):store(ckt.tile_window(s, {32, 64}, {0, 0}):load())
    end}
    for _, M in ipairs{32, 70, 5} do
      local x = random_input("f16", M * 64, M)
      local y = ckt.array("f16", M * 64):poison()
      local bx, by = dev:alloc("f16", M * 64), dev:alloc("f16", M * 64)
      bx:upload(x); by:upload(y)
      k:compile{target = "cpu:sm_90a"}:launch{grid = cdiv(M, 32), X = bx, Y = by, M = M}
      by:download(y)
      assert.truthy((y:compare(x, {rtol = 0, atol = 0})), "M = " .. M)
    end
    -- the second box's destination: 16 rows of 128 bytes past the first, an absolute address
    local src = k:source("cpu:sm_90a")
    assert.truthy(src:find("ckt_tma_push%(&ckt_tmaq, ckt_mbar0, [^\n]*%(long long%)%(2048%), ckt_tmap0, "), src)
  end)
end)

-- Y (M x K) = X through an S-stage LDS ring of TR x TC boxes (block tm: rows tm TR ..): the
-- prologue issues boxes 0 .. S - 2, step i waits for box i on mbarrier i % S in phase
-- (i // S) % 2, stores it, and once every thread is past it (b:sync) issues box i + S - 1 into
-- the stage just read. o.phase overrides the phase; o.moving copies from a window moved along K
-- instead of local_tile(..., {tm, kt}); o.split: boxes per stage (rows TR / split each, one
-- arrival each).
local function ring_kernel(o)
  local dt, TR, TC, S, split = o.dtype, o.box[1], o.box[2], o.stages, o.split or 1
  return ckt.kernel{name = "tma_ring", block = 64, build = function(b)
    local X = b:pointer("X", dt, {const = true})
    local Y = b:pointer("Y", dt)
    local M, K = b:size("M"), b:size("K")
    local gx = ckt.tensor(X, dt, {shape = {M, K}}, {pad = true})
    local gy = ckt.tensor(Y, dt, {shape = {M, K}}, {pad = true})
    local ring = ckt.tensor("lds", dt, box_layout(dt, TR, TC, 1, o.swizzle), {stages = S})
    local full = b:mbarriers{count = S, arrivals = split}
    local tm, nk = b:block_id(0), (K + TC - 1) // TC
    local R = TR // split
    local src = o.moving and {} or nil
    if o.moving then
      for h = 0, split - 1 do src[h] = ckt.local_tile(gx, {R, TC}, {tm * split + h, 0}) end
    end
    local function issue(kt, stage)
      for h = 0, split - 1 do
        local from = o.moving and src[h] or ckt.local_tile(gx, {R, TC}, {tm * split + h, kt})
        b:tma_copy{src = from, dst = ckt.tile_window(ring:stage(stage), {R, TC}, {R * h, 0}), barrier = full, at = stage}
        if o.moving then src[h]:move{0, TC} end
      end
    end
    for st = 0, S - 2 do b:when(ckt.lt(st, nk), function() issue(st, st) end) end
    b:loop(nk, function(i)
      b:mbarrier_wait{barrier = full, at = i % S, phase = o.phase or (i // S) % 2}
      ckt.local_tile(gy, {TR, TC}, {tm, i}):store(ckt.tile_window(ring:stage(i % S), {TR, TC}, {0, 0}):load())
      b:sync() -- every thread has read stage i % S before it is refilled
      b:when(ckt.lt(i + S - 1, nk), function() issue(i + S - 1, (i + S - 1) % S) end)
    end)
  end}
end

local function run_ring(k, dt, M, K, TR, seed)
  local x = random_input(dt, M * K, seed or (M * 100 + K))
  local y = ckt.array(dt, M * K):poison()
  local bx, by = dev:alloc(dt, M * K), dev:alloc(dt, M * K)
  bx:upload(x); by:upload(y)
  k:compile{target = "cpu:sm_90a"}:launch{grid = cdiv(M, TR), X = bx, Y = by, M = M, K = K}
  by:download(y)
  return x, y
end

-- A box of one (batch, head) of a 4-d tensor (B, H, S, D), as attention reads K and V: the source
-- window (1, 1, TS, TD) of the BHSD layout or (1, TS, 1, TD) of the BSHD one (modes (b, s, h, d)),
-- the LDS tile TS x TD under the 128B swizzle; each block copies the box of (b, h, s-tile, d-tile)
-- and stores it to Y (B, H, S rounded up to TS, D), so keys past S must read 0 (not the next
-- head's rows)
describe("clipped bulk copies (b:tma_copy{clip = true}): the box stops at the tensor's end", function()
  -- a 64 x 64 f16 tile under the 128B swizzle first gets a marker box (Z, all 7), then a box of
  -- X (M rows); Y is the tile after both: X's M rows, then what the rows past M held
  local function kernel(clip, name)
    return ckt.kernel{name = name or "clipped", block = 128, build = function(b)
      local X = b:pointer("X", "f16", {const = true})
      local Z = b:pointer("Z", "f16", {const = true})
      local Y = b:pointer("Y", "f16")
      local M = b:size("M")
      local gx = ckt.tensor(X, "f16", {shape = {M, 64}}, {pad = true})
      local gz = ckt.tensor(Z, "f16", {shape = {64, 64}})
      local gy = ckt.tensor(Y, "f16", {shape = {64, 64}})
      local s = ckt.tensor("lds", "f16", box_layout("f16", 64, 64, 1, 3))
      local full = b:mbarriers{count = 2}
      local w = ckt.tile_window(s, {64, 64}, {0, 0})
      b:tma_copy{src = ckt.tile_window(gz, {64, 64}, {0, 0}), dst = w, barrier = full, at = 0}
      b:mbarrier_wait{barrier = full, at = 0, phase = 0}
      b:tma_copy{src = ckt.local_tile(gx, {64, 64}, {0, 0}), dst = w, barrier = full, at = 1, clip = clip}
      b:mbarrier_wait{barrier = full, at = 1, phase = 0}
      ckt.tile_window(gy, {64, 64}, {0, 0}):store(w:load())
    end}
  end
  local function run(k, M)
    local x = random_input("f16", M * 64, M)
    local bx, bz, by = dev:alloc("f16", M * 64), dev:alloc("f16", 64 * 64), dev:alloc("f16", 64 * 64)
    bx:upload(x); bz:upload(ckt.array("f16", 64 * 64):fill(7)); by:upload(ckt.array("f16", 64 * 64):poison())
    k:compile{target = "cpu:sm_90a"}:launch{grid = 1, X = bx, Z = bz, Y = by, M = M}
    return x, by:download()
  end

  it("copies the tensor's rows only; the tile's rows past them keep what they held (zeros without clip)", function()
    for _, M in ipairs{16, 1, 37, 64, 100} do
      local x, y = run(kernel(true), M)
      for r = 0, 63 do
        for c = 0, 63 do
          local want = r < M and x[r * 64 + c] or 7
          if y[r * 64 + c] ~= want then error(("M = %d: row %d col %d holds %s, not %s"):format(M, r, c, tostring(y[r * 64 + c]), tostring(want))) end
        end
      end
      local _, y0 = run(kernel(false, "unclipped"), M)
      if M < 64 then assert.equal(0, y0[M * 64], "without clip the rows past M are zeros") end
    end
  end)

  it("CUDA: the transaction count is the clipped rows' bytes, from the extent the launch clips with", function()
    local src = kernel(true):source("sm_90a")
    assert.truthy(src:find("ckt_mbar_expect_tx(ckt_bar, (ckt_u32)(ckt_imin(64, M)) * 128u);", 1, true), src)
    assert.truthy(src:find("clipped at the tensor's end", 1, true))
    assert.truthy(src:find("ckt_mbar_expect_tx(ckt_bar, 8192);", 1, true), "the marker's copy: the whole box")
    -- clipped and whole copies of one tensor and box are different tensor maps
    local both = ckt.kernel{name = "both", block = 128, build = function(b)
      local gx = ckt.tensor(b:pointer("X", "f16", {const = true}), "f16", {shape = {b:size("M"), 64}}, {pad = true})
      local s = ckt.tensor("lds", "f16", box_layout("f16", 64, 64, 1, 3))
      local full = b:mbarriers{count = 1, arrivals = 2}
      local w = ckt.tile_window(s, {64, 64}, {0, 0})
      b:tma_copy{src = ckt.local_tile(gx, {64, 64}, {0, 0}), dst = w, barrier = full, at = 0}
      b:tma_copy{src = ckt.local_tile(gx, {64, 64}, {0, 0}), dst = w, barrier = full, at = 0, clip = true}
      b:mbarrier_wait{barrier = full, at = 0, phase = 0}
    end}
    local bs = both:source("sm_90a")
    assert.truthy(bs:find("ckt_tmap0", 1, true) and bs:find("ckt_tmap1", 1, true), "two tensor maps")
  end)

  it("refuses clip with multicast, and a clip that is not a boolean", function()
    local function try(opts)
      return pcall(ckt.kernel, {name = "bad", block = 128, build = function(b)
        b:cluster(2)
        local gx = ckt.tensor(b:pointer("X", "f16", {const = true}), "f16", {shape = {128, 64}})
        local s = ckt.tensor("lds", "f16", box_layout("f16", 64, 64, 1, 3))
        local full = b:mbarriers{count = 1}
        local o = {src = ckt.tile_window(gx, {64, 64}, {0, 0}), dst = ckt.tile_window(s, {64, 64}, {0, 0}), barrier = full, at = 0}
        for key, v in pairs(opts) do o[key] = v end
        b:tma_copy(o)
      end})
    end
    local ok, err = try{clip = true, multicast = true}
    assert.falsy(ok)
    assert.truthy(tostring(err):find("clip and multicast together", 1, true), tostring(err))
    ok, err = try{clip = "yes"}
    assert.falsy(ok)
    assert.truthy(tostring(err):find("clip", 1, true), tostring(err))
  end)
end)

describe("bulk copies from sources of rank 3 to 5: one box of a 4-d tensor", function()
  local function kernel(dt, layout, TS, TD)
    return ckt.kernel{name = "tma_rank4", block = 32, build = function(b)
      local X = b:pointer("X", dt, {const = true})
      local Y = b:pointer("Y", dt)
      local B, H, S, D = b:size("B"), b:size("H"), b:size("S"), b:size("D", {multiple_of = 8})
      local gx = layout == "bhsd" and ckt.tensor(X, dt, {shape = {B, H, S, D}}, {pad = true})
                 or ckt.tensor(X, dt, {shape = {B, S, H, D}}, {pad = true})
      local SP = (S + TS - 1) // TS * TS
      local gy = ckt.tensor(Y, dt, {shape = {B * (H * SP), D}})
      local s = ckt.tensor("lds", dt, box_layout(dt, TS, TD, 1, 3))
      local full = b:mbarriers{count = 1}
      local bi, hi, st, dt_ = b:block_id(0) // H, b:block_id(0) % H, b:block_id(1), b:block_id(2)
      local src = layout == "bhsd" and ckt.tile_window(gx, {1, 1, TS, TD}, {bi, hi, st * TS, dt_ * TD})
                  or ckt.tile_window(gx, {1, TS, 1, TD}, {bi, st * TS, hi, dt_ * TD})
      local w = ckt.tile_window(s, {TS, TD}, {0, 0})
      b:tma_copy{src = src, dst = w, barrier = full, at = 0}
      b:mbarrier_wait{barrier = full, at = 0, phase = 0}
      ckt.tile_window(gy, {TS, TD}, {(bi * H + hi) * SP + st * TS, dt_ * TD}):store(w:load())
    end}
  end
  for _, c in ipairs{{"f16", "bhsd", 16, 64, {2, 3, 37, 128}}, {"bf16", "bshd", 8, 64, {1, 4, 13, 64}},
                     {"f16", "bshd", 32, 64, {3, 2, 40, 192}}} do
    local dt, layout, TS, TD, sz = c[1], c[2], c[3], c[4], c[5]
    it(("%s %s, a %dx%d box of (B, H, S, D) = (%d, %d, %d, %d)"):format(dt, layout, TS, TD, sz[1], sz[2], sz[3], sz[4]), function()
      local B, H, S, D = sz[1], sz[2], sz[3], sz[4]
      local SP = cdiv(S, TS) * TS
      local x = random_input(dt, B * H * S * D, S * 7 + D)
      local y = ckt.array(dt, B * H * SP * D):poison()
      local bx, by = dev:alloc(dt, B * H * S * D), dev:alloc(dt, B * H * SP * D)
      bx:upload(x); by:upload(y)
      local k = kernel(dt, layout, TS, TD)
      assert.truthy(k:source("sm_90a"):find("ckt_tma_load_4d(", 1, true))
      k:compile{target = "cpu:sm_90a"}:launch{grid = {B * H, SP // TS, D // TD}, X = bx, Y = by, B = B, H = H, S = S, D = D}
      by:download(y)
      local want = ckt.array(dt, B * H * SP * D):fill(0)
      for bi = 0, B - 1 do for hi = 0, H - 1 do for si = 0, S - 1 do for di = 0, D - 1 do
        local from = layout == "bhsd" and ((bi * H + hi) * S + si) * D + di or ((bi * S + si) * H + hi) * D + di
        want[((bi * H + hi) * SP + si) * D + di] = x[from]
      end end end end
      local ok, err, at = y:compare(want, {rtol = 0, atol = 0})
      assert(ok, ("max error %s at %s"):format(tostring(err), tostring(at)))
    end)
  end

  it("the copy's coordinates: innermost first, the box's other mode next, then the rest", function()
    local cu = kernel("f16", "bshd", 16, 64):source("sm_90a")
    assert.truthy(cu:find("the 64 x 16 x 1 x 1 box of X", 1, true), cu)
  end)
end)

describe("a multi-stage ring of bulk copies reusing its mbarriers across phases", function()
  local RINGS = {
    {"f16", {16, 64}, 3, 2, {{40, 5 * 64 + 8}, {16, 64}, {7, 8}}},   -- 128B, 2 stages: phases 0, 1, 0
    {"bf16", {16, 32}, 2, 3, {{20, 11 * 32 + 16}, {8, 40}}},          -- 64B, 3 stages
    {"f32", {16, 8}, 1, 4, {{13, 17 * 8 + 4}, {1, 4}}},               -- 32B, 4 stages
    {"f16", {16, 24}, 0, 2, {{17, 7 * 24 + 16}}},                     -- no swizzle
  }
  for _, c in ipairs(RINGS) do
    local dt, box, sw, S = c[1], c[2], c[3], c[4]
    it(("%s, %dx%d boxes, %s, %d stages"):format(dt, box[1], box[2], sw == 0 and "no swizzle" or (16 << sw) .. "B swizzle", S), function()
      for _, v in ipairs{{}, {moving = true}, {split = 2}} do
        local k = ring_kernel{dtype = dt, box = box, swizzle = sw, stages = S, moving = v.moving, split = v.split}
        for _, mk in ipairs(c[5]) do
          local x, y = run_ring(k, dt, mk[1], mk[2], box[1])
          local ok, err, at = y:compare(x, {rtol = 0, atol = 0})
          assert(ok, ("M=%d K=%d moving=%s split=%s: max error %s at %s"):format(mk[1], mk[2], tostring(v.moving), tostring(v.split), tostring(err), tostring(at)))
        end
      end
    end)
  end

  it("the ring's mbarriers and stages: S mbarriers, the phase parity i // S % 2 at the wait", function()
    local k = ring_kernel{dtype = "f16", box = {16, 64}, swizzle = 3, stages = 3}
    -- three 2048-byte stages, then three mbarriers
    assert.equal(3 * 2048 + 3 * 8, k:lds_bytes())
    local cu = k:source("sm_90a")
    assert.truthy(cu:find("mbarrier set 0: 3 at LDS byte 6144, 1 arrivals a phase", 1, true), cu)
    assert.truthy(cu:find("ckt_mbar_init(ckt_smem_addr(ckt_lds) + 6144 + 8 * ckt_i, 1);", 1, true), cu)
    assert.truthy(cu:find("ckt_mbar_wait(ckt_smem_addr(ckt_lds) + 6144 + 8 * (ckt_u32)(", 1, true), cu)
    assert.truthy(cu:find("%% 2%)%); /%* the phase of this parity has completed"), cu)
    -- one tensor map for every copy of X (same box, same swizzle)
    assert.truthy(cu:find("ckt_tmap ckt_tmap0", 1, true), cu)
    assert.falsy(cu:find("ckt_tmap1", 1, true))
    -- the stage in the copy's LDS address
    assert.truthy(cu:find("ckt_tma_load_2d(ckt_smem_addr(ckt_lds) + 0 + (ckt_u32)(", 1, true), cu)
  end)

  it("stages of a tile smaller than the swizzle's boundary lie a multiple of it apart", function()
    -- 4 x 64 f16 under the 128B swizzle: 512 bytes a tile, stages 1024 bytes apart
    local k = ring_kernel{dtype = "f16", box = {4, 64}, swizzle = 3, stages = 2}
    assert.equal(1024 + 512 + 2 * 8, k:lds_bytes())
    assert.truthy(k:source("sm_90a"):find("mbarrier set 0: 2 at LDS byte 1536", 1, true))
    for _, mk in ipairs{{4, 5 * 64}, {9, 3 * 64 + 8}} do
      local x, y = run_ring(k, "f16", mk[1], mk[2], 4)
      assert.truthy((y:compare(x, {rtol = 0, atol = 0})), ("M=%d K=%d"):format(mk[1], mk[2]))
    end
  end)

  it("a wait on the wrong parity (phase 0 every time) fails the launch instead of reading stale tiles", function()
    local k = ring_kernel{dtype = "f16", box = {16, 64}, swizzle = 3, stages = 2, phase = 0}
    -- one pass over the ring is right
    local x, y = run_ring(k, "f16", 16, 128, 16)
    assert.truthy((y:compare(x, {rtol = 0, atol = 0})))
    -- the second use of each mbarrier waits for phase 0 again while phase 1 is the one in progress
    local ok, err = pcall(run_ring, k, "f16", 16, 5 * 64, 16)
    assert.falsy(ok)
    -- phase 2's copy arrives before phase 1 completed, or a wait finds the phase after the one
    -- it completed and never its arrivals (the emulation of 71b5e1e)
    local msg = tostring(err)
    assert.truthy(msg:find("mbarrier [01] of set 0"), msg)
    assert.truthy(msg:find("could never complete", 1, true) or msg:find("before its previous phase completed", 1, true), msg)
  end)
end)

describe("the sources of bulk copies and mbarrier waits", function()
  local o = {dtype = "f16", box = {16, 64}, swizzle = 3}
  local k = box_kernel(o)

  it("CUDA (sm_90a, sm_90): thread 0 initializes the mbarriers, expects the box's bytes and issues the copy; every thread waits", function()
    for _, target in ipairs{"sm_90a", "sm_90"} do
      local cu = k:source(target)
      -- the prelude defines these functions too: look for their call sites
      assert.truthy(cu:find("ckt_mbar_init(ckt_smem_addr(ckt_lds) + 2048 + 8 * ckt_i, 1);", 1, true), cu)
      assert.truthy(cu:find("ckt_mbar_fence_init();", 1, true))
      assert.truthy(cu:find("ckt_mbar_expect_tx(ckt_bar, 2048);", 1, true), cu)
      assert.truthy(cu:find("ckt_tma_load_2d(ckt_smem_addr(ckt_lds) + 0, &ckt_tmap0, (int)(", 1, true), cu)
      assert.truthy(cu:find("ckt_mbar_wait(ckt_smem_addr(ckt_lds) + 2048 + 8 * (ckt_u32)(0), (ckt_u32)(", 1, true), cu)
      assert.truthy(cu:find("128B swizzle), 2048 bytes on mbarrier 0", 1, true), cu)
      -- the LDS starts on the 1024-byte boundary the swizzle needs; the map is a parameter
      assert.truthy(cu:find("__align__(1024)", 1, true))
      assert.truthy(cu:find("ckt_tmap ckt_tmap0", 1, true))
      -- the copy is thread 0's, the wait is not in a thread branch
      local copy = cu:find("ckt_tma_load_2d(ckt_smem_addr(", 1, true)
      local before = cu:sub(1, copy - 1)
      assert.truthy(before:find("if %(tid == 0%) {%s*const ckt_u32 ckt_bar = [^\n]*\n%s*ckt_mbar_expect_tx%(ckt_bar, 2048%);%s*$"), before:sub(-300))
    end
  end)

  it("C (cpu:sm_90a): the copy queued with its mbarrier, landed by the wait", function()
    local c = k:source("cpu:sm_90a")
    assert.truthy(c:find("ckt_mbar_state ckt_mbar0[1];", 1, true), c)
    assert.truthy(c:find("ckt_mbar_init(ckt_mbar0, 1, 1);", 1, true))
    assert.truthy(c:find("ckt_tma_push%(&ckt_tmaq, ckt_mbar0, [^\n]*%(long long%)%(0%), ckt_tmap0, %(const long long%[5%]%){%(long long%)%(w%d+_1%), %(long long%)%(w%d+_0%)}, 1, ckt_lds, 2056u"), c)
    assert.truthy(c:find("ckt_mbar_wait(&ckt_tmaq, ckt_mbar0, 0, (long long)(0), (int)(", 1, true), c)
    assert.truthy(c:find("free(ckt_tmaq.e);", 1, true))
  end)

  it("the tensor map is derived at launch, not an argument", function()
    local names = {}
    for _, p in ipairs(k:signature()) do names[#names + 1] = p.name end
    assert.same({"X", "Y", "M", "N"}, names)
  end)

  it("boxes of other shapes get their own tensor maps", function()
    local k2 = ckt.kernel{name = "two_maps", block = 64, build = function(b)
      local X = b:pointer("X", "f16", {const = true})
      local gx = ckt.tensor(X, "f16", {shape = {64, 64}})
      local s = ckt.tensor("lds", "f16", ckt.layout({16, 64}, {64, 1}))
      local full = b:mbarriers{count = 2}
      b:tma_copy{src = ckt.tile_window(gx, {16, 64}, {0, 0}), dst = ckt.tile_window(s, {16, 64}, {0, 0}), barrier = full, at = 0}
      b:tma_copy{src = ckt.tile_window(gx, {8, 64}, {8, 0}), dst = ckt.tile_window(s, {8, 64}, {8, 0}), barrier = full, at = 1}
      b:tma_copy{src = ckt.tile_window(gx, {16, 64}, {16, 0}), dst = ckt.tile_window(s, {16, 64}, {0, 0}), barrier = full, at = 1}
    end}
    local cu = k2:source("sm_90a")
    assert.truthy(cu:find("ckt_tmap ckt_tmap1", 1, true), cu)
    assert.falsy(cu:find("ckt_tmap2", 1, true))
  end)

  it("targets without bulk copies refuse to emit or compile them", function()
    for _, target in ipairs{"gfx90a", "sm_80", "cpu:gfx90a", "cpu:sm_80", "cpu"} do
      local ok, err = pcall(k.source, k, target)
      assert.falsy(ok, target)
      assert.truthy(tostring(err):find(("tma_copy: target '%s' has no bulk tensor copies or mbarriers"):format(target), 1, true), tostring(err))
      assert.truthy(tostring(err):find("sm_90, sm_90a, cpu:sm_90, cpu:sm_90a", 1, true))
    end
    for _, target in ipairs{"cpu:gfx90a", "gfx90a", "sm_80"} do
      local ok, err = pcall(function() return k:compile{target = target} end)
      assert.falsy(ok, target)
      assert.truthy(tostring(err):find(("target '%s' has no bulk tensor copies"):format(target), 1, true), tostring(err))
    end
    -- a wait alone is refused too
    local kw = ckt.kernel{name = "wait_only", block = 32, build = function(b)
      local full = b:mbarriers{count = 1}
      b:mbarrier_wait{barrier = full, at = 0, phase = 0}
    end}
    local ok, err = pcall(kw.source, kw, "sm_80")
    assert.falsy(ok)
    assert.truthy(tostring(err):find("mbarrier_wait: target 'sm_80' has no bulk tensor copies or mbarriers", 1, true), tostring(err))
  end)

  it("a launch whose tensor cannot have a tensor map (strides not multiples of 16 bytes) is refused, naming the tensor", function()
    local ok, err = pcall(run_box, k, o, 40, 70) -- 140-byte rows
    assert.falsy(ok)
    local msg = tostring(err)
    assert.truthy(msg:find("the tensor map of 'X'", 1, true), msg)
    assert.truthy(msg:find("multiples of 16 bytes", 1, true), msg)
  end)
end)

describe("the emulation's mbarrier phases", function()
  -- X (8 x 32 f32) -> LDS by `copies` boxes on mbarrier 0 of {count, arrivals}, then a wait on
  -- (at, phase)
  local function kernel(o)
    return ckt.kernel{name = "phases", block = 32, build = function(b)
      local X = b:pointer("X", "f32", {const = true})
      local Y = b:pointer("Y", "f32")
      local gx = ckt.tensor(X, "f32", {shape = {8, 32}})
      local s = ckt.tensor("lds", "f32", ckt.layout({8, 32}, {32, 1}))
      local full = b:mbarriers{count = o.count or 1, arrivals = o.arrivals or 1}
      local w = ckt.tile_window(s, {8, 32}, {0, 0})
      for _ = 1, o.copies do
        b:tma_copy{src = ckt.tile_window(gx, {8, 32}, {0, 0}), dst = w, barrier = full, at = 0}
      end
      for _, ph in ipairs(o.waits) do b:mbarrier_wait{barrier = full, at = ph[1], phase = ph[2]} end
      ckt.tile_window(ckt.tensor(Y, "f32", {shape = {8, 32}}), {8, 32}, {0, 0}):store(w:load())
    end}
  end
  local function launch(k)
    local x = random_input("f32", 256, 9)
    local bx, by = dev:alloc("f32", 256), dev:alloc("f32", 256)
    bx:upload(x); by:upload(ckt.array("f32", 256):poison())
    k:compile{target = "cpu:sm_90a"}:launch{grid = 2, X = bx, Y = by}
    local y = ckt.array("f32", 256)
    by:download(y)
    return x, y
  end
  -- the launch fails naming the mbarrier and one of the reasons (default: the phase can never
  -- complete)
  local function never(o, set_bar, reasons)
    local ok, err = pcall(launch, kernel(o))
    assert.falsy(ok, "the launch passed")
    local msg, found = tostring(err), false
    for _, r in ipairs(reasons or {"could never complete"}) do found = found or msg:find(r, 1, true) ~= nil end
    assert.truthy(found, msg)
    assert.truthy(msg:find(set_bar, 1, true), msg)
  end

  it("a completed phase: its wait passes, and a second wait on the same parity passes at once", function()
    local x, y = launch(kernel{copies = 1, waits = {{0, 0}, {0, 0}}})
    assert.truthy((y:compare(x, {rtol = 0, atol = 0})))
    x, y = launch(kernel{copies = 2, arrivals = 2, waits = {{0, 0}}})
    assert.truthy((y:compare(x, {rtol = 0, atol = 0})))
  end)

  it("a phase that never gets its arrivals fails the launch (a hang on a GPU)", function()
    never({copies = 1, arrivals = 2, waits = {{0, 0}}}, "mbarrier 0 of set 0")    -- one arrival of two
    never({copies = 0, waits = {{0, 0}}}, "mbarrier 0 of set 0")                   -- none at all
    never({copies = 1, count = 2, waits = {{1, 0}}}, "mbarrier 1 of set 0")        -- the other mbarrier
    never({copies = 1, waits = {{0, 0}, {0, 1}}}, "mbarrier 0 of set 0")           -- phase 1 gets none
    -- a second arrival on a phase expecting one: it belongs to phase 1, which starts before the
    -- wait completes phase 0 (a race on a GPU; the emulation of 71b5e1e reports it as a phase
    -- that cannot complete)
    never({copies = 2, waits = {{0, 0}}}, "mbarrier 0 of set 0", {"could never complete", "before its previous phase completed"})
  end)
end)

describe("bulk copies and mbarriers refuse misuse", function()
  local function fails(pattern, body, block)
    local ok, err = pcall(ckt.kernel, {name = "bad", block = block or 64, build = function(b)
      local X = b:pointer("X", "f16", {const = true})
      local gx = ckt.tensor(X, "f16", {shape = {64, 64}})
      body(b, gx, X)
    end})
    assert.falsy(ok, pattern)
    assert.truthy(tostring(err):find(pattern, 1, true), ("%q lacks %q"):format(tostring(err), pattern))
  end
  local L = ckt.layout({16, 64}, {64, 1})
  local SW = box_layout("f16", 16, 64, 1, 3)
  local function win(t, o) return ckt.tile_window(t, {16, 64}, o or {0, 0}) end
  -- a valid copy but for what `f` changes: f(b, gx, s, m, X) -> the copy's table; m is a set of
  -- two mbarriers made first, s a 16 x 64 128B-swizzled LDS tile at LDS byte 0 (mbarriers take
  -- their LDS after every tensor: the offsets of the tensors f makes are as if m were not there)
  local function copy_fails(pattern, f)
    fails(pattern, function(b, gx, X)
      local m = b:mbarriers{count = 2}
      local s = ckt.tensor("lds", "f16", SW)
      b:tma_copy(f(b, gx, s, m, X))
    end)
  end

  it("b:mbarriers: count and arrivals", function()
    fails("mbarriers: count 0 outside 1..32", function(b) b:mbarriers{count = 0} end)
    fails("mbarriers: count 33 outside 1..32", function(b) b:mbarriers{count = 33} end)
    fails("mbarriers: count -1 outside 1..32", function(b) b:mbarriers{count = -1} end)
    fails("mbarriers: arrivals 0 outside 1..64 (the block's threads)", function(b) b:mbarriers{count = 2, arrivals = 0} end)
    fails("mbarriers: arrivals 65 outside 1..64 (the block's threads)", function(b) b:mbarriers{count = 2, arrivals = 65} end)
    fails("mbarriers: arrivals 129 outside 1..128", function(b) b:mbarriers{count = 2, arrivals = 129} end, 128)
    fails("mbarriers: more than 8 sets", function(b) for _ = 1, 9 do b:mbarriers{count = 1} end end)
  end)

  it("b:mbarriers: types, missing and unknown fields", function()
    fails("bad argument #1 to 'mbarriers' (field 'count' must be an integer, got string)", function(b) b:mbarriers{count = "2"} end)
    fails("bad argument #1 to 'mbarriers' (field 'arrivals' must be an integer, got 1.5)", function(b) b:mbarriers{count = 2, arrivals = 1.5} end)
    fails("bad argument #1 to 'mbarriers' (unknown option 'arivals')", function(b) b:mbarriers{count = 2, arivals = 1} end)
    fails("bad argument #1 to 'mbarriers' (table expected, got number)", function(b) b:mbarriers(3) end)
    fails("bad argument #1 to 'mbarriers' (field 'count' is required)", function(b) b:mbarriers{} end)
    fails("bad argument #1 to 'mbarriers' (field 'count' is required)", function(b) b:mbarriers{arrivals = 1} end)
  end)

  it("b:tma_copy: the barrier", function()
    copy_fails("bad argument #1 to 'tma_copy' (field 'barrier' (from b:mbarriers{...}) is required)", function(_, gx, s) return {src = win(gx), dst = win(s), at = 0} end)
    copy_fails("bad argument #1 to 'tma_copy' (field 'barrier' must be mbarriers (b:mbarriers{...}), got ckt.layout)", function(_, gx, s) return {src = win(gx), dst = win(s), barrier = ckt.layout(4), at = 0} end)
    copy_fails("bad argument #1 to 'tma_copy' (field 'barrier' must be mbarriers (b:mbarriers{...}), got ckt.window)", function(_, gx, s) return {src = win(gx), dst = win(s), barrier = win(s), at = 0} end)
    copy_fails("bad argument #1 to 'tma_copy' (field 'barrier' must be mbarriers (b:mbarriers{...}), got number)", function(_, gx, s) return {src = win(gx), dst = win(s), barrier = 3, at = 0} end)
    local other
    ckt.kernel{name = "other", block = 32, build = function(b) other = b:mbarriers{count = 2} end}
    copy_fails("bad argument #1 to 'tma_copy' (field 'barrier' belongs to another kernel)", function(_, gx, s) return {src = win(gx), dst = win(s), barrier = other, at = 0} end)
    copy_fails("bad argument #1 to 'tma_copy' (field 'at' is required)", function(_, gx, s, m) return {src = win(gx), dst = win(s), barrier = m} end)
    copy_fails("bad argument #1 to 'tma_copy' (field 'at': number or kernel expression expected, got table)", function(_, gx, s, m) return {src = win(gx), dst = win(s), barrier = m, at = {0}} end)
    local other_at
    ckt.kernel{name = "other", block = 32, build = function(b) other_at = b:block_id(0) end}
    copy_fails("bad argument #1 to 'tma_copy' (field 'at': the expression belongs to another kernel)", function(_, gx, s, m) return {src = win(gx), dst = win(s), barrier = m, at = other_at} end)
    copy_fails("tma_copy: the mbarrier is not provably in 0..1 (range 2..2)", function(_, gx, s, m) return {src = win(gx), dst = win(s), barrier = m, at = 2} end)
    copy_fails("tma_copy: the mbarrier is not provably in 0..1 (range -1..-1)", function(_, gx, s, m) return {src = win(gx), dst = win(s), barrier = m, at = -1} end)
    copy_fails("tma_copy: the mbarrier must be a block-uniform integer", function(b, gx, s, m) return {src = win(gx), dst = win(s), barrier = m, at = b:thread_id() % 2} end)
    fails("tma_copy: the mbarrier is not provably in 0..1 (range 0..2)", function(b, gx)
      local s, m = ckt.tensor("lds", "f16", SW), b:mbarriers{count = 2}
      local w, g = win(s), win(gx)
      b:loop(3, function(i) b:tma_copy{src = g, dst = w, barrier = m, at = i} end)
    end)
    fails("tma_copy: inside a branch whose condition depends on the thread id", function(b, gx)
      local s, m = ckt.tensor("lds", "f16", SW), b:mbarriers{count = 1}
      local w, g = win(s), win(gx)
      b:when(ckt.lt(b:thread_id(), 1), function() b:tma_copy{src = g, dst = w, barrier = m, at = 0} end)
    end)
  end)

  it("b:tma_copy: the windows", function()
    copy_fails("tma_copy: copies a window of a global tensor (here global) into a window of an LDS tensor (here global)",
               function(_, gx, _, m) return {src = win(gx), dst = win(gx, {16, 0}), barrier = m, at = 0} end)
    copy_fails("tma_copy: copies a window of a global tensor (here lds) into a window of an LDS tensor (here lds)",
               function(_, _, s, m) return {src = win(ckt.tensor("lds", "f16", L)), dst = win(s), barrier = m, at = 0} end)
    copy_fails("(here lds) into a window of an LDS tensor (here global)",
               function(_, gx, s, m) return {src = win(s), dst = win(gx), barrier = m, at = 0} end)
    copy_fails("tma_copy: src: tile window expected, got ckt.ktensor", function(_, gx, s, m) return {src = gx, dst = win(s), barrier = m, at = 0} end)
    copy_fails("tma_copy: dst: tile window expected, got nil", function(_, gx, _, m) return {src = win(gx), barrier = m, at = 0} end)
    copy_fails("bad argument #1 to 'tma_copy' (unknown option 'swizzle')", function(_, gx, s, m) return {src = win(gx), dst = win(s), barrier = m, at = 0, swizzle = 3} end)
    copy_fails("tma_copy: the source holds f16 but the destination f32", function(_, gx, _, m)
      return {src = win(gx), dst = win(ckt.tensor("lds", "f32", ckt.layout({16, 64}, {64, 1}))), barrier = m, at = 0}
    end)
    copy_fails("tma_copy: a source of rank 2..5 and a rank-2 destination (here 3 and 3)", function(_, _, _, m, X)
      local g3 = ckt.tensor(X, "f16", {shape = {2, 16, 64}})
      local s3 = ckt.tensor("lds", "f16", ckt.layout({2, 16, 64}, {1024, 64, 1}))
      return {src = ckt.tile_window(g3, {2, 16, 64}, {0, 0, 0}), dst = ckt.tile_window(s3, {2, 16, 64}, {0, 0, 0}), barrier = m, at = 0}
    end)
    copy_fails("tma_copy: a source of rank 2..5 and a rank-2 destination (here 1 and 2)", function(_, _, s, m, X)
      return {src = ckt.tile_window(ckt.tensor(X, "f16", {shape = {1024}}), {1024}, {0}), dst = win(s), barrier = m, at = 0}
    end)
    copy_fails("tma_copy: the source window is longer than 1 in more than two dims (a box fills a rank-2 LDS tile)", function(_, _, s, m, X)
      return {src = ckt.tile_window(ckt.tensor(X, "f16", {shape = {2, 16, 64}}), {2, 16, 64}, {0, 0, 0}), dst = win(s), barrier = m, at = 0}
    end)
    copy_fails("tma_copy: the windows differ in dim 0 (2 and 16 elements)", function(_, _, s, m, X)
      return {src = ckt.tile_window(ckt.tensor(X, "f16", {shape = {2, 1, 64}}), {2, 1, 64}, {0, 0, 0}), dst = win(s), barrier = m, at = 0}
    end)
    copy_fails("tma_copy: dim 2 of 'X' is the contiguous one, but the window is 1 long there", function(_, _, s, m, X)
      return {src = ckt.tile_window(ckt.tensor(X, "f16", {shape = {16, 64, 4}}), {16, 64, 1}, {0, 0, 0}), dst = win(s), barrier = m, at = 0}
    end)
    copy_fails("tma_copy: the windows differ in dim 0 (8 and 16 elements)", function(_, gx, s, m)
      return {src = ckt.tile_window(gx, {8, 64}, {0, 0}), dst = win(s), barrier = m, at = 0}
    end)
    copy_fails("tma_copy: no dimension of 'X' has stride 1 (a tensor map's innermost dimension is contiguous)", function(_, _, s, m, X)
      return {src = win(ckt.tensor(X, "f16", {shape = {64, 64}, stride = {128, 2}})), dst = win(s), barrier = m, at = 0}
    end)
    fails("tma_copy: the destination window's origin must be constant (dim 0 is not); choose the stage with t:stage(i)", function(b, gx)
      local s, m = ckt.tensor("lds", "f16", ckt.layout({32, 64}, {64, 1})), b:mbarriers{count = 1}
      b:tma_copy{src = win(gx), dst = win(s, {b:block_id(0) % 2 * 16, 0}), barrier = m, at = 0}
    end)
    fails("tma_copy: the destination window's origin must be constant (dim 0 is not)", function(b, gx)
      local s, m = ckt.tensor("lds", "f16", ckt.layout({32, 64}, {64, 1})), b:mbarriers{count = 1}
      local w = win(s)
      w:move{16, 0}
      b:tma_copy{src = win(gx), dst = w, barrier = m, at = 0}
    end)
    fails("move: the window is the LDS tile of a bulk tensor copy or store (its origin stays where the tile was checked)", function(b, gx)
      local s, m = ckt.tensor("lds", "f16", ckt.layout({32, 64}, {64, 1})), b:mbarriers{count = 1}
      local w = win(s)
      b:tma_copy{src = win(gx), dst = w, barrier = m, at = 0}
      w:move{16, 0}
    end)
  end)

  it("b:tma_copy: LDS tiles the copy cannot write", function()
    -- column-major: the copy writes the box row by row (mode 1, X's contiguous one, innermost)
    copy_fails("tma_copy: tma: box element (0, 1) is at LDS byte 2080, but the copy writes it to byte 2050: the tile must be the box row by row (mode 1 innermost)",
               function(_, gx, _, m) return {src = win(gx), dst = win(ckt.tensor("lds", "f16", ckt.layout({16, 64}, {1, 16}))), barrier = m, at = 0} end)
    -- padded rows (CK's remedy for bank conflicts)
    copy_fails("tma_copy: tma: box element (1, 0) is at LDS byte 2192, but the copy writes it to byte 2176",
               function(_, gx, _, m) return {src = win(gx), dst = win(ckt.tensor("lds", "f16", ckt.layout({16, 64}, {72, 1}))), barrier = m, at = 0} end)
    -- the swizzle on byte addresses given on f16 elements
    copy_fails("tma_copy: tma: the LDS swizzle Sw<3,4,3> on 2-byte elements is not one of the copy's swizzles Sw<1..3,3,3> (32B, 64B, 128B)",
               function(_, gx, _, m) return {src = win(gx), dst = win(ckt.tensor("lds", "f16", ckt.composed(ckt.swizzle(3, 4, 3), 0, L))), barrier = m, at = 0} end)
    -- 128-byte rows under the 64B swizzle
    copy_fails("tma_copy: tma: the box's contiguous extent is 128 bytes: a multiple of 16, at most the swizzle's span",
               function(_, gx, _, m) return {src = win(gx), dst = win(ckt.tensor("lds", "f16", box_layout("f16", 16, 64, 1, 2))), barrier = m, at = 0} end)
    -- 8-byte rows
    copy_fails("tma_copy: tma: the box's contiguous extent is 8 bytes: a multiple of 16", function(_, gx, _, m)
      return {src = ckt.tile_window(gx, {16, 4}, {0, 0}), dst = ckt.tile_window(ckt.tensor("lds", "f16", ckt.layout({16, 4}, {4, 1})), {16, 4}, {0, 0}), barrier = m, at = 0}
    end)
    -- a box that starts off the swizzle's 1024-byte atom: rows 4.. of a 128B-swizzled tile
    copy_fails("a copy with a swizzle starts on a 1024-byte boundary", function(_, gx, _, m)
      return {src = ckt.tile_window(gx, {8, 64}, {0, 0}), dst = ckt.tile_window(ckt.tensor("lds", "f16", box_layout("f16", 16, 64, 1, 3)), {8, 64}, {4, 0}), barrier = m, at = 0}
    end)
    -- an unswizzled tile 16 bytes past a 12-byte tensor (only swizzled tiles are placed on the
    -- copy's boundary; stages lie a multiple of it apart, see the ring above)
    copy_fails("tma_copy: tma: the tile starts at LDS byte 2064; a copy starts on a 128-byte boundary", function(_, gx, _, m)
      ckt.tensor("lds", "f32", ckt.layout(3))
      return {src = win(gx), dst = win(ckt.tensor("lds", "f16", L)), barrier = m, at = 0}
    end)
  end)

  it("b:mbarrier_wait", function()
    local other
    ckt.kernel{name = "other", block = 32, build = function(b) other = b:mbarriers{count = 2} end}
    fails("bad argument #1 to 'mbarrier_wait' (field 'barrier' (from b:mbarriers{...}) is required)", function(b) b:mbarrier_wait{at = 0, phase = 0} end)
    fails("bad argument #1 to 'mbarrier_wait' (field 'barrier' must be mbarriers (b:mbarriers{...}), got ckt.layout)", function(b) b:mbarrier_wait{barrier = ckt.layout(4), at = 0, phase = 0} end)
    fails("bad argument #1 to 'mbarrier_wait' (field 'barrier' must be mbarriers (b:mbarriers{...}), got string)", function(b) b:mbarrier_wait{barrier = "full", at = 0, phase = 0} end)
    fails("bad argument #1 to 'mbarrier_wait' (field 'barrier' belongs to another kernel)", function(b) b:mbarrier_wait{barrier = other, at = 0, phase = 0} end)
    fails("bad argument #1 to 'mbarrier_wait' (field 'at' is required)", function(b) b:mbarrier_wait{barrier = b:mbarriers{count = 2}, phase = 0} end)
    fails("bad argument #1 to 'mbarrier_wait' (field 'phase' is required)", function(b) b:mbarrier_wait{barrier = b:mbarriers{count = 2}, at = 0} end)
    fails("bad argument #1 to 'mbarrier_wait' (unknown option 'parity')", function(b) b:mbarrier_wait{barrier = b:mbarriers{count = 2}, at = 0, parity = 0} end)
    fails("bad argument #1 to 'mbarrier_wait' (field 'at': number or kernel expression expected, got string)", function(b) b:mbarrier_wait{barrier = b:mbarriers{count = 2}, at = "x", phase = 0} end)
    fails("bad argument #1 to 'mbarrier_wait' (field 'phase': number or kernel expression expected, got ckt.layout)", function(b) b:mbarrier_wait{barrier = b:mbarriers{count = 2}, at = 0, phase = ckt.layout(2)} end)
    fails("mbarrier_wait: the mbarrier is not provably in 0..1 (range 2..2)", function(b) b:mbarrier_wait{barrier = b:mbarriers{count = 2}, at = 2, phase = 0} end)
    fails("mbarrier_wait: the mbarrier is not provably in 0..1 (range 0..3)", function(b)
      local m = b:mbarriers{count = 2}
      b:loop(4, function(i) b:mbarrier_wait{barrier = m, at = i, phase = 0} end)
    end)
    fails("mbarrier_wait: the mbarrier must be a block-uniform integer", function(b) b:mbarrier_wait{barrier = b:mbarriers{count = 2}, at = b:thread_id() % 2, phase = 0} end)
    fails("mbarrier_wait: the phase must be a block-uniform integer", function(b) b:mbarrier_wait{barrier = b:mbarriers{count = 2}, at = 0, phase = b:thread_id()} end)
    fails("mbarrier_wait: inside a branch whose condition depends on the thread id", function(b)
      local m = b:mbarriers{count = 2}
      b:when(ckt.lt(b:thread_id(), 3), function() b:mbarrier_wait{barrier = m, at = 0, phase = 0} end)
    end)
    -- i % 2 in a loop is provably in range; a block-uniform branch is fine
    ckt.kernel{name = "ok", block = 64, build = function(b)
      local m = b:mbarriers{count = 2}
      assert.equal(2, m:count())
      b:loop(4, function(i) b:when(ckt.lt(b:block_id(0), 3), function() b:mbarrier_wait{barrier = m, at = i % 2, phase = i // 2} end) end)
    end}
  end)
end)

-- b:tma_store: an LDS tile written to a global tensor by one bulk tensor store (the reverse of
-- b:tma_copy), on cpu:sm_90a against the input element by element: X is copied into LDS, doubled
-- by the block's threads into a second (swizzled) LDS tile, and that tile stored into Y, whose
-- rows are padded (stride NP > N): a box past the tensor's edge writes nothing there, so the
-- padding and the rows past M keep their poison.
describe("bulk tensor stores (b:tma_store)", function()
  local function store_kernel(dt, TR, TC, sw)
    return ckt.kernel{name = "tma_store", block = 64, build = function(b)
      local X = b:pointer("X", dt, {const = true})
      local Y = b:pointer("Y", dt)
      local M, N, NP = b:size("M"), b:size("N"), b:size("NP")
      local gx = ckt.tensor(X, dt, {shape = {M, N}, stride = {N, 1}}, {pad = true})
      local gy = ckt.tensor(Y, dt, {shape = {M, N}, stride = {NP, 1}}, {pad = true})
      local full = b:mbarriers{count = 1}
      local s = ckt.tensor("lds", dt, box_layout(dt, TR, TC, 1, 0))
      local d = ckt.tensor("lds", dt, box_layout(dt, TR, TC, 1, sw))
      local tr, tc = b:block_id(0), b:block_id(1)
      b:tma_copy{src = ckt.local_tile(gx, {TR, TC}, {tr, tc}), dst = ckt.tile_window(s, {TR, TC}, {0, 0}), barrier = full, at = 0}
      b:mbarrier_wait{barrier = full, at = 0, phase = 0}
      local v = ckt.tile_window(s, {TR, TC}, {0, 0}):load()
      ckt.tile_window(d, {TR, TC}, {0, 0}):store(b:map(function(x) return x + x end, v))
      b:sync() -- the threads' LDS stores before the store reads them
      b:tma_store{src = ckt.tile_window(d, {TR, TC}, {0, 0}), dst = ckt.local_tile(gy, {TR, TC}, {tr, tc})}
    end}
  end

  for _, c in ipairs{{"f16", {16, 64}, 3, 40, 136}, {"f16", {8, 32}, 2, 21, 72}, {"f32", {8, 32}, 3, 13, 40}, {"bf16", {16, 16}, 1, 17, 24}, {"f16", {4, 64}, 0, 9, 64}} do
    local dt, box, sw, M, N = c[1], c[2], c[3], c[4], c[5]
    it(("%s, a %dx%d box, %s, %d x %d (past the tensor's edge nothing is written)"):format(dt, box[1], box[2], sw == 0 and "no swizzle" or (16 << sw) .. "B swizzle", M, N), function()
      local k = store_kernel(dt, box[1], box[2], sw)
      local NP = N + 16
      local x = random_input(dt, M * N, M + N)
      local y = ckt.array(dt, (M + box[1]) * NP):poison()
      local poison = y[0]
      local bx, by = dev:alloc(dt, #x), dev:alloc(dt, #y)
      bx:upload(x); by:upload(y)
      k:compile{target = "cpu:sm_90a"}:launch{grid = {cdiv(M, box[1]), cdiv(N, box[2])}, X = bx, Y = by, M = M, N = N, NP = NP}
      by:download(y)
      for r = 0, M + box[1] - 1 do
        for col = 0, NP - 1 do
          local got = y[r * NP + col]
          if r < M and col < N then
            assert(got == x[r * N + col] * 2, ("Y[%d, %d] = %s, want %s"):format(r, col, tostring(got), tostring(x[r * N + col] * 2)))
          else
            assert(got ~= got or got == poison, ("Y[%d, %d] = %s outside the tensor: written"):format(r, col, tostring(got)))
          end
        end
      end
    end)
  end

  it("CUDA: thread 0 stores and waits for the store's reads; the barrier before fences the threads' stores for the async proxy", function()
    local cu = store_kernel("f16", 16, 64, 3):source("sm_90a")
    assert.truthy(cu:find("ckt_tma_store_2d(&ckt_tmap1, ", 1, true), cu)
    assert.truthy(cu:find("ckt_bulk_commit%(%);\n%s*ckt_bulk_read_wait%(%);"), cu)
    local fence = cu:find("fence.proxy.async.shared::cta", 1, true)
    local store = cu:find("ckt_tma_store_2d(&", 1, true)
    assert.truthy(fence and fence < store, "a fence before the store")
    assert.truthy(cu:find("bulk tensor store: ", 1, true))
    local ok, exe = pcall(function() return store_kernel("f16", 16, 64, 3):compile{target = "sm_90a", compile_only = true} end)
    if not ok and tostring(exe):find("NVRTC") and tostring(exe):find("not found") then pending("NVRTC not installed: " .. tostring(exe)) return end
    assert(ok, tostring(exe))
  end)

  it("wait = false: the store ends at once; b:tma_store_wait() waits for the reads, and the kernel's end does by itself", function()
    local function k_nowait(explicit)
      return ckt.kernel{name = "tma_store_nowait", block = 64, build = function(b)
        local Y = b:pointer("Y", "f16")
        local gy = ckt.tensor(Y, "f16", {shape = {16, 64}, stride = {64, 1}})
        local s = ckt.tensor("lds", "f16", ckt.layout({16, 64}, {64, 1}))
        local w = ckt.tile_window(s, {16, 64}, {0, 0})
        local r = w:load()
        b:clear(r, 3)
        w:store(r)
        b:sync()
        b:tma_store{src = w, dst = ckt.tile_window(gy, {16, 64}, {0, 0}), wait = false}
        if explicit then b:tma_store_wait(); b:sync() end
      end}
    end
    local cu = k_nowait(false):source("sm_90a")
    local at = cu:find("ckt_tma_store_2d(&", 1, true)
    local rest = cu:sub(at)
    local commit = rest:find("ckt_bulk_commit();", 1, true)
    local wait = rest:find("ckt_bulk_read_wait();", 1, true)
    assert.truthy(commit and wait and wait > commit, cu)
    assert.truthy(rest:sub(commit, wait):find("}", 1, true), "the wait is not the store's own: " .. rest)
    assert.truthy(k_nowait(true):source("sm_90a"):find("if (tid == 0) ckt_bulk_read_wait();", 1, true))
    -- the emulation stores at once: Y holds the tile
    local y = ckt.array("f16", 16 * 64):poison()
    local by = dev:alloc("f16", #y)
    by:upload(y)
    k_nowait(true):compile{target = "cpu:sm_90a"}:launch{grid = 1, Y = by}
    by:download(y)
    for i = 0, #y - 1 do assert.equal(3, y[i]) end
  end)

  it("refuses what it cannot store, naming the rule", function()
    local function refused(build, want)
      local ok, err = pcall(ckt.kernel, {name = "bad_store", block = 64, build = build})
      assert.falsy(ok)
      assert.truthy(tostring(err):find(want, 1, true), tostring(err))
    end
    local function parts(b, const)
      local X = b:pointer("X", "f16", {const = const})
      local M = b:size("M")
      local g = ckt.tensor(X, "f16", {shape = {M, 64}, stride = {64, 1}})
      local s = ckt.tensor("lds", "f16", ckt.layout({16, 64}, {64, 1}))
      return ckt.tile_window(g, {16, 64}, {0, 0}), ckt.tile_window(s, {16, 64}, {0, 0}), g, s
    end
    refused(function(b) local gw, lw = parts(b); b:tma_store{src = gw, dst = lw} end, "tma_store: stores a window of an LDS tensor (here global) into a window of a global tensor (here lds)")
    refused(function(b) local gw, lw = parts(b, true); b:tma_store{src = lw, dst = gw} end, "tma_store: 'X' is read-only")
    refused(function(b) local gw, lw = parts(b); b:when(ckt.lt(b:thread_id(), 32), function() b:tma_store{src = lw, dst = gw} end) end, "tma_store: inside a branch that depends on the thread id")
    refused(function(b) local _, lw, g = parts(b); b:tma_store{src = lw, dst = ckt.tile_window(g, {8, 64}, {0, 0})} end, "tma_store: the windows differ in dim 0 (8 and 16 elements)")
    refused(function(b) local gw, lw = parts(b); b:tma_store{src = lw, dst = gw, barrier = 1} end, "tma_store")
    refused(function(b) local gw, lw = parts(b); b:tma_store{src = lw, dst = gw, wait = 1} end, "field 'wait' must be a boolean")
    refused(function(b) b:when(ckt.lt(b:thread_id(), 32), function() b:tma_store_wait() end) end, "tma_store_wait: inside a branch that depends on the thread id")
    refused(function(b) local gw = parts(b); b:tma_store{dst = gw} end, "tma_store: src")
    refused(function(b) local gw, lw = parts(b); b:tma_store{src = lw, dst = gw}; lw:move({16, 0}) end, "move: the window is the LDS tile of a bulk tensor copy or store")
    -- targets without bulk stores
    local k = store_kernel("f16", 16, 64, 3)
    for _, target in ipairs{"gfx90a", "sm_80", "cpu:gfx90a"} do
      local ok, err = pcall(k.source, k, target)
      assert.falsy(ok, target)
      assert.truthy(tostring(err):find("target '" .. target .. "' has no bulk tensor copies or mbarriers", 1, true), tostring(err))
    end
  end)
end)
