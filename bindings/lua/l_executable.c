/* ckt Lua bindings — built kernels and executables: k:source([target]), k:compile{...} (an
 * executable), k:signature(), and exe:launch{grid=, <param>=...} which checks its arguments by
 * parameter name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/emit.h"
#include "ckt/executable.h"
#include "ckt/stream.h"
#include "l_kernel.h"

#define DEVICES_KEY "ckt.kernel.devices"

/* user value 1: the kernel (the executable borrows its IR); 2: the ckt.binary */
typedef struct l_exe {
    ckt_executable *exe;
} l_exe;

static l_kernel *checkbuilt(lua_State *L, int idx, const char *fn)
{
    l_kernel *kb = ckt_lk_checkkernel(L, idx);
    if (!kb->built) ckt_l_errorf(L, "%s: the kernel is still being built", fn);
    return kb;
}

static const char *opt_target(lua_State *L, int idx)
{
    if (lua_isnoneornil(L, idx)) return ckt_context_default_target(ckt_l_context(L));
    if (lua_type(L, idx) != LUA_TSTRING)
        ckt_l_errorf(L, "source: target must be a string (cpu, gfx90a, sm_90, ...), got %s",
                     luaL_typename(L, idx));
    return lua_tostring(L, idx);
}

static void push_source(lua_State *L, l_kernel *kb, const char *target)
{
    char *src = NULL;
    ckt_error err;
    if (ckt_emit_named(kb->k, target, &src, &err)) ckt_l_error(L, &err);
    lua_pushstring(L, src);
    free(src);
}

/* k:source([target]) -> the generated source */
static int k_source(lua_State *L)
{
    l_kernel *kb = checkbuilt(L, 1, "source");
    push_source(L, kb, opt_target(L, 2));
    return 1;
}

CKT_L_CLOSER(x_gc, l_exe, CKT_L_EXE, exe, ckt_exe_free)

/* k:compile{target=, compile_only=, cache=, options=} -> executable */
static int k_compile(lua_State *L)
{
    static const char *const allowed[] = {"target", "compile_only", "cache", "options", NULL};
    l_kernel *kb = checkbuilt(L, 1, "compile");
    if (lua_isnoneornil(L, 2)) {
        lua_settop(L, 1);
        lua_newtable(L);
    }
    ckt_l_check_fields(L, 2, "compile", allowed);
    const char *target, *opts[32];
    if (!ckt_l_field_string(L, 2, "compile", "target", &target))
        target = ckt_context_default_target(ckt_l_context(L));
    ckt_kernel_compile_options o = {0, opts, 0};
    o.noptions = ckt_l_compile_options(L, 2, "compile", opts, &o.flags);
    ckt_executable *exe = NULL;
    ckt_error err;
    if (ckt_kernel_compile(ckt_l_context(L), kb->k, target, &o, &exe, &err))
        return ckt_l_error(L, &err);
    ckt_lk_push_executable(L, 1, exe);
    return 1;
}

void ckt_lk_push_executable(lua_State *L, int kidx, ckt_executable *exe)
{
    kidx = lua_absindex(L, kidx);
    l_exe *e = lua_newuserdatauv(L, sizeof *e, 2);
    e->exe = NULL;
    luaL_setmetatable(L, CKT_L_EXE);
    e->exe = exe; /* owned from here: freed by __gc even if what follows raises */
    lua_pushvalue(L, kidx);
    lua_setiuservalue(L, -2, 1);
    ckt_binary *bin = ckt_exe_binary(exe);
    ckt_binary_retain(bin); /* the ckt.binary userdata's own reference */
    ckt_l_pushbinary(L, bin);
    lua_setiuservalue(L, -2, 2);
}

/* k:signature() -> {{name=, kind=, dtype=}, ...}: the launch arguments in order */
static int k_signature(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkkernel(L, 1);
    lua_newtable(L);
    int n = 0;
    for (int i = 0; i < ckt_kernel_nparams(kb->k); i++) {
        const ckt_kparam *p = ckt_kernel_param(kb->k, i);
        if (!ckt_kparam_is_argument(p)) continue;
        lua_createtable(L, 0, 3);
        ckt_l_set_string(L, "name", p->name);
        ckt_l_set_string(L, "kind", ckt_param_kind_name(p->kind));
        if (p->kind == CKT_PARAM_PTR) { ckt_l_set_string(L, "dtype", ckt_dtype_name(p->dtype)); }
        lua_seti(L, -2, ++n);
    }
    return 1;
}

static int k_lds_bytes(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ckt_kernel_lds_bytes(ckt_lk_checkkernel(L, 1)->k));
    return 1;
}
static int k_name(lua_State *L)
{
    lua_pushstring(L, ckt_kernel_name(ckt_lk_checkkernel(L, 1)->k));
    return 1;
}
static int k_block(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ckt_kernel_block(ckt_lk_checkkernel(L, 1)->k));
    return 1;
}

static l_exe *checkexe(lua_State *L, int idx)
{
    l_exe *e = luaL_checkudata(L, idx, CKT_L_EXE);
    if (!e->exe) ckt_l_errorf(L, "executable: used after close");
    return e;
}

/* The device a launch runs on when neither opts.device nor a buffer argument says: one per
 * backend kept for this Lua state. */
static ckt_device *default_device(lua_State *L, ckt_backend runtime)
{
    const char *backend = ckt_backend_name(runtime);
    if (lua_getfield(L, LUA_REGISTRYINDEX, DEVICES_KEY) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, DEVICES_KEY);
    }
    if (lua_getfield(L, -1, backend) == LUA_TNIL) {
        lua_pop(L, 1);
        lua_pushcfunction(L, ckt_l_device_open);
        lua_pushstring(L, backend);
        lua_call(L, 1, 1);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, backend);
    }
    ckt_device *dev = ckt_l_checkdevice(L, -1);
    lua_pop(L, 2); /* anchored in the registry */
    return dev;
}

static const char *const launch_options[] = {"grid", "block", "device", "args", "stream", "timed"};

/* Only launch options and parameter names as keys (catches typos): `known` of the table's keys
 * were found by name; when the table has more, the first unknown one is named. */
static void check_launch_keys(lua_State *L, const ckt_kernel *k, int known)
{
    int keys = 0;
    lua_pushnil(L);
    while (lua_next(L, 2)) lua_pop(L, 1), keys++;
    if (keys == known) return;
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            ckt_l_errorf(L, "launch: keys must be names (grid, block, device, args, stream, timed "
                            "or a parameter)");
        const char *key = lua_tostring(L, -1);
        int ok = 0;
        for (size_t i = 0; i < sizeof launch_options / sizeof *launch_options && !ok; i++)
            ok = !strcmp(key, launch_options[i]);
        for (int i = 0; i < ckt_kernel_nparams(k) && !ok; i++)
            ok = !strcmp(ckt_kernel_param(k, i)->name, key) &&
                 ckt_kparam_is_argument(ckt_kernel_param(k, i));
        if (!ok)
            ckt_l_errorf(L,
                         "launch: '%s' is neither grid, block, device, args, stream, timed nor a "
                         "parameter of kernel '%s'",
                         key, ckt_kernel_name(k));
    }
}

/* exe:launch{grid=, stream=, timed=, device=, <param>=value ..., or args={...}}: enqueued on the
 * stream (default: the device's) and not waited for; timed = true waits and returns the kernel's
 * milliseconds. A sandboxed state always waits (its time limit holds over the launch). */
static int x_launch(lua_State *L)
{
    l_exe *e = checkexe(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    const ckt_kernel *k = ckt_exe_kernel(e->exe);
    int known = 0; /* launch options found (the typo check counts the table's keys against them) */
    if (lua_getfield(L, 2, "block") != LUA_TNIL) {
        int64_t block = ckt_kernel_block(k), given;
        given = lua_istable(L, -1) ? (lua_geti(L, -1, 1), ckt_l_checkint(L, -1, "launch: block[1]"))
                                   : ckt_l_checkint(L, -1, "launch: block");
        if (given != block)
            return ckt_l_errorf(L,
                                "launch: block %lld differs from the kernel's %lld threads (the "
                                "block size is built into the source)",
                                (long long)given, (long long)block);
        known++;
    }
    lua_settop(L, 2);
    int64_t grid[3];
    char why[256];
    if (lua_getfield(L, 2, "grid") == LUA_TNIL)
        return ckt_l_argerror(L, 2, "field 'grid' is required");
    if (ckt_l_to_grid(L, -1, "grid", grid, why, sizeof why))
        return ckt_l_argerror(L, 2, "field 'grid' %s", why);
    known++;
    int t = lua_getfield(L, 2, "timed"), timed = lua_toboolean(L, -1);
    if (t != LUA_TNIL && t != LUA_TBOOLEAN)
        return ckt_l_argerror(L, 2, "field 'timed' must be a boolean, got %s", lua_typename(L, t));
    known += t != LUA_TNIL;
    known += lua_getfield(L, 2, "stream") != LUA_TNIL;
    ckt_stream *s = ckt_l_optstream(L, -1, "launch");
    int positional = lua_getfield(L, 2, "args") != LUA_TNIL ? lua_gettop(L) : 0;
    if (positional && !lua_istable(L, positional))
        return ckt_l_argerror(L, 2, "field 'args' must be a list");
    known += positional != 0;
    int nsig;
    ckt_exe_signature(e->exe, &nsig);
    if (positional && luaL_len(L, positional) != nsig)
        return ckt_l_errorf(L, "launch: kernel '%s' takes %d arguments, got %d", ckt_kernel_name(k),
                            nsig, (int)luaL_len(L, positional));
    ckt_device *dev = NULL;
    if (lua_getfield(L, 2, "device") != LUA_TNIL) dev = ckt_l_checkdevice(L, -1), known++;
    ckt_arg args[CKT_K_MAX_PARAMS];
    int n = ckt_l_kernel_args(L, 2, positional, k, args);
    check_launch_keys(L, k, n < 0 ? -1 : known + (positional ? 0 : n));
    if (n < 0) {
        const ckt_kparam *p = ckt_kernel_param(k, -n - 1);
        return ckt_l_errorf(L, "launch: argument '%s' (%s) is missing", p->name,
                            ckt_param_kind_name(p->kind));
    }
    bool any_buffer = false;
    for (int i = 0; i < n; i++) any_buffer |= args[i].kind == CKT_PARAM_PTR;
    if (!dev && !s && !any_buffer) dev = default_device(L, ckt_exe_target(e->exe)->runtime);
    ckt_error err;
    double ms = 0;
    bool wait = timed || ckt_l_sandboxed(L);
    if (ckt_exe_launch_on(e->exe, s, dev, grid, args, n, ckt_l_deadline(L), wait ? &ms : NULL,
                          &err))
        return ckt_l_error(L, &err);
    if (!timed) return 0;
    lua_pushnumber(L, ms);
    return 1;
}

/* dev:launch(binary, {grid=, block=, shared=, params={{"ptr","in"}, {"i32","n"}, ...}, args={buf,
 * 10, ...}, stream=, timed=}): the raw launch of a compiled binary (kernels built with ckt.kernel
 * have their own launch). Enqueued on the stream (default: the device's) and not waited for;
 * timed = true waits and returns the kernel's milliseconds. A sandboxed state always waits. */
static int device_launch(lua_State *L)
{
    static const char *const allowed[] = {"grid", "block",  "shared", "params",
                                          "args", "stream", "timed",  NULL};
    ckt_device *dev = ckt_l_checkdevice(L, 1);
    ckt_binary *bin = ckt_l_checkbinary(L, 2);
    ckt_l_check_fields(L, 3, "launch", allowed);
    int64_t dims[2][3], shared = 0;
    const char *names[2] = {"grid", "block"};
    char why[256];
    for (int k = 0; k < 2; k++) {
        lua_getfield(L, 3, names[k]);
        if (ckt_l_to_grid(L, -1, names[k], dims[k], why, sizeof why))
            return ckt_l_argerror(L, 3, "field '%s' %s", names[k], why);
        lua_pop(L, 1);
    }
    ckt_l_field_int(L, 3, "launch", "shared", &shared);
    int timed = 0;
    ckt_l_field_bool(L, 3, "launch", "timed", &timed);
    lua_getfield(L, 3, "stream");
    ckt_stream *s = ckt_l_optstream(L, -1, "launch");
    lua_pop(L, 1);
    if (lua_getfield(L, 3, "params") != LUA_TTABLE)
        return ckt_l_argerror(L, 3, "field 'params' (a list of {kind, name}) is required");
    if (lua_getfield(L, 3, "args") != LUA_TTABLE)
        return ckt_l_argerror(L, 3, "field 'args' (a list) is required");
    int np = (int)luaL_len(L, -2), na = (int)luaL_len(L, -1);
    if (np > 64) return ckt_l_errorf(L, "launch: at most 64 parameters");
    if (na != np) return ckt_l_errorf(L, "launch: the kernel takes %d arguments, got %d", np, na);
    ckt_param sig[64];
    ckt_arg vals[64];
    void *ptrs[64], *args[64];
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
        if (!ckt_param_kind_parse(kind, &sig[i].kind) || sig[i].kind == CKT_PARAM_TMAP)
            return ckt_l_errorf(L, "launch: params[%d] has unknown kind '%s' (ptr, i32, i64, f32)",
                                i + 1, kind);
        lua_pop(L, 3);
        lua_geti(L, at, i + 1);
        char what[160];
        snprintf(what, sizeof what, "launch: argument %d '%s'", i + 1, sig[i].name);
        if (ckt_l_to_arg(L, -1, what, sig[i].kind, NULL, &vals[i], why, sizeof why))
            return ckt_l_errorf(L, "%s", why);
        lua_pop(L, 1); /* buffers stay anchored in the args table */
        ptrs[i] = sig[i].kind == CKT_PARAM_PTR ? ckt_buffer_ptr(vals[i].v.buffer) : NULL;
        args[i] = sig[i].kind == CKT_PARAM_PTR ? (void *)&ptrs[i] : (void *)&vals[i].v;
    }
    ckt_launch_params p = {{dims[0][0], dims[0][1], dims[0][2]},
                           {dims[1][0], dims[1][1], dims[1][2]},
                           shared,
                           args,
                           np,
                           sig,
                           np,
                           ckt_l_deadline(L)};
    ckt_error err;
    double ms = 0;
    bool wait = timed || ckt_l_sandboxed(L);
    if (ckt_launch_on(dev, bin, &p, s, wait ? &ms : NULL, &err)) return ckt_l_error(L, &err);
    if (!timed) return 0;
    lua_pushnumber(L, ms);
    return 1;
}

/* Methods of the compiled binary (resources, disassembly, ...) reached through the executable. */
static int x_forward(lua_State *L)
{
    checkexe(L, 1);
    lua_getiuservalue(L, 1, 2);
    if (luaL_getmetafield(L, -1, lua_tostring(L, lua_upvalueindex(1))) != LUA_TFUNCTION)
        return ckt_l_errorf(L, "executable: no such method");
    lua_insert(L, 1);
    lua_replace(L, 2); /* stack: method, binary, args... */
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int x_kernel(lua_State *L)
{
    checkexe(L, 1);
    lua_getiuservalue(L, 1, 1);
    return 1;
}
static int x_binary(lua_State *L)
{
    checkexe(L, 1);
    lua_getiuservalue(L, 1, 2);
    return 1;
}
static int x_tostring(lua_State *L)
{
    l_exe *e = luaL_checkudata(L, 1, CKT_L_EXE);
    if (!e->exe) {
        lua_pushliteral(L, "ckt.executable (closed)");
        return 1;
    }
    lua_pushfstring(L, "ckt.executable(%s for %s%s)", ckt_kernel_name(ckt_exe_kernel(e->exe)),
                    ckt_exe_target(e->exe)->name,
                    ckt_binary_compile_only(ckt_exe_binary(e->exe)) ? ", compile only" : "");
    return 1;
}

void ckt_lk_open_executable(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_KERNEL, "source", k_source},
                                       {CKT_L_KERNEL, "compile", k_compile},
                                       {CKT_L_KERNEL, "signature", k_signature},
                                       {CKT_L_KERNEL, "lds_bytes", k_lds_bytes},
                                       {CKT_L_KERNEL, "name", k_name},
                                       {CKT_L_KERNEL, "block", k_block},
                                       {CKT_L_EXE, "__gc", x_gc},
                                       {CKT_L_EXE, "__tostring", x_tostring},
                                       {CKT_L_EXE, "launch", x_launch},
                                       {CKT_L_EXE, "kernel", x_kernel},
                                       {CKT_L_EXE, "binary", x_binary},
                                       {"ckt.device", "launch", device_launch},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    /* the binary's inspection methods on the executable */
    static const char *const forwarded[] = {
        "resources", "code_object", "disassembly",  "log",          "target", "compile_ms",
        "compiler",  "from_cache",  "compile_only", "cache_status", NULL};
    luaL_getmetatable(L, CKT_L_EXE);
    for (const char *const *f = forwarded; *f; f++) {
        lua_pushstring(L, *f);
        lua_pushcclosure(L, x_forward, 1);
        lua_setfield(L, -2, *f);
    }
    lua_pop(L, 1);
    ckt_l_help_add(L, "executable",
                   "An executable (what a kernel's compile returns): exe:launch{grid=, stream=, "
                   "timed=, device=, "
                   "<param> = value, ...} checks\n"
                   "every argument by parameter name (pointers: device buffers of the pointer's "
                   "dtype; sizes; the kernel's\n"
                   "launch conditions; every buffer against the bytes the launch can touch), then "
                   "enqueues it (timed = true\n"
                   "waits and returns the kernel's milliseconds). exe:kernel(), exe:binary(), and "
                   "the binary's\n"
                   "exe:resources(), exe:disassembly(), exe:code_object(), exe:log(), "
                   "exe:target(), exe:compiler(),\n"
                   "exe:compile_ms(), exe:from_cache(), exe:cache_status(), exe:compile_only().");
}
