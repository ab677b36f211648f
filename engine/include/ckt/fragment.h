/* ckt — matrix-instruction operand fragments (MFMA on AMD, mma.sync on NVIDIA) as ready-made
 * distributions: the lane tables of AMD's MFMA instructions and the PTX ISA's mma.sync written as
 * TV layouts over the row-major operand tile, and the same fragments as a CK encoding and as an
 * IREE nested layout (all three are checked equal, value order included, by the unit tests). */
#ifndef CKT_FRAGMENT_H
#define CKT_FRAGMENT_H

#include <stdint.h>

#include "ckt/distribution.h"
#include "ckt/error.h"
#include "ckt/layout.h"
#include "ckt/nested.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_fragment {
    char name[48];
    char operand;                      /* 'A', 'B' or 'C' (D is accepted as C) */
    int64_t rows, cols, lanes, values; /* the operand tile is rows x cols, row-major */
    ckt_layout tv;                     /* (lane, register) -> offset in the tile */
} ckt_fragment;

/* name: mfma_f32_32x32x8f16, mfma_f32_16x16x16f16 (and the bf16_1k twins, same lane layouts),
 * mma_m16n8k16; operand: 'A', 'B', 'C' (or lower case, 'D' = 'C'). */
ckt_status ckt_fragment_get(const char *name, char operand, ckt_fragment *out, ckt_error *err);
/* The same fragment as a CK tile_distribution_encoding (one P = the lane) ... */
ckt_status ckt_fragment_encoding(const ckt_fragment *f, ckt_encoding *out, ckt_error *err);
/* ... and as an IREE nested layout (subgroup_size = the instruction's lanes). */
ckt_status ckt_fragment_nested(const ckt_fragment *f, ckt_nested *out, ckt_error *err);
/* The instruction names ckt knows, NULL-terminated (canonical names only). */
const char *const *ckt_fragment_names(void);

#ifdef __cplusplus
}
#endif
#endif
