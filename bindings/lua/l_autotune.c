/* ckt Lua bindings — ckt.autotune{build=, space=, problem=, ...} -> best config, its executable,
 * the report (one entry per candidate). The Lua part is what only Lua can do: expand the space,
 * run the filter and the build function per config (serially, in this state, when the engine
 * asks for the next candidate: ckt_autotune_stream), turn the problem table into typed
 * arguments, and name the remembered choice; the engine (ckt/autotune.h) prunes, compiles on its
 * thread pool, measures, hands decided candidates back (their kernels are dropped, so memory
 * follows the candidates in flight) and stores. Callbacks into Lua (build, filter, metric) run
 * on this thread, inside lua_pcall, so no error unwinds through the engine while its pool
 * runs; an error of the build step stops the search and is raised once the engine returned. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckt/autotune.h"
#include "ckt/executable.h"
#include "l_kernel.h"

#define RESULTS "ckt.autotune.results"
#define PAYLOAD_MAGIC "ckt-autotune 1\n"
#define MAX_CONFIGS 10000
#define MAX_DEPTH 16

/* Stack slots of one call (argument 1 is the options table). */
enum { OPTS = 1, CONFIGS, KERNELS, REASONS, PROBLEM };

/* An error in the options: the text of luaL_argerror for ckt.autotune, also when raised in the
 * protected build step (another C frame, which luaL_argerror would name '?'). */
static int argerr(lua_State *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = ckt_l_verrorf(L, "bad argument #1 to 'ckt.autotune' (%s)", fmt, ap);
    va_end(ap);
    return r;
}

/* ---- the engine's records, owned by a userdata so that an error frees the executables ---- */

typedef struct holder {
    int n;
    ckt_autotune_result *r;
    ckt_autotune_candidate *c;
    ckt_arg *args; /* CKT_K_MAX_PARAMS per candidate */
} holder;

static int holder_gc(lua_State *L)
{
    holder *h = luaL_checkudata(L, 1, RESULTS);
    ckt_autotune_results_free(h->r, h->n);
    h->n = 0;
    return 0;
}

static holder *new_holder(lua_State *L, int n)
{
    size_t head = (sizeof(holder) + 15) / 16 * 16;
    size_t rs = sizeof(ckt_autotune_result) * (size_t)n,
           cs = sizeof(ckt_autotune_candidate) * (size_t)n;
    rs = (rs + 15) / 16 * 16, cs = (cs + 15) / 16 * 16;
    char *p =
        lua_newuserdatauv(L, head + rs + cs + sizeof(ckt_arg) * CKT_K_MAX_PARAMS * (size_t)n, 0);
    memset(p, 0, head + rs + cs);
    holder *h = (holder *)(void *)p;
    h->r = (ckt_autotune_result *)(void *)(p + head);
    h->c = (ckt_autotune_candidate *)(void *)(p + head + rs);
    h->args = (ckt_arg *)(void *)(p + head + rs + cs);
    luaL_setmetatable(L, RESULTS);
    h->n = n;
    return h;
}

/* ---- a canonical text of a Lua value (hashing the space, the problem, a config) ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Push the canonical text of the value at idx: tables by sorted keys, so equal contents give
 * equal texts. Functions and userdata cannot be remembered: an error naming `what`. */
static void canon(lua_State *L, int idx, const char *what, int depth)
{
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 8, "autotune: value nested too deeply");
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx))
            lua_pushfstring(L, "%I", (LUAI_UACINT)lua_tointeger(L, idx));
        else {
            char b[40];
            snprintf(b, sizeof b, "%.17g", lua_tonumber(L, idx));
            lua_pushfstring(L, "f%s", b);
        }
        return;
    case LUA_TBOOLEAN: lua_pushstring(L, lua_toboolean(L, idx) ? "true" : "false"); return;
    case LUA_TNIL: lua_pushliteral(L, "nil"); return;
    case LUA_TSTRING: {
        size_t n;
        lua_tolstring(L, idx, &n);
        lua_pushfstring(L, "s%d:", (int)n);
        lua_pushvalue(L, idx);
        lua_concat(L, 2);
        return;
    }
    case LUA_TTABLE: break;
    default:
        argerr(L,
               "%s: a %s cannot be part of a remembered choice (numbers, strings, booleans and "
               "tables of them)",
               what, luaL_typename(L, idx));
        return;
    }
    if (depth >= MAX_DEPTH) {
        argerr(L, "%s: tables nested deeper than %d (a cycle?)", what, MAX_DEPTH);
        return;
    }
    lua_newtable(L); /* the "key=value" texts */
    int list = lua_gettop(L), n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        canon(L, -2, what, depth + 1);
        lua_pushliteral(L, "=");
        canon(L, -3, what, depth + 1);
        lua_concat(L, 3);
        lua_rawseti(L, list, ++n);
        lua_pop(L, 1);
    }
    const char **s = lua_newuserdatauv(L, sizeof *s * (size_t)(n + 1), 0);
    for (int i = 0; i < n; i++)
        s[i] = (lua_rawgeti(L, list, i + 1), lua_tostring(L, -1)),
        lua_pop(L, 1); /* anchored in list */
    qsort(s, (size_t)n, sizeof *s, cmp_str);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addchar(&b, '{');
    for (int i = 0; i < n; i++) {
        if (i) luaL_addchar(&b, ',');
        luaL_addstring(&b, s[i]);
    }
    luaL_addchar(&b, '}');
    luaL_pushresult(&b);
    lua_replace(L, list);
    lua_settop(L, list);
}

/* ---- the space ---- */

/* configs (at CONFIGS): space as a list of config tables, or the product of {name = {values}}
 * in sorted name order, the last name varying fastest. */
static int expand_space(lua_State *L)
{
    if (lua_getfield(L, OPTS, "space") != LUA_TTABLE)
        return argerr(
            L, "field 'space' must be a table ({name = {values...}} or a list of configs), got %s",
            luaL_typename(L, -1));
    int sp = lua_gettop(L);
    lua_Integer len = (lua_Integer)lua_rawlen(L, sp);
    int n = 0;
    if (len > 0) {
        for (lua_Integer i = 1; i <= len; i++) {
            if (lua_rawgeti(L, sp, i) != LUA_TTABLE)
                return argerr(L, "field 'space': config %d must be a table, got %s", (int)i,
                              luaL_typename(L, -1));
            if (i > MAX_CONFIGS)
                return argerr(L, "field 'space' has more than %d configs", MAX_CONFIGS);
            lua_rawseti(L, CONFIGS, ++n);
        }
        lua_pushnil(L);
        while (lua_next(L, sp)) {
            lua_pop(L, 1);
            if (!lua_isinteger(L, -1))
                return argerr(
                    L, "field 'space' mixes a list of configs with the named dimension '%s'",
                    lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1));
        }
        lua_settop(L, sp - 1);
        return n;
    }
    /* named dimensions, sorted */
    const char *names[64];
    int64_t counts[64], idx[64];
    int nd = 0;
    lua_pushnil(L);
    while (lua_next(L, sp)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            return argerr(L, "field 'space' has a %s key; dimensions are named by strings",
                          luaL_typename(L, -2));
        const char *k = lua_tostring(L, -2);
        if (!lua_istable(L, -1) || lua_rawlen(L, -1) == 0)
            return argerr(
                L, "field 'space': dimension '%s' must be a non-empty list of values, got %s", k,
                lua_istable(L, -1) ? "an empty table" : luaL_typename(L, -1));
        if (nd == 64) return argerr(L, "field 'space' has more than 64 dimensions");
        names[nd++] = k; /* anchored: keys of space */
        lua_pop(L, 1);
    }
    if (nd == 0) return argerr(L, "field 'space' is empty");
    qsort(names, (size_t)nd, sizeof *names, cmp_str);
    int64_t total = 1;
    for (int d = 0; d < nd; d++) {
        lua_getfield(L, sp, names[d]);
        counts[d] = (int64_t)lua_rawlen(L, -1), idx[d] = 0;
        lua_pop(L, 1);
        if (total > MAX_CONFIGS / counts[d])
            return argerr(L, "field 'space' has more than %d configs", MAX_CONFIGS);
        total *= counts[d];
    }
    for (int64_t c = 0; c < total; c++) {
        lua_createtable(L, 0, nd);
        for (int d = 0; d < nd; d++) {
            lua_getfield(L, sp, names[d]);
            lua_rawgeti(L, -1, idx[d] + 1);
            lua_setfield(L, -3, names[d]);
            lua_pop(L, 1);
        }
        lua_rawseti(L, CONFIGS, ++n);
        for (int d = nd - 1; d >= 0 && ++idx[d] == counts[d]; d--) idx[d] = 0;
    }
    lua_settop(L, sp - 1);
    return n;
}

/* ---- the problem ---- */

static int is_buffer(lua_State *L, int idx)
{
    return lua_type(L, idx) == LUA_TUSERDATA && luaL_testudata(L, idx, "ckt.buffer");
}

/* The problem table at PROBLEM as arguments of kernel k, in signature order. */
static int problem_args(lua_State *L, const ckt_kernel *k, ckt_arg *args)
{
    int n = 0;
    for (int i = 0; i < ckt_kernel_nparams(k); i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (!ckt_kparam_is_argument(p)) continue;
        lua_getfield(L, PROBLEM, p->name);
        if (lua_isnil(L, -1))
            return argerr(L, "field 'problem' lacks '%s' (%s), a parameter of kernel '%s'", p->name,
                          ckt_param_kind_name(p->kind), ckt_kernel_name(k));
        char what[160], why[320];
        snprintf(what, sizeof what, "field 'problem': '%s'", p->name);
        if (ckt_l_to_arg(L, -1, what, p->kind, &p->dtype, &args[n++], why, sizeof why))
            return argerr(L, "%s", why);
        lua_pop(L, 1);
    }
    return n;
}

/* Push the problem's signature: scalars by value, buffers by dtype and size. */
static void problem_signature(lua_State *L)
{
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, PROBLEM)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            argerr(L, "field 'problem' has a %s key; arguments are named by strings",
                   luaL_typename(L, -2));
        if (is_buffer(L, -1)) {
            lua_pushfstring(L, "buffer %s %I", ckt_dtype_name(ckt_l_buffer_dtype(L, -1)),
                            (LUAI_UACINT)ckt_buffer_size(ckt_l_checkbuffer(L, -1)));
            lua_replace(L, -2);
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, -4);
    }
    canon(L, -1, "field 'problem'", 0);
    lua_remove(L, -2);
}

/* The device of the first buffer in the problem (NULL: none). */
static ckt_device *problem_device(lua_State *L)
{
    ckt_device *dev = NULL;
    lua_pushnil(L);
    while (lua_next(L, PROBLEM)) {
        if (!dev && is_buffer(L, -1)) dev = ckt_buffer_device(ckt_l_checkbuffer(L, -1));
        lua_pop(L, 1);
    }
    return dev;
}

/* ---- building the candidates ---- */

/* Grid of build's second result (at idx): an integer, a list of up to 3, or grid(problem). */
static int to_grid(lua_State *L, int idx, int cfg, int64_t g[3])
{
    idx = lua_absindex(L, idx);
    g[0] = g[1] = g[2] = 1;
    if (lua_isfunction(L, idx)) {
        lua_pushvalue(L, idx);
        lua_pushvalue(L, PROBLEM);
        if (lua_pcall(L, 1, 1, 0) != LUA_OK) return 0; /* the message stays on the stack */
        lua_replace(L, idx);
    }
    char why[256];
    if (ckt_l_to_grid(L, idx, "grid", g, why, sizeof why))
        return argerr(L,
                      "field 'build': the grid for config %d must be a positive integer, a list of "
                      "1 to 3 of them, or a function of the problem returning one (%s)",
                      cfg, why);
    return 1;
}

static void set_reason(lua_State *L, holder *h, int i, ckt_autotune_state st, const char *prefix,
                       int msg_idx)
{
    msg_idx = lua_absindex(L, msg_idx);
    const char *m = lua_tostring(L, msg_idx);
    lua_pushfstring(L, "%s%s", prefix, m ? m : luaL_typename(L, msg_idx));
    h->c[i].reason = lua_tostring(L, -1);
    lua_rawseti(L, REASONS, i + 1); /* anchors the text */
    h->c[i].verdict = st;
}

/* Costs of build's third result: {bank_cycles=, bank_ideal=} (nil: none). */
static void costs(lua_State *L, int idx, int cfg, ckt_autotune_candidate *c)
{
    if (lua_isnil(L, idx)) return;
    if (!lua_istable(L, idx)) {
        argerr(L,
               "field 'build': its third result for config %d must be a table {bank_cycles=, "
               "bank_ideal=} or nil, got %s",
               cfg, luaL_typename(L, idx));
        return;
    }
    const char *f[2] = {"bank_cycles", "bank_ideal"};
    int64_t *v[2] = {&c->bank_cycles, &c->bank_ideal};
    for (int j = 0; j < 2; j++) {
        int t = lua_getfield(L, idx, f[j]);
        if (t != LUA_TNIL && (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0))
            argerr(L, "field 'build': %s for config %d must be a non-negative integer, got %s",
                   f[j], cfg, luaL_typename(L, -1));
        if (t != LUA_TNIL) *v[j] = lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
}

/* fn(config i) with nresults results on the stack; false when it raised: then config i failed
 * with the message ("what" first) and the stack is as it was. */
static bool call_config(lua_State *L, holder *h, int i, int fn, int nresults, const char *what)
{
    int top = lua_gettop(L);
    lua_pushvalue(L, fn);
    lua_rawgeti(L, CONFIGS, i + 1);
    if (lua_pcall(L, 1, nresults, 0) == LUA_OK) return true;
    set_reason(L, h, i, CKT_AUTOTUNE_FAILED, what, -1);
    lua_settop(L, top);
    return false;
}

/* Filter, then build, config i: a candidate of the engine (or a verdict). */
static void build_one(lua_State *L, holder *h, int i, int build, int filter)
{
    int top = lua_gettop(L);
    ckt_autotune_candidate *c = &h->c[i];
    c->args = &h->args[(size_t)i * CKT_K_MAX_PARAMS];
    if (filter) {
        if (!call_config(L, h, i, filter, 2, "filter: ")) return;
        if (!lua_toboolean(L, -2)) {
            if (lua_isnil(L, -1)) {
                lua_pop(L, 1);
                lua_pushliteral(L, "rejected");
            }
            set_reason(L, h, i, CKT_AUTOTUNE_PRUNED, "filter: ", -1);
            lua_settop(L, top);
            return;
        }
        lua_settop(L, top);
    }
    if (!call_config(L, h, i, build, 3, "build: ")) return;
    l_kernel *kb =
        lua_type(L, top + 1) == LUA_TUSERDATA ? luaL_testudata(L, top + 1, CKT_L_KERNEL) : NULL;
    if (!kb) {
        argerr(L, "field 'build' returned %s for config %d, not a kernel (return kernel, grid)",
               luaL_typename(L, top + 1), i + 1);
        return;
    }
    if (!kb->built) {
        argerr(L, "field 'build' returned a kernel still being built for config %d", i + 1);
        return;
    }
    if (!to_grid(L, top + 2, i + 1, c->grid)) {
        set_reason(L, h, i, CKT_AUTOTUNE_FAILED, "grid: ", -1);
        lua_settop(L, top);
        return;
    }
    costs(L, top + 3, i + 1, c);
    c->kernel = kb->k;
    c->nargs = problem_args(L, kb->k, (ckt_arg *)c->args);
    lua_pushvalue(L, top + 1);
    lua_rawseti(L, KERNELS, i + 1); /* alive while the engine compiles it */
    lua_settop(L, top);
}

/* ---- callbacks (on this thread, protected) ---- */

typedef struct tune_cb {
    lua_State *L;
    holder *h;
    int build, filter; /* stack indices of the functions (filter 0: none) */
    int metric;        /* stack index of the metric function (0: time) */
    int progress;      /* print the progress line */
    int i, ntimes;
    double ms, score;
    const double *times;
} tune_cb;

/* The build step of candidate cb->i in a C frame of its own (lua_pcall): its slots OPTS ..
 * PROBLEM are the call's (passed as arguments, so build_one's indices hold), then the build
 * function, the filter (nil: none) and the callback's state. */
static int build_protected(lua_State *L)
{
    tune_cb *cb = lua_touserdata(L, PROBLEM + 3);
    build_one(L, cb->h, cb->i, PROBLEM + 1, lua_isnil(L, PROBLEM + 2) ? 0 : PROBLEM + 2);
    return 0;
}

/* The engine asks for candidate i (on this thread, in l_autotune's frame): filter and build
 * it. An error (a build returning something that is not a kernel, a bad grid or problem) stops
 * the search; its message waits in REASONS.error for l_autotune to raise. */
static int on_next(void *user, int i, ckt_autotune_candidate *c, ckt_error *err)
{
    tune_cb *cb = user;
    lua_State *L = cb->L;
    cb->h->c[i] = *c;
    cb->i = i;
    lua_pushcfunction(L, build_protected);
    for (int k = OPTS; k <= PROBLEM; k++) lua_pushvalue(L, k);
    lua_pushvalue(L, cb->build);
    if (cb->filter)
        lua_pushvalue(L, cb->filter);
    else
        lua_pushnil(L);
    lua_pushlightuserdata(L, cb);
    if (lua_pcall(L, PROBLEM + 3, 0, 0) != LUA_OK) {
        lua_setfield(L, REASONS, "error");
        return ckt_fail(err, CKT_EINVAL, "autotune: the build step of config %d failed", i + 1) !=
               CKT_OK;
    }
    *c = cb->h->c[i];
    return 0;
}

/* The engine is done with candidate i: its kernel may be collected. */
static void on_release(void *user, int i)
{
    tune_cb *cb = user;
    if (lua_rawgeti(cb->L, KERNELS, i + 1) == LUA_TNIL) {
        lua_pop(cb->L, 1);
        return;
    }
    lua_pop(cb->L, 1);
    lua_pushnil(cb->L);
    lua_rawseti(cb->L, KERNELS, i + 1); /* an existing key: nothing is allocated */
}

static int metric_protected(lua_State *L)
{
    tune_cb *cb = lua_touserdata(L, 1); /* 2: the metric, 3: the config */
    lua_pushvalue(L, 2);
    lua_createtable(L, 0, 4);
    lua_pushvalue(L, 3);
    lua_setfield(L, -2, "config");
    ckt_l_set_int(L, "index", cb->i + 1);
    ckt_l_set_number(L, "ms", cb->ms);
    lua_createtable(L, cb->ntimes, 0);
    for (int k = 0; k < cb->ntimes; k++) lua_pushnumber(L, cb->times[k]), lua_rawseti(L, -2, k + 1);
    lua_setfield(L, -2, "times");
    lua_call(L, 1, 1);
    if (lua_type(L, -1) != LUA_TNUMBER)
        return luaL_error(L, "metric must return a number (lower is better), got %s",
                          luaL_typename(L, -1));
    if (lua_tonumber(L, -1) != lua_tonumber(L, -1))
        return luaL_error(L, "metric must return a number (lower is better), got NaN for config %d",
                          cb->i + 1);
    cb->score = lua_tonumber(L, -1);
    return 0;
}

static int on_metric(void *user, int i, double ms, const double *times, int ntimes, double *score,
                     ckt_error *err)
{
    tune_cb *cb = user;
    lua_State *L = cb->L;
    cb->i = i, cb->ms = ms, cb->times = times, cb->ntimes = ntimes;
    /* in l_autotune's frame (the engine calls back on this thread); nothing here allocates or
     * raises: the stack room was checked before the search began */
    lua_pushcfunction(L, metric_protected);
    lua_pushlightuserdata(L, cb);
    lua_pushvalue(L, cb->metric);
    lua_rawgeti(L, CONFIGS, i + 1);
    if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
        ckt_fail(err, CKT_EINVAL, "autotune: metric: %s",
                 lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
        lua_pop(L, 1);
        return 1;
    }
    *score = cb->score;
    return 0;
}

static int on_progress(void *user, const ckt_autotune_progress *p, ckt_error *err)
{
    (void)err;
    tune_cb *cb = user;
    if (!cb->progress) return 0;
    fprintf(stderr,
            "\r\033[Kautotune: %d candidates: %d compiled, %d measured, %d pruned, %d failed",
            p->candidates, p->compiled, p->measured, p->pruned, p->failed);
    if (p->best >= 0) fprintf(stderr, "; best #%d %.4g", p->best + 1, p->best_score);
    fflush(stderr);
    return 0;
}

/* ---- the report ---- */

static void set_num(lua_State *L, const char *k, double v, int when)
{
    if (!when) return;
    ckt_l_set_number(L, k, v);
}

static void set_int(lua_State *L, const char *k, int64_t v, int when)
{
    if (!when) return;
    ckt_l_set_int(L, k, v);
}

static void push_entry(lua_State *L, const holder *h, int i)
{
    const ckt_autotune_result *r = &h->r[i];
    lua_createtable(L, 0, 12);
    lua_rawgeti(L, CONFIGS, i + 1);
    lua_setfield(L, -2, "config");
    ckt_l_set_string(L, "status", ckt_autotune_state_name(r->state));
    if (r->reason[0]) {
        lua_pushstring(L, r->reason);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, "reason");
        lua_setfield(L, -2, "why"); /* the name the API contract uses */
    }
    set_int(L, "lds_bytes", r->lds_bytes, r->lds_bytes >= 0);
    set_num(L, "bank_factor", r->bank_factor, r->bank_factor > 0);
    int64_t regs = r->res.registers >= 0 ? r->res.registers : r->res.vgprs;
    set_int(L, "registers", regs, regs >= 0);
    int64_t sp[4] = {r->res.spill_stores, r->res.spill_loads, r->res.vgpr_spills,
                     r->res.sgpr_spills},
            spills = -1;
    for (int k = 0; k < 4; k++)
        if (sp[k] >= 0) spills = (spills < 0 ? 0 : spills) + sp[k];
    set_int(L, "spills", spills, spills >= 0);
    set_int(L, "occupancy", r->occupancy, r->occupancy >= 0);
    set_num(L, "compile_ms", r->compile_ms, r->compile_ms >= 0);
    if (r->compile_ms >= 0) lua_pushboolean(L, r->from_cache), lua_setfield(L, -2, "from_cache");
    set_num(L, "ms", r->ms, r->state == CKT_AUTOTUNE_MEASURED);
    set_num(L, "time", r->ms,
            r->state == CKT_AUTOTUNE_MEASURED); /* ms, under the contract's name */
    set_num(L, "score", r->score, r->state == CKT_AUTOTUNE_MEASURED);
}

/* ---- options ---- */

typedef struct tune_opts {
    const char *target, *name;
    int quiet, force, build, filter, metric;
    ckt_autotune_options eng;
} tune_opts;

static double opt_number(lua_State *L, const char *k, double def, double lo, double hi)
{
    int t = lua_getfield(L, OPTS, k);
    double v = def;
    if (t != LUA_TNIL) {
        if (t != LUA_TNUMBER)
            argerr(L, "field '%s' must be a number, got %s", k, luaL_typename(L, -1));
        v = lua_tonumber(L, -1);
        if (!(v >= lo && v <= hi)) argerr(L, "field '%s' = %g must be in [%g, %g]", k, v, lo, hi);
    }
    lua_pop(L, 1);
    return v;
}

static int opt_int(lua_State *L, const char *k, int def, int lo, int hi)
{
    int t = lua_getfield(L, OPTS, k);
    lua_Integer v = def;
    if (t != LUA_TNIL) {
        if (!lua_isinteger(L, -1))
            argerr(L, "field '%s' must be an integer, got %s", k,
                   lua_type(L, -1) == LUA_TNUMBER ? "a float" : luaL_typename(L, -1));
        v = lua_tointeger(L, -1);
        if (v < lo || v > hi)
            argerr(L, "field '%s' = %lld must be in [%d, %d]", k, (long long)v, lo, hi);
    }
    lua_pop(L, 1);
    return (int)v;
}

static int opt_bool(lua_State *L, const char *k, int def)
{
    int t = lua_getfield(L, OPTS, k), v = def;
    if (t != LUA_TNIL) {
        if (t != LUA_TBOOLEAN)
            argerr(L, "field '%s' must be a boolean, got %s", k, luaL_typename(L, -1));
        v = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
    return v;
}

/* A function option left on the stack (its index), 0 when absent. */
static int opt_function(lua_State *L, const char *k, int required, const char *what)
{
    int t = lua_getfield(L, OPTS, k);
    if (t == LUA_TNIL && !required) {
        lua_pop(L, 1);
        return 0;
    }
    if (t != LUA_TFUNCTION)
        return argerr(L, "field '%s' must be %s, got %s", k, what, luaL_typename(L, -1));
    return lua_gettop(L);
}

static void read_options(lua_State *L, tune_opts *o)
{
    static const char *const allowed[] = {
        "build",         "space",        "problem", "target", "metric", "warmup",  "runs",
        "budget_s",      "quiet",        "force",   "filter", "name",   "threads", "bank_slack",
        "min_occupancy", "allow_spills", "key",     "cache",  NULL};
    ckt_l_check_fields(L, OPTS, "autotune", allowed);
    memset(o, 0, sizeof *o);
    o->build = opt_function(L, "build", 1, "a function(config) returning kernel, grid");
    o->filter = opt_function(L, "filter", 0,
                             "a function(config) returning true to keep it (or false, why)");
    int mt = lua_getfield(L, OPTS, "metric");
    if (mt == LUA_TFUNCTION)
        o->metric = lua_gettop(L);
    else {
        if (mt != LUA_TNIL && !(mt == LUA_TSTRING && !strcmp(lua_tostring(L, -1), "time")))
            argerr(L,
                   "field 'metric' must be \"time\" or a function({config=, ms=, times=}) "
                   "returning a score (lower is better), got %s",
                   mt == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1));
        lua_pop(L, 1);
    }
    int tt = lua_getfield(L, OPTS, "target");
    if (tt != LUA_TNIL && tt != LUA_TSTRING)
        argerr(L, "field 'target' must be a string (cpu, cpu:sm_90, sm_90, gfx90a, ...), got %s",
               luaL_typename(L, -1));
    o->target =
        tt == LUA_TSTRING ? lua_tostring(L, -1) : ckt_context_default_target(ckt_l_context(L));
    lua_pop(L, 1); /* anchored in the options table */
    int nt = lua_getfield(L, OPTS, "name");
    if (nt != LUA_TNIL && nt != LUA_TSTRING)
        argerr(L, "field 'name' must be a string (the kernel family), got %s",
               luaL_typename(L, -1));
    o->name = nt == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    lua_pop(L, 1);
    o->quiet = opt_bool(L, "quiet", 0);
    o->force = opt_bool(L, "force", 0);
    o->eng.allow_spills = opt_bool(L, "allow_spills", 0);
    o->eng.compile_flags =
        opt_bool(L, "cache", 1) ? 0 : CKT_COMPILE_NO_CACHE; /* false: cold compiles */
    o->eng.warmup = opt_int(L, "warmup", 1, 0, 1000);
    o->eng.runs = opt_int(L, "runs", 5, 1, 1000);
    o->eng.threads = opt_int(L, "threads", 0, 0, 256);
    o->eng.min_occupancy = opt_int(L, "min_occupancy", 0, 0, 1 << 16);
    o->eng.budget_s = opt_number(L, "budget_s", 0, 0, 1e7);
    int bt = lua_getfield(L, OPTS, "bank_slack");
    int off = bt == LUA_TBOOLEAN && !lua_toboolean(L, -1);
    lua_pop(L, 1);
    o->eng.bank_slack = off ? -1 : opt_number(L, "bank_slack", 2.0, 1.0, 1e9);
    ckt_target_record rec;
    ckt_error err;
    if (ckt_target_parse(o->target, &rec, &err)) argerr(L, "field 'target': %s", err.msg);
}

/* ---- the remembered choice ---- */

/* Push the key of this call: family, space, problem signature, extra key, target. */
static void push_key(lua_State *L, const tune_opts *o, int nconfigs, ckt_device *dev)
{
    if (o->name)
        lua_pushstring(L, o->name);
    else {
        lua_Debug ar;
        lua_pushvalue(L, o->build);
        lua_getinfo(L, ">S", &ar);
        lua_pushfstring(L, "%s:%d", ar.short_src, ar.linedefined);
    }
    lua_createtable(L, nconfigs, 0);
    for (int i = 1; i <= nconfigs; i++) lua_rawgeti(L, CONFIGS, i), lua_rawseti(L, -2, i);
    canon(L, -1, "field 'space'", 0);
    lua_remove(L, -2);
    problem_signature(L);
    lua_getfield(L, OPTS, "key");
    canon(L, -1, "field 'key'", 0);
    lua_remove(L, -2);
    const char *parts[5] = {lua_tostring(L, -4), lua_tostring(L, -3), lua_tostring(L, -2),
                            lua_tostring(L, -1), o->target};
    char key[65];
    ckt_error err;
    if (ckt_autotune_key(parts, 5, dev, key, &err)) ckt_l_error(L, &err);
    lua_pop(L, 4);
    lua_pushstring(L, key);
}

/* A remembered entry: "ckt-autotune 1\n<index>\n<ms>\n<canonical config>". Its index and config
 * must still match this call's space; else it is stale. Returns the index (0: none). */
static int parse_payload(lua_State *L, const char *p, int nconfigs, double *ms, const char **why)
{
    if (strncmp(p, PAYLOAD_MAGIC, strlen(PAYLOAD_MAGIC))) {
        *why = "another format";
        return 0;
    }
    p += strlen(PAYLOAD_MAGIC);
    char *end;
    long idx = strtol(p, &end, 10);
    if (*end != '\n' || idx < 1 || idx > nconfigs) {
        *why = "its config is not in this space";
        return 0;
    }
    *ms = strtod(end + 1, &end);
    if (*end != '\n') {
        *why = "a malformed time";
        return 0;
    }
    lua_rawgeti(L, CONFIGS, (lua_Integer)idx);
    canon(L, -1, "config", 0);
    int same = !strcmp(lua_tostring(L, -1), end + 1);
    lua_pop(L, 2);
    if (!same) {
        *why = "its config differs from this space's";
        return 0;
    }
    return (int)idx;
}

/* The executables of remembered choices already built in this state, by key, config and build
 * function (registry): a repeated call with the same build function skips it and the
 * compile-cache load. */
#define MEMO_KEY "ckt.autotune.memo"

static void push_memo_key(lua_State *L, int key, int idx, int build)
{
    lua_pushfstring(L, "%s %d %p", lua_tostring(L, key), idx, lua_topointer(L, build));
}

static int memo_get(lua_State *L, int key, int idx, int build)
{
    if (lua_getfield(L, LUA_REGISTRYINDEX, MEMO_KEY) != LUA_TTABLE) {
        lua_pop(L, 1);
        return 0;
    }
    push_memo_key(L, key, idx, build);
    int found = lua_rawget(L, -2) == LUA_TUSERDATA;
    lua_remove(L, -2);
    if (!found) lua_pop(L, 1);
    return found; /* the executable on the stack */
}

static void memo_put(lua_State *L, int key, int idx, int build, int exe)
{
    exe = lua_absindex(L, exe);
    if (lua_getfield(L, LUA_REGISTRYINDEX, MEMO_KEY) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, MEMO_KEY);
    }
    push_memo_key(L, key, idx, build);
    lua_pushvalue(L, exe);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Build and compile the remembered config (or take this state's earlier executable of it);
 * push config, executable, report. 0: it is stale. */
static void push_stats(lua_State *L, int n, int measured, int pruned, int failed, int compiled,
                       int not_reached, bool remembered);

static int use_remembered(lua_State *L, const tune_opts *o, int idx, double ms, int key, int n)
{
    int top = lua_gettop(L), compiled = 0;
    if (!memo_get(L, key, idx, o->build)) {
        compiled = 1;
        lua_pushvalue(L, o->build);
        lua_rawgeti(L, CONFIGS, idx);
        if (lua_pcall(L, 1, 1, 0) != LUA_OK || !luaL_testudata(L, -1, CKT_L_KERNEL)) {
            lua_settop(L, top);
            return 0;
        }
        l_kernel *kb = lua_touserdata(L, -1);
        ckt_executable *exe = NULL;
        ckt_error err;
        ckt_kernel_compile_options co = {0, NULL, 0};
        if (!kb->built || ckt_kernel_compile(ckt_l_context(L), kb->k, o->target, &co, &exe, &err)) {
            lua_settop(L, top);
            return 0;
        }
        ckt_lk_push_executable(L, -1, exe);
        lua_remove(L, -2);
        memo_put(L, key, idx, o->build, -1);
    }
    int xidx = lua_gettop(L);
    lua_rawgeti(L, CONFIGS, idx);
    lua_pushvalue(L, xidx);
    lua_createtable(L, 1, 5);
    lua_createtable(L, 0, 3);
    lua_rawgeti(L, CONFIGS, idx);
    lua_setfield(L, -2, "config");
    lua_pushliteral(L, "remembered");
    lua_setfield(L, -2, "status");
    ckt_l_set_number(L, "ms", ms);
    lua_rawseti(L, -2, 1);
    ckt_l_set_bool(L, "remembered", true);
    ckt_l_set_int(L, "index", idx);
    ckt_l_set_int(L, "best", 1);
    push_stats(L, n, 0, 0, 0, compiled, 0, true); /* nothing measured: the winner remembered */
    lua_setfield(L, -2, "stats");
    lua_pushvalue(L, key);
    lua_setfield(L, -2, "key");
    lua_remove(L, xidx);
    return 1;
}

/* ---- ckt.autotune ---- */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* report.seconds: the whole call; report.lookup_ms: naming and reading the remembered choice */
static void set_times(lua_State *L, int report, double t0, double lookup_ms)
{
    lua_pushnumber(L, (now_ms() - t0) * 1e-3);
    lua_setfield(L, report, "seconds");
    lua_pushnumber(L, lookup_ms);
    lua_setfield(L, report, "lookup_ms");
}

typedef struct tally {
    int c[5], compiled, not_reached, by_budget;
} tally;

static tally count_results(const holder *h)
{
    tally t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < h->n; i++) {
        const ckt_autotune_result *r = &h->r[i];
        t.c[r->state]++, t.compiled += r->compile_ms >= 0;
        t.not_reached += r->out_of_budget == 1, t.by_budget += r->out_of_budget != 0;
    }
    return t;
}

/* report.stats: the counts of this call (remembered: nothing measured, the winner compiled or
 * reused) */
static void push_stats(lua_State *L, int n, int measured, int pruned, int failed, int compiled,
                       int not_reached, bool remembered)
{
    lua_createtable(L, 0, 7);
    set_int(L, "candidates", n, 1);
    set_int(L, "measured", measured, 1);
    set_int(L, "pruned", pruned, 1);
    set_int(L, "failed", failed, 1);
    set_int(L, "compiled", compiled, 1);
    set_int(L, "not_reached", not_reached, 1);
    ckt_l_set_bool(L, "remembered", remembered);
}

/* Nothing measured: the budget's error when it ran out, else the first candidate's reason
 * (usually the problem). */
static int none_measured(lua_State *L, const holder *h, double budget_s, double seconds)
{
    tally t = count_results(h);
    if (t.by_budget)
        return ckt_l_errorf(L,
                            "autotune: the budget ran out before any candidate was measured "
                            "(budget_s = %g s; the call took %.2f s): %d of %d candidates "
                            "reached, %d compiled, %d pruned (%d by the budget), %d failed, %d "
                            "not reached",
                            budget_s, seconds, h->n - t.not_reached, h->n, t.compiled,
                            t.c[CKT_AUTOTUNE_PRUNED], t.by_budget, t.c[CKT_AUTOTUNE_FAILED],
                            t.not_reached);
    return ckt_l_errorf(
        L, "autotune: no candidate could be measured (%d pruned, %d failed); config 1: %s: %s",
        t.c[CKT_AUTOTUNE_PRUNED], t.c[CKT_AUTOTUNE_FAILED], ckt_autotune_state_name(h->r[0].state),
        h->r[0].reason);
}

static int l_autotune(lua_State *L)
{
    double t0 = now_ms();
    luaL_checktype(L, OPTS, LUA_TTABLE);
    if (ckt_l_sandboxed(L))
        return ckt_l_errorf(L, "autotune: not available in a sandboxed state (it runs compilers on "
                               "threads and measures)");
    lua_settop(L, 1);
    lua_newtable(L); /* CONFIGS */
    lua_newtable(L); /* KERNELS */
    lua_newtable(L); /* REASONS */
    tune_opts o;
    read_options(L, &o);
    lua_settop(L, REASONS);
    int pt = lua_getfield(L, OPTS, "problem"); /* PROBLEM */
    if (pt == LUA_TFUNCTION) {
        lua_call(L, 0, 1);
        if (!lua_istable(L, -1))
            return argerr(
                L, "field 'problem': the function must return the table of arguments, got %s",
                luaL_typename(L, -1));
    } else if (pt != LUA_TTABLE)
        return argerr(L,
                      "field 'problem' must be a table of the kernel's arguments (or a function "
                      "returning one), got %s",
                      luaL_typename(L, -1));
    read_options(L, &o); /* again: its function slots now sit above PROBLEM */
    int n = expand_space(L);
    holder *h = new_holder(L, n); /* HOLDER */
    ckt_device *dev = problem_device(L);
    if (!dev) {
        ckt_target_record rec;
        ckt_error err;
        if (ckt_target_parse(o.target, &rec, &err)) return argerr(L, "field 'target': %s", err.msg);
        lua_pushcfunction(L, ckt_l_device_open);
        lua_pushstring(L, ckt_backend_name(rec.runtime));
        if (lua_pcall(L, 1, 1, 0) != LUA_OK)
            return ckt_l_errorf(L,
                                "autotune: target '%s' runs on a %s device and this machine has "
                                "none (%s); tune for the CPU target (cpu:%s) instead",
                                o.target, ckt_backend_name(rec.runtime), lua_tostring(L, -1),
                                rec.arch);
        dev = ckt_l_checkdevice(L, -1); /* anchored on the stack */
    }
    double t1 = now_ms();
    push_key(L, &o, n, dev);
    int key = lua_gettop(L);
    const char *note = NULL;
    double lookup_ms = now_ms() - t1;
    if (!o.force) {
        char *payload = NULL, cnote[600];
        size_t size = 0;
        ckt_recall rc = ckt_autotune_recall(ckt_l_context(L), lua_tostring(L, key), &payload, &size,
                                            cnote, sizeof cnote);
        lookup_ms = now_ms() - t1;
        if (rc == CKT_RECALL_CORRUPT)
            note = lua_pushfstring(L, "a damaged remembered choice was ignored (%s)", cnote);
        if (rc == CKT_RECALL_HIT) {
            lua_pushlstring(L, payload, size);
            free(payload);
            double ms = 0;
            const char *why = "";
            int idx = parse_payload(L, lua_tostring(L, -1), n, &ms, &why);
            lookup_ms = now_ms() - t1;
            if (idx && use_remembered(L, &o, idx, ms, key, n)) {
                set_times(L, lua_gettop(L), t0, lookup_ms);
                return 3;
            }
            note = lua_pushfstring(L, "a stale remembered choice was ignored (%s)",
                                   idx ? "its config no longer builds or compiles" : why);
        }
    }
    luaL_checkstack(L, PROBLEM + 8, "autotune: no stack room for the build step and the metric");
    tune_cb cb;
    memset(&cb, 0, sizeof cb);
    cb.L = L, cb.h = h, cb.build = o.build, cb.filter = o.filter, cb.metric = o.metric;
    cb.progress = !o.quiet && isatty(2);
    o.eng.metric = o.metric ? on_metric : NULL;
    o.eng.progress = on_progress;
    o.eng.user = &cb;
    /* budget_s bounds the whole call: the engine gets what the lookup left of it */
    double budget_s = o.eng.budget_s;
    if (budget_s > 0) {
        double left = budget_s - (now_ms() - t0) * 1e-3;
        o.eng.budget_s = left > 1e-9 ? left : 1e-9;
    }
    ckt_autotune_source src = {on_next, on_release, &cb};
    int best = -1;
    ckt_error err;
    ckt_status s =
        ckt_autotune_stream(ckt_l_context(L), dev, o.target, &src, n, &o.eng, h->r, &best, &err);
    if (cb.progress) fputc('\n', stderr);
    if (lua_getfield(L, REASONS, "error") != LUA_TNIL) return lua_error(L);
    lua_pop(L, 1);
    if (s) return ckt_l_error(L, &err);
    if (best < 0) return none_measured(L, h, budget_s, (now_ms() - t0) * 1e-3);
    tally tl = count_results(h);
    /* the winner: config, executable, report */
    lua_rawgeti(L, CONFIGS, best + 1);
    lua_rawgeti(L, KERNELS, best + 1);
    ckt_executable *exe = h->r[best].exe;
    h->r[best].exe = NULL;
    ckt_lk_push_executable(L, -1, exe);
    lua_remove(L, -2);
    memo_put(L, key, best + 1, o.build, -1);
    lua_createtable(L, n, 6);
    for (int i = 0; i < n; i++) push_entry(L, h, i), lua_rawseti(L, -2, i + 1);
    set_int(L, "best", best + 1, 1);
    ckt_l_set_bool(L, "remembered", false);
    lua_pushvalue(L, key);
    lua_setfield(L, -2, "key");
    if (tl.by_budget) { /* a partial search: its best, not remembered */
        char text[400];
        snprintf(text, sizeof text,
                 "budget_s = %g s ran out: %d of %d candidates measured, %d pruned (%d by the "
                 "budget), %d failed, %d not reached; the best so far is returned and not "
                 "remembered",
                 budget_s, tl.c[CKT_AUTOTUNE_MEASURED], n, tl.c[CKT_AUTOTUNE_PRUNED], tl.by_budget,
                 tl.c[CKT_AUTOTUNE_FAILED], tl.not_reached);
        lua_pushstring(L, text);
        if (note) lua_pushfstring(L, "%s; %s", note, lua_tostring(L, -1)), lua_remove(L, -2);
        lua_setfield(L, -2, "note");
    } else if (note)
        lua_pushstring(L, note), lua_setfield(L, -2, "note");
    ckt_l_set_bool(L, "partial", tl.by_budget > 0);
    push_stats(L, n, tl.c[CKT_AUTOTUNE_MEASURED], tl.c[CKT_AUTOTUNE_PRUNED],
               tl.c[CKT_AUTOTUNE_FAILED], tl.compiled, tl.not_reached, false);
    lua_setfield(L, -2, "stats");
    set_times(L, lua_gettop(L), t0, lookup_ms);
    if (tl.by_budget) {
        ckt_l_set_bool(L, "stored", false);
        ckt_autotune_results_free(h->r, h->n);
        return 3;
    }
    /* remember it */
    lua_rawgeti(L, CONFIGS, best + 1);
    canon(L, -1, "config", 0);
    char head[96];
    snprintf(head, sizeof head, "%s%d\n%.17g\n", PAYLOAD_MAGIC, best + 1, h->r[best].ms);
    lua_pushstring(L, head);
    lua_insert(L, -2);
    lua_concat(L, 2);
    size_t plen;
    const char *payload = lua_tolstring(L, -1, &plen);
    lua_pushboolean(L,
                    ckt_autotune_remember(ckt_l_context(L), lua_tostring(L, key), payload, plen));
    lua_setfield(L, -4, "stored");
    lua_pop(L, 2);
    ckt_autotune_results_free(h->r, h->n);
    return 3;
}

void ckt_lk_open_autotune(lua_State *L)
{
    static const ckt_l_entry rows[] = {
        {RESULTS, "__gc", holder_gc}, {CKT_L_MODULE, "autotune", l_autotune}, {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    ckt_l_help_add(L, "autotune",
                   "ckt.autotune{build=function(config) return kernel, grid [, {bank_cycles=, "
                   "bank_ideal=}] end,\n"
                   "  space={name={values...}, ...} | {config, ...}, problem={param=value...} | "
                   "function() return {...} end,\n"
                   "  target=, metric=\"time\" | function{config=, ms=, times=} -> score, "
                   "warmup=1, runs=5, budget_s=, filter=fn(config)\n"
                   "  -> keep [, why], bank_slack=2 | false, min_occupancy=, allow_spills=false, "
                   "threads=, name=, key=, quiet=, force=, cache=}\n"
                   "-> best_config, executable, report. Prunes before compiling (filter, LDS "
                   "limit, the problem's launch checks,\n"
                   "the bank model's rating against the best), compiles on host threads, prunes "
                   "spills / low occupancy, measures the\n"
                   "rest (median of runs). report[i] = {config=, status=measured|pruned|failed, "
                   "reason=, ms=, compile_ms=, ...};\n"
                   "report.best, .stats, .seconds. budget_s bounds the whole call: the best so far "
                   "comes back with report.partial and report.note\n"
                   "(not remembered). The winner is remembered in the cache directory "
                   "(report.remembered next time;\n"
                   "force=true re-tunes; a damaged or stale entry is ignored and named in "
                   "report.note). docs/autotune.md.");
}
