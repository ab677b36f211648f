/* ckt Lua bindings — ckt.local_partition on kernel tensors and windows: the part of a tile each
 * thread owns (CuTe's local_partition), as a window with the partition's distribution. On
 * layouts it is the layout algebra's local_partition (l_layout.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_kernel.h"

/* The thread index argument of local_partition as (tid / q) % m (m 0: no remainder): the thread
 * id, and divisions (or right shifts) and remainders (or masks) of it by constants. 0: not of
 * that form. */
static int thread_index_form(const ckt_expr_pool *ex, ckt_expr_id e, int64_t *q, int64_t *m)
{
    const ckt_expr_node *n = ckt_expr_get(ex, e);
    if (!n) return 0;
    if (n->op == CKT_E_TID) {
        *q = 1;
        *m = 0;
        return 1;
    }
    int64_t c;
    ckt_expr_id x = n->a;
    bool have = false;
    if (n->op == CKT_E_DIV || n->op == CKT_E_MOD || n->op == CKT_E_SHR) have = ckt_expr_is_const(ex, n->b, &c);
    else if (n->op == CKT_E_AND) {
        have = ckt_expr_is_const(ex, n->b, &c);
        if (!have && ckt_expr_is_const(ex, n->a, &c)) { have = true; x = n->b; }
    }
    if (!have || !thread_index_form(ex, x, q, m)) return 0;
    int op = n->op;
    if (op == CKT_E_SHR) {
        if (c < 0 || c > 30) return 0;
        c = (int64_t)1 << c;
        op = CKT_E_DIV;
    } else if (op == CKT_E_AND) {
        if (c < 0 || c > (1 << 30) || (c & (c + 1))) return 0; /* a mask of low bits: a remainder */
        c = c + 1;
        op = CKT_E_MOD;
    }
    if (c < 1 || c > (1 << 30)) return 0;
    if (op == CKT_E_DIV) {
        if (*m && *m % c) return 0;
        *q *= c;
        if (*m) *m /= c;
        return *q <= (1 << 30);
    }
    if (*m == 0 || *m % c == 0) *m = c; /* (x % m) % c = x % c when c divides m */
    else if (c < *m) return 0;          /* c >= m: no effect */
    return 1;
}

/* The parent's tile lengths (a window's, or a tensor's static shape). */
static int partition_lengths(lua_State *L, l_kobj *o, bool is_window, int64_t *lengths)
{
    if (is_window) {
        const ckt_kwindow *kw = ckt_lk_kwindow(o);
        memcpy(lengths, kw->lengths, sizeof(int64_t) * (size_t)kw->rank);
        return kw->rank;
    }
    const ckt_ktensor *t = ckt_lk_ktensor(o);
    if (t->mem == CKT_MEM_REG)
        ckt_l_argerror(L, 1, "a register tensor is already per thread: partition a global or LDS tensor or a tile window");
    for (int d = 0; d < t->rank; d++) {
        if (t->mem == CKT_MEM_LDS) {
            ckt_layout m;
            ckt_error err;
            if (ckt_layout_mode(&t->layout, d, &m, &err)) ckt_l_error(L, &err);
            lengths[d] = ckt_layout_size(&m);
        } else if (!ckt_expr_is_const(ckt_kernel_exprs(o->kb->k), t->shape[d], &lengths[d])) {
            ckt_l_errorf(L, "local_partition: dim %d of tensor '%s' has a runtime extent: partition a tile of it (ckt.local_tile) instead", d, t->name);
        }
    }
    return t->rank;
}

/* ckt.local_partition(t, thr_layout, thread_index [, {packed=, scalar_per_vector=, vector_dim=,
 * values=}]): the part of tile t (a global / LDS tensor or a tile window) that each thread owns,
 * as a window with the partition's distribution (CuTe's local_partition; see docs/kernels.md).
 * Layouts go to the layout algebra's local_partition. */
static int l_local_partition(lua_State *L)
{
    static const char *const fn = "local_partition";
    l_kobj *o = luaL_testudata(L, 1, CKT_L_KTENSOR);
    bool is_window = false;
    if (!o) {
        o = luaL_testudata(L, 1, CKT_L_WINDOW);
        is_window = o != NULL;
    }
    if (!o) return ckt_l_layout_local_partition(L); /* CuTe's local_partition of a layout */
    l_kernel *kb = o->kb;
    ckt_lk_require_building(L, kb, fn);
    if (is_window && o->part) return ckt_l_argerror(L, 1, "already a partition (partition its tile instead)");
    int64_t lengths[CKT_K_MAX_RANK];
    int rank = partition_lengths(L, o, is_window, lengths);
    if (!ckt_l_testlayout(L, 2) && lua_type(L, 2) != LUA_TSTRING && !lua_isinteger(L, 2))
        return ckt_l_argerror(L, 2, "thr_layout must be a ckt.layout over the threads, got %s", luaL_typename(L, 2));
    ckt_layout thr;
    ckt_l_tolayout(L, 2, "thr_layout", &thr);
    /* argument 3: the thread index */
    l_kobj *e = ckt_lk_testexpr(L, 3);
    static const char *const want = "must be b:thread_id() or an expression of it (thread_id // n, thread_id % n)";
    if (!e) return ckt_l_argerror(L, 3, "thread index %s, got %s", want, luaL_typename(L, 3));
    if (e->kb != kb) return ckt_l_argerror(L, 3, "thread index belongs to another kernel");
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
    int64_t q = 1, m = 0;
    if (e->param >= 0 || !thread_index_form(ex, e->id, &q, &m)) {
        char buf[160] = "a pointer";
        if (e->param < 0) ckt_expr_print(ex, e->id, buf, sizeof buf, NULL);
        return ckt_l_argerror(L, 3, "thread index %s, got %s%s", want, buf,
                            e->param < 0 && ckt_expr_uniform(ex, e->id) ? " (it does not depend on the thread id)" : "");
    }
    /* the form must be what the expression computes, for every thread of the block */
    ckt_expr_env env;
    memset(&env, 0, sizeof env);
    for (int64_t t = 0; t < ckt_kernel_block(kb->k); t++) {
        int64_t got, exp = m ? (t / q) % m : t / q;
        ckt_error err;
        env.tid = t;
        if (ckt_expr_eval_int(ex, e->id, &env, &got, &err) || got != exp)
            return ckt_l_errorf(L, "local_partition: argument 3 (thread index): internal: thread %lld computes %lld, not %lld", (long long)t, (long long)got,
                                (long long)exp);
    }
    /* argument 4: options */
    int packed = 0;
    int64_t val[CKT_K_MAX_RANK];
    bool has_val = false;
    for (int d = 0; d < rank; d++) val[d] = 1;
    if (!lua_isnoneornil(L, 4)) {
        static const char *const allowed[] = {"packed", "scalar_per_vector", "vector_dim", "values", NULL};
        if (!lua_istable(L, 4)) return ckt_l_argerror(L, 4, "options table expected, got %s", luaL_typename(L, 4));
        ckt_l_check_fields(L, 4, fn, allowed);
        ckt_l_field_bool(L, 4, fn, "packed", &packed);
        int64_t spv = 0, vd = rank - 1;
        bool has_spv = ckt_l_field_int(L, 4, fn, "scalar_per_vector", &spv), has_vd = ckt_l_field_int(L, 4, fn, "vector_dim", &vd);
        int nv = ckt_lk_int_list_field(L, 4, fn, "values", val, CKT_K_MAX_RANK);
        if (nv >= 0) {
            if (has_spv || has_vd) return ckt_l_errorf(L, "local_partition: give either values= or scalar_per_vector= / vector_dim=, not both");
            if (nv != rank) return ckt_l_errorf(L, "local_partition: values lists %d extents for a rank-%d tile", nv, rank);
            has_val = true;
        } else if (has_spv || has_vd) {
            if (!has_spv) return ckt_l_errorf(L, "local_partition: vector_dim needs scalar_per_vector");
            if (vd < 0 || vd >= rank) return ckt_l_errorf(L, "local_partition: vector_dim %lld outside 0..%d", (long long)vd, rank - 1);
            if (spv < 1 || spv > 16) return ckt_l_errorf(L, "local_partition: scalar_per_vector %lld outside 1..16", (long long)spv);
            val[vd] = spv;
            has_val = true;
        }
        if (packed && has_val)
            return ckt_l_errorf(L, "local_partition: packed=true gives each thread one contiguous block already (no values= / scalar_per_vector=)");
    }
    ckt_dist d;
    ckt_error err;
    if (ckt_dist_partition(&thr, rank, lengths, has_val ? val : NULL, packed, q, m, ckt_kernel_block(kb->k), &d, &err)) return ckt_l_error(L, &err);
    int di, wi;
    if (ckt_kernel_add_dist(kb->k, &d, &di, &err)) return ckt_l_error(L, &err);
    /* the partition's own window over the same tile: later moves of the parent leave it be */
    ckt_expr_id origin[CKT_K_MAX_RANK];
    for (int r = 0; r < rank; r++) origin[r] = is_window ? ckt_lk_kwindow(o)->origin[r] : ckt_expr_int(ex, 0);
    ckt_lk_check_pool(L, kb);
    int tensor = is_window ? ckt_lk_kwindow(o)->tensor : o->id;
    if (ckt_kernel_window_make(kb->k, tensor, rank, lengths, origin, &wi, &err)) return ckt_l_error(L, &err);
    ckt_lk_push_owner(L, 1);
    l_kobj *w = ckt_lk_newobj(L, kb, -1, CKT_L_WINDOW, wi);
    lua_remove(L, -2);
    w->dist = di;
    w->part = 1;
    return 1;
}

void ckt_lk_open_partition(lua_State *L)
{
    lua_pushcfunction(L, l_local_partition);
    lua_setfield(L, -2, "local_partition");
}
