/* The CuTe layout algebra: coalesce, composition, complement, inverses, divides, products.
 * Semantics follow CuTe's C++ implementation with static integers
 * (CuTe's layout algebra documentation); where CuTe would refuse at compile time
 * (divisibility), ckt refuses with a message that names the modes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "ckt/layout.h"
#include "tuple_internal.h"

/* A flat list of (shape, stride) modes: the working form of most algorithms. */
typedef struct {
    int n;
    int64_t s[CKT_TUPLE_NODES], d[CKT_TUPLE_NODES];
} modes;

static void flatten(const ckt_layout *l, modes *m)
{
    m->n = 0;
    for (int i = 0; i < l->shape.n; i++)
        if (l->shape.arity[i] == CKT_LEAF) {
            m->s[m->n] = l->shape.value[i];
            m->d[m->n] = l->stride.value[i];
            m->n++;
        }
}

static ckt_status push(modes *m, int64_t s, int64_t d, ckt_error *err)
{
    if (m->n >= CKT_TUPLE_NODES - 1)
        return ckt_fail(err, CKT_ECAPACITY, "layout algebra: more than %d modes",
                        CKT_TUPLE_NODES - 1);
    m->s[m->n] = s;
    m->d[m->n] = d;
    m->n++;
    return CKT_OK;
}

/* Modes to a layout: none -> 1:0, one -> s:d, several -> a flat tuple. */
static ckt_status from_modes(const modes *m, ckt_layout *out, ckt_error *err)
{
    if (m->n == 0) {
        int64_t one = 1, zero = 0;
        return ckt_layout_flat(out, 1, &one, &zero, err);
    }
    if (m->n > CKT_MAX_RANK) {
        /* too many for one flat tuple: nest in groups so the capacity is respected */
        return ckt_fail(err, CKT_ECAPACITY,
                        "layout algebra: result has %d modes, beyond the rank capacity %d", m->n,
                        CKT_MAX_RANK);
    }
    return ckt_layout_flat(out, m->n, m->s, m->d, err);
}

/* Validate an input layout; the message names the function and the argument. */
static ckt_status valid(const ckt_layout *l, const char *fn, const char *arg, ckt_error *err)
{
    if (!l) return ckt_fail(err, CKT_EINVAL, "%s: %s is NULL", fn, arg);
    ckt_status st = ckt_layout_check(l, err);
    if (st == CKT_OK) return CKT_OK;
    if (!err) return st;
    const char *why = strncmp(err->msg, "layout: ", 8) == 0 ? err->msg + 8 : err->msg;
    char msg[CKT_ERROR_MSG_CAP];
    snprintf(msg, sizeof msg, "%s", why);
    return ckt_fail(err, st, "%s: %s: %s", fn, arg, msg);
}

static ckt_status valid_tuple(const ckt_tuple *t, const char *fn, const char *arg, ckt_error *err)
{
    if (!t) return ckt_fail(err, CKT_EINVAL, "%s: %s is NULL", fn, arg);
    if (ckt_tuple_check(t, err) == CKT_OK) return CKT_OK;
    char pre[96];
    snprintf(pre, sizeof pre, "%s: %s: ", fn, arg);
    return ckt_fail_prefix(err, pre);
}

static void coalesce_modes(const modes *in, modes *out)
{
    out->n = 0;
    for (int i = 0; i < in->n; i++) {
        int64_t s = in->s[i], d = in->d[i];
        if (s == 1) continue;
        if (out->n > 0) {
            int k = out->n - 1;
            int64_t next;
            if (!ckt_mul_ovf(out->s[k], out->d[k], &next) && next == d) {
                out->s[k] *= s;
                continue;
            }
        }
        out->s[out->n] = s;
        out->d[out->n] = d;
        out->n++;
    }
}

ckt_status ckt_coalesce(const ckt_layout *l, ckt_layout *out, ckt_error *err)
{
    ckt_status st = valid(l, "coalesce", "layout", err);
    if (st) return st;
    if (!out) return ckt_fail(err, CKT_EINVAL, "coalesce: output is NULL");
    modes m, c;
    flatten(l, &m);
    coalesce_modes(&m, &c);
    return from_modes(&c, out, err);
}

ckt_status ckt_filter(const ckt_layout *l, ckt_layout *out, ckt_error *err)
{
    ckt_status st = valid(l, "filter", "layout", err);
    if (st) return st;
    if (!out) return ckt_fail(err, CKT_EINVAL, "filter: output is NULL");
    modes m, f, c;
    flatten(l, &m);
    f.n = 0;
    for (int i = 0; i < m.n; i++)
        if (m.d[i] != 0 && m.s[i] != 1) {
            f.s[f.n] = m.s[i];
            f.d[f.n] = m.d[i];
            f.n++;
        }
    coalesce_modes(&f, &c);
    return from_modes(&c, out, err);
}

/* ---- building hierarchical results ---- */

static ckt_status make_pair(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                            ckt_error *err)
{
    ckt_tuple s[2] = {a->shape, b->shape}, d[2] = {a->stride, b->stride};
    ckt_layout r;
    ckt_status st;
    if ((st = ckt_tuple_make(&r.shape, 2, s, err)) || (st = ckt_tuple_make(&r.stride, 2, d, err)))
        return st;
    return ckt_layout_make(out, &r.shape, &r.stride, err); /* validates size and offsets */
}

static ckt_status make_list(int n, const ckt_layout *parts, ckt_layout *out, ckt_error *err)
{
    if (n > CKT_MAX_RANK)
        return ckt_fail(err, CKT_ECAPACITY, "layout algebra: rank %d is beyond the capacity %d", n,
                        CKT_MAX_RANK);
    ckt_tuple s[CKT_MAX_RANK], d[CKT_MAX_RANK];
    for (int i = 0; i < n; i++) {
        s[i] = parts[i].shape;
        d[i] = parts[i].stride;
    }
    ckt_layout r;
    ckt_status st;
    if ((st = ckt_tuple_make(&r.shape, n, s, err)) || (st = ckt_tuple_make(&r.stride, n, d, err)))
        return st;
    return ckt_layout_make(out, &r.shape, &r.stride, err); /* validates size and offsets */
}

/* ---- composition ---- */

/* CuTe's coalesce_x: coalesce A but keep its last mode even when it has size 1, so
 * A keeps its function beyond its domain (the last mode absorbs any overflow of the
 * index, and composition extends A through it). */
static void coalesce_keep_last(const ckt_layout *l, modes *out)
{
    modes m;
    flatten(l, &m);
    if (m.n == 0) {
        out->n = 1;
        out->s[0] = 1;
        out->d[0] = 0;
        return;
    } /* not a validated layout */
    int n = 0, last = m.n - 1;
    /* backwards: the kept last mode first, then merge or prepend the others */
    int64_t s[CKT_TUPLE_NODES], d[CKT_TUPLE_NODES];
    s[0] = m.s[last];
    d[0] = m.d[last];
    n = 1;
    for (int i = last - 1; i >= 0; i--) {
        int64_t next;
        if (m.s[i] == 1) continue;
        if (!ckt_mul_ovf(m.s[i], m.d[i], &next) && next == d[n - 1]) {
            s[n - 1] *= m.s[i]; /* validated layouts: the product is at most size(A) */
            d[n - 1] = m.d[i];
            continue;
        }
        s[n] = m.s[i];
        d[n] = m.d[i];
        n++;
    }
    out->n = n;
    for (int k = 0; k < n; k++) {
        out->s[k] = s[n - 1 - k];
        out->d[k] = d[n - 1 - k];
    }
}

static ckt_status overflow(ckt_error *err)
{
    return ckt_fail(err, CKT_EOVERFLOW, "composition: a stride overflows 64 bits");
}

/* A (coalesced, see above) composed with one mode s:d of B. Follows CuTe: divide d out of
 * A's shapes from the left (the quotients are the new shapes, A's strides scale by d),
 * then keep the first s elements. CuTe accepts a stride smaller than a shape without
 * dividing it and then computes a wrong layout; ckt insists on divisibility both ways
 * and names the mode that breaks it. */
static ckt_status compose_mode(const modes *a, int64_t s, int64_t d, int bleaf, modes *r,
                               ckt_error *err)
{
    r->n = 0;
    if (d == 0) return push(r, s, 0, err); /* a broadcast stays a broadcast */
    if (a->n == 1) {                       /* an integral A just scales */
        int64_t nd;
        if (ckt_mul_ovf(d, a->d[0], &nd)) return overflow(err);
        return push(r, s, nd, err);
    }
    int64_t sign = d < 0 ? -1 : 1, rest_shape = s, rest_stride = d < 0 ? -d : d;
    for (int i = 0; i + 1 < a->n; i++) {
        int64_t si = a->s[i], di = a->d[i];
        int64_t next_shape = ckt_ceil_div(si, rest_stride),
                next_stride = ckt_ceil_div(rest_stride, si);
        if (rest_shape > 1 && si % rest_stride != 0 && rest_stride % si != 0)
            return ckt_fail(err, CKT_EINVAL,
                            "composition: stride %lld of B (leaf %d) and shape %lld of mode %d of "
                            "coalesced A do not divide each other",
                            (long long)(sign * rest_stride), bleaf, (long long)si, i);
        if (next_shape == 1 || rest_shape == 1) {
            rest_stride = next_stride;
            continue;
        }
        int64_t keep = next_shape < rest_shape ? next_shape : rest_shape, nd;
        if (rest_shape % keep != 0)
            return ckt_fail(err, CKT_EINVAL,
                            "composition: shape %lld of B (leaf %d) is not divisible by the %lld "
                            "elements left in mode %d of coalesced A (shape %lld)",
                            (long long)rest_shape, bleaf, (long long)keep, i, (long long)si);
        if (ckt_mul_ovf(sign * rest_stride, di, &nd)) return overflow(err);
        ckt_status st = push(r, keep, nd, err);
        if (st) return st;
        rest_shape /= keep;
        rest_stride = next_stride;
    }
    if (r->n > 0 && rest_shape == 1) return CKT_OK;
    int64_t ld;
    if (ckt_mul_ovf(sign * rest_stride, a->d[a->n - 1], &ld)) return overflow(err);
    return push(r, rest_shape, ld, err);
}

/* Append modes as one subtree: a single mode is a leaf, several a flat tuple. */
static ckt_status append_modes(ckt_layout *r, const modes *m, ckt_error *err)
{
    if (r->shape.n + m->n + (m->n > 1) > CKT_TUPLE_NODES)
        return ckt_fail(err, CKT_ECAPACITY, "composition: the result has more than %d nodes",
                        CKT_TUPLE_NODES);
    if (m->n > CKT_MAX_RANK)
        return ckt_fail(err, CKT_ECAPACITY,
                        "composition: a mode of the result has rank %d, beyond the capacity %d",
                        m->n, CKT_MAX_RANK);
    int k = r->shape.n;
    if (m->n > 1) {
        r->shape.arity[k] = r->stride.arity[k] = (int8_t)m->n;
        r->shape.value[k] = r->stride.value[k] = 0;
        k++;
    }
    for (int i = 0; i < m->n; i++, k++) {
        r->shape.arity[k] = r->stride.arity[k] = CKT_LEAF;
        r->shape.value[k] = m->s[i];
        r->stride.value[k] = m->d[i];
    }
    r->shape.n = r->stride.n = (int16_t)k;
    return CKT_OK;
}

ckt_status ckt_composition(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                           ckt_error *err)
{
    ckt_status st;
    if (!out) return ckt_fail(err, CKT_EINVAL, "composition: output is NULL");
    if ((st = valid(a, "composition", "A", err)) || (st = valid(b, "composition", "B", err)))
        return st;
    modes ca, part;
    coalesce_keep_last(a, &ca);
    /* distribute over B's leaves: each leaf s:d becomes A o (s:d); B's tree is kept */
    ckt_layout r;
    r.shape.n = r.stride.n = 0;
    for (int i = 0, leaf = 0; i < b->shape.n; i++) {
        if (b->shape.arity[i] != CKT_LEAF) {
            if (r.shape.n >= CKT_TUPLE_NODES)
                return ckt_fail(err, CKT_ECAPACITY,
                                "composition: the result has more than %d nodes", CKT_TUPLE_NODES);
            int k = r.shape.n++;
            r.stride.n++;
            r.shape.arity[k] = r.stride.arity[k] = b->shape.arity[i];
            r.shape.value[k] = r.stride.value[k] = 0;
            continue;
        }
        if ((st = compose_mode(&ca, b->shape.value[i], b->stride.value[i], leaf++, &part, err)))
            return st;
        if ((st = append_modes(&r, &part, err))) return st;
    }
    return ckt_layout_make(out, &r.shape, &r.stride, err);
}

/* Apply f to the first n modes of a with the n tilers; the other modes of a are kept. */
typedef ckt_status (*mode_fn)(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                              ckt_error *err);

static ckt_status by_mode(const ckt_layout *a, int n, const ckt_layout *tiler, mode_fn f,
                          const char *name, ckt_layout *out, ckt_error *err)
{
    ckt_status vs = valid(a, name, "layout", err);
    if (vs) return vs;
    if (!tiler || !out) return ckt_fail(err, CKT_EINVAL, "%s: NULL argument", name);
    if (n < 0 || n > CKT_MAX_RANK)
        return ckt_fail(err, CKT_EINVAL, "%s: a tiler of %d modes (1 to %d allowed)", name, n,
                        CKT_MAX_RANK);
    int r = ckt_layout_rank(a);
    if (n > r)
        return ckt_fail(err, CKT_EINVAL, "%s: the tiler has %d modes but the layout only %d", name,
                        n, r);
    if (ckt_tuple_is_int(&a->shape)) return f(a, &tiler[0], out, err);
    ckt_layout parts[CKT_MAX_RANK];
    for (int i = 0; i < r; i++) {
        ckt_layout m;
        ckt_status st = ckt_layout_mode(a, i, &m, err);
        if (st) return st;
        if (i < n) {
            if ((st = f(&m, &tiler[i], &parts[i], err))) {
                char pre[64];
                snprintf(pre, sizeof pre, "mode %d: ", i);
                return ckt_fail_prefix(err, pre);
            }
        } else {
            parts[i] = m;
        }
    }
    return make_list(r, parts, out, err);
}

ckt_status ckt_composition_tiler(const ckt_layout *a, int n, const ckt_layout *tiler,
                                 ckt_layout *out, ckt_error *err)
{
    if (n <= 0)
        return ckt_fail(err, CKT_EINVAL, "composition: the tiler must have at least one mode");
    return by_mode(a, n, tiler, ckt_composition, "composition", out, err);
}

/* ---- complement and inverses ---- */

ckt_status ckt_complement(const ckt_layout *l, int64_t cotarget, ckt_layout *out, ckt_error *err)
{
    ckt_status vs = valid(l, "complement", "layout", err);
    if (vs) return vs;
    if (!out) return ckt_fail(err, CKT_EINVAL, "complement: output is NULL");
    if (cotarget <= 0) cotarget = ckt_layout_cosize(l);
    modes m, sorted, r, c;
    flatten(l, &m);
    sorted.n = 0;
    for (int i = 0; i < m.n; i++)
        if (m.d[i] != 0 && m.s[i] != 1) {
            if (m.d[i] < 0)
                return ckt_fail(err, CKT_EINVAL, "complement: stride %lld is negative",
                                (long long)m.d[i]);
            sorted.s[sorted.n] = m.s[i];
            sorted.d[sorted.n] = m.d[i];
            sorted.n++;
        }
    /* sort by stride, then shape (insertion sort: at most 64 modes) */
    for (int i = 1; i < sorted.n; i++)
        for (int j = i;
             j > 0 && (sorted.d[j] < sorted.d[j - 1] ||
                       (sorted.d[j] == sorted.d[j - 1] && sorted.s[j] < sorted.s[j - 1]));
             j--) {
            int64_t ts = sorted.s[j], td = sorted.d[j];
            sorted.s[j] = sorted.s[j - 1];
            sorted.d[j] = sorted.d[j - 1];
            sorted.s[j - 1] = ts;
            sorted.d[j - 1] = td;
        }
    r.n = 0;
    int64_t cur = 1;
    for (int i = 0; i < sorted.n; i++) {
        if (sorted.d[i] < cur)
            return ckt_fail(err, CKT_EINVAL,
                            "complement: mode %lld:%lld overlaps the modes of smaller stride, "
                            "which reach %lld: the layout is not injective",
                            (long long)sorted.s[i], (long long)sorted.d[i], (long long)cur);
        if (sorted.d[i] % cur != 0)
            return ckt_fail(err, CKT_EINVAL,
                            "complement: stride %lld of mode %lld:%lld is not a multiple of %lld, "
                            "the extent of the modes of smaller stride: no layout fills the gap",
                            (long long)sorted.d[i], (long long)sorted.s[i], (long long)sorted.d[i],
                            (long long)cur);
        ckt_status st = push(&r, sorted.d[i] / cur, cur, err);
        if (st) return st;
        if (ckt_mul_ovf(sorted.s[i], sorted.d[i], &cur))
            return ckt_fail(err, CKT_EOVERFLOW, "complement: extent overflows");
    }
    ckt_status st = push(&r, ckt_ceil_div(cotarget, cur), cur, err);
    if (st) return st;
    coalesce_modes(&r, &c);
    return from_modes(&c, out, err);
}

/* Column-major compact strides of a flat mode list. */
static void compact_strides(const modes *m, int64_t *rs)
{
    int64_t cur = 1;
    for (int i = 0; i < m->n; i++) {
        rs[i] = cur;
        cur *= m->s[i];
    }
}

ckt_status ckt_right_inverse(const ckt_layout *l, ckt_layout *out, ckt_error *err)
{
    ckt_status vs = valid(l, "right_inverse", "layout", err);
    if (vs) return vs;
    if (!out) return ckt_fail(err, CKT_EINVAL, "right_inverse: output is NULL");
    modes m, c, r;
    flatten(l, &m);
    coalesce_modes(&m, &c);
    int64_t rs[CKT_TUPLE_NODES];
    compact_strides(&c, rs);
    bool used[CKT_TUPLE_NODES] = {false};
    r.n = 0;
    /* follow the strides from 1: each next mode starts where the previous one ends.
     * Negative strides never continue the run (their offsets lie below 0), as in CuTe. */
    for (int64_t next = 1;;) {
        int found = -1;
        for (int i = 0; i < c.n; i++)
            if (!used[i] && c.d[i] == next) {
                found = i;
                break;
            }
        if (found < 0) break;
        used[found] = true;
        push(&r, c.s[found], rs[found], err);
        next = c.s[found] * c.d[found]; /* <= cosize: no overflow */
    }
    return from_modes(&r, out, err);
}

ckt_status ckt_left_inverse(const ckt_layout *l, ckt_layout *out, ckt_error *err)
{
    ckt_layout comp, both;
    ckt_status st = valid(l, "left_inverse", "layout", err);
    if (st) return st;
    if ((st = ckt_complement(l, 0, &comp, err))) return ckt_fail_prefix(err, "left_inverse: ");
    if ((st = make_pair(l, &comp, &both, err))) return st;
    return ckt_right_inverse(&both, out, err);
}

/* ---- divides ---- */

static ckt_status divide_one(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                             ckt_error *err)
{
    ckt_layout comp, pair;
    ckt_status st;
    if ((st = ckt_complement(b, ckt_layout_size(a), &comp, err))) return st;
    if ((st = make_pair(b, &comp, &pair, err))) return st;
    return ckt_composition(a, &pair, out, err);
}

ckt_status ckt_logical_divide(const ckt_layout *a, int n, const ckt_layout *tiler, ckt_layout *out,
                              ckt_error *err)
{
    if (!a || !tiler || !out) return ckt_fail(err, CKT_EINVAL, "logical_divide: NULL argument");
    ckt_status vs;
    if ((vs = valid(a, "logical_divide", "layout", err)) ||
        (n == 0 && (vs = valid(tiler, "logical_divide", "tiler", err))))
        return vs;
    ckt_status st = n == 0 ? divide_one(a, &tiler[0], out, err)
                           : by_mode(a, n, tiler, divide_one, "logical_divide", out, err);
    return st ? (strncmp(err ? err->msg : "", "logical_divide", 14)
                     ? ckt_fail_prefix(err, "logical_divide: ")
                     : st)
              : CKT_OK;
}

/* Gather ((tile_0, tile_1, ...), (rest_0, rest_1, ..., other modes)) from a by-mode divide. */
static ckt_status unzip(const ckt_layout *ld, int n, ckt_layout *tiles, ckt_layout *rests,
                        ckt_error *err)
{
    int r = ckt_layout_rank(ld);
    ckt_layout t[CKT_MAX_RANK], rs[CKT_MAX_RANK];
    int nr = 0;
    for (int i = 0; i < r; i++) {
        ckt_layout m;
        ckt_status st = ckt_layout_mode(ld, i, &m, err);
        if (st) return st;
        if (i < n) {
            if ((st = ckt_layout_mode(&m, 0, &t[i], err)) ||
                (st = ckt_layout_mode(&m, 1, &rs[nr++], err)))
                return st;
        } else {
            rs[nr++] = m;
        }
    }
    ckt_status st;
    if ((st = make_list(n, t, tiles, err))) return st;
    return make_list(nr, rs, rests, err);
}

ckt_status ckt_zipped_divide(const ckt_layout *a, int n, const ckt_layout *tiler, ckt_layout *out,
                             ckt_error *err)
{
    ckt_layout ld, tiles, rests;
    ckt_status st = ckt_logical_divide(a, n, tiler, &ld, err);
    if (st) return st;
    if (n == 0 || ckt_tuple_is_int(&a->shape)) {
        *out = ld;
        return CKT_OK;
    }
    if ((st = unzip(&ld, n, &tiles, &rests, err))) return st;
    return make_pair(&tiles, &rests, out, err);
}

/* (mode0 [flattened one level if flat0], modes of mode1 ...) */
static ckt_status unpack(const ckt_layout *z, bool flat0, const char *fn, ckt_layout *out,
                         ckt_error *err)
{
    ckt_layout m0, m1, parts[CKT_MAX_RANK];
    ckt_status st;
    if ((st = ckt_layout_mode(z, 0, &m0, err)) || (st = ckt_layout_mode(z, 1, &m1, err))) return st;
    int k = 0;
    int r0 = flat0 ? ckt_layout_rank(&m0) : 1;
    for (int i = 0; i < r0; i++) {
        if (flat0 && (st = ckt_layout_mode(&m0, i, &parts[k], err))) return st;
        if (!flat0) parts[k] = m0;
        k++;
    }
    int r1 = ckt_layout_rank(&m1);
    if (k + r1 > CKT_MAX_RANK)
        return ckt_fail(err, CKT_ECAPACITY, "%s: rank %d is beyond the capacity %d", fn, k + r1,
                        CKT_MAX_RANK);
    for (int i = 0; i < r1; i++)
        if ((st = ckt_layout_mode(&m1, i, &parts[k++], err))) return st;
    return make_list(k, parts, out, err);
}

ckt_status ckt_tiled_divide(const ckt_layout *a, int n, const ckt_layout *tiler, ckt_layout *out,
                            ckt_error *err)
{
    ckt_layout z;
    ckt_status st = ckt_zipped_divide(a, n, tiler, &z, err);
    return st ? st : unpack(&z, false, "tiled_divide", out, err);
}

ckt_status ckt_flat_divide(const ckt_layout *a, int n, const ckt_layout *tiler, ckt_layout *out,
                           ckt_error *err)
{
    ckt_layout z;
    ckt_status st = ckt_zipped_divide(a, n, tiler, &z, err);
    return st ? st : unpack(&z, true, "flat_divide", out, err);
}

/* ---- products ---- */

ckt_status ckt_logical_product(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                               ckt_error *err)
{
    ckt_status vs;
    if ((vs = valid(a, "logical_product", "A", err)) ||
        (vs = valid(b, "logical_product", "B", err)))
        return vs;
    if (!out) return ckt_fail(err, CKT_EINVAL, "logical_product: output is NULL");
    int64_t cot;
    if (ckt_mul_ovf(ckt_layout_size(a), ckt_layout_cosize(b), &cot))
        return ckt_fail(err, CKT_EOVERFLOW, "logical_product: size(A)*cosize(B) overflows");
    ckt_layout comp, rest;
    ckt_status st;
    if ((st = ckt_complement(a, cot, &comp, err))) return ckt_fail_prefix(err, "logical_product: ");
    if ((st = ckt_composition(&comp, b, &rest, err)))
        return ckt_fail_prefix(err, "logical_product: ");
    return make_pair(a, &rest, out, err);
}

ckt_status ckt_zipped_product(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                              ckt_error *err)
{
    return ckt_logical_product(a, b, out, err); /* a single-layout tiler: zipped == logical */
}

ckt_status ckt_tiled_product(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                             ckt_error *err)
{
    ckt_layout z;
    ckt_status st = ckt_zipped_product(a, b, &z, err);
    return st ? st : unpack(&z, false, "tiled_product", out, err);
}

ckt_status ckt_logical_product_tiler(const ckt_layout *a, int n, const ckt_layout *tiler,
                                     ckt_layout *out, ckt_error *err)
{
    if (!a || !tiler || !out) return ckt_fail(err, CKT_EINVAL, "logical_product: NULL argument");
    if (n == 0) return ckt_logical_product(a, &tiler[0], out, err);
    ckt_status st = by_mode(a, n, tiler, ckt_logical_product, "logical_product", out, err);
    return st ? (strncmp(err ? err->msg : "", "logical_product", 15)
                     ? ckt_fail_prefix(err, "logical_product: ")
                     : st)
              : CKT_OK;
}

/* ((block_0, block_1, ...), (rest_0, rest_1, ..., other modes)): CuTe's tile_unzip */
ckt_status ckt_zipped_product_tiler(const ckt_layout *a, int n, const ckt_layout *tiler,
                                    ckt_layout *out, ckt_error *err)
{
    ckt_layout lp, blocks, rests;
    ckt_status st = ckt_logical_product_tiler(a, n, tiler, &lp, err);
    if (st) return st;
    if (n == 0 || ckt_tuple_is_int(&a->shape)) {
        *out = lp;
        return CKT_OK;
    }
    if ((st = unzip(&lp, n, &blocks, &rests, err))) return st;
    return make_pair(&blocks, &rests, out, err);
}

ckt_status ckt_tiled_product_tiler(const ckt_layout *a, int n, const ckt_layout *tiler,
                                   ckt_layout *out, ckt_error *err)
{
    ckt_layout z;
    ckt_status st = ckt_zipped_product_tiler(a, n, tiler, &z, err);
    return st ? st : unpack(&z, false, "tiled_product", out, err);
}

ckt_status ckt_flat_product(const ckt_layout *a, int n, const ckt_layout *tiler, ckt_layout *out,
                            ckt_error *err)
{
    ckt_layout z;
    ckt_status st = ckt_zipped_product_tiler(a, n, tiler, &z, err);
    return st ? st : unpack(&z, true, "flat_product", out, err);
}

/* Extend a layout to rank r with 1:0 modes (CuTe's append<R>). */
static ckt_status extend_rank(const ckt_layout *l, int r, ckt_layout *out, ckt_error *err)
{
    int k = ckt_layout_rank(l);
    ckt_layout parts[CKT_MAX_RANK];
    for (int i = 0; i < r; i++) {
        if (i < k) {
            ckt_status st = ckt_layout_mode(l, i, &parts[i], err);
            if (st) return st;
        } else {
            int64_t one = 1, zero = 0;
            ckt_layout_flat(&parts[i], 1, &one, &zero, err);
        }
    }
    if (r == 1) {
        *out = parts[0];
        return CKT_OK;
    }
    return make_list(r, parts, out, err);
}

static ckt_status block_or_rake(const ckt_layout *a, const ckt_layout *b, bool raked,
                                ckt_layout *out, ckt_error *err)
{
    const char *fn = raked ? "raked_product" : "blocked_product";
    ckt_status vs;
    if ((vs = valid(a, fn, "A", err)) || (vs = valid(b, fn, "B", err))) return vs;
    if (!out) return ckt_fail(err, CKT_EINVAL, "%s: output is NULL", fn);
    int r = ckt_layout_rank(a) > ckt_layout_rank(b) ? ckt_layout_rank(a) : ckt_layout_rank(b);
    ckt_layout ea, eb, p, p0, p1, parts[CKT_MAX_RANK];
    ckt_status st;
    if ((st = extend_rank(a, r, &ea, err)) || (st = extend_rank(b, r, &eb, err))) return st;
    if ((st = ckt_logical_product(&ea, &eb, &p, err))) return st;
    if ((st = ckt_layout_mode(&p, 0, &p0, err)) || (st = ckt_layout_mode(&p, 1, &p1, err)))
        return st;
    if (r == 1) return raked ? make_pair(&p1, &p0, out, err) : make_pair(&p0, &p1, out, err);
    /* zip: mode i of the result pairs mode i of the block with mode i of the tiler */
    for (int i = 0; i < r; i++) {
        ckt_layout x, y;
        if ((st = ckt_layout_mode(&p0, i, &x, err)) || (st = ckt_layout_mode(&p1, i, &y, err)))
            return st;
        if ((st = raked ? make_pair(&y, &x, &parts[i], err) : make_pair(&x, &y, &parts[i], err)))
            return st;
    }
    return make_list(r, parts, out, err);
}

ckt_status ckt_blocked_product(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                               ckt_error *err)
{
    ckt_status st = block_or_rake(a, b, false, out, err);
    return st ? (strncmp(err ? err->msg : "", "logical_product", 15) == 0
                     ? st
                     : ckt_fail_prefix(err, "blocked_product: "))
              : CKT_OK;
}

ckt_status ckt_raked_product(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                             ckt_error *err)
{
    ckt_status st = block_or_rake(a, b, true, out, err);
    return st ? (strncmp(err ? err->msg : "", "logical_product", 15) == 0
                     ? st
                     : ckt_fail_prefix(err, "raked_product: "))
              : CKT_OK;
}

/* ---- constructors from shapes ---- */

ckt_status ckt_make_ordered_layout(const ckt_tuple *shape, const ckt_tuple *order, ckt_layout *out,
                                   ckt_error *err)
{
    ckt_status vs;
    if ((vs = valid_tuple(shape, "make_ordered_layout", "shape", err)) ||
        (vs = valid_tuple(order, "make_ordered_layout", "order", err)))
        return vs;
    if (!out) return ckt_fail(err, CKT_EINVAL, "make_ordered_layout: output is NULL");
    int64_t s[CKT_TUPLE_NODES], o[CKT_TUPLE_NODES], d[CKT_TUPLE_NODES];
    int n = ckt_tuple_flatten(shape, s, CKT_TUPLE_NODES),
        no = ckt_tuple_flatten(order, o, CKT_TUPLE_NODES);
    if (n != no)
        return ckt_fail(err, CKT_EINVAL, "make_ordered_layout: shape has %d modes but order has %d",
                        n, no);
    for (int i = 0; i < n; i++)
        if (s[i] <= 0)
            return ckt_fail(err, CKT_EINVAL,
                            "make_ordered_layout: shape %lld of mode %d must be positive",
                            (long long)s[i], i);
    /* strides by increasing order value; ties keep mode order */
    bool done[CKT_TUPLE_NODES] = {false};
    int64_t cur = 1;
    for (int k = 0; k < n; k++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!done[i] && (best < 0 || o[i] < o[best])) best = i;
        done[best] = true;
        d[best] = cur;
        if (ckt_mul_ovf(cur, s[best], &cur))
            return ckt_fail(err, CKT_EOVERFLOW, "make_ordered_layout: size overflows");
    }
    ckt_tuple stride = *shape;
    for (int i = 0, k = 0; i < stride.n; i++)
        if (stride.arity[i] == CKT_LEAF) stride.value[i] = d[k++];
    return ckt_layout_make(out, shape, &stride, err);
}

ckt_status ckt_tile_to_shape(const ckt_layout *block, const ckt_tuple *shape,
                             const ckt_tuple *order, ckt_layout *out, ckt_error *err)
{
    ckt_status vs;
    if ((vs = valid(block, "tile_to_shape", "block", err)) ||
        (vs = valid_tuple(shape, "tile_to_shape", "shape", err)) ||
        (order && (vs = valid_tuple(order, "tile_to_shape", "order", err))))
        return vs;
    if (!out) return ckt_fail(err, CKT_EINVAL, "tile_to_shape: output is NULL");
    int r = ckt_tuple_rank(shape), rb = ckt_layout_rank(block);
    if (rb > r)
        return ckt_fail(err, CKT_EINVAL,
                        "tile_to_shape: block has rank %d but the target shape only %d", rb, r);
    int64_t reps[CKT_MAX_RANK];
    for (int i = 0; i < r; i++) {
        ckt_tuple ti;
        int64_t ts, bs = 1;
        ckt_status st = ckt_tuple_get(shape, i, &ti, err);
        if (st) return st;
        if ((st = ckt_tuple_product(&ti, &ts, err))) return st;
        if (i < rb) {
            ckt_layout bm;
            ckt_layout_mode(block, i, &bm, err);
            bs = ckt_layout_size(&bm);
        }
        if (ts <= 0)
            return ckt_fail(err, CKT_EINVAL,
                            "tile_to_shape: target shape %lld of mode %d must be positive",
                            (long long)ts, i);
        if (ts % bs != 0)
            return ckt_fail(
                err, CKT_EINVAL,
                "tile_to_shape: target shape %lld of mode %d is not divisible by the block's %lld",
                (long long)ts, i, (long long)bs);
        reps[i] = ts / bs;
    }
    ckt_tuple rt, ot;
    ckt_status st;
    if (r == 1)
        rt = ckt_tuple_int(reps[0]);
    else if ((st = ckt_tuple_flat(&rt, r, reps, err)))
        return st;
    if (order) {
        ot = *order;
    } else {
        int64_t o[CKT_MAX_RANK];
        for (int i = 0; i < r; i++) o[i] = i;
        if (r == 1)
            ot = ckt_tuple_int(0);
        else if ((st = ckt_tuple_flat(&ot, r, o, err)))
            return st;
    }
    ckt_layout ordered;
    if ((st = ckt_make_ordered_layout(&rt, &ot, &ordered, err)))
        return ckt_fail_prefix(err, "tile_to_shape: ");
    return ckt_blocked_product(block, &ordered, out, err);
}

/* ---- vectors, nullspace ---- */

ckt_status ckt_max_common_layout(const ckt_layout *a, const ckt_layout *b, ckt_layout *out,
                                 ckt_error *err)
{
    ckt_layout inv, comp, common, first;
    ckt_status st;
    if ((st = valid(a, "max_common_layout", "a", err)) ||
        (st = valid(b, "max_common_layout", "b", err)))
        return st;
    if (!out) return ckt_fail(err, CKT_EINVAL, "max_common_layout: output is NULL");
    if ((st = ckt_right_inverse(b, &inv, err))) return st;
    if ((st = ckt_composition(a, &inv, &comp, err)))
        return ckt_fail_prefix(err, "max_common_layout: ");
    if ((st = ckt_coalesce(&comp, &common, err))) return st;
    if ((st = ckt_layout_mode(&common, 0, &first, err))) return st;
    if (!ckt_tuple_is_int(&first.stride) || first.stride.value[0] != 1) {
        int64_t one = 1, zero = 0;
        return ckt_layout_flat(out, 1, &one, &zero, err);
    }
    return ckt_composition(&inv, &first, out, err);
}

ckt_status ckt_max_common_vector(const ckt_layout *a, const ckt_layout *b, int64_t *out,
                                 ckt_error *err)
{
    ckt_layout inv, comp, common, first;
    ckt_status st;
    if ((st = valid(a, "max_common_vector", "a", err)) ||
        (st = valid(b, "max_common_vector", "b", err)))
        return st;
    if (!out) return ckt_fail(err, CKT_EINVAL, "max_common_vector: output is NULL");
    if ((st = ckt_right_inverse(b, &inv, err))) return st;
    if ((st = ckt_composition(a, &inv, &comp, err)))
        return ckt_fail_prefix(err, "max_common_vector: ");
    if ((st = ckt_coalesce(&comp, &common, err))) return st;
    if ((st = ckt_layout_mode(&common, 0, &first, err))) return st;
    *out =
        (ckt_tuple_is_int(&first.stride) && first.stride.value[0] == 1) ? first.shape.value[0] : 1;
    return CKT_OK;
}

ckt_status ckt_nullspace(const ckt_layout *l, ckt_layout *out, ckt_error *err)
{
    ckt_status vs = valid(l, "nullspace", "layout", err);
    if (vs) return vs;
    if (!out) return ckt_fail(err, CKT_EINVAL, "nullspace: output is NULL");
    modes m, r;
    flatten(l, &m);
    int64_t rs[CKT_TUPLE_NODES];
    compact_strides(&m, rs);
    r.n = 0;
    for (int i = 0; i < m.n; i++)
        if (m.d[i] == 0) push(&r, m.s[i], rs[i], err);
    return from_modes(&r, out, err);
}

/* ---- thread-value layouts and partitions ---- */

ckt_status ckt_make_layout_tv(const ckt_layout *thr, const ckt_layout *val, ckt_tuple *tiler,
                              ckt_layout *tv, ckt_error *err)
{
    ckt_layout mn, inv, shape_l, result;
    ckt_status st;
    if ((st = valid(thr, "make_layout_tv", "thr", err)) ||
        (st = valid(val, "make_layout_tv", "val", err)))
        return st;
    if (!tiler || !tv) return ckt_fail(err, CKT_EINVAL, "make_layout_tv: output is NULL");
    if ((st = ckt_raked_product(thr, val, &mn, err)))
        return ckt_fail_prefix(err, "make_layout_tv: ");
    if ((st = ckt_right_inverse(&mn, &inv, err))) return st;
    int64_t sv[2] = {ckt_layout_size(thr), ckt_layout_size(val)}, dv[2] = {1, sv[0]};
    if ((st = ckt_layout_flat(&shape_l, 2, sv, dv, err))) return st;
    if ((st = ckt_composition(&inv, &shape_l, &result, err)))
        return ckt_fail_prefix(err, "make_layout_tv: ");
    int r = ckt_layout_rank(&mn);
    int64_t ts[CKT_MAX_RANK];
    for (int i = 0; i < r; i++) {
        ckt_layout m;
        ckt_layout_mode(&mn, i, &m, err);
        ts[i] = ckt_layout_size(&m);
    }
    ckt_tuple t;
    if (r == 1)
        t = ckt_tuple_int(ts[0]);
    else if ((st = ckt_tuple_flat(&t, r, ts, err)))
        return st;
    *tiler = t;
    *tv = result;
    return CKT_OK;
}

/* A tiler given as a shape: one stride-1 layout per mode. */
static ckt_status shape_tiler(const ckt_tuple *shape, ckt_layout *tl, int *n, ckt_error *err)
{
    int r = ckt_tuple_rank(shape);
    for (int i = 0; i < r; i++) {
        ckt_tuple ti;
        ckt_status st = ckt_tuple_get(shape, i, &ti, err);
        if (st) return st;
        if ((st = ckt_layout_col_major(&tl[i], &ti, err))) return st;
    }
    *n = r;
    return CKT_OK;
}

ckt_status ckt_local_tile(const ckt_layout *l, const ckt_tuple *tiler, const ckt_tuple *coord,
                          ckt_layout *out, int64_t *offset, ckt_error *err)
{
    ckt_layout tl[CKT_MAX_RANK], z, tile, rest;
    int n;
    ckt_status st;
    if ((st = valid(l, "local_tile", "layout", err)) ||
        (st = valid_tuple(tiler, "local_tile", "tiler", err)) ||
        (st = valid_tuple(coord, "local_tile", "coord", err)))
        return st;
    if (!out || !offset) return ckt_fail(err, CKT_EINVAL, "local_tile: output is NULL");
    if ((st = shape_tiler(tiler, tl, &n, err))) return ckt_fail_prefix(err, "local_tile: ");
    if (n > ckt_layout_rank(l))
        return ckt_fail(err, CKT_EINVAL,
                        "local_tile: the tiler has %d modes but the layout only %d", n,
                        ckt_layout_rank(l));
    if ((st = ckt_zipped_divide(l, ckt_tuple_is_int(&l->shape) ? 0 : n, tl, &z, err)))
        return ckt_fail_prefix(err, "local_tile: ");
    if ((st = ckt_layout_mode(&z, 0, &tile, err)) || (st = ckt_layout_mode(&z, 1, &rest, err)))
        return st;
    int64_t off;
    if ((st = ckt_layout_eval_coord(&rest, coord, &off, err)))
        return ckt_fail_prefix(err, "local_tile: tile coordinate: ");
    *out = tile;
    *offset = off;
    return CKT_OK;
}

ckt_status ckt_local_partition(const ckt_layout *l, const ckt_layout *thr, int64_t idx,
                               ckt_layout *out, int64_t *offset, ckt_error *err)
{
    ckt_status vs;
    if ((vs = valid(l, "local_partition", "layout", err)) ||
        (vs = valid(thr, "local_partition", "thr", err)))
        return vs;
    if (!out || !offset) return ckt_fail(err, CKT_EINVAL, "local_partition: output is NULL");
    int64_t tsize = ckt_layout_size(thr);
    if (idx < 0 || idx >= tsize)
        return ckt_fail(err, CKT_EINVAL,
                        "local_partition: thread index %lld is out of range [0, %lld)",
                        (long long)idx, (long long)tsize);
    ckt_layout tl[CKT_MAX_RANK], z, tile, rest;
    int n;
    ckt_status st;
    if ((st = shape_tiler(&thr->shape, tl, &n, err))) return st;
    if (n > ckt_layout_rank(l))
        return ckt_fail(err, CKT_EINVAL,
                        "local_partition: the thread layout has %d modes but the layout only %d", n,
                        ckt_layout_rank(l));
    if ((st = ckt_zipped_divide(l, ckt_tuple_is_int(&l->shape) ? 0 : n, tl, &z, err)))
        return ckt_fail_prefix(err, "local_partition: ");
    if ((st = ckt_layout_mode(&z, 0, &tile, err)) || (st = ckt_layout_mode(&z, 1, &rest, err)))
        return st;
    /* the thread's coordinate inside the tile: c_i = (idx / d_i) mod s_i over thr's leaves */
    ckt_tuple coord = thr->shape;
    for (int i = 0; i < coord.n; i++)
        if (coord.arity[i] == CKT_LEAF) {
            int64_t d = thr->stride.value[i];
            coord.value[i] = d == 0 ? 0 : (idx / d) % thr->shape.value[i];
        }
    int64_t off;
    if ((st = ckt_layout_eval_coord(&tile, &coord, &off, err)))
        return ckt_fail_prefix(err, "local_partition: ");
    *out = rest;
    *offset = off;
    return CKT_OK;
}

ckt_status ckt_pad(const ckt_layout *l, const ckt_tuple *tile_shape, ckt_layout *out,
                   ckt_error *err)
{
    ckt_status vs;
    if ((vs = valid(l, "pad", "layout", err)) ||
        (vs = valid_tuple(tile_shape, "pad", "tile_shape", err)))
        return vs;
    if (!out) return ckt_fail(err, CKT_EINVAL, "pad: output is NULL");
    int r = ckt_layout_rank(l), rt = ckt_tuple_rank(tile_shape);
    if (r != rt)
        return ckt_fail(err, CKT_EINVAL, "pad: the layout has rank %d but the tile shape %d", r,
                        rt);
    ckt_layout p = *l;
    int node = ckt_tuple_is_int(&l->shape) ? 0 : 1;
    for (int i = 0; i < r; i++) {
        ckt_tuple t;
        ckt_tuple_get(tile_shape, i, &t, err);
        if (!ckt_tuple_is_int(&t))
            return ckt_fail(err, CKT_EINVAL, "pad: tile mode %d must be an integer", i);
        if (p.shape.arity[node] != CKT_LEAF)
            return ckt_fail(err, CKT_EINVAL,
                            "pad: mode %d of the layout is hierarchical; pad needs integer modes",
                            i);
        int64_t tv = t.value[0], s = p.shape.value[node], ps;
        if (tv <= 0)
            return ckt_fail(err, CKT_EINVAL, "pad: tile %lld of mode %d must be positive",
                            (long long)tv, i);
        if (ckt_mul_ovf(ckt_ceil_div(s, tv), tv, &ps))
            return ckt_fail(err, CKT_EOVERFLOW, "pad: padded shape overflows");
        p.shape.value[node] = ps;
        node = ckt_tuple_skip(&p.shape, node);
    }
    return ckt_layout_make(out, &p.shape, &p.stride, err);
}
