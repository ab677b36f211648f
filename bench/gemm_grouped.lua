-- The grouped GEMM (gemm.build{grouped = true}) on a GPU, the MoE shape: G experts of N = K = 4096
-- with M_g random in 0..512 (fixed seed), f16, A and B K-major (B stored N x K per expert), against
-- a loop of G cuBLAS GEMMs on one stream (groups of M = 0 skipped). Checked first: each group's C
-- against cuBLAS's. Events and a loop of 20 on a stream; JSON into bench/results.
--
-- ckt-lua bench/gemm_grouped.lua [target=sm_90] [json=bench/results/gemm_grouped.json] [groups=8,64] [configs=default]
--   configs: as bench/gemm.lua's (TMxTNxTK/block/stages[/group]..., comma-separated)
local target = arg[1] or "sm_90"
local json_path = arg[2] or "bench/results/gemm_grouped.json"
local group_arg = arg[3] or "8,64"
local config_arg = arg[4] or "default"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local gemm = require "ckt.kernels.gemm"
local okd, dev = pcall(ckt.device, ckt.target(target).runtime)
if not okd then print("SKIPPED: bench/gemm_grouped.lua: no device for " .. target .. ": " .. tostring(dev)); os.exit(77) end
local cublas = bench.open_cublas(dev)
local s <close> = dev:stream()
-- each configuration built and compiled once
local builds = {}
for c in config_arg:gmatch("[^,]+") do
  local o = bench.gemm_config(c)
  o.name, o.dtype, o.target, o.grouped, o.a_major, o.b_major = nil, "f16", target, true, "k", "k"
  local k, grid, p = gemm.build(o)
  builds[#builds + 1] = {name = c, grid = grid, exe = k:compile{target = target},
                         plan = ("%dx%dx%d/%d/%d%s"):format(p.TM, p.TN, p.TK, p.block, p.stages, p.hopper and " wgmma" or "")}
end
local N, K = 4096, 4096
local rows, failures = {}, 0
print(("\n%s, %s\n"):format(dev:name(), target))
print("| G | tokens (sum M_g) | config | ckt event µs | ckt wall µs | cuBLAS loop wall µs | ckt / cuBLAS | TFLOP/s (ckt wall) | check |\n|---|---|---|---|---|---|---|---|---|")
for gs in group_arg:gmatch("[^,]+") do
  local G = tonumber(gs)
  math.randomseed(42 + G)
  local sizes, offs, flops = {}, {}, 0
  local na, nb, nc = 0, 0, 0
  for g = 1, G do
    local M = math.random(0, 512) // 8 * 8 -- aligned: multiples of 8
    sizes[g], offs[g] = {M, N, K}, {na, nb, nc}
    na, nb, nc = na + M * K, nb + N * K, nc + M * N
    flops = flops + 2 * M * N * K
  end
  local A, B = bench.random_buffer(dev, "f16", math.max(na, 1), 3), bench.random_buffer(dev, "f16", nb, 4)
  local C, Cref = dev:alloc("f16", math.max(nc, 1)), dev:alloc("f16", math.max(nc, 1))
  local function arr(rows_)
    local a = ckt.array("i64", 3 * G)
    for g = 1, G do for c = 1, 3 do a[3 * (g - 1) + c - 1] = rows_[g][c] end end
    return dev:alloc("i64", 3 * G):upload(a)
  end
  local sz, of = arr(sizes), arr(offs)
  local ps, cublas_wall = {}, nil
  if cublas then
    for g = 1, G do
      if sizes[g][1] > 0 then
        ps[#ps + 1] = {dtype = "f16", out = "f16", a_major = "k", b_major = "k", M = sizes[g][1], N = N, K = K, stream = s:handle(),
                       A = A:address() + 2 * offs[g][1], B = B:address() + 2 * offs[g][2], C = Cref:address() + 2 * offs[g][3]}
      end
    end
    local function loop() for i = 1, #ps do cublas:gemm_async(ps[i]) end end
    loop(); s:synchronize()
    cublas_wall = bench.wall_ms(loop, s, 20)
  end
  for _, bld in ipairs(builds) do
    local exe = bld.exe
    local args = {grid = bld.grid(sizes, exe), A = A, B = B, C = C, G = G, sizes = sz, offsets = of}
    local r = {G = G, tokens = na // K, config = bld.name, plan = bld.plan, event_ms = bench.time_launch(exe, args), wall_ms = bench.wall_launch(exe, args, s, 20)}
    if cublas then
      C:upload(ckt.array("f16", math.max(nc, 1)):poison())
      exe:launch(args)
      local ok, err = C:download():compare(Cref:download(), {rtol = 2 ^ -8, atol = 2 ^ -6})
      r.check = ok and "ok" or ("WRONG (max err " .. tostring(err) .. ")")
      if not ok then failures = failures + 1 end
      r.cublas_wall_ms = cublas_wall
      r.ratio = r.cublas_wall_ms / r.wall_ms
    end
    r.tflops = flops / (r.wall_ms * 1e-3) / 1e12
    rows[#rows + 1] = r
    print(("| %d | %d | %s | %.1f | %.1f | %s | %s | %.1f | %s |"):format(G, r.tokens, r.plan, r.event_ms * 1e3, r.wall_ms * 1e3, r.cublas_wall_ms and ("%.1f"):format(r.cublas_wall_ms * 1e3) or "-",
          r.ratio and ("%.1f%%"):format(100 * r.ratio) or "-", r.tflops, r.check or "no cuBLAS"))
  end
  A:close(); B:close(); C:close(); Cref:close()
end
bench.write_json(json_path, {date = os.date("!%Y-%m-%d %H:%M UTC"), device = dev:name(), target = target, rows = rows})
if failures > 0 then os.exit(1) end
