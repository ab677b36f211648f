/* Layouts: construction, validation, queries and evaluation (CuTe semantics). */
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "ckt/layout.h"
#include "tuple_internal.h"

/* size and cosize must fit in 64 bits so that every offset a layout produces does too. */
static ckt_status check_extent(const ckt_tuple *shape, const ckt_tuple *stride, ckt_error *err)
{
    int64_t size = 1, cos = 0;
    for (int i = 0; i < shape->n; i++) {
        if (shape->arity[i] != CKT_LEAF) continue;
        int64_t s = shape->value[i], d = stride->value[i], span;
        if (s <= 0)
            return ckt_fail(err, CKT_EINVAL, "layout: shape %lld must be positive", (long long)s);
        if (d == INT64_MIN)
            return ckt_fail(err, CKT_EOVERFLOW, "layout: stride %lld overflows", (long long)d);
        if (ckt_mul_ovf(size, s, &size))
            return ckt_fail(err, CKT_EOVERFLOW, "layout: size overflows 64 bits");
        if (ckt_mul_ovf(s - 1, d < 0 ? -d : d, &span) || ckt_add_ovf(cos, span, &cos) ||
            cos == INT64_MAX)
            return ckt_fail(err, CKT_EOVERFLOW,
                            "layout: offsets overflow 64 bits (cosize too large)");
    }
    return CKT_OK;
}

static ckt_status check_pair(const ckt_tuple *shape, const ckt_tuple *stride, ckt_error *err)
{
    ckt_status st;
    if ((st = ckt_tuple_check(shape, err))) return ckt_fail_prefix(err, "layout: shape: ");
    if ((st = ckt_tuple_check(stride, err))) return ckt_fail_prefix(err, "layout: stride: ");
    if (!ckt_tuple_congruent(shape, stride)) {
        char a[256], b[256];
        ckt_tuple_to_string(shape, a, sizeof a);
        ckt_tuple_to_string(stride, b, sizeof b);
        return ckt_fail(err, CKT_EINVAL, "layout: shape %s and stride %s are not congruent", a, b);
    }
    return check_extent(shape, stride, err);
}

ckt_status ckt_layout_check(const ckt_layout *l, ckt_error *err)
{
    if (!l) return ckt_fail(err, CKT_EINVAL, "layout: NULL layout");
    return check_pair(&l->shape, &l->stride, err);
}

ckt_status ckt_layout_make(ckt_layout *out, const ckt_tuple *shape, const ckt_tuple *stride,
                           ckt_error *err)
{
    if (!out || !shape || !stride) return ckt_fail(err, CKT_EINVAL, "layout: NULL argument");
    ckt_status st = check_pair(shape, stride, err);
    if (st) return st;
    ckt_layout l; /* shape or stride may live inside *out */
    l.shape = *shape;
    l.stride = *stride;
    *out = l;
    return CKT_OK;
}

/* Compact strides: column-major (first leaf fastest) or row-major (last leaf fastest). */
static ckt_status compact(ckt_layout *out, const ckt_tuple *shape, bool row_major, ckt_error *err)
{
    if (!shape) return ckt_fail(err, CKT_EINVAL, "layout: shape is NULL");
    if (ckt_tuple_check(shape, err)) return ckt_fail_prefix(err, "layout: shape: ");
    ckt_tuple stride = *shape;
    int64_t cur = 1;
    for (int k = 0; k < shape->n; k++) {
        int i = row_major ? shape->n - 1 - k : k;
        if (shape->arity[i] != CKT_LEAF) continue;
        if (shape->value[i] <= 0)
            return ckt_fail(err, CKT_EINVAL, "layout: shape %lld must be positive",
                            (long long)shape->value[i]);
        stride.value[i] = cur;
        if (ckt_mul_ovf(cur, shape->value[i], &cur))
            return ckt_fail(err, CKT_EOVERFLOW, "layout: size overflows 64 bits");
    }
    return ckt_layout_make(out, shape, &stride, err);
}

ckt_status ckt_layout_col_major(ckt_layout *out, const ckt_tuple *shape, ckt_error *err)
{
    return compact(out, shape, false, err);
}
ckt_status ckt_layout_row_major(ckt_layout *out, const ckt_tuple *shape, ckt_error *err)
{
    return compact(out, shape, true, err);
}

ckt_status ckt_layout_flat(ckt_layout *out, int rank, const int64_t *shape, const int64_t *stride,
                           ckt_error *err)
{
    if (rank <= 0) return ckt_fail(err, CKT_EINVAL, "layout: rank %d must be positive", rank);
    ckt_tuple s, d;
    ckt_status st;
    if (rank == 1) {
        s = ckt_tuple_int(shape[0]);
        d = ckt_tuple_int(stride[0]);
    } else if ((st = ckt_tuple_flat(&s, rank, shape, err)) ||
               (st = ckt_tuple_flat(&d, rank, stride, err))) {
        return st;
    }
    return ckt_layout_make(out, &s, &d, err);
}

int64_t ckt_layout_size(const ckt_layout *l)
{
    int64_t p = 1;
    for (int i = 0; i < l->shape.n; i++)
        if (l->shape.arity[i] == CKT_LEAF) p *= l->shape.value[i]; /* validated at construction */
    return p;
}

int64_t ckt_layout_cosize(const ckt_layout *l)
{
    int64_t c = 0;
    for (int i = 0; i < l->shape.n; i++)
        if (l->shape.arity[i] == CKT_LEAF) {
            int64_t d = l->stride.value[i];
            c += (l->shape.value[i] - 1) * (d < 0 ? -d : d);
        }
    return c + 1;
}

int ckt_layout_rank(const ckt_layout *l) { return ckt_tuple_rank(&l->shape); }
int ckt_layout_depth(const ckt_layout *l) { return ckt_tuple_depth(&l->shape); }

ckt_status ckt_layout_mode(const ckt_layout *l, int i, ckt_layout *out, ckt_error *err)
{
    if (!l || !out) return ckt_fail(err, CKT_EINVAL, "mode: NULL argument");
    ckt_layout m;
    ckt_status st;
    if ((st = ckt_tuple_get(&l->shape, i, &m.shape, err)) ||
        (st = ckt_tuple_get(&l->stride, i, &m.stride, err)))
        return st;
    *out = m;
    return CKT_OK;
}

bool ckt_layout_equal(const ckt_layout *a, const ckt_layout *b)
{
    return ckt_tuple_equal(&a->shape, &b->shape) && ckt_tuple_equal(&a->stride, &b->stride);
}

ckt_status ckt_layout_eval(const ckt_layout *l, int64_t idx, int64_t *offset, ckt_error *err)
{
    /* one pass over the leaves; whatever is left of the index after the last leaf
     * means it was out of range (no separate size computation on the fast path) */
    int64_t off = 0, rest = idx;
    const int8_t *arity = l->shape.arity;
    const int64_t *s = l->shape.value, *d = l->stride.value;
    for (int i = 0, n = l->shape.n; i < n && rest > 0; i++) {
        if (arity[i] != CKT_LEAF) continue;
        int64_t q = rest / s[i];
        off += (rest - q * s[i]) * d[i];
        rest = q;
    }
    if (rest != 0) {
        int64_t size = ckt_layout_size(l);
        return ckt_fail(err, CKT_EINVAL, "layout: index %lld is out of range [0, %lld)",
                        (long long)idx, (long long)size);
    }
    *offset = off;
    return CKT_OK;
}

/* One pre-order tree of 1..CKT_TUPLE_NODES nodes (the cheap part of ckt_tuple_check,
 * enough to keep evaluation inside the arrays). */
static bool tree_ok(const ckt_tuple *t)
{
    if (t->n <= 0 || t->n > CKT_TUPLE_NODES) return false;
    int pending = 1;
    for (int i = 0; i < t->n; i++) {
        if (pending == 0 ||
            (t->arity[i] != CKT_LEAF && (t->arity[i] <= 0 || t->arity[i] > CKT_MAX_RANK)))
            return false;
        pending += t->arity[i] == CKT_LEAF ? -1 : t->arity[i] - 1;
    }
    return pending == 0;
}

/* Offset of coordinate node c (in coord) against layout node i; a leaf coordinate against a
 * tuple mode is a 1-D index into that mode (colexicographic), as in CuTe. */
static ckt_status eval_node(const ckt_layout *l, int i, const ckt_tuple *coord, int c, int64_t *off,
                            ckt_error *err)
{
    if (coord->arity[c] == CKT_LEAF) {
        int end = ckt_tuple_skip(&l->shape, i);
        int64_t idx = coord->value[c], size = 1;
        for (int k = i; k < end; k++)
            if (l->shape.arity[k] == CKT_LEAF) size *= l->shape.value[k];
        if (idx < 0 || idx >= size)
            return ckt_fail(err, CKT_EINVAL, "layout: coordinate %lld is out of range [0, %lld)",
                            (long long)idx, (long long)size);
        for (int k = i; k < end; k++) {
            if (l->shape.arity[k] != CKT_LEAF) continue;
            *off += (idx % l->shape.value[k]) * l->stride.value[k];
            idx /= l->shape.value[k];
        }
        return CKT_OK;
    }
    if (l->shape.arity[i] == CKT_LEAF || l->shape.arity[i] != coord->arity[c])
        return ckt_fail(err, CKT_EINVAL,
                        "layout: coordinate of rank %d does not match a mode of rank %d",
                        coord->arity[c], l->shape.arity[i] == CKT_LEAF ? 1 : l->shape.arity[i]);
    int li = i + 1, ci = c + 1;
    for (int k = 0; k < coord->arity[c]; k++) {
        ckt_status st = eval_node(l, li, coord, ci, off, err);
        if (st) return st;
        li = ckt_tuple_skip(&l->shape, li);
        ci = ckt_tuple_skip(coord, ci);
    }
    return CKT_OK;
}

ckt_status ckt_layout_eval_coord(const ckt_layout *l, const ckt_tuple *coord, int64_t *offset,
                                 ckt_error *err)
{
    if (!l || !coord || !offset) return ckt_fail(err, CKT_EINVAL, "layout: NULL argument");
    if (!tree_ok(coord))
        return ckt_fail(err, CKT_EINVAL, "layout: coordinate: not a well-formed tuple (%d nodes)",
                        coord->n);
    int64_t off = 0;
    /* a rank-1 tuple coordinate against an integer layout is accepted as its only mode */
    if (l->shape.arity[0] == CKT_LEAF && coord->arity[0] == 1 && coord->n == 2) {
        ckt_tuple inner = ckt_tuple_int(coord->value[1]);
        return ckt_layout_eval_coord(l, &inner, offset, err);
    }
    ckt_status st = eval_node(l, 0, coord, 0, &off, err);
    if (st) return st;
    *offset = off;
    return CKT_OK;
}

ckt_status ckt_idx2crd(const ckt_tuple *shape, int64_t idx, ckt_tuple *coord, ckt_error *err)
{
    int64_t size;
    if (!coord) return ckt_fail(err, CKT_EINVAL, "idx2crd: output is NULL");
    if (ckt_tuple_check(shape, err)) return ckt_fail_prefix(err, "idx2crd: shape: ");
    for (int i = 0; i < shape->n; i++)
        if (shape->arity[i] == CKT_LEAF && shape->value[i] <= 0)
            return ckt_fail(err, CKT_EINVAL, "idx2crd: shape %lld must be positive",
                            (long long)shape->value[i]);
    ckt_status st = ckt_tuple_product(shape, &size, err);
    if (st) return st;
    if (idx < 0 || idx >= size)
        return ckt_fail(err, CKT_EINVAL, "idx2crd: index %lld is out of range [0, %lld)",
                        (long long)idx, (long long)size);
    ckt_tuple c = *shape;
    for (int i = 0; i < c.n; i++) {
        if (c.arity[i] != CKT_LEAF) continue;
        if (shape->value[i] <= 0)
            return ckt_fail(err, CKT_EINVAL, "idx2crd: shape %lld must be positive",
                            (long long)shape->value[i]);
        c.value[i] = idx % shape->value[i];
        idx /= shape->value[i];
    }
    *coord = c;
    return CKT_OK;
}

ckt_status ckt_crd2idx(const ckt_tuple *shape, const ckt_tuple *coord, int64_t *idx, ckt_error *err)
{
    ckt_layout col;
    if (ckt_tuple_check(shape, err)) return ckt_fail_prefix(err, "crd2idx: shape: ");
    ckt_status st = ckt_layout_col_major(&col, shape, err);
    if (st) return st;
    return ckt_layout_eval_coord(&col, coord, idx, err);
}
