/* ckt Lua bindings — built kernels and executables: k:source([target]), k:compile{...} (an
 * executable), k:signature(), and exe:launch{grid=, <param>=...} which checks its arguments by
 * parameter name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/emit.h"
#include "l_kernel.h"

#define DEVICES_KEY "ckt.kernel.devices"

typedef struct l_exe {
    l_kernel *kb; /* user value 1: the kernel; 2: the ckt.binary */
    ckt_binary *bin;
    char target[32];
    int64_t dynamic_lds; /* LDS bytes each launch requests (above CUDA's static limit) */
    ckt_backend runtime; /* the runtime of the target */
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
    if (lua_type(L, idx) != LUA_TSTRING) ckt_l_errorf(L, "source: target must be a string (cpu, gfx90a, sm_90, ...), got %s", luaL_typename(L, idx));
    return lua_tostring(L, idx);
}

static void push_source(lua_State *L, l_kernel *kb, const char *target)
{
    char *src = NULL;
    ckt_error err;
    if (ckt_emit(kb->k, target, &src, &err)) ckt_l_error(L, &err);
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

/* k:compile{target=, compile_only=, cache=, options=} -> executable */
static int k_compile(lua_State *L)
{
    static const char *const allowed[] = {"target", "compile_only", "cache", "options", NULL};
    l_kernel *kb = checkbuilt(L, 1, "compile");
    if (lua_isnoneornil(L, 2)) {
        lua_settop(L, 1);
        lua_newtable(L);
    }
    luaL_checktype(L, 2, LUA_TTABLE);
    ckt_l_check_fields(L, 2, "compile", allowed);
    const char *target;
    if (!ckt_l_field_string(L, 2, "compile", "target", &target)) target = ckt_context_default_target(ckt_l_context(L));
    lua_pushcfunction(L, ckt_l_compile);
    lua_createtable(L, 0, 6);
    for (const char *const *f = allowed; *f; f++) {
        lua_getfield(L, 2, *f);
        lua_setfield(L, -2, *f);
    }
    lua_pushstring(L, target);
    lua_setfield(L, -2, "target");
    push_source(L, kb, target);
    lua_setfield(L, -2, "source");
    lua_pushstring(L, ckt_kernel_name(kb->k));
    lua_setfield(L, -2, "name");
    lua_call(L, 1, 1);
    int bi = lua_gettop(L);
    l_exe *e = lua_newuserdatauv(L, sizeof *e, 2);
    e->kb = kb;
    e->bin = ckt_l_checkbinary(L, bi);
    snprintf(e->target, sizeof e->target, "%s", target);
    ckt_target_record t;
    ckt_error err;
    if (ckt_target_parse(target, &t, &err)) return ckt_l_error(L, &err);
    e->runtime = t.runtime;
    e->dynamic_lds = ckt_emit_dynamic_lds_bytes(kb->k, &t);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    lua_pushvalue(L, bi);
    lua_setiuservalue(L, -2, 2);
    luaL_setmetatable(L, CKT_L_EXE);
    return 1;
}

static const char *kind_name(ckt_param_kind k) { return k == CKT_PARAM_I32 ? "i32" : k == CKT_PARAM_I64 ? "i64" : k == CKT_PARAM_F32 ? "f32" : "ptr"; }

/* k:signature() -> {{name=, kind=, dtype=}, ...}: the launch arguments in order */
static int k_signature(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkkernel(L, 1);
    lua_newtable(L);
    int n = 0;
    for (int i = 0; i < ckt_kernel_nparams(kb->k); i++) {
        const ckt_kparam *p = ckt_kernel_param(kb->k, i);
        if (p->specialized) continue;
        lua_createtable(L, 0, 3);
        lua_pushstring(L, p->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, kind_name(p->kind));
        lua_setfield(L, -2, "kind");
        if (p->kind == CKT_PARAM_PTR) {
            lua_pushstring(L, ckt_dtype_name(p->dtype));
            lua_setfield(L, -2, "dtype");
        }
        lua_seti(L, -2, ++n);
    }
    return 1;
}

static int k_lds_bytes(lua_State *L) { lua_pushinteger(L, (lua_Integer)ckt_kernel_lds_bytes(ckt_lk_checkkernel(L, 1)->k)); return 1; }
static int k_name(lua_State *L) { lua_pushstring(L, ckt_kernel_name(ckt_lk_checkkernel(L, 1)->k)); return 1; }
static int k_block(lua_State *L) { lua_pushinteger(L, (lua_Integer)ckt_kernel_block(ckt_lk_checkkernel(L, 1)->k)); return 1; }


static l_exe *checkexe(lua_State *L, int idx) { return luaL_checkudata(L, idx, CKT_L_EXE); }

/* The device a launch runs on: opts.device, else the first pointer argument's device, else one
 * per backend kept for this Lua state. */
static void push_device(lua_State *L, int opts, int args, ckt_backend runtime)
{
    if (lua_getfield(L, opts, "device") != LUA_TNIL) return;
    lua_pop(L, 1);
    for (lua_Integer i = 1; i <= luaL_len(L, args); i++) {
        if (lua_geti(L, args, i) == LUA_TUSERDATA && luaL_getmetafield(L, -1, "device") == LUA_TFUNCTION) {
            lua_insert(L, -2);
            lua_call(L, 1, 1);
            return;
        }
        lua_pop(L, 1);
    }
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
    lua_remove(L, -2);
}

/* exe:launch{grid=, device=, <param>=value ..., or args={...}} -> milliseconds */
static int x_launch(lua_State *L)
{
    l_exe *e = checkexe(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    ckt_kernel *k = e->kb->k;
    int np = ckt_kernel_nparams(k);
    /* unknown fields: neither launch options nor parameter names */
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) return ckt_l_errorf(L, "launch: keys must be names (grid, block, device, args or a parameter)");
        const char *key = lua_tostring(L, -1);
        int ok = !strcmp(key, "grid") || !strcmp(key, "block") || !strcmp(key, "device") || !strcmp(key, "args");
        for (int i = 0; i < np && !ok; i++) ok = !strcmp(ckt_kernel_param(k, i)->name, key) && !ckt_kernel_param(k, i)->specialized;
        if (!ok) return ckt_l_errorf(L, "launch: '%s' is neither grid, block, device, args nor a parameter of kernel '%s'", key, ckt_kernel_name(k));
    }
    int64_t block = ckt_kernel_block(k), given;
    if (lua_getfield(L, 2, "block") != LUA_TNIL) {
        given = lua_istable(L, -1) ? (lua_geti(L, -1, 1), ckt_l_checkint(L, -1, "launch: block[1]")) : ckt_l_checkint(L, -1, "launch: block");
        if (given != block) return ckt_l_errorf(L, "launch: block %lld differs from the kernel's %lld threads (the block size is built into the source)", (long long)given, (long long)block);
    }
    lua_settop(L, 2);
    if (lua_getfield(L, 2, "grid") == LUA_TNIL) return ckt_l_errorf(L, "launch: field 'grid' is required");
    int gi = lua_gettop(L);
    int positional = lua_getfield(L, 2, "args") != LUA_TNIL;
    int ai = lua_gettop(L);
    if (positional && !lua_istable(L, ai)) return ckt_l_errorf(L, "launch: field 'args' must be a list");
    /* argument values in signature order, plus the integer values the launch conditions need */
    int64_t values[CKT_K_MAX_PARAMS] = {0};
    lua_newtable(L); /* params */
    int pt = lua_gettop(L);
    lua_newtable(L); /* args */
    int at = lua_gettop(L);
    int n = 0;
    for (int i = 0; i < np; i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (p->specialized) continue;
        n++;
        if (positional) lua_geti(L, ai, n);
        else lua_getfield(L, 2, p->name);
        if (lua_isnil(L, -1)) return ckt_l_errorf(L, "launch: argument '%s' (%s) is missing", p->name, kind_name(p->kind));
        char what[64];
        snprintf(what, sizeof what, "launch: argument '%s'", p->name);
        if (p->kind == CKT_PARAM_PTR) {
            if (lua_type(L, -1) == LUA_TUSERDATA && luaL_getmetafield(L, -1, "dtype") == LUA_TFUNCTION) {
                lua_pushvalue(L, -2);
                lua_call(L, 1, 1);
                const char *dt = lua_tostring(L, -1);
                if (dt && strcmp(dt, ckt_dtype_name(p->dtype)))
                    return ckt_l_errorf(L, "%s: the buffer holds %s but the kernel reads it as %s", what, dt, ckt_dtype_name(p->dtype));
                lua_pop(L, 1);
            }
        } else if (p->kind != CKT_PARAM_F32) {
            values[i] = ckt_l_checkint(L, -1, what);
        }
        lua_seti(L, at, n);
        lua_createtable(L, 2, 0);
        lua_pushstring(L, kind_name(p->kind));
        lua_seti(L, -2, 1);
        lua_pushstring(L, p->name);
        lua_seti(L, -2, 2);
        lua_seti(L, pt, n);
    }
    if (positional && luaL_len(L, ai) != n) return ckt_l_errorf(L, "launch: kernel '%s' takes %d arguments, got %d", ckt_kernel_name(k), n, (int)luaL_len(L, ai));
    ckt_error err;
    if (ckt_kernel_check_launch(k, values, &err)) return ckt_l_error(L, &err);
    lua_pushcfunction(L, ckt_l_device_launch);
    push_device(L, 2, at, e->runtime);
    lua_getiuservalue(L, 1, 2);
    lua_createtable(L, 0, 4);
    lua_pushvalue(L, gi);
    lua_setfield(L, -2, "grid");
    lua_pushinteger(L, (lua_Integer)block);
    lua_setfield(L, -2, "block");
    lua_pushvalue(L, pt);
    lua_setfield(L, -2, "params");
    lua_pushvalue(L, at);
    lua_setfield(L, -2, "args");
    lua_pushinteger(L, (lua_Integer)e->dynamic_lds);
    lua_setfield(L, -2, "shared");
    lua_call(L, 3, 1);
    return 1;
}

/* Methods of the compiled binary (resources, disassembly, ...) reached through the executable. */
static int x_forward(lua_State *L)
{
    checkexe(L, 1);
    lua_getiuservalue(L, 1, 2);
    if (luaL_getmetafield(L, -1, lua_tostring(L, lua_upvalueindex(1))) != LUA_TFUNCTION) return ckt_l_errorf(L, "executable: no such method");
    lua_insert(L, 1);
    lua_replace(L, 2); /* stack: method, binary, args... */
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int x_kernel(lua_State *L) { checkexe(L, 1); lua_getiuservalue(L, 1, 1); return 1; }
static int x_binary(lua_State *L) { checkexe(L, 1); lua_getiuservalue(L, 1, 2); return 1; }
static int x_tostring(lua_State *L)
{
    l_exe *e = checkexe(L, 1);
    lua_pushfstring(L, "ckt.executable(%s for %s%s)", ckt_kernel_name(e->kb->k), e->target, ckt_binary_compile_only(e->bin) ? ", compile only" : "");
    return 1;
}

void ckt_lk_open_executable(lua_State *L)
{
    static const luaL_Reg kmethods[] = {{"source", k_source}, {"compile", k_compile}, {"signature", k_signature},
                                        {"lds_bytes", k_lds_bytes}, {"name", k_name}, {"block", k_block}, {NULL, NULL}};
    static const luaL_Reg xmethods[] = {{"__tostring", x_tostring}, {"launch", x_launch}, {"kernel", x_kernel}, {"binary", x_binary}, {NULL, NULL}};
    ckt_lk_builder_methods(L, kmethods);
    ckt_l_new_class(L, CKT_L_EXE, xmethods);
    /* the binary's inspection methods on the executable */
    static const char *const forwarded[] = {"resources", "code_object", "disassembly", "log", "target", "compile_ms", "compiler", "from_cache", "compile_only", NULL};
    luaL_getmetatable(L, CKT_L_EXE);
    for (const char *const *f = forwarded; *f; f++) {
        lua_pushstring(L, *f);
        lua_pushcclosure(L, x_forward, 1);
        lua_setfield(L, -2, *f);
    }
    lua_pop(L, 1);
}
