/* Space-filling curves with CK's implementation semantics (space_filling_curve.hpp):
 * the access index is decomposed over the ordered access lengths with the last ordered
 * dimension fastest; with snake, ordered dim k >= 1 runs backward when the merged index
 * of ordered dims 0..k-1 is odd. ckt extends CK with ceil division and partial edge accesses. */
#include <string.h>

#include "checked.h"
#include "ckt/sfc.h"

ckt_status ckt_sfc_make(int ndim, const int64_t *lengths, const int64_t *order,
                        const int64_t *scalars, bool snake, ckt_sfc *out, ckt_error *err)
{
    if (!lengths || !out) return ckt_fail(err, CKT_EINVAL, "sfc: lengths and out must not be NULL");
    if (ndim < 1 || ndim > CKT_SFC_MAX_DIM)
        return ckt_fail(err, CKT_EINVAL, "sfc: %d dimensions (1 to %d)", ndim, CKT_SFC_MAX_DIM);
    ckt_sfc s;
    memset(&s, 0, sizeof s);
    s.ndim = ndim;
    s.snake = snake;
    bool seen[CKT_SFC_MAX_DIM] = {false};
    s.num_access = 1;
    for (int i = 0; i < ndim; i++) {
        if (lengths[i] <= 0)
            return ckt_fail(err, CKT_EINVAL, "sfc: lengths[%d] = %lld must be positive", i,
                            (long long)lengths[i]);
        int64_t sp = scalars ? scalars[i] : 1;
        if (sp <= 0)
            return ckt_fail(err, CKT_EINVAL, "sfc: scalars_per_access[%d] = %lld must be positive",
                            i, (long long)sp);
        int64_t o = order ? order[i] : i;
        if (o < 0 || o >= ndim || seen[o])
            return ckt_fail(err, CKT_EINVAL,
                            "sfc: order is not a permutation of 0..%d (entry %d is %lld)", ndim - 1,
                            i, (long long)o);
        seen[o] = true;
        s.lengths[i] = lengths[i];
        s.scalars[i] = sp;
        s.order[i] = o;
        s.access_lengths[i] = ckt_ceil_div(lengths[i], sp);
        if (ckt_mul_ovf(s.num_access, s.access_lengths[i], &s.num_access))
            return ckt_fail(err, CKT_EOVERFLOW, "sfc: the number of accesses overflows");
    }
    *out = s;
    return CKT_OK;
}

ckt_status ckt_sfc_index(const ckt_sfc *s, int64_t i, int64_t *coord, bool *partial, ckt_error *err)
{
    if (!s || !coord)
        return ckt_fail(err, CKT_EINVAL, "sfc.index: curve and coord must not be NULL");
    if (i < 0 || i >= s->num_access)
        return ckt_fail(err, CKT_EINVAL, "sfc: access %lld is out of range [0, %lld)", (long long)i,
                        (long long)s->num_access);
    int64_t oidx[CKT_SFC_MAX_DIM], olen[CKT_SFC_MAX_DIM];
    for (int k = 0; k < s->ndim; k++) olen[k] = s->access_lengths[s->order[k]];
    int64_t r = i;
    for (int k = s->ndim - 1; k >= 0; k--) {
        oidx[k] = r % olen[k];
        r /= olen[k];
    }
    bool part = false;
    int64_t merged = 0;
    for (int k = 0; k < s->ndim; k++) {
        int64_t v = oidx[k];
        if (s->snake && k > 0 && merged % 2 != 0) v = olen[k] - 1 - v;
        merged = merged * olen[k] + oidx[k]; /* CK merges the un-reversed indices */
        int d = (int)s->order[k];
        coord[d] = v * s->scalars[d];
        if (coord[d] > s->lengths[d] - s->scalars[d])
            part = true; /* written so it cannot overflow */
    }
    if (partial) *partial = part;
    return CKT_OK;
}

ckt_status ckt_sfc_step(const ckt_sfc *s, int64_t i, int64_t j, int64_t *step, ckt_error *err)
{
    int64_t a[CKT_SFC_MAX_DIM], b[CKT_SFC_MAX_DIM];
    ckt_status st;
    if (!step) return ckt_fail(err, CKT_EINVAL, "sfc.step: step must not be NULL");
    if ((st = ckt_sfc_index(s, i, a, NULL, err)) || (st = ckt_sfc_index(s, j, b, NULL, err)))
        return st;
    for (int d = 0; d < s->ndim; d++) step[d] = b[d] - a[d];
    return CKT_OK;
}

ckt_status ckt_sfc_locality_of(const ckt_sfc *s, int64_t seq, int64_t line, ckt_sfc_locality *out,
                               ckt_error *err)
{
    if (!s || !out) return ckt_fail(err, CKT_EINVAL, "locality: curve and out must not be NULL");
    if (seq < 0 || line < seq)
        return ckt_fail(err, CKT_EINVAL,
                        "locality: thresholds must satisfy 0 <= sequential <= cache_line");
    if (s->num_access > CKT_WORK_LIMIT)
        return ckt_fail(err, CKT_ECAPACITY,
                        "locality: %lld accesses are more than the analysis limit %lld",
                        (long long)s->num_access, (long long)CKT_WORK_LIMIT);
    ckt_sfc_locality l = {0, 0, 0, 0};
    int64_t step[CKT_SFC_MAX_DIM];
    for (int64_t i = 0; i + 1 < s->num_access; i++) {
        ckt_sfc_step(s, i, i + 1, step, err);
        /* distances saturate at INT64_MAX rather than overflow on huge tiles */
        int64_t dist = 0;
        for (int d = 0; d < s->ndim; d++)
            if (ckt_add_ovf(dist, step[d] < 0 ? -step[d] : step[d], &dist)) dist = INT64_MAX;
        if (ckt_add_ovf(l.total_distance, dist, &l.total_distance)) l.total_distance = INT64_MAX;
        if (dist <= seq)
            l.sequential++;
        else if (dist <= line)
            l.cache_line++;
        else
            l.large++;
    }
    *out = l;
    return CKT_OK;
}
