-- JIT latency of the library transpose: cold compiles (cache off; the compiler library already
-- loaded by a warm-up compile) for each GPU target whose compiler is here, and a cache hit.
-- ckt-lua bench/jit_kernels.lua [targets...]
local tr = require "ckt.kernels.transpose"
local targets = #arg > 0 and arg or {"gfx90a", "sm_90"}
local REPS = 5
print("| target | dtype | tile, threads | cold compile ms (median of " .. REPS .. ") | cache hit ms | compiler |")
print("|---|---|---|---|---|---|")
for _, t in ipairs(targets) do for _, dt in ipairs{"f32", "f16"} do
  local ok, err = pcall(function()
    local warm = ckt.kernel{name = "jit_warm_up", block = 64, build = function() end}
    warm:compile{target = t, compile_only = true, cache = false} -- loads the compiler library
    local times, exe = {}, nil
    for i = 1, REPS do
      local k = tr.build{dtype = dt, target = t, name = "transpose_jit_" .. i}
      exe = k:compile{target = t, compile_only = true, cache = false}
      times[i] = exe:compile_ms()
    end
    table.sort(times)
    local k, _, _, p = tr.build{dtype = dt, target = t}
    k:compile{target = t, compile_only = true}
    local hit = k:compile{target = t, compile_only = true}
    assert(hit:from_cache(), "the second compile should come from the cache")
    print(("| %s | %s | %dx%d, %d | %.1f | %.2f | %s |"):format(t, dt, p.TM, p.TN, p.block, times[(REPS + 1) // 2], hit:compile_ms(), exe:compiler()))
  end)
  if not ok then print(("| %s | %s | | skipped: %s | | |"):format(t, dt, tostring(err):gsub("\n.*", ""))) end
end end

-- the library GEMM's default configuration, f16 and bf16, the same way
local gemm = require "ckt.kernels.gemm"
print()
print("| target | dtype | gemm tile, threads, stages | cold compile ms (median of " .. REPS .. ") | cache hit ms | compiler |")
print("|---|---|---|---|---|---|")
for _, t in ipairs(targets) do for _, dt in ipairs{"f16", "bf16"} do
  local ok, err = pcall(function()
    local warm = ckt.kernel{name = "jit_warm_up", block = 64, build = function() end}
    warm:compile{target = t, compile_only = true, cache = false}
    local times, exe = {}, nil
    for i = 1, REPS do
      local k = gemm.build{dtype = dt, target = t, name = "gemm_jit_" .. i}
      exe = k:compile{target = t, compile_only = true, cache = false}
      times[i] = exe:compile_ms()
    end
    table.sort(times)
    local k, _, p = gemm.build{dtype = dt, target = t}
    k:compile{target = t, compile_only = true}
    local hit = k:compile{target = t, compile_only = true}
    assert(hit:from_cache(), "the second compile should come from the cache")
    print(("| %s | %s | %dx%dx%d, %d, %d | %.1f | %.2f | %s |"):format(t, dt, p.TM, p.TN, p.TK, p.block, p.stages, times[(REPS + 1) // 2], hit:compile_ms(), exe:compiler()))
  end)
  if not ok then print(("| %s | %s | | skipped: %s | | |"):format(t, dt, tostring(err):gsub("\n.*", ""))) end
end end
