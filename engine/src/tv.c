/* The common view of distributions: TV layouts (thread, value) -> offset in the row-major
 * tile; building them from leaves, comparing them, and who owns each cell (for drawing). */
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "ckt/distribution.h"
#include "tv_internal.h"

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static ckt_status mode_of(int n0, const int64_t *s0, const int64_t *d0, ckt_layout *out,
                          ckt_error *err)
{
    /* size-1 leaves carry no information: drop them */
    int64_t s[CKT_MAX_RANK], d[CKT_MAX_RANK];
    int n = 0;
    for (int i = 0; i < n0; i++) {
        if (s0[i] == 1) continue;
        if (n == CKT_MAX_RANK)
            return ckt_fail(err, CKT_ECAPACITY,
                            "tv_layout: more than %d modes are beyond the capacity of a layout",
                            CKT_MAX_RANK);
        s[n] = s0[i];
        d[n++] = d0[i];
    }
    if (n == 0) {
        int64_t one = 1, zero = 0;
        return ckt_layout_flat(out, 1, &one, &zero, err);
    }
    return ckt_layout_flat(out, n, s, d, err);
}

ckt_status ckt_tv_from_leaves(int nt, const int64_t *ts, const int64_t *td, int nv,
                              const int64_t *vs, const int64_t *vd, ckt_layout *tv, ckt_error *err)
{
    if (!tv || nt < 0 || nv < 0 || (nt && (!ts || !td)) || (nv && (!vs || !vd)))
        return ckt_fail(err, CKT_EINVAL, "tv_layout: NULL or negative argument");
    ckt_layout t, v;
    ckt_status st;
    if ((st = mode_of(nt, ts, td, &t, err)) || (st = mode_of(nv, vs, vd, &v, err))) return st;
    ckt_tuple sh[2] = {t.shape, v.shape}, sd[2] = {t.stride, v.stride};
    ckt_tuple a, b;
    if ((st = ckt_tuple_make(&a, 2, sh, err)) || (st = ckt_tuple_make(&b, 2, sd, err))) return st;
    return ckt_layout_make(tv, &a, &b, err);
}

static ckt_status tv_modes(const ckt_layout *tv, ckt_layout *t, ckt_layout *v, const char *fn,
                           const char *what, ckt_error *err)
{
    if (ckt_layout_rank(tv) != 2)
        return ckt_fail(err, CKT_EINVAL, "%s: %s is not a (thread, value) layout (rank %d, need 2)",
                        fn, what, ckt_layout_rank(tv));
    ckt_layout_mode(tv, 0, t, err);
    ckt_layout_mode(tv, 1, v, err);
    return CKT_OK;
}

ckt_status ckt_same_distribution(const ckt_layout *a, const ckt_layout *b, bool strict, bool *same,
                                 ckt_error *err)
{
    if (!a || !b || !same) return ckt_fail(err, CKT_EINVAL, "same_distribution: NULL argument");
    ckt_layout at, av, bt, bv;
    ckt_status st;
    if ((st = tv_modes(a, &at, &av, "same_distribution", "the first argument", err)) ||
        (st = tv_modes(b, &bt, &bv, "same_distribution", "the second argument", err)))
        return st;
    int64_t nt = ckt_layout_size(&at), nv = ckt_layout_size(&av);
    /* different thread or value counts: some thread owns a different number of elements */
    if (nt != ckt_layout_size(&bt) || nv != ckt_layout_size(&bv)) {
        *same = false;
        return CKT_OK;
    }
    if (nv > (1 << 20) || nt > CKT_WORK_LIMIT / nv)
        return ckt_fail(
            err, CKT_ECAPACITY,
            "same_distribution: %lld threads x %lld values is more than the analysis limit %lld",
            (long long)nt, (long long)nv, (long long)CKT_WORK_LIMIT);
    int64_t *x = malloc(sizeof(int64_t) * (size_t)nv * 4), *y = x ? x + nv : NULL,
            *va = x ? y + nv : NULL, *vb = x ? va + nv : NULL;
    if (!x) return ckt_fail(err, CKT_ENOMEM, "same_distribution: out of memory");
    /* layout(t, v) = T(t) + V(v): the value offsets are the same for every thread */
    for (int64_t v = 0; v < nv; v++) {
        ckt_layout_eval(&av, v, &va[v], err);
        ckt_layout_eval(&bv, v, &vb[v], err);
    }
    bool eq = true;
    for (int64_t t = 0; t < nt && eq; t++) {
        int64_t oa, ob;
        ckt_layout_eval(&at, t, &oa, err);
        ckt_layout_eval(&bt, t, &ob, err);
        for (int64_t v = 0; v < nv; v++) {
            x[v] = oa + va[v];
            y[v] = ob + vb[v];
        }
        if (!strict) {
            qsort(x, (size_t)nv, sizeof *x, cmp64);
            qsort(y, (size_t)nv, sizeof *y, cmp64);
        }
        eq = memcmp(x, y, sizeof(int64_t) * (size_t)nv) == 0;
    }
    free(x);
    *same = eq;
    return CKT_OK;
}

ckt_status ckt_tv_owners(const ckt_layout *tv, int64_t cells, int64_t *owner_thread,
                         int64_t *owner_value, ckt_error *err)
{
    if (!tv || !owner_thread || !owner_value || cells < 0)
        return ckt_fail(err, CKT_EINVAL, "tv layout: NULL argument or negative cell count");
    ckt_layout t, v;
    ckt_status st = tv_modes(tv, &t, &v, "tv layout", "the layout", err);
    if (st) return st;
    for (int64_t i = 0; i < cells; i++) owner_thread[i] = owner_value[i] = -1;
    int64_t nt = ckt_layout_size(&t), nv = ckt_layout_size(&v);
    if (nt > CKT_WORK_LIMIT / nv)
        return ckt_fail(
            err, CKT_ECAPACITY,
            "tv layout: %lld threads x %lld values is more than the analysis limit %lld",
            (long long)nt, (long long)nv, (long long)CKT_WORK_LIMIT);
    for (int64_t th = 0; th < nt; th++)
        for (int64_t va = 0; va < nv; va++) {
            int64_t off = ckt_tv_offset(&t, &v, th, va, err);
            if (off < 0 || off >= cells)
                return ckt_fail(err, CKT_EINVAL,
                                "tv layout: thread %lld value %lld maps to offset %lld, outside "
                                "the %lld-cell tile",
                                (long long)th, (long long)va, (long long)off, (long long)cells);
            if (owner_thread[off] < 0) {
                owner_thread[off] = th;
                owner_value[off] = va;
            }
        }
    return CKT_OK;
}
