/* ckt — element types of host arrays, device buffers and kernel tensors, and the exact
 * conversions between f32 and the 16-bit and 8-bit float formats (round to nearest, ties to
 * even; NaN, infinities and subnormals handled exactly; the 8-bit formats saturate). */
#ifndef CKT_DTYPE_H
#define CKT_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "ckt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CKT_E4M3, CKT_E5M2: the OCP FP8 formats (OCP 8-bit Floating Point Specification, v1.0), one
 * byte each, what Hopper's wgmma and cvt call .e4m3 and .e5m2:
 *   e4m3 (E4M3FN): 1 sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities; the one NaN
 *     per sign is S.1111.111 (0x7F, 0xFF); max finite +-448 (S.1111.110); smallest subnormal
 *     2^-9, smallest normal 2^-6;
 *   e5m2: 1 sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like: infinities S.11111.00,
 *     NaN S.11111.{01,10,11}; max finite +-57344 (S.11110.11); subnormals from 2^-16, normals
 *     from 2^-14. */
typedef enum {
    CKT_F16,
    CKT_BF16,
    CKT_F32,
    CKT_I32,
    CKT_I8,
    CKT_U8,
    CKT_I64,
    CKT_F64,
    CKT_E4M3,
    CKT_E5M2
} ckt_dtype;
#define CKT_DTYPE_COUNT 10

/* Bytes per element; 0 for a value outside the enum. */
size_t ckt_dtype_size(ckt_dtype t);
/* "f16", "bf16", "f32", "i32", "i8", "u8", "i64", "f64", "e4m3", "e5m2"; NULL for a value outside
 * the enum. */
const char *ckt_dtype_name(ckt_dtype t);
/* The names above (also "half", "float", "double", "int", "int32", "int64", "bfloat16", "float16",
 * "float32", "float64", "int8", "uint8", "float8_e4m3fn", "float8_e5m2"). Unknown names: CKT_EINVAL
 * naming the known ones. ("fp8" alone is not a dtype: it does not say which format; it stays a
 * storage-only name of ckt_dtype_name_bytes.) */
ckt_status ckt_dtype_parse(const char *name, ckt_dtype *out, ckt_error *err);
/* Bytes per element of a type name for layout and bank analyses: every name ckt_dtype_parse
 * takes, and storage-only names (u32; fp8, either 8-bit float format); 0 for an unknown name. */
size_t ckt_dtype_name_bytes(const char *name);
int ckt_dtype_is_float(ckt_dtype t);
int ckt_dtype_valid(ckt_dtype t);

/* Exact conversions (round to nearest even; NaN stays NaN with its sign and the top payload
 * bits, quiet; overflow rounds to infinity exactly as IEEE 754 says). */
uint16_t ckt_f32_to_f16(float f);
float ckt_f16_to_f32(uint16_t h);
uint16_t ckt_f32_to_bf16(float f);
float ckt_bf16_to_f32(uint16_t h);
/* Directly from double (a single rounding, so no double-rounding error). */
uint16_t ckt_f64_to_f16(double d);
uint16_t ckt_f64_to_bf16(double d);

/* The 8-bit float formats (CKT_E4M3, CKT_E5M2 above). Decoding is exact (every code is an f32
 * value; NaN codes give a quiet NaN of the code's sign). Encoding rounds to nearest, ties to even,
 * and SATURATES like the hardware's cvt.rn.satfinite.{e4m3,e5m2}x2.f32 (NVIDIA's PTX ISA; the
 * bit-exact host model is cuda_fp8.hpp's __nv_cvt_double_to_fp8 with __NV_SATFINITE):
 *   - a finite value whose rounding would pass the largest finite value (|x| > 464 for e4m3,
 *     |x| >= 61440 for e5m2: beyond max + half an ulp, where a tie goes away from the even max
 *     for e5m2) gives +-max (0x7E / 0xFE = +-448; 0x7B / 0xFB = +-57344);
 *   - +-infinity gives +-max as well (e5m2 never produces its infinities by conversion);
 *   - NaN stays NaN with its sign: e4m3 S.1111.111; e5m2 S.11111.1x, x the input's second
 *     mantissa bit (a quiet NaN);
 *   - magnitudes at most half the smallest subnormal (2^-10, 2^-17) give a zero of the input's
 *     sign; subnormals round like normals (ties to even).
 * The f64 forms round once (no double rounding through f32). */
uint8_t ckt_f32_to_e4m3(float f);
uint8_t ckt_f32_to_e5m2(float f);
uint8_t ckt_f64_to_e4m3(double d);
uint8_t ckt_f64_to_e5m2(double d);
float ckt_e4m3_to_f32(uint8_t c);
float ckt_e5m2_to_f32(uint8_t c);
/* Largest finite value of a float dtype (448, 57344, 65504, ...); 0 for the integer types. */
double ckt_dtype_max_finite(ckt_dtype t);

/* One element at p (any alignment) as a double / into p from a double. Integer types
 * convert by truncation toward zero and saturate at their range; NaN stores 0. The 8-bit
 * float types round and saturate as ckt_f64_to_e4m3 / _e5m2 say. */
double ckt_dtype_load(ckt_dtype t, const void *p);
void ckt_dtype_store(ckt_dtype t, void *p, double v);
/* Integer element access without going through double (exact for i64). */
int64_t ckt_dtype_load_i64(ckt_dtype t, const void *p);
void ckt_dtype_store_i64(ckt_dtype t, void *p, int64_t v);

#ifdef __cplusplus
}
#endif
#endif
