/* Lua: host arrays (ckt.array), devices (ckt.device) and device buffers. All three are
 * to-be-closed: __close and __gc both release, exactly once; a released object refuses use. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckt/dtype.h"
#include "ckt/runtime.h"
#include "l_internal.h"

#define CKT_L_ARRAY "ckt.array"
#define CKT_L_DEVICE "ckt.device"
#define CKT_L_BUFFER "ckt.buffer"
#define MAX_ARRAY_BYTES ((int64_t)1 << 36) /* 64 GiB: beyond that a typo, not an array */

/* ---- element types and shapes ---- */

ckt_dtype ckt_l_checkdtype(lua_State *L, int idx, const char *what)
{
    int arg = idx > 0 ? idx : 0;
    if (!what) what = "dtype";
    if (lua_type(L, idx) != LUA_TSTRING)
        ckt_l_argerror(L, arg,
                       "%s must be a string (f16, bf16, f32, i32, i8, u8, i64, f64), got %s", what,
                       luaL_typename(L, idx));
    ckt_dtype t;
    ckt_error err;
    if (ckt_dtype_parse(lua_tostring(L, idx), &t, &err))
        ckt_l_argerror(L, arg, "%s: %s", what, err.msg);
    return t;
}

/* n or {d0, d1, ...}: the shape and the element count, checked for sign and overflow */
static int64_t check_shape(lua_State *L, int idx, const char *fn, ckt_dtype t, int64_t *shape,
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

static ckt_l_array *new_array(lua_State *L, ckt_dtype t, const int64_t *shape, int rank, int64_t n)
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
    int64_t n = check_shape(L, 2, "array", t, shape, &rank);
    new_array(L, t, shape, rank, n);
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
    ckt_l_array *b = new_array(L, a->dtype, a->shape, a->rank, a->n);
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

/* ---- devices ---- */

typedef struct {
    ckt_device *dev;
} l_device;
typedef struct {
    ckt_buffer *buf;
    ckt_dtype dtype;
    int64_t n;
} l_buffer;

ckt_device *ckt_l_checkdevice(lua_State *L, int idx)
{
    l_device *d = luaL_checkudata(L, idx, CKT_L_DEVICE);
    if (!d->dev) ckt_l_errorf(L, "device: used after close");
    return d->dev;
}

/* ckt.device([name]): "cpu", "cuda", "hip" or a target; default: the context's default target */
int ckt_l_device_open(lua_State *L)
{
    const char *name = lua_isnoneornil(L, 1) ? ckt_context_default_target(ckt_l_context(L)) : NULL;
    if (!name) {
        if (lua_type(L, 1) != LUA_TSTRING)
            return ckt_l_errorf(
                L, "device: name must be a string (cpu, cuda, hip or a target), got %s",
                luaL_typename(L, 1));
        name = lua_tostring(L, 1);
    }
    l_device *d = lua_newuserdatauv(L, sizeof *d, 0);
    d->dev = NULL;
    luaL_setmetatable(L, CKT_L_DEVICE);
    ckt_error err;
    if (ckt_device_open(ckt_l_context(L), name, &d->dev, &err)) return ckt_l_error(L, &err);
    return 1;
}

/* live buffers keep the device itself alive */
CKT_L_CLOSER(d_close, l_device, CKT_L_DEVICE, dev, ckt_device_close)

static int d_name(lua_State *L)
{
    lua_pushstring(L, ckt_device_name(ckt_l_checkdevice(L, 1)));
    return 1;
}
static int d_target(lua_State *L)
{
    lua_pushstring(L, ckt_device_target(ckt_l_checkdevice(L, 1)));
    return 1;
}
static int d_backend(lua_State *L)
{
    lua_pushstring(L, ckt_backend_name(ckt_device_backend(ckt_l_checkdevice(L, 1))));
    return 1;
}
static int d_tostring(lua_State *L)
{
    l_device *d = luaL_checkudata(L, 1, CKT_L_DEVICE);
    lua_pushfstring(L, "ckt.device(%s)", d->dev ? ckt_device_name(d->dev) : "closed");
    return 1;
}
static int d_sync(lua_State *L)
{
    ckt_error err;
    if (ckt_device_synchronize(ckt_l_checkdevice(L, 1), &err)) return ckt_l_error(L, &err);
    return 0;
}

/* dev:alloc(dtype, n | shape) -> buffer */
static int d_alloc(lua_State *L)
{
    ckt_device *dev = ckt_l_checkdevice(L, 1);
    ckt_dtype t = ckt_l_checkdtype(L, 2, "dtype");
    int64_t shape[CKT_L_ARRAY_MAX_RANK];
    int rank;
    int64_t n = check_shape(L, 3, "alloc", t, shape, &rank);
    l_buffer *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->buf = NULL;
    b->dtype = t;
    b->n = n;
    luaL_setmetatable(L, CKT_L_BUFFER);
    ckt_error err;
    if (ckt_buffer_alloc(dev, (size_t)n * ckt_dtype_size(t), &b->buf, &err))
        return ckt_l_error(L, &err);
    return 1;
}

/* ---- buffers ---- */

ckt_buffer *ckt_l_checkbuffer(lua_State *L, int idx)
{
    l_buffer *b = luaL_checkudata(L, idx, CKT_L_BUFFER);
    if (!b->buf) ckt_l_errorf(L, "buffer: used after close");
    return b->buf;
}

static l_buffer *checkbuf(lua_State *L, int idx)
{
    ckt_l_checkbuffer(L, idx);
    return lua_touserdata(L, idx);
}

static ckt_l_array *matching_array(lua_State *L, const l_buffer *b, int idx, const char *fn)
{
    if (!luaL_testudata(L, idx, CKT_L_ARRAY))
        ckt_l_errorf(L, "%s: expected a ckt.array, got %s", fn, luaL_typename(L, idx));
    ckt_l_array *a = ckt_l_checkarray(L, idx);
    if (a->dtype != b->dtype || a->n != b->n)
        ckt_l_errorf(L, "%s: the array (%s x %lld) does not match the buffer (%s x %lld)", fn,
                     ckt_dtype_name(a->dtype), (long long)a->n, ckt_dtype_name(b->dtype),
                     (long long)b->n);
    return a;
}

/* b:upload(array) -> b; b:download([array]) -> the array (a new one when none is given) */
static int transfer(lua_State *L, bool download)
{
    l_buffer *b = checkbuf(L, 1);
    if (download && lua_isnoneornil(L, 2)) { /* into a new array */
        lua_settop(L, 1);
        new_array(L, b->dtype, &b->n, 1, b->n);
    }
    ckt_l_array *a = matching_array(L, b, 2, download ? "download" : "upload");
    size_t n = ckt_buffer_size(b->buf);
    ckt_error err;
    if (download ? ckt_buffer_download(b->buf, 0, a->data, n, &err)
                 : ckt_buffer_upload(b->buf, 0, a->data, n, &err))
        return ckt_l_error(L, &err);
    lua_settop(L, download ? 2 : 1);
    return 1;
}
static int b_upload(lua_State *L) { return transfer(L, false); }
static int b_download(lua_State *L) { return transfer(L, true); }

static int b_memset(lua_State *L)
{
    l_buffer *b = checkbuf(L, 1);
    int64_t v = ckt_l_checkint(L, 2, "byte");
    if (v < 0 || v > 255)
        return ckt_l_errorf(L, "memset: byte %lld is outside [0, 255]", (long long)v);
    ckt_error err;
    if (ckt_buffer_memset(b->buf, 0, (uint8_t)v, ckt_buffer_size(b->buf), &err))
        return ckt_l_error(L, &err);
    lua_settop(L, 1);
    return 1;
}

static int b_copy_from(lua_State *L)
{
    l_buffer *b = checkbuf(L, 1);
    if (!luaL_testudata(L, 2, CKT_L_BUFFER))
        return ckt_l_errorf(L, "copy_from: expected a buffer, got %s", luaL_typename(L, 2));
    l_buffer *s = checkbuf(L, 2);
    if (ckt_buffer_size(s->buf) != ckt_buffer_size(b->buf))
        return ckt_l_errorf(L, "copy_from: sizes differ (%zu vs %zu bytes)",
                            ckt_buffer_size(s->buf), ckt_buffer_size(b->buf));
    ckt_error err;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (ckt_buffer_copy(b->buf, 0, s->buf, 0, ckt_buffer_size(b->buf), &err) ||
        ckt_device_synchronize(ckt_buffer_device(b->buf), &err))
        return ckt_l_error(L, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    lua_settop(L, 1);
    /* the wall time of the copy, synchronized: the device-to-device bandwidth benchmarks compare
     * with */
    lua_pushnumber(L, (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                          (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6);
    return 2;
}

CKT_L_CLOSER(b_close, l_buffer, CKT_L_BUFFER, buf, ckt_buffer_free)

static int b_size(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)checkbuf(L, 1)->n);
    return 1;
}
static int b_bytes(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ckt_buffer_size(ckt_l_checkbuffer(L, 1)));
    return 1;
}
/* b:address() -> the device address as an integer: for handing the buffer to another library
 * in the same process (bench/gemm.lua's cuBLAS); it grants nothing by itself */
static int b_address(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)(uintptr_t)ckt_buffer_ptr(ckt_l_checkbuffer(L, 1)));
    return 1;
}
/* b:device() -> the device the buffer lives on (a new handle to it) */
static int b_device(lua_State *L)
{
    ckt_device *dev = ckt_buffer_device(ckt_l_checkbuffer(L, 1));
    l_device *d = lua_newuserdatauv(L, sizeof *d, 0);
    d->dev = dev;
    ckt_device_retain(dev);
    luaL_setmetatable(L, CKT_L_DEVICE);
    return 1;
}

static int b_dtype(lua_State *L)
{
    lua_pushstring(L, ckt_dtype_name(checkbuf(L, 1)->dtype));
    return 1;
}
ckt_dtype ckt_l_buffer_dtype(lua_State *L, int idx) { return checkbuf(L, idx)->dtype; }
static int b_tostring(lua_State *L)
{
    l_buffer *b = luaL_checkudata(L, 1, CKT_L_BUFFER);
    if (!b->buf)
        lua_pushliteral(L, "ckt.buffer (closed)");
    else
        lua_pushfstring(L, "ckt.buffer(%s x %I on %s)", ckt_dtype_name(b->dtype), (lua_Integer)b->n,
                        ckt_device_name(ckt_buffer_device(b->buf)));
    return 1;
}

/* dev:launch(binary, {grid=, block=, shared=, params={{"ptr","in"}, {"i32","n"}, ...}, args={buf,
 * 10, ...}}) -> ms. The raw launch of a compiled binary; kernels built with ckt.kernel have their
 * own launch. */
static int device_launch(lua_State *L)
{
    static const char *const allowed[] = {"grid", "block", "shared", "params", "args", NULL};
    ckt_device *dev = ckt_l_checkdevice(L, 1);
    ckt_binary *bin = ckt_l_checkbinary(L, 2);
    ckt_l_check_fields(L, 3, "launch", allowed);
    int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, shared = 0;
    const char *dims[2] = {"grid", "block"};
    int64_t *dst[2] = {grid, block};
    for (int k = 0; k < 2; k++) {
        int t = lua_getfield(L, 3, dims[k]);
        if (t == LUA_TNUMBER)
            dst[k][0] = ckt_l_checkint(L, -1, k ? "launch: block" : "launch: grid");
        else if (t == LUA_TTABLE) {
            int n = ckt_l_int_list(L, -1, k ? "launch: block" : "launch: grid", dst[k], 3);
            if (n < 1) ckt_l_errorf(L, "launch: %s must have 1 to 3 extents", dims[k]);
        } else
            ckt_l_argerror(L, 3,
                           "field '%s' must be an integer or a list of up to 3 integers, got %s",
                           dims[k], luaL_typename(L, -1));
        lua_pop(L, 1);
    }
    ckt_l_field_int(L, 3, "launch", "shared", &shared);
    if (lua_getfield(L, 3, "params") != LUA_TTABLE)
        return ckt_l_argerror(L, 3, "field 'params' (a list of {kind, name}) is required");
    if (lua_getfield(L, 3, "args") != LUA_TTABLE)
        return ckt_l_argerror(L, 3, "field 'args' (a list) is required");
    int np = (int)luaL_len(L, -2), na = (int)luaL_len(L, -1);
    if (np > 64) return ckt_l_errorf(L, "launch: at most 64 parameters");
    if (na != np) return ckt_l_errorf(L, "launch: the kernel takes %d arguments, got %d", np, na);
    ckt_param sig[64];
    union {
        void *p;
        int32_t i32;
        int64_t i64;
        float f32;
    } vals[64];
    void *args[64];
    int pt = lua_gettop(L) - 1, at = lua_gettop(L);
    for (int i = 0; i < np; i++) {
        lua_geti(L, pt, i + 1);
        if (!lua_istable(L, -1))
            return ckt_l_errorf(L, "launch: params[%d] must be {kind, name}", i + 1);
        lua_geti(L, -1, 1);
        lua_geti(L, -2, 2);
        const char *kind = lua_tostring(L, -2), *name = lua_tostring(L, -1);
        if (!kind)
            return ckt_l_errorf(L, "launch: params[%d][1] must be a kind (ptr, i32, i64, f32)",
                                i + 1);
        sig[i].name = name ? name : "?"; /* anchored in the params table */
        if (!ckt_param_kind_parse(kind, &sig[i].kind))
            return ckt_l_errorf(L, "launch: params[%d] has unknown kind '%s' (ptr, i32, i64, f32)",
                                i + 1, kind);
        lua_pop(L, 3);
        lua_geti(L, at, i + 1);
        char what[160];
        snprintf(what, sizeof what, "launch: argument %d '%s'", i + 1, sig[i].name);
        if (sig[i].kind == CKT_PARAM_PTR) {
            if (!luaL_testudata(L, -1, CKT_L_BUFFER))
                return ckt_l_errorf(L, "%s must be a device buffer, got %s", what,
                                    luaL_typename(L, -1));
            vals[i].p = ckt_buffer_ptr(ckt_l_checkbuffer(L, -1));
        } else if (sig[i].kind == CKT_PARAM_F32) {
            if (lua_type(L, -1) != LUA_TNUMBER)
                return ckt_l_errorf(L, "%s must be a number, got %s", what, luaL_typename(L, -1));
            vals[i].f32 = (float)lua_tonumber(L, -1);
        } else {
            int64_t v = ckt_l_checkint(L, -1, what);
            if (sig[i].kind == CKT_PARAM_I32 && (v < INT32_MIN || v > INT32_MAX))
                return ckt_l_errorf(L, "%s = %lld does not fit i32", what, (long long)v);
            if (sig[i].kind == CKT_PARAM_I32)
                vals[i].i32 = (int32_t)v;
            else
                vals[i].i64 = v;
        }
        lua_pop(L, 1);
        args[i] = &vals[i];
    }
    ckt_launch_params p = {{grid[0], grid[1], grid[2]},
                           {block[0], block[1], block[2]},
                           shared,
                           args,
                           np,
                           sig,
                           np,
                           ckt_l_deadline(L)};
    double ms = 0;
    ckt_error err;
    if (ckt_launch(dev, bin, &p, &ms, &err)) return ckt_l_error(L, &err);
    lua_pushnumber(L, ms);
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
                                       {CKT_L_DEVICE, "__close", d_close},
                                       {CKT_L_DEVICE, "__gc", d_close},
                                       {CKT_L_DEVICE, "__tostring", d_tostring},
                                       {CKT_L_DEVICE, "close", d_close},
                                       {CKT_L_DEVICE, "name", d_name},
                                       {CKT_L_DEVICE, "target", d_target},
                                       {CKT_L_DEVICE, "backend", d_backend},
                                       {CKT_L_DEVICE, "alloc", d_alloc},
                                       {CKT_L_DEVICE, "synchronize", d_sync},
                                       {CKT_L_DEVICE, "launch", device_launch},
                                       {CKT_L_BUFFER, "__close", b_close},
                                       {CKT_L_BUFFER, "__gc", b_close},
                                       {CKT_L_BUFFER, "__tostring", b_tostring},
                                       {CKT_L_BUFFER, "close", b_close},
                                       {CKT_L_BUFFER, "upload", b_upload},
                                       {CKT_L_BUFFER, "download", b_download},
                                       {CKT_L_BUFFER, "memset", b_memset},
                                       {CKT_L_BUFFER, "copy_from", b_copy_from},
                                       {CKT_L_BUFFER, "size", b_size},
                                       {CKT_L_BUFFER, "bytes", b_bytes},
                                       {CKT_L_BUFFER, "dtype", b_dtype},
                                       {CKT_L_BUFFER, "device", b_device},
                                       {CKT_L_BUFFER, "address", b_address},
                                       {CKT_L_MODULE, "array", l_array},
                                       {CKT_L_MODULE, "device", ckt_l_device_open},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
}
