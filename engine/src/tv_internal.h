/* What the TV-layout analyses share (not installed). */
#ifndef CKT_TV_INTERNAL_H
#define CKT_TV_INTERNAL_H

#include "ckt/layout.h"

/* The offset of value v of thread t in a (thread, value) layout given as its two modes, T(t) +
 * V(v); t and v are in range, so the evaluations do not fail. */
static inline int64_t ckt_tv_offset(const ckt_layout *tmode, const ckt_layout *vmode, int64_t t,
                                    int64_t v, ckt_error *err)
{
    int64_t a, b;
    ckt_layout_eval(tmode, t, &a, err);
    ckt_layout_eval(vmode, v, &b, err);
    return a + b;
}

#endif
