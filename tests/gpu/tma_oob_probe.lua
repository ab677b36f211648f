-- Do rows of a bulk tensor copy's box that lie past the tensor (filled with zeros by the copy
-- engine) cost time? The decode GEMM's copies alone: each of 128 blocks streams, per 64-wide K
-- slice, a 64 x 64 box of a small A (M rows: rows M..63 out of bounds, or a box of only round_up(M, 8) rows)
-- shared by every block, and a 64 x 64 box of its own band of B (8192 x K); a ring of LDS stages,
-- nothing computed. Median microseconds by events.
--   ckt-lua tests/gpu/tma_oob_probe.lua [target=sm_90a]
local ckt = require "ckt"
package.path = "bench/lib/?.lua;" .. package.path
local bench = require "measure"
local target = arg[1] or "sm_90a"
local okd, dev = pcall(ckt.device, ckt.target(target).runtime)
if not okd then print("SKIPPED: no device for " .. target); os.exit(77) end
local S, C = 8, 64
local function ring(arows)
  local LA = ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, C}, {C, 1}))
  local LB = ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({64, C}, {C, 1}))
  return ckt.kernel{name = "tma_oob", block = 128, build = function(b)
    local A = b:pointer("A", "f16", {const = true})
    local B = b:pointer("B", "f16", {const = true})
    local M, N, K = b:size("M"), b:size("N"), b:size("K")
    local ga = ckt.tensor(A, "f16", {shape = {M, K}}, {pad = true})
    local gb = ckt.tensor(B, "f16", {shape = {N, K}})
    local la = ckt.tensor("lds", "f16", LA, {stages = S})
    local lb = ckt.tensor("lds", "f16", LB, {stages = S})
    local full = b:mbarriers{count = S, arrivals = 2}
    local empty = b:mbarriers{count = S, arrivals = 128}
    local band, nk = b:block_id(0), K // C
    b:producer(function()
      b:loop(nk, function(kt)
        b:mbarrier_wait{barrier = empty, at = kt % S, phase = (kt // S + 1) % 2}
        b:tma_copy{src = ckt.local_tile(ga, {arows, C}, {0, kt}), dst = ckt.tile_window(la:stage(kt % S), {arows, C}, {0, 0}), barrier = full, at = kt % S}
        b:tma_copy{src = ckt.local_tile(gb, {64, C}, {band, kt}), dst = ckt.tile_window(lb:stage(kt % S), {64, C}, {0, 0}), barrier = full, at = kt % S}
      end)
    end)
    b:loop(nk, function(i)
      b:mbarrier_wait{barrier = full, at = i % S, phase = (i // S) % 2}
      b:mbarrier_arrive{barrier = empty, at = i % S}
    end)
  end}
end
local N, K = 8192, 8192
local Bbuf = bench.random_buffer(dev, "f16", N * K, 2)
local Abuf = bench.random_buffer(dev, "f16", 64 * K, 1)
print("| M | A box rows | µs (events, median) | B GB/s |")
print("|---|---|---|---|")
for _, case in ipairs{{16, 64}, {16, 16}, {32, 64}, {32, 32}, {48, 64}, {64, 64}} do
  local M, arows = case[1], case[2]
  local exe = ring(arows):compile{target = target}
  local ms = bench.time_launch(exe, {grid = N // 64, A = Abuf, B = Bbuf, M = M, N = N, K = K})
  print(("| %d | %d | %.1f | %.0f |"):format(M, arows, ms * 1e3, N * K * 2 / (ms * 1e-3) / 1e9))
end
