/* The HIP dialect (hipRTC, AMD GPUs): threadIdx / blockIdx, __syncthreads, __shared__ LDS,
 * ext_vector loads (one global_load_dwordx4 / ds_read_b128 per 16 bytes: see prelude hip.h),
 * MFMA builtins. No warpgroup MMAs, bulk copies or mbarriers. */
#include "emit_gpu.h"

const ckt_dialect ckt_dialect_hip = {
    .kind = CKT_DIALECT_HIP,
    .name = "hip",
    .prelude = "hip.h",
    .open_kernel = ckt_emit_gpu_open,
    .close_kernel = ckt_emit_gpu_close,
    .barrier = ckt_emit_gpu_barrier,
    .producer_open = ckt_emit_gpu_producer_open,
    .producer_close = ckt_emit_gpu_producer_close,
    .declare_regs = ckt_emit_gpu_declare_regs,
    .reg = ckt_emit_gpu_reg,
    .no_unroll = "#pragma unroll 1",
    .interior_unmasked = true,
    .mma = ckt_emit_mma_hip,
};
