-- The library GEMM at the shapes of issue 27 (small M, short K, sizes just past a tile multiple)
-- against cuBLAS in the same process: for each shape and target, the configuration the size hints
-- choose (gemm.build{M =, N =, K =}, ckt.kernels.gemm.shapes), the target's default, and every
-- explicit configuration given; microseconds between events (median of CKT_BENCH_REPS), the
-- ratio to cuBLAS, and for the hinted and default configurations the wall clock of 100 launches
-- back to back on a stream against cuBLAS's (what an application sees). Every configuration is
-- first checked element by element against the double reference at an awkward size, every timed
-- result against cuBLAS's. A table per target and JSON in bench/results/.
--
-- ckt-lua bench/gemm_shapes.lua [targets=sm_90a,sm_90] [json=bench/results/gemm_shapes.json] [configs] [shapes] [dtype=f16] [majors=kk]
--   (an empty argument takes the default; "none" as configs: the hinted and default plans only)
--   configs: "model" (the model's candidates for each target: shapes.CANDIDATES), then optionally
--            "+" and comma-separated [target:]TMxTNxTK/block/stages[@persistent] (bench/lib/measure.lua;
--            with a target prefix for that target only), or such a list alone
--   shapes:  comma-separated MxNxK; default issue 27's table plus 1024^3 and 2048^3
for i = 1, 6 do if arg[i] == "" then arg[i] = nil end end -- an empty argument: the default
local targets_arg = arg[1] or "sm_90a,sm_90"
local json_path = arg[2] or "bench/results/gemm_shapes.json"
local config_arg = arg[3] or "model"
local shape_arg = arg[4] or "16x8192x8192,64x8192x8192,128x4096x4096,256x16384x4096,8192x8192x512,4096x4096x16384,1000x1000x1000,4104x4104x4104,1024x1024x1024,2048x2048x2048"
local dtype = arg[5] or "f16"
local majors = arg[6] or "kk"
local gemm = require "ckt.kernels.gemm"
local shapes = require "ckt.kernels.gemm.shapes"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local mj = {majors:sub(1, 1), majors:sub(2, 2)}

local function split(s, sep) local t = {} for x in s:gmatch("[^" .. (sep or ",") .. "]+") do t[#t + 1] = x end return t end
local targets, probs = split(targets_arg), {}
for _, s in ipairs(split(shape_arg)) do
  local m, n, k = s:match("^(%d+)x(%d+)x(%d+)$")
  if not m then error("bench/gemm_shapes.lua: shape '" .. s .. "' is not MxNxK") end
  probs[#probs + 1] = {M = tonumber(m), N = tonumber(n), K = tonumber(k), name = s}
end

local function name_of(c)
  return ("%dx%dx%d/%d/%d%s"):format(c.tile[1], c.tile[2], c.tile[3], c.block, c.stages, c.persistent and "@persistent" or "")
end
-- the explicit configurations of a target
local function configs_of(t)
  local list = {}
  local model, extra = config_arg:match("^(model)%+?(.*)$")
  if model then
    local rec = ckt.target(t)
    for _, c in ipairs(rec.hw.wgmma and shapes.CANDIDATES.hopper or shapes.CANDIDATES.nvidia) do
      list[#list + 1] = {name = name_of(c), tile = c.tile, block = c.block, stages = c.stages, persistent = c.persistent}
    end
  end
  for _, s in ipairs(split(model and extra or (config_arg == "none" and "" or config_arg))) do
    local only, body = s:match("^([%w_:]+):(.*)$")
    if not only or only == t then list[#list + 1] = bench.gemm_config(body or s) end
  end
  return list
end

local okd, dev = pcall(ckt.device, ckt.target(targets[1]).runtime) -- cpu:...: a dry run
if not okd then
  print("SKIPPED: bench/gemm_shapes.lua: no device for " .. targets[1] .. ": " .. tostring(dev))
  os.exit(77)
end
local stream <close> = dev:stream()
local cublas, cublas_why = bench.open_cublas(dev)

local RTOL = {f16 = 2 ^ -11, bf16 = 2 ^ -8}
local compiled = {}
-- build (once per target and plan) -> {exe, grid, p, plan (its name)}
local function build(t, o)
  local k, grid, p = gemm.build(o)
  -- (the key names everything that makes a different kernel: the copies, the persistent grid, the
  -- producer warpgroup and unaligned sizes, as well as the tile)
  local key = t .. " " .. ("%dx%dx%d/%d/%d%s%s%s%s%s%s"):format(p.TM, p.TN, p.TK, p.block, p.stages, p.persistent and "@persistent" or "",
    (p.hopper and p.copy == "cp.async") and "@cp.async" or "", p.producer_warpgroup and "@pwg" or "", p.aligned and "" or "@unaligned",
    p.tma_store and "@tmastore" or "", ((p.cluster or 1) > 1 and ((p.cluster_along == "n" and "@cln" or "@cl") .. p.cluster) or "") .. ((p.split_k or 1) > 1 and ("@sk" .. p.split_k) or ""))
  if not compiled[key] then
    local exe = k:compile{target = t}
    compiled[key] = {exe = exe, grid = grid, p = p, plan = key:match(" (.*)"), compile_ms = exe:compile_ms()}
  end
  local e = compiled[key]
  return {exe = e.exe, grid = e.grid, p = p, plan = e.plan, compile_ms = e.compile_ms}
end
local function opts(t, c, h)
  local o = {dtype = dtype, a_major = mj[1], b_major = mj[2], target = t}
  if c then
    for _, k in ipairs{"tile", "block", "stages", "persistent", "copy", "epilogue_lds", "fused_prologue", "producer_warpgroup", "tma_store", "cluster", "cluster_along", "split_k"} do o[k] = c[k] end
  end
  if h then o.M, o.N, o.K = h.M, h.N, h.K end
  return o
end

-- 1. correctness: every configuration (explicit, default, each shape's hinted one) at an awkward
-- size, element by element against the double reference
local checks = {}
do
  local M, N, K = 200, 136, 264
  local A = ckt.array(dtype, M * K):random{seed = 1, lo = -1, hi = 1}
  local B = ckt.array(dtype, K * N):random{seed = 2, lo = -1, hi = 1}
  local R = gemm.reference(A, B, M, N, K, {a_major = mj[1], b_major = mj[2], out = "f32"})
  local ba, bb, bc = dev:alloc(dtype, #A), dev:alloc(dtype, #B), dev:alloc(dtype, M * N)
  ba:upload(A); bb:upload(B)
  for _, t in ipairs(targets) do
    local list = {{name = "default"}}
    for _, c in ipairs(configs_of(t)) do list[#list + 1] = c end
    for _, s in ipairs(probs) do list[#list + 1] = {name = "hint " .. s.name, hint = s} end
    local seen = {}
    for _, c in ipairs(list) do
      local ok, err = pcall(function()
        local e = build(t, opts(t, c, c.hint))
        if seen[e.plan] then return end
        seen[e.plan] = true
        local C = ckt.array(dtype, M * N):poison()
        bc:upload(C)
        e.exe:launch(bench.split_args(dev, e.p, M, N, {grid = e.grid(M, N, e.exe), A = ba, B = bb, C = bc, M = M, N = N, K = K}))
        bc:download(C)
        local same, maxerr = C:compare(R, {rtol = RTOL[dtype], atol = K * 2 ^ -21})
        checks[#checks + 1] = {target = t, config = e.plan, size = "200x136x264", ok = same, max_err = maxerr}
      end)
      if not ok then checks[#checks + 1] = {target = t, config = c.name, ok = false, error = tostring(err)} end
    end
  end
  ba:close(); bb:close(); bc:close()
end
for _, c in ipairs(checks) do
  if not c.ok then print(("CHECK FAILED %s %s: %s"):format(c.target, c.config, c.error or tostring(c.max_err))) end
end
print(("%d correctness checks at 200x136x264, %d failed"):format(#checks, (function() local n = 0 for _, c in ipairs(checks) do if not c.ok then n = n + 1 end end return n end)()))

-- 2. the shapes
-- A and B are one random buffer (read only, so they may alias), made once at the largest size
local rows = {}
local most = 0
for _, s in ipairs(probs) do most = math.max(most, s.M * s.K, s.K * s.N) end
local shared_ab = bench.random_buffer(dev, dtype, most, 3)
local function progress()
  bench.write_json(json_path, {targets = targets, dtype = dtype, majors = majors, device = dev:name(), date = os.date("!%Y-%m-%d %H:%M UTC"),
                               cublas = cublas and cublas:library() or cublas_why, reps = bench.REPS, checks = checks, rows = rows, partial = true})
end
for _, s in ipairs(probs) do
  local M, N, K = s.M, s.N, s.K
  local flops = 2.0 * M * N * K
  local ba, bb = shared_ab, shared_ab
  local bc, bref = dev:alloc(dtype, M * N), dev:alloc(dtype, M * N)
  local cub_ms, cub_wall, ref
  if cublas then
    local cp = {dtype = dtype, out = dtype, a_major = mj[1], b_major = mj[2], M = M, N = N, K = K, A = ba:address(), B = bb:address(), C = bref:address()}
    local tp, ap = {reps = bench.REPS}, {stream = stream:handle()}
    for k, v in pairs(cp) do tp[k], ap[k] = v, v end
    bench.warm_up(function() cublas:gemm_async(ap) end, stream)
    cub_ms = cublas:gemm(tp)
    for _ = 1, 3 do cublas:gemm_async(ap) end
    stream:synchronize()
    local t0 = ckt.now()
    for _ = 1, 100 do cublas:gemm_async(ap) end
    stream:synchronize()
    cub_wall = (ckt.now() - t0) * 1e3 / 100
    ref = ckt.array(dtype, M * N)
    bref:download(ref)
  end
  for _, t in ipairs(targets) do
    local list = {{name = "hint", hint = s, wall = true}, {name = "default", wall = true}}
    for _, c in ipairs(configs_of(t)) do list[#list + 1] = c end
    for _, c in ipairs(list) do
      local row = {shape = s.name, M = M, N = N, K = K, target = t, dtype = dtype, majors = majors, config = c.name, cublas_us = cub_ms and cub_ms * 1e3,
                   cublas_wall_us = cub_wall and cub_wall * 1e3}
      local ok, err = pcall(function()
        local e = build(t, opts(t, c, c.hint))
        row.plan, row.compile_ms = e.plan, e.compile_ms
        if c.hint then row.reason = e.p.reason; row.model_us = e.p.model and e.p.model[1] and e.p.model[1].time * 1e6 end
        bc:memset(0)
        local args = bench.split_args(dev, e.p, M, N, {grid = e.grid(M, N, e.exe), A = ba, B = bb, C = bc, M = M, N = N, K = K})
        row.us = bench.time_launch(e.exe, args) * 1e3
        row.tflops = flops / (row.us * 1e-6) / 1e12
        if cub_ms then row.ratio = cub_ms * 1e3 / row.us end
        if c.wall then
          row.wall_us = bench.wall_launch(e.exe, args, stream, 100) * 1e3
          if cub_wall then row.wall_ratio = cub_wall * 1e3 / row.wall_us end
        end
        if ref and c.wall then -- (the hinted and default plans; every plan was checked element by element above)
          local C = ckt.array(dtype, M * N)
          bc:download(C)
          row.valid, row.max_err_vs_cublas = C:compare(ref, {rtol = 2 * RTOL[dtype], atol = 4 * K * 2 ^ -21})
        end
      end)
      if not ok then row.error = tostring(err):gsub("\n.*", "") end
      rows[#rows + 1] = row
      print(("%s %s %s (%s): %s"):format(t, s.name, c.name, row.plan or "-", row.error or ("%.1f us%s%s%s"):format(row.us,
            row.ratio and (" = %.1f%% of cuBLAS %.1f us"):format(100 * row.ratio, cub_ms * 1e3) or "",
            row.wall_ratio and ("; wall %.1f us = %.1f%% of cuBLAS's %.1f"):format(row.wall_us, 100 * row.wall_ratio, cub_wall * 1e3) or "",
            row.valid == false and " INVALID" or "")))
    end
  end
  bc:close(); bref:close()
  progress()
end
shared_ab:close()

-- the tables: every row, then per shape and target the hinted, the default and the best
print()
print("| target | M x N x K | config | plan | ckt us | cuBLAS us | ckt / cuBLAS | wall ckt / cuBLAS (100 on a stream) | valid |")
print("|---|---|---|---|---|---|---|---|---|")
for _, r in ipairs(rows) do
  print(("| %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(r.target, r.shape, r.config, r.plan or "-", r.us and ("%.1f"):format(r.us) or ("failed: " .. tostring(r.error)),
        r.cublas_us and ("%.1f"):format(r.cublas_us) or "-", r.ratio and ("%.1f%%"):format(100 * r.ratio) or "-",
        r.wall_ratio and ("%.1f%%"):format(100 * r.wall_ratio) or "-", r.valid == nil and "-" or (r.valid and "yes" or "NO")))
end
print()
print("| target | M x N x K | default / cuBLAS | hinted plan | hinted / cuBLAS | wall: default, hinted / cuBLAS | best measured (plan) |")
print("|---|---|---|---|---|---|---|")
for _, t in ipairs(targets) do for _, s in ipairs(probs) do
  local d, h, best
  for _, r in ipairs(rows) do
    if r.target == t and r.shape == s.name and r.ratio then
      if r.config == "default" then d = r elseif r.config == "hint" then h = r end
      if not best or r.ratio > best.ratio then best = r end
    end
  end
  local function pc(r, f) return r and r[f] and ("%.1f%%"):format(100 * r[f]) or "-" end
  print(("| %s | %s | %s | %s | %s | %s, %s | %s (%s) |"):format(t, s.name, pc(d, "ratio"), h and h.plan or "-", pc(h, "ratio"), pc(d, "wall_ratio"), pc(h, "wall_ratio"),
        pc(best, "ratio"), best and best.plan or "-"))
end end
local bad = 0
for _, c in ipairs(checks) do if not c.ok then bad = bad + 1 end end
for _, r in ipairs(rows) do if r.valid == false or r.error then bad = bad + 1 end end
bench.write_json(json_path, {targets = targets, dtype = dtype, majors = majors, device = dev:name(), date = os.date("!%Y-%m-%d %H:%M UTC"),
                             cublas = cublas and cublas:library() or cublas_why, reps = bench.REPS, checks = checks, rows = rows})
if bad > 0 then error(bad .. " GEMM check(s) failed") end
