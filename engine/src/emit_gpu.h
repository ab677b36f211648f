/* The signature and prologue the HIP and CUDA dialects share (their C++ is the same here). */
#ifndef CKT_EMIT_GPU_H
#define CKT_EMIT_GPU_H
#include "emit_internal.h"
void ckt_emit_gpu_open(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes, bool dynamic_lds,
                       const char *tid, const char *bid, const char *nblk);
#endif
