-- The sm_90a GEMM (wgmma, operands read from 128B-swizzled LDS through shared-memory
-- descriptors) on an H100/H200: element by element against the CPU target (cpu:sm_90a: the same
-- kernel, wgmma emulated warpgroup by warpgroup through the same descriptors, the same 16-byte
-- copies) and against the double reference, every dtype, major and configuration, at sizes that
-- are not multiples of the tiles; then TFLOP/s of non-square shapes against cuBLAS (the tall-skinny
-- case of the Hopper issue). Exit code 1 on any mismatch.
--   ckt-lua bench/gemm_hopper_check.lua [small|full] [configs] [majors]
--     small: one configuration, one size, every dtype and major (for compute-sanitizer)
--     configs: comma-separated TMxTNxTK/block/stages[@copy][@clN][@skN] ("default" = the library's)
--     majors: comma-separated of kk, kn, mk, mn (default all; a tile that takes K-major B only: kk,mk)
local ckt = require "ckt"
local gemm = require "ckt.kernels.gemm"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local mode = arg[1] or "full"
local majors_arg = arg[3] or "kk,kn,mk,mn"
local config_arg = arg[2] or (mode == "small" and "default" or "default,128x256x64/256/3,256x128x64/256/3,128x128x64/128/4,64x128x32/128/4")

local okd, gpu = pcall(ckt.device, "cuda")
if not okd then print("SKIPPED: bench/gemm_hopper_check.lua: no CUDA device: " .. tostring(gpu)); os.exit(77) end
local cpu = ckt.device("cpu")
local RTOL = {f16 = 2 ^ -11, bf16 = 2 ^ -8, f32 = 2 ^ -22}

local configs = {}
for c in config_arg:gmatch("[^,]+") do configs[#configs + 1] = bench.gemm_config(c) end
local sizes = mode == "small" and {{136, 200, 72}} or {{200, 136, 264}, {264, 392, 136}}

local bad, rows = 0, {}
local majors = {}
for m in majors_arg:gmatch("[^,]+") do majors[#majors + 1] = {m:sub(1, 1), m:sub(2, 2)} end
for _, c in ipairs(configs) do for _, dt in ipairs{"f16", "bf16"} do for _, mj in ipairs(majors) do
  local out = (mj[1] == "m") and "f32" or dt
  local o = {dtype = dt, out = out, a_major = mj[1], b_major = mj[2], tile = c.tile, block = c.block, stages = c.stages, copy = c.copy, persistent = c.persistent, cluster = c.cluster, cluster_along = c.cluster_along, split_k = c.split_k}
  local ok, err = pcall(function()
    o.target = "sm_90a"
    local kg, grid, p = gemm.build(o)
    local eg = kg:compile{target = "sm_90a"}
    o.target, o.aligned = "cpu:sm_90a", true
    local ec = gemm.build(o):compile{target = "cpu:sm_90a"}
    for si, s in ipairs(sizes) do
      local M, N, K = s[1], s[2], s[3]
      local A = ckt.array(dt, M * K):random{seed = si, lo = -1, hi = 1}
      local B = ckt.array(dt, K * N):random{seed = si + 7, lo = -1, hi = 1}
      local R = gemm.reference(A, B, M, N, K, {a_major = mj[1], b_major = mj[2], out = "f32"})
      local res = {}
      for _, d in ipairs{{gpu, eg}, {cpu, ec}} do
        local C = ckt.array(out, M * N):poison()
        local ba, bb, bc = d[1]:alloc(dt, #A), d[1]:alloc(dt, #B), d[1]:alloc(out, #C)
        ba:upload(A); bb:upload(B); bc:upload(C)
        d[2]:launch(bench.split_args(d[1], p, M, N, {grid = grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K}))
        bc:download(C)
        res[#res + 1] = C
        ba:close(); bb:close(); bc:close()
      end
      local tol = {rtol = RTOL[out], atol = K * 2 ^ -21}
      local ok_ref, e_ref = res[1]:compare(R, tol)
      -- the two sum in f32 in different orders: two roundings of the output, twice the K term
      local ok_cpu, e_cpu = res[1]:compare(res[2], {rtol = 2 * RTOL[out], atol = 2 * K * 2 ^ -21})
      rows[#rows + 1] = ("| %s | %s | %s%s -> %s | %dx%dx%d | %s (%s) | %s (%s) |"):format(c.name, p.instr, mj[1], mj[2], out, M, N, K,
                         ok_ref and "yes" or "NO", tostring(e_ref), ok_cpu and "yes" or "NO", tostring(e_cpu))
      if not (ok_ref and ok_cpu) then bad = bad + 1 end
    end
  end)
  if not ok then bad = bad + 1; rows[#rows + 1] = ("| %s | %s | %s%s | - | FAILED: %s | |"):format(c.name, dt, mj[1], mj[2], tostring(err):gsub("\n.*", "")) end
end end end
print("| config | instruction | majors -> out | MxNxK | GPU vs double reference (max error) | GPU vs cpu:sm_90a (max error) |")
print("|---|---|---|---|---|---|")
for _, r in ipairs(rows) do print(r) end

-- non-square shapes against cuBLAS (bench/gemm.lua times the squares)
if mode == "full" then
  package.cpath = (os.getenv("CKT_BENCH_LIB") and (os.getenv("CKT_BENCH_LIB") .. "/?.so;") or "") .. "build/?.so;/tmp/ckt-build/?.so;" .. package.cpath
  gpu:alloc("f32", 1):close()
  local okc, mod = pcall(require, "ckt_cublas")
  local cublas = okc and mod.open() or nil
  print()
  print("| MxNxK | dtype | majors | config | ckt TFLOP/s | cuBLAS TFLOP/s | ckt / cuBLAS |")
  print("|---|---|---|---|---|---|---|")
  for _, s in ipairs{{16384, 1024, 4096}, {1024, 16384, 4096}, {2048, 2048, 2048}} do
    local M, N, K = s[1], s[2], s[3]
    for _, dt in ipairs{"f16", "bf16"} do
      local ba, bb, bc = bench.random_buffer(gpu, dt, M * K, 3), bench.random_buffer(gpu, dt, K * N, 4), gpu:alloc(dt, M * N)
      local cub = cublas and cublas:gemm{dtype = dt, out = dt, a_major = "k", b_major = "k", M = M, N = N, K = K, A = ba:address(), B = bb:address(), C = bc:address(), reps = bench.REPS}
      for _, c in ipairs(configs) do
        local ok, msg = pcall(function()
          local k, grid, p = gemm.build{target = "sm_90a", dtype = dt, tile = c.tile, block = c.block, stages = c.stages, copy = c.copy, persistent = c.persistent, cluster = c.cluster, cluster_along = c.cluster_along, split_k = c.split_k}
          local ms = bench.time_launch(k:compile{target = "sm_90a"}, bench.split_args(gpu, p, M, N, {grid = grid(M, N), A = ba, B = bb, C = bc, M = M, N = N, K = K}))
          local tf, ctf = 2.0 * M * N * K / (ms * 1e-3) / 1e12, cub and 2.0 * M * N * K / (cub * 1e-3) / 1e12
          return ("| %dx%dx%d | %s | kk | %s | %.1f | %s | %s |"):format(M, N, K, dt, c.name, tf, ctf and ("%.1f"):format(ctf) or "-", ctf and ("%.1f%%"):format(100 * tf / ctf) or "-")
        end)
        print(ok and msg or ("| %dx%dx%d | %s | kk | %s | failed: %s | | |"):format(M, N, K, dt, c.name, tostring(msg):gsub("\n.*", "")))
      end
      ba:close(); bb:close(); bc:close()
    end
  end
end
if bad > 0 then print(("%d check(s) FAILED"):format(bad)); os.exit(1) end
print("all checks passed")
