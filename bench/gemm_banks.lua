-- The LDS bank model against the profiler for the library GEMM: one launch per configuration,
-- printing the model's shared-memory wavefronts for the whole launch (one block's operand reads
-- of a K slice, from gemm.bank_report, times the slices and the blocks; likewise the copy-in
-- writes). Run it under ncu with l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum /
-- _op_st.sum (tests/gpu/gemm_on_gpu_host.sh does) and compare launch by launch.
--   ckt-lua bench/gemm_banks.lua [target=sm_90] [size=512]
local target = arg[1] or "sm_90"
local S = tonumber(arg[2] or "512")
local gemm = require "ckt.kernels.gemm"
local backend = ckt.target(target).runtime
local dev = ckt.device(backend)
local cases = {
  {dtype = "f16", a_major = "k", b_major = "k"},
  {dtype = "f16", a_major = "k", b_major = "k", tile = {128, 128, 32}, block = 256, stages = 3},
  {dtype = "bf16", a_major = "k", b_major = "k"},
  -- M/N-contiguous tiles: ldmatrix.trans reads, a different swizzle
  {dtype = "f16", a_major = "m", b_major = "n"},
  {dtype = "f16", a_major = "k", b_major = "n", tile = {128, 128, 64}, block = 128, stages = 3},
}
for _, o in ipairs(cases) do
  o.target = target
  local k, grid, p = gemm.build(o)
  local exe = k:compile{target = target}
  local r = gemm.bank_report(p)
  local blocks, slices = grid(S, S), (S + p.TK - 1) // p.TK
  local function total(f) local t = 0 for _, x in ipairs{"A", "B"} do local e = r[x][f]; if not e then return nil end t = t + e.cycles end return t * blocks * slices end
  local a = ckt.array(o.dtype, S * S):random{seed = 1}
  local ba, bb, bc = dev:alloc(o.dtype, S * S), dev:alloc(o.dtype, S * S), dev:alloc(o.dtype, S * S)
  ba:upload(a); bb:upload(a)
  exe:launch{grid = grid(S, S), A = ba, B = bb, C = bc, M = S, N = S, K = S}
  print(("BANK %s_%dx%dx%d/%d/%d %s %s"):format(p.name, p.TM, p.TN, p.TK, p.block, p.stages,
        tostring(total("read") or "-"), tostring(total("write") or "-")))
  ba:close(); bb:close(); bc:close()
end
