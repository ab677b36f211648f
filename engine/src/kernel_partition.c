/* Partitions of a tile among the threads of a block (CuTe's local_partition on kernel tensors and
 * windows): which tile, which thread index, how many values per step, then the partition's
 * distribution (ckt_dist_partition, kernel_dist.c) and its own window over the same tile. */
#include <stdio.h>
#include <string.h>

#include "ckt/kernel_ir.h"

/* index as (tid / *q) % *m (*m 0: no remainder): the thread id, and divisions (or right shifts)
 * and remainders (or masks) of it by constants. false: not of that form. */
static bool thread_index_form(const ckt_expr_pool *ex, ckt_expr_id e, int64_t *q, int64_t *m)
{
    const ckt_expr_node *n = ckt_expr_get(ex, e);
    if (!n) return false;
    if (n->op == CKT_E_TID) {
        *q = 1;
        *m = 0;
        return true;
    }
    int64_t c;
    ckt_expr_id x = n->a;
    bool have = false;
    if (n->op == CKT_E_DIV || n->op == CKT_E_MOD || n->op == CKT_E_SHR)
        have = ckt_expr_is_const(ex, n->b, &c);
    else if (n->op == CKT_E_AND) {
        have = ckt_expr_is_const(ex, n->b, &c);
        if (!have && ckt_expr_is_const(ex, n->a, &c)) {
            have = true;
            x = n->b;
        }
    }
    if (!have || !thread_index_form(ex, x, q, m)) return false;
    int op = n->op;
    if (op == CKT_E_SHR) {
        if (c < 0 || c > 30) return false;
        c = (int64_t)1 << c;
        op = CKT_E_DIV;
    } else if (op == CKT_E_AND) {
        if (c < 0 || c > (1 << 30) || (c & (c + 1)))
            return false; /* a mask of low bits: a remainder */
        c = c + 1;
        op = CKT_E_MOD;
    }
    if (c < 1 || c > (1 << 30)) return false;
    if (op == CKT_E_DIV) {
        if (*m && *m % c) return false;
        *q *= c;
        if (*m) *m /= c;
        return *q <= (1 << 30);
    }
    if (*m == 0 || *m % c == 0)
        *m = c; /* (x % m) % c = x % c when c divides m */
    else if (c < *m)
        return false; /* c >= m: no effect */
    return true;
}

ckt_status ckt_partition_thread_index(const ckt_kernel *k, ckt_expr_id index, int64_t *div,
                                      int64_t *mod, ckt_error *err)
{
    if (!k || !div || !mod) return ckt_fail(err, CKT_EINVAL, "thread index: NULL argument");
    const ckt_expr_pool *ex = ckt_kernel_exprs_const(k);
    static const char *const want =
        "must be the thread id or an expression of it (thread_id // n, thread_id % n)";
    if (!ckt_expr_get(ex, index))
        return ckt_fail(err, CKT_EINVAL, "thread index %s, got no expression of this kernel", want);
    int64_t q = 1, m = 0;
    if (!thread_index_form(ex, index, &q, &m)) {
        char buf[160];
        ckt_expr_print(ex, index, buf, sizeof buf, NULL);
        return ckt_fail(err, CKT_EINVAL, "thread index %s, got %s%s", want, buf,
                        ckt_expr_uniform(ex, index) ? " (it does not depend on the thread id)"
                                                    : "");
    }
    /* the form must be what the expression computes, for every thread of the block */
    ckt_expr_env env;
    memset(&env, 0, sizeof env);
    for (int64_t t = 0; t < ckt_kernel_block(k); t++) {
        int64_t got, exp = m ? (t / q) % m : t / q;
        env.tid = t;
        if (ckt_expr_eval_int(ex, index, &env, &got, err) || got != exp)
            return ckt_fail(err, CKT_EINVAL,
                            "thread index: internal: thread %lld computes %lld, not %lld",
                            (long long)t, (long long)got, (long long)exp);
    }
    *div = q;
    *mod = m;
    return CKT_OK;
}

ckt_status ckt_partition_tile(const ckt_kernel *k, int tensor, int window, int64_t *lengths,
                              int *rank, ckt_error *err)
{
    if (!k || !lengths || !rank) return ckt_fail(err, CKT_EINVAL, "partition: NULL argument");
    if (window >= 0) {
        const ckt_kwindow *kw = ckt_kernel_window(k, window);
        if (!kw) return ckt_fail(err, CKT_EINVAL, "partition: no window %d", window);
        memcpy(lengths, kw->lengths, sizeof(int64_t) * (size_t)kw->rank);
        *rank = kw->rank;
        return CKT_OK;
    }
    const ckt_ktensor *t = ckt_kernel_tensor(k, tensor);
    if (!t) return ckt_fail(err, CKT_EINVAL, "partition: no tensor %d", tensor);
    if (t->mem == CKT_MEM_REG)
        return ckt_fail(err, CKT_EINVAL,
                        "a register tensor is already per thread: partition a global or LDS tensor "
                        "or a tile window");
    for (int d = 0; d < t->rank; d++) {
        if (t->mem == CKT_MEM_LDS) {
            ckt_layout m;
            ckt_status s = ckt_layout_mode(&t->layout, d, &m, err);
            if (s) return s;
            lengths[d] = ckt_layout_size(&m);
        } else if (!ckt_expr_is_const(ckt_kernel_exprs_const(k), t->shape[d], &lengths[d])) {
            return ckt_fail(err, CKT_EINVAL,
                            "dim %d of tensor '%s' has a runtime extent: partition a tile of it "
                            "(ckt.local_tile) instead",
                            d, t->name);
        }
    }
    *rank = t->rank;
    return CKT_OK;
}

ckt_status ckt_partition_values(int rank, const ckt_partition_opts *o, int64_t *values, bool *given,
                                ckt_error *err)
{
    if (!o || !values || !given) return ckt_fail(err, CKT_EINVAL, "partition: NULL argument");
    if (rank < 1 || rank > CKT_K_MAX_RANK)
        return ckt_fail(err, CKT_EINVAL, "partition: rank %d outside 1..%d", rank, CKT_K_MAX_RANK);
    for (int d = 0; d < rank; d++) values[d] = 1;
    bool spv = o->has_scalar_per_vector, vd = o->has_vector_dim;
    *given = false;
    if (o->nvalues >= 0) {
        if (spv || vd)
            return ckt_fail(err, CKT_EINVAL,
                            "give either values= or scalar_per_vector= / vector_dim=, not both");
        if (o->nvalues != rank)
            return ckt_fail(err, CKT_EINVAL, "values lists %d extents for a rank-%d tile",
                            o->nvalues, rank);
        memcpy(values, o->values, sizeof(int64_t) * (size_t)rank);
        *given = true;
    } else if (spv || vd) {
        if (!spv) return ckt_fail(err, CKT_EINVAL, "vector_dim needs scalar_per_vector");
        int64_t d = vd ? o->vector_dim : rank - 1;
        if (d < 0 || d >= rank)
            return ckt_fail(err, CKT_EINVAL, "vector_dim %lld outside 0..%d", (long long)d,
                            rank - 1);
        if (o->scalar_per_vector < 1 || o->scalar_per_vector > 16)
            return ckt_fail(err, CKT_EINVAL, "scalar_per_vector %lld outside 1..16",
                            (long long)o->scalar_per_vector);
        values[d] = o->scalar_per_vector;
        *given = true;
    }
    if (o->packed && *given)
        return ckt_fail(err, CKT_EINVAL,
                        "packed=true gives each thread one contiguous block already (no values= / "
                        "scalar_per_vector=)");
    return CKT_OK;
}

ckt_status ckt_kernel_partition(ckt_kernel *k, int tensor, int window, const ckt_layout *thr,
                                ckt_expr_id index, const ckt_partition_opts *o, int *dist,
                                int *out_window, ckt_error *err)
{
    if (!k || !thr || !o || !dist || !out_window)
        return ckt_fail(err, CKT_EINVAL, "partition: NULL argument");
    int64_t lengths[CKT_K_MAX_RANK], values[CKT_K_MAX_RANK], q, m;
    int rank;
    bool given;
    ckt_status s;
    if ((s = ckt_partition_tile(k, tensor, window, lengths, &rank, err)) ||
        (s = ckt_partition_thread_index(k, index, &q, &m, err)) ||
        (s = ckt_partition_values(rank, o, values, &given, err)))
        return s;
    ckt_dist d;
    if ((s = ckt_dist_partition(thr, rank, lengths, given ? values : NULL, o->packed, q, m,
                                ckt_kernel_block(k), &d, err)) ||
        (s = ckt_kernel_add_dist(k, &d, dist, err)))
        return s;
    /* the partition's own window over the same tile: later moves of the parent leave it be */
    const ckt_kwindow *parent = window >= 0 ? ckt_kernel_window(k, window) : NULL;
    ckt_expr_id origin[CKT_K_MAX_RANK];
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    for (int r = 0; r < rank; r++) origin[r] = parent ? parent->origin[r] : ckt_expr_int(ex, 0);
    return ckt_kernel_window_make(k, parent ? parent->tensor : tensor, rank, lengths, origin,
                                  out_window, err);
}
