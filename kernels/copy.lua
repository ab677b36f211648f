-- ckt kernel library: tiled copy of a row-major M x N matrix, Y = X.
-- Each block copies one TM x TN tile; the threads are arranged row-major over the tile with
-- 16-byte vectors along the rows (the default distribution of a window), so every warp / wave
-- reads and writes whole contiguous segments. Sizes are runtime parameters (or specialized with
-- `M=`, `N=`); `pad=true` masks the edge tiles when M, N are not multiples of the tile.
--
--   local copy = require "ckt.kernels.copy"
--   local k, grid = copy.build{dtype="f16", tile={32, 256}, block=256, pad=true}
--   k:compile{target="cpu"}:launch{grid=grid(M, N), X=bx, Y=by, M=M, N=N}
--   local k, grid = copy.build{dtype="f16", autotune=true} -- tile and block measured on this device
local ckt = ckt or require "ckt"
local copy = {}

local vec = require("ckt.kernels.common").vec

function copy.build(o)
  o = o or {}
  -- autotune = true | {M=, N=, ...}: tile and block by measurement (ckt.kernels.tuning)
  if o.autotune then return require("ckt.kernels.tuning").run("copy", copy, o) end
  local dtype = o.dtype or "f32"
  -- 2 rows of 256 16-byte vectors: 102% of the device-to-device copy on an H100, where 8 rows
  -- of them reach 82% (bench/tune.lua, 2026-11-23)
  local tile = o.tile or {2, 256 * vec(dtype)}
  local block = o.block or 256
  local k = ckt.kernel{name = o.name or ("copy_" .. dtype), block = block, build = function(b)
    local X = b:pointer("X", dtype, {const = true})
    local Y = b:pointer("Y", dtype)
    local M = b:size("M", {value = o.M})
    local N = b:size("N", {value = o.N, multiple_of = o.N and nil or (o.pad and vec(dtype) or tile[2])})
    local gx = ckt.tensor(X, dtype, {shape = {M, N}}, {pad = o.pad})
    local gy = ckt.tensor(Y, dtype, {shape = {M, N}}, {pad = o.pad})
    local tiles_n = (N + tile[2] - 1) // tile[2]
    local tm, tn = b:block_order{tiles = {(M + tile[1] - 1) // tile[1], tiles_n}, order = "row"}
    local src = ckt.local_tile(gx, tile, {tm, tn})
    local dst = ckt.local_tile(gy, tile, {tm, tn})
    dst:store(src:load())
  end}
  -- the grid of an M x N problem: one block per tile
  local function grid(M, N) return ((M + tile[1] - 1) // tile[1]) * ((N + tile[2] - 1) // tile[2]) end
  return k, grid
end

function copy.reference(x) return x:copy() end

return copy
