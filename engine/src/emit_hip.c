/* The HIP dialect (hipRTC, AMD GPUs): threadIdx / blockIdx, __syncthreads, __shared__ LDS,
 * ext_vector loads (one global_load_dwordx4 / ds_read_b128 per 16 bytes: see prelude hip.h),
 * MFMA builtins on accumulators held as arrays of their C vectors (acc_vectors: copied value by
 * value into the builtin's vector and back, they went through VGPRs around every MFMA: 112
 * v_accvgpr reads and writes in the GEMM's K loop). No warpgroup MMAs, bulk copies or mbarriers. */
#include "emit_internal.h"

const ckt_dialect ckt_dialect_hip = {
    .kind = CKT_DIALECT_HIP,
    .name = "hip",
    .prelude = "hip.h",
    .frame = &ckt_frame_gpu,
    .no_unroll = "#pragma unroll 1",
    .interior_unmasked = true,
    .acc_vectors = true,
    .mma = ckt_emit_mma_hip,
};
