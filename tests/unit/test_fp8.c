/* The 8-bit float formats (OCP FP8 e4m3 = E4M3FN, e5m2): every code decoded against the format's
 * definition written out here, decode -> encode round trips over all 256 codes, ties to even at
 * every midpoint, saturation (cvt.rn.satfinite: +-inf and out-of-range to +-max, NaN stays NaN),
 * subnormals, and a reference encoder (the nearest code by search) on random doubles. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/dtype.h"

typedef struct fmt {
    const char *name;
    int ebits, mbits, bias;
    int ieee; /* e5m2: top exponent is inf/NaN; e4m3: only S.1111.111 is NaN */
    double max;
    uint8_t (*enc)(double);
    uint8_t (*enc32)(float);
    float (*dec)(uint8_t);
} fmt;

static const fmt E4M3 = {"e4m3",         4, 3, 7, 0, 448.0, ckt_f64_to_e4m3, ckt_f32_to_e4m3,
                         ckt_e4m3_to_f32};
static const fmt E5M2 = {"e5m2",         5, 2, 15, 1, 57344.0, ckt_f64_to_e5m2, ckt_f32_to_e5m2,
                         ckt_e5m2_to_f32};

static int is_nan_code(const fmt *f, int c)
{
    int e = (c >> f->mbits) & ((1 << f->ebits) - 1), m = c & ((1 << f->mbits) - 1);
    if (f->ieee) return e == (1 << f->ebits) - 1 && m != 0;
    return e == (1 << f->ebits) - 1 && m == (1 << f->mbits) - 1;
}

/* the value of a code from the definition (NaN codes: NAN) */
static double value(const fmt *f, int c)
{
    int e = (c >> f->mbits) & ((1 << f->ebits) - 1), m = c & ((1 << f->mbits) - 1);
    double s = (c & 0x80) ? -1.0 : 1.0;
    if (is_nan_code(f, c)) return NAN;
    if (f->ieee && e == (1 << f->ebits) - 1) return s * INFINITY;
    if (e == 0) return s * ldexp(m, 1 - f->bias - f->mbits);
    return s * ldexp((1 << f->mbits) + m, e - f->bias - f->mbits);
}

static void check_decode(const fmt *f)
{
    for (int c = 0; c < 256; c++) {
        double want = value(f, c), got = f->dec((uint8_t)c);
        if (isnan(want)) {
            assert_true(isnan(got));
            assert_int_equal(signbit(got) != 0, (c & 0x80) != 0);
        } else {
            assert_true(got == want);
            assert_int_equal(signbit(got) != 0, (c & 0x80) != 0); /* -0 too */
        }
    }
}

static void decode_every_code(void **state)
{
    (void)state;
    check_decode(&E4M3);
    check_decode(&E5M2);
    assert_true(ckt_e4m3_to_f32(0x7E) == 448.0f);
    assert_true(ckt_e4m3_to_f32(0x01) == 0x1p-9f);
    assert_true(ckt_e4m3_to_f32(0x08) == 0x1p-6f);
    assert_true(ckt_e5m2_to_f32(0x7B) == 57344.0f);
    assert_true(ckt_e5m2_to_f32(0x01) == 0x1p-16f);
    assert_true(ckt_e5m2_to_f32(0x04) == 0x1p-14f);
    assert_true(isinf(ckt_e5m2_to_f32(0x7C)) && ckt_e5m2_to_f32(0xFC) < 0);
}

/* decode -> encode gives the code back for every code but e5m2's infinities, which saturate to
 * +-max (satfinite), and e5m2's NaNs, which come back as a quiet NaN of their sign (S.11111.1x) */
static void round_trip_every_code(void **state)
{
    (void)state;
    for (int c = 0; c < 256; c++) {
        assert_int_equal(ckt_f32_to_e4m3(ckt_e4m3_to_f32((uint8_t)c)), c);
        assert_int_equal(ckt_f64_to_e4m3((double)ckt_e4m3_to_f32((uint8_t)c)), c);
        uint8_t r = ckt_f32_to_e5m2(ckt_e5m2_to_f32((uint8_t)c));
        if (is_nan_code(&E5M2, c)) {
            assert_true(is_nan_code(&E5M2, r));
            assert_int_equal(r & 0x80, c & 0x80);
            assert_int_equal(r & 0x7E, 0x7E); /* quiet */
        } else if ((c & 0x7F) == 0x7C)
            assert_int_equal(r, (c & 0x80) | 0x7B);
        else
            assert_int_equal(r, c);
    }
}

/* the nearest finite code by search, ties to the even code; beyond max + half an ulp (or a tie
 * with the next binade) +-max */
static int ref_encode(const fmt *f, double d)
{
    if (isnan(d)) return -1;
    int sign = signbit(d) ? 0x80 : 0;
    double a = fabs(d);
    int best = -1;
    double berr = INFINITY;
    for (int c = 0; c < 128; c++) {
        double v = value(f, c);
        if (isnan(v) || isinf(v)) continue;
        double e = fabs(v - a);
        if (e < berr || (e == berr && !(c & 1))) best = c, berr = e;
    }
    /* the first value past max (what an exponent without the hardware's limits would hold) */
    double ulp = ldexp(1.0, (int)floor(log2(f->max)) - f->mbits), next = f->max + ulp;
    if (a >= f->max + ulp / 2) best = 0x7F & (f->ieee ? 0x7B : 0x7E);
    (void)next;
    return sign | best;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void check_random(const fmt *f)
{
    for (int i = 0; i < 40000; i++) {
        double d =
            ldexp((double)(next() >> 11), -53 - (int)(next() % 30) + 17) * ((next() & 1) ? 1 : -1);
        assert_int_equal(f->enc(d), ref_encode(f, d));
        float x = (float)d;
        assert_int_equal(f->enc32(x), ref_encode(f, (double)x));
    }
}

static void random_values_match_the_nearest_code(void **state)
{
    (void)state;
    check_random(&E4M3);
    check_random(&E5M2);
}

/* every midpoint between neighbouring finite codes (subnormals included) goes to the even code */
static void check_ties(const fmt *f)
{
    for (int c = 0; c < 127; c++) {
        double lo = value(f, c), hi = value(f, c + 1);
        if (isnan(lo) || isnan(hi) || isinf(hi)) continue;
        double mid = (lo + hi) / 2;
        int want = (c & 1) ? c + 1 : c;
        assert_int_equal(f->enc(mid), want);
        assert_int_equal(f->enc(-mid), 0x80 | want);
        assert_int_equal(f->enc(nextafter(mid, 0)), c);
        assert_int_equal(f->enc(nextafter(mid, INFINITY)), c + 1);
    }
}

static void ties_go_to_even(void **state)
{
    (void)state;
    check_ties(&E4M3);
    check_ties(&E5M2);
    /* subnormal ties: half the smallest subnormal is a tie with zero (even) */
    assert_int_equal(ckt_f64_to_e4m3(0x1p-10), 0x00);
    assert_int_equal(ckt_f64_to_e4m3(-0x1p-10), 0x80);
    assert_int_equal(ckt_f64_to_e4m3(0x1.0000000001p-10), 0x01);
    assert_int_equal(ckt_f64_to_e4m3(3 * 0x1p-10), 0x02); /* 1.5 subnormal units: even 2 */
    assert_int_equal(ckt_f64_to_e5m2(0x1p-17), 0x00);
    assert_int_equal(ckt_f64_to_e5m2(3 * 0x1p-17), 0x02);
    /* the largest subnormal rounds up into the smallest normal */
    assert_int_equal(ckt_f64_to_e4m3(0x1p-6 - 0x1p-11), 0x08);
}

static void saturation_nan_and_infinity(void **state)
{
    (void)state;
    /* e4m3: 464 (max + half an ulp) is a tie with 480, which is NaN's code: to the even 448 */
    assert_int_equal(ckt_f64_to_e4m3(448), 0x7E);
    assert_int_equal(ckt_f64_to_e4m3(464), 0x7E);
    assert_int_equal(ckt_f64_to_e4m3(465), 0x7E);
    assert_int_equal(ckt_f64_to_e4m3(1e30), 0x7E);
    assert_int_equal(ckt_f64_to_e4m3(-1e30), 0xFE);
    assert_int_equal(ckt_f64_to_e4m3(INFINITY), 0x7E);
    assert_int_equal(ckt_f64_to_e4m3(-INFINITY), 0xFE);
    assert_int_equal(ckt_f32_to_e4m3(3.4e38f), 0x7E);
    assert_int_equal(ckt_f64_to_e4m3(NAN), 0x7F);
    assert_int_equal(ckt_f64_to_e4m3(-NAN), 0xFF);
    /* e5m2: 61440 is the tie of 57344 (odd mantissa) and 65536: saturates */
    assert_int_equal(ckt_f64_to_e5m2(57344), 0x7B);
    assert_int_equal(ckt_f64_to_e5m2(nextafter(61440, 0)), 0x7B);
    assert_int_equal(ckt_f64_to_e5m2(61440), 0x7B);
    assert_int_equal(ckt_f64_to_e5m2(1e300), 0x7B);
    assert_int_equal(ckt_f64_to_e5m2(INFINITY), 0x7B); /* satfinite: no infinity out */
    assert_int_equal(ckt_f64_to_e5m2(-INFINITY), 0xFB);
    assert_int_equal(ckt_f64_to_e5m2(NAN) & 0x7E, 0x7E);
    assert_int_equal(ckt_f64_to_e5m2(-NAN) & 0x80, 0x80);
    /* zeros keep their sign; what underflows too */
    assert_int_equal(ckt_f64_to_e4m3(-0.0), 0x80);
    assert_int_equal(ckt_f64_to_e5m2(-1e-30), 0x80);
    assert_int_equal(ckt_f64_to_e4m3(1e-300), 0x00);
    assert_true(ckt_dtype_max_finite(CKT_E4M3) == 448 && ckt_dtype_max_finite(CKT_E5M2) == 57344);
}

static void names_sizes_and_elements(void **state)
{
    (void)state;
    ckt_dtype t;
    assert_int_equal(ckt_dtype_parse("e4m3", &t, NULL), CKT_OK);
    assert_int_equal(t, CKT_E4M3);
    assert_int_equal(ckt_dtype_parse("e5m2", &t, NULL), CKT_OK);
    assert_int_equal(t, CKT_E5M2);
    assert_int_equal(ckt_dtype_parse("float8_e4m3fn", &t, NULL), CKT_OK);
    assert_int_equal(t, CKT_E4M3);
    ckt_error err;
    assert_int_equal(ckt_dtype_parse("fp8", &t, &err), CKT_EINVAL); /* which format? */
    assert_non_null(strstr(err.msg, "e4m3, e5m2"));
    assert_int_equal(ckt_dtype_name_bytes("fp8"), 1); /* the storage-only name stays */
    assert_int_equal(ckt_dtype_name_bytes("e5m2"), 1);
    assert_string_equal(ckt_dtype_name(CKT_E4M3), "e4m3");
    assert_string_equal(ckt_dtype_name(CKT_E5M2), "e5m2");
    assert_int_equal(ckt_dtype_size(CKT_E4M3), 1);
    assert_true(ckt_dtype_is_float(CKT_E5M2));
    unsigned char b[2];
    ckt_dtype_store(CKT_E4M3, b + 1, 0.3); /* 0.3 = 1.2 * 2^-2: 1.25 * 2^-2 is the nearest */
    assert_int_equal(b[1], 0x2A);
    assert_true(ckt_dtype_load(CKT_E4M3, b + 1) == 0.3125);
    ckt_dtype_store_i64(CKT_E4M3, b, 1000);
    assert_true(ckt_dtype_load(CKT_E4M3, b) == 448);
    ckt_dtype_store_i64(CKT_E5M2, b, -17);
    assert_true(ckt_dtype_load(CKT_E5M2, b) == -16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decode_every_code),
        cmocka_unit_test(round_trip_every_code),
        cmocka_unit_test(random_values_match_the_nearest_code),
        cmocka_unit_test(ties_go_to_even),
        cmocka_unit_test(saturation_nan_and_infinity),
        cmocka_unit_test(names_sizes_and_elements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
