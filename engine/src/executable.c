/* The kernel pipeline (ckt/executable.h): kernel -> source -> binary -> checked launches. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/emit.h"
#include "ckt/executable.h"
#include "ckt/tma.h"
#include "runtime_internal.h"

/* A tensor map as the launch passes it (CUtensorMap: 128 bytes, 64-byte aligned). */
typedef struct {
    _Alignas(64) unsigned char bytes[128];
} tensor_map;

/* What one launch learns that the next may reuse: everything checked depends only on the
 * integer arguments, the buffers' sizes, the grid and the device, so a launch with the same
 * key skips the checks (the application loop's case); a tensor map depends on its tensor's
 * address, sizes and strides, so it is encoded again only when they change. */
typedef struct launch_cache {
    pthread_mutex_t lock;
    bool valid, empty;
    const ckt_device *dev;
    int64_t key[CKT_K_MAX_PARAMS + 3];
    struct {
        bool valid;
        const void *base;
        int64_t shape[CKT_TMA_MAX_RANK], stride[CKT_TMA_MAX_RANK];
        int tile_checked_inner; /* the innermost mode the LDS tile was checked for (-1: none) */
        tensor_map map;
    } tma[CKT_K_MAX_TMAS];
} launch_cache;

struct ckt_executable {
    const ckt_kernel *k; /* borrowed */
    ckt_target_record target;
    char *source;
    ckt_binary *bin;
    int64_t dynamic_lds;
    ckt_param sig[CKT_K_MAX_PARAMS];
    int sig_index[CKT_K_MAX_PARAMS]; /* the kernel parameter index of each signature entry */
    int nsig;
    /* what the binary takes: the arguments and the parameters derived at launch (tensor maps) */
    ckt_param launch_sig[CKT_K_MAX_PARAMS];
    int launch_index[CKT_K_MAX_PARAMS], nlaunch;
    int of_param[CKT_K_MAX_PARAMS]; /* kernel parameter -> argument (-1: none) */
    int64_t block;                  /* threads a block (the producer's included) */
    launch_cache *cache;            /* mutable behind a const executable */
};

/* wgmma writes its accumulators asynchronously: ptxas spilling them (to local memory and back
 * around the MMAs) gave wrong results on an H200 (an f32-output GEMM, a producer warp capping the
 * registers at 168), so such a binary is refused rather than run */
static ckt_status check_wgmma_spills(const ckt_kernel *k, const ckt_binary *bin, ckt_error *err)
{
    const ckt_resources *r = ckt_binary_resources(bin);
    if (!r || r->spill_stores <= 0) return CKT_OK;
    for (int i = 0; i < ckt_kernel_nops(k); i++)
        if (ckt_kernel_op(k, i)->kind == CKT_OP_WGMMA)
            return ckt_fail(err, CKT_EINVAL,
                            "compile: the kernel spills %lld bytes of registers (ptxas, %lld "
                            "registers used) and has wgmma, whose accumulators must stay in "
                            "registers while the MMAs run: use a smaller tile or output, or fewer "
                            "threads beside the block's",
                            (long long)r->spill_stores, (long long)r->registers);
    return CKT_OK;
}

/* a kernel that moves data (CKT_COMPILE_LIGHT): no matrix instructions, no reductions over the
 * block. (NVRTC's cheaper level took layernorm's registers from 65 to 120, which a 1024-thread
 * block cannot hold: it spilled; the data movers kept within 6 registers: docs/jit.md.) */
static bool light(const ckt_kernel *k)
{
    for (int i = 0; i < ckt_kernel_nops(k); i++) {
        ckt_kop_kind kind = ckt_kernel_op(k, i)->kind;
        if (kind == CKT_OP_GEMM || kind == CKT_OP_WGMMA || kind == CKT_OP_BLOCK_REDUCE)
            return false;
    }
    return true;
}

ckt_status ckt_kernel_compile(ckt_context *ctx, const ckt_kernel *k, const char *target,
                              const ckt_kernel_compile_options *opts, ckt_executable **out,
                              ckt_error *err)
{
    ckt_target_record t;
    if (!k || !out) return ckt_fail(err, CKT_EINVAL, "compile: %s is NULL", k ? "out" : "kernel");
    *out = NULL;
    ckt_status s = ckt_target_parse(target, &t, err);
    return s ? s : ckt_kernel_compile_record(ctx, k, &t, opts, out, err);
}

ckt_status ckt_kernel_compile_record(ckt_context *ctx, const ckt_kernel *k,
                                     const ckt_target_record *target,
                                     const ckt_kernel_compile_options *opts, ckt_executable **out,
                                     ckt_error *err)
{
    static const ckt_kernel_compile_options none = {0, NULL, 0};
    if (!k || !out || !target)
        return ckt_fail(err, CKT_EINVAL, "compile: %s is NULL",
                        !k     ? "kernel"
                        : !out ? "out"
                               : "target");
    *out = NULL;
    if (!opts) opts = &none;
    ckt_executable *e = calloc(1, sizeof *e);
    if (!e) return ckt_fail(err, CKT_ENOMEM, "compile: out of memory");
    e->k = k;
    ckt_status s;
    e->target = *target;
    if ((s = ckt_emit(k, &e->target, &e->source, err))) goto fail;
    ckt_compile_request req = {e->target.name, e->source, ckt_kernel_name(k), opts->options,
                               opts->noptions};
    unsigned flags = opts->flags | (light(k) ? (unsigned)CKT_COMPILE_LIGHT : 0u);
    if ((s = ckt_compile_record(ctx, &e->target, &req, flags, &e->bin, err)) ||
        (s = check_wgmma_spills(k, e->bin, err)))
        goto fail;
    e->dynamic_lds = ckt_emit_dynamic_lds_bytes(k, &e->target);
    e->block = ckt_kernel_block(k) + ckt_kernel_producer_threads(k);
    if (!(e->cache = calloc(1, sizeof *e->cache))) {
        s = ckt_fail(err, CKT_ENOMEM, "compile: out of memory");
        goto fail;
    }
    pthread_mutex_init(&e->cache->lock, NULL);
    for (int i = 0; i < CKT_K_MAX_TMAS; i++) e->cache->tma[i].tile_checked_inner = -1;
    for (int i = 0; i < CKT_K_MAX_PARAMS; i++) e->of_param[i] = -1;
    for (int i = 0; i < ckt_kernel_nparams(k); i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (p->specialized) continue;
        e->launch_sig[e->nlaunch] = (ckt_param){p->kind, p->name};
        e->launch_index[e->nlaunch++] = i;
        if (p->derived) continue;
        e->sig[e->nsig] = (ckt_param){p->kind, p->name};
        e->of_param[i] = e->nsig;
        e->sig_index[e->nsig++] = i;
    }
    *out = e;
    return CKT_OK;
fail:
    ckt_exe_free(e);
    return s;
}

void ckt_exe_free(ckt_executable *e)
{
    if (!e) return;
    if (e->cache) pthread_mutex_destroy(&e->cache->lock);
    free(e->cache);
    free(e->source);
    ckt_binary_free(e->bin);
    free(e);
}

const ckt_kernel *ckt_exe_kernel(const ckt_executable *e) { return e ? e->k : NULL; }
ckt_binary *ckt_exe_binary(const ckt_executable *e) { return e ? e->bin : NULL; }
const ckt_target_record *ckt_exe_target(const ckt_executable *e) { return e ? &e->target : NULL; }
const char *ckt_exe_source(const ckt_executable *e) { return e ? e->source : NULL; }
int64_t ckt_exe_dynamic_lds_bytes(const ckt_executable *e) { return e ? e->dynamic_lds : 0; }
const ckt_param *ckt_exe_signature(const ckt_executable *e, int *count)
{
    if (count) *count = e ? e->nsig : 0;
    return e ? e->sig : NULL;
}

/* Everything the kernel needs of its arguments and grid, checked before anything launches:
 * the binary suits the device, the launch conditions, and that every buffer covers what the
 * kernel's accesses can touch at these sizes and this grid (kernel_bounds.c). *empty: a
 * zero-sized problem, which runs no blocks. */
static ckt_status check_launch(const ckt_executable *e, ckt_device *dev, const int64_t grid[3],
                               const ckt_arg *args, int nargs, const int64_t *values, bool *empty,
                               ckt_error *err)
{
    uint64_t bytes[CKT_K_MAX_PARAMS];
    for (int i = 0; i < CKT_K_MAX_PARAMS; i++) bytes[i] = UINT64_MAX; /* not a pointer */
    ckt_status s = ckt_runtime_check_binary(dev, e->bin, &e->target, err);
    if (s || (s = ckt_kernel_check_launch(e->k, values, err))) return s;
    for (int d = 0; d < 3; d++)
        if (grid[d] < 1)
            return ckt_fail(err, CKT_EINVAL, "launch: grid.%c is %lld (every extent must be >= 1)",
                            "xyz"[d], (long long)grid[d]);
    int64_t cluster = ckt_kernel_cluster_size(e->k);
    if (grid[0] % cluster)
        return ckt_fail(err, CKT_EINVAL,
                        "launch: grid.x is %lld, not a multiple of the kernel's clusters of %lld "
                        "blocks",
                        (long long)grid[0], (long long)cluster);
    for (int i = 0; i < nargs; i++)
        if (args[i].kind == CKT_PARAM_PTR)
            bytes[e->sig_index[i]] = (uint64_t)ckt_buffer_size(args[i].v.buffer);
    return ckt_kernel_check_bounds(e->k, values, grid, bytes, empty, err);
}

/* check_launch, or what the last launch with the same key found (the key: each argument's
 * value or buffer size, then the grid). */
static ckt_status check_cached(const ckt_executable *e, ckt_device *dev, const int64_t grid[3],
                               const ckt_arg *args, int nargs, const int64_t *values, bool *empty,
                               ckt_error *err)
{
    int64_t key[CKT_K_MAX_PARAMS + 3];
    for (int i = 0; i < nargs; i++)
        key[i] = args[i].kind == CKT_PARAM_PTR ? (int64_t)ckt_buffer_size(args[i].v.buffer)
                                               : values[e->sig_index[i]];
    memcpy(key + nargs, grid, 3 * sizeof *grid);
    size_t key_bytes = (size_t)(nargs + 3) * sizeof *key;
    launch_cache *c = e->cache;
    pthread_mutex_lock(&c->lock);
    bool hit = c->valid && c->dev == dev && !memcmp(c->key, key, key_bytes);
    *empty = c->empty;
    pthread_mutex_unlock(&c->lock);
    if (hit) return CKT_OK;
    ckt_status s = check_launch(e, dev, grid, args, nargs, values, empty, err);
    if (s) return s;
    pthread_mutex_lock(&c->lock);
    memcpy(c->key, key, key_bytes);
    c->dev = dev;
    c->empty = *empty;
    c->valid = true;
    pthread_mutex_unlock(&c->lock);
    return CKT_OK;
}

/* the rank-n layout shape : stride */
static ckt_status layout_n(int n, const int64_t *shape, const int64_t *stride, ckt_layout *out,
                           ckt_error *err)
{
    ckt_tuple sh[CKT_TMA_MAX_RANK], st[CKT_TMA_MAX_RANK];
    for (int d = 0; d < n; d++) sh[d] = ckt_tuple_int(shape[d]), st[d] = ckt_tuple_int(stride[d]);
    ckt_tuple a, b;
    ckt_status s = ckt_tuple_make(&a, n, sh, err);
    if (!s) s = ckt_tuple_make(&b, n, st, err);
    return s ? s : ckt_layout_make(out, &a, &b, err);
}

/* Tensor map `i` at this launch: its tensor's sizes and strides at these parameter leaf values
 * (pv), planned (ckt_tma_plan checks what the driver needs) and encoded by the driver (GPU) or for
 * the CPU target's emulation, unless the last launch encoded the same. Errors name the tensor. */
static ckt_status encode_map(const ckt_executable *e, int i, int64_t *pv, const ckt_arg *args,
                             tensor_map *out, ckt_error *err)
{
    const ckt_ktma *m = ckt_kernel_tma(e->k, i);
    const ckt_ktensor *t = ckt_kernel_tensor(e->k, m->tensor);
    const ckt_kparam *ptr = ckt_kernel_param(e->k, t->param);
    const void *base = ckt_buffer_ptr(args[e->of_param[t->param]].v.buffer);
    int64_t shape[CKT_TMA_MAX_RANK] = {0}, stride[CKT_TMA_MAX_RANK] = {0};
    ckt_expr_env env;
    memset(&env, 0, sizeof env);
    env.params = pv;
    ckt_status s = CKT_OK;
    bool empty = false;
    for (int d = 0; d < t->rank && !s; d++) {
        s = ckt_expr_eval_int(ckt_kernel_exprs_const(e->k), t->shape[d], &env, &shape[d], err);
        if (!s)
            s = ckt_expr_eval_int(ckt_kernel_exprs_const(e->k), t->stride[d], &env, &stride[d],
                                  err);
        empty = empty || shape[d] == 0;
    }
    if (s) return s;
    if (empty) { /* an empty padded tensor (a GEMM's A at K = 0): */
        memset(out->bytes, 0, sizeof out->bytes); /* no copy reads it */
        return CKT_OK;
    }
    launch_cache *c = e->cache;
    pthread_mutex_lock(&c->lock);
    bool same = c->tma[i].valid && c->tma[i].base == base &&
                !memcmp(c->tma[i].shape, shape, sizeof shape) &&
                !memcmp(c->tma[i].stride, stride, sizeof stride);
    if (same) *out = c->tma[i].map;
    int checked = c->tma[i].tile_checked_inner;
    pthread_mutex_unlock(&c->lock);
    if (same) return CKT_OK;
    /* the box, row by row along the map's dimensions (the inner mode fastest), under the copy's
     * swizzle */
    int64_t bshape[CKT_TMA_MAX_RANK], bstride[CKT_TMA_MAX_RANK], run = 1, rows = m->box[1];
    /* a clipped box: the rows the kernel's transaction count expects, by the same expression */
    if (m->rows != CKT_EXPR_NONE &&
        (s = ckt_expr_eval_int(ckt_kernel_exprs_const(e->k), m->rows, &env, &rows, err)))
        return s;
    for (int d = 0; d < m->rank; d++) {
        bshape[m->dims[d]] = d == 1 ? rows : m->box[d];
        bstride[m->dims[d]] = run;
        run *= bshape[m->dims[d]];
    }
    ckt_layout global, box;
    const ckt_swizzle *swp = m->swizzle_bytes ? &m->sw : NULL;
    char why[96];
    snprintf(why, sizeof why, "launch: the tensor map of '%s': ", ptr->name);
    ckt_tma_map plan;
    if ((s = layout_n(t->rank, shape, stride, &global, err)) ||
        (s = layout_n(m->rank, bshape, bstride, &box, err)) ||
        (s = ckt_tma_plan_ex(&global, t->dtype, &box, swp, m->dims, checked != m->inner, &plan,
                             err)) ||
        (s = e->target.runtime == CKT_BACKEND_CPU
                 ? ckt_tma_cpu_encode(&plan, t->dtype, base, out->bytes, err)
                 : ckt_tma_encode(&plan, base, out->bytes, err)))
        return ckt_fail_prefix(err, why);
    pthread_mutex_lock(&c->lock);
    c->tma[i].valid = true;
    c->tma[i].base = base;
    memcpy(c->tma[i].shape, shape, sizeof shape);
    memcpy(c->tma[i].stride, stride, sizeof stride);
    c->tma[i].tile_checked_inner = plan.inner;
    c->tma[i].map = *out;
    pthread_mutex_unlock(&c->lock);
    return CKT_OK;
}

/* One launch made ready: checked, its arguments packed (pointers as device addresses, tensor
 * maps derived), and the buffers it uses listed (their frees wait for it). */
typedef struct prepared {
    ckt_stream *s;
    const ckt_binary *bin;
    bool empty;
    void *ptrs[CKT_K_MAX_PARAMS];
    ckt_arg vals[CKT_K_MAX_PARAMS];
    int64_t extents[CKT_K_MAX_PARAMS]; /* derived extents, by launch argument */
    void *largv[CKT_K_MAX_PARAMS];
    tensor_map maps[CKT_K_MAX_TMAS];
    ckt_buffer *bufs[CKT_K_MAX_PARAMS];
    int nbufs;
    ckt_launch_params p;
    ckt_error *err;
} prepared;

/* Each argument against its parameter: the kind, buffers on dev, and the integer values the
 * kernel's launch conditions need (values, by kernel parameter index). */
static ckt_status check_args(const ckt_executable *e, ckt_device *dev, const ckt_arg *args,
                             int nargs, int64_t *values, ckt_error *err)
{
    const char *kname = ckt_kernel_name(e->k);
    if (nargs != e->nsig)
        return ckt_fail(err, CKT_EINVAL, "launch: kernel '%s' takes %d arguments, got %d", kname,
                        e->nsig, nargs);
    if (nargs > 0 && !args) return ckt_fail(err, CKT_EINVAL, "launch: args is NULL");
    for (int i = 0; i < nargs; i++) {
        const ckt_param *p = &e->sig[i];
        const ckt_arg *a = &args[i];
        if (a->kind != p->kind)
            return ckt_fail(err, CKT_EINVAL, "launch: argument '%s' must be %s, got %s", p->name,
                            p->kind == CKT_PARAM_PTR ? "a buffer" : ckt_param_kind_name(p->kind),
                            a->kind == CKT_PARAM_PTR ? "a buffer" : ckt_param_kind_name(a->kind));
        if (p->kind == CKT_PARAM_PTR) {
            if (!a->v.buffer)
                return ckt_fail(err, CKT_EINVAL, "launch: argument '%s' is a NULL buffer", p->name);
            if (a->v.buffer->closed)
                return ckt_fail(err, CKT_EINVAL, "launch: argument '%s' is a freed buffer",
                                p->name);
            if (ckt_buffer_device(a->v.buffer) != dev)
                return ckt_fail(err, CKT_EINVAL,
                                "launch: argument '%s' is a buffer of another device", p->name);
        }
        values[e->sig_index[i]] = p->kind == CKT_PARAM_I32   ? a->v.i32
                                  : p->kind == CKT_PARAM_I64 ? a->v.i64
                                                             : 0;
    }
    /* derived extents: the element count of a pointer argument's buffer */
    for (int i = 0; i < ckt_kernel_nparams(e->k); i++) {
        const ckt_kparam *kp = ckt_kernel_param(e->k, i);
        if (!kp->extent) continue;
        int arg = e->of_param[kp->extent_of];
        const ckt_kparam *ptr = ckt_kernel_param(e->k, kp->extent_of);
        values[i] =
            arg < 0 ? 0
                    : (int64_t)(ckt_buffer_size(args[arg].v.buffer) / ckt_dtype_size(ptr->dtype));
    }
    return CKT_OK;
}

static ckt_status prepare(const ckt_executable *e, ckt_stream *s, ckt_device *dev,
                          const int64_t grid[3], const ckt_arg *args, int nargs, double deadline,
                          prepared *r, ckt_error *err)
{
    if (!e || !grid)
        return ckt_fail(err, CKT_EINVAL, "launch: %s is NULL", e ? "grid" : "executable");
    if (nargs < 0 || nargs > CKT_K_MAX_PARAMS)
        return ckt_fail(err, CKT_EINVAL, "launch: nargs %d is outside [0, %d]", nargs,
                        CKT_K_MAX_PARAMS);
    if (s && dev && s->dev != dev)
        return ckt_fail(err, CKT_EINVAL, "launch: the stream belongs to another device");
    if (s) dev = s->dev;
    for (int i = 0; !dev && args && i < nargs; i++)
        if (args[i].kind == CKT_PARAM_PTR && args[i].v.buffer)
            dev = ckt_buffer_device(args[i].v.buffer);
    if (!dev)
        return ckt_fail(err, CKT_EINVAL,
                        "launch: no device (pass a stream, a device, or a buffer argument)");
    int64_t values[CKT_K_MAX_PARAMS] = {0}, pv[CKT_EXPR_MAX_LEAVES];
    ckt_status st = check_args(e, dev, args, nargs, values, err);
    if (!st) st = check_cached(e, dev, grid, args, nargs, values, &r->empty, err);
    if (st || r->empty) return st; /* a zero-sized problem: no blocks run */
    r->s = ckt_stream_or_default(dev, s);
    r->bin = e->bin;
    r->err = err;
    r->nbufs = 0;
    void *argv[CKT_K_MAX_PARAMS];
    for (int i = 0; i < nargs; i++) {
        r->vals[i] = args[i];
        if (args[i].kind == CKT_PARAM_PTR) {
            r->ptrs[i] = ckt_buffer_ptr(args[i].v.buffer);
            argv[i] = &r->ptrs[i];
            r->bufs[r->nbufs++] = args[i].v.buffer;
        } else {
            argv[i] = &r->vals[i].v; /* the union's members all start at its address */
        }
    }
    if (ckt_kernel_ntmas(e->k) > 0) ckt_kernel_param_leaves(e->k, values, pv);
    for (int i = 0; i < e->nlaunch; i++) {
        const ckt_kparam *kp = ckt_kernel_param(e->k, e->launch_index[i]);
        if (!kp->derived) {
            r->largv[i] = argv[e->of_param[e->launch_index[i]]];
            continue;
        }
        if (kp->extent) {
            r->extents[i] = values[e->launch_index[i]];
            r->largv[i] = &r->extents[i];
            continue;
        }
        if ((st = encode_map(e, kp->tma, pv, args, &r->maps[kp->tma], err))) return st;
        r->largv[i] = r->maps[kp->tma].bytes;
    }
    r->p = (ckt_launch_params){{grid[0], grid[1], grid[2]},
                               {e->block, 1, 1},
                               e->dynamic_lds,
                               r->largv,
                               e->nlaunch,
                               e->launch_sig,
                               e->nlaunch,
                               deadline};
    return CKT_OK;
}

static ckt_status enqueue(void *ctx)
{
    prepared *r = ctx;
    return ckt_stream_enqueue(r->s, r->bin, &r->p, r->bufs, r->nbufs, r->err);
}

ckt_status ckt_exe_launch_on(const ckt_executable *e, ckt_stream *s, ckt_device *dev,
                             const int64_t grid[3], const ckt_arg *args, int nargs, double deadline,
                             double *ms, ckt_error *err)
{
    prepared r;
    ckt_status st = prepare(e, s, dev, grid, args, nargs, deadline, &r, err);
    if (st || r.empty) {
        if (!st && ms) *ms = 0;
        return st;
    }
    if (!ms) return enqueue(&r);
    if (r.s->capturing)
        return ckt_fail(err, CKT_EINVAL, "launch: a timed launch waits, which a capture cannot");
    return ckt_runtime_timed(r.s, ms, enqueue, &r, err);
}

ckt_status ckt_exe_launch(const ckt_executable *e, ckt_device *dev, const int64_t grid[3],
                          const ckt_arg *args, int nargs, double deadline, double *ms,
                          ckt_error *err)
{
    double t = 0;
    ckt_status st = ckt_exe_launch_on(e, NULL, dev, grid, args, nargs, deadline, &t, err);
    if (!st && ms) *ms = t;
    return st;
}

ckt_status ckt_exe_launch_async(const ckt_executable *e, ckt_stream *s, ckt_device *dev,
                                const int64_t grid[3], const ckt_arg *args, int nargs,
                                ckt_error *err)
{
    return ckt_exe_launch_on(e, s, dev, grid, args, nargs, 0, NULL, err);
}
