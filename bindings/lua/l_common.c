#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "l_internal.h"

int ckt_l_error(lua_State *L, const ckt_error *err)
{
    return luaL_error(L, "%s", err && err->msg[0] ? err->msg : "unknown error");
}

int ckt_l_verrorf(lua_State *L, const char *frame, const char *fmt, va_list ap)
{
    char buf[CKT_ERROR_MSG_CAP];
    vsnprintf(buf, sizeof buf, fmt, ap);
    return luaL_error(L, frame, buf);
}

int ckt_l_errorf(lua_State *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = ckt_l_verrorf(L, "%s", fmt, ap);
    va_end(ap);
    return r;
}

int ckt_l_argerror(lua_State *L, int arg, const char *fmt, ...)
{
    char buf[CKT_ERROR_MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return arg > 0 ? luaL_argerror(L, arg, buf) : luaL_error(L, "%s", buf);
}

const char *ckt_l_prefix(char *buf, size_t cap, const char *what)
{
    snprintf(buf, cap, "%s%s", what ? what : "", what ? ": " : "");
    return buf;
}

int64_t ckt_l_checkint_arg(lua_State *L, int idx, int arg, const char *what)
{
    int t = lua_type(L, idx);
    if (t != LUA_TNUMBER)
        return ckt_l_argerror(L, arg, "%s must be an integer, got %s", what, luaL_typename(L, idx));
    if (lua_isinteger(L, idx)) return (int64_t)lua_tointeger(L, idx);
    lua_Number x = lua_tonumber(L, idx);
    if (isnan(x)) ckt_l_argerror(L, arg, "%s must be an integer, got NaN", what);
    if (!(x >= -9.2233720368547758e18 && x < 9.2233720368547758e18))
        ckt_l_argerror(L, arg, "%s is out of the 64-bit integer range (%g)", what, x);
    if (x != floor(x)) ckt_l_argerror(L, arg, "%s must be an integer, got %g", what, x);
    return (int64_t)x;
}

int64_t ckt_l_checkint(lua_State *L, int idx, const char *what)
{
    return ckt_l_checkint_arg(L, idx, idx > 0 ? idx : 0, what);
}

int64_t ckt_l_optint(lua_State *L, int idx, const char *what, int64_t def)
{
    return lua_isnoneornil(L, idx) ? def : ckt_l_checkint(L, idx, what);
}

/* Push field t[name]; 0 (nothing pushed) when absent or nil. */
static int field(lua_State *L, int t, const char *field_name)
{
    lua_getfield(L, t, field_name);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

/* The field's name in errors: bare when the table is an argument (the call names the function),
 * else after the `fn` that says where the table came from. */
static const char *field_what(char *buf, size_t cap, int t, const char *fn, const char *field_name)
{
    if (t > 0)
        snprintf(buf, cap, "field '%s'", field_name);
    else
        snprintf(buf, cap, "%s: field '%s'", fn, field_name);
    return buf;
}

int ckt_l_field_int(lua_State *L, int t, const char *fn, const char *field_name, int64_t *out)
{
    int tabs = lua_absindex(L, t);
    if (!field(L, tabs, field_name)) return 0;
    char what[160];
    *out =
        ckt_l_checkint_arg(L, -1, t > 0 ? t : 0, field_what(what, sizeof what, t, fn, field_name));
    lua_pop(L, 1);
    return 1;
}

/* Push the field when present and of Lua type `type` (`a_type` in errors); 0 when absent or nil,
 * raise when of another type. */
static int typed_field(lua_State *L, int t, const char *fn, const char *field_name, int type,
                       const char *a_type)
{
    int tabs = lua_absindex(L, t);
    if (!field(L, tabs, field_name)) return 0;
    char what[160];
    if (lua_type(L, -1) != type)
        ckt_l_argerror(L, t > 0 ? t : 0, "%s must be %s, got %s",
                       field_what(what, sizeof what, t, fn, field_name), a_type,
                       luaL_typename(L, -1));
    return 1;
}

/* The typed fields differ only in the type and the read (a string stays anchored in the options
 * table). */
#define TYPED_FIELD(name, ctype, type, a_type, read)                                               \
    int name(lua_State *L, int t, const char *fn, const char *field_name, ctype *out)              \
    {                                                                                              \
        if (!typed_field(L, t, fn, field_name, type, a_type)) return 0;                            \
        *out = read(L, -1);                                                                        \
        lua_pop(L, 1);                                                                             \
        return 1;                                                                                  \
    }
TYPED_FIELD(ckt_l_field_bool, int, LUA_TBOOLEAN, "a boolean", lua_toboolean)
TYPED_FIELD(ckt_l_field_number, double, LUA_TNUMBER, "a number", lua_tonumber)
TYPED_FIELD(ckt_l_field_string, const char *, LUA_TSTRING, "a string", lua_tostring)
#undef TYPED_FIELD

int ckt_l_int_list(lua_State *L, int idx, const char *what, int64_t *v, int cap)
{
    int arg = idx > 0 ? idx : 0;
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx))
        return ckt_l_argerror(L, arg, "%s must be a list of integers, got %s", what,
                              luaL_typename(L, idx));
    lua_Integer n = luaL_len(L, idx);
    if (n > cap)
        return ckt_l_argerror(L, arg, "%s has %lld entries, more than the capacity %d", what,
                              (long long)n, cap);
    for (lua_Integer i = 1; i <= n; i++) {
        char w[200];
        snprintf(w, sizeof w, "%s[%lld]", what, (long long)i);
        lua_geti(L, idx, i);
        v[i - 1] = ckt_l_checkint_arg(L, -1, arg, w);
        lua_pop(L, 1);
    }
    return (int)n;
}

void ckt_l_push_int_list(lua_State *L, const int64_t *v, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)v[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

/* The setters differ only in the push. */
#define SETTER(name, type, push)                                                                   \
    void name(lua_State *L, const char *field, type v)                                             \
    {                                                                                              \
        push(L, v);                                                                                \
        lua_setfield(L, -2, field);                                                                \
    }
SETTER(ckt_l_set_int, lua_Integer, lua_pushinteger)
SETTER(ckt_l_set_number, lua_Number, lua_pushnumber)
SETTER(ckt_l_set_bool, bool, lua_pushboolean)
SETTER(ckt_l_set_function, lua_CFunction, lua_pushcfunction)
SETTER(ckt_l_set_string, const char *, lua_pushstring)
#undef SETTER

void ckt_l_push_names(lua_State *L, const char *list)
{
    lua_newtable(L);
    for (int n = 1; list && *list; n++) {
        const char *e = strchr(list, ',');
        lua_pushlstring(L, list, e ? (size_t)(e - list) : strlen(list));
        lua_rawseti(L, -2, n);
        list = e ? e + 1 : NULL;
    }
}

bool ckt_l_push_str_field(lua_State *L, const char *key, const ckt_l_str_field *f, size_t n)
{
    for (size_t i = 0; key && i < n; i++)
        if (!strcmp(key, f[i].name)) {
            lua_pushstring(L, f[i].v);
            return true;
        }
    return false;
}

bool ckt_l_push_int_field(lua_State *L, const char *key, const ckt_l_int_field *f, size_t n)
{
    for (size_t i = 0; key && i < n; i++)
        if (!strcmp(key, f[i].name)) {
            lua_pushinteger(L, (lua_Integer)f[i].v);
            return true;
        }
    return false;
}

int ckt_l_index_method(lua_State *L, const char *tname)
{
    luaL_getmetatable(L, tname);
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    return 1;
}

void ckt_l_check_fields(lua_State *L, int t, const char *fn, const char *const *allowed)
{
    int arg = t > 0 ? t : 0;
    const char *where = arg ? "" : fn, *sep = arg ? "" : ": ";
    t = lua_absindex(L, t);
    if (!lua_istable(L, t)) {
        ckt_l_argerror(L, arg, "%s%soptions table expected, got %s", where, sep,
                       luaL_typename(L, t));
        return;
    }
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) {
            ckt_l_argerror(L, arg, "%s%soptions table has a non-string key (%s)", where, sep,
                           luaL_typename(L, -1));
            return;
        }
        const char *k = lua_tostring(L, -1);
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, k) == 0) {
                ok = 1;
                break;
            }
        if (!ok) {
            ckt_l_argerror(L, arg, "%s%sunknown option '%s'", where, sep, k);
            return;
        }
    }
}

bool ckt_l_sandboxed(lua_State *L)
{
    bool on = lua_getfield(L, LUA_REGISTRYINDEX, CKT_L_SANDBOXED_KEY) == LUA_TBOOLEAN &&
              lua_toboolean(L, -1);
    lua_pop(L, 1);
    return on;
}

double ckt_l_deadline(lua_State *L)
{
    double t = lua_getfield(L, LUA_REGISTRYINDEX, CKT_L_DEADLINE_KEY) == LUA_TNUMBER
                   ? (double)lua_tonumber(L, -1)
                   : 0;
    lua_pop(L, 1);
    return t;
}

static const char CONTEXT_KEY = 'C';

static int context_gc(lua_State *L)
{
    ckt_context **p = lua_touserdata(L, 1);
    if (p && *p) {
        ckt_context_destroy(*p);
        *p = NULL;
    }
    return 0;
}

ckt_context *ckt_l_context(lua_State *L)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &CONTEXT_KEY);
    ckt_context **p = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (p && *p) return *p;
    ckt_context *ctx = NULL;
    ckt_error err;
    if (ckt_context_create(NULL, &ctx, &err) != CKT_OK) {
        ckt_l_error(L, &err);
        return NULL;
    }
    p = lua_newuserdatauv(L, sizeof *p, 0);
    *p = ctx;
    lua_createtable(L, 0, 1);
    ckt_l_set_function(L, "__gc", context_gc);
    lua_setmetatable(L, -2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &CONTEXT_KEY);
    return ctx;
}

const char *ckt_l_typename(lua_State *L, int idx)
{
    int t = luaL_getmetafield(L, idx, "__name"); /* pushes nothing when absent */
    const char *name = t == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (t != LUA_TNIL) lua_pop(L, 1); /* the name stays anchored in the value's metatable */
    return name ? name : luaL_typename(L, idx);
}

void *ckt_l_checkclass(lua_State *L, int idx, const char *tname, const char *expected,
                       const char *what)
{
    void *u = luaL_testudata(L, idx, tname);
    char pre[96];
    if (!u)
        ckt_l_argerror(L, idx > 0 ? idx : 0, "%s%s expected, got %s",
                       ckt_l_prefix(pre, sizeof pre, what), expected, ckt_l_typename(L, idx));
    return u;
}

void *ckt_l_push_value(lua_State *L, const char *tname, const void *v, size_t size)
{
    void *u = lua_newuserdatauv(L, size, 0);
    memcpy(u, v, size);
    luaL_setmetatable(L, tname);
    return u;
}

/* f as name in the table on top of the stack, a closure whose upvalue is its row */
static void set_row(lua_State *L, lua_CFunction f, const void *row, const char *name)
{
    lua_pushlightuserdata(L, (void *)row);
    lua_pushcclosure(L, f, 1);
    lua_setfield(L, -2, name);
}

void ckt_l_register(lua_State *L, const ckt_l_entry *rows)
{
    for (const ckt_l_entry *r = rows; r->name; r++) {
        if (r->cls == CKT_L_MODULE) {
            set_row(L, r->fn, r, r->name);
            continue;
        }
        luaL_newmetatable(L, r->cls); /* this class's metatable, new or already made */
        set_row(L, r->fn, r, r->name);
        lua_pop(L, 1);
    }
    for (const ckt_l_entry *r = rows; r->name; r++) { /* then each class's default __index */
        if (r->cls == CKT_L_MODULE) continue;
        luaL_getmetatable(L, r->cls);
        if (lua_getfield(L, -1, "__index") == LUA_TNIL) {
            lua_pushvalue(L, -2);
            lua_setfield(L, -3, "__index");
        }
        lua_pop(L, 2);
    }
}

const char *ckt_l_name(lua_State *L) { return ((const ckt_l_entry *)ckt_l_row(L))->name; }

int ckt_l_svg(lua_State *L) { return strcmp(ckt_l_name(L), "svg") == 0; }

void ckt_l_register_rows(lua_State *L, const char *cls, lua_CFunction f, const void *rows,
                         size_t size, size_t n)
{
    if (cls != CKT_L_MODULE) luaL_getmetatable(L, cls);
    for (size_t i = 0; i < n; i++) {
        const char *row = (const char *)rows + i * size;
        set_row(L, f, row, *(const char *const *)row);
    }
    if (cls != CKT_L_MODULE) lua_pop(L, 1);
}
