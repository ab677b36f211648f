/* ckt — kernel parameters and launch arguments: the kinds a kernel's parameters have (what the
 * kernel IR declares, what a launch checks against) and typed argument values. Below both the
 * kernel IR (ckt/kernel_ir.h) and the runtimes (ckt/runtime.h). */
#ifndef CKT_PARAM_H
#define CKT_PARAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CKT_PARAM_TMAP: a tensor map of Hopper's bulk tensor copies (ckt/tma.h), 128 bytes by value,
 * which the launch derives from a pointer argument and the sizes (never passed by a caller). */
typedef enum {
    CKT_PARAM_PTR,
    CKT_PARAM_I32,
    CKT_PARAM_I64,
    CKT_PARAM_F32,
    CKT_PARAM_TMAP
} ckt_param_kind;

/* A kernel's parameter, as the kernel builder declares it. Launches check against it. */
typedef struct ckt_param {
    ckt_param_kind kind;
    const char *name;
} ckt_param;

size_t ckt_param_size(ckt_param_kind k); /* 8, 4, 8, 4, 128; 0 for a bad kind */
const char *
ckt_param_kind_name(ckt_param_kind k); /* "ptr", "i32", "i64", "f32", "tmap"; "?" for a bad kind */
/* The kind a name ("ptr", "i32", "i64", "f32") stands for; 0 when it is none of them. */
int ckt_param_kind_parse(const char *name, ckt_param_kind *out);

struct ckt_buffer;

/* One launch argument of an executable (ckt/executable.h): a device buffer for a pointer
 * parameter (its size is what the launch checks accesses against), or a scalar. */
typedef struct ckt_arg {
    ckt_param_kind kind;
    union {
        struct ckt_buffer *buffer;
        int32_t i32;
        int64_t i64;
        float f32;
    } v;
} ckt_arg;

static inline ckt_arg ckt_arg_buffer(struct ckt_buffer *b)
{
    ckt_arg a = {CKT_PARAM_PTR, {.buffer = b}};
    return a;
}
static inline ckt_arg ckt_arg_i32(int32_t x)
{
    ckt_arg a = {CKT_PARAM_I32, {.i32 = x}};
    return a;
}
static inline ckt_arg ckt_arg_i64(int64_t x)
{
    ckt_arg a = {CKT_PARAM_I64, {.i64 = x}};
    return a;
}
static inline ckt_arg ckt_arg_f32(float x)
{
    ckt_arg a = {CKT_PARAM_F32, {.f32 = x}};
    return a;
}

#ifdef __cplusplus
}
#endif
#endif
