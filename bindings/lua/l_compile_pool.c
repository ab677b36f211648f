/* Lua: compiles in the background over the engine's compile pool (ckt/compile_pool.h):
 * ckt.compile_all (many kernels or sources started at once and collected in order) and
 * k:compile_async (one compile, a future collected when the script wants it). Above both the
 * binaries (l_jit.c) and the executables (l_executable.c) it returns. */
#include <stdlib.h>
#include <string.h>

#include "ckt/compile_pool.h"
#include "ckt/jit.h"
#include "l_internal.h"
#include "l_kernel.h"

/* One entry of ckt.compile_all, read before anything starts. */
typedef struct entry {
    const ckt_kernel *k; /* NULL: a source compile */
    ckt_compile_request req;
    const char *opts[32];
    unsigned flags;
    ckt_compile_job *job;
    ckt_binary *bin;
    ckt_executable *exe;
    ckt_status st;
    ckt_error err;
} entry;

static void read_entry(lua_State *L, int t, int i, entry *e)
{
    static const char *const kernel_fields[] = {"kernel", "target",  "compile_only",
                                                "cache",  "options", NULL};
    static const char *const source_fields[] = {"source",       "name",  "target", "options",
                                                "compile_only", "cache", NULL};
    char fn[48];
    snprintf(fn, sizeof fn, "compile_all: entry %d", i);
    if (lua_geti(L, t, i) != LUA_TTABLE)
        ckt_l_errorf(L,
                     "%s: a table {kernel = k, target = ...} or {source =, name =, target = "
                     "...} expected, got %s",
                     fn, luaL_typename(L, -1));
    int et = lua_gettop(L);
    int is_kernel = lua_getfield(L, et, "kernel") != LUA_TNIL;
    if (is_kernel) {
        if (!luaL_testudata(L, -1, CKT_L_KERNEL))
            ckt_l_errorf(L, "%s: kernel must be a built ckt.kernel, got %s", fn,
                         luaL_typename(L, -1));
        l_kernel *kb = ckt_lk_checkkernel(L, -1);
        if (!kb->built) ckt_l_errorf(L, "%s: the kernel is still being built", fn);
        e->k = kb->k;
    }
    lua_pop(L, 1);
    ckt_l_check_fields(L, -1, fn, is_kernel ? kernel_fields : source_fields);
    if (!ckt_l_field_string(L, et, fn, "target", &e->req.target))
        e->req.target = ckt_context_default_target(ckt_l_context(L));
    if (!is_kernel) {
        if (!ckt_l_field_string(L, et, fn, "source", &e->req.source))
            ckt_l_errorf(L, "%s: field 'source' (or 'kernel') is required", fn);
        if (!ckt_l_field_string(L, et, fn, "name", &e->req.kernel_name))
            ckt_l_errorf(L, "%s: field 'name' is required", fn);
    }
    e->req.noptions = ckt_l_compile_options(L, et, fn, e->opts, &e->flags);
    e->req.options = e->req.noptions ? e->opts : NULL;
    lua_pop(L, 1); /* the entry stays anchored in the list */
}

/* ckt.compile_all({entry, ...} [, {threads = n}]) -> {result, ...}: every entry compiled at once
 * on a pool of threads (the shared one: one per core; threads = n: a pool of n for this call),
 * results in order: an executable for {kernel = k, target = ...}, a binary for {source =, name =,
 * target = ...} (the options of k:compile and ckt.compile). The first failure is raised after all
 * have finished. A sandboxed state compiles them one by one on its own thread. */
static int ckt_l_compile_all(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    int64_t threads = -1;
    if (!lua_isnoneornil(L, 2)) {
        static const char *const allowed[] = {"threads", NULL};
        ckt_l_check_fields(L, 2, "compile_all", allowed);
        if (ckt_l_field_int(L, 2, "compile_all", "threads", &threads) &&
            (threads < 1 || threads > 256))
            return ckt_l_errorf(L, "compile_all: threads %lld is outside [1, 256]",
                                (long long)threads);
    }
    lua_Integer n = luaL_len(L, 1);
    if (n > 4096) return ckt_l_errorf(L, "compile_all: %lld entries (at most 4096)", (long long)n);
    entry *es = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *es, 0);
    int anchor = lua_gettop(L);
    memset(es, 0, (size_t)(n > 0 ? n : 1) * sizeof *es);
    for (int i = 0; i < n; i++) read_entry(L, 1, i + 1, &es[i]);
    /* from here until the results are pushed nothing raises: the jobs are always collected */
    ckt_context *ctx = ckt_l_context(L);
    ckt_compile_pool *pool = NULL;
    ckt_error perr;
    ckt_status pst = CKT_OK;
    int serial = ckt_l_sandboxed(L);
    if (!serial && threads > 0) pst = ckt_compile_pool_create((int)threads, &pool, &perr);
    for (int i = 0; i < n && !pst; i++) {
        entry *e = &es[i];
        if (serial)
            e->st = e->k ? ckt_kernel_compile(ctx, e->k, e->req.target,
                                              &(ckt_kernel_compile_options){
                                                  e->flags, e->req.options, e->req.noptions},
                                              &e->exe, &e->err)
                         : ckt_compile(ctx, &e->req, e->flags, &e->bin, &e->err);
        else if (e->k)
            e->st = ckt_compile_kernel_start(
                pool, ctx, e->k, e->req.target,
                &(ckt_kernel_compile_options){e->flags, e->req.options, e->req.noptions}, &e->job,
                &e->err);
        else
            e->st = ckt_compile_start(pool, ctx, &e->req, e->flags, &e->job, &e->err);
    }
    int bad = -1;
    for (int i = 0; i < n; i++) {
        entry *e = &es[i];
        if (e->job) {
            e->st = e->k ? ckt_compile_wait_executable(e->job, &e->exe, &e->err)
                         : ckt_compile_wait(e->job, &e->bin, &e->err);
            ckt_compile_job_free(e->job);
            e->job = NULL;
        }
        if (e->st && bad < 0) bad = i;
    }
    ckt_compile_pool_free(pool);
    if (pst || bad >= 0) {
        for (int i = 0; i < n; i++) {
            ckt_binary_free(es[i].bin);
            ckt_exe_free(es[i].exe);
        }
        if (pst) return ckt_l_error(L, &perr);
        ckt_error *e = &es[bad].err;
        char prefix[192];
        snprintf(prefix, sizeof prefix, "compile_all: entry %d (%.64s for %.40s): ", bad + 1,
                 es[bad].k ? ckt_kernel_name(es[bad].k) : es[bad].req.kernel_name,
                 es[bad].req.target);
        ckt_fail_prefix(e, prefix);
        return ckt_l_error(L, e);
    }
    lua_createtable(L, (int)n, 0);
    for (int i = 0; i < n; i++) {
        entry *e = &es[i];
        if (e->k) {
            lua_geti(L, 1, i + 1);
            lua_getfield(L, -1, "kernel");
            ckt_lk_push_executable(L, -1, e->exe); /* owns it from here */
            e->exe = NULL;
            lua_replace(L, -3);
            lua_pop(L, 1);
        } else {
            ckt_l_pushbinary(L, e->bin); /* owns it from here */
            e->bin = NULL;
        }
        lua_seti(L, -2, i + 1);
    }
    (void)anchor;
    return 1;
}

/* ---- k:compile_async{target=, ...} -> a future ---- */

#define CKT_L_FUTURE "ckt.compile_future"

/* user value 1: the kernel (the job reads it until it ends; the executable borrows it after) */
typedef struct l_future {
    ckt_compile_job *job; /* NULL: compiled on the calling thread (a sandboxed state) */
    ckt_executable *exe;  /* that compile's result */
    ckt_status st;        /* and its status and error */
    ckt_error err;
    int waited;
    char what[192]; /* "gemm_f16_kk for sm_90": for messages */
} l_future;

static l_future *checkfuture(lua_State *L, int idx)
{
    return ckt_l_checkclass(L, idx, CKT_L_FUTURE, "a compile future (k:compile_async)", NULL);
}

/* k:compile_async{target=, compile_only=, cache=, options=} -> a future: the compile starts on
 * the shared compile pool and the call returns at once. A sandboxed state compiles here and now
 * (its limits are per thread): the future is ready when it is returned. */
static int k_compile_async(lua_State *L)
{
    static const char *const allowed[] = {"target", "compile_only", "cache", "options", NULL};
    l_kernel *kb = ckt_lk_checkkernel(L, 1);
    if (!kb->built) return ckt_l_errorf(L, "compile_async: the kernel is still being built");
    if (lua_isnoneornil(L, 2)) {
        lua_settop(L, 1);
        lua_newtable(L);
    }
    luaL_checktype(L, 2, LUA_TTABLE);
    ckt_l_check_fields(L, 2, "compile_async", allowed);
    const char *target, *opts[32];
    if (!ckt_l_field_string(L, 2, "compile_async", "target", &target))
        target = ckt_context_default_target(ckt_l_context(L));
    ckt_kernel_compile_options o = {0, opts, 0};
    o.noptions = ckt_l_compile_options(L, 2, "compile_async", opts, &o.flags);
    l_future *f = lua_newuserdatauv(L, sizeof *f, 1);
    memset(f, 0, sizeof *f);
    luaL_setmetatable(L, CKT_L_FUTURE);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    snprintf(f->what, sizeof f->what, "%.120s for %.40s", ckt_kernel_name(kb->k), target);
    ckt_error err;
    ckt_context *ctx = ckt_l_context(L);
    if (ckt_l_sandboxed(L))
        f->st = ckt_kernel_compile(ctx, kb->k, target, &o, &f->exe, &f->err);
    else if (ckt_compile_kernel_start(NULL, ctx, kb->k, target, &o, &f->job, &err))
        return ckt_fail_prefix(&err, "compile_async: "), ckt_l_error(L, &err);
    return 1;
}

/* f:ready() -> true when the compile has ended (wait will not block) */
static int f_ready(lua_State *L)
{
    l_future *f = checkfuture(L, 1);
    lua_pushboolean(L, !f->job || ckt_compile_done(f->job));
    return 1;
}

/* f:wait() -> the executable, or the compile's error raised; once a future */
static int f_wait(lua_State *L)
{
    l_future *f = checkfuture(L, 1);
    if (f->waited)
        return ckt_l_errorf(L,
                            "compile future (%s): already waited for (wait returns the "
                            "executable once: keep it)",
                            f->what);
    f->waited = 1;
    if (f->job) {
        f->st = ckt_compile_wait_executable(f->job, &f->exe, &f->err);
        ckt_compile_job_free(f->job);
        f->job = NULL;
    }
    if (f->st) return ckt_l_error(L, &f->err);
    lua_getiuservalue(L, 1, 1);
    ckt_executable *exe = f->exe;
    f->exe = NULL;
    ckt_lk_push_executable(L, -1, exe); /* owns it from here */
    return 1;
}

/* __gc / __close: a compile still queued is cancelled, a running one waited for */
static int f_gc(lua_State *L)
{
    l_future *f = luaL_checkudata(L, 1, CKT_L_FUTURE);
    ckt_compile_job_free(f->job);
    ckt_exe_free(f->exe);
    f->job = NULL, f->exe = NULL;
    return 0;
}

static int f_tostring(lua_State *L)
{
    l_future *f = checkfuture(L, 1);
    const char *state = f->waited                             ? "waited for"
                        : !f->job || ckt_compile_done(f->job) ? "ready"
                                                              : "compiling";
    lua_pushfstring(L, "ckt.compile_future (%s: %s)", f->what, state);
    return 1;
}

/* ckt.compile_pool_threads() -> the shared compile pool's threads */
static int ckt_l_compile_pool_threads(lua_State *L)
{
    lua_pushinteger(L, ckt_compile_pool_threads(NULL));
    return 1;
}

void ckt_l_open_compile_pool(lua_State *L)
{
    static const ckt_l_entry rows[] = {
        {CKT_L_MODULE, "compile_all", ckt_l_compile_all},
        {CKT_L_MODULE, "compile_pool_threads", ckt_l_compile_pool_threads},
        {CKT_L_KERNEL, "compile_async", k_compile_async},
        {CKT_L_FUTURE, "ready", f_ready},
        {CKT_L_FUTURE, "wait", f_wait},
        {CKT_L_FUTURE, "__gc", f_gc},
        {CKT_L_FUTURE, "__close", f_gc},
        {CKT_L_FUTURE, "__tostring", f_tostring},
        {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    ckt_l_help_add(
        L, "compile_all",
        "ckt.compile_all({{kernel = k, target = t [, options=, compile_only=, cache=]} | "
        "{source = s, name = n, target = t, ...}, ...} [, {threads = n}]) -> a list of "
        "executables (kernel entries) and binaries (source entries) in order: the "
        "compiles run at once on a pool of threads (one per core, or "
        "CKT_COMPILE_THREADS); the first failure is raised, naming its entry, after all "
        "have finished. A sandboxed state compiles one by one.");
    ckt_l_help_add(
        L, "compile_async",
        "k:compile_async{target = t [, options=, compile_only=, cache=]} -> a future: the "
        "compile starts on the shared compile pool and the call returns at once. "
        "f:ready() -> true once it has ended; f:wait() -> the executable (once a future), or "
        "the compile's error raised. Collected or closed before the wait, a queued compile "
        "is cancelled. A sandboxed state compiles at the call.");
    ckt_l_help_add(L, "compile_pool_threads",
                   "ckt.compile_pool_threads() -> the threads of the shared compile pool "
                   "ckt.compile_all uses");
    ckt_l_help_add(L, "compile_future",
                   "A compile future (what a kernel's compile_async returns): f:ready() -> true "
                   "once the compile has "
                   "ended; f:wait() -> the executable, or the compile's error raised (once a "
                   "future); closed (<close>) or collected before the wait, a queued compile is "
                   "cancelled.");
}
