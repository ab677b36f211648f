/* Lua: host arrays (ckt.array), to-be-closed: __close and __gc both release, exactly once; a
 * released array refuses use. Devices and buffers: l_device.c. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckt/dtype.h"
#include "ckt/runtime.h"
#include "l_internal.h"

#define CKT_L_ARRAY "ckt.array"
#define MAX_ARRAY_BYTES ((int64_t)1 << 36) /* 64 GiB: beyond that a typo, not an array */

/* ---- element types and shapes ---- */

ckt_dtype ckt_l_checkdtype(lua_State *L, int idx, const char *what)
{
    int arg = idx > 0 ? idx : 0;
    if (!what) what = "dtype";
    if (lua_type(L, idx) != LUA_TSTRING)
        ckt_l_argerror(
            L, arg,
            "%s must be a string (f16, bf16, f32, i32, i8, u8, i64, f64, e4m3, e5m2), got %s", what,
            luaL_typename(L, idx));
    ckt_dtype t;
    ckt_error err;
    if (ckt_dtype_parse(lua_tostring(L, idx), &t, &err))
        ckt_l_argerror(L, arg, "%s: %s", what, err.msg);
    return t;
}

/* n or {d0, d1, ...}: the shape and the element count, checked for sign and overflow */
int64_t ckt_l_check_shape(lua_State *L, int idx, const char *fn, ckt_dtype t, int64_t *shape,
                          int *rank)
{
    char what[96];
    if (lua_type(L, idx) == LUA_TTABLE) {
        int n = (int)luaL_len(L, idx);
        if (n < 1 || n > CKT_L_ARRAY_MAX_RANK)
            ckt_l_errorf(L, "%s: shape must have 1 to %d extents, got %d", fn, CKT_L_ARRAY_MAX_RANK,
                         n);
        *rank = n;
        for (int i = 0; i < n; i++) {
            lua_geti(L, idx, i + 1);
            snprintf(what, sizeof what, "%s: shape[%d]", fn, i + 1);
            shape[i] = ckt_l_checkint(L, -1, what);
            lua_pop(L, 1);
        }
    } else {
        snprintf(what, sizeof what, "%s: size", fn);
        if (lua_isnoneornil(L, idx))
            ckt_l_errorf(L, "%s: size (an integer or a shape table) is required", fn);
        shape[0] = ckt_l_checkint(L, idx, what);
        *rank = 1;
    }
    int64_t count = 1;
    for (int i = 0; i < *rank; i++) {
        if (shape[i] <= 0)
            ckt_l_errorf(L, "%s: extent %d is %lld (must be positive)", fn, i + 1,
                         (long long)shape[i]);
        if (shape[i] > MAX_ARRAY_BYTES / count)
            ckt_l_errorf(L, "%s: %lld elements x ... exceed %lld bytes", fn, (long long)shape[i],
                         (long long)MAX_ARRAY_BYTES);
        count *= shape[i];
    }
    if (count > MAX_ARRAY_BYTES / (int64_t)ckt_dtype_size(t))
        ckt_l_errorf(L, "%s: %lld elements of %s exceed the %lld-byte limit", fn, (long long)count,
                     ckt_dtype_name(t), (long long)MAX_ARRAY_BYTES);
    return count;
}

/* ---- host arrays ---- */

ckt_l_array *ckt_l_checkarray(lua_State *L, int idx)
{
    ckt_l_array *a = luaL_checkudata(L, idx, CKT_L_ARRAY);
    if (!a->data) ckt_l_errorf(L, "array: used after close");
    return a;
}

ckt_l_array *ckt_l_new_array(lua_State *L, ckt_dtype t, const int64_t *shape, int rank, int64_t n)
{
    ckt_l_array *a = lua_newuserdatauv(L, sizeof *a, 0);
    memset(a, 0, sizeof *a);
    size_t bytes = (size_t)n * ckt_dtype_size(t), cap = (bytes + 63) / 64 * 64;
    /* through the state's allocator: an embedding host's memory cap covers host arrays too */
    a->allocf = lua_getallocf(L, &a->alloc_ud);
    a->raw_size = cap + 64;
    a->raw = a->allocf(a->alloc_ud, NULL, LUA_TUSERDATA, a->raw_size);
    if (!a->raw)
        ckt_l_errorf(
            L, "array: cannot allocate %zu bytes (out of memory or over the state's memory limit)",
            bytes);
    a->data = (void *)(((uintptr_t)a->raw + 63) & ~(uintptr_t)63);
    memset(a->data, 0, cap);
    a->dtype = t;
    a->n = n;
    a->rank = rank;
    memcpy(a->shape, shape, sizeof *shape * (size_t)rank);
    luaL_setmetatable(L, CKT_L_ARRAY);
    return a;
}

/* ckt.array(dtype, n | shape) */
static int l_array(lua_State *L)
{
    ckt_dtype t = ckt_l_checkdtype(L, 1, "dtype");
    int64_t shape[CKT_L_ARRAY_MAX_RANK];
    int rank;
    int64_t n = ckt_l_check_shape(L, 2, "array", t, shape, &rank);
    ckt_l_new_array(L, t, shape, rank, n);
    return 1;
}

static void *elem(const ckt_l_array *a, int64_t i)
{
    return (char *)a->data + (size_t)i * ckt_dtype_size(a->dtype);
}

static int64_t check_index(lua_State *L, const ckt_l_array *a, int idx)
{
    int64_t i = ckt_l_checkint(L, idx, "array: index");
    if (i < 0 || i >= a->n)
        ckt_l_errorf(L, "array: index %lld is outside [0, %lld) (indices are 0-based)",
                     (long long)i, (long long)a->n);
    return i;
}

static void push_elem(lua_State *L, const ckt_l_array *a, int64_t i)
{
    if (ckt_dtype_is_float(a->dtype))
        lua_pushnumber(L, ckt_dtype_load(a->dtype, elem(a, i)));
    else
        lua_pushinteger(L, (lua_Integer)ckt_dtype_load_i64(a->dtype, elem(a, i)));
}

static void store_value(lua_State *L, ckt_l_array *a, int64_t i, int v)
{
    if (lua_type(L, v) != LUA_TNUMBER)
        ckt_l_errorf(L, "array: value must be a number, got %s", luaL_typename(L, v));
    if (lua_isinteger(L, v))
        ckt_dtype_store_i64(a->dtype, elem(a, i), (int64_t)lua_tointeger(L, v));
    else
        ckt_dtype_store(a->dtype, elem(a, i), lua_tonumber(L, v));
}

static int a_get(lua_State *L)
{
    ckt_l_array *a = ckt_l_checkarray(L, 1);
    push_elem(L, a, check_index(L, a, 2));
    return 1;
}

static int a_set(lua_State *L)
{
    ckt_l_array *a = ckt_l_checkarray(L, 1);
    store_value(L, a, check_index(L, a, 2), 3);
    lua_settop(L, 1);
    return 1;
}

/* a[i] for integers, methods for strings */
static int a_index(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING) {
        luaL_getmetatable(L, CKT_L_ARRAY);
        lua_getfield(L, -1, lua_tostring(L, 2));
        if (lua_isnil(L, -1) || lua_tostring(L, 2)[0] == '_')
            return ckt_l_errorf(L, "array: no method '%s'", lua_tostring(L, 2));
        return 1;
    }
    return a_get(L);
}

static int a_newindex(lua_State *L)
{
    a_set(L);
    return 0;
}

static int a_fill(lua_State *L)
{
    ckt_l_array *a = ckt_l_checkarray(L, 1);
    store_value(L, a, 0, 2);
    size_t es = ckt_dtype_size(a->dtype);
    for (int64_t i = 1; i < a->n; i++) memcpy(elem(a, i), a->data, es);
    lua_settop(L, 1);
    return 1;
}

/* NaN in every float type and -1 / 255 in the integer types: all bytes 0xFF */
static int a_poison(lua_State *L)
{
    ckt_l_array *a = ckt_l_checkarray(L, 1);
    memset(a->data, 0xff, (size_t)a->n * ckt_dtype_size(a->dtype));
    lua_settop(L, 1);
    return 1;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* :random{seed=, lo=, hi=, zeros=}: deterministic for a seed; never exactly 0 unless zeros=true
 * (a zero input hides indexing bugs: x*0 is right wherever x came from). Floats are uniform in
 * [lo, hi) (default [-1, 1)), integers uniform in [lo, hi] (default [-8, 8], u8 [1, 16]). */
static int a_random(lua_State *L)
{
    static const char *const allowed[] = {"seed", "lo", "hi", "zeros", NULL};
    ckt_l_array *a = ckt_l_checkarray(L, 1);
    int64_t seed = 1;
    int zeros = 0;
    double lo, hi;
    int fl = ckt_dtype_is_float(a->dtype);
    if (fl)
        lo = -1, hi = 1;
    else if (a->dtype == CKT_U8)
        lo = 1, hi = 16;
    else
        lo = -8, hi = 8;
    if (!lua_isnoneornil(L, 2)) {
        ckt_l_check_fields(L, 2, "random", allowed);
        ckt_l_field_int(L, 2, "random", "seed", &seed);
        ckt_l_field_bool(L, 2, "random", "zeros", &zeros);
        if (ckt_l_field_number(L, 2, "random", "lo", &lo) && !isfinite(lo))
            ckt_l_argerror(L, 2, "field 'lo' must be finite");
        if (ckt_l_field_number(L, 2, "random", "hi", &hi) && !isfinite(hi))
            ckt_l_argerror(L, 2, "field 'hi' must be finite");
    }
    if (!(lo < hi) && !(lo == hi && !fl))
        ckt_l_errorf(L, "random: lo (%g) must be below hi (%g)", lo, hi);
    if (!fl) lo = ceil(lo), hi = floor(hi);
    if (!zeros && lo == 0 && hi == 0)
        ckt_l_errorf(L, "random: the range [0, 0] has only zeros (pass zeros=true)");
    if (!fl && hi - lo > 9e15)
        ckt_l_errorf(L, "random: the integer range [%g, %g] is too wide", lo, hi);
    uint64_t s = (uint64_t)seed;
    for (int64_t i = 0; i < a->n; i++) {
        for (int tries = 0;; tries++) {
            uint64_t r = splitmix(&s);
            double v = fl ? lo + (hi - lo) * ((double)(r >> 11) * 0x1p-53)
                          : lo + (double)(r % (uint64_t)(hi - lo + 1));
            ckt_dtype_store(a->dtype, elem(a, i), v);
            /* re-read: a tiny float can round to zero in f16 */
            if (zeros || ckt_dtype_load(a->dtype, elem(a, i)) != 0 || tries > 64) break;
        }
    }
    lua_settop(L, 1);
    return 1;
}

static int a_copy(lua_State *L)
{
    ckt_l_array *a = ckt_l_checkarray(L, 1);
    ckt_l_array *b = ckt_l_new_array(L, a->dtype, a->shape, a->rank, a->n);
    memcpy(b->data, a->data, (size_t)a->n * ckt_dtype_size(a->dtype));
    return 1;
}

/* Default tolerances: about a few ulps of the coarser of the two types; exact for integers. */
static void default_tol(ckt_dtype t, double *rtol, double *atol)
{
    switch (t) {
    case CKT_F16: *rtol = 1e-3, *atol = 1e-3; break;
    case CKT_BF16: *rtol = 8e-3, *atol = 8e-3; break;
    case CKT_F32: *rtol = 1e-5, *atol = 1e-6; break;
    case CKT_F64: *rtol = 1e-12, *atol = 1e-14; break;
    /* half an ulp: 2^-4 (3 mantissa bits), 2^-3 (2) */
    case CKT_E4M3: *rtol = 0.0625, *atol = 0x1p-9; break;
    case CKT_E5M2: *rtol = 0.125, *atol = 0x1p-16; break;
    default: *rtol = 0, *atol = 0;
    }
}

/* a:compare(ref [, {rtol=, atol=}]) -> ok, max_abs_err, first_bad_index (0-based; nil when ok).
 * |a - ref| <= atol + rtol * |ref| element by element; NaN anywhere is a mismatch. */
static int a_compare(lua_State *L)
{
    static const char *const allowed[] = {"rtol", "atol", NULL};
    ckt_l_array *a = ckt_l_checkarray(L, 1);
    if (!luaL_testudata(L, 2, CKT_L_ARRAY))
        return ckt_l_errorf(L, "compare: the reference must be a ckt.array, got %s",
                            luaL_typename(L, 2));
    ckt_l_array *b = ckt_l_checkarray(L, 2);
    if (a->n != b->n)
        return ckt_l_errorf(L, "compare: sizes differ (%lld vs %lld elements)", (long long)a->n,
                            (long long)b->n);
    double r1, a1, r2, a2;
    default_tol(a->dtype, &r1, &a1);
    default_tol(b->dtype, &r2, &a2);
    double rtol = r1 > r2 ? r1 : r2, atol = a1 > a2 ? a1 : a2;
    if (!lua_isnoneornil(L, 3)) {
        ckt_l_check_fields(L, 3, "compare", allowed);
        if (ckt_l_field_number(L, 3, "compare", "rtol", &rtol) && !(rtol >= 0))
            ckt_l_argerror(L, 3, "field 'rtol' must be >= 0");
        if (ckt_l_field_number(L, 3, "compare", "atol", &atol) && !(atol >= 0))
            ckt_l_argerror(L, 3, "field 'atol' must be >= 0");
    }
    double max_err = 0;
    int64_t first_bad = -1;
    int exact =
        !ckt_dtype_is_float(a->dtype) && !ckt_dtype_is_float(b->dtype) && rtol == 0 && atol == 0;
    for (int64_t i = 0; i < a->n; i++) {
        double x = ckt_dtype_load(a->dtype, elem(a, i)), y = ckt_dtype_load(b->dtype, elem(b, i)),
               e;
        int bad;
        if (exact) { /* integers compare as integers: doubles lose i64 precision */
            int64_t xi = ckt_dtype_load_i64(a->dtype, elem(a, i)),
                    yi = ckt_dtype_load_i64(b->dtype, elem(b, i));
            bad = xi != yi;
            e = fabs((double)xi - (double)yi);
        } else if (isinf(x) && x == y) {
            bad = 0, e = 0; /* the same infinity */
        } else {
            e = fabs(x - y);
            bad = !(e <= atol + rtol * fabs(y)); /* NaN on either side fails here */
        }
        if (isnan(e)) e = INFINITY;
        if (e > max_err) max_err = e;
        if (bad && first_bad < 0) first_bad = i;
    }
    lua_pushboolean(L, first_bad < 0);
    lua_pushnumber(L, max_err);
    if (first_bad < 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, (lua_Integer)first_bad);
    return 3;
}

static int a_size(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ckt_l_checkarray(L, 1)->n);
    return 1;
}
static int a_dtype(lua_State *L)
{
    lua_pushstring(L, ckt_dtype_name(ckt_l_checkarray(L, 1)->dtype));
    return 1;
}
static int a_bytes(lua_State *L)
{
    ckt_l_array *a = ckt_l_checkarray(L, 1);
    lua_pushinteger(L, (lua_Integer)((size_t)a->n * ckt_dtype_size(a->dtype)));
    return 1;
}
static int a_shape(lua_State *L)
{
    ckt_l_array *a = ckt_l_checkarray(L, 1);
    ckt_l_push_int_list(L, a->shape, a->rank);
    return 1;
}

static int a_totable(lua_State *L)
{
    ckt_l_array *a = ckt_l_checkarray(L, 1);
    if (a->n > (1 << 26))
        return ckt_l_errorf(L, "totable: %lld elements are too many for a Lua table",
                            (long long)a->n);
    lua_createtable(L, (int)a->n, 0);
    for (int64_t i = 0; i < a->n; i++) {
        push_elem(L, a, i);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* a:assign{v0, v1, ...}: exactly size values */
static int a_assign(lua_State *L)
{
    ckt_l_array *a = ckt_l_checkarray(L, 1);
    if (lua_type(L, 2) != LUA_TTABLE)
        return ckt_l_errorf(L, "assign: expected a list of %lld numbers, got %s", (long long)a->n,
                            luaL_typename(L, 2));
    lua_Integer n = luaL_len(L, 2);
    if (n != a->n)
        return ckt_l_errorf(L, "assign: the list has %lld values, the array %lld elements",
                            (long long)n, (long long)a->n);
    for (int64_t i = 0; i < a->n; i++) {
        lua_geti(L, 2, (lua_Integer)i + 1);
        store_value(L, a, i, lua_gettop(L));
        lua_pop(L, 1);
    }
    lua_settop(L, 1);
    return 1;
}

static int a_close(lua_State *L)
{
    ckt_l_array *a = luaL_checkudata(L, 1, CKT_L_ARRAY);
    if (a->raw) a->allocf(a->alloc_ud, a->raw, a->raw_size, 0);
    a->raw = NULL;
    a->data = NULL;
    return 0;
}

static int a_closed(lua_State *L)
{
    lua_pushboolean(L, ((ckt_l_array *)luaL_checkudata(L, 1, CKT_L_ARRAY))->data == NULL);
    return 1;
}

static int a_len(lua_State *L) { return a_size(L); }

static int a_tostring(lua_State *L)
{
    ckt_l_array *a = luaL_checkudata(L, 1, CKT_L_ARRAY);
    if (!a->data) {
        lua_pushliteral(L, "ckt.array (closed)");
        return 1;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "ckt.array(%s, ", ckt_dtype_name(a->dtype));
    luaL_addvalue(&b);
    for (int i = 0; i < a->rank; i++) {
        lua_pushfstring(L, i ? "x%I" : "%I", (lua_Integer)a->shape[i]);
        luaL_addvalue(&b);
    }
    luaL_addstring(&b, "): ");
    for (int64_t i = 0; i < a->n && i < 8; i++) {
        push_elem(L, a, i);
        lua_pushfstring(L, i ? ", %s" : "%s", luaL_tolstring(L, -1, NULL));
        lua_remove(L, -2);
        lua_remove(L, -2);
        luaL_addvalue(&b);
    }
    if (a->n > 8) luaL_addstring(&b, ", ...");
    luaL_pushresult(&b);
    return 1;
}

void ckt_l_open_array(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_ARRAY, "__index", a_index},
                                       {CKT_L_ARRAY, "__newindex", a_newindex},
                                       {CKT_L_ARRAY, "__len", a_len},
                                       {CKT_L_ARRAY, "__close", a_close},
                                       {CKT_L_ARRAY, "__gc", a_close},
                                       {CKT_L_ARRAY, "__tostring", a_tostring},
                                       {CKT_L_ARRAY, "get", a_get},
                                       {CKT_L_ARRAY, "set", a_set},
                                       {CKT_L_ARRAY, "fill", a_fill},
                                       {CKT_L_ARRAY, "random", a_random},
                                       {CKT_L_ARRAY, "poison", a_poison},
                                       {CKT_L_ARRAY, "copy", a_copy},
                                       {CKT_L_ARRAY, "compare", a_compare},
                                       {CKT_L_ARRAY, "size", a_size},
                                       {CKT_L_ARRAY, "dtype", a_dtype},
                                       {CKT_L_ARRAY, "bytes", a_bytes},
                                       {CKT_L_ARRAY, "shape", a_shape},
                                       {CKT_L_ARRAY, "totable", a_totable},
                                       {CKT_L_ARRAY, "assign", a_assign},
                                       {CKT_L_ARRAY, "close", a_close},
                                       {CKT_L_ARRAY, "closed", a_closed},
                                       {CKT_L_MODULE, "array", l_array},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    ckt_l_help_add(L, "array",
                   "ckt.array(dtype, n | shape) -> a host array, zero-filled, 64-byte aligned (f16 "
                   "bf16 f32 f64 i8 u8 i32\n"
                   "i64 ...). a[i], a:get(i), a:set(i, v) (0-based; stores round to nearest even, "
                   "integers saturate);\n"
                   "a:fill(v), a:assign{...}, a:totable(), a:random{seed=, lo=, hi=, zeros=}, "
                   "a:poison() (NaN / -1 bytes),\n"
                   "a:copy(), a:compare(ref [, {rtol=, atol=}]) -> ok, max error, first bad index; "
                   "a:size(), a:shape(),\n"
                   "a:dtype(), a:bytes(); a:close() or <close>.");
}
