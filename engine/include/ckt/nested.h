/* ckt — IREE nested layouts (IREE's NestedLayoutAttr,
 * the IREEVectorExt dialect's reference).
 * A vector of rank R is viewed as subgroup x batch x outer x thread x element per dimension;
 * subgroup and thread levels are distributed over subgroup ids and lanes by strides. */
#ifndef CKT_NESTED_H
#define CKT_NESTED_H

#include <stddef.h>
#include <stdint.h>

#include "ckt/error.h"
#include "ckt/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKT_NESTED_MAX_RANK 4
#define CKT_NESTED_DEFAULT_SUBGROUP 64 /* AMD wave size; NVIDIA layouts set subgroup_size = 32 */

typedef struct ckt_nested {
    int rank;
    int64_t subgroup_tile[CKT_NESTED_MAX_RANK], batch_tile[CKT_NESTED_MAX_RANK],
        outer_tile[CKT_NESTED_MAX_RANK], thread_tile[CKT_NESTED_MAX_RANK],
        element_tile[CKT_NESTED_MAX_RANK];
    int64_t subgroup_strides[CKT_NESTED_MAX_RANK], thread_strides[CKT_NESTED_MAX_RANK];
    /* ckt's addition: the lanes of a subgroup when a call passes none (0 = 64). It is not part
     * of IREE's attribute; it lets an NVIDIA fragment (32 lanes) be compared as it is. */
    int64_t subgroup_size;
} ckt_nested;

/* Validates (rank, positive tiles, non-negative strides, a distributed tile > 1 with a stride,
 * strides that nest) and normalises as IREE does (a tile of 1 gets stride 0). */
ckt_status ckt_nested_make(const ckt_nested *in, ckt_nested *out, ckt_error *err);
void ckt_nested_undistributed_shape(const ckt_nested *n, int64_t *shape); /* rank entries */
void ckt_nested_distributed_shape(const ckt_nested *n,
                                  int64_t *shape); /* 3*rank: batch++outer++element */
void ckt_nested_packed_shape(const ckt_nested *n, int64_t *shape); /* 5*rank */
int64_t ckt_nested_values_per_thread(const ckt_nested *n);
int64_t ckt_nested_num_subgroups(const ckt_nested *n); /* the subgroup ids the strides span */
/* The subgroup size a call uses: the argument when positive, else n->subgroup_size, else 64. */
int64_t ckt_nested_subgroup_size(const ckt_nested *n, int64_t requested);
/* Threads a flat thread id ranges over: num_subgroups * subgroup_size. */
ckt_status ckt_nested_num_threads(const ckt_nested *n, int64_t subgroup_size, int64_t *out,
                                  ckt_error *err);
/* Coordinates owned by flat thread id tid (subgroup = tid / subgroup_size, lane = tid %
 * subgroup_size): coords[v*rank + i], v in batch-major, then outer, then element order (last
 * dimension fastest in each level). subgroup_size <= 0 means the layout's own. */
ckt_status ckt_nested_elements(const ckt_nested *n, int64_t tid, int64_t subgroup_size,
                               int64_t *coords, ckt_error *err);
/* (thread, value) -> offset in the row-major undistributed tile; value order as
 * ckt_nested_elements. */
ckt_status ckt_nested_tv_layout(const ckt_nested *n, int64_t subgroup_size, ckt_layout *tv,
                                ckt_error *err);
int ckt_nested_to_string(const ckt_nested *n, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
