/* The kernel pipeline (ckt/executable.h): kernel -> source -> binary -> checked launches. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/emit.h"
#include "ckt/executable.h"

struct ckt_executable {
    const ckt_kernel *k; /* borrowed */
    ckt_target_record target;
    char *source;
    ckt_binary *bin;
    int64_t dynamic_lds;
    ckt_param sig[CKT_K_MAX_PARAMS];
    int sig_index[CKT_K_MAX_PARAMS]; /* the kernel parameter index of each signature entry */
    int nsig;
};

ckt_status ckt_kernel_compile(ckt_context *ctx, const ckt_kernel *k, const char *target,
                              const ckt_kernel_compile_options *opts, ckt_executable **out,
                              ckt_error *err)
{
    static const ckt_kernel_compile_options none = {0, NULL, 0};
    if (!k || !out) return ckt_fail(err, CKT_EINVAL, "compile: %s is NULL", k ? "out" : "kernel");
    *out = NULL;
    if (!opts) opts = &none;
    ckt_executable *e = calloc(1, sizeof *e);
    if (!e) return ckt_fail(err, CKT_ENOMEM, "compile: out of memory");
    e->k = k;
    ckt_status s;
    if ((s = ckt_target_parse(target, &e->target, err)) ||
        (s = ckt_emit(k, target, &e->source, err)))
        goto fail;
    ckt_compile_request req = {target, e->source, ckt_kernel_name(k), opts->options,
                               opts->noptions};
    if ((s = ckt_compile(ctx, &req, opts->flags, &e->bin, err))) goto fail;
    e->dynamic_lds = ckt_emit_dynamic_lds_bytes(k, &e->target);
    for (int i = 0; i < ckt_kernel_nparams(k); i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (p->specialized) continue;
        e->sig[e->nsig] = (ckt_param){p->kind, p->name};
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
            if (ckt_buffer_device(a->v.buffer) != dev)
                return ckt_fail(err, CKT_EINVAL,
                                "launch: argument '%s' is a buffer of another device", p->name);
        }
        values[e->sig_index[i]] = p->kind == CKT_PARAM_I32   ? a->v.i32
                                  : p->kind == CKT_PARAM_I64 ? a->v.i64
                                                             : 0;
    }
    return CKT_OK;
}

/* Everything the kernel needs of its arguments and grid, checked before anything launches:
 * the arguments, the launch conditions, and that every buffer covers what the kernel's
 * accesses can touch at these sizes and this grid (kernel_bounds.c). *empty: a zero-sized
 * problem, which runs no blocks. */
static ckt_status check_launch(const ckt_executable *e, ckt_device *dev, const int64_t grid[3],
                               const ckt_arg *args, int nargs, bool *empty, ckt_error *err)
{
    int64_t values[CKT_K_MAX_PARAMS] = {0};
    uint64_t bytes[CKT_K_MAX_PARAMS];
    for (int i = 0; i < CKT_K_MAX_PARAMS; i++) bytes[i] = UINT64_MAX; /* not a pointer */
    ckt_status s = check_args(e, dev, args, nargs, values, err);
    if (s || (s = ckt_kernel_check_launch(e->k, values, err))) return s;
    for (int d = 0; d < 3; d++)
        if (grid[d] < 1)
            return ckt_fail(err, CKT_EINVAL, "launch: grid.%c is %lld (every extent must be >= 1)",
                            "xyz"[d], (long long)grid[d]);
    for (int i = 0; i < nargs; i++)
        if (args[i].kind == CKT_PARAM_PTR)
            bytes[e->sig_index[i]] = (uint64_t)ckt_buffer_size(args[i].v.buffer);
    return ckt_kernel_check_bounds(e->k, values, grid, bytes, empty, err);
}

ckt_status ckt_exe_launch(const ckt_executable *e, ckt_device *dev, const int64_t grid[3],
                          const ckt_arg *args, int nargs, double deadline, double *ms,
                          ckt_error *err)
{
    if (!e || !grid)
        return ckt_fail(err, CKT_EINVAL, "launch: %s is NULL", e ? "grid" : "executable");
    for (int i = 0; !dev && args && i < nargs; i++)
        if (args[i].kind == CKT_PARAM_PTR && args[i].v.buffer)
            dev = ckt_buffer_device(args[i].v.buffer);
    if (!dev)
        return ckt_fail(err, CKT_EINVAL, "launch: no device (pass one, or a buffer argument)");
    bool empty = false;
    ckt_status s = check_launch(e, dev, grid, args, nargs, &empty, err);
    if (s) return s;
    if (empty) { /* a zero-sized problem: no blocks run (the block order would divide by 0) */
        if (ms) *ms = 0;
        return CKT_OK;
    }
    void *ptrs[CKT_K_MAX_PARAMS];
    void *argv[CKT_K_MAX_PARAMS];
    ckt_arg vals[CKT_K_MAX_PARAMS];
    for (int i = 0; i < nargs; i++) {
        vals[i] = args[i];
        if (args[i].kind == CKT_PARAM_PTR) {
            ptrs[i] = ckt_buffer_ptr(args[i].v.buffer);
            argv[i] = &ptrs[i];
        } else {
            argv[i] = &vals[i].v; /* the union's members all start at its address */
        }
    }
    int64_t block = ckt_kernel_block(e->k);
    ckt_launch_params p = {{grid[0], grid[1], grid[2]},
                           {block, 1, 1},
                           e->dynamic_lds,
                           argv,
                           nargs,
                           e->sig,
                           e->nsig,
                           deadline};
    return ckt_launch(dev, e->bin, &p, ms, err);
}
