-- The CK wrapper GEMM tutorial, step by step, as a ckt script: C = A * B with A an M x K matrix,
-- B stored N x K (both row-major, "K-major": the tutorial's case) and C M x N. Each step names the
-- CK wrapper call it stands for. One Lua function builds the kernel for every target: MFMA on
-- AMD (gfx90a), mma.sync on NVIDIA (sm_90), and on the CPU target the same instructions emulated
-- lane by lane (cpu = cpu:gfx90a; cpu:sm_90 emulates mma.sync).
-- Run: ckt-lua scripts/gemm.lua   (ckt-lua --target cpu ... to run on the CPU target)
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local demo = require "kernel_demo"

local DataType = "f16"

-- The tutorial's template parameters: the block tile (BlockShape), the thread layout of the
-- copies (ThreadLayout), scalar_per_vector and the GEMM traits, here chosen per vendor: AMD
-- waves have 64 lanes and MFMA 32x32x8, NVIDIA warps 32 lanes and mma.sync m16n8k16.
local function config(target)
  if ckt.target(target).vendor == "amd" then -- the architecture compiled for or emulated
    -- BlockwisGemmXdlTraits_32x32Xdl_2x2XdlPerWave_8K1: 32x32 MFMAs, 2 x 2 of them per wave, K1 = 8
    return {tile = {128, 128, 32}, threads = 256, traits = ckt.gemm_traits("32x32Xdl_2x2XdlPerWave_8K1", DataType)}
  end
  -- the same structure with mma.sync: 4 x 8 instructions (64 x 64) per warp, 2 x 2 warps, K1 = 4
  return {tile = {128, 128, 32}, threads = 128,
          traits = ckt.gemm_traits{instr = "mma_m16n8k16_" .. DataType, m_per_wave = 4, n_per_wave = 8, k_pack = 4}}
end

local function build(target)
  local cfg = config(target)
  local MPerBlock, NPerBlock, KPerBlock = cfg.tile[1], cfg.tile[2], cfg.tile[3]
  local GemmTraits, scalar_per_vector = cfg.traits, 8 -- 8 f16 = 16-byte copies
  return ckt.kernel{name = "DeviceGemm", block = cfg.threads, build = function(b)
    -- DeviceGemm(p_a, p_b, p_c, M, N, K, ...): pointers to global memory and the matrix sizes.
    -- K is promised a multiple of 8 so that the 16-byte copies are legal at the K edge.
    local p_a = b:pointer("A", DataType, {const = true})
    local p_b = b:pointer("B", DataType, {const = true})
    local p_c = b:pointer("C", DataType)
    local M, N, K = b:size("M"), b:size("N"), b:size("K", {multiple_of = 8})

    -- Step 1: layouts for global and LDS memory.
    --   ck::wrapper::make_layout(make_tuple(M, K), make_tuple(K, 1)) and the B, C ones: the global
    --   layouts (runtime sizes); the tile layouts are static: a_tile_layout (MPerBlock, KPerBlock)
    --   row-major, b_tile_layout (NPerBlock, KPerBlock) row-major.
    local a_global_layout = {shape = {M, K}, stride = {K, 1}}
    local b_global_layout = {shape = {N, K}, stride = {K, 1}}
    local c_global_layout = {shape = {M, N}, stride = {N, 1}}
    local a_tile_layout = ckt.layout({MPerBlock, KPerBlock}, {KPerBlock, 1})
    local b_tile_layout = ckt.layout({NPerBlock, KPerBlock}, {KPerBlock, 1})
    --   ck::wrapper::pad(a_global_layout, shape(a_tile_layout)): with runtime sizes the padding is
    --   the tensor's pad = true (accesses past M, N, K are masked; the K tail reads zeros). For a
    --   static layout ckt.pad(layout, tile) is the CK wrapper's pad itself, e.g.
    --   ckt.pad(ckt.layout({200, 264}, {264, 1}), {128, 32}) = (256,288):(264,1).

    -- Step 2: tensors for global and LDS memory.
    --   ck::wrapper::make_tensor<MemoryTypeEnum::Global>(p_a, a_global_layout_padded), ...
    local a_global_tensor = ckt.tensor(p_a, DataType, a_global_layout, {pad = true})
    local b_global_tensor = ckt.tensor(p_b, DataType, b_global_layout, {pad = true})
    local c_global_tensor = ckt.tensor(p_c, DataType, c_global_layout, {pad = true})
    --   __shared__ DataType lds_a[size(a_tile_layout)]; make_tensor<MemoryTypeEnum::Lds>(lds_a, a_tile_layout)
    local a_lds_tensor = ckt.tensor("lds", DataType, a_tile_layout)
    local b_lds_tensor = ckt.tensor("lds", DataType, b_tile_layout)

    --   block_idxs = make_tuple(blockIdx.x, blockIdx.y, slice()): the block's tile of C. One grid
    --   dimension here; b:block_order splits the block id into the M and N tile indices.
    local m_tiles, n_tiles = (M + MPerBlock - 1) // MPerBlock, (N + NPerBlock - 1) // NPerBlock
    local block_m, block_n = b:block_order{tiles = {m_tiles, n_tiles}}
    --   DimAccessOrder = Tuple<0, 1>, vector_dim = 1: copies run along K, scalar_per_vector at a time;
    --   ThreadLayout: threads (rows, 4) row-major, 4 x 8 = 32 = KPerBlock elements per row.
    local thread_layout = ckt.layout({cfg.threads // 4, 4}, {4, 1})

    --   c_global_local_tile = make_local_tile(c_global_tensor, tile_shape, block_idxs, ...)
    local c_global_local_tile = ckt.local_tile(c_global_tensor, {MPerBlock, NPerBlock}, {block_m, block_n})
    --   make_blockwise_gemm_xdl_c_local_partition<DataType, ATile, BTile, BlockSize, GemmTraits>(c_global_local_tile)
    local c_global_local_partition = ckt.make_blockwise_gemm_xdl_c_local_partition(c_global_local_tile, GemmTraits)
    --   make_blockwise_gemm_xdl_c_vgpr<DataType, ATile, BTile, BlockSize, GemmTraits>(): f32 accumulators
    local c_vgpr_reg = b:make_blockwise_gemm_xdl_c_vgpr(a_lds_tensor, b_lds_tensor, GemmTraits)
    --   ck::wrapper::clear(c_vgpr_reg)
    b:clear(c_vgpr_reg)

    -- Step 3: the compute loop over K / KPerBlock slices (num_loop = integer_divide_ceil(K, KPerBlock)).
    b:loop((K + KPerBlock - 1) // KPerBlock, function(i)
      --   a_global_local_tile = make_local_tile(a_global_tensor(slice(), k_slice), tile_shape, block_idxs, ...)
      local a_global_local_tile = ckt.local_tile(a_global_tensor, {MPerBlock, KPerBlock}, {block_m, i})
      local b_global_local_tile = ckt.local_tile(b_global_tensor, {NPerBlock, KPerBlock}, {block_n, i})
      --   blockwise_copy<DimAccessOrder, vector_dim, scalar_per_vector>(a_global_local_tile, a_lds_tensor, thread_layout)
      b:blockwise_copy{src = a_global_local_tile, dst = ckt.tile_window(a_lds_tensor, {MPerBlock, KPerBlock}, {0, 0}),
                       thread_layout = thread_layout, access_order = {0, 1}, vector_dim = 1, scalar_per_vector = scalar_per_vector}
      b:blockwise_copy{src = b_global_local_tile, dst = ckt.tile_window(b_lds_tensor, {NPerBlock, KPerBlock}, {0, 0}),
                       thread_layout = thread_layout, access_order = {0, 1}, vector_dim = 1, scalar_per_vector = scalar_per_vector}
      --   ck::block_sync_lds()
      b:sync()
      --   blockwise_gemm_xdl<DataType, size(thread_layout), GemmTraits>(a_lds_tensor, b_lds_tensor, c_vgpr_reg)
      b:blockwise_gemm(a_lds_tensor, b_lds_tensor, c_vgpr_reg, GemmTraits)
      -- (not in the tutorial) the next slice's copies overwrite the LDS tiles: wait for every wave
      b:sync()
    end)

    --   ck::wrapper::copy(c_vgpr_reg, c_global_local_partition): f32 accumulators stored as
    --   DataType (round to nearest even), masked at the M and N edges.
    c_global_local_partition:store(c_vgpr_reg)
  end}, function(Mv, Nv) return ((Mv + MPerBlock - 1) // MPerBlock) * ((Nv + NPerBlock - 1) // NPerBlock) end, cfg
end

local target = ckt.default_target()
local k, grid, cfg = build(target)
demo.section("the kernel (" .. target .. ")")
print(k)
print(("block tile %dx%dx%d, %d threads; %s"):format(cfg.tile[1], cfg.tile[2], cfg.tile[3], cfg.threads, tostring(cfg.traits)))
print(cfg.traits.instr)

for _, t in ipairs{"gfx90a", "sm_90"} do
  demo.section("generated source for " .. t .. " (the blockwise GEMM)")
  local src = build(t):source(t)
  local from = src:find("blockwise_gemm:", 1, true)
  local stop = src:find("__syncthreads", from or 1, true)
  print(from and src:sub(src:sub(1, from):match(".*()\n") or from, (stop or from + 1600) - 1) or src)
end

demo.compile_everywhere(function(t) return (build(t)) end, {"cpu", "cpu:sm_90", "gfx90a", "sm_90"})

-- Sizes that are not multiples of the block tile: the edge blocks are masked, the K tail reads 0.
local M, N, K = 200, 136, 264
demo.section(("run on the default target (%s): %dx%dx%d"):format(target, M, N, K))
local a = ckt.array(DataType, {M, K}):random{seed = 1, lo = -1, hi = 1}
local bt = ckt.array(DataType, {N, K}):random{seed = 2, lo = -1, hi = 1}
-- the reference in double precision, rounded once to the output dtype
local ref = ckt.array("f64", {M, N})
for i = 0, M - 1 do
  for j = 0, N - 1 do
    local s = 0.0
    for kk = 0, K - 1 do s = s + a[i * K + kk] * bt[j * K + kk] end
    ref[i * N + j] = s
  end
end
-- f32 accumulation of K exact products plus the rounding of the output to f16 (half an ulp):
-- |error| <= K * 2^-24 * sum |a b| + 2^-11 |c|, with sum |a b| <= K here
local tol = {atol = K * K * 2 ^ -24, rtol = 2 ^ -11}
local c = ckt.array(DataType, {M, N})
demo.run_and_check(k:compile{target = target}, {M = M, N = N, K = K}, {A = a, B = bt}, {name = "C", array = c}, ref, grid(M, N), tol)
