-- The fp8 GEMM (e4m3 / e5m2 in, f32 accumulation) on sm_90a, per-tensor scales and (scales =
-- "block", e4m3) DeepSeek-V3's block scales: each configuration checked against the double
-- reference at an awkward size, then TFLOP/s by events (median of the bench's reps) on random
-- data, beside cuBLASLt's fp8 GEMM in the same process (bench/cublas.c: the same buffers, bf16 out;
-- with block scales its VEC128 / BLK128x128 modes, and its per-tensor GEMM as well). Timed block
-- scales are all alike (0.75 and -2.5), so that cuBLASLt's scale layouts read the same values as
-- ckt's and the two C can be compared; the check at the awkward size takes random ones. cuBLASLt
-- has no e5m2 x e5m2 GEMM: that row says so.
--
-- ckt-lua bench/gemm_fp8.lua [target=sm_90a] [json=bench/results/gemm_fp8.json] [sizes=4096,8192]
--   [block configs: "default" or TMxTNxTK/block/stages[/group][@options], comma-separated; "none": no
--   block rows; a config ending in @tensor: that configuration with per-tensor scales]
local target = arg[1] or "sm_90a"
local json_path = arg[2] or "bench/results/gemm_fp8.json"
local sizes = arg[3] or "4096,8192"
local block_configs = arg[4] or "default"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local gemm = require "ckt.kernels.gemm"
local okd, dev = pcall(ckt.device, ckt.target(target).runtime)
if not okd then print("SKIPPED: bench/gemm_fp8.lua: no device for " .. target .. ": " .. tostring(dev)); os.exit(77) end
local rows, failures = {}, 0
local cublas = bench.open_cublas(dev)
local workspace = dev:alloc("f32", 8 << 20) -- (32 MiB: cuBLASLt's workspace)
-- n scales, all the same value v (timed runs), on the device
local function alike(n, v) return dev:alloc("f32", n):upload(ckt.array("f32", n):fill(v)) end
print(("\n%s, %s\n"):format(dev:name(), target))
local stream <close> = dev:stream()

-- the variants: both formats with per-tensor scales (the target's default), then e4m3 with block
-- scales in each configuration asked for
local variants = {{dtype = "e4m3", scales = "tensor"}, {dtype = "e5m2", scales = "tensor"}}
if block_configs ~= "none" then
  for c in block_configs:gmatch("[^,]+") do
    local tensor = c:match("@tensor$") ~= nil -- (the same configuration with per-tensor scales: what the block scales cost)
    local v = bench.gemm_config(tensor and c:gsub("@tensor$", "") or c)
    v.dtype, v.scales = "e4m3", tensor and "tensor" or "block"
    variants[#variants + 1] = v
  end
end

-- correctness: 208 x 144 x 272 (not multiples of the tile; each a multiple of the 16 the kernel
-- promises; K past a 128-wide block) against the reference (scales applied in double): random
-- block scales, or 0.75 and -2.5 a tensor
local function check(exe, grid, v)
  local M, N, K = 208, 144, 272
  local dt = v.dtype
  local A = ckt.array(dt, M * K):random{seed = 1, lo = -4, hi = 4}
  local B = ckt.array(dt, N * K):random{seed = 2, lo = -4, hi = 4}
  local SA, SB, R
  if v.scales == "block" then
    local KB = (K + 127) // 128
    SA = ckt.array("f32", KB * M):random{seed = 3, lo = 0.25, hi = 1}
    SB = ckt.array("f32", ((N + 127) // 128) * KB):random{seed = 4, lo = -2.5, hi = 2.5}
    R = gemm.reference(A, B, M, N, K, {out = "f32", scales = "block", scale_A = SA, scale_B = SB})
  else
    SA, SB = ckt.array("f32", 1):fill(0.75), ckt.array("f32", 1):fill(-2.5)
    R = gemm.reference(A, B, M, N, K, {a_major = "k", b_major = "k", out = "f32", scale_A = 0.75, scale_B = -2.5})
  end
  local bc = dev:alloc("bf16", M * N):upload(ckt.array("bf16", M * N):poison())
  exe:launch{grid = grid(M, N, exe), A = dev:alloc(dt, M * K):upload(A), B = dev:alloc(dt, N * K):upload(B), C = bc,
             M = M, N = N, K = K, scale_A = dev:alloc("f32", #SA):upload(SA), scale_B = dev:alloc("f32", #SB):upload(SB)}
  -- the tolerance: C's rounding to bf16 (rtol 2^-8), and the tensor cores' fp8 accumulation,
  -- which is narrower than f32 (an H100 differed from the exact sum by up to ~2^-13 of the sum of
  -- |products| in tests/gpu/fp8_probe.lua): atol = 2^-12 · K · max|a| · max|b| · max|scale_A·scale_B|
  return bc:download():compare(R, {rtol = 2 ^ -7, atol = 2 ^ -12 * K * 4 * 4 * 2.5})
end

print("| dtype | scales | out | M=N=K | config | ms (events) | TFLOP/s | wall ms (20 on a stream) | valid | cuBLASLt fp8, these scales: TFLOP/s (events) | ckt / it | cuBLASLt fp8 per tensor | ckt / it | same C as cuBLASLt |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for _, v in ipairs(variants) do
  local o = {dtype = v.dtype, scales = v.scales, out = "bf16", target = target}
  for _, key in ipairs{"tile", "block", "stages", "group", "copy", "persistent", "aligned", "producer_warpgroup"} do o[key] = v[key] end
  local k, grid, p = gemm.build(o)
  local exe = k:compile{target = target}
  local valid = check(exe, grid, v)
  if not valid then failures = failures + 1 end
  for S in sizes:gmatch("%d+") do
    S = tonumber(S)
    local KB = (S + 127) // 128
    -- (block scales: room for cuBLASLt's layouts, which may pad the rows to 4 or 16)
    local sa = v.scales == "block" and alike(KB * (S + 256), 0.75) or alike(1, 0.75)
    local sb = v.scales == "block" and alike((KB + 16) * (KB + 16), -2.5) or alike(1, -2.5)
    local ba, bb = bench.random_buffer(dev, v.dtype, S * S, 3), bench.random_buffer(dev, v.dtype, S * S, 4)
    local c = dev:alloc("bf16", S * S)
    local largs = {grid = grid(S, S, exe), A = ba, B = bb, C = c, M = S, N = S, K = S, scale_A = sa, scale_B = sb}
    local ms = bench.time_launch(exe, largs)
    local wall = bench.wall_launch(exe, largs, stream, 20)
    local r = {dtype = v.dtype, scales = v.scales, out = "bf16", size = S, ms = ms, tflops = 2 * S * S * S / (ms * 1e-3) / 1e12, valid = valid,
               config = ("%dx%dx%d/%d/%d%s%s"):format(p.TM, p.TN, p.TK, p.block, p.stages, p.copy == "tma" and "" or "@" .. p.copy,
                                                    p.producer_warpgroup and "@pwg" or ""), wall_ms = wall}
    local cols = {"-", "-", "-", "-", "-"}
    if cublas and cublas.gemm_fp8 then
      -- cuBLASLt with these scales (its C checked against ckt's), then (block) per tensor: the ceiling
      local function lt(mode, sa1, sb1)
        local cref = dev:alloc("bf16", S * S)
        local args = {dtype = v.dtype, M = S, N = S, K = S, A = ba:address(), B = bb:address(), C = cref:address(), scales = mode,
                      scale_A = sa1:address(), scale_B = sb1:address(), workspace = workspace:address(), workspace_bytes = 32 << 20}
        local ok, why = cublas:gemm_fp8(args)
        local res = {why = not ok and tostring(why) or nil}
        if ok then
          args.reps = bench.REPS
          res.ms = cublas:gemm_fp8(args)
          -- the same sums in a different order, each rounded once to bf16 (the fp8 products are
          -- exact, the accumulations narrower than f32 on both sides)
          res.same = c:download():compare(cref:download(), {rtol = 2 ^ -6, atol = 2 ^ -12 * S * 16 * 0.75 * 2.5})
        end
        cref:close()
        return res
      end
      local mine = lt(v.scales, sa, sb)
      if mine.ms then
        r.cublaslt_ms, r.cublaslt_tflops, r.ratio, r.same_as_cublaslt = mine.ms, 2 * S * S * S / (mine.ms * 1e-3) / 1e12, mine.ms / ms, mine.same
        if not mine.same then failures = failures + 1 end
        cols[1], cols[2], cols[5] = ("%.1f"):format(r.cublaslt_tflops), ("%.1f%%"):format(100 * r.ratio), tostring(mine.same)
      else r.cublaslt = mine.why; cols[1] = mine.why end
      if v.scales == "block" then
        local t1, t2 = alike(1, 0.75), alike(1, -2.5)
        local per = lt("tensor", t1, t2)
        t1:close(); t2:close()
        if per.ms then
          r.cublaslt_tensor_ms, r.cublaslt_tensor_tflops, r.ratio_tensor = per.ms, 2 * S * S * S / (per.ms * 1e-3) / 1e12, per.ms / ms
          cols[3], cols[4] = ("%.1f"):format(r.cublaslt_tensor_tflops), ("%.1f%%"):format(100 * r.ratio_tensor)
          if cols[5] == "-" then
            cols[5] = tostring(per.same); r.same_as_cublaslt = per.same
            if not per.same then failures = failures + 1 end
          end
        else r.cublaslt_tensor = per.why; cols[3] = per.why end
      end
    end
    rows[#rows + 1] = r
    print(("| %s | %s | bf16 | %d | %s | %.3f | %.1f | %.3f | %s | %s | %s | %s | %s | %s |"):format(v.dtype, v.scales, S, r.config, ms, r.tflops, wall, tostring(valid),
          cols[1], cols[2], cols[3], cols[4], cols[5]))
    ba:close(); bb:close(); c:close(); sa:close(); sb:close()
  end
end
bench.write_json(json_path, {date = os.date("!%Y-%m-%d %H:%M UTC"), device = dev:name(), target = target, rows = rows})
if failures > 0 then error(failures .. " fp8 check(s) failed") end
