/* ckt — hierarchical integer tuples and CuTe layouts as fixed-capacity values.
 *
 * A ckt_tuple is a tree stored in pre-order: node 0 is the root; a node is
 * either an integer leaf (arity == CKT_LEAF) or a tuple of `arity` children
 * which follow it in pre-order. The root of an integer is a single leaf.
 * No allocation: tuples and layouts are plain values, copied by assignment.
 *
 * A ckt_layout is a congruent pair shape:stride (CuTe semantics, see
 * CuTe's layout documentation). Evaluation maps a 1-D index
 * (colexicographic, first mode fastest) or a hierarchical coordinate to an offset.
 *
 * All functions validate inputs and return a ckt_status; on failure `err` says
 * which argument is wrong and why. Output parameters are written only on success.
 */
#ifndef CKT_LAYOUT_H
#define CKT_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKT_TUPLE_NODES 64 /* nodes (leaves + inner tuples) in one tuple */
#define CKT_MAX_RANK 16    /* children of one tuple node */
#define CKT_MAX_DEPTH 8
#define CKT_LEAF (-1)

typedef struct ckt_tuple {
    int16_t n;                      /* nodes in use */
    int8_t arity[CKT_TUPLE_NODES];  /* CKT_LEAF or number of children */
    int64_t value[CKT_TUPLE_NODES]; /* leaf value (unused for tuple nodes) */
} ckt_tuple;

typedef struct ckt_layout {
    ckt_tuple shape;
    ckt_tuple stride;
} ckt_layout;

/* ---- tuples ---- */
ckt_tuple ckt_tuple_int(int64_t v);
/* A flat tuple (v0, ..., v{n-1}); n == 1 still gives a rank-1 tuple "(v0)". */
ckt_status ckt_tuple_flat(ckt_tuple *out, int n, const int64_t *v, ckt_error *err);
/* Build a tuple node from children: out = (c0, c1, ...). */
ckt_status ckt_tuple_make(ckt_tuple *out, int n, const ckt_tuple *children, ckt_error *err);
/* Validate a tuple built by hand: one well-formed pre-order tree within the capacities. */
ckt_status ckt_tuple_check(const ckt_tuple *t, ckt_error *err);
bool ckt_tuple_is_int(const ckt_tuple *t);
int ckt_tuple_rank(const ckt_tuple *t);  /* 1 for an integer */
int ckt_tuple_depth(const ckt_tuple *t); /* 0 for an integer */
int ckt_tuple_leaves(const ckt_tuple *t);
/* Child i of the root (an integer's only mode is itself). */
ckt_status ckt_tuple_get(const ckt_tuple *t, int i, ckt_tuple *out, ckt_error *err);
/* Leaves in pre-order into v (capacity cap); returns the count or -1 when cap is too small. */
int ckt_tuple_flatten(const ckt_tuple *t, int64_t *v, int cap);
ckt_status ckt_tuple_product(const ckt_tuple *t, int64_t *out, ckt_error *err);
bool ckt_tuple_equal(const ckt_tuple *a, const ckt_tuple *b);
bool ckt_tuple_congruent(const ckt_tuple *a, const ckt_tuple *b);
/* Printing: "(4,(2,8))" / "12". Returns the length that would be written (snprintf-like). */
int ckt_tuple_to_string(const ckt_tuple *t, char *buf, size_t cap);
ckt_status ckt_tuple_parse(const char *s, ckt_tuple *out, ckt_error *err);

/* ---- layouts: construction and queries ---- */
ckt_status ckt_layout_make(ckt_layout *out, const ckt_tuple *shape, const ckt_tuple *stride,
                           ckt_error *err);
/* Validate a layout built by hand (well-formed congruent tuples, positive shapes,
 * size and offsets within 64 bits). Every algebra entry point does this first. */
ckt_status ckt_layout_check(const ckt_layout *l, ckt_error *err);
ckt_status ckt_layout_col_major(ckt_layout *out, const ckt_tuple *shape,
                                ckt_error *err); /* LayoutLeft */
ckt_status ckt_layout_row_major(ckt_layout *out, const ckt_tuple *shape,
                                ckt_error *err); /* LayoutRight */
/* Convenience: a depth-1 layout from flat arrays (rank 1 gives an integer layout "s:d"). */
ckt_status ckt_layout_flat(ckt_layout *out, int rank, const int64_t *shape, const int64_t *stride,
                           ckt_error *err);
ckt_status ckt_layout_parse(const char *s, ckt_layout *out,
                            ckt_error *err); /* "(4,(2,8)):(16,(1,2))" */
int ckt_layout_to_string(const ckt_layout *l, char *buf, size_t cap);

int64_t ckt_layout_size(const ckt_layout *l);
int64_t ckt_layout_cosize(const ckt_layout *l);
int ckt_layout_rank(const ckt_layout *l);
int ckt_layout_depth(const ckt_layout *l);
ckt_status ckt_layout_mode(const ckt_layout *l, int i, ckt_layout *out, ckt_error *err);
bool ckt_layout_equal(const ckt_layout *a, const ckt_layout *b);

/* L(i) for a 1-D index 0 <= i < size. The fast path: no error checks beyond range. */
ckt_status ckt_layout_eval(const ckt_layout *l, int64_t idx, int64_t *offset, ckt_error *err);
/* L(coord) for a coordinate tuple compatible with the shape (an integer mode may
 * take an integer for a whole sub-tuple, as in CuTe). */
ckt_status ckt_layout_eval_coord(const ckt_layout *l, const ckt_tuple *coord, int64_t *offset,
                                 ckt_error *err);
/* idx2crd / crd2idx against a shape (colexicographic). */
ckt_status ckt_idx2crd(const ckt_tuple *shape, int64_t idx, ckt_tuple *coord, ckt_error *err);
ckt_status ckt_crd2idx(const ckt_tuple *shape, const ckt_tuple *coord, int64_t *idx,
                       ckt_error *err);

/* ---- algebra (CuTe semantics; see CuTe's layout algebra documentation) ---- */
ckt_status ckt_coalesce(const ckt_layout *l, ckt_layout *out, ckt_error *err);
ckt_status ckt_filter(const ckt_layout *l, ckt_layout *out, ckt_error *err);
ckt_status ckt_composition(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                           ckt_error *err);
/* Per-mode tiler: tiler[i] applies to mode i of a (remaining modes kept). */
ckt_status ckt_composition_tiler(const ckt_layout *a, int n, const ckt_layout *tiler,
                                 ckt_layout *out, ckt_error *err);
ckt_status ckt_complement(const ckt_layout *l, int64_t cotarget, ckt_layout *out,
                          ckt_error *err); /* cotarget <= 0: cosize(l) */
ckt_status ckt_right_inverse(const ckt_layout *l, ckt_layout *out, ckt_error *err);
ckt_status ckt_left_inverse(const ckt_layout *l, ckt_layout *out, ckt_error *err);
/* Divides and products take a layout B (one mode) or a per-mode tiler (n layouts). */
ckt_status ckt_logical_divide(const ckt_layout *a, int n, const ckt_layout *tiler, ckt_layout *out,
                              ckt_error *err);
ckt_status ckt_zipped_divide(const ckt_layout *a, int n, const ckt_layout *tiler, ckt_layout *out,
                             ckt_error *err);
ckt_status ckt_tiled_divide(const ckt_layout *a, int n, const ckt_layout *tiler, ckt_layout *out,
                            ckt_error *err);
ckt_status ckt_flat_divide(const ckt_layout *a, int n, const ckt_layout *tiler, ckt_layout *out,
                           ckt_error *err);
ckt_status ckt_logical_product(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                               ckt_error *err);
ckt_status ckt_zipped_product(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                              ckt_error *err);
ckt_status ckt_tiled_product(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                             ckt_error *err);
ckt_status ckt_blocked_product(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                               ckt_error *err);
/* Products with CuTe's tilers: one layout (n = 0: tiler[0], as the functions above) or a tuple
 * of n layouts applied mode by mode, the other modes of a kept: logical_product(a, (T0, T1)) =
 * (a0 x T0, a1 x T1, a2, ...); zipped gathers ((blocks...), (rests..., other modes)), tiled
 * unpacks the rests, flat unpacks both. CuTe's blocked/raked products take one layout only. */
ckt_status ckt_logical_product_tiler(const ckt_layout *a, int n, const ckt_layout *tiler,
                                     ckt_layout *out, ckt_error *err);
ckt_status ckt_zipped_product_tiler(const ckt_layout *a, int n, const ckt_layout *tiler,
                                    ckt_layout *out, ckt_error *err);
ckt_status ckt_tiled_product_tiler(const ckt_layout *a, int n, const ckt_layout *tiler,
                                   ckt_layout *out, ckt_error *err);
ckt_status ckt_flat_product(const ckt_layout *a, int n, const ckt_layout *tiler, ckt_layout *out,
                            ckt_error *err);
ckt_status ckt_raked_product(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                             ckt_error *err);
ckt_status ckt_make_ordered_layout(const ckt_tuple *shape, const ckt_tuple *order, ckt_layout *out,
                                   ckt_error *err);
ckt_status ckt_tile_to_shape(const ckt_layout *block, const ckt_tuple *shape,
                             const ckt_tuple *order /* NULL: col-major */, ckt_layout *out,
                             ckt_error *err);
ckt_status ckt_max_common_vector(const ckt_layout *a, const ckt_layout *b, int64_t *out,
                                 ckt_error *err);
ckt_status ckt_max_common_layout(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                                 ckt_error *err);
ckt_status ckt_nullspace(const ckt_layout *l, ckt_layout *out, ckt_error *err);
/* make_tiled_copy(thr, val): tiler (as a layout of shape per mode, stride 1) and TV layout. */
ckt_status ckt_make_layout_tv(const ckt_layout *thr, const ckt_layout *val, ckt_tuple *tiler,
                              ckt_layout *tv, ckt_error *err);
ckt_status ckt_local_tile(const ckt_layout *l, const ckt_tuple *tiler, const ckt_tuple *coord,
                          ckt_layout *out, int64_t *offset, ckt_error *err);
ckt_status ckt_local_partition(const ckt_layout *l, const ckt_layout *thr, int64_t idx,
                               ckt_layout *out, int64_t *offset, ckt_error *err);
/* CK wrapper pad: each mode's shape rounded up to a multiple of the tile; strides kept. */
ckt_status ckt_pad(const ckt_layout *l, const ckt_tuple *tile_shape, ckt_layout *out,
                   ckt_error *err);

/* ---- swizzles and composed layouts ---- */
typedef struct ckt_swizzle {
    int b, m, s; /* Swizzle<B,M,S>: x ^ ((x & (((1<<B)-1) << (M+max(0,S)))) >> S) */
} ckt_swizzle;
ckt_status ckt_swizzle_make(int b, int m, int s, ckt_swizzle *out, ckt_error *err);
static inline int64_t ckt_swizzle_apply(ckt_swizzle sw, int64_t x)
{
    int shift = sw.s > 0 ? sw.s : -sw.s;
    int64_t yyy = (((int64_t)1 << sw.b) - 1) << (sw.m + (sw.s > 0 ? sw.s : 0));
    return sw.s >= 0 ? x ^ ((x & yyy) >> shift) : x ^ ((x & yyy) << shift);
}

/* ComposedLayout(A=swizzle, offset, B=layout): c -> sw(offset + B(c)). */
typedef struct ckt_composed {
    ckt_swizzle sw;
    int64_t offset;
    ckt_layout inner;
} ckt_composed;
ckt_status ckt_composed_eval(const ckt_composed *c, int64_t idx, int64_t *offset, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
