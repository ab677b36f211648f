/* What the blockwise GEMM builders (kernel_gemm.c: MFMA and mma.sync; kernel_wgmma.c: wgmma)
 * share; private to the engine. */
#ifndef CKT_GEMM_INTERNAL_H
#define CKT_GEMM_INTERNAL_H

#include <stdint.h>

#include "ckt/kernel_ir.h"
#include "ckt/mma.h"

/* Rows and columns of a rank-2 LDS tensor; `what` names it in the refusal. */
ckt_status ckt_gemm_lds_tile(ckt_kernel *k, int tensor, const char *what, int64_t *rows,
                             int64_t *cols, ckt_error *err);
/* The instruction's index in ckt_mma_at's table (-1: not there). */
int ckt_gemm_mma_index(const ckt_mma *m);

#endif
