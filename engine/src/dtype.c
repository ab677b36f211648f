/* Element types and exact conversions to and from the 16-bit and 8-bit float formats.
 * f32 -> f16 goes through double: float -> double is exact, so rounding the double once
 * to 16 bits is the single correctly rounded f32 -> f16 result (the same for the 8-bit ones). */
#include "ckt/dtype.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define CKT_DTYPE_INF ((float)INFINITY)

static const struct {
    const char *name;
    size_t size;
    int is_float;
} info[CKT_DTYPE_COUNT] = {
    [CKT_F16] = {"f16", 2, 1},   [CKT_BF16] = {"bf16", 2, 1}, [CKT_F32] = {"f32", 4, 1},
    [CKT_I32] = {"i32", 4, 0},   [CKT_I8] = {"i8", 1, 0},     [CKT_U8] = {"u8", 1, 0},
    [CKT_I64] = {"i64", 8, 0},   [CKT_F64] = {"f64", 8, 1},   [CKT_E4M3] = {"e4m3", 1, 1},
    [CKT_E5M2] = {"e5m2", 1, 1},
};

int ckt_dtype_valid(ckt_dtype t) { return (unsigned)t < CKT_DTYPE_COUNT; }
size_t ckt_dtype_size(ckt_dtype t) { return ckt_dtype_valid(t) ? info[t].size : 0; }
const char *ckt_dtype_name(ckt_dtype t) { return ckt_dtype_valid(t) ? info[t].name : NULL; }
int ckt_dtype_is_float(ckt_dtype t) { return ckt_dtype_valid(t) && info[t].is_float; }

ckt_status ckt_dtype_parse(const char *name, ckt_dtype *out, ckt_error *err)
{
    static const struct {
        const char *alias;
        ckt_dtype t;
    } aliases[] = {
        {"half", CKT_F16},           {"float16", CKT_F16},      {"bfloat16", CKT_BF16},
        {"float", CKT_F32},          {"float32", CKT_F32},      {"int", CKT_I32},
        {"int32", CKT_I32},          {"int8", CKT_I8},          {"uint8", CKT_U8},
        {"int64", CKT_I64},          {"double", CKT_F64},       {"float64", CKT_F64},
        {"float8_e4m3fn", CKT_E4M3}, {"float8_e5m2", CKT_E5M2},
    };
    if (!out) return ckt_fail(err, CKT_EINVAL, "dtype: out is NULL");
    if (!name) return ckt_fail(err, CKT_EINVAL, "dtype: name is NULL");
    for (int t = 0; t < CKT_DTYPE_COUNT; t++)
        if (!strcmp(name, info[t].name)) {
            *out = (ckt_dtype)t;
            return CKT_OK;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
        if (!strcmp(name, aliases[i].alias)) {
            *out = aliases[i].t;
            return CKT_OK;
        }
    return ckt_fail(
        err, CKT_EINVAL,
        "dtype: unknown element type '%.64s' (f16, bf16, f32, i32, i8, u8, i64, f64, e4m3, "
        "e5m2)",
        name);
}

size_t ckt_dtype_name_bytes(const char *name)
{
    static const struct {
        const char *name;
        size_t bytes;
    } storage_only[] = {{"u32", 4}, {"fp8", 1}};
    ckt_dtype t;
    if (ckt_dtype_parse(name, &t, NULL) == CKT_OK) return ckt_dtype_size(t);
    for (size_t i = 0; name && i < sizeof storage_only / sizeof *storage_only; i++)
        if (!strcmp(name, storage_only[i].name)) return storage_only[i].bytes;
    return 0;
}

/* Round a double to a binary float with `mbits` stored mantissa bits and `ebits` exponent
 * bits (f16: 10/5, bf16: 7/8), to nearest, ties to even. Returns the 16-bit pattern. */
static uint16_t round_to_small(double d, int mbits, int ebits)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    const uint16_t sign = (uint16_t)((u >> 63) << 15);
    const int dexp = (int)((u >> 52) & 0x7ff);
    const uint64_t dmant = u & ((UINT64_C(1) << 52) - 1);
    const int bias = (1 << (ebits - 1)) - 1;
    const uint16_t inf = (uint16_t)(((1u << ebits) - 1) << mbits);
    if (dexp == 0x7ff) {
        if (!dmant) return sign | inf;
        /* NaN: keep the top payload bits, force quiet */
        return (uint16_t)(sign | inf | (1u << (mbits - 1)) | (uint16_t)(dmant >> (52 - mbits)));
    }
    if (dexp == 0) return sign; /* |d| < 2^-1022: far below half the smallest subnormal */
    const int e = dexp - 1023;
    if (e > bias) return sign | inf;
    const uint64_t m = (UINT64_C(1) << 52) | dmant; /* value = m * 2^(e-52) */
    /* the result counts units of 2^(e-mbits) for normals, 2^(1-bias-mbits) for subnormals */
    int shift = e >= 1 - bias ? 52 - mbits : 52 - mbits + (1 - bias - e);
    if (shift > 54) return sign; /* below half the smallest subnormal */
    uint64_t q = m >> shift, rem = m & ((UINT64_C(1) << shift) - 1),
             half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    if (e < 1 - bias)
        return (uint16_t)(sign | q); /* subnormal; q == 2^mbits is the smallest normal */
    int be = e + bias;
    if (q == UINT64_C(1) << (mbits + 1)) {
        q >>= 1;
        be++;
    } /* rounding carried into the exponent */
    if (be >= (1 << ebits) - 1) return sign | inf;
    return (uint16_t)(sign | ((uint16_t)be << mbits) | (uint16_t)(q & ((1u << mbits) - 1)));
}

uint16_t ckt_f64_to_f16(double d) { return round_to_small(d, 10, 5); }
uint16_t ckt_f64_to_bf16(double d) { return round_to_small(d, 7, 8); }
uint16_t ckt_f32_to_f16(float f) { return round_to_small((double)f, 10, 5); }
uint16_t ckt_f32_to_bf16(float f) { return round_to_small((double)f, 7, 8); }

float ckt_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    if (exp == 0x1f)
        bits = sign | 0x7f800000u | (mant << 13);
    else if (exp != 0)
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    else {
        float v = (float)mant * 0x1p-24f; /* subnormal: exact in f32 */
        return sign ? -v : v;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

float ckt_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* ---- the 8-bit float formats (ckt/dtype.h says what saturating means) */

typedef struct fp8_format {
    int mbits, bias;
    uint8_t max_code; /* the largest finite magnitude's code */
    double max;
    bool e4m3;
} fp8_format;
static const fp8_format E4M3 = {3, 7, 0x7E, 448.0, true}, E5M2 = {2, 15, 0x7B, 57344.0, false};

static uint8_t f64_to_fp8(double d, const fp8_format *f)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    const uint8_t sign = (uint8_t)((u >> 63) << 7);
    if (isnan(d)) /* e5m2: quiet, keeping the second mantissa bit (cuda_fp8.hpp's host model) */
        return (uint8_t)(sign | (f->e4m3 ? 0x7F : 0x7E | ((u >> 50) & 1)));
    const double a = fabs(d);
    if (isinf(a) || a > 2 * f->max) return (uint8_t)(sign | f->max_code);
    if (a == 0) return sign;
    /* the quantum: 2^(e - mbits) for a normal of exponent e, 2^(1 - bias - mbits) below */
    int e;
    (void)frexp(a, &e); /* a = m * 2^e, m in [0.5, 1): the exponent is e - 1 */
    const int emin = 1 - f->bias, q = (e - 1 >= emin ? e - 1 : emin) - f->mbits;
    /* a / 2^q < 2^(mbits + 1): exact; rint rounds to nearest even (the default mode) */
    const double units = rint(ldexp(a, -q)), v = ldexp(units, q);
    if (v > f->max) return (uint8_t)(sign | f->max_code);
    if (v < ldexp(1.0, emin)) return (uint8_t)(sign | (uint8_t)ldexp(v, f->mbits - emin));
    (void)frexp(v, &e); /* the rounding may have carried into the next binade */
    const int mant = (int)ldexp(v, f->mbits - (e - 1)) - (1 << f->mbits);
    return (uint8_t)(sign | (uint8_t)((e - 1 + f->bias) << f->mbits) | (uint8_t)mant);
}

static float fp8_to_f32(uint8_t c, const fp8_format *f)
{
    const int ebits = 7 - f->mbits, exp = (c >> f->mbits) & ((1 << ebits) - 1),
              mant = c & ((1 << f->mbits) - 1);
    const float sign = (c & 0x80) ? -1.0f : 1.0f;
    if (exp == (1 << ebits) - 1) {
        if (f->e4m3 && mant != (1 << f->mbits) - 1) /* e4m3's top binade is finite but for NaN */
            return sign * ldexpf((float)((1 << f->mbits) | mant), exp - f->bias - f->mbits);
        if (!f->e4m3 && mant == 0) return sign * CKT_DTYPE_INF;
        return copysignf(NAN, sign);
    }
    if (exp == 0) return sign * ldexpf((float)mant, 1 - f->bias - f->mbits);
    return sign * ldexpf((float)((1 << f->mbits) | mant), exp - f->bias - f->mbits);
}

uint8_t ckt_f64_to_e4m3(double d) { return f64_to_fp8(d, &E4M3); }
uint8_t ckt_f64_to_e5m2(double d) { return f64_to_fp8(d, &E5M2); }
uint8_t ckt_f32_to_e4m3(float f) { return f64_to_fp8((double)f, &E4M3); }
uint8_t ckt_f32_to_e5m2(float f) { return f64_to_fp8((double)f, &E5M2); }
float ckt_e4m3_to_f32(uint8_t c) { return fp8_to_f32(c, &E4M3); }
float ckt_e5m2_to_f32(uint8_t c) { return fp8_to_f32(c, &E5M2); }

double ckt_dtype_max_finite(ckt_dtype t)
{
    switch (t) {
    case CKT_F16: return 65504.0;
    case CKT_BF16: return 0x1.FEp127;
    case CKT_F32: return 0x1.FFFFFEp127;
    case CKT_F64: return 0x1.FFFFFFFFFFFFFp1023;
    case CKT_E4M3: return E4M3.max;
    case CKT_E5M2: return E5M2.max;
    default: return 0;
    }
}

static int64_t saturate(double v, double lo, double hi)
{
    if (isnan(v)) return 0;
    if (v <= lo) return (int64_t)lo;
    if (v >= hi) return (int64_t)hi;
    return (int64_t)v; /* truncation toward zero */
}

/* One element's bytes, read or written through the member of its dtype. */
typedef union element {
    uint16_t u16;
    float f;
    int32_t i32;
    int8_t i8;
    uint8_t u8;
    int64_t i64;
    double f64;
} element;

double ckt_dtype_load(ckt_dtype t, const void *p)
{
    element v;
    memcpy(&v, p, ckt_dtype_size(t));
    switch (t) {
    case CKT_F16: return ckt_f16_to_f32(v.u16);
    case CKT_BF16: return ckt_bf16_to_f32(v.u16);
    case CKT_F32: return v.f;
    case CKT_I32: return v.i32;
    case CKT_I8: return v.i8;
    case CKT_U8: return v.u8;
    case CKT_I64: return (double)v.i64;
    case CKT_F64: return v.f64;
    case CKT_E4M3: return ckt_e4m3_to_f32(v.u8);
    case CKT_E5M2: return ckt_e5m2_to_f32(v.u8);
    }
    return 0;
}

void ckt_dtype_store(ckt_dtype t, void *p, double d)
{
    element v;
    switch (t) {
    case CKT_F16: v.u16 = ckt_f64_to_f16(d); break;
    case CKT_BF16: v.u16 = ckt_f64_to_bf16(d); break;
    case CKT_F32: v.f = (float)d; break;
    case CKT_I32: v.i32 = (int32_t)saturate(d, INT32_MIN, INT32_MAX); break;
    case CKT_I8: v.i8 = (int8_t)saturate(d, INT8_MIN, INT8_MAX); break;
    case CKT_U8: v.u8 = (uint8_t)saturate(d, 0, UINT8_MAX); break;
    /* 2^63 is the first double past INT64_MAX */
    case CKT_I64:
        v.i64 = isnan(d) ? 0 : d >= 0x1p63 ? INT64_MAX : d <= -0x1p63 ? INT64_MIN : (int64_t)d;
        break;
    case CKT_F64: v.f64 = d; break;
    case CKT_E4M3: v.u8 = ckt_f64_to_e4m3(d); break;
    case CKT_E5M2: v.u8 = ckt_f64_to_e5m2(d); break;
    default: return;
    }
    memcpy(p, &v, ckt_dtype_size(t));
}

int64_t ckt_dtype_load_i64(ckt_dtype t, const void *p)
{
    if (t == CKT_I64) {
        int64_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    double d = ckt_dtype_load(t, p);
    return isnan(d) ? 0 : d >= 0x1p63 ? INT64_MAX : d <= -0x1p63 ? INT64_MIN : (int64_t)d;
}

void ckt_dtype_store_i64(ckt_dtype t, void *p, int64_t v)
{
    if (t == CKT_I64) {
        memcpy(p, &v, sizeof v);
        return;
    }
    if (t == CKT_I32) {
        int32_t x = v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v;
        memcpy(p, &x, 4);
        return;
    }
    if (t == CKT_I8) {
        int8_t x = v < INT8_MIN ? INT8_MIN : v > INT8_MAX ? INT8_MAX : (int8_t)v;
        memcpy(p, &x, 1);
        return;
    }
    if (t == CKT_U8) {
        uint8_t x = v < 0 ? 0 : v > UINT8_MAX ? UINT8_MAX : (uint8_t)v;
        memcpy(p, &x, 1);
        return;
    }
    ckt_dtype_store(t, p, (double)v);
}
