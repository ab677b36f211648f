/* ckt — matrix instructions as data: MFMA on AMD, mma.sync on NVIDIA. Each instruction is
 * described once: shape M x N x K, operand dtypes, the lanes of a wave / warp that execute it,
 * the targets that have it, the A, B and C/D lane layouts, and what each dialect emits. The
 * register fragments and C partitions of the kernel builder (blockwise GEMM), the emitted calls,
 * the help text and the pictures all come from this one description.
 *
 * Lane-layout convention (the one of ckt/fragment.h and ckt_dist_from_tv): a TV layout maps
 * (lane, value) -> offset in the ROW-MAJOR operand tile:
 *   A is M x K (offset m*K + k), B is K x N (offset k*N + n), C/D is M x N (offset m*N + n).
 * Mode 0 is the lane (0..lanes-1), mode 1 the value (register element) index. Value i of the
 * A fragment is element i of the instruction's A operand register(s) (for mma.sync: half i of
 * the packed b32 registers, the low half first). */
#ifndef CKT_MMA_H
#define CKT_MMA_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/dtype.h"
#include "ckt/error.h"
#include "ckt/layout.h"
#include "ckt/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_mma {
    const char *name; /* ckt's name: "mfma_f32_32x32x8f16", "mma_m16n8k16_f16", ... */
    const char *isa;  /* the instruction as the ISA / PTX spells it */
    ckt_vendor vendor;
    /* true: an emulation-only instruction of the CPU target (any cpu:<gpu>); otherwise the
     * architectures whose matrix list (ckt/target.h) names it have it */
    bool emulation_only;
    int64_t m, n, k;
    ckt_dtype a, b, c;                    /* operand dtypes (C is also D, the accumulator) */
    int64_t lanes;                        /* 64 (an AMD wave) or 32 (an NVIDIA warp) */
    int64_t a_values, b_values, c_values; /* values per lane of each operand */
    /* the contiguous run of K a lane holds in A and in B (MFMA: 4, mma.sync: 2); a blockwise
     * GEMM's k_pack is a multiple of it */
    int64_t k_chunk;
    const char *a_tv, *b_tv, *c_tv; /* the lane layouts (convention above), as layout text */
    /* HIP: the __builtin_amdgcn_mfma_* name; CUDA: the PTX instruction of the inline asm. */
    const char *intrinsic;
    /* HIP: the vector type of the A/B operands ("half4" or "short4"); CUDA: unused */
    const char *operand_type;
    /* C dialect: the prelude function that emulates it lane by lane (kernels/prelude/c.h),
     * written from the vendors' lane formulas independently of a_tv/b_tv/c_tv, so that a wrong
     * lane table in this description gives wrong results on the CPU target */
    const char *emulation;
    /* NVIDIA: ldmatrix can load the A (x4) and B (x2) fragments from shared memory when the LDS
     * layout gives each 8-element K row 16 contiguous, 16-byte aligned bytes */
    bool ldmatrix;
    const char *doc; /* one line of help: what it computes and where the table comes from */
} ckt_mma;

/* All instructions, in a fixed order; NULL past the end. */
const ckt_mma *ckt_mma_at(int i);
int ckt_mma_count(void);
/* By name: ckt's name or the ISA name ("v_mfma_f32_32x32x8f16", "mma.sync.aligned.m16n8k16
 * .row.col.f32.bf16.bf16.f32"). Unknown names: CKT_EINVAL listing the known ones. */
ckt_status ckt_mma_get(const char *name, const ckt_mma **out, ckt_error *err);
/* Has `target` (a parsed target, ckt/target.h) this instruction? Its record says so: the
 * matrix list of the architecture it compiles for or emulates, or, for an emulation-only
 * instruction, whether it is the CPU target. NULL: false. */
bool ckt_mma_on_target(const ckt_mma *mma, const ckt_target_record *target);
/* The modelled architectures that have it, comma-separated ("gfx908,gfx90a,..."; "cpu" for an
 * emulation-only instruction), written into buf (truncated to cap). */
const char *ckt_mma_targets(const ckt_mma *mma, char *buf, size_t cap);
/* The i-th instruction `target` has (NULL past the end). */
const ckt_mma *ckt_mma_for_target(const ckt_target_record *target, int i);
/* The first instruction of `target` with these operand dtypes and shape (m, n, k 0: any). */
ckt_status ckt_mma_find(const ckt_target_record *target, ckt_dtype a, ckt_dtype b, ckt_dtype c,
                        int64_t m, int64_t n, int64_t k, const ckt_mma **out, ckt_error *err);
/* The lane layout of operand 'A', 'B' or 'C' ('D' = 'C', lower case accepted), parsed. */
ckt_status ckt_mma_layout(const ckt_mma *mma, char operand, ckt_layout *out, ckt_error *err);
/* Rows and columns of an operand tile: A M x K, B K x N, C M x N. */
void ckt_mma_operand_shape(const ckt_mma *mma, char operand, int64_t *rows, int64_t *cols);
/* CKT_OK when `target` has the instruction; else CKT_EUNSUPPORTED naming the targets that do. */
ckt_status ckt_mma_check_target(const ckt_mma *mma, const ckt_target_record *target,
                                ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
