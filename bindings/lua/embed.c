/* The embedding API (ckt_lua.h): Lua states with ckt loaded, optionally sandboxed. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckt/jit.h"
#include "ckt/target.h"
#include "ckt_lua.h"
#include "embed_internal.h"
#include "l_internal.h"

struct ckt_lua {
    lua_State *L;
    ckt_lua_options opts;
    size_t used;       /* bytes held by the state (the allocator's count) */
    int memory_hit;    /* the cap refused an allocation during this run */
    uint64_t executed; /* instructions in this run (in units of the hook period) */
    int limit_hit;     /* 1: instructions, 2: time */
    struct timespec started;
};

enum { HOOK_PERIOD = 1000 };

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    ckt_lua *s = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        s->used -= old;
        return NULL;
    }
    if (s->opts.memory_limit && nsize > old && s->used - old + nsize > s->opts.memory_limit) {
        s->memory_hit = 1;
        return NULL; /* Lua raises a memory error; the state stays consistent */
    }
    void *p = realloc(ptr, nsize);
    if (p) s->used = s->used - old + nsize;
    return p;
}

static double elapsed(const ckt_lua *s)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - s->started.tv_sec) +
           1e-9 * (double)(now.tv_nsec - s->started.tv_nsec);
}

static ckt_lua *from_state(lua_State *L)
{
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

static void budget_hook(lua_State *L, lua_Debug *ar);

/* Raise the run's limit error when its budget or time is spent (from the hook, and from the C
 * functions that charge their steps: charge_steps, their meter). */
static void check_limits(lua_State *L, ckt_lua *s)
{
    if (s->limit_hit) {
        /* after the first refusal, fire at every instruction: the next instruction outside
         * the pcall that caught the error raises again, so the script unwinds completely */
        lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
        luaL_error(L, "sandbox: %s exceeded",
                   s->limit_hit == 1 ? "instruction budget" : "time limit");
    }
    /* the first refusal already switches to every instruction: with the period still in force, a
     * script that pcalls the refusal would run up to HOOK_PERIOD more instructions -- enough to
     * finish normally (found by the issue-15 probes) */
    if (s->opts.instruction_limit && s->executed > s->opts.instruction_limit) {
        s->limit_hit = 1;
        lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
        luaL_error(L, "sandbox: instruction budget of %I exceeded",
                   (lua_Integer)s->opts.instruction_limit);
    }
    if (s->opts.time_limit > 0 && elapsed(s) > s->opts.time_limit) {
        s->limit_hit = 2;
        lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
        luaL_error(L, "sandbox: time limit of %f s exceeded", (lua_Number)s->opts.time_limit);
    }
}

/* Once over budget the hook keeps raising, so a script cannot pcall its way past it. */
static void budget_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    ckt_lua *s = from_state(L);
    s->executed += HOOK_PERIOD;
    check_limits(L, s);
}

static void charge_steps(lua_State *L, size_t n)
{
    ckt_lua *s = from_state(L);
    if (!s->opts.instruction_limit && !(s->opts.time_limit > 0)) return;
    s->executed += n;
    check_limits(L, s);
}

int ckt_lua_openlib(lua_State *L)
{
    luaL_requiref(L, "ckt", luaopen_ckt, 1);
    lua_getfield(L, -1, "help"); /* where ckt is a global, so is help() */
    lua_setglobal(L, "help");
    return 1;
}

/* package.path gains, in front: each directory of $CKT_PATH (':'-separated), the source tree's
 * kernels/ and the installed datadir's kernels/ — so `require "gemm"` finds the kernel library
 * from the build tree and after an install alike, and a user's directory can shadow it. */
void ckt_lua_add_path(lua_State *L)
{
    if (lua_getglobal(L, "package") != LUA_TTABLE) {
        lua_pop(L, 1);
        return;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    const char *env = getenv("CKT_PATH");
    while (env && *env) {
        const char *colon = strchr(env, ':');
        size_t n = colon ? (size_t)(colon - env) : strlen(env);
        for (int k = 0; n && k < 2; k++) {
            luaL_addlstring(&b, env, n);
            luaL_addstring(&b, k ? "/?/init.lua;" : "/?.lua;");
        }
        env = colon ? colon + 1 : NULL;
    }
    luaL_addstring(&b, CKT_SOURCE_DIR "/kernels/?.lua;" CKT_SOURCE_DIR "/kernels/?/init.lua;");
    luaL_addstring(&b,
                   CKT_INSTALL_DATADIR "/kernels/?.lua;" CKT_INSTALL_DATADIR "/kernels/?/init.lua");
    luaL_pushresult(&b);
    if (lua_getfield(L, -2, "path") == LUA_TSTRING) {
        lua_pushliteral(L, ";");
        lua_insert(L, -2);
        lua_concat(L, 3);
    } else {
        lua_pop(L, 1);
    }
    lua_setfield(L, -2, "path");
    lua_pop(L, 1);
}

/* load() restricted to text chunks: binary chunks can crash the VM. */
static int safe_load(lua_State *L)
{
    int n = lua_gettop(L);
    if (n > 4) lua_settop(L, 4);
    while (lua_gettop(L) < 4) lua_pushnil(L);
    lua_pushstring(L, "t");
    lua_replace(L, 3);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 4, LUA_MULTRET);
    return lua_gettop(L);
}

static int refuse(lua_State *L)
{
    return luaL_error(L, "sandbox: %s is not available in a sandboxed state",
                      lua_tostring(L, lua_upvalueindex(1)));
}

static void replace_with_refusal(lua_State *L, const char *table, const char *name)
{
    if (table) {
        if (lua_getglobal(L, table) != LUA_TTABLE) {
            lua_pop(L, 1);
            return;
        }
    } else {
        lua_pushglobaltable(L);
    }
    lua_pushfstring(L, "%s%s%s", table ? table : "", table ? "." : "", name);
    lua_pushcclosure(L, refuse, 1);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}

static int refuse_search(lua_State *L)
{
    lua_pushfstring(L,
                    "\n\tsandbox: module '%s' is not preloaded, and Lua files and C modules are "
                    "not loaded in a sandboxed state",
                    luaL_checkstring(L, 1));
    return 1;
}

static int safe_collectgarbage(lua_State *L)
{
    const char *opt = luaL_optstring(L, 1, "collect");
    if (strcmp(opt, "collect") && strcmp(opt, "count") && strcmp(opt, "step"))
        return luaL_error(
            L, "sandbox: collectgarbage(\"%s\") is not available in a sandboxed state", opt);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static void sandbox(lua_State *L)
{
    /* no io, no debug */
    lua_pushnil(L);
    lua_setglobal(L, "io");
    lua_pushnil(L);
    lua_setglobal(L, "debug");
    lua_getglobal(L, "package");
    lua_pushnil(L);
    lua_setfield(L, -2, "loaded_io");
    lua_getfield(L, -1, "loaded");
    lua_pushnil(L);
    lua_setfield(L, -2, "io");
    lua_pushnil(L);
    lua_setfield(L, -2, "debug");
    lua_pop(L, 1);
    /* only preloaded modules: the file and C-module searchers give way to one that says why */
    lua_getfield(L, -1, "searchers");
    for (int i = 4; i >= 3; i--) {
        lua_pushnil(L);
        lua_rawseti(L, -2, i);
    }
    lua_pushcfunction(L, refuse_search);
    lua_rawseti(L, -2, 2);
    lua_pop(L, 1);
    ckt_l_set_string(L, "cpath", "");
    ckt_l_set_string(L, "path", "");
    /* it answers which host files exist */
    lua_pushnil(L);
    lua_setfield(L, -2, "searchpath");
    lua_pop(L, 1);
    static const char *const os_bad[] = {"execute", "exit",   "remove",    "rename",
                                         "tmpname", "getenv", "setlocale", NULL};
    for (const char *const *p = os_bad; *p; p++) replace_with_refusal(L, "os", *p);
    replace_with_refusal(L, "package", "loadlib");
    /* ckt.compile for the cpu target runs the host C compiler on the script's source, and a
     * device launches what it compiled as native code; device buffers are host memory outside
     * the memory cap. An untrusted script gets neither (found by the fuzz helper). */
    replace_with_refusal(L, "ckt", "compile");
    replace_with_refusal(L, "ckt", "device");
    replace_with_refusal(L, NULL, "dofile");
    replace_with_refusal(L, NULL, "loadfile");
    lua_getglobal(L, "load");
    lua_pushcclosure(L, safe_load, 1);
    lua_setglobal(L, "load");
    lua_getglobal(L, "collectgarbage");
    lua_pushcclosure(L, safe_collectgarbage, 1);
    lua_setglobal(L, "collectgarbage");
    /* string.dump would only make chunks load() now refuses; drop it */
    lua_getglobal(L, "string");
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    lua_pop(L, 1);
    /* the bindings close what reaches a compiler (compile options) when they see this */
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, CKT_L_SANDBOXED_KEY);
}

/* A compile target: whatever ckt_target_parse takes ("cpu", cpu:<modelled gpu>, a modelled GPU
 * or a name shaped like an AMD/NVIDIA architecture the runtime compiler may know). */
ckt_status ckt_lua_check_target(const char *name, ckt_error *err)
{
    ckt_target_record t;
    return ckt_target_parse(name, &t, err);
}

static int open_protected(lua_State *L)
{
    ckt_lua *s = lua_touserdata(L, 1);
    luaL_openlibs(L);
    ckt_lua_openlib(L);
    lua_pop(L, 1);
    if (s->opts.target) {
        ckt_error err;
        if (ckt_lua_check_target(s->opts.target, &err) ||
            ckt_context_set_default_target(ckt_l_context(L), s->opts.target, &err))
            return luaL_error(L, "%s", err.msg);
    }
    if (s->opts.sandbox)
        sandbox(L);
    else
        ckt_lua_add_path(L);
    /* the library functions that can loop long in C count their steps against the limits */
    if (s->opts.instruction_limit || s->opts.time_limit > 0)
        ckt_embed_limit_libraries(L, charge_steps);
    /* the key exists from now on, so start_run updates it without allocating */
    lua_pushnumber(L, 0);
    lua_setfield(L, LUA_REGISTRYINDEX, CKT_L_DEADLINE_KEY);
    return 0;
}

ckt_status ckt_lua_open(const ckt_lua_options *opts, ckt_lua **out, ckt_error *err)
{
    if (!out) return ckt_fail(err, CKT_EINVAL, "ckt_lua_open: out is NULL");
    ckt_lua *s = calloc(1, sizeof *s);
    if (!s) return ckt_fail(err, CKT_ENOMEM, "ckt_lua_open: out of memory");
    if (opts) s->opts = *opts;
    if (s->opts.time_limit < 0) {
        double t = s->opts.time_limit;
        free(s);
        return ckt_fail(err, CKT_EINVAL, "ckt_lua_open: time_limit %g must not be negative", t);
    }
    s->L = lua_newstate(limited_alloc, s);
    if (!s->L) {
        free(s);
        return ckt_fail(err, CKT_ENOMEM,
                        "ckt_lua_open: cannot create a Lua state (memory limit too small?)");
    }
    lua_pushcfunction(s->L, open_protected);
    lua_pushlightuserdata(s->L, s);
    if (lua_pcall(s->L, 1, 0, 0) != LUA_OK) {
        ckt_status st = s->memory_hit ? CKT_ELIMIT : CKT_ERUNTIME;
        ckt_fail(err, st, "ckt_lua_open: %s%s", lua_tostring(s->L, -1),
                 s->memory_hit ? " (the memory limit is too small for the libraries)" : "");
        lua_close(s->L);
        free(s);
        return st;
    }
    if (s->opts.instruction_limit || s->opts.time_limit > 0)
        lua_sethook(s->L, budget_hook, LUA_MASKCOUNT, HOOK_PERIOD);
    *out = s;
    return CKT_OK;
}

void ckt_lua_close(ckt_lua *s)
{
    if (!s) return;
    lua_close(s->L);
    free(s);
}

lua_State *ckt_lua_state(ckt_lua *s) { return s ? s->L : NULL; }
size_t ckt_lua_memory_used(const ckt_lua *s) { return s ? s->used : 0; }

static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    luaL_traceback(L, L, msg, 1);
    return 1;
}

static ckt_status finish(ckt_lua *s, int rc, ckt_error *err)
{
    lua_State *L = s->L;
    if (rc == LUA_OK) {
        lua_settop(L, 0);
        return CKT_OK;
    }
    const char *msg = lua_tostring(L, -1);
    ckt_status st = CKT_ERUNTIME;
    /* a memory error a script caught earlier leaves memory_hit set: only an error that is the
     * memory error (raised as one, or passed on by error(e)) reports the limit */
    bool memory = rc == LUA_ERRMEM || (s->memory_hit && msg && strstr(msg, "not enough memory"));
    if (memory) {
        st = CKT_ELIMIT;
        ckt_fail(err, st, "sandbox: memory limit of %zu bytes exceeded (%s)", s->opts.memory_limit,
                 msg ? msg : "not enough memory");
    } else {
        if (s->limit_hit || (s->opts.time_limit > 0 && elapsed(s) > s->opts.time_limit))
            st = CKT_ELIMIT;
        ckt_fail(err, st, "%s", msg ? msg : "(error object is not a string)");
    }
    lua_settop(L, 0);
    lua_gc(L, LUA_GCCOLLECT);
    return st;
}

/* Returns the run's end (CLOCK_MONOTONIC seconds; 0: no time limit). */
static double start_run(ckt_lua *s)
{
    if (s->opts.instruction_limit || s->opts.time_limit > 0)
        lua_sethook(s->L, budget_hook, LUA_MASKCOUNT, HOOK_PERIOD);
    s->memory_hit = 0;
    s->limit_hit = 0;
    s->executed = 0;
    clock_gettime(CLOCK_MONOTONIC, &s->started);
    lua_settop(s->L, 0);
    /* launches run in C where the hook never fires: they get the run's end as a deadline */
    double deadline = 0;
    if (s->opts.time_limit > 0)
        deadline =
            (double)s->started.tv_sec + 1e-9 * (double)s->started.tv_nsec + s->opts.time_limit;
    lua_pushnumber(s->L, deadline);
    lua_setfield(s->L, LUA_REGISTRYINDEX, CKT_L_DEADLINE_KEY);
    return deadline;
}

/* The script, with the run's end as this thread's compile deadline: the host C compiler is
 * killed at it, an NVRTC / hipRTC compile abandoned (ckt_compile_set_deadline). */
static int run_chunk(ckt_lua *s, double deadline)
{
    double outer = ckt_compile_set_deadline(deadline);
    int rc = lua_pcall(s->L, 0, 0, 1);
    ckt_compile_set_deadline(outer);
    return rc;
}

ckt_status ckt_lua_run_string(ckt_lua *s, const char *code, const char *chunkname, ckt_error *err)
{
    if (!s) return ckt_fail(err, CKT_EINVAL, "ckt_lua_run_string: state is NULL");
    if (!code) return ckt_fail(err, CKT_EINVAL, "ckt_lua_run_string: code is NULL");
    double deadline = start_run(s);
    lua_pushcfunction(s->L, traceback);
    int rc = luaL_loadbufferx(s->L, code, strlen(code), chunkname ? chunkname : "=(string)", "t");
    if (rc == LUA_OK) rc = run_chunk(s, deadline);
    return finish(s, rc, err);
}

ckt_status ckt_lua_run_file(ckt_lua *s, const char *path, ckt_error *err)
{
    if (!s) return ckt_fail(err, CKT_EINVAL, "ckt_lua_run_file: state is NULL");
    if (!path) return ckt_fail(err, CKT_EINVAL, "ckt_lua_run_file: path is NULL");
    double deadline = start_run(s);
    lua_pushcfunction(s->L, traceback);
    int rc = luaL_loadfilex(s->L, path, "t");
    if (rc == LUA_OK) rc = run_chunk(s, deadline);
    return finish(s, rc, err);
}
