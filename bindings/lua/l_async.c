/* ckt Lua bindings — asynchronous global -> LDS copies and multi-stage LDS (DESIGN 3.6):
 *   ckt.tensor("lds", dtype, layout, {stages = n})   a ring of n copies of the LDS tile
 * (l_tensor.c) t:stage(i), t:stages()                           one of them (i block-uniform, e.g.
 * k % n); how many b:blockwise_copy{src=, dst=, ..., async = true}  cp.async on sm_80+ (16 bytes,
 * zero-fill) (l_copy.c) b:copy(dst, src, {async = true, ...})            the same with b:copy's
 * arguments b:commit()                                       close the group of copies issued so
 * far b:wait{pending = n, sync = true}                 at most n groups in flight, then a barrier
 */
#include <string.h>

#include "l_kernel.h"

/* The distribution an asynchronous copy moves with: partitions bring their own (both sides must
 * agree: the copy keeps each element's coordinate), else the options' thread layout or dist,
 * else the source window's, else the default (16-byte vectors along the last dim). */
static int async_dist(lua_State *L, l_kernel *kb, l_kobj *dst, l_kobj *src, int opts,
                      const char *fn)
{
    const ckt_kwindow *ks = ckt_lk_kwindow(src), *kd = ckt_lk_kwindow(dst);
    if (ks->rank != kd->rank ||
        memcmp(ks->lengths, kd->lengths, sizeof(int64_t) * (size_t)ks->rank))
        return ckt_l_errorf(L, "%s: src and dst windows differ in shape", fn);
    if (src->part && dst->part && src->dist != dst->dist)
        return ckt_l_errorf(
            L,
            "%s: async = true moves each element to the same coordinate, so src and dst partitions "
            "need one thread layout (copy through registers instead)",
            fn);
    if (src->part || dst->part) {
        static const char *const owned[] = {"thread_layout", "access_order", "dist", NULL};
        for (const char *const *f = owned; opts && *f; f++) {
            if (lua_getfield(L, opts, *f) != LUA_TNIL)
                return ckt_l_errorf(L,
                                    "%s: %s is a partition (ckt.local_partition): its thread "
                                    "layout decides who moves what (leave out '%s')",
                                    fn, src->part ? "src" : "dst", *f);
            lua_pop(L, 1);
        }
        return src->part ? src->dist : dst->dist;
    }
    if (opts) {
        if (lua_getfield(L, opts, "thread_layout") != LUA_TNIL) {
            lua_pop(L, 1);
            return ckt_lk_todist(L, opts, kb, fn, ks->rank, ks->lengths);
        }
        lua_pop(L, 1);
        if (lua_getfield(L, opts, "dist") != LUA_TNIL) {
            int d = ckt_lk_todist(L, -1, kb, fn, ks->rank, ks->lengths);
            lua_pop(L, 1);
            return d;
        }
        lua_pop(L, 1);
    }
    return src->dist >= 0 ? src->dist : ckt_lk_default_dist_index(L, src);
}

void ckt_lk_copy_async(lua_State *L, l_kernel *kb, l_kobj *dst, l_kobj *src, int opts,
                       const char *fn)
{
    if (opts && !lua_istable(L, opts)) opts = 0;
    if (opts) opts = lua_absindex(L, opts);
    int dist = async_dist(L, kb, dst, src, opts, fn);
    int64_t vd = -1, spv = 0;
    if (opts) {
        ckt_l_field_int(L, opts, fn, "vector_dim", &vd);
        ckt_l_field_int(L, opts, fn, "scalar_per_vector", &spv);
    }
    const ckt_kwindow *ks = ckt_lk_kwindow(src);
    if (vd < -1 || vd >= ks->rank)
        ckt_l_errorf(L, "%s: vector_dim %lld outside 0..%d", fn, (long long)vd, ks->rank - 1);
    if (spv < 0 || spv > 16)
        ckt_l_errorf(L, "%s: scalar_per_vector %lld outside 1..16 (0: choose)", fn, (long long)spv);
    ckt_error err;
    if (ckt_kernel_copy_async(kb->k, dst->id, src->id, dist, (int)vd, spv, &err))
        ckt_l_error(L, &err);
}

/* b:commit() */
static int b_commit(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkkernel(L, 1);
    ckt_lk_require_building(L, kb, "commit");
    ckt_error err;
    if (ckt_kernel_commit(kb->k, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:wait([{pending = 0, sync = true}]) */
static int b_wait(lua_State *L)
{
    static const char *const allowed[] = {"pending", "sync", NULL};
    l_kernel *kb = ckt_lk_checkkernel(L, 1);
    ckt_lk_require_building(L, kb, "wait");
    int64_t pending = 0;
    int sync = 1;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        ckt_l_check_fields(L, 2, "wait", allowed);
        ckt_l_field_int(L, 2, "wait", "pending", &pending);
        ckt_l_field_bool(L, 2, "wait", "sync", &sync);
    }
    ckt_error err;
    if (ckt_kernel_wait(kb->k, pending, sync != 0, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* t:stage(i) -> the LDS tensor of stage i of a staged tensor */
static int t_stage(lua_State *L)
{
    l_kobj *t = ckt_lk_checktensor(L, 1, NULL);
    ckt_lk_require_building(L, t->kb, "stage");
    ckt_expr_id i = ckt_lk_toexpr(L, 2, t->kb, NULL);
    int view;
    ckt_error err;
    if (ckt_kernel_lds_stage(t->kb->k, t->id, i, &view, &err)) return ckt_l_error(L, &err);
    ckt_lk_push_owner(L, 1);
    ckt_lk_newobj(L, t->kb, -1, CKT_L_KTENSOR, view);
    return 1;
}

/* t:view(layout) -> the same LDS elements through another layout (ckt_kernel_lds_view) */
static int t_view(lua_State *L)
{
    l_kobj *t = ckt_lk_checktensor(L, 1, NULL);
    ckt_lk_require_building(L, t->kb, "view");
    ckt_layout lay;
    ckt_l_tolayout(L, 2, "view: layout", &lay);
    int view;
    ckt_error err;
    if (ckt_kernel_lds_view(t->kb->k, t->id, &lay, &view, &err)) return ckt_l_error(L, &err);
    ckt_lk_push_owner(L, 1);
    ckt_lk_newobj(L, t->kb, -1, CKT_L_KTENSOR, view);
    return 1;
}

/* t:stages() -> the number of stages (1 for a tensor made without stages) */
static int t_stages(lua_State *L)
{
    const ckt_ktensor *kt = ckt_lk_ktensor(ckt_lk_checktensor(L, 1, NULL));
    lua_pushinteger(L, kt->stages > 1 ? kt->stages : 1);
    return 1;
}

void ckt_lk_open_async(lua_State *L)
{
    static const ckt_l_entry rows[] = {
        {CKT_L_KERNEL, "commit", b_commit}, {CKT_L_KERNEL, "wait", b_wait},
        {CKT_L_KTENSOR, "stage", t_stage},  {CKT_L_KTENSOR, "stages", t_stages},
        {CKT_L_KTENSOR, "view", t_view},    {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
}
