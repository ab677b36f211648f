-- The light compile level (CKT_COMPILE_LIGHT: NVRTC --Ofast-compile=min for kernels that only move
-- data) against NVRTC's default level on the same kernels: cold compile (cache off, median of 7,
-- the two interleaved) and, where the target has a device, the bandwidth of each build by events
-- (median of the bench's reps, 1 GiB moved, random data) and by the wall clock of 20 launches on a
-- stream, beside the device-to-device copy, each
-- checked element by element against the other build's output first. The default level is
-- asked for by `options = {"--Ofast-compile=0"}` (NVRTC takes the last of a repeated option);
-- another level given as the third argument (e.g. --Ofast-compile=max) takes the default's place
-- in the table's "default" columns.
-- ckt-lua bench/jit_light.lua [target=sm_90] [json=bench/results/jit_light.json] [level=--Ofast-compile=0]
local target = arg[1] or "sm_90"
local json_path = arg[2] or "bench/results/jit_light.json"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local REPS = 7
local DEFAULT = {arg[3] or "--Ofast-compile=0"}
local okd, dev = pcall(ckt.device, ckt.target(target).runtime)
if not okd then dev = nil end
local GiB = 1 << 30
local copy_gbs = dev and bench.d2d(dev, GiB) or nil
local kernels = {
  {"transpose f32", "ckt.kernels.transpose", {dtype = "f32"}, "M"}, {"transpose f16", "ckt.kernels.transpose", {dtype = "f16"}, "M"},
  {"copy f32", "ckt.kernels.copy", {dtype = "f32"}, "M"}, {"copy f16", "ckt.kernels.copy", {dtype = "f16"}, "M"},
}
print(("\n%s, %s%s; \"default\": %s\n"):format(dev and dev:name() or "no device", target, copy_gbs and (", device copy %.0f GB/s"):format(copy_gbs) or "", DEFAULT[1]))
local stream = dev and dev:stream() or nil
print("| kernel | cold ms default | cold ms light | registers default / light | GB/s default | GB/s light | light / default | wall GB/s default / light | same output |\n|---|---|---|---|---|---|---|---|---|")
local rows, failures = {}, 0
for _, e in ipairs(kernels) do
  local o = {target = target}
  for k, v in pairs(e[3]) do o[k] = v end
  local mod = require(e[2])
  local k, grid = mod.build(o)
  -- (each cold compile of a source of its own: the kernel's name differs, so that no layer
  -- below can answer from what it has seen)
  local function named(n)
    local c = {}
    for key, v in pairs(o) do c[key] = v end
    c.name = ("jit_light_%s_%d"):format(e[1]:gsub("%W", "_"), n)
    return (mod.build(c))
  end
  local ta, tb, ea, eb = {}, {}, nil, nil
  for i = 1, REPS do
    ta[i] = named(2 * i):compile{target = target, cache = false, options = DEFAULT}:compile_ms()
    tb[i] = named(2 * i + 1):compile{target = target, cache = false}:compile_ms()
  end
  ea = k:compile{target = target, cache = false, options = DEFAULT}
  eb = k:compile{target = target, cache = false}
  local r = {kernel = e[1], cold_default_ms = bench.median(ta), cold_light_ms = bench.median(tb),
             registers_default = ea:resources().registers, registers_light = eb:resources().registers, light = eb:compiler()}
  if dev then
    local dt = e[3].dtype
    local n = GiB // 2 // ckt.array(dt, 1):bytes() -- (read + write: 1 GiB moved)
    local M = 16384
    local N = n // M
    local x = bench.random_buffer(dev, dt, M * N, 7)
    local y1, y2 = dev:alloc(dt, M * N), dev:alloc(dt, M * N)
    local args = {grid = grid(M, N), X = x, M = M, N = N}
    args.Y = y1; local ma, wa = bench.time_launch(ea, args), bench.wall_launch(ea, args, stream, 20)
    args.Y = y2; local mb, wb = bench.time_launch(eb, args), bench.wall_launch(eb, args, stream, 20)
    r.wall_gbs_default, r.wall_gbs_light = GiB / (wa * 1e-3) / 1e9, GiB / (wb * 1e-3) / 1e9
    r.same = y1:download():compare(y2:download(), {rtol = 0, atol = 0})
    if not r.same then failures = failures + 1 end
    r.gbs_default, r.gbs_light = GiB / (ma * 1e-3) / 1e9, GiB / (mb * 1e-3) / 1e9
    x:close(); y1:close(); y2:close()
  end
  rows[#rows + 1] = r
  print(("| %s | %.1f | %.1f | %d / %d | %s | %s | %s | %s | %s |"):format(e[1], r.cold_default_ms, r.cold_light_ms, r.registers_default, r.registers_light,
        r.gbs_default and ("%.0f"):format(r.gbs_default) or "-", r.gbs_light and ("%.0f"):format(r.gbs_light) or "-",
        r.gbs_light and ("%.1f%%"):format(100 * r.gbs_light / r.gbs_default) or "-",
        r.wall_gbs_light and ("%.0f / %.0f"):format(r.wall_gbs_default, r.wall_gbs_light) or "-", tostring(r.same)))
end
bench.write_json(json_path, {date = os.date("!%Y-%m-%d %H:%M UTC"), device = dev and dev:name() or "none", target = target, copy_gbs = copy_gbs, default_level = DEFAULT[1], rows = rows})
if failures > 0 then error(failures .. " check(s) failed") end
