/* IREE's NestedLayoutAttr (the IREEVectorExt dialect's reference). */
#include <stdio.h>
#include <string.h>

#include "checked.h"
#include "ckt/distribution.h"
#include "ckt/nested.h"

/* The distributed dims (stride != 0) in increasing stride order; returns their count. */
static int by_stride(int rank, const int64_t *stride, int *order)
{
    int n = 0;
    for (int i = 0; i < rank; i++)
        if (stride[i] != 0) order[n++] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && stride[order[j]] < stride[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    return n;
}

/* The id space a set of nested strides spans: max over dims of stride * tile. */
static int64_t span(int rank, const int64_t *tile, const int64_t *stride)
{
    int64_t s = 1, e;
    for (int i = 0; i < rank; i++)
        if (stride[i] && !ckt_mul_ovf(stride[i], tile[i], &e) && e > s) s = e;
    return s; /* extents that overflow were refused by ckt_nested_make */
}

/* Strides must nest: sorted by stride, each stride a multiple of the extent before it
 * (IREE's computeThreadIds / basisFromSizesStrides); otherwise two virtual ids share a lane. */
static ckt_status check_nesting(int rank, const int64_t *tile, const int64_t *stride,
                                const char *what, ckt_error *err)
{
    int order[CKT_NESTED_MAX_RANK], n = by_stride(rank, stride, order);
    int64_t running = 1;
    for (int k = 0; k < n; k++) {
        int i = order[k];
        if (stride[i] % running != 0)
            return ckt_fail(
                err, CKT_EINVAL,
                "nested_layout: %s do not nest: dim %d has stride %lld, which is not a multiple of "
                "%lld (the extent of the faster dims); the ids would overlap",
                what, i, (long long)stride[i], (long long)running);
        if (ckt_mul_ovf(stride[i], tile[i], &running))
            return ckt_fail(err, CKT_EOVERFLOW, "nested_layout: %s overflow", what);
    }
    return CKT_OK;
}

ckt_status ckt_nested_make(const ckt_nested *in, ckt_nested *out, ckt_error *err)
{
    if (!in || !out) return ckt_fail(err, CKT_EINVAL, "nested_layout: NULL argument");
    if (in->rank < 1 || in->rank > CKT_NESTED_MAX_RANK)
        return ckt_fail(err, CKT_EINVAL, "nested_layout: rank %d is out of range [1, %d]", in->rank,
                        CKT_NESTED_MAX_RANK);
    ckt_nested n = *in;
    if (n.subgroup_size < 0)
        return ckt_fail(err, CKT_EINVAL, "nested_layout: subgroup_size %lld is negative",
                        (long long)n.subgroup_size);
    const struct {
        const char *name;
        int64_t *v;
    } tiles[] = {{"subgroup_tile", n.subgroup_tile},
                 {"batch_tile", n.batch_tile},
                 {"outer_tile", n.outer_tile},
                 {"thread_tile", n.thread_tile},
                 {"element_tile", n.element_tile}};
    int64_t total = 1;
    for (int t = 0; t < 5; t++)
        for (int i = 0; i < n.rank; i++) {
            if (tiles[t].v[i] <= 0)
                return ckt_fail(err, CKT_EINVAL,
                                "nested_layout: %s[%d] is %lld; tiles must be positive",
                                tiles[t].name, i, (long long)tiles[t].v[i]);
            if (ckt_mul_ovf(total, tiles[t].v[i], &total))
                return ckt_fail(err, CKT_EOVERFLOW, "nested_layout: the vector size overflows");
        }
    for (int i = 0; i < n.rank; i++) {
        if (n.subgroup_strides[i] < 0)
            return ckt_fail(err, CKT_EINVAL, "nested_layout: subgroup_strides[%d] is negative", i);
        if (n.thread_strides[i] < 0)
            return ckt_fail(err, CKT_EINVAL, "nested_layout: thread_strides[%d] is negative", i);
        /* normalisation: a dimension of tile 1 is not distributed */
        if (n.subgroup_tile[i] == 1) n.subgroup_strides[i] = 0;
        if (n.thread_tile[i] == 1) n.thread_strides[i] = 0;
        if (n.subgroup_tile[i] > 1 && n.subgroup_strides[i] == 0)
            return ckt_fail(err, CKT_EINVAL,
                            "nested_layout: subgroup_tile[%d] = %lld but its stride is 0", i,
                            (long long)n.subgroup_tile[i]);
        if (n.thread_tile[i] > 1 && n.thread_strides[i] == 0)
            return ckt_fail(err, CKT_EINVAL,
                            "nested_layout: thread_tile[%d] = %lld but its stride is 0", i,
                            (long long)n.thread_tile[i]);
    }
    ckt_status st;
    if ((st = check_nesting(n.rank, n.thread_tile, n.thread_strides, "thread_strides", err)))
        return st;
    if ((st = check_nesting(n.rank, n.subgroup_tile, n.subgroup_strides, "subgroup_strides", err)))
        return st;
    if (n.subgroup_size > 0) {
        int64_t lanes = span(n.rank, n.thread_tile, n.thread_strides);
        if (n.subgroup_size % lanes != 0)
            return ckt_fail(err, CKT_EINVAL,
                            "nested_layout: the thread tile spans %lld lanes, which does not "
                            "divide subgroup_size %lld",
                            (long long)lanes, (long long)n.subgroup_size);
    }
    *out = n;
    return CKT_OK;
}

void ckt_nested_undistributed_shape(const ckt_nested *n, int64_t *shape)
{
    for (int i = 0; i < n->rank; i++)
        shape[i] = n->subgroup_tile[i] * n->batch_tile[i] * n->outer_tile[i] * n->thread_tile[i] *
                   n->element_tile[i];
}

void ckt_nested_distributed_shape(const ckt_nested *n, int64_t *shape)
{
    for (int i = 0; i < n->rank; i++) {
        shape[i] = n->batch_tile[i];
        shape[n->rank + i] = n->outer_tile[i];
        shape[2 * n->rank + i] = n->element_tile[i];
    }
}

void ckt_nested_packed_shape(const ckt_nested *n, int64_t *shape)
{
    const int64_t *parts[5] = {n->subgroup_tile, n->batch_tile, n->outer_tile, n->thread_tile,
                               n->element_tile};
    for (int p = 0; p < 5; p++)
        for (int i = 0; i < n->rank; i++) shape[p * n->rank + i] = parts[p][i];
}

int64_t ckt_nested_values_per_thread(const ckt_nested *n)
{
    int64_t v = 1;
    for (int i = 0; i < n->rank; i++) v *= n->batch_tile[i] * n->outer_tile[i] * n->element_tile[i];
    return v;
}

int64_t ckt_nested_num_subgroups(const ckt_nested *n)
{
    return span(n->rank, n->subgroup_tile, n->subgroup_strides);
}

int64_t ckt_nested_subgroup_size(const ckt_nested *n, int64_t requested)
{
    if (requested > 0) return requested;
    return n && n->subgroup_size > 0 ? n->subgroup_size : CKT_NESTED_DEFAULT_SUBGROUP;
}

/* The lanes of a subgroup must be a whole number of thread tiles: lanes beyond the tile wrap
 * around (IREE's modulo) and replicate it. */
static ckt_status check_subgroup(const ckt_nested *n, int64_t subgroup_size, const char *fn,
                                 ckt_error *err)
{
    int64_t lanes = span(n->rank, n->thread_tile, n->thread_strides);
    if (subgroup_size % lanes != 0)
        return ckt_fail(
            err, CKT_EINVAL,
            "%s: the thread tile spans %lld lanes, which does not divide the subgroup size %lld",
            fn, (long long)lanes, (long long)subgroup_size);
    return CKT_OK;
}

/* The threads of n with subgroups of subgroup_size lanes (checked against the thread tile). */
static ckt_status thread_count(const ckt_nested *n, int64_t subgroup_size, const char *fn,
                               int64_t *out, ckt_error *err)
{
    ckt_status st = check_subgroup(n, subgroup_size, fn, err);
    if (st) return st;
    if (ckt_mul_ovf(ckt_nested_num_subgroups(n), subgroup_size, out))
        return ckt_fail(err, CKT_EOVERFLOW, "%s: the thread count overflows 64 bits", fn);
    return CKT_OK;
}

ckt_status ckt_nested_num_threads(const ckt_nested *n, int64_t subgroup_size, int64_t *out,
                                  ckt_error *err)
{
    if (!n || !out) return ckt_fail(err, CKT_EINVAL, "num_threads: NULL argument");
    return thread_count(n, ckt_nested_subgroup_size(n, subgroup_size), "num_threads", out, err);
}

/* The subgroup_size argument of elements and tv_layout: not negative; 0 takes the layout's (or
 * the default). */
static ckt_status subgroup_arg(const ckt_nested *n, int64_t *subgroup_size, const char *fn,
                               ckt_error *err)
{
    if (*subgroup_size < 0)
        return ckt_fail(err, CKT_EINVAL, "%s: subgroup_size %lld must be positive", fn,
                        (long long)*subgroup_size);
    *subgroup_size = ckt_nested_subgroup_size(n, *subgroup_size);
    return CKT_OK;
}

ckt_status ckt_nested_elements(const ckt_nested *n, int64_t tid, int64_t subgroup_size,
                               int64_t *coords, ckt_error *err)
{
    if (!n || !coords) return ckt_fail(err, CKT_EINVAL, "elements: NULL argument");
    int64_t nthreads;
    ckt_status st = subgroup_arg(n, &subgroup_size, "elements", err);
    if (st || (st = thread_count(n, subgroup_size, "elements", &nthreads, err))) return st;
    if (tid < 0 || tid >= nthreads)
        return ckt_fail(err, CKT_EINVAL, "elements: thread id %lld is out of range [0, %lld)",
                        (long long)tid, (long long)nthreads);
    int64_t sg = tid / subgroup_size, lane = tid % subgroup_size;
    int64_t vs[CKT_NESTED_MAX_RANK], vt[CKT_NESTED_MAX_RANK];
    for (int i = 0; i < n->rank; i++) {
        vs[i] = n->subgroup_strides[i] ? (sg / n->subgroup_strides[i]) % n->subgroup_tile[i] : 0;
        vt[i] = n->thread_strides[i] ? (lane / n->thread_strides[i]) % n->thread_tile[i] : 0;
    }
    /* batch-major, then outer, then element; within each level the last dimension fastest */
    int64_t counts[3 * CKT_NESTED_MAX_RANK], digit[3 * CKT_NESTED_MAX_RANK];
    int nd = 3 * n->rank;
    for (int i = 0; i < n->rank; i++) {
        counts[i] = n->batch_tile[i];
        counts[n->rank + i] = n->outer_tile[i];
        counts[2 * n->rank + i] = n->element_tile[i];
    }
    int64_t nv = ckt_nested_values_per_thread(n);
    for (int64_t v = 0; v < nv; v++) {
        int64_t r = v;
        for (int k = nd - 1; k >= 0; k--) {
            digit[k] = r % counts[k];
            r /= counts[k];
        }
        for (int i = 0; i < n->rank; i++) {
            int64_t b = digit[i], o = digit[n->rank + i], e = digit[2 * n->rank + i];
            coords[v * n->rank + i] =
                (((vs[i] * n->batch_tile[i] + b) * n->outer_tile[i] + o) * n->thread_tile[i] +
                 vt[i]) *
                    n->element_tile[i] +
                e;
        }
    }
    return CKT_OK;
}

/* Leaves of one id level (subgroups or lanes): sorted by stride, with gaps and the wrap-around
 * up to `extent` as stride-0 (replicated) leaves. */
static int id_leaves(int rank, const int64_t *tile, const int64_t *stride, const int64_t *weight,
                     int64_t extent, int64_t *ls, int64_t *ld)
{
    int order[CKT_NESTED_MAX_RANK], n = by_stride(rank, stride, order), k = 0;
    int64_t running = 1;
    for (int q = 0; q < n; q++) {
        int i = order[q];
        if (stride[i] > running) {
            ls[k] = stride[i] / running;
            ld[k++] = 0;
        }
        ls[k] = tile[i];
        ld[k++] = weight[i];
        running = stride[i] * tile[i];
    }
    if (extent > running) {
        ls[k] = extent / running;
        ld[k++] = 0;
    }
    return k;
}

ckt_status ckt_nested_tv_layout(const ckt_nested *n, int64_t subgroup_size, ckt_layout *tv,
                                ckt_error *err)
{
    if (!n || !tv) return ckt_fail(err, CKT_EINVAL, "tv_layout: NULL argument");
    ckt_status st = subgroup_arg(n, &subgroup_size, "tv_layout", err);
    if (st || (st = check_subgroup(n, subgroup_size, "tv_layout", err))) return st;
    int64_t shape[CKT_NESTED_MAX_RANK], rowstride[CKT_NESTED_MAX_RANK];
    ckt_nested_undistributed_shape(n, shape);
    int64_t rs = 1;
    for (int i = n->rank - 1; i >= 0; i--) {
        rowstride[i] = rs;
        rs *= shape[i];
    }
    /* weights of each digit along dim i: e 1, t E, o T*E, b O*T*E, s B*O*T*E (times the row stride)
     */
    int64_t we[CKT_NESTED_MAX_RANK], wt[CKT_NESTED_MAX_RANK], wo[CKT_NESTED_MAX_RANK],
        wb[CKT_NESTED_MAX_RANK], ws[CKT_NESTED_MAX_RANK];
    for (int i = 0; i < n->rank; i++) {
        we[i] = rowstride[i];
        wt[i] = we[i] * n->element_tile[i];
        wo[i] = wt[i] * n->thread_tile[i];
        wb[i] = wo[i] * n->outer_tile[i];
        ws[i] = wb[i] * n->batch_tile[i];
    }
    int64_t ts[4 * CKT_NESTED_MAX_RANK + 4], td[4 * CKT_NESTED_MAX_RANK + 4];
    int nt = id_leaves(n->rank, n->thread_tile, n->thread_strides, wt, subgroup_size, ts, td);
    nt += id_leaves(n->rank, n->subgroup_tile, n->subgroup_strides, ws, ckt_nested_num_subgroups(n),
                    ts + nt, td + nt);
    /* values: colexicographic, so the fastest (last element dim) first */
    int64_t vs[3 * CKT_NESTED_MAX_RANK], vd[3 * CKT_NESTED_MAX_RANK];
    int nv = 0;
    const int64_t *cnt[3] = {n->element_tile, n->outer_tile, n->batch_tile}, *w[3] = {we, wo, wb};
    for (int level = 0; level < 3; level++)
        for (int i = n->rank - 1; i >= 0; i--) {
            vs[nv] = cnt[level][i];
            vd[nv++] = w[level][i];
        }
    if (nt > CKT_MAX_RANK || nv > CKT_MAX_RANK)
        return ckt_fail(
            err, CKT_ECAPACITY,
            "tv_layout: %d thread or %d value leaves are beyond the capacity %d of a layout mode",
            nt, nv, CKT_MAX_RANK);
    return ckt_tv_from_leaves(nt, ts, td, nv, vs, vd, tv, err);
}

int ckt_nested_to_string(const ckt_nested *n, char *buf, size_t cap)
{
    size_t k = 0;
    const struct {
        const char *name;
        const int64_t *v;
    } f[] = {{"subgroup_tile", n->subgroup_tile},  {"batch_tile", n->batch_tile},
             {"outer_tile", n->outer_tile},        {"thread_tile", n->thread_tile},
             {"element_tile", n->element_tile},    {"subgroup_strides", n->subgroup_strides},
             {"thread_strides", n->thread_strides}};
    k += (size_t)snprintf(buf, cap, "nested_layout<");
    for (int j = 0; j < 7; j++) {
        k += (size_t)snprintf(buf + (k < cap ? k : cap), k < cap ? cap - k : 0, "%s%s = [",
                              j ? ", " : "", f[j].name);
        for (int i = 0; i < n->rank; i++)
            k += (size_t)snprintf(buf + (k < cap ? k : cap), k < cap ? cap - k : 0, "%s%lld",
                                  i ? ", " : "", (long long)f[j].v[i]);
        k += (size_t)snprintf(buf + (k < cap ? k : cap), k < cap ? cap - k : 0, "]");
    }
    if (n->subgroup_size > 0)
        k += (size_t)snprintf(buf + (k < cap ? k : cap), k < cap ? cap - k : 0,
                              ", subgroup_size = %lld", (long long)n->subgroup_size);
    k += (size_t)snprintf(buf + (k < cap ? k : cap), k < cap ? cap - k : 0, ">");
    return (int)k;
}
