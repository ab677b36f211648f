/* ckt — space-filling curves over N-dimensional tiles (CK Tile's space-filling curves,
 * its space_filling_curve header). Values, no allocation. */
#ifndef CKT_SFC_H
#define CKT_SFC_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKT_SFC_MAX_DIM 8

typedef struct ckt_sfc {
    int ndim;
    int64_t lengths[CKT_SFC_MAX_DIM], order[CKT_SFC_MAX_DIM], scalars[CKT_SFC_MAX_DIM];
    int64_t access_lengths[CKT_SFC_MAX_DIM]; /* ceil(lengths / scalars) */
    int64_t num_access;
    bool snake;
} ckt_sfc;

ckt_status ckt_sfc_make(int ndim, const int64_t *lengths, const int64_t *order,
                        const int64_t *scalars, bool snake, ckt_sfc *out, ckt_error *err);
/* The coordinate of access i (scaled by scalars per access); *partial: the access runs past an
 * edge. */
ckt_status ckt_sfc_index(const ckt_sfc *s, int64_t i, int64_t *coord, bool *partial,
                         ckt_error *err);
/* index(j) - index(i) */
ckt_status ckt_sfc_step(const ckt_sfc *s, int64_t i, int64_t j, int64_t *step, ckt_error *err);

typedef struct ckt_sfc_locality {
    int64_t sequential, cache_line, large, total_distance;
} ckt_sfc_locality;
/* The step statistics of CK Tile's space-filling curve documentation: Manhattan distance <= seq:
 * sequential, <= line: within a cache line, else large. */
ckt_status ckt_sfc_locality_of(const ckt_sfc *s, int64_t seq, int64_t line, ckt_sfc_locality *out,
                               ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
