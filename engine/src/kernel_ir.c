/* The kernel builder's IR (see ckt/kernel_ir.h): validation at every builder call. */
#include "ckt/kernel_ir.h"
#include "kernel_names.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "ckt/mma.h"
#include "ckt/tma.h"
#include "ckt/wgmma.h"

#define MAX_CONSTRAINTS 64
#define MAX_NEST 32

struct ckt_kernel {
    char name[64];
    int64_t block;
    ckt_expr_pool ex;
    ckt_kparam params[CKT_K_MAX_PARAMS];
    int nparams;
    ckt_ktensor *tensors;
    int ntensors, cap_tensors;
    ckt_kwindow *windows;
    int nwindows, cap_windows;
    ckt_dist *dists;
    int ndists, cap_dists;
    ckt_kop *ops;
    int nops, cap_ops;
    int nest[MAX_NEST]; /* open scopes: op index of the LOOP/IF */
    int depth, divergent;
    int64_t lds_bytes, scratch;
    ckt_expr_id cexpr[MAX_CONSTRAINTS];
    char cnote[MAX_CONSTRAINTS][160];
    int nconstraints;
    int nloops, nlets;
    bool assignable[CKT_EXPR_MAX_LEAVES]; /* vars made by ckt_kernel_var_facts, by leaf */
    int line;
    bool finished;
    ckt_kmbar mbars[CKT_K_MAX_MBARS];
    int nmbars;
    ckt_ktma tmas[CKT_K_MAX_TMAS];
    int ntmas;
    bool producer, in_producer; /* warp specialization: a producer region exists / is open */
    bool producer_wg;           /* the producer is a warpgroup giving registers to the block */
    int64_t cluster;            /* blocks a cluster (1: none) */
};

const char *ckt_memory_name(ckt_memory m)
{
    switch (m) {
    case CKT_MEM_GLOBAL: return "global";
    case CKT_MEM_LDS: return "lds";
    case CKT_MEM_REG: return "register";
    }
    return "?";
}

ckt_status ckt_memory_parse(const char *s, ckt_memory *out, ckt_error *err)
{
    if (s && !strcmp(s, "global"))
        *out = CKT_MEM_GLOBAL;
    else if (s && (!strcmp(s, "lds") || !strcmp(s, "shared")))
        *out = CKT_MEM_LDS;
    else if (s && (!strcmp(s, "register") || !strcmp(s, "vgpr") || !strcmp(s, "reg")))
        *out = CKT_MEM_REG;
    else
        return ckt_fail(err, CKT_EINVAL, "tensor: unknown memory '%s' (global, lds, register)",
                        s ? s : "(null)");
    return CKT_OK;
}

ckt_status ckt_reduce_parse(const char *s, ckt_reduce_op *out, ckt_error *err)
{
    if (s && !strcmp(s, "sum"))
        *out = CKT_REDUCE_SUM;
    else if (s && !strcmp(s, "max"))
        *out = CKT_REDUCE_MAX;
    else if (s && !strcmp(s, "min"))
        *out = CKT_REDUCE_MIN;
    else if (s && !strcmp(s, "softmax"))
        *out = CKT_REDUCE_SOFTMAX;
    else
        return ckt_fail(err, CKT_EINVAL, "reduce: unknown operation '%s' (sum, max, min, softmax)",
                        s ? s : "(null)");
    return CKT_OK;
}

static bool is_ident(const char *s)
{
    if (!s || !*s || strlen(s) > 30 || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_') return false;
    return strncmp(s, "ckt_", 4) != 0 && strncmp(s, "__", 2) != 0;
}

ckt_status ckt_kernel_create(const char *name, int64_t block, ckt_kernel **out, ckt_error *err)
{
    if (!out) return ckt_fail(err, CKT_EINVAL, "kernel: NULL output");
    if (!is_ident(name))
        return ckt_fail(err, CKT_EINVAL,
                        "kernel: name '%s' must be a C identifier of at most 30 characters (not "
                        "starting with ckt_ or __)",
                        name ? name : "(null)");
    if (ckt_kernel_name_reserved(name))
        return ckt_fail(err, CKT_EINVAL,
                        "kernel: name '%s' is a keyword, macro, function or built-in of the "
                        "generated source's dialects (C, CUDA, HIP)",
                        name);
    if (block < 1 || block > CKT_K_MAX_BLOCK)
        return ckt_fail(err, CKT_EINVAL, "kernel: block %lld must be in 1..%d threads",
                        (long long)block, CKT_K_MAX_BLOCK);
    ckt_kernel *k = calloc(1, sizeof *k);
    if (!k) return ckt_fail(err, CKT_ENOMEM, "kernel: out of memory");
    snprintf(k->name, sizeof k->name, "%s", name);
    k->block = block;
    k->scratch = -1;
    k->cluster = 1;
    ckt_status s = ckt_expr_pool_init(&k->ex, block, err);
    if (s)
        free(k);
    else
        *out = k;
    return s;
}

void ckt_kernel_destroy(ckt_kernel *k)
{
    if (!k) return;
    ckt_expr_pool_free(&k->ex);
    free(k->tensors);
    free(k->windows);
    free(k->dists);
    free(k->ops);
    free(k);
}

const char *ckt_kernel_name(const ckt_kernel *k) { return k ? k->name : NULL; }
int64_t ckt_kernel_block(const ckt_kernel *k) { return k ? k->block : 0; }
ckt_expr_pool *ckt_kernel_exprs(ckt_kernel *k) { return k ? &k->ex : NULL; }
const ckt_expr_pool *ckt_kernel_exprs_const(const ckt_kernel *k) { return k ? &k->ex : NULL; }
bool ckt_kernel_is_finished(const ckt_kernel *k) { return k && k->finished; }
void ckt_kernel_set_line(ckt_kernel *k, int line)
{
    if (k) k->line = line;
}
int ckt_kernel_nparams(const ckt_kernel *k) { return k ? k->nparams : 0; }
const ckt_kparam *ckt_kernel_param(const ckt_kernel *k, int i)
{
    return k && i >= 0 && i < k->nparams ? &k->params[i] : NULL;
}
const ckt_dist *ckt_kernel_dist(const ckt_kernel *k, int i)
{
    return k && i >= 0 && i < k->ndists ? &k->dists[i] : NULL;
}
const ckt_ktensor *ckt_kernel_tensor(const ckt_kernel *k, int i)
{
    return k && i >= 0 && i < k->ntensors ? &k->tensors[i] : NULL;
}
const ckt_kwindow *ckt_kernel_window(const ckt_kernel *k, int i)
{
    return k && i >= 0 && i < k->nwindows ? &k->windows[i] : NULL;
}
int ckt_kernel_nops(const ckt_kernel *k) { return k ? k->nops : 0; }
const ckt_kop *ckt_kernel_op(const ckt_kernel *k, int i)
{
    return k && i >= 0 && i < k->nops ? &k->ops[i] : NULL;
}
int ckt_kernel_ntensors(const ckt_kernel *k) { return k ? k->ntensors : 0; }
int ckt_kernel_nwindows(const ckt_kernel *k) { return k ? k->nwindows : 0; }
int64_t ckt_kernel_lds_bytes(const ckt_kernel *k) { return k ? k->lds_bytes : 0; }
size_t ckt_kernel_footprint(const ckt_kernel *k)
{
    if (!k) return 0;
    return sizeof *k + (size_t)k->cap_tensors * sizeof(ckt_ktensor) +
           (size_t)k->cap_windows * sizeof(ckt_kwindow) + (size_t)k->cap_dists * sizeof(ckt_dist) +
           (size_t)k->cap_ops * sizeof(ckt_kop) + (size_t)k->ex.cap * sizeof(ckt_expr_node) +
           (size_t)k->ex.hcap * sizeof(int32_t);
}

static ckt_status grow(void **arr, int *cap, int n, size_t elem, int limit, const char *what,
                       ckt_error *err)
{
    if (n < *cap) return CKT_OK;
    if (n >= limit) return ckt_fail(err, CKT_ECAPACITY, "kernel: more than %d %s", limit, what);
    int nc = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, elem * (size_t)nc);
    if (!p) return ckt_fail(err, CKT_ENOMEM, "kernel: out of memory");
    *arr = p;
    *cap = nc;
    return CKT_OK;
}

static ckt_status expr_ok(ckt_kernel *k, ckt_error *err)
{
    return ckt_expr_pool_status(&k->ex, err);
}

static ckt_status check_open(const ckt_kernel *k, const char *fn, ckt_error *err)
{
    if (!k) return ckt_fail(err, CKT_EINVAL, "%s: NULL kernel", fn);
    if (k->finished)
        return ckt_fail(err, CKT_EINVAL, "%s: the kernel is already finished (built)", fn);
    return CKT_OK;
}

/* what the producer warp may run: no thread of the block's distributions is one of its threads */
static bool producer_op(ckt_kop_kind kind)
{
    switch (kind) {
    case CKT_OP_SET:
    case CKT_OP_ADD:
    case CKT_OP_LOOP:
    case CKT_OP_IF:
    case CKT_OP_END:
    case CKT_OP_TMA_COPY:
    case CKT_OP_MBAR_WAIT: return true;
    default: return false;
    }
}

static ckt_status push_op(ckt_kernel *k, const ckt_kop *op, ckt_error *err)
{
    if (k->in_producer && !producer_op(op->kind))
        return ckt_fail(err, CKT_EINVAL,
                        "producer: operation %d is not one the producer warp runs (loops, "
                        "branches, bulk tensor copies and mbarrier waits)",
                        k->nops);
    ckt_status s =
        grow((void **)&k->ops, &k->cap_ops, k->nops, sizeof(ckt_kop), 1 << 16, "operations", err);
    if (s) return s;
    k->ops[k->nops] = *op;
    k->ops[k->nops].line = k->line;
    k->nops++;
    return CKT_OK;
}

static ckt_kop new_op(ckt_kop_kind kind)
{
    ckt_kop op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    op.w = op.r = op.r2 = -1;
    op.a = op.b = op.zero = CKT_EXPR_NONE;
    op.vector_dim = -1;
    op.dist = -1;
    return op;
}

/* ---------------------------------------------------------------- parameters */

static ckt_status check_param_name(const ckt_kernel *k, const char *name, ckt_error *err)
{
    if (!is_ident(name))
        return ckt_fail(err, CKT_EINVAL,
                        "param: name '%s' must be a C identifier of at most 30 characters",
                        name ? name : "(null)");
    static const char *const reserved[] = {
        "tid",    "bid_x",    "bid_y",  "bid_z",    "nblk_x", "nblk_y",   "nblk_z",  "args",
        "launch", "int",      "float",  "char",     "void",   "for",      "if",      "else",
        "while",  "return",   "const",  "long",     "short",  "unsigned", "signed",  "double",
        "struct", "union",    "static", "extern",   "auto",   "register", "do",      "switch",
        "case",   "default",  "break",  "continue", "goto",   "sizeof",   "typedef", "volatile",
        "inline", "restrict", NULL};
    for (int i = 0; reserved[i]; i++)
        if (!strcmp(name, reserved[i]))
            return ckt_fail(err, CKT_EINVAL, "param: name '%s' is reserved", name);
    if (ckt_kernel_name_reserved(name) || !strcmp(name, "v"))
        return ckt_fail(err, CKT_EINVAL,
                        "param: name '%s' is a keyword, macro, function or built-in of the "
                        "generated source's dialects (C, CUDA, HIP); choose another",
                        name);
    if ((name[0] == 'r' || name[0] == 'w' || name[0] == 'k' || name[0] == 'v' || name[0] == 'i' ||
         name[0] == 'x') &&
        isdigit((unsigned char)name[1]))
        return ckt_fail(
            err, CKT_EINVAL,
            "param: name '%s' collides with the emitter's temporaries (r0, w1_0, k0, i0, v0, x0)",
            name);
    for (int i = 0; i < k->nparams; i++)
        if (!strcmp(k->params[i].name, name))
            return ckt_fail(err, CKT_EINVAL, "param: '%s' is declared twice", name);
    if (k->nparams == CKT_K_MAX_PARAMS)
        return ckt_fail(err, CKT_ECAPACITY, "param: more than %d parameters", CKT_K_MAX_PARAMS);
    return CKT_OK;
}

/* the next parameter slot, cleared and named; param_commit makes it count */
static ckt_kparam *param_slot(ckt_kernel *k, const char *name, ckt_param_kind kind)
{
    ckt_kparam *p = &k->params[k->nparams];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->kind = kind;
    return p;
}

static ckt_status param_commit(ckt_kernel *k, int *index)
{
    if (index) *index = k->nparams;
    k->nparams++;
    return CKT_OK;
}

ckt_status ckt_kernel_param_ptr(ckt_kernel *k, const char *name, ckt_dtype dtype, bool is_const,
                                int64_t align, int *index, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "param", err)) || (s = check_param_name(k, name, err))) return s;
    if (!ckt_dtype_valid(dtype))
        return ckt_fail(err, CKT_EINVAL, "param '%s': unknown dtype", name);
    if (align == 0) align = 16;
    if (align < 1 || (align & (align - 1)) || align > 256)
        return ckt_fail(err, CKT_EINVAL, "param '%s': align %lld must be a power of two in 1..256",
                        name, (long long)align);
    if (align % (int64_t)ckt_dtype_size(dtype))
        return ckt_fail(err, CKT_EINVAL, "param '%s': align %lld is smaller than the %s element",
                        name, (long long)align, ckt_dtype_name(dtype));
    ckt_kparam *p = param_slot(k, name, CKT_PARAM_PTR);
    p->dtype = dtype;
    p->align = align;
    p->is_const = is_const;
    p->expr = CKT_EXPR_NONE;
    return param_commit(k, index);
}

ckt_status ckt_kernel_param_scalar(ckt_kernel *k, const char *name, ckt_param_kind kind,
                                   bool specialized, int64_t ivalue, double fvalue, int64_t divisor,
                                   int *index, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "param", err)) || (s = check_param_name(k, name, err))) return s;
    if (kind != CKT_PARAM_I32 && kind != CKT_PARAM_I64 && kind != CKT_PARAM_F32)
        return ckt_fail(err, CKT_EINVAL, "param '%s': a scalar is i32, i64 or f32", name);
    if (divisor == 0) divisor = 1;
    if (divisor < 1)
        return ckt_fail(err, CKT_EINVAL, "param '%s': multiple_of %lld must be >= 1", name,
                        (long long)divisor);
    if (kind == CKT_PARAM_I32 && specialized && (ivalue < INT32_MIN || ivalue > INT32_MAX))
        return ckt_fail(err, CKT_EINVAL, "param '%s': value %lld does not fit i32", name,
                        (long long)ivalue);
    if (specialized && kind != CKT_PARAM_F32 && ivalue % divisor)
        return ckt_fail(err, CKT_EINVAL, "param '%s': value %lld is not a multiple of %lld", name,
                        (long long)ivalue, (long long)divisor);
    ckt_kparam *p = param_slot(k, name, kind);
    p->specialized = specialized;
    p->ivalue = ivalue;
    p->fvalue = fvalue;
    p->divisor = divisor;
    if (specialized)
        p->expr = kind == CKT_PARAM_F32 ? ckt_expr_float(&k->ex, (float)fvalue)
                                        : ckt_expr_int(&k->ex, ivalue);
    else if (kind == CKT_PARAM_F32)
        p->expr = ckt_expr_param(&k->ex, name, INT64_MIN, INT64_MAX, 1, true);
    /* sizes are >= 0: ckt_kernel_check_launch refuses negative values before anything runs */
    else
        p->expr = ckt_expr_param(&k->ex, name, 0, kind == CKT_PARAM_I32 ? INT32_MAX : INT64_MAX,
                                 divisor, false);
    if ((s = expr_ok(k, err))) return s;
    return param_commit(k, index);
}

int ckt_kernel_signature(const ckt_kernel *k, ckt_param *sig, int cap)
{
    int n = 0;
    if (!k) return 0;
    for (int i = 0; i < k->nparams; i++) {
        if (!ckt_kparam_is_argument(&k->params[i])) continue;
        if (sig && n < cap) {
            sig[n].kind = k->params[i].kind;
            sig[n].name = k->params[i].name;
        }
        n++;
    }
    return n;
}

/* ---------------------------------------------------------------- tensors */

/* A new tensor in `mem` of `dtype` (no parameter, no distribution yet) at *index. */
/* a new tensor *t, number *index, named `name` (NULL: lds<index> or r<index> by its memory) */
static ckt_status new_tensor(ckt_kernel *k, ckt_memory mem, ckt_dtype dtype, int rank,
                             const char *name, ckt_ktensor **t, int *index, ckt_error *err)
{
    ckt_status s = grow((void **)&k->tensors, &k->cap_tensors, k->ntensors, sizeof(ckt_ktensor),
                        4096, "tensors", err);
    if (s) return s;
    *t = &k->tensors[k->ntensors];
    memset(*t, 0, sizeof **t);
    (*t)->mem = mem;
    (*t)->dtype = dtype;
    (*t)->rank = rank;
    (*t)->param = -1;
    (*t)->dist = -1;
    if (name)
        snprintf((*t)->name, sizeof(*t)->name, "%s", name);
    else
        snprintf((*t)->name, sizeof(*t)->name, "%s%d", mem == CKT_MEM_LDS ? "lds" : "r",
                 k->ntensors);
    *index = k->ntensors++;
    return CKT_OK;
}

/* is t a register tensor of k? */
static bool is_register(const ckt_kernel *k, int t)
{
    return t >= 0 && t < k->ntensors && k->tensors[t].mem == CKT_MEM_REG;
}

static bool is_index(ckt_kernel *k, ckt_expr_id e)
{
    return ckt_expr_get(&k->ex, e) && ckt_expr_type_of(&k->ex, e) == CKT_T_INDEX;
}

/* a condition: an integer or boolean expression over indices (no map input) */
static bool is_condition(ckt_kernel *k, ckt_expr_id e)
{
    return ckt_expr_get(&k->ex, e) && ckt_expr_type_of(&k->ex, e) != CKT_T_F32 &&
           !ckt_expr_has_input(&k->ex, e);
}

ckt_status ckt_kernel_global(ckt_kernel *k, int param, ckt_dtype dtype, int rank,
                             const ckt_expr_id *shape, const ckt_expr_id *stride, bool padded,
                             int *tensor, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "tensor", err))) return s;
    if (param < 0 || param >= k->nparams || k->params[param].kind != CKT_PARAM_PTR)
        return ckt_fail(err, CKT_EINVAL, "tensor: a global tensor needs a pointer parameter");
    const ckt_kparam *p = &k->params[param];
    if (p->dtype != dtype)
        return ckt_fail(err, CKT_EINVAL, "tensor: pointer '%s' holds %s but the tensor is %s",
                        p->name, ckt_dtype_name(p->dtype), ckt_dtype_name(dtype));
    if (rank < 1 || rank > CKT_K_MAX_RANK)
        return ckt_fail(err, CKT_EINVAL, "tensor: rank %d outside 1..%d", rank, CKT_K_MAX_RANK);
    for (int d = 0; d < rank; d++) {
        if (!is_index(k, shape[d]) || !is_index(k, stride[d]))
            return ckt_fail(err, CKT_EINVAL,
                            "tensor: shape and stride of dim %d must be integer expressions", d);
        if (!ckt_expr_uniform(&k->ex, shape[d]) || !ckt_expr_uniform(&k->ex, stride[d]))
            return ckt_fail(err, CKT_EINVAL,
                            "tensor: shape and stride of dim %d must not depend on the thread id",
                            d);
        int64_t v;
        if (ckt_expr_is_const(&k->ex, shape[d], &v) && v < 1)
            return ckt_fail(err, CKT_EINVAL, "tensor: shape %lld of dim %d must be >= 1",
                            (long long)v, d);
        if (ckt_expr_is_const(&k->ex, stride[d], &v) && v < 0)
            return ckt_fail(err, CKT_EINVAL, "tensor: stride %lld of dim %d must be >= 0",
                            (long long)v, d);
    }
    ckt_ktensor *t;
    if ((s = new_tensor(k, CKT_MEM_GLOBAL, dtype, rank, p->name, &t, tensor, err))) return s;
    t->param = param;
    t->padded = padded;
    memcpy(t->shape, shape, sizeof(ckt_expr_id) * (size_t)rank);
    memcpy(t->stride, stride, sizeof(ckt_expr_id) * (size_t)rank);
    return CKT_OK;
}

ckt_status ckt_kernel_param_extent(ckt_kernel *k, int ptr, int *index, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "extent", err))) return s;
    if (ptr < 0 || ptr >= k->nparams || k->params[ptr].kind != CKT_PARAM_PTR)
        return ckt_fail(err, CKT_EINVAL, "extent: parameter %d is not a pointer", ptr);
    for (int i = 0; i < k->nparams; i++)
        if (k->params[i].extent && k->params[i].extent_of == ptr) {
            if (index) *index = i;
            return CKT_OK;
        }
    char name[64];
    snprintf(name, sizeof name, "%s_count", k->params[ptr].name);
    if (strlen(name) >= sizeof k->params[0].name)
        return ckt_fail(err, CKT_EINVAL, "extent: pointer name '%s' is too long",
                        k->params[ptr].name);
    if ((s = check_param_name(k, name, err))) return s;
    ckt_kparam *p = param_slot(k, name, CKT_PARAM_I64);
    p->derived = true;
    p->extent = true;
    p->extent_of = ptr;
    p->divisor = 1;
    p->expr = ckt_expr_param(&k->ex, name, 0, INT64_MAX, 1, false);
    if ((s = expr_ok(k, err))) return s;
    return param_commit(k, index);
}

/* an expression the launch can evaluate: integers and parameters only */
static bool of_params(const ckt_expr_pool *ex, ckt_expr_id e)
{
    const ckt_expr_node *n = ckt_expr_get(ex, e);
    if (!n) return true;
    switch ((ckt_expr_op)n->op) {
    case CKT_E_INT:
    case CKT_E_PARAM: return n->type == CKT_T_INDEX;
    case CKT_E_ADD:
    case CKT_E_SUB:
    case CKT_E_MUL:
    case CKT_E_DIV:
    case CKT_E_MOD:
    case CKT_E_MIN:
    case CKT_E_MAX: return of_params(ex, n->a) && of_params(ex, n->b);
    default: return false;
    }
}

ckt_status ckt_kernel_global_limit(ckt_kernel *k, int tensor, ckt_expr_id limit, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "limit", err))) return s;
    if (tensor < 0 || tensor >= k->ntensors || k->tensors[tensor].mem != CKT_MEM_GLOBAL ||
        !k->tensors[tensor].padded)
        return ckt_fail(err, CKT_EINVAL, "limit: tensor %d is not a padded global tensor", tensor);
    if (!is_index(k, limit) || !of_params(&k->ex, limit))
        return ckt_fail(err, CKT_EINVAL,
                        "limit: the element count must be an integer expression of the parameters "
                        "(+ - * // %% min max)");
    k->tensors[tensor].limited = true;
    k->tensors[tensor].limit = limit;
    return CKT_OK;
}

/* The byte boundary an LDS tensor starts on, and a multiple of which its stages lie apart: a tile
 * under one of the hardware's swizzles (the 32B, 64B and 128B patterns of wgmma and bulk tensor
 * copies, which swizzle absolute addresses) on its pattern's 8 x span (1024 bytes for 128B), so
 * that what was declared before it cannot move it off; any other on 16 bytes (vector accesses). */
static int64_t lds_alignment(const ckt_ktensor *t)
{
    return ckt_wgmma_tile_alignment(t->swizzled ? &t->sw : NULL, t->dtype);
}

/* An LDS layout's checks (valid, rank, strides not negative, within any LDS) and *span, the
 * elements from its first to its last one under the swizzle (NULL: none); fn names the caller */
static ckt_status lds_layout_span(const char *fn, const ckt_layout *layout, const ckt_swizzle *sw,
                                  int *rank, int64_t *span, ckt_error *err)
{
    if (ckt_layout_check(layout, err)) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "%s: layout: ", fn);
        return ckt_fail_prefix(err, prefix);
    }
    *rank = ckt_layout_rank(layout);
    if (*rank > CKT_K_MAX_RANK)
        return ckt_fail(err, CKT_EINVAL, "%s: rank %d above %d", fn, *rank, CKT_K_MAX_RANK);
    int64_t leaves[CKT_TUPLE_NODES];
    int n = ckt_tuple_flatten(&layout->stride, leaves, CKT_TUPLE_NODES);
    for (int i = 0; i < n; i++)
        if (leaves[i] < 0)
            return ckt_fail(err, CKT_EINVAL, "%s: LDS layout stride %lld is negative", fn,
                            (long long)leaves[i]);
    int64_t cos = ckt_layout_cosize(layout), maxoff = cos - 1;
    if (cos > ((int64_t)1 << 22))
        return ckt_fail(err, CKT_ECAPACITY,
                        "%s: LDS layout spans %lld elements (more than any LDS)", fn,
                        (long long)cos);
    for (int64_t o = 0; sw && o < cos; o++) maxoff = ckt_max64(maxoff, ckt_swizzle_apply(*sw, o));
    *span = maxoff + 1;
    return CKT_OK;
}

ckt_status ckt_kernel_lds(ckt_kernel *k, ckt_dtype dtype, const ckt_layout *layout,
                          const ckt_swizzle *sw, int *tensor, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "tensor", err))) return s;
    if (!layout) return ckt_fail(err, CKT_EINVAL, "tensor: an LDS tensor needs a layout");
    if (!ckt_dtype_valid(dtype)) return ckt_fail(err, CKT_EINVAL, "tensor: unknown dtype");
    if (sw && sw->b > 0) {
        ckt_swizzle chk;
        if ((s = ckt_swizzle_make(sw->b, sw->m, sw->s, &chk, err)))
            return ckt_fail_prefix(err, "tensor: swizzle: ");
    }
    int rank = 0;
    int64_t span = 0;
    if ((s = lds_layout_span("tensor", layout, sw && sw->b > 0 ? sw : NULL, &rank, &span, err)))
        return s;
    int64_t maxoff = span - 1;
    int64_t esz = (int64_t)ckt_dtype_size(dtype), bytes;
    if (ckt_mul_ovf(maxoff + 1, esz, &bytes))
        return ckt_fail(err, CKT_EOVERFLOW, "tensor: LDS size overflows");
    ckt_ktensor *t;
    if ((s = new_tensor(k, CKT_MEM_LDS, dtype, rank, NULL, &t, tensor, err))) return s;
    t->layout = *layout;
    if (sw && sw->b > 0) {
        t->sw = *sw;
        t->swizzled = true;
    }
    int64_t align = lds_alignment(t);
    t->lds_offset = (k->lds_bytes + align - 1) / align * align;
    t->cosize = maxoff + 1;
    k->lds_bytes = t->lds_offset + bytes;
    return CKT_OK;
}

ckt_status ckt_kernel_add_dist(ckt_kernel *k, const ckt_dist *d, int *index, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "distribution", err)) || (s = ckt_dist_check(d, err))) return s;
    if (d->threads > k->block)
        return ckt_fail(err, CKT_EINVAL,
                        "distribution: %lld threads but the kernel's block has %lld",
                        (long long)d->threads, (long long)k->block);
    for (int i = 0; i < k->ndists; i++)
        if (!memcmp(&k->dists[i], d, sizeof *d)) {
            *index = i;
            return CKT_OK;
        }
    if ((s = grow((void **)&k->dists, &k->cap_dists, k->ndists, sizeof(ckt_dist), 1024,
                  "distributions", err)))
        return s;
    k->dists[k->ndists] = *d;
    *index = k->ndists++;
    return CKT_OK;
}

ckt_status ckt_kernel_registers(ckt_kernel *k, ckt_dtype dtype, int dist, int64_t nvalues,
                                int *tensor, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "registers", err))) return s;
    if (!ckt_dtype_valid(dtype) || dtype == CKT_F64 || dtype == CKT_I64)
        return ckt_fail(err, CKT_EINVAL, "registers: dtype must be f16, bf16, f32, i32, i8 or u8");
    if (dist >= k->ndists) return ckt_fail(err, CKT_EINVAL, "registers: no distribution %d", dist);
    if (dist >= 0) nvalues = k->dists[dist].nvalues;
    if (nvalues < 1 || nvalues > CKT_K_MAX_VALUES)
        return ckt_fail(err, CKT_EINVAL, "registers: %lld values per thread outside 1..%d",
                        (long long)nvalues, CKT_K_MAX_VALUES);
    ckt_ktensor *t;
    if ((s = new_tensor(k, CKT_MEM_REG, dtype, dist >= 0 ? k->dists[dist].rank : 1, NULL, &t,
                        tensor, err)))
        return s;
    t->dist = dist;
    t->nvalues = nvalues;
    return CKT_OK;
}

/* ---------------------------------------------------------------- windows */

static ckt_status add_constraint(ckt_kernel *k, ckt_expr_id e, const char *note, ckt_error *err)
{
    int64_t v;
    if (ckt_expr_is_const(&k->ex, e, &v))
        return v == 0 ? CKT_OK : ckt_fail(err, CKT_EINVAL, "%s", note);
    for (int i = 0; i < k->nconstraints; i++)
        if (k->cexpr[i] == e) return CKT_OK;
    if (k->nconstraints == MAX_CONSTRAINTS)
        return ckt_fail(err, CKT_ECAPACITY, "kernel: more than %d launch conditions",
                        MAX_CONSTRAINTS);
    k->cexpr[k->nconstraints] = e;
    snprintf(k->cnote[k->nconstraints], sizeof k->cnote[0], "%s", note);
    k->nconstraints++;
    return CKT_OK;
}

ckt_status ckt_kernel_window_make(ckt_kernel *k, int tensor, int rank, const int64_t *lengths,
                                  const ckt_expr_id *origin, int *window, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "tile_window", err))) return s;
    if (tensor < 0 || tensor >= k->ntensors)
        return ckt_fail(err, CKT_EINVAL, "tile_window: no such tensor");
    ckt_ktensor *t = &k->tensors[tensor];
    if (t->mem == CKT_MEM_REG)
        return ckt_fail(
            err, CKT_EINVAL,
            "tile_window: register tensors are not windowed (they are already per-thread)");
    if (rank != t->rank)
        return ckt_fail(err, CKT_EINVAL, "tile_window: %d window lengths for a rank-%d tensor",
                        rank, t->rank);
    if (t->mem == CKT_MEM_LDS && t->stages > 1 && !t->stage_view)
        return ckt_fail(
            err, CKT_EINVAL,
            "tile_window: LDS tensor '%s' has %lld stages: window one of them (t:stage(i))",
            t->name, (long long)t->stages);
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "tile_window: inside a branch that depends on the thread id (windows are "
                        "block-uniform)");
    if ((s = grow((void **)&k->windows, &k->cap_windows, k->nwindows, sizeof(ckt_kwindow), 4096,
                  "windows", err)))
        return s;
    ckt_kwindow w;
    memset(&w, 0, sizeof w);
    w.tensor = tensor;
    w.rank = rank;
    int idx = k->nwindows;
    int64_t tshape[CKT_K_MAX_RANK];
    if (t->mem == CKT_MEM_LDS)
        for (int d = 0; d < rank; d++) {
            ckt_layout m;
            if ((s = ckt_layout_mode(&t->layout, d, &m, err))) return s;
            tshape[d] = ckt_layout_size(&m);
        }
    for (int d = 0; d < rank; d++) {
        if (lengths[d] < 1)
            return ckt_fail(err, CKT_EINVAL,
                            "tile_window: window length %lld of dim %d must be >= 1",
                            (long long)lengths[d], d);
        if (lengths[d] > ((int64_t)1 << 20))
            return ckt_fail(err, CKT_EINVAL,
                            "tile_window: window length %lld of dim %d is not a tile",
                            (long long)lengths[d], d);
        if (!is_index(k, origin[d]))
            return ckt_fail(err, CKT_EINVAL,
                            "tile_window: origin of dim %d must be an integer expression", d);
        if (!ckt_expr_uniform(&k->ex, origin[d]))
            return ckt_fail(err, CKT_EINVAL,
                            "tile_window: origin of dim %d depends on the thread id (windows are "
                            "block-uniform; use a distribution for per-thread parts)",
                            d);
        w.lengths[d] = lengths[d];
        int64_t olo, ohi;
        ckt_expr_range(&k->ex, origin[d], &olo, &ohi);
        if (ohi < 0)
            return ckt_fail(err, CKT_EINVAL, "tile_window: origin of dim %d is negative", d);
        if (t->mem == CKT_MEM_LDS) {
            if (lengths[d] > tshape[d])
                return ckt_fail(
                    err, CKT_EINVAL,
                    "tile_window: window length %lld of dim %d exceeds the LDS tensor's %lld",
                    (long long)lengths[d], d, (long long)tshape[d]);
            /* refused when it leaves for sure, or at a bound the builder knows (constants, loop
             * counters); an origin over runtime sizes (up to INT32_MAX) is the emitter's guard's */
            if (olo >= 0 &&
                (olo + lengths[d] > tshape[d] || (ohi < INT32_MAX && ohi + lengths[d] > tshape[d])))
                return ckt_fail(
                    err, CKT_EINVAL,
                    "tile_window: window [%lld, %lld) of dim %d leaves the LDS tensor (%lld)",
                    (long long)ohi, (long long)(ohi + lengths[d]), d, (long long)tshape[d]);
        } else {
            int64_t sh;
            /* a window that cannot touch the tensor at any origin it may take is a mistake */
            if (ckt_expr_is_const(&k->ex, t->shape[d], &sh) && olo >= sh)
                return ckt_fail(
                    err, CKT_EINVAL,
                    "tile_window: window [%lld, %lld) of dim %d is outside the shape %lld of '%s'",
                    (long long)olo, (long long)(olo + lengths[d]), d, (long long)sh, t->name);
            if (!t->padded && ckt_expr_is_const(&k->ex, t->shape[d], &sh) && olo >= 0 &&
                ohi <= sh && ohi + lengths[d] > sh)
                return ckt_fail(err, CKT_EINVAL,
                                "tile_window: window [%lld, %lld) of dim %d leaves the shape %lld "
                                "of '%s' (pad the tensor: pad=true)",
                                (long long)ohi, (long long)(ohi + lengths[d]), d, (long long)sh,
                                t->name);
        }
        if (t->mem == CKT_MEM_GLOBAL && !t->padded) {
            int64_t sh;
            char note[160];
            if (ckt_expr_is_const(&k->ex, t->shape[d], &sh)) {
                if (sh % lengths[d])
                    return ckt_fail(err, CKT_EINVAL,
                                    "tile_window: window length %lld does not divide shape %lld of "
                                    "dim %d of '%s' (pad the tensor: pad=true)",
                                    (long long)lengths[d], (long long)sh, d, t->name);
            } else {
                snprintf(note, sizeof note,
                         "the shape of dim %d of '%s' must be a multiple of the window length %lld "
                         "(or build with pad=true)",
                         d, t->name, (long long)lengths[d]);
                ckt_expr_id rem = ckt_expr_binary(&k->ex, CKT_E_MOD, t->shape[d],
                                                  ckt_expr_int(&k->ex, lengths[d]));
                if ((s = expr_ok(k, err)) || (s = add_constraint(k, rem, note, err))) return s;
            }
        }
        char name[32];
        snprintf(name, sizeof name, "w%d_%d", idx, d);
        w.init[d] = origin[d];
        w.step_divisor[d] = 0;
        w.origin[d] =
            ckt_expr_var(&k->ex, name, olo, INT64_MAX, ckt_expr_divisor(&k->ex, origin[d]));
        if ((s = expr_ok(k, err))) return s;
    }
    k->windows[k->nwindows++] = w;
    for (int d = 0; d < rank; d++) {
        ckt_kop op = new_op(CKT_OP_SET);
        op.a = w.origin[d];
        op.b = w.init[d];
        op.w = idx;
        if ((s = push_op(k, &op, err))) return s;
    }
    *window = idx;
    return CKT_OK;
}

/* operations of this kind on window w so far */
static int window_ops(const ckt_kernel *k, ckt_kop_kind kind, int w)
{
    int n = 0;
    for (int i = 0; i < k->nops; i++) n += k->ops[i].kind == kind && k->ops[i].w == w;
    return n;
}

ckt_status ckt_kernel_move(ckt_kernel *k, int window, const ckt_expr_id *step, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "move", err))) return s;
    if (window < 0 || window >= k->nwindows)
        return ckt_fail(err, CKT_EINVAL, "move: no such window");
    if (k->divergent)
        return ckt_fail(
            err, CKT_EINVAL,
            "move: inside a branch that depends on the thread id (windows are block-uniform)");
    ckt_kwindow *w = &k->windows[window];
    if (window_ops(k, CKT_OP_TMA_COPY, window) || window_ops(k, CKT_OP_TMA_STORE, window))
        return ckt_fail(err, CKT_EINVAL,
                        "move: the window is the LDS tile of a bulk tensor copy or store (its "
                        "origin stays where the tile was checked)");
    for (int d = 0; d < w->rank; d++) {
        if (!is_index(k, step[d]))
            return ckt_fail(err, CKT_EINVAL, "move: step of dim %d must be an integer expression",
                            d);
        if (!ckt_expr_uniform(&k->ex, step[d]))
            return ckt_fail(
                err, CKT_EINVAL,
                "move: step of dim %d depends on the thread id (windows are block-uniform)", d);
    }
    for (int d = 0; d < w->rank; d++) {
        int64_t v;
        if (ckt_expr_is_const(&k->ex, step[d], &v) && v == 0) continue;
        int64_t lo, hi;
        ckt_expr_range(&k->ex, step[d], &lo, &hi);
        if (lo < 0)
            w->moved_by_runtime = true; /* negative steps: origins are no longer known >= 0 */
        w->step_divisor[d] = ckt_gcd(w->step_divisor[d], ckt_expr_divisor(&k->ex, step[d]));
        ckt_kop op = new_op(CKT_OP_ADD);
        op.a = w->origin[d];
        op.b = step[d];
        op.w = window;
        if ((s = push_op(k, &op, err))) return s;
    }
    return CKT_OK;
}

/* ---------------------------------------------------------------- control flow */

/* what a variable or let may hold */
static ckt_status check_uniform_value(ckt_kernel *k, const char *fn, ckt_expr_id value,
                                      ckt_error *err)
{
    if (!is_index(k, value) || !ckt_expr_uniform(&k->ex, value))
        return ckt_fail(err, CKT_EINVAL, "%s: the value must be a block-uniform integer expression",
                        fn);
    return CKT_OK;
}

/* v = value, here */
static ckt_status push_set(ckt_kernel *k, ckt_expr_id v, ckt_expr_id value, ckt_error *err)
{
    ckt_status s;
    if ((s = expr_ok(k, err))) return s;
    ckt_kop op = new_op(CKT_OP_SET);
    op.a = v;
    op.b = value;
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_var(ckt_kernel *k, const char *name, ckt_expr_id init, ckt_expr_id *var,
                          ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "var", err)) || (s = check_uniform_value(k, "var", init, err))) return s;
    ckt_expr_id v = ckt_expr_var(&k->ex, name, INT64_MIN, INT64_MAX, 1);
    if ((s = push_set(k, v, init, err))) return s;
    *var = v;
    return CKT_OK;
}

/* a let's or var's optional name (NULL or empty: none): an identifier of at most 16 characters */
static ckt_status check_name(const char *fn, const char *name, ckt_error *err)
{
    if (!name || !*name) return CKT_OK;
    size_t n = strlen(name);
    bool ok = n <= 16 && (isalpha((unsigned char)name[0]) || name[0] == '_');
    for (size_t i = 1; ok && i < n; i++) ok = isalnum((unsigned char)name[i]) || name[i] == '_';
    return ok ? CKT_OK
              : ckt_fail(err, CKT_EINVAL,
                         "%s: name '%s' is not an identifier of at most 16 characters", fn, name);
}

ckt_status ckt_kernel_var_facts(ckt_kernel *k, const char *name, ckt_expr_id init, int64_t lo,
                                int64_t hi, int64_t divisor, ckt_expr_id *var, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "var", err))) return s;
    if (!var) return ckt_fail(err, CKT_EINVAL, "var: NULL result");
    if (lo > hi || divisor < 1)
        return ckt_fail(err, CKT_EINVAL,
                        "var: the range [%lld, %lld] is empty or multiple_of %lld is below 1",
                        (long long)lo, (long long)hi, (long long)divisor);
    if ((s = check_name("var", name, err))) return s;
    char id[32];
    snprintf(id, sizeof id, "var%d%s%s", k->ex.nvars, name && *name ? "_" : "", name ? name : "");
    ckt_expr_id v = ckt_expr_var(&k->ex, id, lo, hi, divisor);
    if ((s = expr_ok(k, err))) return s;
    k->assignable[ckt_expr_get(&k->ex, v)->i] = true;
    if ((s = ckt_kernel_assign(k, v, init, err))) return s;
    *var = v;
    return CKT_OK;
}

ckt_status ckt_kernel_assign(ckt_kernel *k, ckt_expr_id var, ckt_expr_id value, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "assign", err))) return s;
    const ckt_expr_node *n = ckt_expr_get(&k->ex, var);
    if (!n || n->op != CKT_E_VAR || !k->assignable[n->i])
        return ckt_fail(err, CKT_EINVAL, "assign: the target is not a variable made by var");
    if ((s = check_uniform_value(k, "assign", value, err))) return s;
    const ckt_expr_leaf_info *f = &k->ex.vars[n->i];
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "assign: '%s' inside a branch that depends on the thread id (a variable "
                        "is block-uniform)",
                        f->name);
    int64_t lo, hi;
    ckt_expr_range(&k->ex, value, &lo, &hi);
    if (lo < f->lo || hi > f->hi)
        return ckt_fail(err, CKT_EINVAL,
                        "assign: '%s' holds [%lld, %lld], but the value may be anywhere in [%lld, "
                        "%lld] (clamp it: ckt.min / ckt.max)",
                        f->name, (long long)f->lo, (long long)f->hi, (long long)lo, (long long)hi);
    if (ckt_expr_divisor(&k->ex, value) % f->divisor)
        return ckt_fail(
            err, CKT_EINVAL,
            "assign: '%s' holds multiples of %lld, but the value is not known to be one", f->name,
            (long long)f->divisor);
    return push_set(k, var, value, err);
}

/* A let is assigned outside every loop, branch and producer region, so every thread that can
 * read it has computed it first: the analyses can read through it (the launch check of windows
 * against the grid included). */
ckt_status ckt_kernel_let(ckt_kernel *k, const char *name, ckt_expr_id value, ckt_expr_id *var,
                          ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "let", err))) return s;
    if (!var) return ckt_fail(err, CKT_EINVAL, "let: NULL result");
    if ((s = check_uniform_value(k, "let", value, err))) return s;
    if (k->depth > 0)
        return ckt_fail(err, CKT_EINVAL,
                        "let: inside a loop, branch or producer region (a let is computed once, "
                        "by every thread, outside them)");
    char id[32];
    if ((s = check_name("let", name, err))) return s;
    snprintf(id, sizeof id, "let%d%s%s", k->nlets, name && *name ? "_" : "", name ? name : "");
    ckt_expr_id v = ckt_expr_let(&k->ex, id, value);
    if ((s = push_set(k, v, value, err))) return s;
    k->nlets++;
    *var = v;
    return CKT_OK;
}

ckt_status ckt_kernel_loop(ckt_kernel *k, ckt_expr_id trip, ckt_expr_id *var, ckt_error *err)
{
    return ckt_kernel_loop_rolled(k, trip, false, var, err);
}

ckt_status ckt_kernel_loop_rolled(ckt_kernel *k, ckt_expr_id trip, bool rolled, ckt_expr_id *var,
                                  ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "loop", err))) return s;
    if (!is_index(k, trip))
        return ckt_fail(err, CKT_EINVAL, "loop: the trip count must be an integer expression");
    if (!ckt_expr_uniform(&k->ex, trip))
        return ckt_fail(err, CKT_EINVAL,
                        "loop: the trip count depends on the thread id (loops are block-uniform)");
    if (k->divergent)
        return ckt_fail(
            err, CKT_EINVAL,
            "loop: inside a branch that depends on the thread id (loops are block-uniform)");
    if (k->depth == MAX_NEST)
        return ckt_fail(err, CKT_ECAPACITY, "loop: nested deeper than %d", MAX_NEST);
    int64_t lo, hi;
    ckt_expr_range(&k->ex, trip, &lo, &hi);
    char name[16];
    snprintf(name, sizeof name, "k%d", k->nloops++);
    ckt_expr_id v = ckt_expr_var(&k->ex, name, 0,
                                 hi == INT64_MAX ? INT64_MAX
                                 : hi < 1        ? 0
                                                 : hi - 1,
                                 1);
    if ((s = expr_ok(k, err))) return s;
    ckt_kop op = new_op(CKT_OP_LOOP);
    op.a = v;
    op.b = trip;
    op.spv = rolled;
    if ((s = push_op(k, &op, err))) return s;
    k->nest[k->depth++] = k->nops - 1;
    *var = v;
    return CKT_OK;
}

ckt_status ckt_kernel_if(ckt_kernel *k, ckt_expr_id cond, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "if", err))) return s;
    if (!is_condition(k, cond))
        return ckt_fail(err, CKT_EINVAL,
                        "if: the condition must be an integer or boolean expression over indices");
    if (k->depth == MAX_NEST)
        return ckt_fail(err, CKT_ECAPACITY, "if: nested deeper than %d", MAX_NEST);
    ckt_kop op = new_op(CKT_OP_IF);
    op.b = cond;
    op.spv = ckt_expr_uniform(&k->ex, cond) ? 0 : 1; /* 1: divergent */
    if ((s = push_op(k, &op, err))) return s;
    k->nest[k->depth++] = k->nops - 1;
    if (op.spv) k->divergent++;
    return CKT_OK;
}

ckt_status ckt_kernel_end(ckt_kernel *k, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "end", err))) return s;
    if (k->depth == 0) return ckt_fail(err, CKT_EINVAL, "end: no open loop or branch");
    const ckt_kop *open = &k->ops[k->nest[--k->depth]];
    if (open->kind == CKT_OP_IF && open->spv) k->divergent--;
    if (open->kind == CKT_OP_PRODUCER) k->in_producer = false;
    ckt_kop op = new_op(CKT_OP_END);
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_sync(ckt_kernel *k, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "sync", err))) return s;
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "sync: inside a branch whose condition depends on the thread id (not every "
                        "thread would reach the barrier)");
    ckt_kop op = new_op(CKT_OP_SYNC);
    return push_op(k, &op, err);
}

/* ---------------------------------------------------------------- data movement */

static ckt_status check_access(ckt_kernel *k, const char *fn, int window, const ckt_dist *d,
                               int vector_dim, int64_t spv, ckt_error *err)
{
    if (window < 0 || window >= k->nwindows)
        return ckt_fail(err, CKT_EINVAL, "%s: no such window", fn);
    const ckt_kwindow *w = &k->windows[window];
    if (d->rank != w->rank)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: the distribution has rank %d but the window has rank %d", fn, d->rank,
                        w->rank);
    for (int r = 0; r < w->rank; r++)
        if (d->lengths[r] != w->lengths[r])
            return ckt_fail(
                err, CKT_EINVAL,
                "%s: the distribution covers length %lld in dim %d but the window has %lld", fn,
                (long long)d->lengths[r], r, (long long)w->lengths[r]);
    if (vector_dim < -1 || vector_dim >= w->rank)
        return ckt_fail(err, CKT_EINVAL, "%s: vector_dim %d outside 0..%d", fn, vector_dim,
                        w->rank - 1);
    if (spv < 0 || spv > 16 || (spv & (spv - 1)))
        return ckt_fail(err, CKT_EINVAL,
                        "%s: scalar_per_vector %lld must be 1, 2, 4, 8 or 16 (0: choose)", fn,
                        (long long)spv);
    return CKT_OK;
}

/* an operation moving the elements of window w through registers by distribution dist,
 * spv-element vectors along vector_dim */
static ckt_kop access_op(ckt_kop_kind kind, int w, int dist, int vector_dim, int64_t spv)
{
    ckt_kop op = new_op(kind);
    op.w = w;
    op.dist = dist;
    op.vector_dim = vector_dim;
    op.spv = spv;
    return op;
}

ckt_status ckt_kernel_load(ckt_kernel *k, int window, int dist, int vector_dim, int64_t spv,
                           float fill, int *reg, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "load", err))) return s;
    if (dist < 0 || dist >= k->ndists)
        return ckt_fail(err, CKT_EINVAL, "load: a distribution is required");
    if ((s = check_access(k, "load", window, &k->dists[dist], vector_dim, spv, err))) return s;
    int r;
    if ((s = ckt_kernel_registers(k, k->tensors[k->windows[window].tensor].dtype, dist, 0, &r,
                                  err)))
        return s;
    ckt_kop op = access_op(CKT_OP_LOAD, window, -1, vector_dim, spv);
    op.r = r;
    op.fill = fill;
    if ((s = push_op(k, &op, err))) return s;
    *reg = r;
    return CKT_OK;
}

ckt_status ckt_kernel_store(ckt_kernel *k, int window, int reg, int vector_dim, int64_t spv,
                            ckt_error *err)
{
    return ckt_kernel_store_as(k, window, reg, -1, vector_dim, spv, err);
}

ckt_status ckt_kernel_store_as(ckt_kernel *k, int window, int reg, int dist, int vector_dim,
                               int64_t spv, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "store", err))) return s;
    if (!is_register(k, reg))
        return ckt_fail(err, CKT_EINVAL, "store: the source must be a register tensor");
    const ckt_ktensor *rt = &k->tensors[reg];
    if (dist >= k->ndists || dist < -1)
        return ckt_fail(err, CKT_EINVAL, "store: no distribution %d", dist);
    if (dist == rt->dist) dist = -1;
    if (dist < 0 && rt->dist < 0)
        return ckt_fail(err, CKT_EINVAL,
                        "store: the register tensor has no distribution (it does not say which "
                        "thread holds which element)");
    if (dist >= 0) {
        const ckt_dist *d = &k->dists[dist];
        if (d->nvalues != rt->nvalues)
            return ckt_fail(err, CKT_EINVAL,
                            "store: the register tensor holds %lld values per thread but the "
                            "destination takes %lld",
                            (long long)rt->nvalues, (long long)d->nvalues);
        if (rt->dist >= 0 && k->dists[rt->dist].threads < d->threads)
            return ckt_fail(
                err, CKT_EINVAL,
                "store: the register tensor is held by %lld threads but the destination needs %lld",
                (long long)k->dists[rt->dist].threads, (long long)d->threads);
    }
    if ((s = check_access(k, "store", window, &k->dists[dist >= 0 ? dist : rt->dist], vector_dim,
                          spv, err)))
        return s;
    const ckt_ktensor *dst = &k->tensors[k->windows[window].tensor];
    if (dst->mem == CKT_MEM_GLOBAL && k->params[dst->param].is_const)
        return ckt_fail(err, CKT_EINVAL, "store: pointer '%s' is declared read-only (const)",
                        k->params[dst->param].name);
    ckt_kop op = access_op(CKT_OP_STORE, window, dist, vector_dim, spv);
    op.r = reg;
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_clear(ckt_kernel *k, int reg, float value, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "clear", err))) return s;
    if (!is_register(k, reg))
        return ckt_fail(err, CKT_EINVAL, "clear: a register tensor is required");
    ckt_kop op = new_op(CKT_OP_CLEAR);
    op.r = reg;
    op.fill = value;
    return push_op(k, &op, err);
}

/* Every input slot of a map's expression names one of the map's inputs (an input expression kept
 * from another map's function would make the emitter read past its input names). */
static bool inputs_within(const ckt_expr_pool *p, ckt_expr_id e, int n)
{
    const ckt_expr_node *nd = ckt_expr_get(p, e);
    if (!nd) return true;
    if (nd->op == CKT_E_INPUT) return nd->i >= 0 && nd->i < n;
    return inputs_within(p, nd->a, n) && inputs_within(p, nd->b, n) && inputs_within(p, nd->c, n);
}

/* The input that gives a map its distribution: the first with more than one value per thread
 * (the others of one value are each thread's scalar), input 1 when every input has one. */
static int map_shape(const ckt_kernel *k, int ninputs, const int *inputs)
{
    for (int i = 0; i < ninputs; i++)
        if (k->tensors[inputs[i]].nvalues > 1) return i;
    return 0;
}

/* A map's inputs (register tensors of one distribution, or of one value per thread) and its
 * function (an expression over those inputs and, with coords, the tile coordinates only),
 * checked for ckt_kernel_map and ckt_kernel_map_into; *shape: map_shape's input. */
static ckt_status check_map(ckt_kernel *k, int ninputs, const int *inputs, ckt_expr_id expr,
                            bool coords, int *shape, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "map", err))) return s;
    if (ninputs < 1 || ninputs > CKT_K_MAX_INPUTS)
        return ckt_fail(err, CKT_EINVAL, "map: 1 to %d register tensors", CKT_K_MAX_INPUTS);
    for (int i = 0; i < ninputs; i++)
        if (inputs[i] < 0 || inputs[i] >= k->ntensors || k->tensors[inputs[i]].mem != CKT_MEM_REG)
            return ckt_fail(err, CKT_EINVAL, "map: input %d is not a register tensor", i + 1);
    *shape = map_shape(k, ninputs, inputs);
    const ckt_ktensor *first = &k->tensors[inputs[*shape]];
    for (int i = 0; i < ninputs; i++) {
        const ckt_ktensor *t = &k->tensors[inputs[i]];
        if (t->nvalues == 1) continue; /* the thread's scalar, whatever its distribution */
        if (t->dist != first->dist || t->nvalues != first->nvalues)
            return ckt_fail(err, CKT_EINVAL,
                            "map: input %d is distributed differently from input %d (elementwise "
                            "maps need one distribution, or one value per thread)",
                            i + 1, *shape + 1);
    }
    int rank = 0;
    if (coords) {
        if (first->dist < 0)
            return ckt_fail(err, CKT_EINVAL,
                            "map: coords needs a distributed input (the values' tile coordinates)");
        rank = k->dists[first->dist].rank;
    }
    if (!ckt_expr_get(&k->ex, expr))
        return ckt_fail(err, CKT_EINVAL, "map: the function must return an expression");
    if (!inputs_within(&k->ex, expr, ninputs + rank))
        return ckt_fail(err, CKT_EINVAL,
                        "map: the function's result uses an input beyond the %d given (an input of "
                        "another map?)",
                        ninputs + rank);
    return CKT_OK;
}

static ckt_status push_map(ckt_kernel *k, int reg, ckt_expr_id expr, int ninputs, const int *inputs,
                           bool coords, ckt_error *err)
{
    ckt_kop op = new_op(CKT_OP_MAP);
    op.r = reg;
    op.b = expr;
    op.ninputs = ninputs;
    op.coords = coords;
    memcpy(op.inputs, inputs, sizeof(int) * (size_t)ninputs);
    return push_op(k, &op, err);
}

static ckt_status map_any(ckt_kernel *k, int ninputs, const int *inputs, ckt_expr_id expr,
                          ckt_dtype out_dtype, int into, bool coords, int *reg, ckt_error *err)
{
    int shape = 0;
    ckt_status s = check_map(k, ninputs, inputs, expr, coords, &shape, err);
    if (s) return s;
    const ckt_ktensor *first = &k->tensors[inputs[shape]];
    if (into < 0) {
        if ((s = ckt_kernel_registers(k, out_dtype, first->dist, first->nvalues, reg, err)))
            return s;
        return push_map(k, *reg, expr, ninputs, inputs, coords, err);
    }
    if (!is_register(k, into))
        return ckt_fail(err, CKT_EINVAL, "map: 'into' must be a register tensor");
    const ckt_ktensor *t = &k->tensors[into];
    if (t->dist != first->dist || t->nvalues != first->nvalues)
        return ckt_fail(err, CKT_EINVAL,
                        "map: 'into' (%s) is distributed differently from input %d (%lld values "
                        "per thread, not %lld)",
                        t->name, shape + 1, (long long)t->nvalues, (long long)first->nvalues);
    return push_map(k, into, expr, ninputs, inputs, coords, err);
}

ckt_status ckt_kernel_map(ckt_kernel *k, int ninputs, const int *inputs, ckt_expr_id expr,
                          ckt_dtype out_dtype, int *reg, ckt_error *err)
{
    return map_any(k, ninputs, inputs, expr, out_dtype, -1, false, reg, err);
}

ckt_status ckt_kernel_map_into(ckt_kernel *k, int ninputs, const int *inputs, ckt_expr_id expr,
                               int into, ckt_error *err)
{
    return map_any(k, ninputs, inputs, expr, CKT_F32, into, false, NULL, err);
}

ckt_status ckt_kernel_map_coords(ckt_kernel *k, int ninputs, const int *inputs, ckt_expr_id expr,
                                 ckt_dtype out_dtype, int into, int *reg, ckt_error *err)
{
    return map_any(k, ninputs, inputs, expr, out_dtype, into, true, reg, err);
}

/* "softmax" pairs combine only across threads, through ckt_kernel_group_reduce_softmax */
static ckt_status pairs_only_across(ckt_reduce_op rop, const char *what, ckt_error *err)
{
    if (rop != CKT_REDUCE_SOFTMAX) return CKT_OK;
    return ckt_fail(err, CKT_EINVAL,
                    "%s: 'softmax' combines (maximum, sum) pairs across threads only: "
                    "b:block_reduce(maxima, \"softmax\", {threads = n, sum = sums})",
                    what);
}

ckt_status ckt_kernel_fold(ckt_kernel *k, int acc, int src, ckt_reduce_op rop, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "fold", err)) || (s = pairs_only_across(rop, "fold", err))) return s;
    if (!is_register(k, acc) || k->tensors[acc].nvalues != 1)
        return ckt_fail(err, CKT_EINVAL,
                        "fold: the accumulator must be a register tensor of one value per thread");
    if (!is_register(k, src))
        return ckt_fail(err, CKT_EINVAL, "fold: the source must be a register tensor");
    ckt_kop op = new_op(CKT_OP_FOLD);
    op.r = acc;
    op.inputs[0] = src;
    op.ninputs = 1;
    op.rop = rop;
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_block_reduce(ckt_kernel *k, int acc, ckt_reduce_op rop, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "block_reduce", err)) ||
        (s = pairs_only_across(rop, "block_reduce", err)))
        return s;
    if (!is_register(k, acc) || k->tensors[acc].nvalues != 1)
        return ckt_fail(err, CKT_EINVAL,
                        "block_reduce: a register tensor of one value per thread is required");
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "block_reduce: inside a branch whose condition depends on the thread id "
                        "(it synchronizes the block)");
    ckt_kop op = new_op(CKT_OP_BLOCK_REDUCE);
    op.r = acc;
    op.rop = rop;
    return push_op(k, &op, err);
}

static ckt_status group_reduce_op(ckt_kernel *k, int acc, int sums, ckt_reduce_op rop,
                                  int64_t threads, ckt_error *err);

ckt_status ckt_kernel_group_reduce(ckt_kernel *k, int acc, ckt_reduce_op rop, int64_t threads,
                                   ckt_error *err)
{
    if (rop == CKT_REDUCE_SOFTMAX)
        return ckt_fail(err, CKT_EINVAL,
                        "block_reduce: 'softmax' needs the sums beside the maxima: "
                        "b:block_reduce(maxima, \"softmax\", {threads = n, sum = sums})");
    return group_reduce_op(k, acc, -1, rop, threads, err);
}

ckt_status ckt_kernel_group_reduce_softmax(ckt_kernel *k, int maxima, int sums, int64_t threads,
                                           ckt_error *err)
{
    if (k && (!is_register(k, sums) || sums == maxima))
        return ckt_fail(err, CKT_EINVAL,
                        "block_reduce: 'softmax': the sums must be a register tensor of their own");
    if (k && is_register(k, maxima) &&
        (k->tensors[maxima].nvalues != k->tensors[sums].nvalues ||
         k->tensors[maxima].dtype != CKT_F32 || k->tensors[sums].dtype != CKT_F32))
        return ckt_fail(err, CKT_EINVAL,
                        "block_reduce: 'softmax': the maxima and the sums must be f32 register "
                        "tensors of the same number of values (%lld and %lld)",
                        (long long)k->tensors[maxima].nvalues, (long long)k->tensors[sums].nvalues);
    return group_reduce_op(k, maxima, sums, CKT_REDUCE_SOFTMAX, threads, err);
}

static ckt_status group_reduce_op(ckt_kernel *k, int acc, int sums, ckt_reduce_op rop,
                                  int64_t threads, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "block_reduce", err))) return s;
    if (!is_register(k, acc))
        return ckt_fail(err, CKT_EINVAL, "block_reduce: the accumulator must be a register tensor");
    if (threads < 1 || (threads & (threads - 1)) || k->block % threads)
        return ckt_fail(err, CKT_EINVAL,
                        "block_reduce: threads must be a power of two dividing the block of %lld, "
                        "got %lld",
                        (long long)k->block, (long long)threads);
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "block_reduce: inside a branch whose condition depends on the thread id "
                        "(its lanes exchange values)");
    ckt_kop op = new_op(CKT_OP_BLOCK_REDUCE);
    op.r = acc;
    op.r2 = sums;
    op.rop = rop;
    op.group = threads;
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_reduce_dim(ckt_kernel *k, int src, int dim, ckt_reduce_op rop,
                                 ckt_dtype out_dtype, int *reg, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "reduce", err)) || (s = pairs_only_across(rop, "reduce", err))) return s;
    if (!is_register(k, src) || k->tensors[src].dist < 0)
        return ckt_fail(err, CKT_EINVAL,
                        "reduce: a reduction along a dimension needs a distributed register "
                        "tensor (a tile's values by thread)");
    const ckt_dist *d = &k->dists[k->tensors[src].dist];
    if (dim < 0 || dim >= d->rank)
        return ckt_fail(err, CKT_EINVAL, "reduce: dim %d outside 0..%d of the %d-dimensional tile",
                        dim, d->rank - 1, d->rank);
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "reduce: inside a branch whose condition depends on the thread id "
                        "(it synchronizes the block)");
    int64_t elems = 1;
    for (int r = 0; r < d->rank; r++) elems *= d->lengths[r];
    if (elems > (int64_t)1 << 20)
        return ckt_fail(err, CKT_EINVAL, "reduce: a tile of %lld elements is too large for LDS",
                        (long long)elems);
    /* every element held by some thread: the scratch is read whole */
    unsigned char *seen = calloc((size_t)elems, 1);
    if (!seen) return ckt_fail(err, CKT_ENOMEM, "reduce: out of memory");
    int64_t held = 0;
    for (int64_t t = 0; t < d->threads; t++)
        for (int64_t v = 0; v < d->nvalues; v++) {
            int64_t c[CKT_K_MAX_RANK], lin = 0;
            ckt_dist_coord(d, t, v, c);
            for (int r = 0; r < d->rank; r++) lin = lin * d->lengths[r] + c[r];
            if (lin >= 0 && lin < elems && !seen[lin]) {
                seen[lin] = 1;
                held++;
            }
        }
    free(seen);
    if (held != elems)
        return ckt_fail(err, CKT_EINVAL,
                        "reduce: the distribution holds %lld of the tile's %lld elements (a "
                        "reduction along a dimension needs all of them)",
                        (long long)held, (long long)elems);
    if ((s = ckt_kernel_registers(k, out_dtype, k->tensors[src].dist, k->tensors[src].nvalues, reg,
                                  err)))
        return s;
    ckt_kop op = new_op(CKT_OP_BLOCK_REDUCE);
    op.r = *reg;
    op.inputs[0] = src;
    op.ninputs = 1;
    op.vector_dim = dim;
    op.rop = rop;
    return push_op(k, &op, err);
}

/* The row-major key, over the source tile's lengths, of value v of thread t of d at `origin` in
 * that tile, dimension `skip` left out (-1: none); -1 outside the source tile */
static int64_t key_at(const ckt_dist *d, const int64_t *origin, const int64_t *lengths, int skip,
                      int64_t t, int64_t v)
{
    int64_t c[CKT_K_MAX_RANK], key = 0;
    ckt_dist_coord(d, t, v, c);
    for (int r = 0; r < d->rank; r++) {
        if (r == skip) continue;
        int64_t x = c[r] + origin[r];
        if (x < 0 || x >= lengths[r]) return -1;
        key = key * lengths[r] + x;
    }
    return key;
}

/* u = the value of thread 0 in s holding value v of `like`'s element (placed at origin, dim left
 * out), -1 if none */
static int64_t source_value(const ckt_dist *s, const ckt_dist *like, const int64_t *origin, int dim,
                            int64_t v)
{
    static const int64_t zero[CKT_K_MAX_RANK];
    int64_t key = key_at(like, origin, s->lengths, dim, 0, v);
    for (int64_t u = 0; key >= 0 && u < s->nvalues; u++)
        if (key_at(s, zero, s->lengths, dim, 0, u) == key) return u;
    return -1;
}

int64_t ckt_kernel_broadcast_source(const ckt_kernel *k, const ckt_kop *op, int64_t v)
{
    const ckt_dist *s = &k->dists[k->tensors[op->inputs[0]].dist],
                   *like = &k->dists[k->tensors[op->r].dist];
    return source_value(s, like, op->mma_rep, op->vector_dim, v);
}

/* *reg in distribution `dist` (a tile of dist's lengths at `origin` in src's tile) takes from each
 * thread's own registers of src the value of its element (along `dim`: any of the line; -1: the
 * element itself); refused, naming a thread and a value, where a thread does not hold it or not at
 * the same value index as thread 0. */
static ckt_status regather(ckt_kernel *k, const char *fn, int src, int dist, const int64_t *origin,
                           int dim, int *reg, ckt_error *err)
{
    static const int64_t zero[CKT_K_MAX_RANK];
    const ckt_dist *s = &k->dists[k->tensors[src].dist], *l = &k->dists[dist];
    if (s->rank != l->rank)
        return ckt_fail(err, CKT_EINVAL, "%s: the source tile has rank %d, the result's %d", fn,
                        s->rank, l->rank);
    for (int r = 0; r < s->rank; r++)
        if (r != dim && l->lengths[r] + origin[r] > s->lengths[r])
            return ckt_fail(err, CKT_EINVAL,
                            "%s: the tiles differ in dimension %d (%lld at %lld in %lld), not only "
                            "along dim %d",
                            fn, r, (long long)l->lengths[r], (long long)origin[r],
                            (long long)s->lengths[r], dim);
    if (l->threads > s->threads)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: the result's distribution has %lld threads, the source's only %lld",
                        fn, (long long)l->threads, (long long)s->threads);
    for (int64_t v = 0; v < l->nvalues; v++) {
        int64_t u = source_value(s, l, origin, dim, v);
        for (int64_t t = 0; t < l->threads; t++) {
            int64_t key = key_at(l, origin, s->lengths, dim, t, v);
            if (key >= 0 && (u < 0 || key_at(s, zero, s->lengths, dim, t, u) != key))
                return ckt_fail(err, CKT_EINVAL,
                                "%s: thread %lld holds value %lld of the result on an element "
                                "(%s) that it does not hold in the source at value %lld (not in "
                                "registers: store the source to LDS and load it in the result's "
                                "distribution)",
                                fn, (long long)t, (long long)v,
                                dim < 0 ? "exactly" : "a line along the dim", (long long)u);
        }
    }
    ckt_status st;
    if ((st = ckt_kernel_registers(k, k->tensors[src].dtype, dist, l->nvalues, reg, err)))
        return st;
    ckt_kop op = new_op(CKT_OP_BROADCAST);
    op.r = *reg;
    op.inputs[0] = src;
    op.ninputs = 1;
    op.vector_dim = dim;
    for (int r = 0; r < s->rank && r < 3; r++) op.mma_rep[r] = origin[r];
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_broadcast(ckt_kernel *k, int src, int like, int dim, int *reg, ckt_error *err)
{
    static const int64_t zero[CKT_K_MAX_RANK];
    ckt_status st;
    if ((st = check_open(k, "broadcast", err))) return st;
    if (!is_register(k, src) || k->tensors[src].dist < 0 || !is_register(k, like) ||
        k->tensors[like].dist < 0)
        return ckt_fail(err, CKT_EINVAL,
                        "broadcast: src and like must be distributed register tensors (a tile's "
                        "values by thread)");
    const ckt_dist *s = &k->dists[k->tensors[src].dist];
    if (dim < 0 || dim >= s->rank)
        return ckt_fail(err, CKT_EINVAL, "broadcast: dim %d outside 0..%d", dim, s->rank - 1);
    if (k->dists[k->tensors[like].dist].rank != s->rank)
        return ckt_fail(err, CKT_EINVAL, "broadcast: src's tile has rank %d, like's %d", s->rank,
                        k->dists[k->tensors[like].dist].rank);
    for (int r = 0; r < s->rank; r++)
        if (r != dim && s->lengths[r] != k->dists[k->tensors[like].dist].lengths[r])
            return ckt_fail(err, CKT_EINVAL,
                            "broadcast: the tiles differ in dimension %d (%lld and %lld), not "
                            "only along dim %d",
                            r, (long long)s->lengths[r],
                            (long long)k->dists[k->tensors[like].dist].lengths[r], dim);
    return regather(k, "broadcast", src, k->tensors[like].dist, zero, dim, reg, err);
}

ckt_status ckt_kernel_regather(ckt_kernel *k, int src, int dist, const int64_t *origin, int *reg,
                               ckt_error *err)
{
    ckt_status st;
    if ((st = check_open(k, "regather", err))) return st;
    if (!is_register(k, src) || k->tensors[src].dist < 0)
        return ckt_fail(err, CKT_EINVAL,
                        "regather: the source must be a distributed register "
                        "tensor");
    if (dist < 0 || dist >= k->ndists)
        return ckt_fail(err, CKT_EINVAL, "regather: no distribution %d", dist);
    if (k->dists[k->tensors[src].dist].rank > 3)
        return ckt_fail(err, CKT_EINVAL, "regather: a tile of rank <= 3");
    return regather(k, "regather", src, dist, origin, -1, reg, err);
}

/* an integer expression over the parameters and constants only */
static bool over_params(const ckt_expr_pool *p, ckt_expr_id e)
{
    const ckt_expr_node *nd = ckt_expr_get(p, e);
    if (!nd) return true;
    switch (nd->op) {
    case CKT_E_TID:
    case CKT_E_BID:
    case CKT_E_NBLK:
    case CKT_E_VAR:
    case CKT_E_INPUT:
    case CKT_E_FLOAT: return false;
    default: break;
    }
    return over_params(p, nd->a) && over_params(p, nd->b) && over_params(p, nd->c);
}

ckt_status ckt_kernel_require(ckt_kernel *k, ckt_expr_id cond, const char *note, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "require", err))) return s;
    if (!ckt_expr_get(&k->ex, cond) || ckt_expr_type_of(&k->ex, cond) == CKT_T_F32 ||
        !over_params(&k->ex, cond))
        return ckt_fail(err, CKT_EINVAL,
                        "require: the condition must be an integer expression of the parameters "
                        "(sizes and constants)");
    ckt_expr_id bad = ckt_expr_binary(&k->ex, CKT_E_EQ, cond, ckt_expr_int(&k->ex, 0));
    if ((s = expr_ok(k, err))) return s;
    char msg[160];
    snprintf(msg, sizeof msg, "%s", note && note[0] ? note : "a condition of the kernel failed");
    return add_constraint(k, bad, msg, err);
}

/* ---------------------------------------------------------------- finishing, launches */

static ckt_status mma_operand(const ckt_kernel *k, int reg, const char *what, ckt_dtype want,
                              int64_t values, ckt_error *err)
{
    if (!is_register(k, reg))
        return ckt_fail(err, CKT_EINVAL, "mma: %s must be a register tensor", what);
    const ckt_ktensor *t = &k->tensors[reg];
    if (t->dtype != want)
        return ckt_fail(err, CKT_EINVAL, "mma: %s is %s but the instruction takes %s", what,
                        ckt_dtype_name(t->dtype), ckt_dtype_name(want));
    if (t->nvalues != values)
        return ckt_fail(err, CKT_EINVAL,
                        "mma: %s holds %lld values per thread, the instructions take %lld", what,
                        (long long)t->nvalues, (long long)values);
    return CKT_OK;
}

/* What a wave-wide (mma) and a warpgroup-wide (wgmma) instruction site both need: repeats in
 * 1..max_rep, every thread of its waves present (no thread-dependent branch), whole waves. */
typedef struct {
    const char *fn, *why, *waves; /* the builder, why all threads, "waves of N lanes" wording */
    int64_t max_rep;
} mma_site_rules;
static const mma_site_rules MMA_SITE = {"mma", "a wave-wide instruction needs every lane", "waves",
                                        64};
static const mma_site_rules WGMMA_SITE = {
    "wgmma", "a warpgroup-wide instruction needs every thread", "warpgroups", 16};

static ckt_status check_mma_site(const ckt_kernel *k, const mma_site_rules *r, const ckt_mma *m,
                                 const int64_t *rep, ckt_error *err)
{
    for (int i = 0; i < 3; i++)
        if (rep[i] < 1 || rep[i] > r->max_rep)
            return ckt_fail(err, CKT_EINVAL, "%s: repeat %d is %lld (1..%lld)", r->fn, i,
                            (long long)rep[i], (long long)r->max_rep);
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL, "%s: inside a branch that depends on the thread id (%s)",
                        r->fn, r->why);
    if (k->block % m->lanes)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: the block of %lld threads is not whole %s of %lld%s (%s)", r->fn,
                        (long long)k->block, r->waves, (long long)m->lanes,
                        r == &MMA_SITE ? " lanes" : "", m->name);
    return CKT_OK;
}

/* c += a x b by matrix instruction mma, repeated rep = {M, N, K} times */
static ckt_kop mma_op(ckt_kop_kind kind, int c, int a, int b, int mma, const int64_t *rep)
{
    ckt_kop op = new_op(kind);
    op.r = c;
    op.ninputs = 2;
    op.inputs[0] = a;
    op.inputs[1] = b;
    op.mma = mma;
    memcpy(op.mma_rep, rep, sizeof op.mma_rep);
    snprintf(op.note, sizeof op.note, "%s", ckt_mma_at(mma)->name);
    return op;
}

ckt_status ckt_kernel_mma(ckt_kernel *k, int c_reg, int a_reg, int b_reg, int mma,
                          const int64_t *rep, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "mma", err))) return s;
    const ckt_mma *m = ckt_mma_at(mma);
    if (!m || !rep) return ckt_fail(err, CKT_EINVAL, "mma: no instruction %d", mma);
    if ((s = check_mma_site(k, &MMA_SITE, m, rep, err))) return s;
    if ((s = mma_operand(k, a_reg, "A", m->a, m->a_values * rep[0] * rep[2], err)) ||
        (s = mma_operand(k, b_reg, "B", m->b, m->b_values * rep[1] * rep[2], err)) ||
        (s = mma_operand(k, c_reg, "C", m->c, m->c_values * rep[0] * rep[1], err)))
        return s;
    ckt_kop op = mma_op(CKT_OP_GEMM, c_reg, a_reg, b_reg, mma, rep);
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_wgmma(ckt_kernel *k, int c_reg, int a_lds, int b_lds, int mma,
                            const int64_t *rep, ckt_error *err)
{
    return ckt_kernel_wgmma_async(k, c_reg, a_lds, b_lds, mma, rep, 0, CKT_EXPR_NONE, err);
}

ckt_status ckt_kernel_wgmma_wait(ckt_kernel *k, int c_reg, int64_t pending, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "wgmma wait", err))) return s;
    if (pending < 0 || pending > 7)
        return ckt_fail(err, CKT_EINVAL, "wgmma wait: pending %lld outside 0..7",
                        (long long)pending);
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "wgmma wait: inside a branch that depends on the thread id");
    if (!is_register(k, c_reg) || k->tensors[c_reg].dtype != CKT_F32)
        return ckt_fail(err, CKT_EINVAL,
                        "wgmma wait: the accumulator must be an f32 register tensor");
    ckt_kop op = new_op(CKT_OP_WGMMA);
    op.r = c_reg;
    op.ninputs = 0;
    op.spv = pending;
    op.mma = -1;
    snprintf(op.note, sizeof op.note, "wgmma wait %lld", (long long)pending);
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_wgmma_async(ckt_kernel *k, int c_reg, int a_lds, int b_lds, int mma,
                                  const int64_t *rep, int64_t pending, ckt_expr_id zero,
                                  ckt_error *err)
{
    ckt_status s;
    if (pending < 0 || pending > 7)
        return ckt_fail(err, CKT_EINVAL, "wgmma: pending %lld outside 0..7", (long long)pending);
    if ((s = check_open(k, "wgmma", err))) return s;
    const ckt_mma *m = ckt_mma_at(mma);
    if (!m || !rep || m->lanes != 128)
        return ckt_fail(err, CKT_EINVAL, "wgmma: instruction %d is not a warpgroup MMA", mma);
    if ((s = check_mma_site(k, &WGMMA_SITE, m, rep, err))) return s;
    const int lds[2] = {a_lds, b_lds};
    for (int i = 0; i < 2; i++) {
        /* A from registers (the RS form): one instruction row, 8 values a K step */
        bool reg_a =
            i == 0 && lds[0] >= 0 && lds[0] < k->ntensors && k->tensors[lds[0]].mem == CKT_MEM_REG;
        if (reg_a && (rep[0] != 1 || m->k != 16 || k->tensors[lds[0]].nvalues != 8 * rep[2]))
            return ckt_fail(err, CKT_EINVAL,
                            "wgmma: a register A holds 8 values a K step of one instruction row "
                            "(16-bit forms)");
        if (!reg_a && (lds[i] < 0 || lds[i] >= k->ntensors ||
                       k->tensors[lds[i]].mem != CKT_MEM_LDS || k->tensors[lds[i]].rank != 2))
            return ckt_fail(err, CKT_EINVAL, "wgmma: %s must be a rank-2 LDS tensor%s",
                            i ? "B" : "A", i ? "" : " or a register tile");
        if (k->tensors[lds[i]].dtype != (i ? m->b : m->a))
            return ckt_fail(err, CKT_EINVAL, "wgmma: %s is %s but %s takes %s", i ? "B" : "A",
                            ckt_dtype_name(k->tensors[lds[i]].dtype), m->name,
                            ckt_dtype_name(i ? m->b : m->a));
    }
    if ((s = mma_operand(k, c_reg, "C", m->c, m->c_values * rep[0] * rep[1], err))) return s;
    /* scale-d is an operand of a warpgroup-wide instruction: the same on all its threads */
    if (zero != CKT_EXPR_NONE && (!is_condition(k, zero) || !ckt_expr_uniform(&k->ex, zero)))
        return ckt_fail(err, CKT_EINVAL,
                        "wgmma: zero must be an integer or boolean expression over indices that "
                        "is the same on every thread (scale-d of a warpgroup-wide instruction)");
    ckt_kop op = mma_op(CKT_OP_WGMMA, c_reg, a_lds, b_lds, mma, rep);
    op.spv = pending;
    op.zero = zero;
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_fragment_load(ckt_kernel *k, int reg, int mma, char operand, int addr_dist,
                                    ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "fragment load", err))) return s;
    if (k->nops == 0 || k->ops[k->nops - 1].kind != CKT_OP_LOAD || k->ops[k->nops - 1].r != reg)
        return ckt_fail(err, CKT_EINVAL,
                        "fragment load: the last operation is not the load into register tensor %d",
                        reg);
    if (!ckt_mma_at(mma) || !strchr("ABab", operand) || !operand || addr_dist < 0 ||
        addr_dist >= k->ndists)
        return ckt_fail(err, CKT_EINVAL, "fragment load: bad instruction, operand or distribution");
    ckt_kop *op = &k->ops[k->nops - 1];
    op->mma = mma;
    op->mma_rep[0] = operand;
    op->mma_rep[1] = addr_dist;
    op->mma_rep[2] = 1;
    return CKT_OK;
}

ckt_status ckt_kernel_finish(ckt_kernel *k, ckt_error *err)
{
    ckt_status s;
    if (!k) return ckt_fail(err, CKT_EINVAL, "kernel: NULL");
    if (k->finished) return CKT_OK;
    if (k->depth)
        return ckt_fail(err, CKT_EINVAL, "kernel: %d loop(s) or branch(es) left open", k->depth);
    if ((s = expr_ok(k, err))) return s;
    /* window origins: the initial value's divisor and every step's */
    for (int i = 0; i < k->nwindows; i++) {
        ckt_kwindow *w = &k->windows[i];
        for (int d = 0; d < w->rank; d++) {
            int64_t lo, hi, div = ckt_gcd(ckt_expr_divisor(&k->ex, w->init[d]), w->step_divisor[d]);
            ckt_expr_range(&k->ex, w->init[d], &lo, &hi);
            bool grows = w->step_divisor[d] != 0;
            ckt_expr_var_set(&k->ex, w->origin[d], w->moved_by_runtime ? INT64_MIN : lo,
                             grows ? INT64_MAX : hi, div ? div : 1);
        }
    }
    /* the mbarriers after the tensors (a set taking its LDS where it was declared would move the
     * tensors declared after it off the boundaries bulk copies and wgmma need) */
    for (int i = 0; i < k->nmbars; i++) {
        k->mbars[i].lds_offset = (k->lds_bytes + 7) / 8 * 8;
        k->lds_bytes = k->mbars[i].lds_offset + 8 * k->mbars[i].count;
    }
    /* scratch for block reductions after the tensors */
    int64_t scratch_bytes = 0;
    for (int i = 0; i < k->nops; i++)
        if (k->ops[i].kind == CKT_OP_BLOCK_REDUCE) {
            int64_t b = k->block * 4;
            if (k->ops[i].group) { /* one partial per value and 32 lanes (the butterflies), for
                                      every reduction of a run that shares the exchange */
                int n = ckt_kernel_reduce_run(k, i);
                int64_t values = 0;
                for (int j = 0; j < (n > 0 ? n : 1); j++)
                    values += k->tensors[k->ops[i + j].r].nvalues;
                if (k->ops[i].r2 >= 0) values += k->tensors[k->ops[i].r2].nvalues; /* softmax */
                b = k->ops[i].group > 32 ? 4 * values * ((k->block + 31) / 32) : 0;
            }
            if (k->ops[i].ninputs == 1) { /* along a dimension: the source's tile */
                const ckt_dist *d = &k->dists[k->tensors[k->ops[i].inputs[0]].dist];
                b = 4;
                for (int r = 0; r < d->rank; r++) b *= d->lengths[r];
            }
            if (b > scratch_bytes) scratch_bytes = b;
        }
    if (scratch_bytes) {
        k->scratch = (k->lds_bytes + 15) / 16 * 16;
        k->lds_bytes = k->scratch + scratch_bytes;
    }
    k->finished = true;
    return CKT_OK;
}

int64_t ckt_kernel_reduce_scratch(const ckt_kernel *k) { return k ? k->scratch : -1; }

/* A group reduction of more than 32 threads (its partials through the scratch) */
static bool wide_group_reduce(const ckt_kop *op)
{
    return op->kind == CKT_OP_BLOCK_REDUCE && op->group > 32 && op->ninputs == 0 &&
           op->rop != CKT_REDUCE_SOFTMAX; /* (its pairs exchange on their own) */
}

int ckt_kernel_reduce_run(const ckt_kernel *k, int i)
{
    if (!k || i < 0 || i >= k->nops || !wide_group_reduce(&k->ops[i])) return 0;
    int n = 1;
    while (n < CKT_REDUCE_RUN_MAX && i + n < k->nops && wide_group_reduce(&k->ops[i + n]) &&
           k->ops[i + n].group == k->ops[i].group) {
        for (int j = 0; j < n; j++) /* the same accumulator again reduces the result: in order */
            if (k->ops[i + j].r == k->ops[i + n].r) return n;
        n++;
    }
    return n;
}

void ckt_kernel_param_leaves(const ckt_kernel *k, const int64_t *values, int64_t *leaves)
{
    memset(leaves, 0, sizeof(int64_t) * CKT_EXPR_MAX_LEAVES);
    for (int i = 0; k && i < k->nparams; i++) {
        const ckt_kparam *p = &k->params[i];
        if ((p->kind != CKT_PARAM_I32 && p->kind != CKT_PARAM_I64) || p->specialized) continue;
        const ckt_expr_node *n = ckt_expr_get(&k->ex, p->expr);
        if (n && n->op == CKT_E_PARAM && n->i >= 0 && n->i < CKT_EXPR_MAX_LEAVES)
            leaves[n->i] = values ? values[i] : 0;
    }
}

ckt_status ckt_kernel_check_launch(const ckt_kernel *k, const int64_t *values, ckt_error *err)
{
    if (!k) return ckt_fail(err, CKT_EINVAL, "launch: NULL kernel");
    int64_t pv[CKT_EXPR_MAX_LEAVES];
    ckt_kernel_param_leaves(k, values, pv);
    for (int i = 0; i < k->nparams; i++) {
        const ckt_kparam *p = &k->params[i];
        if ((p->kind != CKT_PARAM_I32 && p->kind != CKT_PARAM_I64) || p->specialized) continue;
        int64_t v = values ? values[i] : 0;
        if (v % p->divisor)
            return ckt_fail(err, CKT_EINVAL,
                            "launch: %s = %lld is not a multiple of %lld (promised by multiple_of)",
                            p->name, (long long)v, (long long)p->divisor);
        if (v < 0)
            return ckt_fail(err, CKT_EINVAL, "launch: %s = %lld must not be negative", p->name,
                            (long long)v);
    }
    ckt_expr_env env;
    memset(&env, 0, sizeof env);
    env.params = pv;
    for (int i = 0; i < k->nconstraints; i++) {
        int64_t r;
        ckt_status s = ckt_expr_eval_int(&k->ex, k->cexpr[i], &env, &r, err);
        if (s) return s;
        if (r != 0) return ckt_fail(err, CKT_EINVAL, "launch: %s", k->cnote[i]);
    }
    return CKT_OK;
}

/* ---------------------------------------------------------------- asynchronous copies, LDS stages
 */

static int64_t lds_tensor_bytes(const ckt_ktensor *t)
{
    return t->cosize * (int64_t)ckt_dtype_size(t->dtype);
}

ckt_status ckt_kernel_lds_stages(ckt_kernel *k, int tensor, int64_t stages, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "tensor", err))) return s;
    if (tensor < 0 || tensor >= k->ntensors || k->tensors[tensor].mem != CKT_MEM_LDS)
        return ckt_fail(err, CKT_EINVAL, "tensor: stages: not an LDS tensor");
    ckt_ktensor *t = &k->tensors[tensor];
    if (stages < 1 || stages > 16)
        return ckt_fail(err, CKT_EINVAL, "tensor: stages %lld outside 1..16", (long long)stages);
    if (t->stage_view || t->stages > 1)
        return ckt_fail(err, CKT_EINVAL, "tensor: stages: '%s' is already staged", t->name);
    /* only the newest allocation can grow in place */
    if (t->lds_offset + lds_tensor_bytes(t) != k->lds_bytes)
        return ckt_fail(err, CKT_EINVAL, "tensor: stages: '%s' is not the LDS tensor made last",
                        t->name);
    /* a multiple of 128 bytes apart: a stage starts at the same bank as the first, so the bank
     * model of one stage holds for all of them (and 16-byte accesses stay aligned); of the
     * tensor's alignment when larger (a hardware swizzle's pattern starts over in every stage) */
    int64_t unit = ckt_max64(128, lds_alignment(t)),
            stage_bytes = (lds_tensor_bytes(t) + unit - 1) / unit * unit,
            esz = (int64_t)ckt_dtype_size(t->dtype), total;
    if (ckt_mul_ovf(stage_bytes, stages - 1, &total) || total > ((int64_t)1 << 26))
        return ckt_fail(err, CKT_ECAPACITY, "tensor: %lld stages of %lld bytes exceed any LDS",
                        (long long)stages, (long long)stage_bytes);
    t->stages = stages;
    t->stage_elems = stage_bytes / esz;
    k->lds_bytes = t->lds_offset + total + lds_tensor_bytes(t);
    return CKT_OK;
}

ckt_status ckt_kernel_lds_stage(ckt_kernel *k, int tensor, ckt_expr_id stage, int *view,
                                ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "stage", err))) return s;
    if (tensor < 0 || tensor >= k->ntensors || k->tensors[tensor].mem != CKT_MEM_LDS ||
        k->tensors[tensor].stage_view)
        return ckt_fail(err, CKT_EINVAL, "stage: not a staged LDS tensor");
    const ckt_ktensor *p = &k->tensors[tensor];
    if (p->stages < 1)
        return ckt_fail(
            err, CKT_EINVAL,
            "stage: '%s' has no stages (ckt.tensor(\"lds\", dtype, layout, {stages = n}))",
            p->name);
    if (!is_index(k, stage))
        return ckt_fail(err, CKT_EINVAL, "stage: the stage must be an integer expression");
    if (!ckt_expr_uniform(&k->ex, stage))
        return ckt_fail(err, CKT_EINVAL,
                        "stage: the stage depends on the thread id (a stage is block-uniform)");
    int64_t lo, hi;
    ckt_expr_range(&k->ex, stage, &lo, &hi);
    if (lo < 0 || hi > p->stages - 1)
        return ckt_fail(err, CKT_EINVAL,
                        "stage: the stage is not provably in 0..%lld (range %lld..%lld; take it "
                        "modulo the stages, e.g. i %% %lld)",
                        (long long)(p->stages - 1), (long long)lo, (long long)hi,
                        (long long)p->stages);
    ckt_ktensor *v;
    if ((s = new_tensor(k, CKT_MEM_LDS, p->dtype, p->rank, NULL, &v, view, err))) return s;
    p = &k->tensors[tensor]; /* new_tensor may move the array */
    char name[sizeof v->name];
    memcpy(name, v->name, sizeof name);
    *v = *p;
    memcpy(v->name, name, sizeof name);
    v->stage_view = true;
    v->stage_base = ckt_expr_mulc(&k->ex, stage, p->stage_elems);
    return expr_ok(k, err);
}

ckt_status ckt_kernel_lds_view(ckt_kernel *k, int tensor, const ckt_layout *layout, int *view,
                               ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "view", err))) return s;
    if (tensor < 0 || tensor >= k->ntensors || k->tensors[tensor].mem != CKT_MEM_LDS)
        return ckt_fail(err, CKT_EINVAL, "view: not an LDS tensor");
    if (!layout) return ckt_fail(err, CKT_EINVAL, "view: a layout is required");
    const ckt_ktensor *p = &k->tensors[tensor];
    int rank = 0;
    int64_t span = 0;
    if ((s = lds_layout_span("view", layout, p->swizzled ? &p->sw : NULL, &rank, &span, err)))
        return s;
    if (span > p->cosize)
        return ckt_fail(err, CKT_EINVAL,
                        "view: the layout spans %lld elements, more than the %lld of '%s'",
                        (long long)span, (long long)p->cosize, p->name);
    ckt_ktensor *v;
    if ((s = new_tensor(k, CKT_MEM_LDS, p->dtype, rank, NULL, &v, view, err))) return s;
    p = &k->tensors[tensor]; /* new_tensor may move the array */
    char name[sizeof v->name];
    memcpy(name, v->name, sizeof name);
    *v = *p;
    memcpy(v->name, name, sizeof name);
    v->layout = *layout;
    v->rank = rank;
    return CKT_OK;
}

ckt_status ckt_kernel_copy_async(ckt_kernel *k, int dst_window, int src_window, int dist,
                                 int vector_dim, int64_t spv, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "copy_async", err))) return s;
    if (dist < 0 || dist >= k->ndists)
        return ckt_fail(err, CKT_EINVAL, "copy_async: a distribution is required");
    if ((s = check_access(k, "copy_async", src_window, &k->dists[dist], vector_dim, spv, err)) ||
        (s = check_access(k, "copy_async", dst_window, &k->dists[dist], vector_dim, spv, err)))
        return s;
    const ckt_ktensor *src = &k->tensors[k->windows[src_window].tensor],
                      *dst = &k->tensors[k->windows[dst_window].tensor];
    if (src->mem != CKT_MEM_GLOBAL)
        return ckt_fail(err, CKT_EINVAL,
                        "copy_async: the source must be a window of a global tensor (it is %s)",
                        ckt_memory_name(src->mem));
    if (dst->mem != CKT_MEM_LDS)
        return ckt_fail(err, CKT_EINVAL,
                        "copy_async: the destination must be a window of an LDS tensor (it is %s)",
                        ckt_memory_name(dst->mem));
    if (src->dtype != dst->dtype)
        return ckt_fail(err, CKT_EINVAL,
                        "copy_async: the source holds %s but the destination %s (an asynchronous "
                        "copy does not convert)",
                        ckt_dtype_name(src->dtype), ckt_dtype_name(dst->dtype));
    ckt_kop op = access_op(CKT_OP_COPY_ASYNC, dst_window, dist, vector_dim, spv);
    op.ninputs = 1;
    op.inputs[0] = src_window;
    return push_op(k, &op, err);
}

/* commit and wait order asynchronous copies: without one issued before them they have nothing
 * to order (and a dialect has no copy queue to look at), so they are refused */
static ckt_status check_async_issued(const ckt_kernel *k, const char *fn, ckt_error *err)
{
    for (int i = 0; i < k->nops; i++)
        if (k->ops[i].kind == CKT_OP_COPY_ASYNC) return CKT_OK;
    return ckt_fail(err, CKT_EINVAL,
                    "%s: no asynchronous copy was issued before it (b:copy(dst, src, {async = "
                    "true}) or b:blockwise_copy{..., async = true}); use b:sync() for a barrier "
                    "alone",
                    fn);
}

ckt_status ckt_kernel_commit(ckt_kernel *k, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "commit", err)) || (s = check_async_issued(k, "commit", err))) return s;
    ckt_kop op = new_op(CKT_OP_COMMIT);
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_wait(ckt_kernel *k, int64_t pending, bool sync, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "wait", err))) return s;
    if (pending < 0 || pending > 7)
        return ckt_fail(err, CKT_EINVAL, "wait: pending %lld outside 0..7", (long long)pending);
    if (sync && k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "wait: inside a branch whose condition depends on the thread id (its "
                        "barrier would not be reached by every thread)");
    if ((s = check_async_issued(k, "wait", err))) return s;
    ckt_kop op = new_op(CKT_OP_WAIT);
    op.spv = pending;
    op.b = sync ? ckt_expr_int(&k->ex, 1) : CKT_EXPR_NONE;
    if ((s = expr_ok(k, err))) return s;
    return push_op(k, &op, err);
}

/* ---------------------------------------------------------------- bulk tensor copies, mbarriers */

int ckt_kernel_nmbars(const ckt_kernel *k) { return k ? k->nmbars : 0; }
const ckt_kmbar *ckt_kernel_mbar(const ckt_kernel *k, int i)
{
    return k && i >= 0 && i < k->nmbars ? &k->mbars[i] : NULL;
}
int ckt_kernel_ntmas(const ckt_kernel *k) { return k ? k->ntmas : 0; }
const ckt_ktma *ckt_kernel_tma(const ckt_kernel *k, int i)
{
    return k && i >= 0 && i < k->ntmas ? &k->tmas[i] : NULL;
}

ckt_status ckt_kernel_mbarriers(ckt_kernel *k, int64_t count, int64_t arrivals, int *set,
                                ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "mbarriers", err))) return s;
    if (count < 1 || count > 32)
        return ckt_fail(err, CKT_EINVAL, "mbarriers: count %lld outside 1..32", (long long)count);
    if (arrivals < 1 || arrivals > k->block)
        return ckt_fail(err, CKT_EINVAL,
                        "mbarriers: arrivals %lld outside 1..%lld (the block's threads)",
                        (long long)arrivals, (long long)k->block);
    if (k->nmbars == CKT_K_MAX_MBARS)
        return ckt_fail(err, CKT_ECAPACITY, "mbarriers: more than %d sets", CKT_K_MAX_MBARS);
    ckt_kmbar *m = &k->mbars[k->nmbars];
    m->count = count;
    m->arrivals = arrivals;
    m->lds_offset = -1; /* placed after the LDS tensors by ckt_kernel_finish */
    if (set) *set = k->nmbars;
    k->nmbars++;
    return CKT_OK;
}

/* mbarrier `bar` of set `set`: a block-uniform integer expression provably in 0..count-1 */
static ckt_status check_mbar(ckt_kernel *k, const char *fn, int set, ckt_expr_id bar,
                             ckt_error *err)
{
    if (set < 0 || set >= k->nmbars)
        return ckt_fail(err, CKT_EINVAL, "%s: no such set of mbarriers", fn);
    if (!is_index(k, bar) || !ckt_expr_uniform(&k->ex, bar))
        return ckt_fail(err, CKT_EINVAL, "%s: the mbarrier must be a block-uniform integer", fn);
    int64_t lo, hi;
    ckt_expr_range(&k->ex, bar, &lo, &hi);
    if (lo < 0 || hi > k->mbars[set].count - 1)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: the mbarrier is not provably in 0..%lld (range %lld..%lld)", fn,
                        (long long)(k->mbars[set].count - 1), (long long)lo, (long long)hi);
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: inside a branch whose condition depends on the thread id", fn);
    return CKT_OK;
}

/* the global tensor's dimension of stride 1 (a tensor map's innermost); -1 when none */
static int contiguous_dim(const ckt_kernel *k, const ckt_ktensor *t)
{
    for (int d = 0; d < t->rank; d++) {
        int64_t v;
        if (ckt_expr_is_const(&k->ex, t->stride[d], &v) && v == 1) return d;
    }
    return -1;
}

/* the tensor map of tensor `tensor` for this box (rank dimensions: dims, box; innermost first) and
 * swizzle: an existing one, or a new one with its derived parameter */
static ckt_status tensor_map(ckt_kernel *k, int tensor, int inner, int rank, const int *dims,
                             const int64_t *box, int W, const ckt_swizzle *lds_sw, bool clip,
                             int *index, ckt_error *err)
{
    const ckt_ktensor *t = &k->tensors[tensor];
    for (int i = 0; i < k->ntmas; i++) {
        const ckt_ktma *m = &k->tmas[i];
        if (m->tensor == tensor && m->rank == rank && m->swizzle_bytes == W &&
            (m->rows != CKT_EXPR_NONE) == clip &&
            !memcmp(m->dims, dims, (size_t)rank * sizeof *dims) &&
            !memcmp(m->box, box, (size_t)rank * sizeof *box)) {
            *index = i;
            return CKT_OK;
        }
    }
    if (k->ntmas == CKT_K_MAX_TMAS)
        return ckt_fail(err, CKT_ECAPACITY, "tma_copy: more than %d tensor maps", CKT_K_MAX_TMAS);
    if (k->nparams == CKT_K_MAX_PARAMS)
        return ckt_fail(err, CKT_ECAPACITY, "tma_copy: more than %d parameters with the tensor map",
                        CKT_K_MAX_PARAMS);
    char name[32];
    snprintf(name, sizeof name, "ckt_tmap%d", k->ntmas); /* user names never start with ckt_ */
    ckt_kparam *p = param_slot(k, name, CKT_PARAM_TMAP);
    p->derived = true;
    p->tma = k->ntmas;
    p->dtype = t->dtype;
    p->expr = CKT_EXPR_NONE;
    ckt_ktma *m = &k->tmas[k->ntmas];
    m->tensor = tensor;
    m->param = k->nparams;
    m->inner = inner;
    m->rank = rank;
    m->box_bytes = (int64_t)ckt_dtype_size(t->dtype);
    for (int d = 0; d < rank; d++) {
        m->dims[d] = dims[d];
        m->box[d] = box[d];
        m->box_bytes *= box[d];
    }
    m->swizzle_bytes = W;
    if (W) m->sw = *lds_sw;
    m->rows =
        clip ? ckt_expr_binary(&k->ex, CKT_E_MIN, ckt_expr_int(&k->ex, box[1]), t->shape[dims[1]])
             : CKT_EXPR_NONE;
    *index = k->ntmas++;
    return param_commit(k, NULL);
}

/* The source modes a copy's box spans, as the destination's two: a rank-2 source's own; above
 * that, the source window's modes 1 long are left out, outermost first, until two remain
 * (kept[0] < kept[1]). -1 when more than two modes are longer than 1. */
static int box_modes(const ckt_kwindow *src, int rank, int kept[2])
{
    int drop = rank - 2, n = 0;
    for (int d = 0; d < rank; d++) {
        if (drop > 0 && src->lengths[d] == 1) {
            drop--;
            continue;
        }
        if (n == 2) return -1;
        kept[n++] = d;
    }
    return 0;
}

/* The tensor map and box of a bulk copy between window gw of a global tensor and window lw of a
 * rank-2 LDS tensor, either way (load: global -> LDS, tma_copy; else LDS -> global, tma_store, the
 * name errors give), the rules of ckt_kernel_tma_copy checked; *map the map's index. (src, dst:
 * the global and the LDS side, whichever way the data goes.) */
static ckt_status bulk_box(ckt_kernel *k, bool load, int gw, int lw, int64_t parts, bool clip,
                           int *map, ckt_error *err)
{
    ckt_status s;
    const char *fn = load ? "tma_copy" : "tma_store";
    const ckt_kwindow *sw = &k->windows[gw], *dw = &k->windows[lw];
    const ckt_ktensor *src = &k->tensors[sw->tensor], *dst = &k->tensors[dw->tensor];
    if (src->mem != CKT_MEM_GLOBAL || dst->mem != CKT_MEM_LDS)
        return load ? ckt_fail(err, CKT_EINVAL,
                               "tma_copy: copies a window of a global tensor (here %s) into a "
                               "window of an LDS tensor (here %s)",
                               ckt_memory_name(src->mem), ckt_memory_name(dst->mem))
                    : ckt_fail(err, CKT_EINVAL,
                               "tma_store: stores a window of an LDS tensor (here %s) into a "
                               "window of a global tensor (here %s)",
                               ckt_memory_name(dst->mem), ckt_memory_name(src->mem));
    if (src->limited)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: '%s' is a limited tensor (its shape is not known at launch, which a "
                        "tensor map needs)",
                        fn, src->name);
    if (!load && k->params[src->param].is_const)
        return ckt_fail(err, CKT_EINVAL, "tma_store: '%s' is read-only (a const pointer)",
                        src->name);
    if (src->dtype != dst->dtype)
        return ckt_fail(err, CKT_EINVAL, "%s: the source holds %s but the destination %s", fn,
                        ckt_dtype_name(load ? src->dtype : dst->dtype),
                        ckt_dtype_name(load ? dst->dtype : src->dtype));
    if (src->rank < 2 || src->rank > CKT_TMA_MAX_RANK || dst->rank != 2)
        return ckt_fail(err, CKT_EINVAL, "%s: a %s of rank 2..%d and a rank-2 %s (here %d and %d)",
                        fn, load ? "source" : "destination", CKT_TMA_MAX_RANK,
                        load ? "destination" : "source", src->rank, dst->rank);
    int kept[2];
    if (box_modes(sw, src->rank, kept) < 0)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: the %s window is longer than 1 in more than two dims (a box fills a "
                        "rank-2 LDS tile)",
                        fn, load ? "source" : "destination");
    for (int d = 0; d < 2; d++)
        if (sw->lengths[kept[d]] != dw->lengths[d])
            return ckt_fail(err, CKT_EINVAL,
                            "%s: the windows differ in dim %d (%lld and %lld elements)", fn, d,
                            (long long)sw->lengths[kept[d]], (long long)dw->lengths[d]);
    int inner = contiguous_dim(k, src);
    if (inner < 0)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: no dimension of '%s' has stride 1 (a tensor map's innermost "
                        "dimension is contiguous)",
                        fn, src->name);
    if (inner != kept[0] && inner != kept[1])
        return ckt_fail(err, CKT_EINVAL,
                        "%s: dim %d of '%s' is the contiguous one, but the window is 1 long "
                        "there (the box's innermost extent must be at least 16 bytes)",
                        fn, inner, src->name);
    int64_t origin[2];
    bool moved = window_ops(k, CKT_OP_ADD, lw) > 0;
    for (int d = 0; d < 2; d++)
        if (!ckt_expr_is_const(&k->ex, dw->init[d], &origin[d]) || moved)
            return ckt_fail(err, CKT_EINVAL,
                            "%s: the %s window's origin must be constant (dim %d is not); "
                            "choose the stage with t:stage(i)",
                            fn, load ? "destination" : "source (LDS)", d);
    int W, dinner = inner == kept[0] ? 0 : 1;
    int64_t repeat = dst->stages > 1 ? dst->stage_elems * (int64_t)ckt_dtype_size(dst->dtype) : 0;
    if ((s = ckt_tma_check_tile(&dst->layout, dst->swizzled ? &dst->sw : NULL, dst->dtype,
                                dst->lds_offset, repeat, origin, dw->lengths, dinner, &W, err))) {
        char pre[32];
        snprintf(pre, sizeof pre, "%s: ", fn);
        return ckt_fail_prefix(err, pre);
    }
    /* the map's dimensions: the inner mode, the tile's other one, then the rest in mode order */
    int dims[CKT_TMA_MAX_RANK], n = 0;
    int64_t box[CKT_TMA_MAX_RANK];
    dims[n++] = inner;
    dims[n++] = kept[1 - dinner];
    for (int d = 0; d < src->rank; d++)
        if (d != kept[0] && d != kept[1]) dims[n++] = d;
    for (int d = 0; d < n; d++) box[d] = sw->lengths[dims[d]];
    if (parts > 1) {
        /* a block's part: box[1] / parts rows of the box, landing whole swizzle periods apart
         * (the swizzle is a function of the LDS address; 128 bytes without one) */
        int64_t row = box[0] * (int64_t)ckt_dtype_size(src->dtype), period = W ? 8 * W : 128;
        if (box[1] % parts || (box[1] / parts * row) % period)
            return ckt_fail(err, CKT_EINVAL,
                            "tma_copy: a multicast box of %lld x %lld elements splits into %lld "
                            "parts of whole %lld-byte swizzle periods only if its %lld rows of "
                            "%lld bytes divide into them",
                            (long long)box[0], (long long)box[1], (long long)parts,
                            (long long)period, (long long)box[1], (long long)row);
        box[1] /= parts;
    }
    return tensor_map(k, sw->tensor, inner, n, dims, box, W, &dst->sw, clip, map, err);
}

static ckt_status tma_copy(ckt_kernel *k, int dst_window, int src_window, int set, ckt_expr_id bar,
                           int64_t parts, bool clip, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "tma_copy", err)) || (s = check_mbar(k, "tma_copy", set, bar, err)))
        return s;
    if (dst_window < 0 || dst_window >= k->nwindows || src_window < 0 || src_window >= k->nwindows)
        return ckt_fail(err, CKT_EINVAL, "tma_copy: no such window");
    int map = -1;
    if ((s = bulk_box(k, true, src_window, dst_window, parts, clip, &map, err))) return s;
    ckt_kop op = new_op(CKT_OP_TMA_COPY);
    op.w = dst_window;
    op.r = map;
    op.a = bar;
    op.spv = parts;
    op.ninputs = 2;
    op.inputs[0] = src_window;
    op.inputs[1] = set;
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_tma_copy(ckt_kernel *k, int dst_window, int src_window, int set,
                               ckt_expr_id bar, ckt_error *err)
{
    return tma_copy(k, dst_window, src_window, set, bar, 1, false, err);
}

ckt_status ckt_kernel_tma_copy_clipped(ckt_kernel *k, int dst_window, int src_window, int set,
                                       ckt_expr_id bar, ckt_error *err)
{
    return tma_copy(k, dst_window, src_window, set, bar, 1, true, err);
}

ckt_status ckt_kernel_tma_copy_multicast(ckt_kernel *k, int dst_window, int src_window, int set,
                                         ckt_expr_id bar, ckt_error *err)
{
    if (k && k->cluster < 2)
        return ckt_fail(err, CKT_EINVAL,
                        "tma_copy: multicast needs a cluster of blocks (b:cluster(n) first)");
    return tma_copy(k, dst_window, src_window, set, bar, k ? k->cluster : 1, false, err);
}

ckt_status ckt_kernel_tma_store(ckt_kernel *k, int dst_window, int src_window, bool wait,
                                ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "tma_store", err))) return s;
    if (dst_window < 0 || dst_window >= k->nwindows || src_window < 0 || src_window >= k->nwindows)
        return ckt_fail(err, CKT_EINVAL, "tma_store: no such window");
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "tma_store: inside a branch that depends on the thread id (one thread of "
                        "the block issues it)");
    int map = -1;
    if ((s = bulk_box(k, false, dst_window, src_window, 1, false, &map, err))) return s;
    ckt_kop op = new_op(CKT_OP_TMA_STORE);
    op.w = src_window; /* (the LDS window, as a copy's: its origin may not move) */
    op.r = map;
    op.spv = wait ? 1 : 0;
    op.ninputs = 1;
    op.inputs[0] = dst_window;
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_tma_store_wait(ckt_kernel *k, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "tma_store_wait", err))) return s;
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "tma_store_wait: inside a branch that depends on the thread id (thread 0 "
                        "of the block issued the stores)");
    ckt_kop op = new_op(CKT_OP_TMA_STORE_WAIT);
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_mbar_wait(ckt_kernel *k, int set, ckt_expr_id bar, ckt_expr_id phase,
                                ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "mbarrier_wait", err)) ||
        (s = check_mbar(k, "mbarrier_wait", set, bar, err)))
        return s;
    if (!is_index(k, phase) || !ckt_expr_uniform(&k->ex, phase))
        return ckt_fail(err, CKT_EINVAL,
                        "mbarrier_wait: the phase must be a block-uniform integer");
    ckt_kop op = new_op(CKT_OP_MBAR_WAIT);
    op.a = bar;
    op.b = ckt_expr_binary(&k->ex, CKT_E_MOD, phase, ckt_expr_int(&k->ex, 2));
    op.ninputs = 1;
    op.inputs[0] = set;
    if ((s = expr_ok(k, err))) return s;
    return push_op(k, &op, err);
}

/* the first operation that is not a window origin's (SET / ADD), or -1: what a kernel-wide setting
 * (a cluster, the producer's region) must come before */
static int first_thread_op(const ckt_kernel *k)
{
    for (int i = 0; i < k->nops; i++)
        if (k->ops[i].kind != CKT_OP_SET && k->ops[i].kind != CKT_OP_ADD) return i;
    return -1;
}

static ckt_status mbar_arrive(ckt_kernel *k, int set, ckt_expr_id bar, bool cluster, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "mbarrier_arrive", err)) ||
        (s = check_mbar(k, "mbarrier_arrive", set, bar, err)))
        return s;
    if (k->in_producer)
        return ckt_fail(err, CKT_EINVAL,
                        "mbarrier_arrive: the block's threads arrive; the producer warp's copies "
                        "arrive by themselves");
    if (cluster && k->cluster < 2)
        return ckt_fail(err, CKT_EINVAL,
                        "mbarrier_arrive: arriving in the cluster needs a cluster of blocks "
                        "(b:cluster(n) first)");
    if (cluster && k->block % 32)
        return ckt_fail(err, CKT_EINVAL,
                        "mbarrier_arrive: each warp arrives in the cluster, but the block's %lld "
                        "threads are not whole warps",
                        (long long)k->block);
    int64_t want = cluster ? k->block / 32 * k->cluster : k->block;
    if (k->mbars[set].arrivals != want)
        return ckt_fail(err, CKT_EINVAL,
                        cluster
                            ? "mbarrier_arrive: each of the block's warps arrives in each of the "
                              "cluster's blocks, but the set expects %lld arrivals a phase, "
                              "not %lld"
                            : "mbarrier_arrive: every thread of the block arrives, but the "
                              "set expects %lld arrivals a phase and the block has %lld "
                              "threads",
                        (long long)k->mbars[set].arrivals, (long long)want);
    ckt_kop op = new_op(CKT_OP_MBAR_ARRIVE);
    op.a = bar;
    op.spv = cluster ? 1 : 0;
    op.ninputs = 1;
    op.inputs[0] = set;
    return push_op(k, &op, err);
}

ckt_status ckt_kernel_mbar_arrive(ckt_kernel *k, int set, ckt_expr_id bar, ckt_error *err)
{
    return mbar_arrive(k, set, bar, false, err);
}

ckt_status ckt_kernel_mbar_arrive_cluster(ckt_kernel *k, int set, ckt_expr_id bar, ckt_error *err)
{
    return mbar_arrive(k, set, bar, true, err);
}

ckt_status ckt_kernel_atomic_add(ckt_kernel *k, int tensor, ckt_expr_id index, int64_t value,
                                 ckt_expr_id *old, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "atomic_add", err))) return s;
    if (!old) return ckt_fail(err, CKT_EINVAL, "atomic_add: NULL result");
    if (tensor < 0 || tensor >= k->ntensors)
        return ckt_fail(err, CKT_EINVAL, "atomic_add: no such tensor");
    const ckt_ktensor *t = &k->tensors[tensor];
    int64_t one = 0;
    if (t->mem != CKT_MEM_GLOBAL || t->rank != 1 || t->limited || t->dtype != CKT_I32 ||
        !ckt_expr_is_const(&k->ex, t->stride[0], &one) || one != 1)
        return ckt_fail(err, CKT_EINVAL,
                        "atomic_add: '%s' is not a rank-1 global i32 tensor with stride 1 (not "
                        "limited)",
                        t->name);
    if (k->params[t->param].is_const)
        return ckt_fail(err, CKT_EINVAL, "atomic_add: '%s' is read-only (a const pointer)",
                        t->name);
    if (!is_index(k, index) || !ckt_expr_uniform(&k->ex, index))
        return ckt_fail(err, CKT_EINVAL,
                        "atomic_add: the index must be a block-uniform integer expression");
    if (value < INT32_MIN || value > INT32_MAX)
        return ckt_fail(err, CKT_EINVAL, "atomic_add: the value %lld is outside the i32 range",
                        (long long)value);
    if (k->in_producer)
        return ckt_fail(err, CKT_EINVAL,
                        "atomic_add: the block's threads add (not the producer warp)");
    if (k->divergent)
        return ckt_fail(err, CKT_EINVAL,
                        "atomic_add: inside a branch that depends on the thread id (the block "
                        "adds once, every thread taking part)");
    ckt_expr_id v;
    if ((s = ckt_kernel_var_facts(k, "old", ckt_expr_int(&k->ex, 0), INT32_MIN, INT32_MAX, 1, &v,
                                  err)))
        return s;
    ckt_kop op = new_op(CKT_OP_ATOMIC_ADD);
    op.a = v;
    op.b = index;
    op.spv = value;
    op.ninputs = 1;
    op.inputs[0] = tensor;
    if ((s = push_op(k, &op, err))) return s;
    *old = v;
    return CKT_OK;
}

ckt_status ckt_kernel_cluster(ckt_kernel *k, int64_t n, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "cluster", err))) return s;
    if (n != 2 && n != 4 && n != 8)
        return ckt_fail(err, CKT_EINVAL, "cluster: %lld blocks a cluster (2, 4 or 8)",
                        (long long)n);
    if (k->cluster > 1) return ckt_fail(err, CKT_EINVAL, "cluster: the kernel has one already");
    int first = first_thread_op(k);
    if (first >= 0)
        return ckt_fail(err, CKT_EINVAL,
                        "cluster: operation %d comes before it (a kernel's blocks are in clusters "
                        "from its start)",
                        first);
    k->cluster = n;
    return CKT_OK;
}

int64_t ckt_kernel_cluster_size(const ckt_kernel *k) { return k ? k->cluster : 0; }

ckt_status ckt_kernel_named_barrier(ckt_kernel *k, ckt_expr_id id, int64_t threads, bool arrive,
                                    ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "named_barrier", err))) return s;
    if (k->in_producer)
        return ckt_fail(err, CKT_EINVAL,
                        "named_barrier: the producer's one elected thread cannot join a barrier of "
                        "whole warps");
    if (!is_index(k, id))
        return ckt_fail(err, CKT_EINVAL, "named_barrier: id must be an integer expression");
    int64_t lo, hi;
    ckt_expr_range(&k->ex, id, &lo, &hi);
    if (lo < 2 || hi > 15)
        return ckt_fail(err, CKT_EINVAL,
                        "named_barrier: id is not provably in 2..15 (range %lld..%lld; 0 is the "
                        "block's barrier, 1 its threads' beside a producer)",
                        (long long)lo, (long long)hi);
    if (threads < 32 || threads > k->block || threads % 32)
        return ckt_fail(err, CKT_EINVAL,
                        "named_barrier: threads %lld is not a multiple of 32 in 32..%lld (the "
                        "block)",
                        (long long)threads, (long long)k->block);
    ckt_kop op = new_op(CKT_OP_NAMED_BARRIER);
    op.a = id;
    op.b = ckt_expr_int(&k->ex, arrive ? 1 : 0);
    op.spv = threads;
    if ((s = expr_ok(k, err))) return s;
    return push_op(k, &op, err);
}

int64_t ckt_kernel_producer_threads(const ckt_kernel *k)
{
    return k && k->producer ? (k->producer_wg ? 128 : 32) : 0;
}

/* the block's warpgroups share what the producer warpgroup leaves of a quarter of the register
 * file (16 K: one warp of each warpgroup), in multiples of 8 (setmaxnreg's) */
int64_t ckt_kernel_consumer_registers(const ckt_kernel *k)
{
    if (!k || !k->producer_wg) return 0;
    int64_t r = (16384 / 32 - CKT_PRODUCER_REGISTERS) / (k->block / 128) / 8 * 8;
    return r > 256 ? 256 : r;
}

static ckt_status producer_region(ckt_kernel *k, bool warpgroup, ckt_error *err);

ckt_status ckt_kernel_producer(ckt_kernel *k, ckt_error *err)
{
    return producer_region(k, false, err);
}

ckt_status ckt_kernel_producer_warpgroup(ckt_kernel *k, ckt_error *err)
{
    if (k && (k->block % 128 != 0 || k->block < 256))
        return ckt_fail(err, CKT_EINVAL,
                        "producer: a producer warpgroup needs a block of whole warpgroups, at "
                        "least two (the block has %lld threads)",
                        (long long)k->block);
    return producer_region(k, true, err);
}

static ckt_status producer_region(ckt_kernel *k, bool warpgroup, ckt_error *err)
{
    ckt_status s;
    if ((s = check_open(k, "producer", err))) return s;
    if (k->producer) return ckt_fail(err, CKT_EINVAL, "producer: the kernel has one already");
    if (k->depth > 0)
        return ckt_fail(err, CKT_EINVAL,
                        "producer: inside a loop or branch (it is the whole "
                        "producer warp's program)");
    int first = first_thread_op(k);
    if (first >= 0)
        return ckt_fail(err, CKT_EINVAL,
                        "producer: operation %d of the block's threads comes before it (the "
                        "producer warp's threads would run it too)",
                        first);
    int64_t extra = warpgroup ? 128 : 32;
    if (k->block + extra > CKT_K_MAX_BLOCK)
        return ckt_fail(err, CKT_EINVAL,
                        "producer: the block's %lld threads and the producer %s's %lld exceed %d",
                        (long long)k->block, warpgroup ? "warpgroup" : "warp", (long long)extra,
                        CKT_K_MAX_BLOCK);
    ckt_kop op = new_op(CKT_OP_PRODUCER);
    if ((s = push_op(k, &op, err))) return s;
    k->nest[k->depth++] = k->nops - 1;
    k->producer = k->in_producer = true;
    k->producer_wg = warpgroup;
    return CKT_OK;
}
