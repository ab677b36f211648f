-- The tiled copy of the kernel library: build, show, compile everywhere, run, validate.
-- Run: ckt-lua scripts/copy.lua   (ckt-lua --target cpu ... to run on the CPU target)
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local demo = require "kernel_demo"
local copy = require "ckt.kernels.copy"

local M, N = 300, 520 -- not multiples of the tile: the edge tiles are masked
local k, grid = copy.build{dtype = "f16", tile = {32, 128}, pad = true}
demo.section("the kernel")
print(k)
for _, p in ipairs(k:signature()) do print(("  %s: %s%s"):format(p.name, p.kind, p.dtype and (" of " .. p.dtype) or "")) end
demo.section("generated source for gfx90a (kernel body)")
local src = k:source("gfx90a")
print(src:sub(src:find("extern \"C\"", 1, true) or 1))

demo.compile_everywhere(function() return (copy.build{dtype = "f16", tile = {32, 128}, pad = true}) end, {"cpu", "gfx90a", "sm_90"})

demo.section("run on the default target (" .. ckt.default_target() .. ")")
local x = ckt.array("f16", {M, N}):random{seed = 7, lo = -4, hi = 4}
local y = ckt.array("f16", {M, N})
local exe = k:compile{target = ckt.default_target()}
demo.run_and_check(exe, {M = M, N = N}, {X = x}, {name = "Y", array = y}, copy.reference(x), grid(M, N))
