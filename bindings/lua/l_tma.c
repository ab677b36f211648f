/* ckt Lua bindings — Hopper's bulk tensor copies (the tensor memory accelerator) and mbarriers
 * (ckt/kernel_ir.h, kernel_tma in the engine; sm_90 / sm_90a and their CPU emulation):
 *   local full = b:mbarriers{count = n, arrivals = 1}   n mbarriers in LDS
 *   b:tma_copy{src = global window, dst = LDS window, barrier = full, at = i}
 *   b:tma_store{src = LDS window, dst = global window [, wait = false]}   thread 0 stores
 *   b:tma_store_wait()                                   the stores have read their LDS tiles
 *   b:mbarrier_wait{barrier = full, at = i, phase = p}   the phase of parity p % 2 completed
 *   b:mbarrier_arrive{barrier = empty, at = i}           every thread of the block arrives
 *   local rank, id = b:cluster(n)                        blocks in clusters of n along x
 *   b:tma_copy{..., multicast = true}                    a box shared by the cluster's blocks
 *   b:tma_copy{..., clip = true}                         the box stops at the tensor's end
 *   b:mbarrier_arrive{..., cluster = true}               each warp arrives in every block of it
 * (b:producer, the warp-specialized region these pace, is in l_builder.c) */
#include <stdio.h>

#include "l_kernel.h"

#define CKT_L_MBARS "ckt.mbarriers"

/* The options table of a method b:fn{...}: argument 2 of the call, argument #1 in its errors
 * ("bad argument #1 to 'fn' (field ...)", luaL_argerror discounting self). */
#define OPTS 2

static l_kobj *check_mbars(lua_State *L, l_kernel *kb)
{
    if (lua_getfield(L, OPTS, "barrier") == LUA_TNIL)
        ckt_l_argerror(L, OPTS, "field 'barrier' (from b:mbarriers{...}) is required");
    l_kobj *m = luaL_testudata(L, -1, CKT_L_MBARS);
    if (!m)
        ckt_l_argerror(L, OPTS, "field 'barrier' must be mbarriers (b:mbarriers{...}), got %s",
                       ckt_l_typename(L, -1));
    if (m->kb != kb) ckt_l_argerror(L, OPTS, "field 'barrier' belongs to another kernel");
    lua_pop(L, 1);
    return m;
}

/* field `name` of the options table as an expression of kb (a Lua integer or a kernel
 * expression) */
static ckt_expr_id field_expr(lua_State *L, l_kernel *kb, const char *name)
{
    char what[48];
    snprintf(what, sizeof what, "field '%s'", name);
    if (lua_getfield(L, OPTS, name) == LUA_TNIL) ckt_l_argerror(L, OPTS, "%s is required", what);
    ckt_expr_id e = ckt_lk_toexpr_arg(L, -1, OPTS, kb, what);
    lua_pop(L, 1);
    return e;
}

/* b:mbarriers{count = n, arrivals = 1} -> mbarriers */
static int b_mbarriers(lua_State *L)
{
    static const char *const allowed[] = {"count", "arrivals", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, "mbarriers");
    luaL_checktype(L, OPTS, LUA_TTABLE);
    ckt_l_check_fields(L, OPTS, "mbarriers", allowed);
    int64_t count = 0, arrivals = 1;
    if (!ckt_l_field_int(L, OPTS, "mbarriers", "count", &count))
        return ckt_l_argerror(L, OPTS, "field 'count' is required");
    ckt_l_field_int(L, OPTS, "mbarriers", "arrivals", &arrivals);
    int set;
    ckt_error err;
    if (ckt_kernel_mbarriers(kb->k, count, arrivals, &set, &err)) return ckt_l_error(L, &err);
    ckt_lk_newobj(L, kb, 1, CKT_L_MBARS, set);
    return 1;
}

/* b:cluster(n) -> rank, id: the grid's blocks in clusters of n consecutive blocks along x; the
 * block's rank in its cluster (block id x % n) and the cluster's index (block id x // n) */
static int b_cluster(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "cluster");
    lua_Integer n = luaL_checkinteger(L, 2);
    ckt_error err;
    if (ckt_kernel_cluster(kb->k, (int64_t)n, &err)) return ckt_l_error(L, &err);
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
    ckt_expr_id bid = ckt_expr_bid(ex, 0), c = ckt_expr_int(ex, (int64_t)n);
    ckt_lk_push_expr(L, kb, 1, ckt_expr_binary(ex, CKT_E_MOD, bid, c));
    ckt_lk_push_expr(L, kb, 1, ckt_expr_binary(ex, CKT_E_DIV, bid, c));
    return 2;
}

/* b:tma_copy{src = window, dst = window, barrier = mbarriers, at = i [, multicast = true]
 * [, clip = true]} */
static int b_tma_copy(lua_State *L)
{
    static const char *const allowed[] = {"src", "dst", "barrier", "at", "multicast", "clip", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, "tma_copy");
    luaL_checktype(L, OPTS, LUA_TTABLE);
    ckt_l_check_fields(L, OPTS, "tma_copy", allowed);
    l_kobj *m = check_mbars(L, kb);
    lua_getfield(L, OPTS, "src");
    l_kobj *src = ckt_lk_checkwindow(L, -1, "tma_copy: src");
    lua_getfield(L, OPTS, "dst");
    l_kobj *dst = ckt_lk_checkwindow(L, -1, "tma_copy: dst");
    ckt_expr_id at = field_expr(L, kb, "at");
    int multicast = 0, clip = 0;
    ckt_l_field_bool(L, OPTS, "tma_copy", "multicast", &multicast);
    ckt_l_field_bool(L, OPTS, "tma_copy", "clip", &clip);
    if (multicast && clip)
        return luaL_error(L, "tma_copy: clip and multicast together: a shared box is split by rows "
                             "among the cluster's blocks, each of which expects the whole box");
    ckt_error err;
    if ((multicast ? ckt_kernel_tma_copy_multicast
         : clip    ? ckt_kernel_tma_copy_clipped
                   : ckt_kernel_tma_copy)(kb->k, dst->id, src->id, m->id, at, &err))
        return ckt_l_error(L, &err);
    return 0;
}

/* b:tma_store{src = LDS window, dst = global window, wait = true} */
static int b_tma_store(lua_State *L)
{
    static const char *const allowed[] = {"src", "dst", "wait", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, "tma_store");
    luaL_checktype(L, OPTS, LUA_TTABLE);
    ckt_l_check_fields(L, OPTS, "tma_store", allowed);
    lua_getfield(L, OPTS, "src");
    l_kobj *src = ckt_lk_checkwindow(L, -1, "tma_store: src");
    lua_getfield(L, OPTS, "dst");
    l_kobj *dst = ckt_lk_checkwindow(L, -1, "tma_store: dst");
    int wait = 1;
    ckt_l_field_bool(L, OPTS, "tma_store", "wait", &wait);
    ckt_error err;
    if (ckt_kernel_tma_store(kb->k, dst->id, src->id, wait != 0, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:tma_store_wait() */
static int b_tma_store_wait(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "tma_store_wait");
    ckt_error err;
    if (ckt_kernel_tma_store_wait(kb->k, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:mbarrier_wait{barrier = mbarriers, at = i, phase = p} */
static int b_mbarrier_wait(lua_State *L)
{
    static const char *const allowed[] = {"barrier", "at", "phase", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, "mbarrier_wait");
    luaL_checktype(L, OPTS, LUA_TTABLE);
    ckt_l_check_fields(L, OPTS, "mbarrier_wait", allowed);
    l_kobj *m = check_mbars(L, kb);
    ckt_expr_id at = field_expr(L, kb, "at");
    ckt_expr_id phase = field_expr(L, kb, "phase");
    ckt_error err;
    if (ckt_kernel_mbar_wait(kb->k, m->id, at, phase, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:mbarrier_arrive{barrier = mbarriers, at = i [, cluster = true]}: every thread of the block
 * arrives once (cluster: each warp once in every block of the cluster) */
static int b_mbarrier_arrive(lua_State *L)
{
    static const char *const allowed[] = {"barrier", "at", "cluster", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, "mbarrier_arrive");
    luaL_checktype(L, OPTS, LUA_TTABLE);
    ckt_l_check_fields(L, OPTS, "mbarrier_arrive", allowed);
    l_kobj *m = check_mbars(L, kb);
    ckt_expr_id at = field_expr(L, kb, "at");
    int cluster = 0;
    ckt_l_field_bool(L, OPTS, "mbarrier_arrive", "cluster", &cluster);
    ckt_error err;
    if ((cluster ? ckt_kernel_mbar_arrive_cluster : ckt_kernel_mbar_arrive)(kb->k, m->id, at, &err))
        return ckt_l_error(L, &err);
    return 0;
}

/* b:named_barrier{id = expr, threads = n [, arrive = true]}: the warps wait at hardware barrier
 * id for n threads (arrive: count themselves and go on) -- the warpgroups' ping-pong */
static int b_named_barrier(lua_State *L)
{
    static const char *const allowed[] = {"id", "threads", "arrive", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, "named_barrier");
    luaL_checktype(L, OPTS, LUA_TTABLE);
    ckt_l_check_fields(L, OPTS, "named_barrier", allowed);
    ckt_expr_id id = field_expr(L, kb, "id");
    int64_t threads = 0;
    int arrive = 0;
    if (!ckt_l_field_int(L, OPTS, "named_barrier", "threads", &threads))
        return ckt_l_argerror(L, OPTS, "field 'threads' is required");
    ckt_l_field_bool(L, OPTS, "named_barrier", "arrive", &arrive);
    ckt_error err;
    if (ckt_kernel_named_barrier(kb->k, id, threads, arrive != 0, &err))
        return ckt_l_error(L, &err);
    return 0;
}

/* mb:count() */
static int m_count(lua_State *L)
{
    l_kobj *m = luaL_checkudata(L, 1, CKT_L_MBARS);
    lua_pushinteger(L, ckt_kernel_mbar(m->kb->k, m->id)->count);
    return 1;
}

void ckt_lk_open_tma(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_KERNEL, "mbarriers", b_mbarriers},
                                       {CKT_L_KERNEL, "cluster", b_cluster},
                                       {CKT_L_KERNEL, "tma_copy", b_tma_copy},
                                       {CKT_L_KERNEL, "tma_store", b_tma_store},
                                       {CKT_L_KERNEL, "tma_store_wait", b_tma_store_wait},
                                       {CKT_L_KERNEL, "mbarrier_wait", b_mbarrier_wait},
                                       {CKT_L_KERNEL, "mbarrier_arrive", b_mbarrier_arrive},
                                       {CKT_L_KERNEL, "named_barrier", b_named_barrier},
                                       {CKT_L_MBARS, "count", m_count},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
}
