/* ckt — element types of host arrays, device buffers and kernel tensors, and the exact
 * conversions between f32 and the 16-bit float formats (round to nearest, ties to even;
 * NaN, infinities and subnormals handled exactly). */
#ifndef CKT_DTYPE_H
#define CKT_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "ckt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CKT_F16, CKT_BF16, CKT_F32, CKT_I32, CKT_I8, CKT_U8, CKT_I64, CKT_F64 } ckt_dtype;
#define CKT_DTYPE_COUNT 8

/* Bytes per element; 0 for a value outside the enum. */
size_t ckt_dtype_size(ckt_dtype t);
/* "f16", "bf16", "f32", "i32", "i8", "u8", "i64", "f64"; NULL for a value outside the enum. */
const char *ckt_dtype_name(ckt_dtype t);
/* The names above (also "half", "float", "double", "int", "int32", "int64", "bfloat16", "float16",
 * "float32", "float64", "int8", "uint8"). Unknown names: CKT_EINVAL naming the known ones. */
ckt_status ckt_dtype_parse(const char *name, ckt_dtype *out, ckt_error *err);
/* Bytes per element of a type name for layout and bank analyses: every name ckt_dtype_parse
 * takes, and element types kernels do not compute in yet (u32, fp8); 0 for an unknown name. */
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

/* One element at p (any alignment) as a double / into p from a double. Integer types
 * convert by truncation toward zero and saturate at their range; NaN stores 0. */
double ckt_dtype_load(ckt_dtype t, const void *p);
void ckt_dtype_store(ckt_dtype t, void *p, double v);
/* Integer element access without going through double (exact for i64). */
int64_t ckt_dtype_load_i64(ckt_dtype t, const void *p);
void ckt_dtype_store_i64(ckt_dtype t, void *p, int64_t v);

#ifdef __cplusplus
}
#endif
#endif
