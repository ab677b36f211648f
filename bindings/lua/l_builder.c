/* ckt Lua bindings — the kernel builder (DESIGN 3.6): ckt.kernel{name=, block=, build=fn} runs
 * fn(b) over a builder whose calls record the kernel IR (ckt/kernel_ir.h). This file holds the
 * kernel object, the builder's control methods (thread and block ids, parameters, loops,
 * branches, sync, block order) and assembles the builder from the files of l_kernel.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_kernel.h"

l_kernel *ckt_lk_checkkernel(lua_State *L, int idx)
{
    return luaL_checkudata(L, idx, CKT_L_KERNEL);
}

/* The engine allocates the IR with malloc, which a sandbox's memory cap does not see: a userdata
 * of the same size (the kernel's user value) makes the state's allocator account for it, so a
 * script cannot hold gigabytes of kernels in a state capped at megabytes. Recharged as it grows. */
static void charge(lua_State *L, l_kernel *kb, int kidx)
{
    size_t fp = ckt_kernel_footprint(kb->k);
    if (fp <= kb->charged && kb->charged - fp < (1u << 20)) return;
    kidx = lua_absindex(L, kidx);
    lua_newuserdatauv(L, fp, 0);
    lua_setiuservalue(L, kidx, 1);
    kb->charged = fp;
}

/* The caller's script line, recorded with the next operations (comments in the source). */
void ckt_lk_mark_line(lua_State *L, l_kernel *kb)
{
    if (kb->building) { /* the kernel being built sits in the registry: recharge its growth */
        lua_getfield(L, LUA_REGISTRYINDEX, ACTIVE_KEY);
        if (lua_touserdata(L, -1) == kb) charge(L, kb, -1);
        lua_pop(L, 1);
    }
    lua_Debug ar;
    int line = 0;
    for (int level = 1; level < 4 && !line; level++)
        if (lua_getstack(L, level, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0 &&
            ar.what[0] != 'C')
            line = ar.currentline;
    ckt_kernel_set_line(kb->k, line);
}

void ckt_lk_require_building(lua_State *L, l_kernel *kb, const char *fn)
{
    if (!kb->building)
        ckt_l_errorf(L, "%s: kernel '%s' is %s (builder calls belong inside its build function)",
                     fn, ckt_kernel_name(kb->k), kb->built ? "already built" : "not being built");
    ckt_lk_mark_line(L, kb);
}

l_kernel *ckt_lk_checkbuilder(lua_State *L, const char *fn)
{
    l_kernel *kb = ckt_lk_checkkernel(L, 1);
    ckt_lk_require_building(L, kb, fn);
    return kb;
}

/* The kernel whose build function is running. */
l_kernel *ckt_lk_active(lua_State *L, const char *fn)
{
    lua_getfield(L, LUA_REGISTRYINDEX, ACTIVE_KEY);
    l_kernel *kb = luaL_testudata(L, -1, CKT_L_KERNEL);
    lua_pop(L, 1); /* still anchored: the build function's caller holds it */
    if (!kb)
        ckt_l_errorf(L,
                     "%s: only inside a kernel's build function (ckt.kernel{name=, block=, "
                     "build=function(b) ... end})",
                     fn);
    ckt_lk_mark_line(L, kb);
    return kb;
}

CKT_L_CLOSER(k_gc, l_kernel, CKT_L_KERNEL, k, ckt_kernel_destroy)

static int k_tostring(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkkernel(L, 1);
    if (!kb->k) {
        lua_pushliteral(L, "ckt.kernel (destroyed)");
        return 1;
    }
    lua_pushfstring(L, "ckt.kernel(%s: %d threads, %d params, %d ops, %I bytes of LDS%s)",
                    ckt_kernel_name(kb->k), (int)ckt_kernel_block(kb->k), ckt_kernel_nparams(kb->k),
                    ckt_kernel_nops(kb->k), (lua_Integer)ckt_kernel_lds_bytes(kb->k),
                    kb->built ? "" : ", building");
    return 1;
}

/* ckt.kernel{name=, block=, build=function(b) ... end} -> kernel */
static int l_kernel_new(lua_State *L)
{
    static const char *const fn = "kernel";
    static const char *const allowed[] = {"name", "block", "build", NULL};
    ckt_l_check_fields(L, 1, fn, allowed);
    const char *name;
    int64_t block;
    if (!ckt_l_field_string(L, 1, fn, "name", &name))
        return ckt_l_argerror(L, 1, "field 'name' (a C identifier) is required");
    if (!ckt_l_field_int(L, 1, fn, "block", &block))
        return ckt_l_argerror(L, 1, "field 'block' (threads per block) is required");
    if (lua_getfield(L, 1, "build") != LUA_TFUNCTION)
        return ckt_l_argerror(L, 1, "field 'build' must be a function(b), got %s",
                              luaL_typename(L, -1));
    int fi = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, ACTIVE_KEY);
    if (!lua_isnil(L, -1))
        return ckt_l_errorf(
            L, "kernel: cannot build kernel '%s' inside another kernel's build function", name);
    lua_pop(L, 1);
    l_kernel *kb = lua_newuserdatauv(L, sizeof *kb, 1);
    memset(kb, 0, sizeof *kb);
    luaL_setmetatable(L, CKT_L_KERNEL);
    int ki = lua_gettop(L);
    ckt_error err;
    if (ckt_kernel_create(name, block, &kb->k, &err)) return ckt_l_error(L, &err);
    charge(L, kb, ki);
    kb->building = 1;
    lua_pushvalue(L, ki);
    lua_setfield(L, LUA_REGISTRYINDEX, ACTIVE_KEY);
    lua_pushvalue(L, fi);
    lua_pushvalue(L, ki);
    int rc = lua_pcall(L, 1, 0, 0);
    kb->building = 0;
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, ACTIVE_KEY);
    if (rc != LUA_OK) {
        /* drop the ballast now: the kernel has a finalizer, and an object awaiting finalization
         * keeps its user values alive through emergency collections, so the charge would stay */
        lua_pushnil(L);
        lua_setiuservalue(L, ki, 1);
        kb->charged = 0;
        return lua_error(L); /* the build function's error, as raised */
    }
    kb->built = 1;
    if (ckt_kernel_finish(kb->k, &err)) return ckt_l_error(L, &err);
    charge(L, kb, ki);
    lua_settop(L, ki);
    return 1;
}

static int b_thread_id(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "thread_id");
    ckt_lk_push_expr(L, kb, 1, ckt_expr_tid(ckt_kernel_exprs(kb->k)));
    return 1;
}

static int check_axis(lua_State *L, int idx, const char *fn)
{
    if (lua_isnoneornil(L, idx)) return 0;
    if (lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tostring(L, idx);
        if (!strcmp(s, "x")) return 0;
        if (!strcmp(s, "y")) return 1;
        if (!strcmp(s, "z")) return 2;
    } else if (lua_isinteger(L, idx) && lua_tointeger(L, idx) >= 0 && lua_tointeger(L, idx) <= 2) {
        return (int)lua_tointeger(L, idx);
    }
    return ckt_l_errorf(L, "%s: axis must be 0, 1, 2, \"x\", \"y\" or \"z\"", fn);
}

static int b_block_id(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "block_id");
    ckt_lk_push_expr(L, kb, 1, ckt_expr_bid(ckt_kernel_exprs(kb->k), check_axis(L, 2, "block_id")));
    return 1;
}

static int b_num_blocks(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "num_blocks");
    ckt_lk_push_expr(L, kb, 1,
                     ckt_expr_nblocks(ckt_kernel_exprs(kb->k), check_axis(L, 2, "num_blocks")));
    return 1;
}

/* b:pointer(name, dtype [, {const=, align=}]) */
static int b_pointer(lua_State *L)
{
    static const char *const allowed[] = {"const", "align", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, "pointer");
    const char *name = luaL_checkstring(L, 2);
    ckt_dtype t = ckt_l_checkdtype(L, 3, "dtype");
    int is_const = 0;
    int64_t align = 16;
    if (!lua_isnoneornil(L, 4)) {
        ckt_l_check_fields(L, 4, "pointer", allowed);
        ckt_l_field_bool(L, 4, "pointer", "const", &is_const);
        ckt_l_field_int(L, 4, "pointer", "align", &align);
    }
    int idx;
    ckt_error err;
    if (ckt_kernel_param_ptr(kb->k, name, t, is_const, align, &idx, &err))
        return ckt_l_error(L, &err);
    l_kobj *o = ckt_lk_newobj(L, kb, 1, CKT_L_EXPR, CKT_EXPR_NONE);
    o->param = idx;
    return 1;
}

static ckt_param_kind scalar_kind(lua_State *L, const char *s, const char *fn)
{
    if (!strcmp(s, "i32")) return CKT_PARAM_I32;
    if (!strcmp(s, "i64")) return CKT_PARAM_I64;
    if (!strcmp(s, "f32")) return CKT_PARAM_F32;
    ckt_l_errorf(L, "%s: type '%s' is not i32, i64 or f32", fn, s);
    return CKT_PARAM_I32;
}

/* b:size(name [, {value=, multiple_of=, type="i32"|"i64"}]) -> an index expression; with value=
 * the size is specialized (folded into the source, not a launch argument). */
static int scalar_param(lua_State *L, int is_float)
{
    static const char *const allowed[] = {"value", "multiple_of", "type", NULL};
    const char *fn = is_float ? "scalar" : "size";
    l_kernel *kb = ckt_lk_checkbuilder(L, fn);
    const char *name = luaL_checkstring(L, 2);
    ckt_param_kind kind = is_float ? CKT_PARAM_F32 : CKT_PARAM_I32;
    int specialized = 0;
    int64_t iv = 0, divisor = 1;
    double fv = 0;
    if (!lua_isnoneornil(L, 3)) {
        ckt_l_check_fields(L, 3, fn, allowed);
        const char *ty;
        if (ckt_l_field_string(L, 3, fn, "type", &ty)) kind = scalar_kind(L, ty, fn);
        if (is_float != (kind == CKT_PARAM_F32))
            return ckt_l_errorf(L, "%s: type must be %s", fn, is_float ? "f32" : "i32 or i64");
        if (lua_getfield(L, 3, "value") != LUA_TNIL) {
            specialized = 1;
            if (is_float) {
                if (lua_type(L, -1) != LUA_TNUMBER)
                    return ckt_l_argerror(L, 3, "field 'value' must be a number, got %s",
                                          luaL_typename(L, -1));
                fv = lua_tonumber(L, -1);
            } else {
                iv = ckt_l_checkint(L, -1, "size: field 'value'");
            }
        }
        lua_pop(L, 1);
        ckt_l_field_int(L, 3, fn, "multiple_of", &divisor);
    }
    int idx;
    ckt_error err;
    if (ckt_kernel_param_scalar(kb->k, name, kind, specialized, iv, fv, divisor, &idx, &err))
        return ckt_l_error(L, &err);
    ckt_lk_push_expr(L, kb, 1, ckt_kernel_param(kb->k, idx)->expr);
    return 1;
}

static int b_size(lua_State *L) { return scalar_param(L, 0); }
static int b_scalar(lua_State *L) { return scalar_param(L, 1); }

/* Run the body function (argument 3; with the loop variable when var is given), then close the
 * loop or branch it is the body of. */
/* call the body function at stack index fn (with the loop variable), then close its scope */
static int run_body(lua_State *L, l_kernel *kb, int fn, const ckt_expr_id *var)
{
    lua_pushvalue(L, fn);
    if (var) ckt_lk_push_expr(L, kb, 1, *var);
    lua_call(L, var ? 1 : 0, 0);
    ckt_lk_mark_line(L, kb);
    ckt_error err;
    if (ckt_kernel_end(kb->k, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:let(value [, name]) -> an expression that reads the value computed once, here (outside every
 * loop, branch and producer region): a tile origin read in a loop is not recomputed each time */
static int b_let(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "let");
    ckt_expr_id v = ckt_lk_toexpr(L, 2, kb, "value");
    const char *name = luaL_optstring(L, 3, NULL);
    ckt_expr_id var;
    ckt_error err;
    if (ckt_kernel_let(kb->k, name, v, &var, &err)) return ckt_l_error(L, &err);
    ckt_lk_push_expr(L, kb, 1, var);
    return 1;
}

/* b:var(init [, {lo =, hi =, multiple_of =, name =}]) -> a block-uniform variable set to init
 * here, which b:assign sets again anywhere (in loops and block-uniform branches); the analyses
 * know it holds integers in [lo, hi] (default: all of int64) that are multiples of multiple_of
 * (default 1), and every value assigned must provably keep that */
static int b_var(lua_State *L)
{
    static const char *const allowed[] = {"lo", "hi", "multiple_of", "name", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, "var");
    ckt_expr_id init = ckt_lk_toexpr(L, 2, kb, "init");
    int64_t lo = INT64_MIN, hi = INT64_MAX, div = 1;
    const char *name = NULL;
    if (!lua_isnoneornil(L, 3)) {
        ckt_l_check_fields(L, 3, "var", allowed);
        ckt_l_field_int(L, 3, "var", "lo", &lo);
        ckt_l_field_int(L, 3, "var", "hi", &hi);
        ckt_l_field_int(L, 3, "var", "multiple_of", &div);
        if (lua_getfield(L, 3, "name") != LUA_TNIL) {
            if (lua_type(L, -1) != LUA_TSTRING)
                return ckt_l_errorf(L, "var: field 'name' must be a string, got %s",
                                    luaL_typename(L, -1));
            name = lua_tostring(L, -1);
        }
    }
    ckt_expr_id var;
    ckt_error err;
    if (ckt_kernel_var_facts(kb->k, name, init, lo, hi, div, &var, &err))
        return ckt_l_error(L, &err);
    ckt_lk_push_expr(L, kb, 1, var);
    return 1;
}

/* b:assign(var, value): var (made by b:var) = value, here */
static int b_assign(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "assign");
    ckt_expr_id var = ckt_lk_toexpr(L, 2, kb, "variable");
    ckt_expr_id v = ckt_lk_toexpr(L, 3, kb, "value");
    ckt_error err;
    if (ckt_kernel_assign(kb->k, var, v, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:require(cond, message): the launch is refused with message unless cond (an integer
 * expression of the sizes) is nonzero at the arguments given */
static int b_require(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "require");
    ckt_expr_id c = ckt_lk_toexpr(L, 2, kb, "condition");
    const char *msg = luaL_checkstring(L, 3);
    ckt_error err;
    if (ckt_kernel_require(kb->k, c, msg, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* The boolean `field` of an optional options table at index t ({field = b}: no other field), or
 * dflt when the table is absent */
static int option_flag(lua_State *L, int t, const char *fn, const char *field, int dflt)
{
    if (lua_isnoneornil(L, t)) return dflt;
    const char *const allowed[] = {field, NULL};
    luaL_checktype(L, t, LUA_TTABLE);
    ckt_l_check_fields(L, t, fn, allowed);
    int v = dflt;
    ckt_l_field_bool(L, t, fn, field, &v);
    return v;
}

/* b:loop(trip, function(i) ... end [, {unroll = false}]): a loop with a block-uniform trip count;
 * unroll = false: the GPU compilers keep it a loop (ckt_kernel_loop_rolled) */
static int b_loop(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "loop");
    ckt_expr_id trip = ckt_lk_toexpr(L, 2, kb, "trip count");
    luaL_checktype(L, 3, LUA_TFUNCTION);
    int unroll = option_flag(L, 4, "loop", "unroll", 1);
    ckt_expr_id var;
    ckt_error err;
    if (ckt_kernel_loop_rolled(kb->k, trip, !unroll, &var, &err)) return ckt_l_error(L, &err);
    return run_body(L, kb, 3, &var);
}

/* b:when(cond, function() ... end): a branch (block-uniform or per thread) */
static int b_when(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "when");
    ckt_expr_id c = ckt_lk_toexpr(L, 2, kb, "condition");
    luaL_checktype(L, 3, LUA_TFUNCTION);
    ckt_error err;
    if (ckt_kernel_if(kb->k, c, &err)) return ckt_l_error(L, &err);
    return run_body(L, kb, 3, NULL);
}

/* b:producer(function() ... end [, {warpgroup = true}]): the body runs on a producer warp
 * launched beside the block's threads (warp specialization): bulk tensor copies ahead of them,
 * paced by mbarriers; warpgroup: a whole warpgroup that hands its registers to the block's
 * warpgroups (sm_90a's setmaxnreg) */
static int b_producer(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "producer");
    luaL_checktype(L, 2, LUA_TFUNCTION);
    int wg = option_flag(L, 3, "producer", "warpgroup", 0);
    ckt_error err;
    if ((wg ? ckt_kernel_producer_warpgroup : ckt_kernel_producer)(kb->k, &err))
        return ckt_l_error(L, &err);
    return run_body(L, kb, 2, NULL);
}

static int b_sync(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "sync");
    ckt_error err;
    if (ckt_kernel_sync(kb->k, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:block_order{tiles={m, n}, order="row"|"col"|"grouped", group=, id=} -> tile coordinates of
 * tile number id (default: this block's id x) over m*n tiles (ckt_kernel_block_order) */
static int b_block_order(lua_State *L)
{
    static const char *const fn = "block_order";
    static const char *const allowed[] = {"tiles", "order", "group", "id", NULL};
    static const char *const orders[] = {"row", "col", "grouped", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, fn);
    ckt_l_check_fields(L, 2, fn, allowed);
    if (lua_getfield(L, 2, "tiles") != LUA_TTABLE || luaL_len(L, -1) != 2)
        return ckt_l_argerror(L, 2, "field 'tiles' must be {m_tiles, n_tiles}");
    lua_geti(L, -1, 1);
    lua_geti(L, -2, 2);
    ckt_expr_id m = ckt_lk_toexpr(L, -2, kb, "block_order: tiles[1]"),
                n = ckt_lk_toexpr(L, -1, kb, "block_order: tiles[2]"), id = CKT_EXPR_NONE;
    lua_pop(L, 3);
    const char *order = "row";
    int64_t group = 8;
    ckt_l_field_string(L, 2, fn, "order", &order);
    ckt_l_field_int(L, 2, fn, "group", &group);
    int o = 0;
    while (orders[o] && strcmp(orders[o], order)) o++;
    if (!orders[o])
        return ckt_l_errorf(L, "block_order: order '%s' is not row, col or grouped", order);
    if (lua_getfield(L, 2, "id") !=
        LUA_TNIL) /* a tile number other than the block's (persistent) */
        id = ckt_lk_toexpr(L, -1, kb, "block_order: id");
    lua_pop(L, 1);
    ckt_expr_id tm, tn;
    ckt_error err;
    if (ckt_kernel_block_order(kb->k, m, n, (ckt_block_order)o, group, id, &tm, &tn, &err))
        return ckt_l_error(L, &err);
    ckt_lk_push_expr(L, kb, 1, tm);
    ckt_lk_push_expr(L, kb, 1, tn);
    return 2;
}

/* The files of the kernel builder (l_kernel.h), each adding its part; a new file adds a line. */
static void (*const kernel_parts[])(lua_State *L) = {
    ckt_lk_open_expr,    ckt_lk_open_tensor,   ckt_lk_open_partition, ckt_lk_open_copy,
    ckt_lk_open_compute, ckt_lk_open_gemm,     ckt_lk_open_async,     ckt_lk_open_executable,
    ckt_lk_open_library, ckt_lk_open_autotune, ckt_lk_open_tma,
};

void ckt_l_open_kernel(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_KERNEL, "__gc", k_gc},
                                       {CKT_L_KERNEL, "__tostring", k_tostring},
                                       {CKT_L_KERNEL, "pointer", b_pointer},
                                       {CKT_L_KERNEL, "size", b_size},
                                       {CKT_L_KERNEL, "scalar", b_scalar},
                                       {CKT_L_KERNEL, "thread_id", b_thread_id},
                                       {CKT_L_KERNEL, "require", b_require},
                                       {CKT_L_KERNEL, "block_id", b_block_id},
                                       {CKT_L_KERNEL, "num_blocks", b_num_blocks},
                                       {CKT_L_KERNEL, "block_order", b_block_order},
                                       {CKT_L_KERNEL, "let", b_let},
                                       {CKT_L_KERNEL, "var", b_var},
                                       {CKT_L_KERNEL, "assign", b_assign},
                                       {CKT_L_KERNEL, "loop", b_loop},
                                       {CKT_L_KERNEL, "when", b_when},
                                       {CKT_L_KERNEL, "producer", b_producer},
                                       {CKT_L_KERNEL, "sync", b_sync},
                                       {CKT_L_MODULE, "kernel", l_kernel_new},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    for (size_t i = 0; i < sizeof kernel_parts / sizeof *kernel_parts; i++) kernel_parts[i](L);
    ckt_l_help_add(L, "kernel",
                   "ckt.kernel{name=, block=, build=function(b) ... end} -> a kernel: build runs "
                   "once, on a builder b, and\n"
                   "records the kernel (name a C identifier, block its threads). In build: "
                   "parameters b:pointer(name, dtype\n"
                   "[, {const=, align=}]), b:size(name [, {value=, multiple_of=}]), b:scalar(name "
                   "[, {value=}]); ids\n"
                   "b:thread_id(), b:block_id([axis]), b:num_blocks([axis]); tensors and windows "
                   "(help('tensor'),\n"
                   "help('tile_window')); control b:loop(trip, function(i) end [, {unroll = "
                   "false}]), b:when(cond, fn),\n"
                   "b:sync(), b:let(value [, name]), b:var(init [, {lo=, hi=}]), b:assign(var, "
                   "value), b:require(cond, msg);\n"
                   "data b:copy(dst, src), b:blockwise_copy{src=, dst=, thread_layout=, "
                   "vector_dim=, scalar_per_vector=},\n"
                   "b:clear(reg, v), b:map(fn, regs...), b:reduce(reg, op), b:blockwise_gemm(a, b, "
                   "c, traits); expressions:\n"
                   "help('expr'). The kernel: k:source([target]), k:compile{target=, "
                   "compile_only=, cache=, options=} ->\n"
                   "an executable (help('executable')), k:compile_async{...}, k:signature(), "
                   "k:name(), k:block(),\n"
                   "k:lds_bytes(). docs/kernels.md has every builder method.");
}
