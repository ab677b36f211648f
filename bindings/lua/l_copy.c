/* ckt Lua bindings — data movement of the builder: b:copy (through registers, partitions
 * included) and b:blockwise_copy (the CK wrapper's blockwise copy). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_kernel.h"

/* Load src (at stack index si) and store the registers to dst. Partitions: the source's
 * distribution loads, the destination's stores by value index (CuTe's copy between partitions). */
static int copy_through(lua_State *L, l_kernel *kb, l_kobj *dst, l_kobj *src, int si, access_opts o,
                        const char *fn)
{
    if (src->part)
        o.dist = src->dist;
    else if (o.dist < 0)
        o.dist = dst->dist;
    if (dst->part) {
        const ckt_dist *sd = ckt_kernel_dist(kb->k, o.dist >= 0 ? o.dist : dst->dist),
                       *dd = ckt_kernel_dist(kb->k, dst->dist);
        if (src->part && sd->nvalues != dd->nvalues)
            return ckt_l_errorf(L,
                                "%s: the source partition gives each thread %lld values but the "
                                "destination partition %lld",
                                fn, (long long)sd->nvalues, (long long)dd->nvalues);
    }
    ckt_lk_load_into(L, src, si, o);
    ckt_lk_store_from(L, dst, lua_touserdata(L, -1), o);
    return 1;
}

/* b:copy(dst_window, src_window [, {dist=, vector_dim=, scalar_per_vector=, fill=, async=}]):
 * through registers, one distribution for both sides (partitions: see copy_through); async = true:
 * global
 * -> LDS without registers (cp.async on sm_80+) */
static int b_copy(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "copy");
    l_kobj *dst = ckt_lk_checkwindow(L, 2, "destination"),
           *src = ckt_lk_checkwindow(L, 3, "source");
    if (dst->kb != kb || src->kb != kb)
        return ckt_l_errorf(L, "copy: the windows belong to another kernel");
    int async = 0;
    if (lua_istable(L, 4)) ckt_l_field_bool(L, 4, "copy", "async", &async);
    if (async) { /* global -> LDS without registers (l_async.c) */
        static const char *const allowed[] = {"dist", "vector_dim", "scalar_per_vector", "async",
                                              NULL};
        ckt_l_check_fields(L, 4, "copy", allowed);
        ckt_lk_copy_async(L, kb, dst, src, 4, "copy");
        return 0;
    }
    if (dst->part && lua_istable(L, 4)) {
        if (lua_getfield(L, 4, "dist") != LUA_TNIL)
            return ckt_l_errorf(L, "copy: the destination is a partition: its thread layout "
                                   "decides who holds what (no 'dist' here)");
        lua_pop(L, 1);
    }
    int has_async = lua_istable(L, 4) && lua_getfield(L, 4, "async") != LUA_TNIL;
    if (lua_istable(L, 4)) lua_pop(L, 1);
    if (has_async) { /* async = false: a copy of the options without it */
        lua_newtable(L);
        for (lua_pushnil(L); lua_next(L, 4); lua_pop(L, 1)) {
            if (lua_type(L, -2) == LUA_TSTRING && !strcmp(lua_tostring(L, -2), "async")) continue;
            lua_pushvalue(L, -2);
            lua_pushvalue(L, -2);
            lua_settable(L, -5);
        }
        lua_replace(L, 4);
    }
    access_opts o = ckt_lk_read_access(L, 4, src, "copy", 1);
    return copy_through(L, kb, dst, src, 3, o, "copy");
}

/* b:blockwise_copy{src=, dst=, thread_layout=, access_order=, vector_dim=, scalar_per_vector=,
 * async=} (CK wrapper blockwise_copy) -> the register tensor it went through (async: none) */
static int b_blockwise_copy(lua_State *L)
{
    static const char *const fn = "blockwise_copy";
    static const char *const allowed[] = {"src",          "dst",        "thread_layout",
                                          "access_order", "vector_dim", "scalar_per_vector",
                                          "async",        NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, fn);
    ckt_l_check_fields(L, 2, fn, allowed);
    int async = 0;
    ckt_l_field_bool(L, 2, fn, "async", &async);
    lua_getfield(L, 2, "src");
    lua_getfield(L, 2, "dst");
    int si = lua_gettop(L) - 1, di = lua_gettop(L);
    l_kobj *src = ckt_lk_checkwindow(L, si, "blockwise_copy: src"),
           *dst = ckt_lk_checkwindow(L, di, "blockwise_copy: dst");
    if (src->kb != kb || dst->kb != kb)
        return ckt_l_errorf(L, "blockwise_copy: the windows belong to another kernel");
    if (async) { /* global -> LDS without registers (l_async.c); returns nothing */
        if (!src->part && !dst->part && lua_getfield(L, 2, "thread_layout") == LUA_TNIL)
            return ckt_l_argerror(L, 2, "field 'thread_layout' is required");
        ckt_lk_copy_async(L, kb, dst, src, 2, fn);
        return 0;
    }
    if (src->part || dst->part) { /* partitions: their thread layouts decide, as b:copy */
        static const char *const owned[] = {"thread_layout", "access_order", NULL};
        for (const char *const *f = owned; *f; f++) {
            if (lua_getfield(L, 2, *f) != LUA_TNIL)
                return ckt_l_errorf(L,
                                    "blockwise_copy: %s is a partition (ckt.local_partition): its "
                                    "thread layout decides who moves what (leave out '%s')",
                                    src->part ? "src" : "dst", *f);
            lua_pop(L, 1);
        }
        access_opts o = {-1, -1, 0, 0.0f};
        ckt_lk_vector_opts(L, 2, fn, ckt_lk_kwindow(src)->rank, &o);
        return copy_through(L, kb, dst, src, si, o, fn);
    }
    const ckt_kwindow *ks = ckt_lk_kwindow(src), *kd = ckt_lk_kwindow(dst);
    if (ks->rank != kd->rank ||
        memcmp(ks->lengths, kd->lengths, sizeof(int64_t) * (size_t)ks->rank))
        return ckt_l_errorf(L, "blockwise_copy: src and dst windows differ in shape");
    if (lua_getfield(L, 2, "thread_layout") == LUA_TNIL)
        return ckt_l_argerror(L, 2, "field 'thread_layout' is required");
    lua_pop(L, 1);
    int64_t spv = 1;
    ckt_l_field_int(L, 2, fn, "scalar_per_vector", &spv);
    ckt_dist d;
    ckt_lk_dist_from_thread_layout(L, 2, fn, ks->rank, ks->lengths, &d, -1, spv);
    int dist;
    ckt_error err;
    if (ckt_kernel_add_dist(kb->k, &d, &dist, &err)) return ckt_l_error(L, &err);
    int64_t vd = ks->rank - 1;
    ckt_l_field_int(L, 2, fn, "vector_dim", &vd);
    return copy_through(L, kb, dst, src, si, (access_opts){dist, vd, spv, 0.0f}, fn);
}

void ckt_lk_open_copy(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_KERNEL, "copy", b_copy},
                                       {CKT_L_KERNEL, "blockwise_copy", b_blockwise_copy},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
}
