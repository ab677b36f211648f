/* Helpers for the fuzz targets: read small integers from the fuzz input. */
#ifndef CKT_FUZZ_COMMON_H
#define CKT_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const uint8_t *p;
    size_t n;
} fuzz_input;

static inline uint8_t fz_u8(fuzz_input *in)
{
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

/* Mostly small values, sometimes extreme ones: that is where the bugs are. */
static inline int64_t fz_int(fuzz_input *in)
{
    uint8_t k = fz_u8(in);
    switch (k >> 5) {
    case 0: return -(int64_t)(k & 31);
    case 1: { uint64_t v = 0; for (int i = 0; i < 8; i++) v = (v << 8) | fz_u8(in); return (int64_t)v; }
    default: return k & 63;
    }
}

/* Report a broken invariant as a crash so libFuzzer records the input; say which one. */
#define FUZZ_CHECK(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: fuzz invariant broken: %s\n", __FILE__, __LINE__, #cond); \
            __builtin_trap(); \
        } \
    } while (0)

#endif
