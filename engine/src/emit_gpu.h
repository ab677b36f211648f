/* The signature and prologue the HIP and CUDA dialects share (their C++ is the same here). */
#ifndef CKT_EMIT_GPU_H
#define CKT_EMIT_GPU_H
#include "emit_internal.h"
/* The kernel's signature and prologue (threadIdx, blockIdx, gridDim, the LDS array), and its end
 * (nothing: the body closes itself): the open_kernel and close_kernel of both dialects. */
void ckt_emit_gpu_open(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes, bool dynamic_lds);
void ckt_emit_gpu_close(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes);
#endif
