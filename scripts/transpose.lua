-- The LDS transpose of the kernel library: the swizzle ckt.lds.find_swizzle chose, the source,
-- resources for every target, a run on the default target, validation bit for bit.
-- Run: ckt-lua scripts/transpose.lua   (ckt-lua --target cpu ... to run on the CPU target)
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local demo = require "kernel_demo"
local tr = require "ckt.kernels.transpose"

local M, N = 256, 384
local target = ckt.default_target()
local k, grid, why, plan = tr.build{dtype = "f32", target = target}
demo.section("the kernel")
print(k)
print(("tile %dx%d, %d threads, %dx%d sub-blocks of %dx%d per thread; LDS tile layout: %s"):format(plan.TM, plan.TN, plan.block, plan.rm, plan.rn, plan.v, plan.v, why))
for _, t in ipairs{"gfx90a", "sm_90"} do
  local plain = ckt.lds.analyze_tensor{target = t, tensor_layout = plan.tile_layout, dtype = "f32", thread_map = plan.read, vector = plan.v}
  print(("%s: the plain row-major tile would make the LDS reads %d-way conflicted (%d cycles for %d ideal)"):format(t, plain.ways, plain.cycles, plain.ideal_cycles))
end
demo.section("generated source for sm_90 (kernel body)")
local src = k:source("sm_90")
print(src:sub(src:find("extern \"C\"", 1, true) or 1))

demo.compile_everywhere(function(t) return (tr.build{dtype = "f32", target = t}) end, {"cpu", "gfx90a", "sm_90"})

demo.section("run on the default target (" .. target .. ")")
local x = ckt.array("f32", {M, N}):random{seed = 11}
local y = ckt.array("f32", {N, M})
local exe = k:compile{target = target}
demo.run_and_check(exe, {M = M, N = N}, {X = x}, {name = "Y", array = y}, tr.reference(x, M, N), grid(M, N))
