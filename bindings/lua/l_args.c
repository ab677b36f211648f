/* ckt Lua bindings — Lua values as launch arguments and grids, for every caller: exe:launch,
 * dev:launch, ckt.autotune's problem table, g:launch. One conversion; each caller raises the
 * returned reason in its own style (a launch error, an argument error of autotune). */
#include <stdio.h>
#include <string.h>

#include "l_internal.h"
#include "l_kernel.h"

const char *ckt_l_to_arg(lua_State *L, int idx, const char *what, ckt_param_kind kind,
                         const ckt_dtype *dtype, ckt_arg *out, char *why, size_t cap)
{
    switch (kind) {
    case CKT_PARAM_PTR: {
        ckt_dtype holds;
        ckt_buffer *b = ckt_l_testbuffer(L, idx, &holds);
        if (!b) {
            snprintf(why, cap, "%s must be a device buffer, got %s", what, luaL_typename(L, idx));
            return why;
        }
        if (dtype && holds != *dtype) {
            snprintf(why, cap, "%s: the buffer holds %s but the kernel reads it as %s", what,
                     ckt_dtype_name(holds), ckt_dtype_name(*dtype));
            return why;
        }
        *out = ckt_arg_buffer(b);
        return NULL;
    }
    case CKT_PARAM_F32:
        if (lua_type(L, idx) != LUA_TNUMBER) {
            snprintf(why, cap, "%s must be a number, got %s", what, luaL_typename(L, idx));
            return why;
        }
        *out = ckt_arg_f32((float)lua_tonumber(L, idx));
        return NULL;
    case CKT_PARAM_I32:
    case CKT_PARAM_I64: {
        int exact = 0; /* an integer, or a float with an integral value (2^40) */
        lua_Integer v = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &exact) : 0;
        if (!exact) {
            if (lua_type(L, idx) == LUA_TNUMBER)
                snprintf(why, cap, "%s must be an integer, got %s", what, lua_tostring(L, idx));
            else
                snprintf(why, cap, "%s must be an integer, got %s", what, luaL_typename(L, idx));
            return why;
        }
        if (kind == CKT_PARAM_I32 && (v < INT32_MIN || v > INT32_MAX)) {
            snprintf(why, cap, "%s = %lld does not fit i32", what, (long long)v);
            return why;
        }
        *out = kind == CKT_PARAM_I32 ? ckt_arg_i32((int32_t)v) : ckt_arg_i64((int64_t)v);
        return NULL;
    }
    case CKT_PARAM_TMAP: break;
    }
    snprintf(why, cap, "%s is a tensor map, made at launch", what);
    return why;
}

const char *ckt_l_to_grid(lua_State *L, int idx, const char *name, int64_t g[3], char *why,
                          size_t cap)
{
    idx = lua_absindex(L, idx);
    g[0] = g[1] = g[2] = 1;
    int n = 0;
    if (lua_isinteger(L, idx)) {
        g[0] = lua_tointeger(L, idx);
        n = 1;
    } else if (lua_istable(L, idx)) {
        n = (int)lua_rawlen(L, idx);
        if (n < 1 || n > 3) {
            snprintf(why, cap, "must have 1 to 3 extents, got %d", n);
            return why;
        }
        for (int d = 0; d < n; d++) {
            int t = lua_rawgeti(L, idx, d + 1);
            bool ok = t == LUA_TNUMBER && lua_isinteger(L, -1);
            g[d] = ok ? lua_tointeger(L, -1) : 0;
            lua_pop(L, 1);
            if (!ok) {
                snprintf(why, cap, "extent %d must be an integer, got %s", d + 1,
                         lua_typename(L, t));
                return why;
            }
        }
    } else {
        snprintf(why, cap, "must be an integer or a list of up to 3 integers, got %s",
                 luaL_typename(L, idx));
        return why;
    }
    for (int d = 0; d < n; d++)
        if (g[d] < 1) {
            snprintf(why, cap, "is out of range: %s.%c is %lld (every extent must be >= 1)", name,
                     "xyz"[d], (long long)g[d]);
            return why;
        }
    return NULL;
}

int ckt_l_kernel_args(lua_State *L, int t, int positional, const ckt_kernel *k, ckt_arg *args)
{
    char why[256], what[96];
    int n = 0;
    for (int i = 0; i < ckt_kernel_nparams(k); i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (!ckt_kparam_is_argument(p)) continue;
        if (positional)
            lua_geti(L, positional, n + 1);
        else
            lua_getfield(L, t, p->name);
        if (lua_isnil(L, -1)) return -(i + 1); /* the caller names it (after a typo check) */
        if (ckt_l_to_arg(L, -1, "", p->kind, &p->dtype, &args[n], why, sizeof why)) {
            snprintf(what, sizeof what, "launch: argument %d '%s'", n + 1, p->name);
            ckt_l_to_arg(L, -1, what, p->kind, &p->dtype, &args[n], why, sizeof why);
            return ckt_l_errorf(L, "%s", why); /* named only when it fails: no snprintf a launch */
        }
        n++;
        lua_pop(L, 1); /* buffers stay anchored in the table */
    }
    return n;
}

/* The buffers' metatable under a light-userdata key: a launch tests its arguments against it
 * without hashing the class name (luaL_testudata's registry lookup) for every argument. */
static const char BUFFER_MT = 'B';

void ckt_l_remember_buffer_class(lua_State *L)
{
    luaL_getmetatable(L, "ckt.buffer");
    lua_rawsetp(L, LUA_REGISTRYINDEX, &BUFFER_MT);
}

ckt_buffer *ckt_l_testbuffer(lua_State *L, int idx, ckt_dtype *dtype)
{
    if (lua_type(L, idx) != LUA_TUSERDATA || !lua_getmetatable(L, idx)) return NULL;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &BUFFER_MT);
    bool same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    if (!same) return NULL;
    ckt_l_buffer *b = lua_touserdata(L, idx);
    if (!b->buf) ckt_l_errorf(L, "buffer: used after close");
    *dtype = b->dtype;
    return b->buf;
}

ckt_stream *ckt_l_optstream(lua_State *L, int idx, const char *what)
{
    if (lua_isnoneornil(L, idx)) return NULL;
    if (!luaL_testudata(L, idx, "ckt.stream"))
        ckt_l_errorf(L, "%s: stream must be a ckt.stream (dev:stream()), got %s", what,
                     ckt_l_typename(L, idx));
    ckt_l_stream *u = lua_touserdata(L, idx);
    if (!u->s) ckt_l_errorf(L, "%s: the stream is closed", what);
    return u->s;
}
