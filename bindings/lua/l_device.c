/* Lua: devices (ckt.device) and device buffers (dev:alloc), both to-be-closed: __close and __gc
 * release exactly once; a released object refuses use. A buffer closed while enqueued work uses
 * it keeps its memory until that work is done (ckt/stream.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckt/runtime.h"
#include "ckt/stream.h"
#include "l_internal.h"

#define CKT_L_ARRAY "ckt.array"
#define CKT_L_DEVICE "ckt.device"
#define CKT_L_BUFFER "ckt.buffer"

typedef struct {
    ckt_device *dev;
} l_device;
typedef ckt_l_buffer l_buffer;

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
    int64_t n = ckt_l_check_shape(L, 3, "alloc", t, shape, &rank);
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

/* The stream of an options table at idx ({stream = s}; absent or nil: none). */
static ckt_stream *opt_stream(lua_State *L, int idx, const char *fn)
{
    if (lua_isnoneornil(L, idx)) return NULL;
    if (!lua_istable(L, idx))
        ckt_l_argerror(L, idx - 1, "options must be a table ({stream = s}), got %s",
                       luaL_typename(L, idx));
    static const char *const allowed[] = {"stream", NULL};
    ckt_l_check_fields(L, idx, fn, allowed);
    lua_getfield(L, idx, "stream");
    ckt_stream *s = ckt_l_optstream(L, -1, fn);
    lua_pop(L, 1);
    return s;
}

/* b:upload(array [, {stream=}]) -> b; b:download([array] [, {stream=}]) -> the array (a new one
 * when none is given). Without a stream both wait for the device's work first; with one they are
 * ordered on it (an upload returns at once, its bytes staged; a download when they have landed). */
static int transfer(lua_State *L, bool download)
{
    l_buffer *b = checkbuf(L, 1);
    if (lua_istable(L, 2) && lua_isnone(L, 3)) lua_insert(L, 2), lua_pushnil(L), lua_insert(L, 2);
    ckt_stream *s = opt_stream(L, 3, download ? "download" : "upload");
    lua_settop(L, 2);
    if (download && lua_isnil(L, 2)) { /* into a new array */
        lua_settop(L, 1);
        ckt_l_new_array(L, b->dtype, &b->n, 1, b->n);
    }
    ckt_l_array *a = matching_array(L, b, 2, download ? "download" : "upload");
    size_t n = ckt_buffer_size(b->buf);
    ckt_error err;
    ckt_status st = download ? s ? ckt_buffer_download_async(b->buf, 0, a->data, n, s, &err)
                                 : ckt_buffer_download(b->buf, 0, a->data, n, &err)
                    : s ? ckt_buffer_upload_async(b->buf, 0, a->data, n, s, &err)
                             : ckt_buffer_upload(b->buf, 0, a->data, n, &err);
    if (st) return ckt_l_error(L, &err);
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

void ckt_l_open_device(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_DEVICE, "__close", d_close},
                                       {CKT_L_DEVICE, "__gc", d_close},
                                       {CKT_L_DEVICE, "__tostring", d_tostring},
                                       {CKT_L_DEVICE, "close", d_close},
                                       {CKT_L_DEVICE, "name", d_name},
                                       {CKT_L_DEVICE, "target", d_target},
                                       {CKT_L_DEVICE, "backend", d_backend},
                                       {CKT_L_DEVICE, "alloc", d_alloc},
                                       {CKT_L_DEVICE, "synchronize", d_sync},
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
                                       {CKT_L_MODULE, "device", ckt_l_device_open},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    ckt_l_remember_buffer_class(L);
    ckt_l_help_add(L, "device",
                   "ckt.device([name]) -> a device (\"cpu\", \"cuda\", \"hip\" or a target; "
                   "default the context's target):\n"
                   "dev:alloc(dtype, n | shape) -> a buffer (help('buffer')), dev:stream(), "
                   "dev:default_stream(),\n"
                   "dev:synchronize(), dev:capture(function(s) ... end) -> a graph, "
                   "dev:launch(binary, {...}),\n"
                   "dev:name(), dev:target(), dev:backend(); dev:close() or <close>.");
    ckt_l_help_add(L, "buffer",
                   "A device buffer (dev:alloc): buf:upload(array [, {stream=}]), "
                   "buf:download([array] [, {stream=}]),\n"
                   "buf:copy_from(other), buf:memset(byte), buf:size(), buf:bytes(), buf:dtype(), "
                   "buf:device(),\n"
                   "buf:address() (for another library in the process); buf:close() or <close>.");
}
