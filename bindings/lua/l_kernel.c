/* ckt Lua bindings — the kernel builder (DESIGN 3.6): ckt.kernel{name=, block=, build=fn} runs
 * fn(b) over a builder whose calls record the kernel IR (ckt/kernel_ir.h); ckt.tensor,
 * ckt.tile_window, ckt.local_tile and ckt.sweep work on the kernel being built. Expressions
 * (parameters, thread and block ids, loop counters, epilogue values) are userdata with
 * arithmetic metamethods; comparisons, min/max, select, exp... are ckt.lt, ckt.max, ... .
 * A built kernel shows its source per target (k:source), compiles (k:compile) to an
 * executable whose launch checks its arguments by parameter name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/embedded.h"
#include "ckt/emit.h"
#include "ckt/kernel_ir.h"
#include "l_internal.h"
#include "l_kbuild.h"

#define CKT_L_EXE "ckt.executable"
#define ACTIVE_KEY "ckt.kernel.active"
#define DEVICES_KEY "ckt.kernel.devices"

typedef struct l_exe {
    l_kernel *kb; /* user value 1: the kernel; 2: the ckt.binary */
    ckt_binary *bin;
    char target[32];
    int64_t dynamic_lds; /* LDS bytes each launch requests (above CUDA's static limit) */
} l_exe;

/* ---------------------------------------------------------------- helpers */

static l_kernel *checkkernel(lua_State *L, int idx) { return luaL_checkudata(L, idx, CKT_L_KERNEL); }


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
static void mark_line(lua_State *L, l_kernel *kb)
{
    if (kb->building) { /* the kernel being built sits in the registry: recharge its growth */
        lua_getfield(L, LUA_REGISTRYINDEX, ACTIVE_KEY);
        if (lua_touserdata(L, -1) == kb) charge(L, kb, -1);
        lua_pop(L, 1);
    }
    lua_Debug ar;
    int line = 0;
    for (int level = 1; level < 4 && !line; level++)
        if (lua_getstack(L, level, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0 && ar.what[0] != 'C') line = ar.currentline;
    ckt_kernel_set_line(kb->k, line);
}

static void require_building(lua_State *L, l_kernel *kb, const char *fn)
{
    if (!kb->building)
        ckt_l_errorf(L, "%s: kernel '%s' is %s (builder calls belong inside its build function)", fn, ckt_kernel_name(kb->k),
                     kb->built ? "already built" : "not being built");
    mark_line(L, kb);
}

/* The kernel whose build function is running. */
static l_kernel *active(lua_State *L, const char *fn)
{
    lua_getfield(L, LUA_REGISTRYINDEX, ACTIVE_KEY);
    l_kernel *kb = luaL_testudata(L, -1, CKT_L_KERNEL);
    lua_pop(L, 1); /* still anchored: the build function's caller holds it */
    if (!kb) ckt_l_errorf(L, "%s: only inside a kernel's build function (ckt.kernel{name=, block=, build=function(b) ... end})", fn);
    mark_line(L, kb);
    return kb;
}

static l_kobj *newobj(lua_State *L, l_kernel *kb, int kidx, const char *tname, int id)
{
    kidx = lua_absindex(L, kidx);
    l_kobj *o = lua_newuserdatauv(L, sizeof *o, 1);
    o->kb = kb;
    o->id = id;
    o->param = -1;
    o->dist = -1;
    o->part = 0;
    lua_pushvalue(L, kidx);
    lua_setiuservalue(L, -2, 1);
    luaL_setmetatable(L, tname);
    return o;
}

/* Push the kernel userdata an object belongs to. */
static void push_owner(lua_State *L, int idx) { lua_getiuservalue(L, idx, 1); }

static void push_expr(lua_State *L, l_kernel *kb, int kidx, ckt_expr_id id)
{
    ckt_error err;
    if (ckt_expr_pool_status(ckt_kernel_exprs(kb->k), &err)) ckt_l_error(L, &err);
    newobj(L, kb, kidx, CKT_L_EXPR, id);
}

static l_kobj *testexpr(lua_State *L, int idx) { return luaL_testudata(L, idx, CKT_L_EXPR); }

/* A Lua number or an expression of kernel kb as an expression id. */
static ckt_expr_id toexpr(lua_State *L, int idx, l_kernel *kb, const char *what)
{
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
    if (lua_isinteger(L, idx)) return ckt_expr_int(ex, (int64_t)lua_tointeger(L, idx));
    if (lua_type(L, idx) == LUA_TNUMBER) {
        double v = lua_tonumber(L, idx);
        if (isnan(v) || isinf(v) || fabs(v) > 3.0e38) {
            if (isnan(v)) return ckt_expr_float(ex, NAN);
            if (isinf(v)) return ckt_expr_float(ex, (float)v);
            ckt_l_errorf(L, "%s: %g does not fit f32", what, v);
        }
        return ckt_expr_float(ex, (float)v);
    }
    l_kobj *o = testexpr(L, idx);
    if (!o) ckt_l_errorf(L, "%s: expected a number or a kernel expression, got %s", what, luaL_typename(L, idx));
    if (o->kb != kb) ckt_l_errorf(L, "%s: the expression belongs to another kernel", what);
    if (o->param >= 0) ckt_l_errorf(L, "%s: pointer '%s' is not a value (make a tensor over it)", what, ckt_kernel_param(kb->k, o->param)->name);
    return o->id;
}

/* The kernel of the first expression among the arguments (-1 when none). */
static int find_kernel_arg(lua_State *L, int from, int to)
{
    for (int i = from; i <= to; i++)
        if (testexpr(L, i)) return i;
    return -1;
}

static void check_pool(lua_State *L, l_kernel *kb)
{
    ckt_error err;
    if (ckt_expr_pool_status(ckt_kernel_exprs(kb->k), &err)) ckt_l_error(L, &err);
}

/* ---------------------------------------------------------------- expressions */

static int expr_binop(lua_State *L, ckt_expr_op op, const char *name)
{
    int ki = find_kernel_arg(L, 1, 2);
    if (ki < 0) return ckt_l_errorf(L, "%s: no kernel expression among the operands", name);
    l_kobj *o = testexpr(L, ki);
    ckt_expr_id a = toexpr(L, 1, o->kb, name), b = toexpr(L, 2, o->kb, name);
    ckt_expr_id r = ckt_expr_binary(ckt_kernel_exprs(o->kb->k), op, a, b);
    push_owner(L, ki);
    push_expr(L, o->kb, -1, r);
    return 1;
}

static int e_add(lua_State *L) { return expr_binop(L, CKT_E_ADD, "+"); }
static int e_sub(lua_State *L) { return expr_binop(L, CKT_E_SUB, "-"); }
static int e_mul(lua_State *L) { return expr_binop(L, CKT_E_MUL, "*"); }
static int e_div(lua_State *L) { return expr_binop(L, CKT_E_DIV, "/"); }
static int e_mod(lua_State *L) { return expr_binop(L, CKT_E_MOD, "%"); }
static int e_band(lua_State *L) { return expr_binop(L, CKT_E_AND, "&"); }
static int e_bor(lua_State *L) { return expr_binop(L, CKT_E_OR, "|"); }
static int e_bxor(lua_State *L) { return expr_binop(L, CKT_E_XOR, "~"); }
static int e_shl(lua_State *L) { return expr_binop(L, CKT_E_SHL, "<<"); }
static int e_shr(lua_State *L) { return expr_binop(L, CKT_E_SHR, ">>"); }

static int e_unm(lua_State *L)
{
    l_kobj *o = luaL_checkudata(L, 1, CKT_L_EXPR);
    ckt_expr_id a = toexpr(L, 1, o->kb, "unary -");
    push_owner(L, 1);
    push_expr(L, o->kb, -1, ckt_expr_unary(ckt_kernel_exprs(o->kb->k), CKT_E_NEG, a));
    return 1;
}

static int e_compare(lua_State *L)
{
    return ckt_l_errorf(L, "comparing kernel expressions with < or <= has no Lua meaning: use ckt.lt(a, b), ckt.le, ckt.gt, ckt.ge, ckt.eq, ckt.ne");
}

static int e_tostring(lua_State *L)
{
    l_kobj *o = luaL_checkudata(L, 1, CKT_L_EXPR);
    if (o->param >= 0) {
        const ckt_kparam *p = ckt_kernel_param(o->kb->k, o->param);
        lua_pushfstring(L, "ckt.expr(pointer %s: %s)", p->name, ckt_dtype_name(p->dtype));
        return 1;
    }
    char buf[512];
    ckt_expr_print(ckt_kernel_exprs(o->kb->k), o->id, buf, sizeof buf, NULL);
    lua_pushfstring(L, "ckt.expr(%s)", buf);
    return 1;
}

/* e:value() -> the integer when the expression folded to a constant, else nil */
static int e_value(lua_State *L)
{
    l_kobj *o = luaL_checkudata(L, 1, CKT_L_EXPR);
    int64_t v;
    if (o->param < 0 && ckt_expr_is_const(ckt_kernel_exprs(o->kb->k), o->id, &v)) lua_pushinteger(L, (lua_Integer)v);
    else lua_pushnil(L);
    return 1;
}

/* ckt.min/max/lt/... on plain numbers compute in Lua; with an expression among the operands
 * they build an expression. */
static int math_binary(lua_State *L, ckt_expr_op op, const char *name)
{
    luaL_checkany(L, 1);
    luaL_checkany(L, 2);
    if (find_kernel_arg(L, 1, 2) < 0) {
        if (lua_type(L, 1) != LUA_TNUMBER || lua_type(L, 2) != LUA_TNUMBER)
            return ckt_l_errorf(L, "ckt.%s: expected numbers or kernel expressions, got %s and %s", name, luaL_typename(L, 1), luaL_typename(L, 2));
        int cmp = op >= CKT_E_LT && op <= CKT_E_NE;
        if (lua_isinteger(L, 1) && lua_isinteger(L, 2) && !cmp) {
            lua_Integer a = lua_tointeger(L, 1), b = lua_tointeger(L, 2);
            lua_pushinteger(L, op == CKT_E_MIN ? (a < b ? a : b) : (a > b ? a : b));
            return 1;
        }
        lua_Number a = lua_tonumber(L, 1), b = lua_tonumber(L, 2);
        switch (op) {
        case CKT_E_MIN: lua_pushnumber(L, fmin(a, b)); break;
        case CKT_E_MAX: lua_pushnumber(L, fmax(a, b)); break;
        case CKT_E_LT: lua_pushboolean(L, a < b); break;
        case CKT_E_LE: lua_pushboolean(L, a <= b); break;
        case CKT_E_EQ: lua_pushboolean(L, a == b); break;
        default: lua_pushboolean(L, a != b); break;
        }
        return 1;
    }
    return expr_binop(L, op, name);
}

static int m_min(lua_State *L) { return math_binary(L, CKT_E_MIN, "min"); }
static int m_max(lua_State *L) { return math_binary(L, CKT_E_MAX, "max"); }
static int m_lt(lua_State *L) { return math_binary(L, CKT_E_LT, "lt"); }
static int m_le(lua_State *L) { return math_binary(L, CKT_E_LE, "le"); }
static int m_eq(lua_State *L) { return math_binary(L, CKT_E_EQ, "eq"); }
static int m_ne(lua_State *L) { return math_binary(L, CKT_E_NE, "ne"); }
static int m_gt(lua_State *L) { lua_rotate(L, 1, 1); return math_binary(L, CKT_E_LT, "gt"); }
static int m_ge(lua_State *L) { lua_rotate(L, 1, 1); return math_binary(L, CKT_E_LE, "ge"); }
static int m_and(lua_State *L) { return expr_binop(L, CKT_E_LAND, "land"); }
static int m_or(lua_State *L) { return expr_binop(L, CKT_E_LOR, "lor"); }

static int math_unary(lua_State *L, ckt_expr_op op, const char *name, double (*f)(double))
{
    luaL_checkany(L, 1);
    l_kobj *o = testexpr(L, 1);
    if (!o) {
        if (lua_type(L, 1) != LUA_TNUMBER) return ckt_l_errorf(L, "ckt.%s: expected a number or a kernel expression, got %s", name, luaL_typename(L, 1));
        if (!f) return ckt_l_errorf(L, "ckt.%s: expected a kernel expression", name);
        lua_pushnumber(L, f(lua_tonumber(L, 1)));
        return 1;
    }
    ckt_expr_id a = toexpr(L, 1, o->kb, name);
    push_owner(L, 1);
    push_expr(L, o->kb, -1, ckt_expr_unary(ckt_kernel_exprs(o->kb->k), op, a));
    return 1;
}

static int m_exp(lua_State *L) { return math_unary(L, CKT_E_EXP, "exp", exp); }
static int m_log(lua_State *L) { return math_unary(L, CKT_E_LOG, "log", log); }
static int m_sqrt(lua_State *L) { return math_unary(L, CKT_E_SQRT, "sqrt", sqrt); }
static int m_abs(lua_State *L) { return math_unary(L, CKT_E_ABS, "abs", fabs); }
static int m_not(lua_State *L) { return math_unary(L, CKT_E_NOT, "lnot", NULL); }
static int m_float(lua_State *L) { return math_unary(L, CKT_E_TOFLOAT, "float", NULL); }
static int m_int(lua_State *L) { return math_unary(L, CKT_E_TOINT, "int", NULL); }

/* ckt.select(cond, a, b) */
static int m_select(lua_State *L)
{
    int ki = find_kernel_arg(L, 1, 3);
    if (ki < 0) {
        luaL_checkany(L, 3);
        lua_pushvalue(L, lua_toboolean(L, 1) ? 2 : 3);
        return 1;
    }
    l_kobj *o = testexpr(L, ki);
    ckt_expr_id c = toexpr(L, 1, o->kb, "select: condition"), a = toexpr(L, 2, o->kb, "select: value if true"),
                b = toexpr(L, 3, o->kb, "select: value if false");
    push_owner(L, ki);
    push_expr(L, o->kb, -1, ckt_expr_select(ckt_kernel_exprs(o->kb->k), c, a, b));
    return 1;
}

/* ckt.cast(x, dtype): round an f32 value through f16 / bf16 (RNE), or to an integer type */
static int m_cast(lua_State *L)
{
    l_kobj *o = testexpr(L, 1);
    if (!o) return ckt_l_errorf(L, "ckt.cast: argument 1 must be a kernel expression, got %s", luaL_typename(L, 1));
    ckt_dtype t = ckt_l_checkdtype(L, 2, "ckt.cast: argument 2");
    ckt_expr_id a = toexpr(L, 1, o->kb, "cast");
    ckt_expr_pool *ex = ckt_kernel_exprs(o->kb->k);
    ckt_expr_id r;
    if (t == CKT_F16 || t == CKT_BF16) r = ckt_expr_round(ex, a, (int)t);
    else if (t == CKT_F32) r = ckt_expr_unary(ex, CKT_E_TOFLOAT, a);
    else if (t == CKT_I32 || t == CKT_I8 || t == CKT_U8 || t == CKT_I64) r = ckt_expr_unary(ex, CKT_E_TOINT, a);
    else return ckt_l_errorf(L, "ckt.cast: cannot cast to %s", ckt_dtype_name(t));
    push_owner(L, 1);
    push_expr(L, o->kb, -1, r);
    return 1;
}

/* ---------------------------------------------------------------- kernel and builder */

static int k_gc(lua_State *L)
{
    l_kernel *kb = luaL_checkudata(L, 1, CKT_L_KERNEL);
    ckt_kernel_destroy(kb->k);
    kb->k = NULL;
    return 0;
}

/* ckt.kernel{name=, block=, build=function(b) ... end} -> kernel */
static int l_kernel_new(lua_State *L)
{
    static const char *const fn = "kernel";
    static const char *const allowed[] = {"name", "block", "build", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    ckt_l_check_fields(L, 1, fn, allowed);
    const char *name;
    int64_t block;
    if (!ckt_l_field_string(L, 1, fn, "name", &name)) return ckt_l_errorf(L, "kernel: field 'name' (a C identifier) is required");
    if (!ckt_l_field_int(L, 1, fn, "block", &block)) return ckt_l_errorf(L, "kernel: field 'block' (threads per block) is required");
    if (lua_getfield(L, 1, "build") != LUA_TFUNCTION) return ckt_l_errorf(L, "kernel: field 'build' must be a function(b), got %s", luaL_typename(L, -1));
    int fi = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, ACTIVE_KEY);
    if (!lua_isnil(L, -1)) return ckt_l_errorf(L, "kernel: cannot build kernel '%s' inside another kernel's build function", name);
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
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "thread_id");
    push_expr(L, kb, 1, ckt_expr_tid(ckt_kernel_exprs(kb->k)));
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
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "block_id");
    push_expr(L, kb, 1, ckt_expr_bid(ckt_kernel_exprs(kb->k), check_axis(L, 2, "block_id")));
    return 1;
}

static int b_num_blocks(lua_State *L)
{
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "num_blocks");
    push_expr(L, kb, 1, ckt_expr_nblocks(ckt_kernel_exprs(kb->k), check_axis(L, 2, "num_blocks")));
    return 1;
}

/* b:pointer(name, dtype [, {const=, align=}]) */
static int b_pointer(lua_State *L)
{
    static const char *const allowed[] = {"const", "align", NULL};
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "pointer");
    const char *name = luaL_checkstring(L, 2);
    ckt_dtype t = ckt_l_checkdtype(L, 3, "pointer: argument 2 (dtype)");
    int is_const = 0;
    int64_t align = 16;
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        ckt_l_check_fields(L, 4, "pointer", allowed);
        ckt_l_field_bool(L, 4, "pointer", "const", &is_const);
        ckt_l_field_int(L, 4, "pointer", "align", &align);
    }
    int idx;
    ckt_error err;
    if (ckt_kernel_param_ptr(kb->k, name, t, is_const, align, &idx, &err)) return ckt_l_error(L, &err);
    l_kobj *o = newobj(L, kb, 1, CKT_L_EXPR, CKT_EXPR_NONE);
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
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, fn);
    const char *name = luaL_checkstring(L, 2);
    ckt_param_kind kind = is_float ? CKT_PARAM_F32 : CKT_PARAM_I32;
    int specialized = 0;
    int64_t iv = 0, divisor = 1;
    double fv = 0;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        ckt_l_check_fields(L, 3, fn, allowed);
        const char *ty;
        if (ckt_l_field_string(L, 3, fn, "type", &ty)) kind = scalar_kind(L, ty, fn);
        if (is_float != (kind == CKT_PARAM_F32)) return ckt_l_errorf(L, "%s: type must be %s", fn, is_float ? "f32" : "i32 or i64");
        if (lua_getfield(L, 3, "value") != LUA_TNIL) {
            specialized = 1;
            if (is_float) {
                if (lua_type(L, -1) != LUA_TNUMBER) return ckt_l_errorf(L, "%s: field 'value' must be a number, got %s", fn, luaL_typename(L, -1));
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
    if (ckt_kernel_param_scalar(kb->k, name, kind, specialized, iv, fv, divisor, &idx, &err)) return ckt_l_error(L, &err);
    push_expr(L, kb, 1, ckt_kernel_param(kb->k, idx)->expr);
    return 1;
}

static int b_size(lua_State *L) { return scalar_param(L, 0); }
static int b_scalar(lua_State *L) { return scalar_param(L, 1); }

/* b:loop(trip, function(i) ... end): a loop with a block-uniform trip count */
static int b_loop(lua_State *L)
{
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "loop");
    ckt_expr_id trip = toexpr(L, 2, kb, "loop: trip count");
    luaL_checktype(L, 3, LUA_TFUNCTION);
    ckt_expr_id var;
    ckt_error err;
    if (ckt_kernel_loop(kb->k, trip, &var, &err)) return ckt_l_error(L, &err);
    lua_pushvalue(L, 3);
    push_expr(L, kb, 1, var);
    lua_call(L, 1, 0);
    mark_line(L, kb);
    if (ckt_kernel_end(kb->k, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:when(cond, function() ... end): a branch (block-uniform or per thread) */
static int b_when(lua_State *L)
{
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "when");
    ckt_expr_id c = toexpr(L, 2, kb, "when: condition");
    luaL_checktype(L, 3, LUA_TFUNCTION);
    ckt_error err;
    if (ckt_kernel_if(kb->k, c, &err)) return ckt_l_error(L, &err);
    lua_pushvalue(L, 3);
    lua_call(L, 0, 0);
    if (ckt_kernel_end(kb->k, &err)) return ckt_l_error(L, &err);
    return 0;
}

static int b_sync(lua_State *L)
{
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "sync");
    ckt_error err;
    if (ckt_kernel_sync(kb->k, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:block_order{tiles={m, n}, order="row"|"col"|"grouped", group=} -> tile coordinates of this
 * block (block id x over m*n tiles). "grouped" walks `group` tile rows at a time down a column
 * of groups (the L2-friendly order of CK's / Triton's grouped GEMM schedules). */
static int b_block_order(lua_State *L)
{
    static const char *const fn = "block_order";
    static const char *const allowed[] = {"tiles", "order", "group", NULL};
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    ckt_l_check_fields(L, 2, fn, allowed);
    if (lua_getfield(L, 2, "tiles") != LUA_TTABLE || luaL_len(L, -1) != 2) return ckt_l_errorf(L, "block_order: field 'tiles' must be {m_tiles, n_tiles}");
    lua_geti(L, -1, 1);
    lua_geti(L, -2, 2);
    ckt_expr_id m = toexpr(L, -2, kb, "block_order: tiles[1]"), n = toexpr(L, -1, kb, "block_order: tiles[2]");
    lua_pop(L, 3);
    const char *order = "row";
    int64_t group = 8;
    ckt_l_field_string(L, 2, fn, "order", &order);
    ckt_l_field_int(L, 2, fn, "group", &group);
    if (group < 1) return ckt_l_errorf(L, "block_order: group must be >= 1, got %lld", (long long)group);
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
    ckt_expr_id pid = ckt_expr_bid(ex, 0), tm, tn;
    if (!strcmp(order, "row")) {
        tm = ckt_expr_binary(ex, CKT_E_DIV, pid, n);
        tn = ckt_expr_binary(ex, CKT_E_MOD, pid, n);
    } else if (!strcmp(order, "col")) {
        tm = ckt_expr_binary(ex, CKT_E_MOD, pid, m);
        tn = ckt_expr_binary(ex, CKT_E_DIV, pid, m);
    } else if (!strcmp(order, "grouped")) {
        ckt_expr_id per_group = ckt_expr_mulc(ex, n, group);
        ckt_expr_id first = ckt_expr_mulc(ex, ckt_expr_binary(ex, CKT_E_DIV, pid, per_group), group);
        ckt_expr_id rows = ckt_expr_binary(ex, CKT_E_MIN, ckt_expr_binary(ex, CKT_E_SUB, m, first), ckt_expr_int(ex, group));
        ckt_expr_id in_group = ckt_expr_binary(ex, CKT_E_MOD, pid, per_group);
        tm = ckt_expr_add(ex, first, ckt_expr_binary(ex, CKT_E_MOD, in_group, rows));
        tn = ckt_expr_binary(ex, CKT_E_DIV, in_group, rows);
    } else {
        return ckt_l_errorf(L, "block_order: order '%s' is not row, col or grouped", order);
    }
    check_pool(L, kb);
    push_expr(L, kb, 1, tm);
    push_expr(L, kb, 1, tn);
    return 2;
}

/* ---------------------------------------------------------------- distributions */

static int int_list_field(lua_State *L, int t, const char *fn, const char *field, int64_t *v, int cap)
{
    if (lua_getfield(L, t, field) == LUA_TNIL) { lua_pop(L, 1); return -1; }
    char what[80];
    snprintf(what, sizeof what, "%s: field '%s'", fn, field);
    if (!lua_istable(L, -1)) ckt_l_errorf(L, "%s must be a list of integers", what);
    int n = ckt_l_int_list(L, -1, what, v, cap);
    lua_pop(L, 1);
    return n;
}

/* A CK-wrapper thread layout table {thread_layout=, vector_dim=, scalar_per_vector=, access_order=}. */
static int is_thread_layout_spec(lua_State *L, int idx)
{
    if (!lua_istable(L, idx)) return 0;
    int t = lua_getfield(L, idx, "thread_layout");
    lua_pop(L, 1);
    return t != LUA_TNIL;
}

static void dist_from_thread_layout(lua_State *L, int idx, const char *fn, int rank, const int64_t *lengths, ckt_dist *d, int vector_dim,
                                    int64_t spv)
{
    idx = lua_absindex(L, idx);
    ckt_layout tl;
    lua_getfield(L, idx, "thread_layout");
    ckt_l_tolayout(L, -1, "thread_layout", &tl);
    lua_pop(L, 1);
    int64_t vd = vector_dim < 0 ? rank - 1 : vector_dim, order64[CKT_K_MAX_RANK];
    ckt_l_field_int(L, idx, fn, "vector_dim", &vd);
    ckt_l_field_int(L, idx, fn, "scalar_per_vector", &spv);
    int no = int_list_field(L, idx, fn, "access_order", order64, CKT_K_MAX_RANK);
    if (no >= 0 && no != rank) ckt_l_errorf(L, "%s: access_order lists %d dims for a rank-%d tile", fn, no, rank);
    if (vd < 0 || vd >= rank) ckt_l_errorf(L, "%s: vector_dim %lld outside 0..%d", fn, (long long)vd, rank - 1);
    int order[CKT_K_MAX_RANK];
    for (int i = 0; i < rank && no >= 0; i++) order[i] = order64[i] < 0 || order64[i] >= rank ? -1 : (int)order64[i];
    ckt_error err;
    if (ckt_dist_from_thread_layout(&tl, rank, lengths, (int)vd, spv, no >= 0 ? order : NULL, d, &err)) ckt_l_error(L, &err);
}

/* The default thread arrangement of a copy: vectors of up to 16 bytes along the last dim,
 * threads row-major (the last dim fastest) over as much of the block as the tile divides. */
static void default_dist(lua_State *L, l_kernel *kb, int rank, const int64_t *lengths, ckt_dtype dtype, ckt_dist *d)
{
    int64_t esz = (int64_t)ckt_dtype_size(dtype), spv = 16 / esz;
    while (spv > 1 && lengths[rank - 1] % spv) spv /= 2;
    int64_t remaining = ckt_kernel_block(kb->k), T[CKT_K_MAX_RANK];
    for (int r = rank - 1; r >= 0; r--) {
        int64_t avail = lengths[r] / (r == rank - 1 ? spv : 1);
        T[r] = ckt_gcd(avail, remaining);
        remaining /= T[r];
    }
    ckt_layout tl;
    ckt_error err;
    int64_t stride = 1, S[CKT_K_MAX_RANK];
    for (int r = rank - 1; r >= 0; r--) {
        S[r] = stride;
        stride *= T[r];
    }
    ckt_tuple tshape, tstride;
    if (ckt_tuple_flat(&tshape, rank, T, &err) || ckt_tuple_flat(&tstride, rank, S, &err) || ckt_layout_make(&tl, &tshape, &tstride, &err) ||
        ckt_dist_from_thread_layout(&tl, rank, lengths, rank - 1, spv, NULL, d, &err)) ckt_l_error(L, &err);
}

/* Any distribution-like Lua value over a tile of `lengths` into a kernel distribution index. */
static int todist(lua_State *L, int idx, l_kernel *kb, const char *fn, int rank, const int64_t *lengths)
{
    ckt_dist d;
    ckt_error err;
    if (is_thread_layout_spec(L, idx)) {
        dist_from_thread_layout(L, idx, fn, rank, lengths, &d, -1, 1);
    } else {
        ckt_layout tv;
        ckt_l_to_tv(L, idx, fn, &tv);
        if (ckt_dist_from_tv(&tv, rank, lengths, &d, &err)) return ckt_l_error(L, &err);
    }
    int di;
    if (ckt_kernel_add_dist(kb->k, &d, &di, &err)) return ckt_l_error(L, &err);
    return di;
}

/* ---------------------------------------------------------------- tensors */

static l_kobj *checktensor(lua_State *L, int idx, const char *what)
{
    l_kobj *t = luaL_testudata(L, idx, CKT_L_KTENSOR);
    if (!t) ckt_l_errorf(L, "%s: expected a tensor (ckt.tensor), got %s", what, luaL_typename(L, idx));
    return t;
}

static const ckt_ktensor *ktensor(const l_kobj *t) { return ckt_kernel_tensor(t->kb->k, t->id); }

/* {shape=, stride=} entries, or a static layout, into expression lists; returns the rank. */
static int global_geometry(lua_State *L, int idx, l_kernel *kb, ckt_expr_id *shape, ckt_expr_id *stride)
{
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
    ckt_layout *l = ckt_l_testlayout(L, idx);
    if (l || lua_type(L, idx) == LUA_TSTRING || lua_isinteger(L, idx)) {
        ckt_layout lay;
        ckt_l_tolayout(L, idx, "tensor: layout", &lay);
        int rank = ckt_layout_rank(&lay);
        if (rank > CKT_K_MAX_RANK) ckt_l_errorf(L, "tensor: rank %d above %d", rank, CKT_K_MAX_RANK);
        for (int d = 0; d < rank; d++) {
            ckt_layout m;
            ckt_error err;
            if (ckt_layout_mode(&lay, d, &m, &err)) ckt_l_error(L, &err);
            if (!ckt_tuple_is_int(&m.shape)) ckt_l_errorf(L, "tensor: mode %d of a global layout must be flat (one extent and one stride)", d);
            shape[d] = ckt_expr_int(ex, m.shape.value[0]);
            stride[d] = ckt_expr_int(ex, m.stride.value[0]);
        }
        return rank;
    }
    if (!lua_istable(L, idx)) ckt_l_errorf(L, "tensor: a global layout is a ckt.layout or {shape={...}, stride={...}}, got %s", luaL_typename(L, idx));
    static const char *const allowed[] = {"shape", "stride", NULL};
    ckt_l_check_fields(L, idx, "tensor: layout", allowed);
    if (lua_getfield(L, idx, "shape") != LUA_TTABLE) ckt_l_errorf(L, "tensor: layout field 'shape' must be a list of sizes");
    int rank = (int)luaL_len(L, -1);
    if (rank < 1 || rank > CKT_K_MAX_RANK) ckt_l_errorf(L, "tensor: rank %d outside 1..%d", rank, CKT_K_MAX_RANK);
    for (int d = 0; d < rank; d++) {
        lua_geti(L, -1, d + 1);
        char what[48];
        snprintf(what, sizeof what, "tensor: shape[%d]", d + 1);
        shape[d] = toexpr(L, -1, kb, what);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    int t = lua_getfield(L, idx, "stride");
    if (t == LUA_TNIL) { /* compact, row-major: the last dim contiguous */
        ckt_expr_id s = ckt_expr_int(ex, 1);
        for (int d = rank - 1; d >= 0; d--) {
            stride[d] = s;
            s = ckt_expr_mul(ex, s, shape[d]);
        }
    } else {
        if (t != LUA_TTABLE || luaL_len(L, -1) != rank) ckt_l_errorf(L, "tensor: layout field 'stride' must list %d strides", rank);
        for (int d = 0; d < rank; d++) {
            lua_geti(L, -1, d + 1);
            char what[48];
            snprintf(what, sizeof what, "tensor: stride[%d]", d + 1);
            stride[d] = toexpr(L, -1, kb, what);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    check_pool(L, kb);
    return rank;
}

/* ckt.tensor(memory, dtype, layout [, opts])
 *   global: memory = a pointer parameter (or "global" with opts.ptr); layout = ckt.layout or
 *           {shape=, stride=} of integers / size expressions; opts.pad = masks accesses past the shape
 *   lds:    layout = ckt.layout, a swizzled composed layout, or a layout with opts.swizzle
 *   register: layout = a distribution (CK encoding, fragment, nested layout, TV layout) with
 *           opts.lengths (the tile), or an integer n (n values per thread, no distribution) */
static int l_tensor(lua_State *L)
{
    static const char *const allowed[] = {"ptr", "pad", "swizzle", "lengths", NULL};
    l_kernel *kb;
    int pi = -1;
    l_kobj *p = testexpr(L, 1);
    ckt_memory mem;
    ckt_error err;
    if (p) {
        if (p->param < 0) return ckt_l_errorf(L, "tensor: argument 1 must be a memory (\"global\", \"lds\", \"register\") or a pointer parameter, got an expression");
        kb = p->kb;
        require_building(L, kb, "tensor");
        mem = CKT_MEM_GLOBAL;
        pi = p->param;
    } else {
        if (lua_type(L, 1) != LUA_TSTRING) return ckt_l_errorf(L, "tensor: argument 1 must be \"global\", \"lds\", \"register\" or a pointer parameter, got %s", luaL_typename(L, 1));
        kb = active(L, "tensor");
        if (ckt_memory_parse(lua_tostring(L, 1), &mem, &err)) return ckt_l_error(L, &err);
    }
    ckt_dtype dt = ckt_l_checkdtype(L, 2, "tensor: argument 2 (dtype)");
    luaL_checkany(L, 3);
    int has_opts = !lua_isnoneornil(L, 4);
    if (has_opts) {
        luaL_checktype(L, 4, LUA_TTABLE);
        ckt_l_check_fields(L, 4, "tensor", allowed);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, ACTIVE_KEY); /* the kernel userdata (building, so active) */
    int ki = lua_gettop(L);
    int idx;
    if (mem == CKT_MEM_GLOBAL) {
        if (pi < 0) {
            if (!has_opts || lua_getfield(L, 4, "ptr") == LUA_TNIL) return ckt_l_errorf(L, "tensor: a global tensor needs its pointer (pass the pointer parameter as argument 1, or opts.ptr)");
            l_kobj *q = testexpr(L, -1);
            if (!q || q->param < 0 || q->kb != kb) return ckt_l_errorf(L, "tensor: opts.ptr must be a pointer parameter of this kernel (b:pointer)");
            pi = q->param;
            lua_pop(L, 1);
        }
        int pad = 0;
        if (has_opts) ckt_l_field_bool(L, 4, "tensor", "pad", &pad);
        ckt_expr_id shape[CKT_K_MAX_RANK], stride[CKT_K_MAX_RANK];
        int rank = global_geometry(L, 3, kb, shape, stride);
        if (ckt_kernel_global(kb->k, pi, dt, rank, shape, stride, pad, &idx, &err)) return ckt_l_error(L, &err);
    } else if (mem == CKT_MEM_LDS) {
        ckt_layout lay;
        ckt_swizzle sw = {0, 0, 0};
        ckt_composed *c = luaL_testudata(L, 3, CKT_L_COMPOSED);
        if (c) {
            if (c->offset) return ckt_l_errorf(L, "tensor: an LDS layout composed with an offset (%lld) is not supported", (long long)c->offset);
            lay = c->inner;
            sw = c->sw;
        } else {
            ckt_l_tolayout(L, 3, "tensor: LDS layout", &lay);
        }
        if (has_opts && lua_getfield(L, 4, "swizzle") != LUA_TNIL) {
            ckt_swizzle *s = luaL_testudata(L, -1, CKT_L_SWIZZLE);
            if (!s) return ckt_l_errorf(L, "tensor: opts.swizzle must be a ckt.swizzle, got %s", luaL_typename(L, -1));
            if (c) return ckt_l_errorf(L, "tensor: the layout is already swizzled");
            sw = *s;
        }
        if (ckt_kernel_lds(kb->k, dt, &lay, &sw, &idx, &err)) return ckt_l_error(L, &err);
    } else {
        if (lua_isinteger(L, 3)) {
            if (ckt_kernel_registers(kb->k, dt, -1, (int64_t)lua_tointeger(L, 3), &idx, &err)) return ckt_l_error(L, &err);
        } else {
            int64_t lengths[CKT_K_MAX_RANK];
            int rank = has_opts ? int_list_field(L, 4, "tensor", "lengths", lengths, CKT_K_MAX_RANK) : -1;
            if (rank < 1) return ckt_l_errorf(L, "tensor: a register tensor over a distribution needs opts.lengths (the tile it covers)");
            int di = todist(L, 3, kb, "tensor", rank, lengths);
            if (ckt_kernel_registers(kb->k, dt, di, 0, &idx, &err)) return ckt_l_error(L, &err);
        }
    }
    newobj(L, kb, ki, CKT_L_KTENSOR, idx);
    return 1;
}

static int t_tostring(lua_State *L)
{
    l_kobj *o = luaL_checkudata(L, 1, CKT_L_KTENSOR);
    const ckt_ktensor *t = ktensor(o);
    lua_pushfstring(L, "ckt.tensor(%s %s %s, rank %d)", ckt_memory_name(t->mem), ckt_dtype_name(t->dtype), t->name, t->rank);
    return 1;
}

static int t_dtype(lua_State *L) { lua_pushstring(L, ckt_dtype_name(ktensor(luaL_checkudata(L, 1, CKT_L_KTENSOR))->dtype)); return 1; }
static int t_memory(lua_State *L) { lua_pushstring(L, ckt_memory_name(ktensor(luaL_checkudata(L, 1, CKT_L_KTENSOR))->mem)); return 1; }
static int t_nvalues(lua_State *L)
{
    const ckt_ktensor *t = ktensor(luaL_checkudata(L, 1, CKT_L_KTENSOR));
    if (t->mem != CKT_MEM_REG) return ckt_l_errorf(L, "nvalues: only register tensors have values per thread");
    lua_pushinteger(L, (lua_Integer)t->nvalues);
    return 1;
}

static l_kobj *checkreg(lua_State *L, int idx, l_kernel *kb, const char *what)
{
    l_kobj *t = checktensor(L, idx, what);
    if (t->kb != kb) ckt_l_errorf(L, "%s: the tensor belongs to another kernel", what);
    if (ktensor(t)->mem != CKT_MEM_REG) ckt_l_errorf(L, "%s: expected a register tensor, got a %s tensor", what, ckt_memory_name(ktensor(t)->mem));
    return t;
}

/* ---------------------------------------------------------------- windows */

static l_kobj *checkwindow(lua_State *L, int idx, const char *what)
{
    l_kobj *w = luaL_testudata(L, idx, CKT_L_WINDOW);
    if (!w) ckt_l_errorf(L, "%s: expected a tile window, got %s", what, luaL_typename(L, idx));
    require_building(L, w->kb, what);
    return w;
}

static int expr_list(lua_State *L, int idx, l_kernel *kb, const char *what, ckt_expr_id *out, int cap)
{
    if (!lua_istable(L, idx)) ckt_l_errorf(L, "%s: expected a list, got %s", what, luaL_typename(L, idx));
    int n = (int)luaL_len(L, idx);
    if (n < 1 || n > cap) ckt_l_errorf(L, "%s: %d entries (1..%d allowed)", what, n, cap);
    for (int i = 0; i < n; i++) {
        lua_geti(L, idx, i + 1);
        char w[96];
        snprintf(w, sizeof w, "%s[%d]", what, i + 1);
        out[i] = toexpr(L, -1, kb, w);
        lua_pop(L, 1);
    }
    return n;
}

static int make_window(lua_State *L, l_kobj *t, int tidx, const int64_t *lengths, int n, const ckt_expr_id *origin, int dist_idx)
{
    int wi;
    ckt_error err;
    if (n != ktensor(t)->rank) return ckt_l_errorf(L, "tile_window: %d window lengths for a rank-%d tensor", n, ktensor(t)->rank);
    if (ckt_kernel_window_make(t->kb->k, t->id, n, lengths, origin, &wi, &err)) return ckt_l_error(L, &err);
    push_owner(L, tidx);
    l_kobj *w = newobj(L, t->kb, -1, CKT_L_WINDOW, wi);
    lua_remove(L, -2);
    if (dist_idx) w->dist = todist(L, dist_idx, t->kb, "tile_window: distribution", n, lengths);
    return 1;
}

/* ckt.tile_window(tensor, window_lengths, origin [, distribution]) */
static int l_tile_window(lua_State *L)
{
    l_kobj *t = checktensor(L, 1, "tile_window: argument 1");
    require_building(L, t->kb, "tile_window");
    int64_t lengths[CKT_K_MAX_RANK];
    luaL_checktype(L, 2, LUA_TTABLE);
    int n = ckt_l_int_list(L, 2, "tile_window: window_lengths", lengths, CKT_K_MAX_RANK);
    ckt_expr_id origin[CKT_K_MAX_RANK];
    int no = expr_list(L, 3, t->kb, "tile_window: origin", origin, CKT_K_MAX_RANK);
    if (no != n) return ckt_l_errorf(L, "tile_window: %d window lengths but %d origin coordinates", n, no);
    check_pool(L, t->kb);
    return make_window(L, t, 1, lengths, n, origin, lua_isnoneornil(L, 4) ? 0 : 4);
}

/* ckt.local_tile(tensor, tile_shape, coords [, distribution]): the window of tile `coords` */
static int l_local_tile(lua_State *L)
{
    if (!luaL_testudata(L, 1, CKT_L_KTENSOR)) { /* a layout: CuTe's local_tile of the layout algebra */
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_insert(L, 1);
        lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
        return lua_gettop(L);
    }
    l_kobj *t = checktensor(L, 1, "local_tile: argument 1");
    require_building(L, t->kb, "local_tile");
    int64_t lengths[CKT_K_MAX_RANK];
    luaL_checktype(L, 2, LUA_TTABLE);
    int n = ckt_l_int_list(L, 2, "local_tile: tile_shape", lengths, CKT_K_MAX_RANK);
    ckt_expr_id c[CKT_K_MAX_RANK];
    int nc = expr_list(L, 3, t->kb, "local_tile: coords", c, CKT_K_MAX_RANK);
    if (nc != n) return ckt_l_errorf(L, "local_tile: tile_shape has %d dims but coords has %d", n, nc);
    for (int d = 0; d < n; d++) c[d] = ckt_expr_mulc(ckt_kernel_exprs(t->kb->k), c[d], lengths[d]);
    check_pool(L, t->kb);
    return make_window(L, t, 1, lengths, n, c, lua_isnoneornil(L, 4) ? 0 : 4);
}

static const ckt_kwindow *kwindow(const l_kobj *w) { return ckt_kernel_window(w->kb->k, w->id); }

/* w:move(steps) */
static int w_move(lua_State *L)
{
    l_kobj *w = checkwindow(L, 1, "move");
    ckt_expr_id step[CKT_K_MAX_RANK];
    int n = expr_list(L, 2, w->kb, "move: steps", step, CKT_K_MAX_RANK);
    if (n != kwindow(w)->rank) return ckt_l_errorf(L, "move: %d steps for a rank-%d window", n, kwindow(w)->rank);
    check_pool(L, w->kb);
    ckt_error err;
    if (ckt_kernel_move(w->kb->k, w->id, step, &err)) return ckt_l_error(L, &err);
    return 0;
}

typedef struct access_opts {
    int dist;
    int64_t vector_dim, spv;
    float fill;
} access_opts;

/* {dist=, vector_dim=, scalar_per_vector=, fill=} of load / store / copy */
static access_opts read_access(lua_State *L, int idx, l_kobj *w, const char *fn, int allow_dist)
{
    static const char *const allowed[] = {"dist", "vector_dim", "scalar_per_vector", "fill", NULL};
    const ckt_kwindow *kw = kwindow(w);
    access_opts o = {w->dist, -1, 0, 0.0f};
    if (lua_isnoneornil(L, idx)) return o;
    luaL_checktype(L, idx, LUA_TTABLE);
    ckt_l_check_fields(L, idx, fn, allowed);
    ckt_l_field_int(L, idx, fn, "vector_dim", &o.vector_dim);
    ckt_l_field_int(L, idx, fn, "scalar_per_vector", &o.spv);
    if (o.vector_dim < -1 || o.vector_dim >= kw->rank) ckt_l_errorf(L, "%s: vector_dim %lld outside 0..%d", fn, (long long)o.vector_dim, kw->rank - 1);
    if (o.spv < 0 || o.spv > 16) ckt_l_errorf(L, "%s: scalar_per_vector %lld outside 1..16 (0: choose)", fn, (long long)o.spv);
    if (lua_getfield(L, idx, "fill") != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TNUMBER) ckt_l_errorf(L, "%s: field 'fill' must be a number", fn);
        o.fill = (float)lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "dist") != LUA_TNIL) {
        if (!allow_dist) ckt_l_errorf(L, "%s: the register tensor's distribution decides who stores what (no 'dist' here)", fn);
        if (w->part) ckt_l_errorf(L, "%s: a partition's thread layout decides who holds what (no 'dist' here)", fn);
        o.dist = todist(L, -1, w->kb, fn, kw->rank, kw->lengths);
    }
    lua_pop(L, 1);
    return o;
}

static int default_dist_index(lua_State *L, l_kobj *w)
{
    const ckt_kwindow *kw = kwindow(w);
    ckt_dist d;
    default_dist(L, w->kb, kw->rank, kw->lengths, ckt_kernel_tensor(w->kb->k, kw->tensor)->dtype, &d);
    int di;
    ckt_error err;
    if (ckt_kernel_add_dist(w->kb->k, &d, &di, &err)) ckt_l_error(L, &err);
    return di;
}

static int load_into(lua_State *L, l_kobj *w, int widx, access_opts o)
{
    if (o.dist < 0) o.dist = default_dist_index(L, w);
    int r;
    ckt_error err;
    if (ckt_kernel_load(w->kb->k, w->id, o.dist, (int)o.vector_dim, o.spv, o.fill, &r, &err)) ckt_l_error(L, &err);
    push_owner(L, widx);
    newobj(L, w->kb, -1, CKT_L_KTENSOR, r);
    lua_remove(L, -2);
    return 1;
}

/* w:load([{dist=, vector_dim=, scalar_per_vector=, fill=}]) -> register tensor */
static int w_load(lua_State *L)
{
    l_kobj *w = checkwindow(L, 1, "load");
    return load_into(L, w, 1, read_access(L, 2, w, "load", 1));
}

/* A partition takes the registers by value index (its own distribution); a plain window takes
 * each value where the register tensor's distribution puts it. */
static void store_from(lua_State *L, l_kobj *w, l_kobj *r, access_opts o)
{
    ckt_error err;
    if (ckt_kernel_store_as(w->kb->k, w->id, r->id, w->part ? w->dist : -1, (int)o.vector_dim, o.spv, &err)) ckt_l_error(L, &err);
}

/* w:store(reg [, {vector_dim=, scalar_per_vector=}]) */
static int w_store(lua_State *L)
{
    l_kobj *w = checkwindow(L, 1, "store");
    l_kobj *r = checkreg(L, 2, w->kb, "store: argument 1");
    store_from(L, w, r, read_access(L, 3, w, "store", 0));
    return 0;
}

static int w_tostring(lua_State *L)
{
    l_kobj *w = luaL_checkudata(L, 1, CKT_L_WINDOW);
    const ckt_kwindow *kw = kwindow(w);
    char buf[128];
    size_t n = 0;
    for (int d = 0; d < kw->rank; d++) n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld", d ? "x" : "", (long long)kw->lengths[d]);
    if (w->part) {
        const ckt_dist *d = ckt_kernel_dist(w->kb->k, w->dist);
        lua_pushfstring(L, "ckt.partition(%s over %s: %s, %I values per thread)", buf, ckt_kernel_tensor(w->kb->k, kw->tensor)->name, d->desc,
                        (lua_Integer)d->nvalues);
        return 1;
    }
    lua_pushfstring(L, "ckt.window(%s over %s)", buf, ckt_kernel_tensor(w->kb->k, kw->tensor)->name);
    return 1;
}

/* w:nvalues() -> the values per thread of a partition (or of the window's distribution) */
static int w_nvalues(lua_State *L)
{
    l_kobj *w = luaL_checkudata(L, 1, CKT_L_WINDOW);
    if (w->dist < 0) return ckt_l_errorf(L, "nvalues: the window has no distribution (only partitions and windows made with one say who holds what)");
    lua_pushinteger(L, (lua_Integer)ckt_kernel_dist(w->kb->k, w->dist)->nvalues);
    return 1;
}

static int w_lengths(lua_State *L)
{
    l_kobj *w = luaL_checkudata(L, 1, CKT_L_WINDOW);
    ckt_l_push_int_list(L, kwindow(w)->lengths, kwindow(w)->rank);
    return 1;
}

/* ---------------------------------------------------------------- partitions */

/* The thread index argument of local_partition as (tid / q) % m (m 0: no remainder): the thread
 * id, and divisions (or right shifts) and remainders (or masks) of it by constants. 0: not of
 * that form. */
static int thread_index_form(const ckt_expr_pool *ex, ckt_expr_id e, int64_t *q, int64_t *m)
{
    const ckt_expr_node *n = ckt_expr_get(ex, e);
    if (!n) return 0;
    if (n->op == CKT_E_TID) {
        *q = 1;
        *m = 0;
        return 1;
    }
    int64_t c;
    ckt_expr_id x = n->a;
    bool have = false;
    if (n->op == CKT_E_DIV || n->op == CKT_E_MOD || n->op == CKT_E_SHR) have = ckt_expr_is_const(ex, n->b, &c);
    else if (n->op == CKT_E_AND) {
        have = ckt_expr_is_const(ex, n->b, &c);
        if (!have && ckt_expr_is_const(ex, n->a, &c)) { have = true; x = n->b; }
    }
    if (!have || !thread_index_form(ex, x, q, m)) return 0;
    int op = n->op;
    if (op == CKT_E_SHR) {
        if (c < 0 || c > 30) return 0;
        c = (int64_t)1 << c;
        op = CKT_E_DIV;
    } else if (op == CKT_E_AND) {
        if (c < 0 || c > (1 << 30) || (c & (c + 1))) return 0; /* a mask of low bits: a remainder */
        c = c + 1;
        op = CKT_E_MOD;
    }
    if (c < 1 || c > (1 << 30)) return 0;
    if (op == CKT_E_DIV) {
        if (*m && *m % c) return 0;
        *q *= c;
        if (*m) *m /= c;
        return *q <= (1 << 30);
    }
    if (*m == 0 || *m % c == 0) *m = c; /* (x % m) % c = x % c when c divides m */
    else if (c < *m) return 0;          /* c >= m: no effect */
    return 1;
}

/* The parent's tile lengths (a window's, or a tensor's static shape). */
static int partition_lengths(lua_State *L, l_kobj *o, bool is_window, int64_t *lengths)
{
    if (is_window) {
        const ckt_kwindow *kw = kwindow(o);
        memcpy(lengths, kw->lengths, sizeof(int64_t) * (size_t)kw->rank);
        return kw->rank;
    }
    const ckt_ktensor *t = ktensor(o);
    if (t->mem == CKT_MEM_REG)
        ckt_l_errorf(L, "local_partition: argument 1 is a register tensor (already per thread): partition a global or LDS tensor or a tile window");
    for (int d = 0; d < t->rank; d++) {
        if (t->mem == CKT_MEM_LDS) {
            ckt_layout m;
            ckt_error err;
            if (ckt_layout_mode(&t->layout, d, &m, &err)) ckt_l_error(L, &err);
            lengths[d] = ckt_layout_size(&m);
        } else if (!ckt_expr_is_const(ckt_kernel_exprs(o->kb->k), t->shape[d], &lengths[d])) {
            ckt_l_errorf(L, "local_partition: dim %d of tensor '%s' has a runtime extent: partition a tile of it (ckt.local_tile) instead", d, t->name);
        }
    }
    return t->rank;
}

/* ckt.local_partition(t, thr_layout, thread_index [, {packed=, scalar_per_vector=, vector_dim=,
 * values=}]): the part of tile t (a global / LDS tensor or a tile window) that each thread owns,
 * as a window with the partition's distribution (CuTe's local_partition; see docs/kernels.md).
 * Layouts go to the layout algebra's local_partition (the upvalue). */
static int l_local_partition(lua_State *L)
{
    static const char *const fn = "local_partition";
    l_kobj *o = luaL_testudata(L, 1, CKT_L_KTENSOR);
    bool is_window = false;
    if (!o) {
        o = luaL_testudata(L, 1, CKT_L_WINDOW);
        is_window = o != NULL;
    }
    if (!o) { /* a layout: CuTe's local_partition of the layout algebra */
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_insert(L, 1);
        lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
        return lua_gettop(L);
    }
    l_kernel *kb = o->kb;
    require_building(L, kb, fn);
    if (is_window && o->part) return ckt_l_errorf(L, "local_partition: argument 1 is already a partition (partition its tile instead)");
    int64_t lengths[CKT_K_MAX_RANK];
    int rank = partition_lengths(L, o, is_window, lengths);
    if (!ckt_l_testlayout(L, 2) && lua_type(L, 2) != LUA_TSTRING && !lua_isinteger(L, 2))
        return ckt_l_errorf(L, "local_partition: argument 2 (thr_layout) must be a ckt.layout over the threads, got %s", luaL_typename(L, 2));
    ckt_layout thr;
    ckt_l_tolayout(L, 2, "local_partition: argument 2 (thr_layout)", &thr);
    /* argument 3: the thread index */
    l_kobj *e = testexpr(L, 3);
    static const char *const want = "must be b:thread_id() or an expression of it (thread_id // n, thread_id % n)";
    if (!e) return ckt_l_errorf(L, "local_partition: argument 3 (thread index) %s, got %s", want, luaL_typename(L, 3));
    if (e->kb != kb) return ckt_l_errorf(L, "local_partition: argument 3 (thread index) belongs to another kernel");
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
    int64_t q = 1, m = 0;
    if (e->param >= 0 || !thread_index_form(ex, e->id, &q, &m)) {
        char buf[160] = "a pointer";
        if (e->param < 0) ckt_expr_print(ex, e->id, buf, sizeof buf, NULL);
        return ckt_l_errorf(L, "local_partition: argument 3 (thread index) %s, got %s%s", want, buf,
                            e->param < 0 && ckt_expr_uniform(ex, e->id) ? " (it does not depend on the thread id)" : "");
    }
    /* the form must be what the expression computes, for every thread of the block */
    ckt_expr_env env;
    memset(&env, 0, sizeof env);
    for (int64_t t = 0; t < ckt_kernel_block(kb->k); t++) {
        int64_t got, exp = m ? (t / q) % m : t / q;
        ckt_error err;
        env.tid = t;
        if (ckt_expr_eval_int(ex, e->id, &env, &got, &err) || got != exp)
            return ckt_l_errorf(L, "local_partition: argument 3 (thread index): internal: thread %lld computes %lld, not %lld", (long long)t, (long long)got,
                                (long long)exp);
    }
    /* argument 4: options */
    int packed = 0;
    int64_t val[CKT_K_MAX_RANK];
    bool has_val = false;
    for (int d = 0; d < rank; d++) val[d] = 1;
    if (!lua_isnoneornil(L, 4)) {
        static const char *const allowed[] = {"packed", "scalar_per_vector", "vector_dim", "values", NULL};
        if (!lua_istable(L, 4)) return ckt_l_errorf(L, "local_partition: argument 4 (options) must be a table, got %s", luaL_typename(L, 4));
        ckt_l_check_fields(L, 4, fn, allowed);
        ckt_l_field_bool(L, 4, fn, "packed", &packed);
        int64_t spv = 0, vd = rank - 1;
        bool has_spv = ckt_l_field_int(L, 4, fn, "scalar_per_vector", &spv), has_vd = ckt_l_field_int(L, 4, fn, "vector_dim", &vd);
        int nv = int_list_field(L, 4, fn, "values", val, CKT_K_MAX_RANK);
        if (nv >= 0) {
            if (has_spv || has_vd) return ckt_l_errorf(L, "local_partition: give either values= or scalar_per_vector= / vector_dim=, not both");
            if (nv != rank) return ckt_l_errorf(L, "local_partition: values lists %d extents for a rank-%d tile", nv, rank);
            has_val = true;
        } else if (has_spv || has_vd) {
            if (!has_spv) return ckt_l_errorf(L, "local_partition: vector_dim needs scalar_per_vector");
            if (vd < 0 || vd >= rank) return ckt_l_errorf(L, "local_partition: vector_dim %lld outside 0..%d", (long long)vd, rank - 1);
            if (spv < 1 || spv > 16) return ckt_l_errorf(L, "local_partition: scalar_per_vector %lld outside 1..16", (long long)spv);
            val[vd] = spv;
            has_val = true;
        }
        if (packed && has_val)
            return ckt_l_errorf(L, "local_partition: packed=true gives each thread one contiguous block already (no values= / scalar_per_vector=)");
    }
    ckt_dist d;
    ckt_error err;
    if (ckt_dist_partition(&thr, rank, lengths, has_val ? val : NULL, packed, q, m, ckt_kernel_block(kb->k), &d, &err)) return ckt_l_error(L, &err);
    int di, wi;
    if (ckt_kernel_add_dist(kb->k, &d, &di, &err)) return ckt_l_error(L, &err);
    /* the partition's own window over the same tile: later moves of the parent leave it be */
    ckt_expr_id origin[CKT_K_MAX_RANK];
    for (int r = 0; r < rank; r++) origin[r] = is_window ? kwindow(o)->origin[r] : ckt_expr_int(ex, 0);
    check_pool(L, kb);
    int tensor = is_window ? kwindow(o)->tensor : o->id;
    if (ckt_kernel_window_make(kb->k, tensor, rank, lengths, origin, &wi, &err)) return ckt_l_error(L, &err);
    push_owner(L, 1);
    l_kobj *w = newobj(L, kb, -1, CKT_L_WINDOW, wi);
    lua_remove(L, -2);
    w->dist = di;
    w->part = 1;
    return 1;
}

/* ---------------------------------------------------------------- data movement, compute */

/* Load src (at stack index si) and store the registers to dst. Partitions: the source's
 * distribution loads, the destination's stores by value index (CuTe's copy between partitions). */
static int copy_through(lua_State *L, l_kernel *kb, l_kobj *dst, l_kobj *src, int si, access_opts o, const char *fn)
{
    if (src->part) o.dist = src->dist;
    else if (o.dist < 0) o.dist = dst->dist;
    if (dst->part) {
        const ckt_dist *sd = ckt_kernel_dist(kb->k, o.dist >= 0 ? o.dist : dst->dist), *dd = ckt_kernel_dist(kb->k, dst->dist);
        if (src->part && sd->nvalues != dd->nvalues)
            return ckt_l_errorf(L, "%s: the source partition gives each thread %lld values but the destination partition %lld", fn, (long long)sd->nvalues,
                                (long long)dd->nvalues);
    }
    load_into(L, src, si, o);
    store_from(L, dst, lua_touserdata(L, -1), o);
    return 1;
}

/* b:copy(dst_window, src_window [, {dist=, vector_dim=, scalar_per_vector=, fill=}]): through
 * registers, one distribution for both sides (partitions: see copy_through) */
static int b_copy(lua_State *L)
{
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "copy");
    l_kobj *dst = checkwindow(L, 2, "copy: destination"), *src = checkwindow(L, 3, "copy: source");
    if (dst->kb != kb || src->kb != kb) return ckt_l_errorf(L, "copy: the windows belong to another kernel");
    if (dst->part && lua_istable(L, 4)) {
        if (lua_getfield(L, 4, "dist") != LUA_TNIL)
            return ckt_l_errorf(L, "copy: the destination is a partition: its thread layout decides who holds what (no 'dist' here)");
        lua_pop(L, 1);
    }
    access_opts o = read_access(L, 4, src, "copy", 1);
    return copy_through(L, kb, dst, src, 3, o, "copy");
}

/* b:blockwise_copy{src=, dst=, thread_layout=, access_order=, vector_dim=, scalar_per_vector=}
 * (CK wrapper blockwise_copy) -> the register tensor it went through */
static int b_blockwise_copy(lua_State *L)
{
    static const char *const fn = "blockwise_copy";
    static const char *const allowed[] = {"src", "dst", "thread_layout", "access_order", "vector_dim", "scalar_per_vector", NULL};
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    ckt_l_check_fields(L, 2, fn, allowed);
    lua_getfield(L, 2, "src");
    lua_getfield(L, 2, "dst");
    int si = lua_gettop(L) - 1, di = lua_gettop(L);
    l_kobj *src = checkwindow(L, si, "blockwise_copy: src"), *dst = checkwindow(L, di, "blockwise_copy: dst");
    if (src->kb != kb || dst->kb != kb) return ckt_l_errorf(L, "blockwise_copy: the windows belong to another kernel");
    if (src->part || dst->part) { /* partitions: their thread layouts decide, as b:copy */
        static const char *const owned[] = {"thread_layout", "access_order", NULL};
        for (const char *const *f = owned; *f; f++) {
            if (lua_getfield(L, 2, *f) != LUA_TNIL)
                return ckt_l_errorf(L, "blockwise_copy: %s is a partition (ckt.local_partition): its thread layout decides who moves what (leave out '%s')",
                                    src->part ? "src" : "dst", *f);
            lua_pop(L, 1);
        }
        access_opts o = {-1, -1, 0, 0.0f};
        ckt_l_field_int(L, 2, fn, "vector_dim", &o.vector_dim);
        ckt_l_field_int(L, 2, fn, "scalar_per_vector", &o.spv);
        const ckt_kwindow *kw = kwindow(src);
        if (o.vector_dim < -1 || o.vector_dim >= kw->rank) return ckt_l_errorf(L, "%s: vector_dim %lld outside 0..%d", fn, (long long)o.vector_dim, kw->rank - 1);
        if (o.spv < 0 || o.spv > 16) return ckt_l_errorf(L, "%s: scalar_per_vector %lld outside 1..16 (0: choose)", fn, (long long)o.spv);
        return copy_through(L, kb, dst, src, si, o, fn);
    }
    const ckt_kwindow *ks = kwindow(src), *kd = kwindow(dst);
    if (ks->rank != kd->rank || memcmp(ks->lengths, kd->lengths, sizeof(int64_t) * (size_t)ks->rank))
        return ckt_l_errorf(L, "blockwise_copy: src and dst windows differ in shape");
    if (lua_getfield(L, 2, "thread_layout") == LUA_TNIL) return ckt_l_errorf(L, "blockwise_copy: field 'thread_layout' is required");
    lua_pop(L, 1);
    int64_t spv = 1;
    ckt_l_field_int(L, 2, fn, "scalar_per_vector", &spv);
    ckt_dist d;
    dist_from_thread_layout(L, 2, fn, ks->rank, ks->lengths, &d, -1, spv);
    int dist;
    ckt_error err;
    if (ckt_kernel_add_dist(kb->k, &d, &dist, &err)) return ckt_l_error(L, &err);
    int64_t vd = ks->rank - 1;
    ckt_l_field_int(L, 2, fn, "vector_dim", &vd);
    access_opts o = {dist, vd, spv, 0.0f};
    load_into(L, src, si, o);
    store_from(L, dst, lua_touserdata(L, -1), o);
    return 1;
}

/* b:clear(reg [, value]) */
static int b_clear(lua_State *L)
{
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "clear");
    l_kobj *r = checkreg(L, 2, kb, "clear: argument 1");
    double v = luaL_optnumber(L, 3, 0.0);
    ckt_error err;
    if (ckt_kernel_clear(kb->k, r->id, (float)v, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:map(fn, reg1 [, reg2 ...] [, {dtype=}]) -> reg: out[v] = fn(reg1[v], reg2[v], ...), the
 * arithmetic in f32; stored as dtype (default: reg1's) */
static int map_regs(lua_State *L, l_kernel *kb, int ki, int fi, int first, int last, const char *fn)
{
    int nin = last - first + 1;
    ckt_dtype out = CKT_F32;
    if (nin >= 1 && lua_istable(L, last) && !luaL_testudata(L, last, CKT_L_KTENSOR)) {
        static const char *const allowed[] = {"dtype", NULL};
        ckt_l_check_fields(L, last, fn, allowed);
        if (lua_getfield(L, last, "dtype") != LUA_TNIL) out = ckt_l_checkdtype(L, -1, "map: dtype");
        else out = (ckt_dtype)-1;
        lua_pop(L, 1);
        nin--;
    } else {
        out = (ckt_dtype)-1;
    }
    if (nin < 1 || nin > CKT_K_MAX_INPUTS) return ckt_l_errorf(L, "%s: 1 to %d register tensors", fn, CKT_K_MAX_INPUTS);
    int inputs[CKT_K_MAX_INPUTS];
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
    for (int i = 0; i < nin; i++) {
        char what[48];
        snprintf(what, sizeof what, "%s: input %d", fn, i + 1);
        inputs[i] = checkreg(L, first + i, kb, what)->id;
    }
    if ((int)out < 0) out = ckt_kernel_tensor(kb->k, inputs[0])->dtype;
    lua_pushvalue(L, fi);
    for (int i = 0; i < nin; i++) push_expr(L, kb, ki, ckt_expr_input(ex, i));
    lua_call(L, nin, 1);
    ckt_expr_id e = toexpr(L, -1, kb, "map: the function's result");
    lua_pop(L, 1);
    mark_line(L, kb);
    int r;
    ckt_error err;
    if (ckt_kernel_map(kb->k, nin, inputs, e, out, &r, &err)) return ckt_l_error(L, &err);
    newobj(L, kb, ki, CKT_L_KTENSOR, r);
    return 1;
}

static int b_map(lua_State *L)
{
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "map");
    luaL_checktype(L, 2, LUA_TFUNCTION);
    return map_regs(L, kb, 1, 2, 3, lua_gettop(L), "map");
}

/* ckt.sweep(reg, fn [, {dtype=}]): fn over every value a thread holds (CK Tile's sweep_tile) */
static int l_sweep(lua_State *L)
{
    l_kobj *r = checktensor(L, 1, "sweep: argument 1");
    require_building(L, r->kb, "sweep");
    luaL_checktype(L, 2, LUA_TFUNCTION);
    int top = lua_gettop(L);
    push_owner(L, 1);
    int ki = lua_gettop(L);
    lua_pushvalue(L, 1);
    if (top >= 3) lua_pushvalue(L, 3);
    return map_regs(L, r->kb, ki, 2, ki + 1, lua_gettop(L), "sweep");
}

static ckt_reduce_op checkreduce(lua_State *L, int idx, const char *fn)
{
    const char *s = luaL_optstring(L, idx, "sum");
    ckt_reduce_op op;
    ckt_error err;
    if (ckt_reduce_parse(s, &op, &err)) ckt_l_errorf(L, "%s: %s", fn, err.msg);
    return op;
}

/* b:reduce(reg, op [, {block=true, dtype=}]) -> a one-value-per-thread register tensor holding
 * op over the thread's values (and, with block=true, over the whole block) */
static int b_reduce(lua_State *L)
{
    static const char *const allowed[] = {"block", "dtype", NULL};
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "reduce");
    l_kobj *src = checkreg(L, 2, kb, "reduce: argument 1");
    ckt_reduce_op op = checkreduce(L, 3, "reduce");
    int block = 0;
    ckt_dtype dt = CKT_F32;
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        ckt_l_check_fields(L, 4, "reduce", allowed);
        ckt_l_field_bool(L, 4, "reduce", "block", &block);
        if (lua_getfield(L, 4, "dtype") != LUA_TNIL) dt = ckt_l_checkdtype(L, -1, "reduce: dtype");
        lua_pop(L, 1);
    }
    int acc;
    ckt_error err;
    float init = op == CKT_REDUCE_SUM ? 0.0f : op == CKT_REDUCE_MAX ? -INFINITY : INFINITY;
    if (ckt_kernel_registers(kb->k, dt, -1, 1, &acc, &err) || ckt_kernel_clear(kb->k, acc, init, &err) || ckt_kernel_fold(kb->k, acc, src->id, op, &err))
        return ckt_l_error(L, &err);
    if (block && ckt_kernel_block_reduce(kb->k, acc, op, &err)) return ckt_l_error(L, &err);
    newobj(L, kb, 1, CKT_L_KTENSOR, acc);
    return 1;
}

/* b:fold(acc, src, op), b:block_reduce(acc, op): the two steps of reduce, on your accumulator */
static int b_fold(lua_State *L)
{
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "fold");
    l_kobj *acc = checkreg(L, 2, kb, "fold: accumulator"), *src = checkreg(L, 3, kb, "fold: source");
    ckt_error err;
    if (ckt_kernel_fold(kb->k, acc->id, src->id, checkreduce(L, 4, "fold"), &err)) return ckt_l_error(L, &err);
    return 0;
}

static int b_block_reduce(lua_State *L)
{
    l_kernel *kb = checkkernel(L, 1);
    require_building(L, kb, "block_reduce");
    l_kobj *acc = checkreg(L, 2, kb, "block_reduce: accumulator");
    ckt_error err;
    if (ckt_kernel_block_reduce(kb->k, acc->id, checkreduce(L, 3, "block_reduce"), &err)) return ckt_l_error(L, &err);
    return 0;
}

/* ---------------------------------------------------------------- hooks for l_gemm.c */

ckt_kernel *ckt_l_builder(lua_State *L, int idx, const char *fn)
{
    l_kernel *kb = checkkernel(L, idx);
    require_building(L, kb, fn);
    return kb->k;
}

int ckt_l_kernel_tensor(lua_State *L, int idx, ckt_kernel **k, const char *what)
{
    l_kobj *t = checktensor(L, idx, what);
    require_building(L, t->kb, what);
    if (*k && t->kb->k != *k) return ckt_l_errorf(L, "%s: the tensor belongs to another kernel", what);
    *k = t->kb->k;
    return t->id;
}

int ckt_l_kernel_window(lua_State *L, int idx, ckt_kernel **k, const char *what)
{
    l_kobj *w = checkwindow(L, idx, what);
    if (w->part) return ckt_l_errorf(L, "%s: expected a tile window, got a partition", what);
    if (*k && w->kb->k != *k) return ckt_l_errorf(L, "%s: the window belongs to another kernel", what);
    *k = w->kb->k;
    return w->id;
}

static void push_kernel_of(lua_State *L, int idx)
{
    if (luaL_testudata(L, idx, CKT_L_KERNEL)) lua_pushvalue(L, idx);
    else push_owner(L, idx);
}

void ckt_l_push_kernel_tensor(lua_State *L, int owner, int tensor)
{
    push_kernel_of(L, owner);
    newobj(L, checkkernel(L, -1), -1, CKT_L_KTENSOR, tensor);
    lua_remove(L, -2);
}

void ckt_l_push_partition(lua_State *L, int owner, int window, int dist)
{
    push_kernel_of(L, owner);
    l_kobj *w = newobj(L, checkkernel(L, -1), -1, CKT_L_WINDOW, window);
    lua_remove(L, -2);
    w->dist = dist;
    w->part = 1;
}

/* ---------------------------------------------------------------- built kernels */

static l_kernel *checkbuilt(lua_State *L, int idx, const char *fn)
{
    l_kernel *kb = checkkernel(L, idx);
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
    ckt_dialect_kind dk;
    ckt_error err;
    if (ckt_dialect_for_target(target, &dk, &err)) return ckt_l_error(L, &err);
    e->dynamic_lds = ckt_emit_dynamic_lds_bytes(kb->k, dk);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    lua_pushvalue(L, bi);
    lua_setiuservalue(L, -2, 2);
    luaL_setmetatable(L, CKT_L_EXE);
    return 1;
}

static int k_tostring(lua_State *L)
{
    l_kernel *kb = checkkernel(L, 1);
    if (!kb->k) { lua_pushliteral(L, "ckt.kernel (destroyed)"); return 1; }
    lua_pushfstring(L, "ckt.kernel(%s: %d threads, %d params, %d ops, %I bytes of LDS%s)", ckt_kernel_name(kb->k), (int)ckt_kernel_block(kb->k),
                    ckt_kernel_nparams(kb->k), ckt_kernel_nops(kb->k), (lua_Integer)ckt_kernel_lds_bytes(kb->k), kb->built ? "" : ", building");
    return 1;
}

static const char *kind_name(ckt_param_kind k) { return k == CKT_PARAM_I32 ? "i32" : k == CKT_PARAM_I64 ? "i64" : k == CKT_PARAM_F32 ? "f32" : "ptr"; }

/* k:signature() -> {{name=, kind=, dtype=}, ...}: the launch arguments in order */
static int k_signature(lua_State *L)
{
    l_kernel *kb = checkkernel(L, 1);
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

static int k_lds_bytes(lua_State *L) { lua_pushinteger(L, (lua_Integer)ckt_kernel_lds_bytes(checkkernel(L, 1)->k)); return 1; }
static int k_name(lua_State *L) { lua_pushstring(L, ckt_kernel_name(checkkernel(L, 1)->k)); return 1; }
static int k_block(lua_State *L) { lua_pushinteger(L, (lua_Integer)ckt_kernel_block(checkkernel(L, 1)->k)); return 1; }

/* ---------------------------------------------------------------- executables */

static l_exe *checkexe(lua_State *L, int idx) { return luaL_checkudata(L, idx, CKT_L_EXE); }

/* The device a launch runs on: opts.device, else the first pointer argument's device, else one
 * per backend kept for this Lua state. */
static void push_device(lua_State *L, int opts, int args, const char *target)
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
    const char *backend = !strncmp(target, "cpu", 3) ? "cpu" : !strncmp(target, "sm_", 3) ? "cuda" : "hip";
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
    push_device(L, 2, at, e->target);
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

/* ---------------------------------------------------------------- the kernel library */

extern const ckt_embedded_file ckt_embedded_kernels[];

/* package.preload loader of kernels/<name>.lua (embedded at build time): upvalue 1 = index */
static int load_library_module(lua_State *L)
{
    const ckt_embedded_file *f = &ckt_embedded_kernels[lua_tointeger(L, lua_upvalueindex(1))];
    char chunk[96];
    snprintf(chunk, sizeof chunk, "=kernels/%s", f->name);
    if (luaL_loadbuffer(L, f->text, f->length, chunk) != LUA_OK) return lua_error(L);
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    return 1;
}

/* require "ckt.kernels.copy" etc. */
static void register_library(lua_State *L)
{
    int top = lua_gettop(L);
    if (lua_getglobal(L, "package") != LUA_TTABLE || lua_getfield(L, -1, "preload") != LUA_TTABLE) { /* a sandbox without require */
        lua_settop(L, top);
        return;
    }
    for (int i = 0; ckt_embedded_kernels[i].name; i++) {
        char mod[96];
        snprintf(mod, sizeof mod, "ckt.kernels.%s", ckt_embedded_kernels[i].name);
        char *dot = strrchr(mod, '.');
        if (dot && !strcmp(dot, ".lua")) *dot = 0;
        lua_pushinteger(L, i);
        lua_pushcclosure(L, load_library_module, 1);
        lua_setfield(L, -2, mod);
    }
    lua_settop(L, top);
}

/* ---------------------------------------------------------------- registration */

void ckt_l_open_kernel(lua_State *L)
{
    static const luaL_Reg kmethods[] = {
        {"__gc", k_gc}, {"__tostring", k_tostring}, {"pointer", b_pointer}, {"size", b_size}, {"scalar", b_scalar},
        {"thread_id", b_thread_id}, {"block_id", b_block_id}, {"num_blocks", b_num_blocks}, {"block_order", b_block_order},
        {"loop", b_loop}, {"when", b_when}, {"sync", b_sync}, {"copy", b_copy}, {"blockwise_copy", b_blockwise_copy},
        {"clear", b_clear}, {"map", b_map}, {"reduce", b_reduce}, {"fold", b_fold}, {"block_reduce", b_block_reduce},
        {"source", k_source}, {"compile", k_compile}, {"signature", k_signature},
        {"lds_bytes", k_lds_bytes}, {"name", k_name}, {"block", k_block}, {NULL, NULL}};
    static const luaL_Reg emethods[] = {
        {"__add", e_add}, {"__sub", e_sub}, {"__mul", e_mul}, {"__div", e_div}, {"__idiv", e_div}, {"__mod", e_mod},
        {"__unm", e_unm}, {"__band", e_band}, {"__bor", e_bor}, {"__bxor", e_bxor}, {"__shl", e_shl}, {"__shr", e_shr},
        {"__lt", e_compare}, {"__le", e_compare}, {"__tostring", e_tostring}, {"value", e_value}, {NULL, NULL}};
    static const luaL_Reg tmethods[] = {{"__tostring", t_tostring}, {"dtype", t_dtype}, {"memory", t_memory}, {"nvalues", t_nvalues}, {NULL, NULL}};
    static const luaL_Reg wmethods[] = {{"__tostring", w_tostring}, {"move", w_move}, {"load", w_load}, {"store", w_store}, {"lengths", w_lengths}, {"nvalues", w_nvalues}, {NULL, NULL}};
    static const luaL_Reg xmethods[] = {{"__tostring", x_tostring}, {"launch", x_launch}, {"kernel", x_kernel}, {"binary", x_binary}, {NULL, NULL}};
    ckt_l_new_class(L, CKT_L_KERNEL, kmethods);
    ckt_l_new_class(L, CKT_L_EXPR, emethods);
    ckt_l_new_class(L, CKT_L_KTENSOR, tmethods);
    ckt_l_new_class(L, CKT_L_WINDOW, wmethods);
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
    static const luaL_Reg fns[] = {
        {"kernel", l_kernel_new}, {"tensor", l_tensor}, {"tile_window", l_tile_window}, {"sweep", l_sweep},
        {"min", m_min}, {"max", m_max}, {"lt", m_lt}, {"le", m_le}, {"gt", m_gt}, {"ge", m_ge}, {"eq", m_eq}, {"ne", m_ne},
        {"land", m_and}, {"lor", m_or}, {"lnot", m_not}, {"select", m_select}, {"exp", m_exp}, {"log", m_log}, {"sqrt", m_sqrt},
        {"abs", m_abs}, {"cast", m_cast}, {"float", m_float}, {"int", m_int}, {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
    /* ckt.local_tile: tensors here, layouts in the layout algebra (its function as the upvalue) */
    lua_getfield(L, -1, "local_tile");
    if (!lua_isfunction(L, -1)) luaL_error(L, "ckt: the layout bindings must open before the kernel bindings");
    lua_pushcclosure(L, l_local_tile, 1);
    lua_setfield(L, -2, "local_tile");
    /* ckt.local_partition likewise: kernel tensors and windows here, layouts in the algebra */
    lua_getfield(L, -1, "local_partition");
    if (!lua_isfunction(L, -1)) luaL_error(L, "ckt: the layout bindings must open before the kernel bindings");
    lua_pushcclosure(L, l_local_partition, 1);
    lua_setfield(L, -2, "local_partition");
    register_library(L);
    ckt_l_open_async(L);
}

/* ---------------------------------------------------------------- for l_kbuild.h */

void ckt_l_kb_require_building(lua_State *L, l_kernel *kb, const char *fn) { require_building(L, kb, fn); }
l_kobj *ckt_l_kb_newobj(lua_State *L, l_kernel *kb, int kidx, const char *tname, int id) { return newobj(L, kb, kidx, tname, id); }
ckt_expr_id ckt_l_kb_toexpr(lua_State *L, int idx, l_kernel *kb, const char *what) { return toexpr(L, idx, kb, what); }
l_kobj *ckt_l_kb_checkwindow(lua_State *L, int idx, const char *what) { return checkwindow(L, idx, what); }
l_kobj *ckt_l_kb_checktensor(lua_State *L, int idx, const char *what) { return checktensor(L, idx, what); }
int ckt_l_kb_todist(lua_State *L, int idx, l_kernel *kb, const char *fn, int rank, const int64_t *lengths) { return todist(L, idx, kb, fn, rank, lengths); }

int ckt_l_kb_default_dist(lua_State *L, l_kernel *kb, int rank, const int64_t *lengths, ckt_dtype dtype)
{
    ckt_dist d;
    default_dist(L, kb, rank, lengths, dtype, &d);
    int di;
    ckt_error err;
    if (ckt_kernel_add_dist(kb->k, &d, &di, &err)) ckt_l_error(L, &err);
    return di;
}
