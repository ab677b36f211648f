/* ckt — thread/value distributions: CK Tile encodings (general and the 2D raked patterns of
 * seed 000), IREE nested layouts (seed 002), MFMA / mma fragments, and the one common view
 * of all of them: a TV layout (thread, value) -> offset in the row-major tile. */
#ifndef CKT_DISTRIBUTION_H
#define CKT_DISTRIBUTION_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/error.h"
#include "ckt/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKT_DIST_MAX_X 4   /* X dimensions */
#define CKT_DIST_MAX_H 8   /* components per X dimension (and R components) */
#define CKT_DIST_MAX_P 4   /* P dimensions (P0 warp, P1 lane, ...) */
#define CKT_DIST_MAX_Y 16  /* Y dimensions */

/* tile_distribution_encoding<R, H..., P_major, P_minor, Y_major, Y_minor> with CK's meaning:
 * "RH major" 0 is R, i >= 1 is H_{i-1}; minor indexes inside that sequence. */
typedef struct ckt_encoding_desc {
    int nr;
    int64_t rs[CKT_DIST_MAX_H];
    int nx;
    int nh[CKT_DIST_MAX_X];
    int64_t hs[CKT_DIST_MAX_X][CKT_DIST_MAX_H];
    int np;
    int np_comp[CKT_DIST_MAX_P];
    int p_major[CKT_DIST_MAX_P][CKT_DIST_MAX_H], p_minor[CKT_DIST_MAX_P][CKT_DIST_MAX_H];
    int ny;
    int y_major[CKT_DIST_MAX_Y], y_minor[CKT_DIST_MAX_Y];
} ckt_encoding_desc;

typedef enum { CKT_PATTERN_NONE = 0, CKT_THREAD_RAKED, CKT_WARP_RAKED, CKT_BLOCK_RAKED } ckt_pattern_kind;

typedef struct ckt_pattern_2d {
    int64_t block_size, y_per_tile, x_per_tile, vec_size, num_wave_groups, warp_size;
    ckt_pattern_kind pattern;
} ckt_pattern_2d;

typedef struct ckt_encoding {
    ckt_encoding_desc d;
    ckt_pattern_2d pattern;         /* pattern.pattern == CKT_PATTERN_NONE for a general encoding */
    int64_t x0, x1, y0, y1, y2;     /* the seed's names (x0 = vector width, x1 = threads along X) */
} ckt_encoding;

ckt_status ckt_encoding_make(const ckt_encoding_desc *d, ckt_encoding *out, ckt_error *err);
ckt_status ckt_encoding_pattern_2d(const ckt_pattern_2d *p, ckt_encoding *out, ckt_error *err);
const char *ckt_pattern_name(ckt_pattern_kind k);
int64_t ckt_encoding_num_threads(const ckt_encoding *e);
int ckt_encoding_ndim_x(const ckt_encoding *e);
int ckt_encoding_ndim_y(const ckt_encoding *e);
ckt_status ckt_encoding_ys_lengths(const ckt_encoding *e, int64_t *ys, ckt_error *err);
ckt_status ckt_encoding_x_lengths(const ckt_encoding *e, int64_t *xs, ckt_error *err);
/* X coordinates reached by (thread, Y index). */
ckt_status ckt_encoding_calculate_index(const ckt_encoding *e, int64_t thread, const int64_t *ys, int64_t *xs, ckt_error *err);
/* (thread, value) -> offset in the row-major tile; value = the Y index with the last Y fastest. */
ckt_status ckt_encoding_tv_layout(const ckt_encoding *e, ckt_layout *tv, ckt_error *err);
int ckt_encoding_to_string(const ckt_encoding *e, char *buf, size_t cap);

/* ---- IREE nested layouts ---- */
#define CKT_NESTED_MAX_RANK 4
typedef struct ckt_nested {
    int rank;
    int64_t subgroup_tile[CKT_NESTED_MAX_RANK], batch_tile[CKT_NESTED_MAX_RANK], outer_tile[CKT_NESTED_MAX_RANK],
        thread_tile[CKT_NESTED_MAX_RANK], element_tile[CKT_NESTED_MAX_RANK];
    int64_t subgroup_strides[CKT_NESTED_MAX_RANK], thread_strides[CKT_NESTED_MAX_RANK];
} ckt_nested;

/* Validates (rank, zero tiles, nesting of strides) and normalises (tile 1 -> stride 0). */
ckt_status ckt_nested_make(const ckt_nested *in, ckt_nested *out, ckt_error *err);
void ckt_nested_undistributed_shape(const ckt_nested *n, int64_t *shape);       /* rank entries */
void ckt_nested_distributed_shape(const ckt_nested *n, int64_t *shape);         /* 3*rank: batch++outer++element */
void ckt_nested_packed_shape(const ckt_nested *n, int64_t *shape);              /* 5*rank */
int64_t ckt_nested_values_per_thread(const ckt_nested *n);
int64_t ckt_nested_num_subgroups(const ckt_nested *n);
/* Coordinates owned by flat thread id tid: coords[v*rank + i], v in batch-major, outer, element order. */
ckt_status ckt_nested_elements(const ckt_nested *n, int64_t tid, int64_t subgroup_size, int64_t *coords, ckt_error *err);
ckt_status ckt_nested_tv_layout(const ckt_nested *n, int64_t subgroup_size, ckt_layout *tv, ckt_error *err);
int ckt_nested_to_string(const ckt_nested *n, char *buf, size_t cap);

/* ---- matrix-instruction fragments as TV layouts over the row-major operand tile ---- */
typedef struct ckt_fragment {
    char name[48];
    char operand; /* 'A', 'B' or 'C' */
    int64_t rows, cols, lanes, values;
    ckt_layout tv;
} ckt_fragment;
ckt_status ckt_fragment_get(const char *name, char operand, ckt_fragment *out, ckt_error *err);

/* ---- the common view ---- */
/* Two TV layouts describe the same distribution when every thread owns the same set of
 * offsets (strict: also in the same value order). */
ckt_status ckt_same_distribution(const ckt_layout *a, const ckt_layout *b, bool strict, bool *same, ckt_error *err);
/* Cell labels "T#/V#" for a rows x cols tile: owner[off] = first (thread, value) owning it, -1 if none. */
ckt_status ckt_tv_owners(const ckt_layout *tv, int64_t cells, int64_t *owner_thread, int64_t *owner_value, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
