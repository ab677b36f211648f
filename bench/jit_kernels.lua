-- JIT latency of the library transpose, GEMM and attention: cold compiles (cache off; the compiler library already
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

-- the attention forward's defaults (f16, not causal), head_dim 64 and 128, the same way; on NVIDIA
-- one more compile with NVRTC's --time splits it into the front end, NVVM and ptxas
local attention = require "ckt.kernels.attention"
print()
print("| target | head_dim | tile | cold compile ms (median of " .. REPS .. ") | NVRTC's --time rows (one more compile) | compiler |")
print("|---|---|---|---|---|---|")
for _, t in ipairs(targets) do for _, D in ipairs{64, 128} do
  local ok, err = pcall(function()
    local warm = ckt.kernel{name = "jit_warm_up", block = 64, build = function() end}
    warm:compile{target = t, compile_only = true, cache = false}
    local times, exe = {}, nil
    for i = 1, REPS do
      local k = attention.build{dtype = "f16", head_dim = D, target = t, name = "attention_jit_" .. i}
      exe = k:compile{target = t, compile_only = true, cache = false}
      times[i] = exe:compile_ms()
    end
    table.sort(times)
    local k, _, p = attention.build{dtype = "f16", head_dim = D, target = t}
    local phases = "-"
    if ckt.target(t).vendor == "nvidia" then
      local csv = os.tmpname()
      k:compile{target = t, compile_only = true, cache = false, options = {"--time=" .. csv}}
      local ms = {}
      -- every row but the header as NVRTC wrote it (phase, value, unit): on the GPU host a parse
      -- for "<phase>, <ms>, ms" rows read 41 / 5 / 0 ms for a 1.6 s compile, so the raw rows go
      -- into the table until the host's format is known
      for line in io.lines(csv) do
        local rest = line:match("^[^,]*,%s*(.*)$")
        if rest and not line:match("^File name") then ms[#ms + 1] = rest:gsub(",%s*", " ") end
      end
      os.remove(csv)
      phases = table.concat(ms, " / ")
    end
    print(("| %s | %d | %dx%d | %.1f | %s | %s |"):format(t, D, p.BR, p.BC, times[(REPS + 1) // 2], phases, exe:compiler()))
  end)
  if not ok then print(("| %s | %d | | skipped: %s | | |"):format(t, D, tostring(err):gsub("\n.*", ""))) end
end end
