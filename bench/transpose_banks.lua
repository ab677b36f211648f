-- The transpose variants launched once each over 4 x 4 tiles, with the LDS bank model's predicted
-- shared-memory wavefronts (loads, stores) for the whole launch: "BANK <kernel> <ld> <st>".
-- tests/gpu/run_on_gpu_host.sh runs this under ncu and compares, launch by launch.
local target = arg[1] or "sm_90"
local tr = require "ckt.kernels.transpose"
local dev = ckt.device(target:sub(1, 3) == "sm_" and "cuda" or "hip")
for _, dt in ipairs{"f32", "f16"} do
  for _, sw in ipairs{true, false} do
    local esz = dt == "f32" and 4 or 2
    local v = 16 // esz
    local T = 16 * v
    local k, grid = tr.build{dtype = dt, target = target, swizzle = sw, name = ("transpose_%s_%s"):format(dt, sw and "swizzled" or "plain")}
    local write, read = tr.access_maps(T, v, 256)
    local lay = tr.lds_layout({target = target, swizzle = sw}, dt, T, 256)
    local r = ckt.lds.analyze_tensor{target = target, tensor_layout = lay, dtype = dt, thread_map = read, vector = v, op = "read"}
    local w = ckt.lds.analyze_tensor{target = target, tensor_layout = lay, dtype = dt, thread_map = write, vector = v, op = "write"}
    local M = 4 * T
    local x = dev:alloc(dt, M * M); x:upload(ckt.array(dt, M * M):random{seed = 1})
    local y = dev:alloc(dt, M * M)
    k:compile{target = target}:launch{grid = grid(M, M), X = x, Y = y, M = M, N = M}
    print(("BANK %s %d %d"):format(k:name(), grid(M, M) * r.cycles, grid(M, M) * w.cycles))
  end
end
