/* ckt Lua bindings — asynchronous global -> LDS copies and multi-stage LDS (DESIGN 3.6):
 *   ckt.tensor("lds", dtype, layout, {stages = n, ...})   a ring of n copies of the LDS tile
 *   t:stage(i)                                            one of them (i block-uniform, e.g. k % n)
 *   b:blockwise_copy{src=, dst=, ..., async = true}       cp.async on sm_80+ (16 bytes, zero-fill)
 *   b:copy(dst, src, {async = true, ...})                 the same with b:copy's arguments
 *   b:commit()                                            close the group of copies issued so far
 *   b:wait{pending = n, sync = true}                      at most n groups in flight, then a barrier
 * Without async=, blockwise_copy and copy are the builder's own (through registers). */
#include <string.h>

#include "l_kbuild.h"

/* options[field] as a boolean (absent: 0); anything but a boolean is an error naming the field */
static int opt_bool(lua_State *L, int t, const char *fn, const char *field)
{
    int v = 0;
    if (lua_istable(L, t)) ckt_l_field_bool(L, t, fn, field, &v);
    return v;
}

/* push a shallow copy of the table at idx without `field` */
static void push_without(lua_State *L, int idx, const char *field)
{
    idx = lua_absindex(L, idx);
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) == LUA_TSTRING && !strcmp(lua_tostring(L, -2), field)) { lua_pop(L, 1); continue; }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, -4);
    }
}

/* Run the wrapped builder function (upvalue 1, a C function without upvalues) in this frame, so
 * its errors name the script's line, with the options table at `opts` replaced by a copy
 * without `field`. */
static int call_wrapped(lua_State *L, int opts, const char *field)
{
    lua_CFunction f = lua_tocfunction(L, lua_upvalueindex(1));
    if (lua_istable(L, opts)) {
        push_without(L, opts, field);
        lua_replace(L, opts);
    }
    return f(L);
}

/* The distribution an asynchronous copy moves with: partitions bring their own (both sides must
 * agree: the copy keeps each element's coordinate), else the options' thread layout or dist,
 * else the source window's, else the default (16-byte vectors along the last dim). */
static int async_dist(lua_State *L, l_kernel *kb, l_kobj *dst, l_kobj *src, int opts, const char *fn)
{
    const ckt_kwindow *ks = ckt_kernel_window(kb->k, src->id), *kd = ckt_kernel_window(kb->k, dst->id);
    if (ks->rank != kd->rank || memcmp(ks->lengths, kd->lengths, sizeof(int64_t) * (size_t)ks->rank))
        return ckt_l_errorf(L, "%s: src and dst windows differ in shape", fn);
    if (src->part && dst->part && src->dist != dst->dist)
        return ckt_l_errorf(L, "%s: async = true moves each element to the same coordinate, so src and dst partitions need one thread layout (copy through registers instead)", fn);
    if (src->part || dst->part) {
        if (lua_istable(L, opts))
            for (const char *const *f = (const char *const[]){"thread_layout", "access_order", "dist", NULL}; *f; f++) {
                if (lua_getfield(L, opts, *f) != LUA_TNIL)
                    return ckt_l_errorf(L, "%s: %s is a partition (ckt.local_partition): its thread layout decides who moves what (leave out '%s')", fn,
                                        src->part ? "src" : "dst", *f);
                lua_pop(L, 1);
            }
        return src->part ? src->dist : dst->dist;
    }
    if (lua_istable(L, opts)) {
        if (lua_getfield(L, opts, "thread_layout") != LUA_TNIL) {
            lua_pop(L, 1);
            return ckt_l_kb_todist(L, opts, kb, fn, ks->rank, ks->lengths);
        }
        lua_pop(L, 1);
        if (lua_getfield(L, opts, "dist") != LUA_TNIL) {
            int d = ckt_l_kb_todist(L, -1, kb, fn, ks->rank, ks->lengths);
            lua_pop(L, 1);
            return d;
        }
        lua_pop(L, 1);
    }
    if (src->dist >= 0) return src->dist;
    return ckt_l_kb_default_dist(L, kb, ks->rank, ks->lengths, ckt_kernel_tensor(kb->k, ks->tensor)->dtype);
}

static void copy_async(lua_State *L, l_kernel *kb, l_kobj *dst, l_kobj *src, int opts, const char *fn)
{
    if (src->kb != kb || dst->kb != kb) ckt_l_errorf(L, "%s: the windows belong to another kernel", fn);
    int dist = async_dist(L, kb, dst, src, opts, fn);
    int64_t vd = -1, spv = 0;
    if (lua_istable(L, opts)) {
        ckt_l_field_int(L, opts, fn, "vector_dim", &vd);
        ckt_l_field_int(L, opts, fn, "scalar_per_vector", &spv);
    }
    const ckt_kwindow *ks = ckt_kernel_window(kb->k, src->id);
    if (vd < -1 || vd >= ks->rank) ckt_l_errorf(L, "%s: vector_dim %lld outside 0..%d", fn, (long long)vd, ks->rank - 1);
    if (spv < 0 || spv > 16) ckt_l_errorf(L, "%s: scalar_per_vector %lld outside 1..16 (0: choose)", fn, (long long)spv);
    ckt_error err;
    if (ckt_kernel_copy_async(kb->k, dst->id, src->id, dist, (int)vd, spv, &err)) ckt_l_error(L, &err);
}

/* b:blockwise_copy{src=, dst=, thread_layout=, access_order=, vector_dim=, scalar_per_vector=, async=} */
static int b_blockwise_copy(lua_State *L)
{
    static const char *const fn = "blockwise_copy";
    static const char *const allowed[] = {"src", "dst", "thread_layout", "access_order", "vector_dim", "scalar_per_vector", "async", NULL};
    l_kernel *kb = luaL_checkudata(L, 1, CKT_L_KERNEL);
    if (!lua_istable(L, 2) || !opt_bool(L, 2, fn, "async")) return call_wrapped(L, 2, "async");
    ckt_l_kb_require_building(L, kb, fn);
    ckt_l_check_fields(L, 2, fn, allowed);
    lua_getfield(L, 2, "src");
    lua_getfield(L, 2, "dst");
    l_kobj *src = ckt_l_kb_checkwindow(L, -2, "blockwise_copy: src"), *dst = ckt_l_kb_checkwindow(L, -1, "blockwise_copy: dst");
    if (!src->part && !dst->part && lua_getfield(L, 2, "thread_layout") == LUA_TNIL) return ckt_l_errorf(L, "blockwise_copy: field 'thread_layout' is required");
    copy_async(L, kb, dst, src, 2, fn);
    return 0;
}

/* b:copy(dst, src [, {dist=, vector_dim=, scalar_per_vector=, fill=, async=}]) */
static int b_copy(lua_State *L)
{
    static const char *const allowed[] = {"dist", "vector_dim", "scalar_per_vector", "async", NULL};
    l_kernel *kb = luaL_checkudata(L, 1, CKT_L_KERNEL);
    if (!lua_istable(L, 4) || !opt_bool(L, 4, "copy", "async")) return call_wrapped(L, 4, "async");
    ckt_l_kb_require_building(L, kb, "copy");
    ckt_l_check_fields(L, 4, "copy", allowed);
    l_kobj *dst = ckt_l_kb_checkwindow(L, 2, "copy: destination"), *src = ckt_l_kb_checkwindow(L, 3, "copy: source");
    copy_async(L, kb, dst, src, 4, "copy");
    return 0;
}

/* b:commit() */
static int b_commit(lua_State *L)
{
    l_kernel *kb = luaL_checkudata(L, 1, CKT_L_KERNEL);
    ckt_l_kb_require_building(L, kb, "commit");
    ckt_error err;
    if (ckt_kernel_commit(kb->k, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:wait([{pending = 0, sync = true}]) */
static int b_wait(lua_State *L)
{
    static const char *const allowed[] = {"pending", "sync", NULL};
    l_kernel *kb = luaL_checkudata(L, 1, CKT_L_KERNEL);
    ckt_l_kb_require_building(L, kb, "wait");
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

/* ckt.tensor(memory, dtype, layout [, opts]): the builder's, plus opts.stages for LDS */
static int l_tensor(lua_State *L)
{
    int has = lua_istable(L, 4) && lua_getfield(L, 4, "stages") != LUA_TNIL;
    if (lua_istable(L, 4)) lua_pop(L, 1);
    if (!has) return call_wrapped(L, 4, "stages");
    int64_t stages = 1;
    ckt_l_field_int(L, 4, "tensor", "stages", &stages);
    const char *mem = lua_tostring(L, 1);
    if (!mem || (strcmp(mem, "lds") && strcmp(mem, "shared"))) return ckt_l_errorf(L, "tensor: field 'stages' is for LDS tensors");
    if (stages < 1 || stages > 16) return ckt_l_errorf(L, "tensor: stages %lld outside 1..16", (long long)stages);
    call_wrapped(L, 4, "stages");
    l_kobj *t = ckt_l_kb_checktensor(L, -1, "tensor");
    ckt_error err;
    if (ckt_kernel_lds_stages(t->kb->k, t->id, stages, &err)) return ckt_l_error(L, &err);
    return 1;
}

/* t:stage(i) -> the LDS tensor of stage i of a staged tensor */
static int t_stage(lua_State *L)
{
    l_kobj *t = ckt_l_kb_checktensor(L, 1, "stage");
    ckt_l_kb_require_building(L, t->kb, "stage");
    ckt_expr_id i = ckt_l_kb_toexpr(L, 2, t->kb, "stage: argument 1");
    int view;
    ckt_error err;
    if (ckt_kernel_lds_stage(t->kb->k, t->id, i, &view, &err)) return ckt_l_error(L, &err);
    lua_getiuservalue(L, 1, 1);
    ckt_l_kb_newobj(L, t->kb, -1, CKT_L_KTENSOR, view);
    return 1;
}

/* t:stages() -> the number of stages (1 for a tensor made without stages) */
static int t_stages(lua_State *L)
{
    l_kobj *t = ckt_l_kb_checktensor(L, 1, "stages");
    const ckt_ktensor *kt = ckt_kernel_tensor(t->kb->k, t->id);
    lua_pushinteger(L, kt->stages > 1 ? kt->stages : 1);
    return 1;
}

/* replace tname[name] (or the table at -1's field when tname is NULL) by fn with the old one as upvalue 1 */
static void wrap(lua_State *L, const char *tname, const char *name, lua_CFunction fn)
{
    if (tname) luaL_getmetatable(L, tname);
    else lua_pushvalue(L, -1);
    lua_getfield(L, -1, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}

void ckt_l_open_async(lua_State *L)
{
    wrap(L, CKT_L_KERNEL, "blockwise_copy", b_blockwise_copy);
    wrap(L, CKT_L_KERNEL, "copy", b_copy);
    wrap(L, NULL, "tensor", l_tensor);
    luaL_getmetatable(L, CKT_L_KERNEL);
    lua_pushcfunction(L, b_commit);
    lua_setfield(L, -2, "commit");
    lua_pushcfunction(L, b_wait);
    lua_setfield(L, -2, "wait");
    lua_pop(L, 1);
    luaL_getmetatable(L, CKT_L_KTENSOR);
    lua_pushcfunction(L, t_stage);
    lua_setfield(L, -2, "stage");
    lua_pushcfunction(L, t_stages);
    lua_setfield(L, -2, "stages");
    lua_pop(L, 1);
}
