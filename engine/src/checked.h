/* ckt — 64-bit integer arithmetic with overflow detection.
 * Shapes, strides and offsets are int64_t; every product or sum that can grow
 * goes through these so an overflow becomes an error, never a wrong answer. */
#ifndef CKT_CHECKED_H
#define CKT_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

/* Each returns true when the result overflowed. */
static inline bool ckt_add_ovf(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_add_overflow(a, b, r);
}
static inline bool ckt_sub_ovf(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_sub_overflow(a, b, r);
}
static inline bool ckt_mul_ovf(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_mul_overflow(a, b, r);
}

static inline int64_t ckt_ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
} /* a >= 0, b > 0; no overflow */
static inline int64_t ckt_gcd(int64_t a, int64_t b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}
/* The most elementary steps one analysis call may take (enumerating accesses, threads x values):
 * beyond it the call is refused with a clear error instead of running for minutes. */
#define CKT_WORK_LIMIT ((int64_t)1 << 26)

static inline int64_t ckt_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t ckt_max64(int64_t a, int64_t b) { return a > b ? a : b; }

#endif
