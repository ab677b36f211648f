/* ckt Lua bindings — ckt.local_partition on kernel tensors and windows: the part of a tile each
 * thread owns (CuTe's local_partition), as a window with the partition's distribution. The
 * logic is the engine's (engine/src/kernel_partition.c): this file checks the Lua arguments,
 * names the argument a refusal is about, and calls it. On layouts it is the layout algebra's
 * local_partition (l_layout.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_kernel.h"

/* The options table (argument 4) into o. */
static void partition_opts(lua_State *L, const char *fn, ckt_partition_opts *o)
{
    static const char *const allowed[] = {"packed", "scalar_per_vector", "vector_dim", "values",
                                          NULL};
    memset(o, 0, sizeof *o);
    o->nvalues = -1;
    if (lua_isnoneornil(L, 4)) return;
    if (!lua_istable(L, 4))
        ckt_l_argerror(L, 4, "options table expected, got %s", luaL_typename(L, 4));
    ckt_l_check_fields(L, 4, fn, allowed);
    int packed = 0;
    ckt_l_field_bool(L, 4, fn, "packed", &packed);
    o->packed = packed;
    o->has_scalar_per_vector =
        ckt_l_field_int(L, 4, fn, "scalar_per_vector", &o->scalar_per_vector);
    o->has_vector_dim = ckt_l_field_int(L, 4, fn, "vector_dim", &o->vector_dim);
    o->nvalues = ckt_lk_int_list_field(L, 4, fn, "values", o->values, CKT_K_MAX_RANK);
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
    if (is_window && o->part)
        return ckt_l_argerror(L, 1, "already a partition (partition its tile instead)");
    int tensor = is_window ? -1 : o->id, window = is_window ? o->id : -1, rank;
    int64_t lengths[CKT_K_MAX_RANK], values[CKT_K_MAX_RANK], q, m;
    ckt_error err;
    if (ckt_partition_tile(kb->k, tensor, window, lengths, &rank, &err))
        return ckt_l_argerror(L, 1, "%s", err.msg);
    if (!ckt_l_testlayout(L, 2) && lua_type(L, 2) != LUA_TSTRING && !lua_isinteger(L, 2))
        return ckt_l_argerror(L, 2, "thr_layout must be a ckt.layout over the threads, got %s",
                              luaL_typename(L, 2));
    ckt_layout thr;
    ckt_l_tolayout(L, 2, "thr_layout", &thr);
    l_kobj *e = ckt_lk_testexpr(L, 3);
    if (!e || e->param >= 0)
        return ckt_l_argerror(L, 3,
                              "thread index must be the thread id or an expression of it "
                              "(thread_id // n, thread_id %% n), got %s",
                              e ? "a pointer" : luaL_typename(L, 3));
    if (e->kb != kb) return ckt_l_argerror(L, 3, "thread index belongs to another kernel");
    if (ckt_partition_thread_index(kb->k, e->id, &q, &m, &err))
        return ckt_l_argerror(L, 3, "%s", err.msg);
    ckt_partition_opts po;
    bool given;
    partition_opts(L, fn, &po);
    if (ckt_partition_values(rank, &po, values, &given, &err))
        return ckt_l_argerror(L, 4, "%s", err.msg);
    int di, wi;
    if (ckt_kernel_partition(kb->k, tensor, window, &thr, e->id, &po, &di, &wi, &err))
        return ckt_l_errorf(L, "%s: %s", fn, err.msg);
    ckt_lk_check_pool(L, kb);
    ckt_lk_push_owner(L, 1);
    l_kobj *w = ckt_lk_newobj(L, kb, -1, CKT_L_WINDOW, wi);
    lua_remove(L, -2);
    w->dist = di;
    w->part = 1;
    return 1;
}

void ckt_lk_open_partition(lua_State *L)
{
    ckt_l_set_function(L, "local_partition", l_local_partition);
}
