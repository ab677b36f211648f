/* ckt — symbolic expressions of the kernel builder: index arithmetic over thread ids, block
 * ids, loop variables, window origins and runtime parameters, and the value expressions of
 * elementwise epilogues. Constructors fold as they build: constants, neutral elements, and
 * division / remainder by a constant of a sum whose parts are known to be divisible or small
 * (range analysis), so a static layout leaves no runtime division behind.
 *
 * Nodes live in a pool owned by the caller (explicitly created and destroyed). Ids are
 * indices into the pool; CKT_EXPR_NONE marks "no expression". */
#ifndef CKT_EXPR_H
#define CKT_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ckt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t ckt_expr_id;
#define CKT_EXPR_NONE ((ckt_expr_id)-1)
#define CKT_EXPR_MAX_NODES (1 << 20)

typedef enum {
    CKT_E_INT,   /* integer constant (i) */
    CKT_E_FLOAT, /* f32 constant (f) */
    CKT_E_PARAM, /* runtime scalar parameter a */
    CKT_E_TID,   /* thread id in the block (x) */
    CKT_E_BID,   /* block id along axis a */
    CKT_E_NBLK,  /* grid extent along axis a */
    CKT_E_VAR,   /* a block-uniform variable a (loop counter, window origin) */
    CKT_E_INPUT, /* elementwise input slot a (a value of a register tensor) */
    CKT_E_ADD,
    CKT_E_SUB,
    CKT_E_MUL,
    CKT_E_DIV,
    CKT_E_MOD,
    CKT_E_MIN,
    CKT_E_MAX,
    CKT_E_AND,
    CKT_E_OR,
    CKT_E_XOR,
    CKT_E_SHL,
    CKT_E_SHR,
    CKT_E_LT,
    CKT_E_LE,
    CKT_E_EQ,
    CKT_E_NE,
    CKT_E_LAND,
    CKT_E_LOR,
    CKT_E_NOT,
    CKT_E_NEG,
    CKT_E_SELECT, /* a ? b : c */
    CKT_E_EXP,
    CKT_E_LOG,
    CKT_E_SQRT,
    CKT_E_ABS,
    CKT_E_ROUND, /* round an f32 value through dtype i (f16/bf16: exact RNE) */
    CKT_E_TOFLOAT,
    CKT_E_TOINT, /* TOINT: toward zero, NaN -> 0, saturating at the int64 bounds */
    CKT_E_FLOOR, /* floor of an f32 value (Lua's // on floats is floor(a / b)) */
    CKT_E_LOAD,  /* element a (clamped into 0..b-1) of the integer array c names (ckt_expr_load) */
    CKT_E_EXP2   /* 2^a (f32): the hardware's base-2 exponential, where softmax folds log2(e) */
} ckt_expr_op;
/* Integer / and % mean Lua's // and %: the quotient rounds toward minus infinity and the
 * remainder takes the divisor's sign. On the device a zero divisor gives 0 (Lua raises). */

/* The type of a node's value: an index (int64 on the device), a 32-bit float, a bool. */
typedef enum { CKT_T_INDEX, CKT_T_F32, CKT_T_BOOL } ckt_expr_type;

typedef struct ckt_expr_node {
    uint8_t op, type;
    ckt_expr_id a, b, c;
    int64_t i;
    float f;
} ckt_expr_node;

/* What the analyses know about a leaf: its value range and a known divisor. */
typedef struct ckt_expr_leaf_info {
    int64_t lo, hi;  /* inclusive range */
    int64_t divisor; /* every value is a multiple of it (>= 1) */
    bool uniform;    /* the same for all threads of a block */
    char name[32];   /* how the emitter spells it */
    /* a variable assigned once, before every read (a kernel's let): the expression it holds, which
     * the analyses may read through; CKT_EXPR_NONE otherwise */
    int32_t value;
} ckt_expr_leaf_info;

#define CKT_EXPR_MAX_LEAVES 2048

typedef struct ckt_expr_pool {
    ckt_expr_node *nodes;
    int32_t n, cap;
    int32_t *hash; /* hash-consing: structurally equal nodes share one id */
    int32_t hcap;
    /* leaf facts, indexed by node op: params, block-uniform variables, inputs */
    ckt_expr_leaf_info params[CKT_EXPR_MAX_LEAVES], vars[CKT_EXPR_MAX_LEAVES];
    int nparams, nvars;
    int64_t block_threads; /* range of the thread id: [0, block_threads) */
    ckt_status failed;     /* sticky: the first failure (capacity, overflow) */
    ckt_error err;
} ckt_expr_pool;

ckt_status ckt_expr_pool_init(ckt_expr_pool *p, int64_t block_threads, ckt_error *err);
void ckt_expr_pool_free(ckt_expr_pool *p);
/* dst (uninitialized) becomes an independent copy of src: the same ids mean the same nodes. */
ckt_status ckt_expr_pool_copy(ckt_expr_pool *dst, const ckt_expr_pool *src, ckt_error *err);

/* Leaves. Failures are sticky in the pool (checked with ckt_expr_pool_status): a builder can
 * chain constructors and check once. */
ckt_expr_id ckt_expr_int(ckt_expr_pool *p, int64_t v);
ckt_expr_id ckt_expr_float(ckt_expr_pool *p, float v);
ckt_expr_id ckt_expr_tid(ckt_expr_pool *p);
ckt_expr_id ckt_expr_bid(ckt_expr_pool *p, int axis);
ckt_expr_id ckt_expr_nblocks(ckt_expr_pool *p, int axis);
ckt_expr_id ckt_expr_input(ckt_expr_pool *p, int slot);     /* an f32 value */
ckt_expr_id ckt_expr_input_int(ckt_expr_pool *p, int slot); /* an integer value (int64) */
/* A runtime parameter / a uniform variable with what is known about it; returns its leaf. */
ckt_expr_id ckt_expr_param(ckt_expr_pool *p, const char *name, int64_t lo, int64_t hi,
                           int64_t divisor, bool is_float);
ckt_expr_id ckt_expr_var(ckt_expr_pool *p, const char *name, int64_t lo, int64_t hi,
                         int64_t divisor);
/* A variable that holds `value` wherever it is read (assigned once, before any read): its facts
 * are value's, and the launch-time analyses evaluate value in its place. */
ckt_expr_id ckt_expr_let(ckt_expr_pool *p, const char *name, ckt_expr_id value);
/* Element `index` of a rank-1 integer array in global memory, read on the device: `array` names
 * the pointer as the emitter spells it (a leaf made for it, never assigned), `count` (an
 * expression of the parameters) is its element count; the index is clamped into 0..count-1 and
 * a count below 1 reads 0. Its range is [lo, hi] (the element type's); block-uniform where the
 * index is; it cannot be evaluated on the host (the launch analyses treat it as unknown). */
ckt_expr_id ckt_expr_load(ckt_expr_pool *p, const char *array, int64_t lo, int64_t hi,
                          ckt_expr_id index, ckt_expr_id count);
/* Update a variable's facts once all its assignments are known (window origins moved later). */
void ckt_expr_var_set(ckt_expr_pool *p, ckt_expr_id var, int64_t lo, int64_t hi, int64_t divisor);

ckt_expr_id ckt_expr_binary(ckt_expr_pool *p, ckt_expr_op op, ckt_expr_id a, ckt_expr_id b);
ckt_expr_id ckt_expr_unary(ckt_expr_pool *p, ckt_expr_op op, ckt_expr_id a);
ckt_expr_id ckt_expr_select(ckt_expr_pool *p, ckt_expr_id c, ckt_expr_id a, ckt_expr_id b);
ckt_expr_id ckt_expr_round(ckt_expr_pool *p, ckt_expr_id a, int dtype /* ckt_dtype */);
static inline ckt_expr_id ckt_expr_add(ckt_expr_pool *p, ckt_expr_id a, ckt_expr_id b)
{
    return ckt_expr_binary(p, CKT_E_ADD, a, b);
}
static inline ckt_expr_id ckt_expr_mul(ckt_expr_pool *p, ckt_expr_id a, ckt_expr_id b)
{
    return ckt_expr_binary(p, CKT_E_MUL, a, b);
}
static inline ckt_expr_id ckt_expr_addc(ckt_expr_pool *p, ckt_expr_id a, int64_t c)
{
    return ckt_expr_add(p, a, ckt_expr_int(p, c));
}
static inline ckt_expr_id ckt_expr_mulc(ckt_expr_pool *p, ckt_expr_id a, int64_t c)
{
    return ckt_expr_mul(p, a, ckt_expr_int(p, c));
}

ckt_status ckt_expr_pool_status(const ckt_expr_pool *p, ckt_error *err);
const ckt_expr_node *ckt_expr_get(const ckt_expr_pool *p, ckt_expr_id e);
bool ckt_expr_is_const(const ckt_expr_pool *p, ckt_expr_id e, int64_t *v);
ckt_expr_type ckt_expr_type_of(const ckt_expr_pool *p, ckt_expr_id e);

/* Analyses. Ranges saturate at INT64 bounds ("unknown"). */
void ckt_expr_range(const ckt_expr_pool *p, ckt_expr_id e, int64_t *lo, int64_t *hi);
int64_t ckt_expr_divisor(const ckt_expr_pool *p,
                         ckt_expr_id e); /* a known divisor (>= 1; capped at 2^30) */
bool ckt_expr_uniform(const ckt_expr_pool *p, ckt_expr_id e); /* no thread id inside */
/* the same on every thread of a group of `group` consecutive threads (a warp): the thread id
 * appears only divided by a multiple of `group` (false for group < 1; true for no expression) */
bool ckt_expr_group_uniform(const ckt_expr_pool *p, ckt_expr_id e, int64_t group);
bool ckt_expr_has_input(const ckt_expr_pool *p, ckt_expr_id e);

/* Evaluate with given leaf values (tests, the reference interpreter). */
typedef struct ckt_expr_env {
    int64_t tid, bid[3], nblk[3];
    const int64_t *params, *vars;
    const double *inputs;
} ckt_expr_env;
ckt_status ckt_expr_eval_int(const ckt_expr_pool *p, ckt_expr_id e, const ckt_expr_env *env,
                             int64_t *out, ckt_error *err);

/* Print as a C expression (the emitter's spelling). Leaves: params and vars by name, the thread
 * id as `tid`, block ids as `bid_x`..., inputs through `input_fmt` ("x%d" by default, may be NULL).
 * Returns the length that would be written (snprintf-like). */
int ckt_expr_print(const ckt_expr_pool *p, ckt_expr_id e, char *buf, size_t cap,
                   const char *const *input_names);

#ifdef __cplusplus
}
#endif
#endif
