/* The CUDA dialect (NVRTC, NVIDIA GPUs): threadIdx / blockIdx, __syncthreads, __shared__,
 * uint4 loads and stores (one 128-bit access per 16 bytes: see prelude cuda.h). */
#include "emit_gpu.h"

const ckt_dialect ckt_dialect_cuda = {
    CKT_DIALECT_CUDA,  "cuda", "cuda.h", false, "__syncthreads();", ckt_emit_gpu_open,
    ckt_emit_gpu_close};
