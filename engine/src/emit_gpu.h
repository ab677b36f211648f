/* What the HIP and CUDA dialects share (emit_gpu.c): their hooks, which both dialect tables name.
 */
#ifndef CKT_EMIT_GPU_H
#define CKT_EMIT_GPU_H
#include "emit_internal.h"
/* The kernel's signature and prologue (threadIdx, blockIdx, gridDim, the LDS array), and its end
 * (nothing: the body closes itself). */
void ckt_emit_gpu_open(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes, bool dynamic_lds);
void ckt_emit_gpu_close(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes);
/* __syncthreads, or named barrier 1 over the block's threads beside a producer warp */
void ckt_emit_gpu_barrier(ckt_emit_out *o, const ckt_kernel *k, const char *why);
void ckt_emit_gpu_producer_open(ckt_emit_out *o, int64_t block);
void ckt_emit_gpu_producer_close(ckt_emit_out *o);
void ckt_emit_gpu_declare_regs(ckt_emit_out *o, const ckt_ktensor *t, int64_t block);
void ckt_emit_gpu_reg(char *buf, size_t cap, const char *name, int64_t v);
#endif
