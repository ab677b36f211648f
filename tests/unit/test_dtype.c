/* dtype: names, sizes, parsing; f16/bf16 <-> f32 against a reference computed in double:
 * every one of the 65536 bit patterns decodes exactly; encoding picks the nearest value
 * (ties to the even pattern) for every midpoint, its neighbours and millions of random floats. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/dtype.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* reference decoders: the definition of the formats, in double */
static double ref_f16(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}
static double ref_bf16(uint16_t h)
{
    int s = h >> 15, e = (h >> 7) & 255, m = h & 127;
    double v = e == 0 ? ldexp(m, -133) : e == 255 ? (m ? NAN : INFINITY) : ldexp(128 + m, e - 134);
    return s ? -v : v;
}

/* reference encoder: nearest value among all finite positive patterns, ties to the even pattern;
 * beyond the largest finite value, infinity once |x| >= max + half an ulp (IEEE overflow). */
typedef struct {
    double (*dec)(uint16_t);
    uint16_t maxfin;
} fmt;
static const fmt F16 = {ref_f16, 0x7bff}, BF16 = {ref_bf16, 0x7f7f};

static uint16_t ref_encode(const fmt *f, double x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    if (isnan(x)) return 0xffff; /* callers check NaN separately */
    double max = f->dec(f->maxfin), ulp = max - f->dec((uint16_t)(f->maxfin - 1));
    if (a >= max + ulp / 2) return sign | (uint16_t)(f->maxfin + 1);
    uint16_t lo = 0, hi = f->maxfin; /* largest pattern with value <= a */
    while (lo < hi) {
        uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
        if (f->dec(mid) <= a)
            lo = mid;
        else
            hi = (uint16_t)(mid - 1);
    }
    if (lo == f->maxfin) return sign | lo;
    double dlo = a - f->dec(lo), dhi = f->dec((uint16_t)(lo + 1)) - a;
    uint16_t r = dlo < dhi   ? lo
                 : dhi < dlo ? (uint16_t)(lo + 1)
                 : (lo & 1)  ? (uint16_t)(lo + 1)
                             : lo;
    return sign | r;
}

static void decode_all_patterns_exactly(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        double r = ref_f16((uint16_t)h), g = ckt_f16_to_f32((uint16_t)h);
        if (isnan(r))
            assert_true(isnan(g));
        else {
            assert_true(r == g);
            assert_int_equal(signbit(r) != 0, signbit(g) != 0);
        }
        r = ref_bf16((uint16_t)h), g = ckt_bf16_to_f32((uint16_t)h);
        if (isnan(r))
            assert_true(isnan(g));
        else {
            assert_true(r == g);
            assert_int_equal(signbit(r) != 0, signbit(g) != 0);
        }
    }
}

static void roundtrip_all_patterns(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = ckt_f16_to_f32((uint16_t)h);
        uint16_t back = ckt_f32_to_f16(f);
        if (isnan(f)) {
            assert_true((back & 0x7c00) == 0x7c00 && (back & 0x3ff));
            assert_int_equal(back & 0x8000, h & 0x8000);
        } else
            assert_int_equal(back, h);
        f = ckt_bf16_to_f32((uint16_t)h);
        back = ckt_f32_to_bf16(f);
        if (isnan(f)) {
            assert_true((back & 0x7f80) == 0x7f80 && (back & 0x7f));
            assert_int_equal(back & 0x8000, h & 0x8000);
        } else
            assert_int_equal(back, h);
    }
}

/* Every midpoint between neighbouring patterns is a tie (rounds to even); one f32 ulp either
 * side it must round to the nearer neighbour. */
static void check_neighbourhood(const fmt *f, uint16_t (*enc)(float), double x)
{
    float fx = (float)x;
    if ((double)fx != x) return; /* not representable in f32 (deep bf16 subnormal midpoints are) */
    float cand[3] = {fx, nextafterf(fx, -INFINITY), nextafterf(fx, INFINITY)};
    for (int i = 0; i < 3; i++) {
        uint16_t want = ref_encode(f, cand[i]), got = enc(cand[i]);
        if (want != got)
            fail_msg("%s: %a -> 0x%04x, want 0x%04x", f == &F16 ? "f16" : "bf16", (double)cand[i],
                     got, want);
    }
}

static void ties_round_to_even_at_every_midpoint(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x7c00; h++) {
        double mid = (ref_f16((uint16_t)h) + ref_f16((uint16_t)(h + 1))) / 2;
        check_neighbourhood(&F16, ckt_f32_to_f16, mid);
        check_neighbourhood(&F16, ckt_f32_to_f16, -mid);
    }
    for (uint32_t h = 0; h < 0x7f80; h++) {
        double mid = (ref_bf16((uint16_t)h) + ref_bf16((uint16_t)(h + 1))) / 2;
        check_neighbourhood(&BF16, ckt_f32_to_bf16, mid);
        check_neighbourhood(&BF16, ckt_f32_to_bf16, -mid);
    }
    /* literal ties: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 -> even (1.0) */
    assert_int_equal(ckt_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    assert_int_equal(ckt_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02); /* odd below: rounds up */
    assert_int_equal(ckt_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    assert_int_equal(ckt_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
    assert_int_equal(ckt_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(ckt_f32_to_f16(65519.99f), 0x7bff);
    assert_int_equal(ckt_f32_to_f16(65520.0f), 0x7c00); /* the overflow threshold is a tie -> inf */
    assert_int_equal(ckt_f32_to_f16(0x1p-25f), 0x0000); /* half the smallest subnormal: tie -> 0 */
    assert_int_equal(ckt_f32_to_f16(nextafterf(0x1p-25f, 1)), 0x0001);
    assert_int_equal(ckt_f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(ckt_f32_to_f16(0x1p-14f), 0x0400); /* smallest normal */
    assert_int_equal(ckt_f32_to_f16(0x1p-14f - 0x1p-25f),
                     0x0400);                                 /* rounds up out of the subnormals */
    assert_int_equal(ckt_f32_to_bf16(3.4028235e38f), 0x7f80); /* FLT_MAX rounds to inf in bf16 */
    assert_int_equal(ckt_f32_to_bf16(bits_f32(0x00000001)),
                     0x0000); /* f32 subnormals under bf16's */
}

static void random_floats_match_the_reference(void **state)
{
    (void)state;
    for (int i = 0; i < 2000000; i++) {
        uint32_t u = (uint32_t)next();
        if (i & 1)
            u = (u & 0x80ffffffu) | ((uint32_t)(96 + next() % 64) << 23); /* f16's exponent range */
        float f = bits_f32(u);
        if (isnan(f)) {
            uint16_t h = ckt_f32_to_f16(f), b = ckt_f32_to_bf16(f);
            assert_true((h & 0x7c00) == 0x7c00 && (h & 0x200)); /* quiet NaN */
            assert_true((b & 0x7f80) == 0x7f80 && (b & 0x40));
            assert_int_equal(h >> 15, u >> 31);
            assert_int_equal(b >> 15, u >> 31);
            continue;
        }
        uint16_t want = ref_encode(&F16, f), got = ckt_f32_to_f16(f);
        if (want != got)
            fail_msg("f16: 0x%08x (%a) -> 0x%04x, want 0x%04x", u, (double)f, got, want);
        want = ref_encode(&BF16, f), got = ckt_f32_to_bf16(f);
        if (want != got)
            fail_msg("bf16: 0x%08x (%a) -> 0x%04x, want 0x%04x", u, (double)f, got, want);
    }
    assert_int_equal(ckt_f32_to_f16(INFINITY), 0x7c00);
    assert_int_equal(ckt_f32_to_f16(-INFINITY), 0xfc00);
    assert_int_equal(ckt_f32_to_bf16(-INFINITY), 0xff80);
    /* NaN payload: the top bits survive (here f32 0x7fa00000: signalling, payload 0x200000) */
    assert_int_equal(ckt_f32_to_bf16(bits_f32(0x7fa00000u)), 0x7fe0);
    assert_int_equal(f32_bits(ckt_bf16_to_f32(0x7fc1)), 0x7fc10000u);
}

/* f64 -> 16 bits is one rounding: differs from double -> f32 -> f16 exactly where that
 * double-rounds */
static void f64_conversion_rounds_once(void **state)
{
    (void)state;
    double x =
        1.0 + 0x1p-11 + 0x1p-40; /* just above the f16 tie; f32 rounding would land on the tie */
    assert_int_equal(ckt_f64_to_f16(x), 0x3c01);
    assert_int_equal(ckt_f32_to_f16((float)x), 0x3c00);
    for (int i = 0; i < 200000; i++) {
        double d = ldexp((double)(next() >> 11), -(int)(next() % 80)) * ((next() & 1) ? 1 : -1);
        assert_int_equal(ckt_f64_to_f16(d), ref_encode(&F16, d));
        assert_int_equal(ckt_f64_to_bf16(d), ref_encode(&BF16, d));
    }
}

static void names_sizes_and_parsing(void **state)
{
    (void)state;
    static const struct {
        ckt_dtype t;
        const char *name;
        size_t size;
        int fl;
    } want[] = {{CKT_F16, "f16", 2, 1}, {CKT_BF16, "bf16", 2, 1}, {CKT_F32, "f32", 4, 1},
                {CKT_I32, "i32", 4, 0}, {CKT_I8, "i8", 1, 0},     {CKT_U8, "u8", 1, 0},
                {CKT_I64, "i64", 8, 0}, {CKT_F64, "f64", 8, 1}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        assert_string_equal(ckt_dtype_name(want[i].t), want[i].name);
        assert_int_equal(ckt_dtype_size(want[i].t), want[i].size);
        assert_int_equal(ckt_dtype_is_float(want[i].t), want[i].fl);
        ckt_dtype t;
        assert_int_equal(ckt_dtype_parse(want[i].name, &t, NULL), CKT_OK);
        assert_int_equal(t, want[i].t);
    }
    ckt_dtype t;
    assert_int_equal(ckt_dtype_parse("half", &t, NULL), CKT_OK);
    assert_int_equal(t, CKT_F16);
    assert_int_equal(ckt_dtype_parse("float", &t, NULL), CKT_OK);
    assert_int_equal(t, CKT_F32);
    ckt_error err;
    assert_int_equal(ckt_dtype_parse("f128", &t, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "unknown element type 'f128'"));
    assert_int_equal(ckt_dtype_parse(NULL, &t, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "name is NULL"));
    assert_int_equal(ckt_dtype_parse("f32", NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_dtype_size((ckt_dtype)99), 0);
    assert_null(ckt_dtype_name((ckt_dtype)-1));
    assert_false(ckt_dtype_valid((ckt_dtype)CKT_DTYPE_COUNT));
}

static void element_load_store(void **state)
{
    (void)state;
    unsigned char buf[16];
    for (int t = 0; t < CKT_DTYPE_COUNT; t++) {
        ckt_dtype_store((ckt_dtype)t, buf, 3.0);
        assert_true(ckt_dtype_load((ckt_dtype)t, buf) == 3.0);
        ckt_dtype_store((ckt_dtype)t, buf + 1, -2.5); /* unaligned */
        double want = t == CKT_U8 ? 0 : ckt_dtype_is_float((ckt_dtype)t) ? -2.5 : -2;
        assert_true(ckt_dtype_load((ckt_dtype)t, buf + 1) == want);
    }
    ckt_dtype_store(CKT_I8, buf, 1000);
    assert_int_equal(ckt_dtype_load_i64(CKT_I8, buf), 127);
    ckt_dtype_store(CKT_I32, buf, -1e20);
    assert_int_equal(ckt_dtype_load_i64(CKT_I32, buf), INT32_MIN);
    ckt_dtype_store(CKT_I32, buf, NAN);
    assert_int_equal(ckt_dtype_load_i64(CKT_I32, buf), 0);
    ckt_dtype_store_i64(CKT_I64, buf, INT64_MAX - 1); /* exact, unlike a double */
    assert_int_equal(ckt_dtype_load_i64(CKT_I64, buf), INT64_MAX - 1);
    ckt_dtype_store(CKT_I64, buf, 1e300);
    assert_int_equal(ckt_dtype_load_i64(CKT_I64, buf), INT64_MAX);
    ckt_dtype_store_i64(CKT_U8, buf, 300);
    assert_int_equal(ckt_dtype_load_i64(CKT_U8, buf), 255);
    ckt_dtype_store(CKT_F16, buf, 1e6);
    assert_true(isinf(ckt_dtype_load(CKT_F16, buf)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decode_all_patterns_exactly),
        cmocka_unit_test(roundtrip_all_patterns),
        cmocka_unit_test(ties_round_to_even_at_every_midpoint),
        cmocka_unit_test(random_floats_match_the_reference),
        cmocka_unit_test(f64_conversion_rounds_once),
        cmocka_unit_test(names_sizes_and_parsing),
        cmocka_unit_test(element_load_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
