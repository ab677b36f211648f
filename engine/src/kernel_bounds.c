/* What a launch may touch, known before it runs. A kernel reaches global memory only through
 * its global tensors, each over one pointer parameter with a shape and strides that are
 * expressions over the scalar parameters; every access is inside the tensor's shape (padded
 * tensors mask each element on both edges, unpadded windows are guarded as a whole by the
 * emitter). So the bytes a pointer's buffer must hold are the tensor's extent at this launch:
 * (1 + sum over dims of (shape - 1) * stride) elements. Checked here for every tensor, with
 * the strides and shapes that the launch's values give (a stride that comes out negative is
 * refused), and the windows whose origins depend only on the block index are checked against
 * the grid: a grid with more blocks than tiles is refused before anything runs, instead of
 * being skipped block by block. */
#include <stdio.h>
#include <string.h>

#include "checked.h"
#include "ckt/kernel_ir.h"

typedef struct span {
    int64_t lo, hi;
    bool known;
} span;

static span unknown(void) { return (span){0, 0, false}; }
static span exact(int64_t v) { return (span){v, v, true}; }

/* the range of an expression over parameters (exact), block ids (0..grid-1) and grid sizes */
static span range_of(const ckt_expr_pool *ex, ckt_expr_id e, const int64_t *pv,
                     const int64_t grid[3], int depth)
{
    const ckt_expr_node *n = ckt_expr_get(ex, e);
    if (!n || depth > 64) return unknown();
    span a, b;
    int64_t r[4];
    switch (n->op) {
    case CKT_E_INT: return exact(n->i);
    case CKT_E_PARAM:
        return n->type == CKT_T_INDEX && n->i >= 0 && n->i < CKT_EXPR_MAX_LEAVES ? exact(pv[n->i])
                                                                                 : unknown();
    case CKT_E_BID: return n->i >= 0 && n->i < 3 ? (span){0, grid[n->i] - 1, true} : unknown();
    case CKT_E_NBLK: return n->i >= 0 && n->i < 3 ? exact(grid[n->i]) : unknown();
    case CKT_E_VAR: /* a let: its value */
        return n->i >= 0 && n->i < ex->nvars && ex->vars[n->i].value != CKT_EXPR_NONE
                   ? range_of(ex, ex->vars[n->i].value, pv, grid, depth + 1)
                   : unknown();
    case CKT_E_ADD:
    case CKT_E_SUB:
    case CKT_E_MUL:
    case CKT_E_MIN:
    case CKT_E_MAX:
    case CKT_E_DIV:
    case CKT_E_MOD: break;
    default: return unknown();
    }
    a = range_of(ex, n->a, pv, grid, depth + 1);
    b = range_of(ex, n->b, pv, grid, depth + 1);
    if (!a.known || !b.known) return unknown();
    switch (n->op) {
    case CKT_E_ADD:
        if (ckt_add_ovf(a.lo, b.lo, &r[0]) || ckt_add_ovf(a.hi, b.hi, &r[1])) return unknown();
        return (span){r[0], r[1], true};
    case CKT_E_SUB:
        if (ckt_sub_ovf(a.lo, b.hi, &r[0]) || ckt_sub_ovf(a.hi, b.lo, &r[1])) return unknown();
        return (span){r[0], r[1], true};
    case CKT_E_MUL:
        if (ckt_mul_ovf(a.lo, b.lo, &r[0]) || ckt_mul_ovf(a.lo, b.hi, &r[1]) ||
            ckt_mul_ovf(a.hi, b.lo, &r[2]) || ckt_mul_ovf(a.hi, b.hi, &r[3]))
            return unknown();
        return (span){ckt_min64(ckt_min64(r[0], r[1]), ckt_min64(r[2], r[3])),
                      ckt_max64(ckt_max64(r[0], r[1]), ckt_max64(r[2], r[3])), true};
    case CKT_E_MIN: return (span){ckt_min64(a.lo, b.lo), ckt_min64(a.hi, b.hi), true};
    case CKT_E_MAX: return (span){ckt_max64(a.lo, b.lo), ckt_max64(a.hi, b.hi), true};
    case CKT_E_DIV: /* non-negative over positive: monotone in both */
        if (a.lo < 0 || b.lo < 1) return unknown();
        return (span){a.lo / b.hi, a.hi / b.lo, true};
    default: /* MOD, non-negative over positive */
        if (a.lo < 0 || b.lo < 1) return unknown();
        if (b.lo == b.hi && a.lo / b.lo == a.hi / b.lo)
            return (span){a.lo % b.lo, a.hi % b.lo, true};
        return (span){0, ckt_min64(a.hi, b.hi - 1), true};
    }
}

static ckt_status eval(const ckt_kernel *k, ckt_expr_id e, const int64_t *pv, int64_t *out,
                       ckt_error *err)
{
    ckt_expr_env env;
    memset(&env, 0, sizeof env);
    env.params = pv;
    return ckt_expr_eval_int(ckt_kernel_exprs((ckt_kernel *)k), e, &env, out, err);
}

/* the bytes tensor t reaches at this launch; 0 for an empty tensor */
static ckt_status tensor_bytes(const ckt_kernel *k, const ckt_ktensor *t, const int64_t *pv,
                               int64_t shape[], uint64_t *bytes, ckt_error *err)
{
    int64_t last = 0, count = 1;
    if (t->limited) { /* every access masked against [0, limit): the buffer must hold limit */
        int64_t n, b;
        ckt_status s = eval(k, t->limit, pv, &n, err);
        if (s) return s;
        if (n < 0)
            return ckt_fail(err, CKT_EINVAL,
                            "launch: the element limit of '%s' is %lld at this launch", t->name,
                            (long long)n);
        if (ckt_mul_ovf(n, (int64_t)ckt_dtype_size(t->dtype), &b))
            return ckt_fail(err, CKT_EOVERFLOW,
                            "launch: the extent of '%s' overflows 64 bits at this launch", t->name);
        for (int d = 0; d < t->rank; d++) shape[d] = n > 0; /* (no window check reads it) */
        *bytes = (uint64_t)b;
        return CKT_OK;
    }
    for (int d = 0; d < t->rank; d++) {
        int64_t stride;
        ckt_status s = eval(k, t->shape[d], pv, &shape[d], err);
        if (!s) s = eval(k, t->stride[d], pv, &stride, err);
        if (s) return s;
        if (shape[d] < 0)
            return ckt_fail(err, CKT_EINVAL,
                            "launch: dim %d of '%s' has the negative extent %lld at this launch", d,
                            t->name, (long long)shape[d]);
        if (stride < 0)
            return ckt_fail(err, CKT_EINVAL,
                            "launch: the stride of dim %d of '%s' is %lld at this launch; strides "
                            "must not be negative",
                            d, t->name, (long long)stride);
        int64_t reach;
        if (ckt_mul_ovf(count, shape[d], &count) ||
            (shape[d] &&
             (ckt_mul_ovf(shape[d] - 1, stride, &reach) || ckt_add_ovf(last, reach, &last))))
            return ckt_fail(err, CKT_EOVERFLOW,
                            "launch: the extent of '%s' overflows 64 bits at this launch", t->name);
    }
    int64_t b;
    if (count == 0) {
        *bytes = 0;
        return CKT_OK;
    }
    if (ckt_add_ovf(last, 1, &b) || ckt_mul_ovf(b, (int64_t)ckt_dtype_size(t->dtype), &b))
        return ckt_fail(err, CKT_EOVERFLOW,
                        "launch: the extent of '%s' overflows 64 bits at this launch", t->name);
    *bytes = (uint64_t)b;
    return CKT_OK;
}

/* a window that never moves, over an unpadded tensor: its origins over the whole grid */
static ckt_status check_window_grid(const ckt_kernel *k, int wi, const int64_t *pv,
                                    const int64_t grid[3], const int64_t *shape, ckt_error *err)
{
    const ckt_kwindow *w = ckt_kernel_window(k, wi);
    const ckt_ktensor *t = ckt_kernel_tensor(k, w->tensor);
    if (t->mem != CKT_MEM_GLOBAL || t->padded || w->moved_by_runtime) return CKT_OK;
    const ckt_expr_pool *ex = ckt_kernel_exprs((ckt_kernel *)k);
    for (int d = 0; d < w->rank; d++) {
        if (w->step_divisor[d]) continue; /* moved: the emitter's guard covers it */
        span o = range_of(ex, w->init[d], pv, grid, 0);
        if (!o.known) continue;
        if (o.lo < 0 || o.hi > shape[d] - w->lengths[d])
            return ckt_fail(err, CKT_EINVAL,
                            "launch: window %d over '%s' reaches [%lld, %lld) along dim %d, but "
                            "the extent is %lld: the grid (%lld, %lld, %lld) "
                            "has more blocks than tiles (or the origins leave the tensor); build "
                            "with pad = true to mask the edges",
                            wi, t->name, (long long)o.lo, (long long)(o.hi + w->lengths[d]), d,
                            (long long)shape[d], (long long)grid[0], (long long)grid[1],
                            (long long)grid[2]);
    }
    return CKT_OK;
}

ckt_status ckt_kernel_check_bounds(const ckt_kernel *k, const int64_t *values,
                                   const int64_t grid[3], const uint64_t *buffer_bytes, bool *empty,
                                   ckt_error *err)
{
    if (!k || !grid || !empty)
        return ckt_fail(err, CKT_EINVAL, "launch: NULL kernel, grid or result");
    *empty = false;
    int64_t pv[CKT_EXPR_MAX_LEAVES];
    ckt_kernel_param_leaves(k, values, pv);
    for (int d = 0; d < 3; d++)
        if (grid[d] < 1)
            return ckt_fail(err, CKT_EINVAL, "launch: grid[%d] = %lld must be >= 1", d + 1,
                            (long long)grid[d]);
    int64_t shapes[64][CKT_K_MAX_RANK];
    int nt = ckt_kernel_ntensors(k);
    for (int i = 0; i < nt; i++) {
        const ckt_ktensor *t = ckt_kernel_tensor(k, i);
        if (t->mem != CKT_MEM_GLOBAL) continue;
        int64_t shape[CKT_K_MAX_RANK];
        uint64_t need = 0;
        ckt_status s = tensor_bytes(k, t, pv, shape, &need, err);
        if (s) return s;
        if (i < 64) memcpy(shapes[i], shape, sizeof shape);
        const ckt_kparam *p = ckt_kernel_param(k, t->param);
        /* an empty tensor empties the problem, unless it is only read and padded: its every
         * access is masked (a GEMM with K = 0 still writes C, as zeros) */
        if (need == 0 && !(t->padded && p && p->is_const)) *empty = true;
        if (buffer_bytes && p && need > buffer_bytes[t->param])
            return ckt_fail(err, CKT_EINVAL,
                            "launch: argument '%s' needs %llu bytes for '%s' at these sizes, but "
                            "its buffer holds %llu",
                            p->name, (unsigned long long)need, t->name,
                            (unsigned long long)buffer_bytes[t->param]);
    }
    if (*empty) return CKT_OK; /* nothing to run: no window is checked against an empty shape */
    for (int wi = 0; wi < ckt_kernel_nwindows(k); wi++) {
        int ti = ckt_kernel_window(k, wi)->tensor;
        if (ti >= 64 || ckt_kernel_tensor(k, ti)->mem != CKT_MEM_GLOBAL) continue;
        ckt_status s = check_window_grid(k, wi, pv, grid, shapes[ti], err);
        if (s) return s;
    }
    return CKT_OK;
}
