/* ckt — Hopper's warpgroup MMA (wgmma.mma_async, sm_90a): the shared-memory matrix descriptors
 * computed from the ckt layout of an LDS tile.
 *
 * wgmma reads A (64 x 16) and B (N x 16, the N x K tile of ckt's blockwise GEMM) of one
 * instruction from shared memory through 64-bit descriptors (NVIDIA's PTX ISA, "Matrix
 * Descriptor Format"): bits 0-13 the start address >> 4, 16-29 the leading dimension byte offset
 * (LBO) >> 4, 32-45 the stride dimension byte offset (SBO) >> 4, 49-51 the base offset (0 here),
 * 62-63 the swizzle mode (0 none, 1 128-byte, 2 64-byte, 3 32-byte). The hardware reads one of
 * its canonical layouts (the PTX ISA's "Shared Memory Matrix Layout", the same layouts CUTLASS's
 * GMMA descriptor documentation writes as CuTe layouts), with T = 16 / element bytes elements per
 * 16-byte chunk, W the swizzle width in bytes, for element (r, k) of the operand (r: row of A or
 * of the N x K tile of B, k: 0..15):
 *   K-major,  no swizzle: (r%8)*16 + (r/8)*SBO + (k%T)*e + (k/T)*LBO   (8 x 16-byte core matrices)
 *   K-major,  W-swizzle : (r%8)*W  + (r/8)*SBO + k*e                    (LBO unused)
 *   MN-major, no swizzle: (r%T)*e  + (r/T)*SBO + (k%8)*16 + (k/8)*LBO
 *   MN-major, W-swizzle : (r%(W/e))*e + (r/(W/e))*LBO + (k%8)*W + (k/8)*SBO
 * added to the start address; then the W-byte swizzle XORs address bits 7.. into bits 4..: on
 * byte addresses it is CuTe's Swizzle<B,4,3> with W = 16 << B (32B: B = 1, 64B: 2, 128B: 3).
 * ckt swizzles act on element offsets, so for elements of e = 2^p bytes the same permutation is
 * ckt.swizzle(B, 4 - p, 3): for f16/bf16 Sw<1,3,3>, Sw<2,3,3>, Sw<3,3,3>.
 *
 * Because the hardware swizzles the absolute address, a swizzled tile must start on a
 * 2^(7+B)-byte boundary (256, 512, 1024 bytes) for its ckt layout and the hardware to agree.
 *
 * ckt_wgmma_desc_make derives the parameters from the layout and then checks every element of
 * the operand against the canonical layout above: a layout the hardware cannot describe is
 * refused, naming the rule it breaks. */
#ifndef CKT_WGMMA_H
#define CKT_WGMMA_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/dtype.h"
#include "ckt/error.h"
#include "ckt/kernel_ir.h"
#include "ckt/layout.h"
#include "ckt/mma.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_wgmma_desc {
    int64_t start;     /* byte offset of the operand's element (0, 0) from the tile base, before
                        * the swizzle (what the descriptor's start address adds to the base) */
    int64_t lbo, sbo;  /* leading / stride dimension byte offsets (16 where unused) */
    int swizzle_bytes; /* 0 (none), 32, 64 or 128 */
    bool mn_major;     /* M/N contiguous: the instruction's transpose bit (imm-trans-a / -b) */
    int64_t elem_bytes;
} ckt_wgmma_desc;

/* Is this instruction a warpgroup MMA (operands through descriptors)? */
bool ckt_mma_is_wgmma(const ckt_mma *m);

/* The descriptor of the rows x 16 operand whose element (0, 0) is element (row0, k0) of an LDS
 * tile: `tile` a rank-2 layout (mode 0 the rows: M for A, N for B; mode 1 K) in elements of
 * `dtype` (f16 or bf16), `sw` its swizzle on element offsets (NULL or B = 0: none). rows is 64 for
 * A and the instruction's N for B. Refusals (CKT_EINVAL) name the rule the layout breaks. */
ckt_status ckt_wgmma_desc_make(const ckt_layout *tile, const ckt_swizzle *sw, ckt_dtype dtype,
                               int64_t rows, int64_t row0, int64_t k0, ckt_wgmma_desc *out,
                               ckt_error *err);
/* The byte offset from the tile base the hardware reads for element (r, k) of the operand. */
int64_t ckt_wgmma_desc_address(const ckt_wgmma_desc *d, int64_t r, int64_t k);
/* The 64-bit descriptor for a tile at shared-memory byte address `base` (aligned as above:
 * CKT_EINVAL otherwise). */
ckt_status ckt_wgmma_desc_encode(const ckt_wgmma_desc *d, int64_t base, uint64_t *out,
                                 ckt_error *err);
/* The fields of an encoded descriptor (start = the absolute start address; elem_bytes and
 * mn_major are not in the descriptor: set them from the instruction). */
void ckt_wgmma_desc_decode(uint64_t bits, ckt_wgmma_desc *out);
/* The alignment in bytes a tile with this swizzle (element units, dtype) must start on. */
int64_t ckt_wgmma_tile_alignment(const ckt_swizzle *sw, ckt_dtype dtype);

/* One operand of a blockwise wgmma over an LDS tile of (groups x reps x rows) x (ksteps x 16):
 * the descriptor shape every instruction shares and the start offsets of warpgroup 0's tiles;
 * warpgroup g's are g * group_step further. which: 'A' or 'B' (for messages). */
typedef struct ckt_wgmma_operand {
    ckt_wgmma_desc d; /* LBO, SBO, swizzle and major shared by all; d.start = start[0][0] */
    int64_t rows, reps, groups, ksteps;
    int64_t group_step;    /* bytes between the tiles of neighbouring warpgroups */
    int64_t start[16][16]; /* [repeat][K step]: start bytes of warpgroup 0's instruction tiles */
    int64_t align;         /* the byte boundary the tile (and every stage) must start on */
} ckt_wgmma_operand;
ckt_status ckt_wgmma_operand_plan(const ckt_layout *tile, const ckt_swizzle *sw, ckt_dtype dtype,
                                  int64_t rows, int64_t reps, int64_t groups, int64_t ksteps,
                                  char which, ckt_wgmma_operand *out, ckt_error *err);

/* The blockwise GEMM of ckt/gemm.h with a wgmma instruction (ckt_kernel_blockwise_gemm calls it):
 * the traits' waves are warpgroups; A and B are read from the LDS tiles through descriptors
 * (refused when their layouts or alignment cannot be described). */
struct ckt_gemm_traits;
ckt_status ckt_kernel_blockwise_wgmma(ckt_kernel *k, int a_lds, int b_lds, int c_reg,
                                      const struct ckt_gemm_traits *t, ckt_error *err);
/* The same leaving `pending` (0..7) groups of MMAs in flight, and, where the expression zero is
 * nonzero, c_reg = A B^T (its old values ignored; CKT_EXPR_NONE: never; ckt_kernel_wgmma_async). */
ckt_status ckt_kernel_blockwise_wgmma_async(ckt_kernel *k, int a_lds, int b_lds, int c_reg,
                                            const struct ckt_gemm_traits *t, int64_t pending,
                                            ckt_expr_id zero, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
