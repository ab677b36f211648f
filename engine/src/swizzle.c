/* Swizzles (CuTe's Swizzle<B,M,S>) and composed layouts sw(offset + L(c)).
 * The bit fields must not overlap: |S| >= B keeps the function an XOR of a
 * field into a disjoint field, hence a bijection (and its own inverse). */
#include "checked.h"
#include "ckt/layout.h"

ckt_status ckt_swizzle_make(int b, int m, int s, ckt_swizzle *out, ckt_error *err)
{
    if (!out) return ckt_fail(err, CKT_EINVAL, "swizzle: output is NULL");
    if (b < 0) return ckt_fail(err, CKT_EINVAL, "swizzle: B = %d must be >= 0", b);
    if (m < 0) return ckt_fail(err, CKT_EINVAL, "swizzle: M = %d must be >= 0", m);
    if (s < -62 || s > 62)
        return ckt_fail(err, CKT_EINVAL, "swizzle: |S| = %d is beyond 62 bits", s < 0 ? -s : s);
    int as = s < 0 ? -s : s;
    if (as < b)
        return ckt_fail(err, CKT_EINVAL,
                        "swizzle: |S| = %d must be >= B = %d (the masks would overlap)", as, b);
    if (b + m + as > 62)
        return ckt_fail(err, CKT_EINVAL, "swizzle: B + M + |S| = %d is beyond 62 bits", b + m + as);
    out->b = b;
    out->m = m;
    out->s = s;
    return CKT_OK;
}

ckt_status ckt_composed_eval(const ckt_composed *c, int64_t idx, int64_t *offset, ckt_error *err)
{
    if (!c || !offset) return ckt_fail(err, CKT_EINVAL, "composed layout: NULL argument");
    int64_t inner, x;
    ckt_status st = ckt_layout_eval(&c->inner, idx, &inner, err);
    if (st) return st;
    if (ckt_add_ovf(c->offset, inner, &x))
        return ckt_fail(err, CKT_EOVERFLOW, "composed layout: offset %lld + %lld overflows",
                        (long long)c->offset, (long long)inner);
    if (x < 0)
        return ckt_fail(
            err, CKT_EINVAL,
            "composed layout: offset %lld is negative; swizzles act on non-negative offsets",
            (long long)x);
    *offset = ckt_swizzle_apply(c->sw, x);
    return CKT_OK;
}
