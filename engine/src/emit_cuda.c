/* The CUDA dialect (NVRTC, NVIDIA GPUs): threadIdx / blockIdx, __syncthreads, __shared__,
 * uint4 loads and stores (one 128-bit access per 16 bytes: see prelude cuda.h). */
#include "emit_gpu.h"

static void open_kernel(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes, bool dynamic_lds)
{
    ckt_emit_gpu_open(s, k, lds_bytes, dynamic_lds, "threadIdx", "blockIdx", "gridDim");
}
static void close_kernel(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes)
{
    (void)s;
    (void)k;
    (void)lds_bytes;
}

const ckt_dialect ckt_dialect_cuda = {CKT_DIALECT_CUDA,   "cuda",      "cuda.h",    false,
                                      "__syncthreads();", open_kernel, close_kernel};
