-- The library GEMM (ckt.kernels.gemm) on an NVIDIA GPU against cuBLAS in the same process (the
-- ceiling): TFLOP/s of each configuration and the ratio to cuBLAS at M = N = K = 4096 and 8192,
-- f16 and bf16, every major combination; every result validated (small size element by element
-- against the double reference, for ckt and for cuBLAS, which checks the column-major
-- transposes; large sizes against cuBLAS within a tolerance); JSON in bench/results/.
--
-- ckt-lua bench/gemm.lua [target=sm_90] [json=bench/results/gemm_h100.json] [configs] [sizes] [majors]
--   configs: comma-separated TMxTNxTK/block/stages[/group][@copy][@persistent][@unaligned][@direct][@prologue][@lds][@fused], e.g.
--            (@direct / @lds: epilogue_lds = false / true, @prologue / @fused: fused_prologue = false / true;
--            mma.sync path)
--            128x128x32/128/3,128x256x32/256/3,default@cp.async,default@unaligned,default@tma@unaligned
--            ("default": the library's default for the target)
--   sizes:   comma-separated, default 4096,8192 ("none": the correctness checks only);  majors: comma-separated a_major..b_major, default kk,kn,mk,mn
--   out:     the output dtype, "f32" (cuBLAS's too); default the input's
-- The cuBLAS module (bench/cublas.c, built as ckt_cublas.so next to ckt-lua) is looked up in
-- $CKT_BENCH_LIB, the build directories build/ and /tmp/ckt-build/; without it (or without
-- libcublas) the ckt figures are still measured and validated against the reference.
local target = arg[1] or "sm_90"
local json_path = arg[2] or "bench/results/gemm.json"
local config_arg = arg[3] or "default,128x256x32/256/3,256x128x32/256/3,128x128x32/128/4"
local size_arg = arg[4] or "4096,8192"
local major_arg = arg[5] or "kk,kn,mk,mn"
local out_arg = arg[6]
if out_arg and out_arg ~= "f32" then error("bench/gemm.lua: out must be f32 or absent (the input's dtype), got " .. out_arg) end
local function out_of(dt) return out_arg or dt end
local gemm = require "ckt.kernels.gemm"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"

local function split(s) local t = {} for x in s:gmatch("[^,]+") do t[#t + 1] = x end return t end
local parse_config = bench.gemm_config
local configs, sizes, majors = {}, {}, {}
for _, c in ipairs(split(config_arg)) do configs[#configs + 1] = parse_config(c) end
for _, s in ipairs(split(size_arg)) do if s ~= "none" then sizes[#sizes + 1] = tonumber(s) end end
for _, m in ipairs(split(major_arg)) do majors[#majors + 1] = {m:sub(1, 1), m:sub(2, 2)} end

local okd, dev = pcall(ckt.device, ckt.target(target).runtime) -- cpu: a dry run
if not okd then
  print("SKIPPED: bench/gemm.lua: no device for " .. target .. ": " .. tostring(dev))
  os.exit(77)
end
local cpu = ckt.device("cpu")
local stream <close> = dev:stream() -- the application loop's stream (wall-clock columns)

-- cuBLAS (after the device: it runs in the primary context ckt retained, current after an allocation)
local cublas, cublas_why = bench.open_cublas(dev)

local function opts(dt, mj, c)
  local o = {dtype = dt, out = out_of(dt), a_major = mj[1], b_major = mj[2], target = target}
  for _, k in ipairs{"tile", "block", "stages", "group", "copy", "persistent", "aligned", "epilogue_lds", "fused_prologue", "producer_warpgroup", "mma_pending", "cluster", "cluster_along", "split_k"} do o[k] = c[k] end
  return o
end

local RTOL = {f16 = 2 ^ -11, bf16 = 2 ^ -8, f32 = 2 ^ -22}
local checks, rows = {}, {}
local compiled = {}
local function build(o, cname)
  local key = table.concat({o.dtype, o.a_major, o.b_major, cname}, " ")
  if not compiled[key] then
    local k, grid, p = gemm.build(o)
    local exe = k:compile{target = target}
    compiled[key] = {exe = exe, grid = grid, p = p, compile_ms = exe:compile_ms()}
  end
  return compiled[key]
end

local function cublas_gemm(dt, mj, M, N, K, a, b, c, reps)
  local p = {dtype = dt, out = out_of(dt), a_major = mj[1], b_major = mj[2], M = M, N = N, K = K, A = a:address(), B = b:address(), C = c:address()}
  if reps > 0 then -- (timed: warmed up as ckt's kernels are)
    local ap = {stream = stream:handle()}
    for k, v in pairs(p) do ap[k] = v end
    bench.warm_up(function() cublas:gemm_async(ap) end, stream)
  end
  p.reps = reps
  return cublas:gemm(p)
end

-- cuBLAS in the application loop: 100 GEMMs enqueued back to back on the stream, wall ms each
local function cublas_wall(dt, mj, M, N, K, a, b, c)
  local p = {dtype = dt, out = out_of(dt), a_major = mj[1], b_major = mj[2], M = M, N = N, K = K, A = a:address(), B = b:address(), C = c:address(), stream = stream:handle()}
  return bench.wall_ms(function() cublas:gemm_async(p) end, stream, 100)
end

-- 1. correctness at a size that is not a multiple of the tiles, element by element
do
  local M, N, K = 200, 136, 264
  for _, dt in ipairs{"f16", "bf16"} do for _, mj in ipairs(majors) do
    local A = ckt.array(dt, M * K):random{seed = 1, lo = -1, hi = 1}
    local B = ckt.array(dt, K * N):random{seed = 2, lo = -1, hi = 1}
    local R = gemm.reference(A, B, M, N, K, {a_major = mj[1], b_major = mj[2], out = "f32"})
    local ba, bb, bc = dev:alloc(dt, #A), dev:alloc(dt, #B), dev:alloc(out_of(dt), M * N)
    ba:upload(A); bb:upload(B)
    local tol = {rtol = RTOL[out_of(dt)], atol = K * 2 ^ -21}
    for _, c in ipairs(configs) do
      local ok, err = pcall(function()
        local e = build(opts(dt, mj, c), c.name)
        local C = ckt.array(out_of(dt), M * N):poison()
        bc:upload(C)
        e.exe:launch{grid = e.grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K}
        bc:download(C)
        local same, maxerr = C:compare(R, tol)
        checks[#checks + 1] = {what = "ckt vs reference", dtype = dt, majors = mj[1] .. mj[2], config = c.name, size = "200x136x264", ok = same, max_err = maxerr}
      end)
      if not ok then checks[#checks + 1] = {what = "ckt vs reference", dtype = dt, majors = mj[1] .. mj[2], config = c.name, ok = false, error = tostring(err)} end
    end
    if cublas then
      local C = ckt.array(out_of(dt), M * N):poison()
      bc:upload(C)
      cublas_gemm(dt, mj, M, N, K, ba, bb, bc, 0)
      bc:download(C)
      local same, maxerr = C:compare(R, tol)
      checks[#checks + 1] = {what = "cuBLAS vs reference", dtype = dt, majors = mj[1] .. mj[2], size = "200x136x264", ok = same, max_err = maxerr}
    end
    ba:close(); bb:close(); bc:close()
  end end
end
print("| check | dtype | majors | config | ok | max error |")
print("|---|---|---|---|---|---|")
for _, c in ipairs(checks) do
  print(("| %s | %s | %s | %s | %s | %s |"):format(c.what, c.dtype, c.majors, c.config or "", c.ok and "yes" or "NO", c.error or tostring(c.max_err)))
end

-- 2. throughput at the large sizes: ckt configurations against cuBLAS, validated against it
for _, S in ipairs(sizes) do
  local M, N, K = S, S, S
  local flops = 2.0 * M * N * K
  for _, dt in ipairs{"f16", "bf16"} do
    local ba = bench.random_buffer(dev, dt, M * K, 3)
    local bb = bench.random_buffer(dev, dt, K * N, 4)
    local bc, bref = dev:alloc(out_of(dt), M * N), dev:alloc(out_of(dt), M * N)
    for _, mj in ipairs(majors) do
      local cub_ms, cub_wall, ref
      if cublas then
        cub_ms = cublas_gemm(dt, mj, M, N, K, ba, bb, bref, bench.REPS)
        cub_wall = cublas_wall(dt, mj, M, N, K, ba, bb, bref)
        ref = ckt.array(out_of(dt), M * N)
        bref:download(ref)
      end
      for _, c in ipairs(configs) do
        local row = {size = S, dtype = dt .. (out_arg and (" -> " .. out_arg) or ""), out = out_of(dt), majors = mj[1] .. mj[2], config = c.name, cublas_ms = cub_ms,
                     cublas_tflops = cub_ms and flops / (cub_ms * 1e-3) / 1e12 or nil, cublas_wall_ms = cub_wall}
        local ok, err = pcall(function()
          local e = build(opts(dt, mj, c), c.name)
          local p = e.p
          row.plan = ("%dx%dx%d/%d/%d/g%d%s"):format(p.TM, p.TN, p.TK, p.block, p.stages, p.group, (p.hopper and ("@" .. p.copy) or "") .. (p.persistent and "@persistent" or "") .. (p.aligned and "" or "@unaligned") .. (c.mma_pending and ("@p" .. p.mma_pending) or "") .. ((p.cluster or 1) > 1 and ("@cl" .. p.cluster) or ""))
          row.compile_ms = e.compile_ms
          bc:memset(0)
          local args = {grid = e.grid(M, N, e.exe), A = ba, B = bb, C = bc, M = M, N = N, K = K}
          row.ms = bench.time_launch(e.exe, args)
          row.wall_ms = bench.wall_launch(e.exe, args, stream, 100)
          row.tflops = flops / (row.ms * 1e-3) / 1e12
          row.wall_tflops = flops / (row.wall_ms * 1e-3) / 1e12
          if cub_ms then row.ratio = cub_ms / row.ms end
          if cub_wall then row.wall_ratio = cub_wall / row.wall_ms end
          if ref then
            local C = ckt.array(out_of(dt), M * N)
            bc:download(C)
            -- both accumulate in f32 in different orders (inputs in [-2, 2]) and each rounds to
            -- the output once: the two may sit an output ulp on either side of the exact sum,
            -- 2 ulps apart (4 x RTOL at the bottom of a binade; at 4097^3 cuBLAS and ckt were 2
            -- ulps apart while each was as close to the double reference as the other:
            -- tests/gpu/gemm_odd_check.lua)
            row.valid, row.max_err_vs_cublas = C:compare(ref, {rtol = 4 * RTOL[out_of(dt)], atol = 4 * K * 2 ^ -21})
          end
        end)
        if not ok then row.error = tostring(err):gsub("\n.*", "") end
        rows[#rows + 1] = row
        print(("%s %d %s %s: %s"):format(row.config, S, dt, row.majors, row.error or ("%.1f TFLOP/s%s; wall %.1f TFLOP/s%s"):format(row.tflops,
              row.ratio and (" = %.1f%% of cuBLAS %.1f"):format(100 * row.ratio, row.cublas_tflops) or "", row.wall_tflops,
              row.wall_ratio and (" = %.1f%% of cuBLAS's"):format(100 * row.wall_ratio) or "")))
      end
    end
    ba:close(); bb:close(); bc:close(); bref:close()
  end
end

print()
print("| M=N=K | dtype | majors | config (tile/block/stages/group) | ckt TFLOP/s | cuBLAS TFLOP/s | ckt / cuBLAS | wall clock ckt / cuBLAS (100 on a stream) | valid vs cuBLAS | cold compile ms |")
print("|---|---|---|---|---|---|---|---|---|---|")
for _, r in ipairs(rows) do
  print(("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(r.size, r.dtype, r.majors, r.plan or r.config,
        r.tflops and ("%.1f"):format(r.tflops) or ("failed: " .. tostring(r.error)), r.cublas_tflops and ("%.1f"):format(r.cublas_tflops) or "-",
        r.ratio and ("%.1f%%"):format(100 * r.ratio) or "-", r.wall_ratio and ("%.1f%%"):format(100 * r.wall_ratio) or "-",
        r.valid == nil and "-" or (r.valid and "yes" or ("NO (" .. tostring(r.max_err_vs_cublas) .. ")")),
        r.compile_ms and ("%.0f"):format(r.compile_ms) or "-"))
end
local bad = 0
for _, c in ipairs(checks) do if not c.ok then bad = bad + 1 end end
for _, r in ipairs(rows) do if r.valid == false or r.error then bad = bad + 1 end end
bench.write_json(json_path, {target = target, device = dev:name(), date = os.date("!%Y-%m-%d %H:%M UTC"), cublas = cublas and cublas:library() or cublas_why,
                             checks = checks, rows = rows})
if bad > 0 then error(bad .. " GEMM check(s) failed") end
