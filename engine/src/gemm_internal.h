/* What the blockwise GEMM builders (kernel_gemm.c: MFMA and mma.sync; kernel_wgmma.c: wgmma)
 * share; private to the engine. */
#ifndef CKT_GEMM_INTERNAL_H
#define CKT_GEMM_INTERNAL_H

#include <stdint.h>

#include "ckt/kernel_ir.h"
#include "ckt/mma.h"

/* blockwise_gemm's operands: a_lds (MPerBlock x KPerBlock) and b_lds (NPerBlock x KPerBlock),
 * rank-2 LDS tensors of instruction m's A and B dtypes with the same K; their sizes. */
ckt_status ckt_gemm_operands(ckt_kernel *k, int a_lds, int b_lds, const ckt_mma *m, int64_t *mpb,
                             int64_t *npb, int64_t *kpb, ckt_error *err);
/* c_reg is the C register tensor of traits t and an mpb x npb block tile (as
 * make_blockwise_gemm_xdl_c_vgpr makes it), for both blockwise GEMMs (mma and wgmma). */
ckt_status ckt_gemm_check_c(ckt_kernel *k, const ckt_gemm_traits *t, int64_t mpb, int64_t npb,
                            int c_reg, ckt_error *err);
/* The instruction's index in ckt_mma_at's table (-1: not there). */
int ckt_gemm_mma_index(const ckt_mma *m);

#endif
