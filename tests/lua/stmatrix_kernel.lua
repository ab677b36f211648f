-- A 64 x 64 x 32 mma.sync GEMM tile whose accumulators go to an LDS tile through the C fragments'
-- partition, then to global memory by 16-byte copies: the store that CUDA on sm_90 writes as
-- stmatrix where the tile's rows allow it. Shared by tests/lua/stmatrix_spec.lua (the sources)
-- and tests/gpu/stmatrix_check.lua (the GPU against the CPU emulation).
local ckt = require "ckt"
local S = {}
local MB, NB, KB, T = 64, 64, 32, 128

-- o: ldc (the LDS tile's row stride, default 64), swizzle, cond(tid) (the store under b:when)
function S.build(dt, o)
  o = o or {}
  local traits = ckt.gemm_traits{instr = "mma_m16n8k16_" .. dt, m_per_wave = 2, n_per_wave = 4, k_pack = 4}
  return ckt.kernel{name = "stmatrix_tile", block = T, build = function(b)
    local A, B, C = b:pointer("A", dt, {const = true}), b:pointer("B", dt, {const = true}), b:pointer("C", dt)
    local M, N, K = b:size("M"), b:size("N"), b:size("K")
    local ga = ckt.tensor(A, dt, {shape = {M, K}, stride = {K, 1}}, {pad = true})
    local gb = ckt.tensor(B, dt, {shape = {N, K}, stride = {K, 1}}, {pad = true})
    local gc = ckt.tensor(C, dt, {shape = {M, N}}, {pad = true})
    local la = ckt.tensor("lds", dt, ckt.layout({MB, KB}, {KB, 1}))
    local lb = ckt.tensor("lds", dt, ckt.layout({NB, KB}, {KB, 1}))
    local lc = ckt.tensor("lds", dt, ckt.layout({MB, NB}, {o.ldc or NB, 1}), o.swizzle and {swizzle = o.swizzle} or nil)
    local cd = {thread_layout = ckt.layout({T // 4, 4}, {4, 1}), vector_dim = 1, scalar_per_vector = 8}
    local tm, tn = b:block_order{tiles = {(M + MB - 1) // MB, (N + NB - 1) // NB}}
    local acc = b:make_blockwise_gemm_xdl_c_vgpr(la, lb, traits)
    b:clear(acc)
    b:loop((K + KB - 1) // KB, function(i)
      b:copy(ckt.tile_window(la, {MB, KB}, {0, 0}), ckt.local_tile(ga, {MB, KB}, {tm, i}), {dist = cd})
      b:copy(ckt.tile_window(lb, {NB, KB}, {0, 0}), ckt.local_tile(gb, {NB, KB}, {tn, i}), {dist = cd})
      b:sync()
      b:blockwise_gemm(la, lb, acc, traits)
      b:sync()
    end)
    local part = ckt.make_blockwise_gemm_xdl_c_local_partition(ckt.tile_window(lc, {MB, NB}, {0, 0}), traits)
    if o.cond then b:when(o.cond(b:thread_id()), function() part:store(acc) end) else part:store(acc) end
    b:sync()
    local out = {thread_layout = ckt.layout({T // 8, 8}, {8, 1}), vector_dim = 1, scalar_per_vector = 8}
    b:copy(ckt.local_tile(gc, {MB, NB}, {tm, tn}), ckt.tile_window(lc, {MB, NB}, {0, 0}), {dist = out})
  end}
end

function S.grid(M, N) return ((M + MB - 1) // MB) * ((N + NB - 1) // NB) end

-- the stmatrix instructions of a source
function S.count(src) return select(2, src:gsub("CKT_STMATRIX4%(ckt_sa", "")) end

-- what the GPU check runs: each variant with the stores it must have on sm_90 (a thread holds 32
-- values: four groups of 8; the branch on the warp index keeps warps whole)
S.variants = {
  {name = "row-major tile", o = {}, stores = 4},
  {name = "rows 144 bytes apart", o = {ldc = 72}, stores = 4},
  {name = "128B swizzle", o = {swizzle = ckt.swizzle(3, 3, 3)}, stores = 4},
  {name = "under a branch on the warp", o = {cond = function(t) return ckt.lt(t // 32, 4) end}, stores = 4},
}
return S
