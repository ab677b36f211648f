/* ckt — thread/value distributions: CK Tile encodings (general and the 2D raked patterns of
 * tile_distribution_encoding_pattern_2d), IREE nested layouts (NestedLayoutAttr), MFMA / mma
 * fragments, and the one common view of all of them: a TV layout (thread, value) -> offset in the
 * row-major tile. */
#ifndef CKT_DISTRIBUTION_H
#define CKT_DISTRIBUTION_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/error.h"
#include "ckt/layout.h"
#include "ckt/nested.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKT_DIST_MAX_X 4  /* X dimensions */
#define CKT_DIST_MAX_H 8  /* components per X dimension (and R components) */
#define CKT_DIST_MAX_P 4  /* P dimensions (P0 warp, P1 lane, ...) */
#define CKT_DIST_MAX_Y 16 /* Y dimensions */

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

typedef enum {
    CKT_PATTERN_NONE = 0,
    CKT_THREAD_RAKED,
    CKT_WARP_RAKED,
    CKT_BLOCK_RAKED
} ckt_pattern_kind;

typedef struct ckt_pattern_2d {
    int64_t block_size, y_per_tile, x_per_tile, vec_size, num_wave_groups, warp_size;
    ckt_pattern_kind pattern;
} ckt_pattern_2d;

typedef struct ckt_encoding {
    ckt_encoding_desc d;
    ckt_pattern_2d pattern;     /* pattern.pattern == CKT_PATTERN_NONE for a general encoding */
    int64_t x0, x1, y0, y1, y2; /* the documented names (x0 = vector width, x1 = threads along X) */
    bool shuffled;              /* made by ckt_encoding_pattern_2d_shuffled */
} ckt_encoding;

/* General encoding, validated: ranges of every major/minor, no RH component used twice, every H
 * component reached by a P or a Y, Ys only on H, positive lengths, capacities, 64-bit products. */
ckt_status ckt_encoding_make(const ckt_encoding_desc *d, ckt_encoding *out, ckt_error *err);
/* The encoding CK's TileDistributionEncodingPattern2D builds (static_encoding_pattern.hpp):
 * X0 = min(TileSize / BlockSize, VecSize), X1 = XPerTile / X0 and Y0, Y1, Y2 from the
 * documentation's equations. Inputs for which CK's static_asserts fail are refused with the
 * equation that breaks
 * ("encoding_pattern_2d: Y0*Y1*Y2 == YPerTile fails: 4*8*1 != 48"); so is X0*X1 != XPerTile, which
 * CK does not check (it would leave columns unowned). NumWaveGroups G > 1 (thread raked) gives CK's
 * R = <Y0> encoding: Y0 = warps/G warps replicate one (Y1*Y2) x XPerTile tile. Warp and block
 * raked take G and ignore it, as CK does. */
ckt_status ckt_encoding_pattern_2d(const ckt_pattern_2d *p, ckt_encoding *out, ckt_error *err);
/* CK's MakeShuffled2DStaticTileDistribution: the same pattern with the X axis first,
 * H = <<X1,X0>,<Y0,Y1,Y2>>, i.e. a tile of XPerTile x YPerTile. */
ckt_status ckt_encoding_pattern_2d_shuffled(const ckt_pattern_2d *p, ckt_encoding *out,
                                            ckt_error *err);
const char *ckt_pattern_name(ckt_pattern_kind k);
int64_t ckt_encoding_num_threads(const ckt_encoding *e);
int ckt_encoding_ndim_x(const ckt_encoding *e);
int ckt_encoding_ndim_y(const ckt_encoding *e);
ckt_status ckt_encoding_ys_lengths(const ckt_encoding *e, int64_t *ys, ckt_error *err);
ckt_status ckt_encoding_x_lengths(const ckt_encoding *e, int64_t *xs, ckt_error *err);
int64_t ckt_encoding_num_values(const ckt_encoding *e); /* product of the ys lengths */
/* X coordinates reached by (thread, Y index). The thread id is the merge of the Ps, P0 most
 * significant (with two Ps: thread = P0 * size(P1) + P1, i.e. warp and lane when P1 spans a warp);
 * each P is the merge of the RH components it lists, the first listed most significant; each Y
 * sets one H component; X_i is the merge of H_i, the first listed outermost. */
ckt_status ckt_encoding_calculate_index(const ckt_encoding *e, int64_t thread, const int64_t *ys,
                                        int64_t *xs, ckt_error *err);
/* Who holds X coordinates xs: all threads (ascending; several when R replicates) into threads[cap],
 * their count in *count (may exceed cap: only cap are written), and the Y index of the first one
 * in ys (NULL to skip). A cell no thread reaches gives *count = 0. */
ckt_status ckt_encoding_owner(const ckt_encoding *e, const int64_t *xs, int64_t *threads,
                              int64_t cap, int64_t *count, int64_t *ys, ckt_error *err);
/* (thread, value) -> offset in the row-major tile; value = the Y index with the last Y fastest. */
ckt_status ckt_encoding_tv_layout(const ckt_encoding *e, ckt_layout *tv, ckt_error *err);
int ckt_encoding_to_string(const ckt_encoding *e, char *buf, size_t cap);

/* ---- the common view (tv.c) ---- */
/* A TV layout ((thread leaves),(value leaves)) from leaves given fastest first (colexicographic);
 * size-1 leaves are dropped. */
ckt_status ckt_tv_from_leaves(int nt, const int64_t *ts, const int64_t *td, int nv,
                              const int64_t *vs, const int64_t *vd, ckt_layout *tv, ckt_error *err);
/* Two TV layouts describe the same distribution when every thread owns the same set of
 * offsets (strict: also in the same value order). */
ckt_status ckt_same_distribution(const ckt_layout *a, const ckt_layout *b, bool strict, bool *same,
                                 ckt_error *err);
/* Cell labels "T#/V#" for a rows x cols tile: owner[off] = first (thread, value) owning it, -1 if
 * none. */
ckt_status ckt_tv_owners(const ckt_layout *tv, int64_t cells, int64_t *owner_thread,
                         int64_t *owner_value, ckt_error *err);

#ifdef __cplusplus
}
#endif

#include "ckt/fragment.h" /* fragments are distributions too */
#endif
