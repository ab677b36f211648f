/* Lua: JIT compilation (ckt.compile) and its results. */
#include <stdlib.h>
#include <string.h>

#include "ckt/compile_pool.h"
#include "ckt/jit.h"
#include "l_internal.h"
#include "l_kernel.h"

#define CKT_L_BINARY "ckt.binary"

static ckt_binary **checkbin(lua_State *L, int i)
{
    ckt_binary **b = luaL_checkudata(L, i, CKT_L_BINARY);
    if (!*b) ckt_l_errorf(L, "compiled binary: used after close");
    return b;
}

ckt_binary *ckt_l_checkbinary(lua_State *L, int idx)
{
    if (!luaL_testudata(L, idx, CKT_L_BINARY))
        ckt_l_errorf(L, "expected a compiled binary (ckt.compile), got %s", luaL_typename(L, idx));
    return *checkbin(L, idx);
}

void ckt_l_pushbinary(lua_State *L, ckt_binary *b)
{
    ckt_l_push_value(L, CKT_L_BINARY, &b, sizeof b);
}

/* options={...}, compile_only=, cache= of the table at t: the compiler options (anchored in the
 * table; opts holds 32) and the ckt_compile_flags, for ckt.compile and k:compile alike. */
int ckt_l_compile_options(lua_State *L, int t, const char *fn, const char **opts, unsigned *flags)
{
    int n = 0;
    if (lua_getfield(L, t, "options") != LUA_TNIL) {
        if (!lua_istable(L, -1))
            return ckt_l_argerror(L, t, "field 'options' must be a list of strings");
        n = (int)luaL_len(L, -1);
        if (n > 32) return ckt_l_errorf(L, "%s: at most 32 options", fn);
        for (int i = 0; i < n; i++) {
            lua_geti(L, -1, i + 1);
            if (lua_type(L, -1) != LUA_TSTRING)
                return ckt_l_errorf(L, "%s: options[%d] must be a string", fn, i + 1);
            opts[i] = lua_tostring(L, -1);
            lua_pop(L, 1); /* anchored in the options table */
        }
    }
    lua_pop(L, 1);
    int compile_only = 0, cache = 1;
    ckt_l_field_bool(L, t, fn, "compile_only", &compile_only);
    ckt_l_field_bool(L, t, fn, "cache", &cache);
    /* a sandboxed state's compiles take only the known-harmless options (jit_sandbox.c) */
    *flags = (compile_only ? CKT_COMPILE_ONLY : 0) | (cache ? 0 : CKT_COMPILE_NO_CACHE) |
             (ckt_l_sandboxed(L) ? CKT_COMPILE_SANDBOXED : 0);
    return n;
}

/* ckt.compile{target=, source=, name=, options={...}, compile_only=, cache=} -> binary */
int ckt_l_compile(lua_State *L)
{
    static const char *const fn = "compile";
    static const char *const allowed[] = {"target",       "source", "name", "options",
                                          "compile_only", "cache",  NULL};
    ckt_l_check_fields(L, 1, fn, allowed);
    ckt_compile_request req;
    memset(&req, 0, sizeof req);
    if (!ckt_l_field_string(L, 1, fn, "target", &req.target))
        req.target = ckt_context_default_target(ckt_l_context(L));
    if (!ckt_l_field_string(L, 1, fn, "source", &req.source))
        return ckt_l_argerror(L, 1, "field 'source' is required");
    if (!ckt_l_field_string(L, 1, fn, "name", &req.kernel_name))
        return ckt_l_argerror(L, 1, "field 'name' is required");
    const char *opts[32];
    unsigned flags;
    req.noptions = ckt_l_compile_options(L, 1, fn, opts, &flags);
    req.options = req.noptions ? opts : NULL;
    ckt_binary **u = lua_newuserdatauv(L, sizeof *u, 0);
    *u = NULL;
    luaL_setmetatable(L, CKT_L_BINARY);
    ckt_error err;
    if (ckt_compile(ckt_l_context(L), &req, flags, u, &err)) return ckt_l_error(L, &err);
    return 1;
}

static int b_gc(lua_State *L)
{
    ckt_binary **b = luaL_checkudata(L, 1, CKT_L_BINARY);
    ckt_binary_free(*b);
    *b = NULL;
    return 0;
}

static void field(lua_State *L, const char *k, int64_t v)
{
    if (v < 0) return; /* unknown for this target */
    ckt_l_set_int(L, k, v);
}

static int b_resources(lua_State *L)
{
    const ckt_binary *b = *checkbin(L, 1);
    const ckt_resources *r = ckt_binary_resources(b);
    lua_createtable(L, 0, 13);
    field(L, "vgprs", r->vgprs);
    field(L, "sgprs", r->sgprs);
    field(L, "agprs", r->agprs);
    field(L, "vgpr_spills", r->vgpr_spills);
    field(L, "sgpr_spills", r->sgpr_spills);
    field(L, "registers", r->registers);
    field(L, "spill_stores", r->spill_stores);
    field(L, "spill_loads", r->spill_loads);
    /* lds_bytes: the static LDS (as before); dynamic_lds_bytes: what the launch requests;
     * total_lds_bytes: both (absent when the dynamic size is the launch's choice) */
    field(L, "lds_bytes", r->shared_bytes);
    field(L, "static_lds_bytes", r->shared_bytes);
    field(L, "dynamic_lds_bytes", ckt_binary_dynamic_shared_bytes(b));
    field(L, "total_lds_bytes", ckt_binary_total_shared_bytes(b));
    field(L, "scratch_bytes", r->scratch_bytes);
    return 1;
}

static int b_code(lua_State *L)
{
    size_t n;
    const uint8_t *c = ckt_binary_code(*checkbin(L, 1), &n);
    lua_pushlstring(L, (const char *)c, n);
    return 1;
}

/* b:disassembly() -> text, or nil and why */
static int b_disasm(lua_State *L)
{
    ckt_binary *b = *checkbin(L, 1);
    const char *d = ckt_binary_disassembly(b);
    if (d) {
        lua_pushstring(L, d);
        return 1;
    }
    lua_pushnil(L);
    lua_pushstring(L, ckt_binary_disassembly_note(b));
    return 2;
}

/* The binary's plain accessors, B:<name>() -> the engine's value: b_accessor over each row */
static const struct accessor {
    const char *name;
    const char *(*string)(const ckt_binary *);
    int (*flag)(const ckt_binary *);
    double (*number)(const ckt_binary *);
} accessors[] = {
    {"log", .string = ckt_binary_log},
    {"target", .string = ckt_binary_target},
    {"compiler", .string = ckt_binary_compiler},
    {"kernel_name", .string = ckt_binary_kernel_name},
    {"from_cache", .flag = ckt_binary_from_cache},
    {"cache_status", .string = ckt_binary_cache_status},
    {"compile_only", .flag = ckt_binary_compile_only},
    {"compile_ms", .number = ckt_binary_compile_ms},
};

static int b_accessor(lua_State *L)
{
    const struct accessor *a = ckt_l_row(L);
    const ckt_binary *b = *checkbin(L, 1);
    if (a->string)
        lua_pushstring(L, a->string(b));
    else if (a->flag)
        lua_pushboolean(L, a->flag(b));
    else
        lua_pushnumber(L, a->number(b));
    return 1;
}

static int b_tostring(lua_State *L)
{
    ckt_binary *b = *checkbin(L, 1);
    size_t n;
    ckt_binary_code(b, &n);
    lua_pushfstring(L, "compiled %s: %d bytes by %s in %f ms", ckt_binary_target(b), (int)n,
                    ckt_binary_compiler(b), ckt_binary_compile_ms(b));
    return 1;
}

void ckt_l_open_jit(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_BINARY, "__gc", b_gc},
                                       {CKT_L_BINARY, "__close", b_gc},
                                       {CKT_L_BINARY, "__tostring", b_tostring},
                                       {CKT_L_BINARY, "resources", b_resources},
                                       {CKT_L_BINARY, "code_object", b_code},
                                       {CKT_L_BINARY, "disassembly", b_disasm},
                                       {CKT_L_MODULE, "compile", ckt_l_compile},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    CKT_L_REGISTER_ROWS(L, CKT_L_BINARY, b_accessor, accessors);
    ckt_l_help_add(L, "compile",
                   "ckt.compile{target=, source=, name=, options={...}, compile_only=, cache=} -> "
                   "a binary: any HIP, CUDA\n"
                   "or C source compiled for target (hipRTC, NVRTC or the host C compiler), "
                   "through the disk cache unless\n"
                   "cache = false. dev:launch(binary, {grid=, block=, params=, args=}) runs it. "
                   "Kernels built with\n"
                   "ckt.kernel compile with k:compile{...} instead (help('kernel')).");
    ckt_l_help_add(
        L, "binary",
        "A compiled binary (ckt.compile; an executable's binary()): b:resources() (registers, "
        "spills, LDS, scratch),\n"
        "b:disassembly(), b:code_object(), b:log(), b:target(), b:compiler(), "
        "b:compile_ms(), b:from_cache(),\n"
        "b:cache_status() (\"hit\" or why it missed), b:kernel_name(), "
        "b:compile_only(); to-be-closed.");
}
