/* ckt Lua bindings — kernel tensors (ckt.tensor over global memory, LDS or registers), tile
 * windows over them (ckt.tile_window, ckt.local_tile, w:move), the loads and stores through a
 * window with a distribution (who holds what), and b:fetch (one element of a device array into
 * an index expression). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_kernel.h"

int ckt_lk_int_list_field(lua_State *L, int t, const char *fn, const char *field, int64_t *v,
                          int cap)
{
    if (lua_getfield(L, t, field) == LUA_TNIL) {
        lua_pop(L, 1);
        return -1;
    }
    char what[80];
    snprintf(what, sizeof what, "%s: field '%s'", fn, field);
    if (!lua_istable(L, -1)) ckt_l_errorf(L, "%s must be a list of integers", what);
    int n = ckt_l_int_list(L, -1, what, v, cap);
    lua_pop(L, 1);
    return n;
}

/* A CK-wrapper thread layout table {thread_layout=, vector_dim=, scalar_per_vector=,
 * access_order=}. */
static int is_thread_layout_spec(lua_State *L, int idx)
{
    if (!lua_istable(L, idx)) return 0;
    int t = lua_getfield(L, idx, "thread_layout");
    lua_pop(L, 1);
    return t != LUA_TNIL;
}

void ckt_lk_dist_from_thread_layout(lua_State *L, int idx, const char *fn, int rank,
                                    const int64_t *lengths, ckt_dist *d, int vector_dim,
                                    int64_t spv)
{
    idx = lua_absindex(L, idx);
    ckt_layout tl;
    lua_getfield(L, idx, "thread_layout");
    ckt_l_tolayout(L, -1, "thread_layout", &tl);
    lua_pop(L, 1);
    int64_t vd = vector_dim < 0 ? rank - 1 : vector_dim, order64[CKT_K_MAX_RANK];
    ckt_l_field_int(L, idx, fn, "vector_dim", &vd);
    ckt_l_field_int(L, idx, fn, "scalar_per_vector", &spv);
    int no = ckt_lk_int_list_field(L, idx, fn, "access_order", order64, CKT_K_MAX_RANK);
    if (no >= 0 && no != rank)
        ckt_l_errorf(L, "%s: access_order lists %d dims for a rank-%d tile", fn, no, rank);
    if (vd < 0 || vd >= rank)
        ckt_l_errorf(L, "%s: vector_dim %lld outside 0..%d", fn, (long long)vd, rank - 1);
    int order[CKT_K_MAX_RANK];
    for (int i = 0; i < rank && no >= 0; i++)
        order[i] = order64[i] < 0 || order64[i] >= rank ? -1 : (int)order64[i];
    ckt_error err;
    if (ckt_dist_from_thread_layout(&tl, rank, lengths, (int)vd, spv, no >= 0 ? order : NULL, d,
                                    &err))
        ckt_l_error(L, &err);
}

static void default_dist(lua_State *L, l_kernel *kb, int rank, const int64_t *lengths,
                         ckt_dtype dtype, ckt_dist *d)
{
    ckt_error err;
    if (ckt_dist_default_copy(rank, lengths, ckt_dtype_size(dtype), ckt_kernel_block(kb->k), d,
                              &err))
        ckt_l_error(L, &err);
}

/* Any distribution-like Lua value over a tile of `lengths` into a kernel distribution index. */
int ckt_lk_todist(lua_State *L, int idx, l_kernel *kb, const char *fn, int rank,
                  const int64_t *lengths)
{
    ckt_dist d;
    ckt_error err;
    if (is_thread_layout_spec(L, idx)) {
        ckt_lk_dist_from_thread_layout(L, idx, fn, rank, lengths, &d, -1, 1);
    } else {
        ckt_layout tv;
        ckt_l_to_tv(L, idx, fn, &tv);
        if (ckt_dist_from_tv(&tv, rank, lengths, &d, &err)) return ckt_l_error(L, &err);
    }
    int di;
    if (ckt_kernel_add_dist(kb->k, &d, &di, &err)) return ckt_l_error(L, &err);
    return di;
}

l_kobj *ckt_lk_checktensor(lua_State *L, int idx, const char *what)
{
    return ckt_l_checkclass(L, idx, CKT_L_KTENSOR, "tensor (ckt.tensor)", what);
}

const ckt_ktensor *ckt_lk_ktensor(const l_kobj *t) { return ckt_kernel_tensor(t->kb->k, t->id); }

static int expr_list(lua_State *L, int idx, l_kernel *kb, const char *what, ckt_expr_id *out,
                     int cap);

/* {shape=, stride=} entries, or a static layout, into expression lists; returns the rank. */
static int global_geometry(lua_State *L, int idx, l_kernel *kb, ckt_expr_id *shape,
                           ckt_expr_id *stride)
{
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
    ckt_layout *l = ckt_l_testlayout(L, idx);
    if (l || lua_type(L, idx) == LUA_TSTRING || lua_isinteger(L, idx)) {
        ckt_layout lay;
        ckt_l_tolayout(L, idx, "tensor: layout", &lay);
        int rank = ckt_layout_rank(&lay);
        if (rank > CKT_K_MAX_RANK)
            ckt_l_errorf(L, "tensor: rank %d above %d", rank, CKT_K_MAX_RANK);
        for (int d = 0; d < rank; d++) {
            ckt_layout m;
            ckt_error err;
            if (ckt_layout_mode(&lay, d, &m, &err)) ckt_l_error(L, &err);
            if (!ckt_tuple_is_int(&m.shape))
                ckt_l_errorf(
                    L,
                    "tensor: mode %d of a global layout must be flat (one extent and one stride)",
                    d);
            shape[d] = ckt_expr_int(ex, m.shape.value[0]);
            stride[d] = ckt_expr_int(ex, m.stride.value[0]);
        }
        return rank;
    }
    if (!lua_istable(L, idx))
        ckt_l_errorf(
            L, "tensor: a global layout is a ckt.layout or {shape={...}, stride={...}}, got %s",
            luaL_typename(L, idx));
    static const char *const allowed[] = {"shape", "stride", NULL};
    ckt_l_check_fields(L, idx, "tensor: layout", allowed);
    if (lua_getfield(L, idx, "shape") != LUA_TTABLE)
        ckt_l_errorf(L, "tensor: layout field 'shape' must be a list of sizes");
    int rank = (int)luaL_len(L, -1);
    if (rank < 1 || rank > CKT_K_MAX_RANK)
        ckt_l_errorf(L, "tensor: rank %d outside 1..%d", rank, CKT_K_MAX_RANK);
    expr_list(L, -1, kb, "tensor: shape", shape, rank);
    lua_pop(L, 1);
    int t = lua_getfield(L, idx, "stride");
    if (t == LUA_TNIL) { /* compact, row-major: the last dim contiguous */
        ckt_expr_id s = ckt_expr_int(ex, 1);
        for (int d = rank - 1; d >= 0; d--) {
            stride[d] = s;
            s = ckt_expr_mul(ex, s, shape[d]);
        }
    } else {
        if (t != LUA_TTABLE || luaL_len(L, -1) != rank)
            ckt_l_errorf(L, "tensor: layout field 'stride' must list %d strides", rank);
        expr_list(L, -1, kb, "tensor: stride", stride, rank);
    }
    lua_pop(L, 1);
    ckt_lk_check_pool(L, kb);
    return rank;
}

/* ckt.tensor(memory, dtype, layout [, opts])
 *   global: memory = a pointer parameter (or "global" with opts.ptr); layout = ckt.layout or
 *           {shape=, stride=} of integers / size expressions; opts.pad = masks accesses past the
 * shape lds:    layout = ckt.layout, a swizzled composed layout, or a layout with opts.swizzle
 *   register: layout = a distribution (CK encoding, fragment, nested layout, TV layout) with
 *           opts.lengths (the tile), or an integer n (n values per thread, no distribution) */
static int l_tensor(lua_State *L)
{
    static const char *const allowed[] = {"ptr",    "pad",   "swizzle", "lengths",
                                          "stages", "limit", NULL};
    l_kernel *kb;
    int pi = -1;
    l_kobj *p = ckt_lk_testexpr(L, 1);
    ckt_memory mem;
    ckt_error err;
    if (p) {
        if (p->param < 0)
            return ckt_l_argerror(L, 1,
                                  "memory (\"global\", \"lds\", \"register\") or pointer parameter "
                                  "expected, got an expression");
        kb = p->kb;
        ckt_lk_require_building(L, kb, "tensor");
        mem = CKT_MEM_GLOBAL;
        pi = p->param;
    } else {
        if (lua_type(L, 1) != LUA_TSTRING)
            return ckt_l_argerror(
                L, 1, "\"global\", \"lds\", \"register\" or a pointer parameter expected, got %s",
                luaL_typename(L, 1));
        kb = ckt_lk_active(L, "tensor");
        if (ckt_memory_parse(lua_tostring(L, 1), &mem, &err)) return ckt_l_error(L, &err);
    }
    ckt_dtype dt = ckt_l_checkdtype(L, 2, "dtype");
    luaL_checkany(L, 3);
    int has_opts = !lua_isnoneornil(L, 4);
    if (has_opts) { ckt_l_check_fields(L, 4, "tensor", allowed); }
    lua_getfield(L, LUA_REGISTRYINDEX, ACTIVE_KEY); /* the kernel userdata (building, so active) */
    int ki = lua_gettop(L);
    int idx;
    if (mem != CKT_MEM_LDS && has_opts && lua_getfield(L, 4, "stages") != LUA_TNIL)
        return ckt_l_argerror(L, 4, "field 'stages' is for LDS tensors");
    if (mem == CKT_MEM_GLOBAL) {
        if (pi < 0) {
            if (!has_opts || lua_getfield(L, 4, "ptr") == LUA_TNIL)
                return ckt_l_errorf(L, "tensor: a global tensor needs its pointer (pass the "
                                       "pointer parameter as argument 1, or opts.ptr)");
            l_kobj *q = ckt_lk_testexpr(L, -1);
            if (!q || q->param < 0 || q->kb != kb)
                return ckt_l_errorf(
                    L, "tensor: opts.ptr must be a pointer parameter of this kernel (b:pointer)");
            pi = q->param;
            lua_pop(L, 1);
        }
        int pad = 0;
        if (has_opts) ckt_l_field_bool(L, 4, "tensor", "pad", &pad);
        ckt_expr_id shape[CKT_K_MAX_RANK], stride[CKT_K_MAX_RANK];
        int rank = global_geometry(L, 3, kb, shape, stride);
        if (ckt_kernel_global(kb->k, pi, dt, rank, shape, stride, pad, &idx, &err))
            return ckt_l_error(L, &err);
        /* opts.limit = true (the buffer's element count) or a size expression: every access is
         * also masked against [0, limit); the shape may then hold variables and device reads */
        if (has_opts && lua_getfield(L, 4, "limit") != LUA_TNIL) {
            ckt_expr_id lim;
            if (lua_isboolean(L, -1)) {
                int li;
                if (!lua_toboolean(L, -1)) return ckt_l_argerror(L, 4, "field 'limit' is false");
                if (ckt_kernel_param_extent(kb->k, pi, &li, &err)) return ckt_l_error(L, &err);
                lim = ckt_kernel_param(kb->k, li)->expr;
            } else {
                lim = ckt_lk_toexpr(L, -1, kb, "limit");
            }
            if (ckt_kernel_global_limit(kb->k, idx, lim, &err)) return ckt_l_error(L, &err);
            lua_pop(L, 1);
        }
    } else if (mem == CKT_MEM_LDS) {
        ckt_layout lay;
        ckt_swizzle sw = {0, 0, 0};
        ckt_composed *c = luaL_testudata(L, 3, CKT_L_COMPOSED);
        if (c) {
            if (c->offset)
                return ckt_l_errorf(
                    L, "tensor: an LDS layout composed with an offset (%lld) is not supported",
                    (long long)c->offset);
            lay = c->inner;
            sw = c->sw;
        } else {
            ckt_l_tolayout(L, 3, "LDS layout", &lay);
        }
        if (has_opts && lua_getfield(L, 4, "swizzle") != LUA_TNIL) {
            ckt_swizzle *s = luaL_testudata(L, -1, CKT_L_SWIZZLE);
            if (!s)
                return ckt_l_errorf(L, "tensor: opts.swizzle must be a ckt.swizzle, got %s",
                                    luaL_typename(L, -1));
            if (c) return ckt_l_errorf(L, "tensor: the layout is already swizzled");
            sw = *s;
        }
        int64_t stages = 0; /* opts.stages: a ring of that many tiles (t:stage(i), l_async.c) */
        if (has_opts && ckt_l_field_int(L, 4, "tensor", "stages", &stages) &&
            (stages < 1 || stages > 16))
            return ckt_l_errorf(L, "tensor: stages %lld outside 1..16", (long long)stages);
        if (ckt_kernel_lds(kb->k, dt, &lay, &sw, &idx, &err) ||
            (stages && ckt_kernel_lds_stages(kb->k, idx, stages, &err)))
            return ckt_l_error(L, &err);
    } else {
        if (lua_isinteger(L, 3)) {
            if (ckt_kernel_registers(kb->k, dt, -1, (int64_t)lua_tointeger(L, 3), &idx, &err))
                return ckt_l_error(L, &err);
        } else {
            int64_t lengths[CKT_K_MAX_RANK];
            int rank =
                has_opts ? ckt_lk_int_list_field(L, 4, "tensor", "lengths", lengths, CKT_K_MAX_RANK)
                         : -1;
            if (rank < 1)
                return ckt_l_errorf(L, "tensor: a register tensor over a distribution needs "
                                       "opts.lengths (the tile it covers)");
            int di = ckt_lk_todist(L, 3, kb, "tensor", rank, lengths);
            if (ckt_kernel_registers(kb->k, dt, di, 0, &idx, &err)) return ckt_l_error(L, &err);
        }
    }
    ckt_lk_newobj(L, kb, ki, CKT_L_KTENSOR, idx);
    return 1;
}

static int t_tostring(lua_State *L)
{
    l_kobj *o = luaL_checkudata(L, 1, CKT_L_KTENSOR);
    const ckt_ktensor *t = ckt_lk_ktensor(o);
    lua_pushfstring(L, "ckt.tensor(%s %s %s, rank %d)", ckt_memory_name(t->mem),
                    ckt_dtype_name(t->dtype), t->name, t->rank);
    return 1;
}

static int t_dtype(lua_State *L)
{
    lua_pushstring(L, ckt_dtype_name(ckt_lk_ktensor(luaL_checkudata(L, 1, CKT_L_KTENSOR))->dtype));
    return 1;
}
static int t_memory(lua_State *L)
{
    lua_pushstring(L, ckt_memory_name(ckt_lk_ktensor(luaL_checkudata(L, 1, CKT_L_KTENSOR))->mem));
    return 1;
}
static int t_nvalues(lua_State *L)
{
    const ckt_ktensor *t = ckt_lk_ktensor(luaL_checkudata(L, 1, CKT_L_KTENSOR));
    if (t->mem != CKT_MEM_REG)
        return ckt_l_errorf(L, "nvalues: only register tensors have values per thread");
    lua_pushinteger(L, (lua_Integer)t->nvalues);
    return 1;
}

l_kobj *ckt_lk_checkreg(lua_State *L, int idx, l_kernel *kb, const char *what)
{
    l_kobj *t = ckt_lk_checktensor(L, idx, what);
    int arg = idx > 0 ? idx : 0;
    char pre[96];
    ckt_l_prefix(pre, sizeof pre, what);
    if (t->kb != kb) ckt_l_argerror(L, arg, "%sthe tensor belongs to another kernel", pre);
    if (ckt_lk_ktensor(t)->mem != CKT_MEM_REG)
        ckt_l_argerror(L, arg, "%sregister tensor expected, got a %s tensor", pre,
                       ckt_memory_name(ckt_lk_ktensor(t)->mem));
    return t;
}

l_kobj *ckt_lk_checkwindow(lua_State *L, int idx, const char *what)
{
    l_kobj *w = ckt_l_checkclass(L, idx, CKT_L_WINDOW, "tile window", what);
    ckt_lk_require_building(L, w->kb, what ? what : "window");
    return w;
}

static int expr_list(lua_State *L, int idx, l_kernel *kb, const char *what, ckt_expr_id *out,
                     int cap)
{
    int arg = idx > 0 ? idx : 0;
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx))
        ckt_l_argerror(L, arg, "%s: list expected, got %s", what, luaL_typename(L, idx));
    int n = (int)luaL_len(L, idx);
    if (n < 1 || n > cap) ckt_l_argerror(L, arg, "%s: %d entries (1..%d allowed)", what, n, cap);
    for (int i = 0; i < n; i++) {
        lua_geti(L, idx, i + 1);
        char w[96];
        snprintf(w, sizeof w, "%s[%d]", what, i + 1);
        out[i] = ckt_lk_toexpr(L, -1, kb, w);
        lua_pop(L, 1);
    }
    return n;
}

static int make_window(lua_State *L, l_kobj *t, int tidx, const int64_t *lengths, int n,
                       const ckt_expr_id *origin, int dist_idx)
{
    int wi;
    ckt_error err;
    if (n != ckt_lk_ktensor(t)->rank)
        return ckt_l_errorf(L, "tile_window: %d window lengths for a rank-%d tensor", n,
                            ckt_lk_ktensor(t)->rank);
    if (ckt_kernel_window_make(t->kb->k, t->id, n, lengths, origin, &wi, &err))
        return ckt_l_error(L, &err);
    ckt_lk_push_owner(L, tidx);
    l_kobj *w = ckt_lk_newobj(L, t->kb, -1, CKT_L_WINDOW, wi);
    lua_remove(L, -2);
    if (dist_idx)
        w->dist = ckt_lk_todist(L, dist_idx, t->kb, "tile_window: distribution", n, lengths);
    return 1;
}

/* Arguments 1-3 of tile_window and local_tile: a kernel tensor, the window lengths (named
 * lname) and one expression per dim (named ename); returns the rank. */
static int window_args(lua_State *L, const char *fn, const char *lname, const char *ename,
                       l_kobj **t, int64_t *lengths, ckt_expr_id *e)
{
    *t = ckt_lk_checktensor(L, 1, NULL);
    ckt_lk_require_building(L, (*t)->kb, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    int n = ckt_l_int_list(L, 2, lname, lengths, CKT_K_MAX_RANK);
    int ne = expr_list(L, 3, (*t)->kb, ename, e, CKT_K_MAX_RANK);
    if (ne != n)
        return ckt_l_errorf(L, "%s: %s has %d dims but %s has %d", fn, lname, n, ename, ne);
    return n;
}

/* ckt.tile_window(tensor, window_lengths, origin [, distribution]) */
static int l_tile_window(lua_State *L)
{
    l_kobj *t;
    int64_t lengths[CKT_K_MAX_RANK];
    ckt_expr_id origin[CKT_K_MAX_RANK];
    int n = window_args(L, "tile_window", "window_lengths", "origin", &t, lengths, origin);
    ckt_lk_check_pool(L, t->kb);
    return make_window(L, t, 1, lengths, n, origin, lua_isnoneornil(L, 4) ? 0 : 4);
}

/* ckt.local_tile(tensor, tile_shape, coords [, distribution]): the window of tile `coords` */
static int l_local_tile(lua_State *L)
{
    if (!luaL_testudata(L, 1, CKT_L_KTENSOR))
        return ckt_l_layout_local_tile(L); /* CuTe's local_tile of a layout */
    l_kobj *t;
    int64_t lengths[CKT_K_MAX_RANK];
    ckt_expr_id c[CKT_K_MAX_RANK];
    int n = window_args(L, "local_tile", "tile_shape", "coords", &t, lengths, c);
    for (int d = 0; d < n; d++) c[d] = ckt_expr_mulc(ckt_kernel_exprs(t->kb->k), c[d], lengths[d]);
    ckt_lk_check_pool(L, t->kb);
    return make_window(L, t, 1, lengths, n, c, lua_isnoneornil(L, 4) ? 0 : 4);
}

const ckt_kwindow *ckt_lk_kwindow(const l_kobj *w) { return ckt_kernel_window(w->kb->k, w->id); }

/* w:move(steps) */
static int w_move(lua_State *L)
{
    l_kobj *w = ckt_lk_checkwindow(L, 1, NULL);
    ckt_expr_id step[CKT_K_MAX_RANK];
    int n = expr_list(L, 2, w->kb, "move: steps", step, CKT_K_MAX_RANK);
    if (n != ckt_lk_kwindow(w)->rank)
        return ckt_l_errorf(L, "move: %d steps for a rank-%d window", n, ckt_lk_kwindow(w)->rank);
    ckt_lk_check_pool(L, w->kb);
    ckt_error err;
    if (ckt_kernel_move(w->kb->k, w->id, step, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* vector_dim= and scalar_per_vector= of the options table at idx, checked for a rank-`rank` tile */
void ckt_lk_vector_opts(lua_State *L, int idx, const char *fn, int rank, access_opts *o)
{
    ckt_l_field_int(L, idx, fn, "vector_dim", &o->vector_dim);
    ckt_l_field_int(L, idx, fn, "scalar_per_vector", &o->spv);
    if (o->vector_dim < -1 || o->vector_dim >= rank)
        ckt_l_errorf(L, "%s: vector_dim %lld outside 0..%d", fn, (long long)o->vector_dim,
                     rank - 1);
    if (o->spv < 0 || o->spv > 16)
        ckt_l_errorf(L, "%s: scalar_per_vector %lld outside 1..16 (0: choose)", fn,
                     (long long)o->spv);
}

/* {dist=, vector_dim=, scalar_per_vector=, fill=} of load / store / copy */
access_opts ckt_lk_read_access(lua_State *L, int idx, l_kobj *w, const char *fn, int allow_dist)
{
    static const char *const allowed[] = {"dist", "vector_dim", "scalar_per_vector", "fill", NULL};
    const ckt_kwindow *kw = ckt_lk_kwindow(w);
    access_opts o = {w->dist, -1, 0, 0.0f};
    if (lua_isnoneornil(L, idx)) return o;
    luaL_checktype(L, idx, LUA_TTABLE);
    ckt_l_check_fields(L, idx, fn, allowed);
    ckt_lk_vector_opts(L, idx, fn, kw->rank, &o);
    if (lua_getfield(L, idx, "fill") != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TNUMBER) ckt_l_argerror(L, idx, "field 'fill' must be a number");
        o.fill = (float)lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "dist") != LUA_TNIL) {
        if (!allow_dist)
            ckt_l_errorf(
                L,
                "%s: the register tensor's distribution decides who stores what (no 'dist' here)",
                fn);
        if (w->part)
            ckt_l_errorf(
                L, "%s: a partition's thread layout decides who holds what (no 'dist' here)", fn);
        o.dist = ckt_lk_todist(L, -1, w->kb, fn, kw->rank, kw->lengths);
    }
    lua_pop(L, 1);
    return o;
}

int ckt_lk_default_dist_index(lua_State *L, l_kobj *w)
{
    const ckt_kwindow *kw = ckt_lk_kwindow(w);
    ckt_dist d;
    default_dist(L, w->kb, kw->rank, kw->lengths, ckt_kernel_tensor(w->kb->k, kw->tensor)->dtype,
                 &d);
    int di;
    ckt_error err;
    if (ckt_kernel_add_dist(w->kb->k, &d, &di, &err)) ckt_l_error(L, &err);
    return di;
}

int ckt_lk_load_into(lua_State *L, l_kobj *w, int widx, access_opts o)
{
    if (o.dist < 0) o.dist = ckt_lk_default_dist_index(L, w);
    int r;
    ckt_error err;
    if (ckt_kernel_load(w->kb->k, w->id, o.dist, (int)o.vector_dim, o.spv, o.fill, &r, &err))
        ckt_l_error(L, &err);
    ckt_lk_push_owner(L, widx);
    ckt_lk_newobj(L, w->kb, -1, CKT_L_KTENSOR, r);
    lua_remove(L, -2);
    return 1;
}

/* w:load([{dist=, vector_dim=, scalar_per_vector=, fill=}]) -> register tensor */
static int w_load(lua_State *L)
{
    l_kobj *w = ckt_lk_checkwindow(L, 1, NULL);
    return ckt_lk_load_into(L, w, 1, ckt_lk_read_access(L, 2, w, "load", 1));
}

/* A partition takes the registers by value index (its own distribution); a plain window takes
 * each value where the register tensor's distribution puts it. */
void ckt_lk_store_from(lua_State *L, l_kobj *w, l_kobj *r, access_opts o)
{
    ckt_error err;
    if (ckt_kernel_store_as(w->kb->k, w->id, r->id, w->part ? w->dist : -1, (int)o.vector_dim,
                            o.spv, &err))
        ckt_l_error(L, &err);
}

/* w:store(reg [, {vector_dim=, scalar_per_vector=}]) */
static int w_store(lua_State *L)
{
    l_kobj *w = ckt_lk_checkwindow(L, 1, NULL);
    l_kobj *r = ckt_lk_checkreg(L, 2, w->kb, NULL);
    ckt_lk_store_from(L, w, r, ckt_lk_read_access(L, 3, w, "store", 0));
    return 0;
}

static int w_tostring(lua_State *L)
{
    l_kobj *w = luaL_checkudata(L, 1, CKT_L_WINDOW);
    const ckt_kwindow *kw = ckt_lk_kwindow(w);
    char buf[128];
    size_t n = 0;
    for (int d = 0; d < kw->rank; d++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld", d ? "x" : "",
                              (long long)kw->lengths[d]);
    if (w->part) {
        const ckt_dist *d = ckt_kernel_dist(w->kb->k, w->dist);
        lua_pushfstring(L, "ckt.partition(%s over %s: %s, %I values per thread)", buf,
                        ckt_kernel_tensor(w->kb->k, kw->tensor)->name, d->desc,
                        (lua_Integer)d->nvalues);
        return 1;
    }
    lua_pushfstring(L, "ckt.window(%s over %s)", buf,
                    ckt_kernel_tensor(w->kb->k, kw->tensor)->name);
    return 1;
}

/* w:nvalues() -> the values per thread of a partition (or of the window's distribution) */
static int w_nvalues(lua_State *L)
{
    l_kobj *w = luaL_checkudata(L, 1, CKT_L_WINDOW);
    if (w->dist < 0)
        return ckt_l_errorf(L, "nvalues: the window has no distribution (only partitions and "
                               "windows made with one say who holds what)");
    lua_pushinteger(L, (lua_Integer)ckt_kernel_dist(w->kb->k, w->dist)->nvalues);
    return 1;
}

static int w_lengths(lua_State *L)
{
    l_kobj *w = luaL_checkudata(L, 1, CKT_L_WINDOW);
    ckt_l_push_int_list(L, ckt_lk_kwindow(w)->lengths, ckt_lk_kwindow(w)->rank);
    return 1;
}

/* b:fetch(array, index) -> element index of array (a rank-1 global tensor of i32 or i64 with
 * stride 1 whose shape is an expression of the parameters), read on the device; the index (a
 * block-uniform integer expression) is clamped into the array, whose buffer the launch checks */
static int b_fetch(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "fetch");
    l_kobj *o = ckt_lk_checktensor(L, 2, "fetch");
    ckt_expr_id index = ckt_lk_toexpr(L, 3, kb, "index");
    const ckt_ktensor *t = ckt_kernel_tensor(kb->k, o->id);
    int64_t one = 0;
    if (!t || t->mem != CKT_MEM_GLOBAL || t->rank != 1 || t->limited ||
        (t->dtype != CKT_I32 && t->dtype != CKT_I64) ||
        !ckt_expr_is_const(ckt_kernel_exprs(kb->k), t->stride[0], &one) || one != 1)
        return ckt_l_argerror(L, 2,
                              "a rank-1 global tensor of i32 or i64 with stride 1 expected (not "
                              "limited)");
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
    if (!ckt_expr_uniform(ex, index))
        return ckt_l_argerror(L, 3,
                              "the index depends on the thread id (it must be block-uniform)");
    bool i32 = t->dtype == CKT_I32;
    ckt_expr_id e = ckt_expr_load(ex, t->name, i32 ? INT32_MIN : INT64_MIN,
                                  i32 ? INT32_MAX : INT64_MAX, index, t->shape[0]);
    ckt_lk_check_pool(L, kb);
    ckt_lk_push_expr(L, kb, 1, e);
    return 1;
}

/* b:atomic_add(array, index, value) -> the element's value before the add (a block-uniform
 * variable): once for the block, after its global writes are made visible device-wide
 * (ckt_kernel_atomic_add: array a rank-1 global i32 tensor with stride 1, index clamped into it) */
static int b_atomic_add(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "atomic_add");
    l_kobj *o = ckt_lk_checktensor(L, 2, "atomic_add");
    ckt_expr_id index = ckt_lk_toexpr(L, 3, kb, "index");
    lua_Integer value = luaL_checkinteger(L, 4);
    ckt_expr_id old;
    ckt_error err;
    if (ckt_kernel_atomic_add(kb->k, o->id, index, (int64_t)value, &old, &err))
        return ckt_l_error(L, &err);
    ckt_lk_push_expr(L, kb, 1, old);
    return 1;
}

void ckt_lk_open_tensor(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_KTENSOR, "__tostring", t_tostring},
                                       {CKT_L_KTENSOR, "dtype", t_dtype},
                                       {CKT_L_KTENSOR, "memory", t_memory},
                                       {CKT_L_KTENSOR, "nvalues", t_nvalues},
                                       {CKT_L_WINDOW, "__tostring", w_tostring},
                                       {CKT_L_WINDOW, "move", w_move},
                                       {CKT_L_WINDOW, "load", w_load},
                                       {CKT_L_WINDOW, "store", w_store},
                                       {CKT_L_WINDOW, "lengths", w_lengths},
                                       {CKT_L_WINDOW, "nvalues", w_nvalues},
                                       {CKT_L_MODULE, "tensor", l_tensor},
                                       {CKT_L_MODULE, "tile_window", l_tile_window},
                                       {CKT_L_MODULE, "local_tile", l_local_tile},
                                       {CKT_L_KERNEL, "fetch", b_fetch},
                                       {CKT_L_KERNEL, "atomic_add", b_atomic_add},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    ckt_l_help_add(L, "tensor",
                   "ckt.tensor(memory, dtype, layout [, opts]) in a kernel's build: memory a "
                   "pointer parameter (global: layout a\n"
                   "ckt.layout or {shape=, stride=} of integers and size expressions, row-major by "
                   "default; opts.pad = true\n"
                   "masks accesses past the shape), \"lds\" (a static, possibly swizzled, layout; "
                   "opts.stages = n for a\n"
                   "multi-stage ring) or \"register\" (a distribution with opts.lengths, or n "
                   "values per thread).\n"
                   "Methods (help('ktensor')): t:dtype(), t:memory(), t:nvalues(), t:stage(i), "
                   "t:stages(), t:view(layout).");
    ckt_l_help_add(
        L, "ktensor",
        "A kernel tensor (ckt.tensor, or the registers a window's load gives): t:dtype(), "
        "t:memory() (\"global\",\n"
        "\"lds\", \"register\"), t:nvalues() (values a thread holds), t:stages() and "
        "t:stage(i) (an LDS ring's\n"
        "stage), t:view(layout) (the same LDS elements through another layout). Windows "
        "over it: help('tile_window').");
    ckt_l_help_add(L, "tile_window",
                   "ckt.tile_window(tensor, window_lengths, origin [, distribution]) -> a window "
                   "(CK Tile's tile_window):\n"
                   "the lengths static, the origin expressions; ckt.local_tile(tensor, tile, "
                   "coords [, distribution]) is the\n"
                   "window at origin coords x tile. w:load([{dist=, vector_dim=, "
                   "scalar_per_vector=, fill=}]) -> registers,\n"
                   "w:store(reg [, {vector_dim=, scalar_per_vector=}]), w:move(steps), "
                   "w:lengths(), w:nvalues().\n"
                   "Distributions: CK encodings, ckt.fragment, nested layouts, make_layout_tv or a "
                   "(thread, value) layout;\n"
                   "default threads row-major with 16-byte vectors along the last dim.");
    ckt_l_help_add(
        L, "window",
        "A tile window (ckt.tile_window, ckt.local_tile): w:load([{dist=, vector_dim=, "
        "scalar_per_vector=, fill=}])\n"
        "-> a register tensor, w:store(reg [, {...}]), w:move(steps) (the origin moves by steps),\n"
        "w:lengths(), w:nvalues() (values a thread holds).");
}
