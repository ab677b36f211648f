-- How fast do bulk tensor copies (TMA) fill LDS on this GPU, by box shape? A producer warp streams
-- boxes of a row-major f16 matrix into a ring of LDS stages, the block's threads wait for each
-- stage and release it (nothing else: the copies alone). One block (the rate of one SM) and a
-- full grid (the whole GPU), against the device-to-device copy bandwidth measured in the same run.
--   ckt-lua bench/tma_copy.lua [target=sm_90a] [json=bench/results/tma_copy.json]
local ckt = require "ckt"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local target = arg[1] or "sm_90a"
local json_path = arg[2] or "bench/results/tma_copy.json"

local okd, dev = pcall(ckt.device, ckt.target(target).runtime)
if not okd then print("SKIPPED: bench/tma_copy.lua: no device for " .. target .. ": " .. tostring(dev)); os.exit(77) end

-- rows x cols boxes (cols contiguous), `boxes` of them stacked along the rows per stage, S stages
local function ring(o)
  local R, C, nb, S = o.rows, o.cols, o.boxes, o.stages
  local L = ckt.layout({R * nb, C}, {C, 1})
  if o.swizzle then L = ckt.composed(ckt.swizzle(o.swizzle, 3, 3), 0, L) end
  return ckt.kernel{name = "tma_stream", block = 128, build = function(b)
    local X = b:pointer("X", "f16", {const = true})
    local M, K = b:size("M"), b:size("K")
    local gx = ckt.tensor(X, "f16", {shape = {M, K}})
    local lds = ckt.tensor("lds", "f16", L, {stages = S})
    local full = b:mbarriers{count = S, arrivals = nb}
    local empty = b:mbarriers{count = S, arrivals = 128}
    local band, nk = b:block_id(0), K // C
    b:producer(function()
      b:loop(nk, function(kt)
        b:mbarrier_wait{barrier = empty, at = kt % S, phase = (kt // S + 1) % 2}
        for j = 0, nb - 1 do
          b:tma_copy{src = ckt.local_tile(gx, {R, C}, {band * nb + j, kt}), dst = ckt.tile_window(lds:stage(kt % S), {R, C}, {R * j, 0}), barrier = full, at = kt % S}
        end
      end)
    end)
    b:loop(nk, function(i)
      b:mbarrier_wait{barrier = full, at = i % S, phase = (i // S) % 2}
      b:mbarrier_arrive{barrier = empty, at = i % S}
    end)
  end}
end

local SHAPES = {
  {rows = 256, cols = 64, boxes = 1, swizzle = 3, what = "256 rows x 128 B, 128B swizzle"},
  {rows = 128, cols = 64, boxes = 2, swizzle = 3, what = "2 boxes of 128 rows x 128 B, 128B swizzle"},
  {rows = 64, cols = 64, boxes = 4, swizzle = 3, what = "4 boxes of 64 rows x 128 B, 128B swizzle"},
  {rows = 64, cols = 256, boxes = 1, what = "64 rows x 512 B, no swizzle"},
  {rows = 32, cols = 256, boxes = 2, what = "2 boxes of 32 rows x 512 B, no swizzle"},
}
local d2d = bench.d2d(dev, 1 << 30)
print(("device-to-device copy: %.0f GB/s"):format(d2d))
local rows = {}
for _, sh in ipairs(SHAPES) do
  for _, S in ipairs{4, 8} do
    local stage_bytes = sh.rows * sh.boxes * sh.cols * 2
    if S * stage_bytes <= 200 * 1024 then
      local ok, err = pcall(function()
        local exe = ring{rows = sh.rows, cols = sh.cols, boxes = sh.boxes, swizzle = sh.swizzle, stages = S}:compile{target = target}
        local per_band = sh.rows * sh.boxes
        for _, g in ipairs{{1, 1 << 17}, {132 * 4, 1 << 13}} do
          local blocks, K = g[1], g[2]
          local M = blocks * per_band
          local x = bench.random_buffer(dev, "f16", M * K, 1)
          local ms = bench.time_launch(exe, {grid = blocks, X = x, M = M, K = K})
          x:close()
          local gbs = M * K * 2 / (ms * 1e-3) / 1e9
          rows[#rows + 1] = {shape = sh.what, stages = S, blocks = blocks, stage_bytes = stage_bytes, ms = ms, gbs = gbs,
                             us_per_stage = ms * 1e3 / (K // sh.cols) / math.max(1, blocks // 132), of_d2d = gbs / d2d}
        end
      end)
      if not ok then rows[#rows + 1] = {shape = sh.what, stages = S, error = tostring(err):gsub("\n.*", "")} end
    end
  end
end
print("| box | stages | blocks | bytes a stage | GB/s | µs a stage (per SM) | of D2D |")
print("|---|---|---|---|---|---|---|")
for _, r in ipairs(rows) do
  if r.error then print(("| %s | %d | | | failed: %s | | |"):format(r.shape, r.stages, r.error))
  else print(("| %s | %d | %d | %d | %.0f | %.3f | %.1f%% |"):format(r.shape, r.stages, r.blocks, r.stage_bytes, r.gbs, r.us_per_stage, 100 * r.of_d2d)) end
end
bench.write_json(json_path, {device = target, d2d_gbs = d2d, rows = rows})
