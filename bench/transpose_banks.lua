-- The transpose variants launched once each over 4 x 4 tiles, with the LDS bank model's predicted
-- shared-memory wavefronts (loads, stores) for the whole launch: "BANK <kernel> <ld> <st>".
-- tests/gpu/run_on_gpu_host.sh runs this under ncu and compares, launch by launch.
local target = arg[1] or "sm_90"
local tr = require "ckt.kernels.transpose"
local dev = ckt.device(ckt.target(target).runtime)
for _, dt in ipairs{"f32", "f16"} do
  for _, sw in ipairs{true, false} do
    local k, grid, _, plan = tr.build{dtype = dt, target = target, swizzle = sw, name = ("transpose_%s_%s"):format(dt, sw and "swizzled" or "plain")}
    local r, w = tr.bank_cycles(plan, target)
    local M = 4 * math.max(plan.TM, plan.TN)
    local x = dev:alloc(dt, M * M); x:upload(ckt.array(dt, M * M):random{seed = 1})
    local y = dev:alloc(dt, M * M)
    k:compile{target = target}:launch{grid = grid(M, M), X = x, Y = y, M = M, N = M}
    print(("BANK %s %d %d"):format(k:name(), grid(M, M) * r, grid(M, M) * w))
  end
end
