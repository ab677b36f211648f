-- Benchmark (not a test): compiles in the background. 32 distinct GEMM configurations (tile,
-- stages, block) compiled one after another on this thread, then all at once with
-- ckt.compile_all on a pool (the shared one: a thread per core), cold (cache off), for each target.
-- Run: ckt-lua bench/jit_pool.lua [targets...]   (default: cpu:sm_90 sm_90)
local gemm = require "ckt.kernels.gemm"
local targets = #arg > 0 and arg or {"cpu:sm_90", "sm_90"}
local configs = {}
for _, tile in ipairs{{64, 64, 32}, {128, 64, 32}, {64, 128, 32}, {128, 128, 32}} do
  for _, stages in ipairs{2, 3} do
    for _, block in ipairs{128, 256} do
      for _, dt in ipairs{"f16", "bf16"} do configs[#configs + 1] = {tile = tile, stages = stages, block = block, dtype = dt} end
    end
  end
end
assert(#configs == 32)
local function kernels(t, tag)
  local ks = {}
  for i, c in ipairs(configs) do
    local ok, k = pcall(gemm.build, {dtype = c.dtype, target = t, tile = c.tile, stages = c.stages, block = c.block,
                                      name = ("gemm_pool_%s_%d"):format(tag, i)})
    if not ok then error(("config %d (%s %dx%dx%d, %d stages, %d threads): %s"):format(i, c.dtype, c.tile[1], c.tile[2], c.tile[3], c.stages, c.block, k)) end
    ks[i] = k
  end
  return ks
end
print(("| target | configurations | serial: s, kernels/s | pool (%d threads): s, kernels/s | speed-up |"):format(ckt.compile_pool_threads and ckt.compile_pool_threads() or 0))
print("|---|---|---|---|---|")
for _, t in ipairs(targets) do
  local ok, err = pcall(function()
    local warm = ckt.kernel{name = "jit_pool_warm", block = 64, build = function() end}
    warm:compile{target = t, compile_only = true, cache = false}
    local ks = kernels(t, "s")
    local t0 = ckt.now()
    for _, k in ipairs(ks) do k:compile{target = t, compile_only = true, cache = false} end
    local serial = ckt.now() - t0
    ks = kernels(t, "p")
    local list = {}
    for i, k in ipairs(ks) do list[i] = {kernel = k, target = t, compile_only = true, cache = false} end
    t0 = ckt.now()
    local exes = ckt.compile_all(list)
    local pooled = ckt.now() - t0
    assert(#exes == #ks)
    print(("| %s | %d | %.2f s, %.1f/s | %.2f s, %.1f/s | %.2fx |"):format(t, #ks, serial, #ks / serial, pooled, #ks / pooled, serial / pooled))
  end)
  if not ok then print(("| %s | skipped: %s | | | |"):format(t, tostring(err):gsub("\n.*", ""))) end
end
