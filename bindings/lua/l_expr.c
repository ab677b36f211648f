/* ckt Lua bindings — kernel expressions: parameters, thread and block ids, loop counters and
 * epilogue values are userdata with arithmetic metamethods; comparisons, min/max, select, exp...
 * are ckt.lt, ckt.max, ... (plain numbers compute in Lua). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_kernel.h"

void ckt_lk_push_expr(lua_State *L, l_kernel *kb, int kidx, ckt_expr_id id)
{
    ckt_error err;
    if (ckt_expr_pool_status(ckt_kernel_exprs(kb->k), &err)) ckt_l_error(L, &err);
    ckt_lk_newobj(L, kb, kidx, CKT_L_EXPR, id);
}

l_kobj *ckt_lk_testexpr(lua_State *L, int idx) { return luaL_testudata(L, idx, CKT_L_EXPR); }

/* A Lua number or an expression of kernel kb as an expression id. */
ckt_expr_id ckt_lk_toexpr(lua_State *L, int idx, l_kernel *kb, const char *what)
{
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
    int arg = idx > 0 ? idx : 0;
    char pre[96];
    ckt_l_prefix(pre, sizeof pre, what);
    if (lua_isinteger(L, idx)) return ckt_expr_int(ex, (int64_t)lua_tointeger(L, idx));
    if (lua_type(L, idx) == LUA_TNUMBER) {
        double v = lua_tonumber(L, idx);
        if (isnan(v) || isinf(v) || fabs(v) > 3.0e38) {
            if (isnan(v)) return ckt_expr_float(ex, NAN);
            if (isinf(v)) return ckt_expr_float(ex, (float)v);
            ckt_l_argerror(L, arg, "%s%g does not fit f32", pre, v);
        }
        return ckt_expr_float(ex, (float)v);
    }
    l_kobj *o = ckt_lk_testexpr(L, idx);
    if (!o)
        ckt_l_argerror(L, arg, "%snumber or kernel expression expected, got %s", pre,
                       luaL_typename(L, idx));
    if (o->kb != kb) ckt_l_argerror(L, arg, "%sthe expression belongs to another kernel", pre);
    if (o->param >= 0)
        ckt_l_argerror(L, arg, "%spointer '%s' is not a value (make a tensor over it)", pre,
                       ckt_kernel_param(kb->k, o->param)->name);
    return o->id;
}

/* The kernel of the first expression among the arguments (-1 when none). */
static int find_kernel_arg(lua_State *L, int from, int to)
{
    for (int i = from; i <= to; i++)
        if (ckt_lk_testexpr(L, i)) return i;
    return -1;
}

void ckt_lk_check_pool(lua_State *L, l_kernel *kb)
{
    ckt_error err;
    if (ckt_expr_pool_status(ckt_kernel_exprs(kb->k), &err)) ckt_l_error(L, &err);
}

static int expr_binop(lua_State *L, ckt_expr_op op, const char *name)
{
    int ki = find_kernel_arg(L, 1, 2);
    if (ki < 0) return ckt_l_errorf(L, "%s: no kernel expression among the operands", name);
    l_kobj *o = ckt_lk_testexpr(L, ki);
    ckt_expr_id a = ckt_lk_toexpr(L, 1, o->kb, NULL), b = ckt_lk_toexpr(L, 2, o->kb, NULL);
    ckt_expr_id r = ckt_expr_binary(ckt_kernel_exprs(o->kb->k), op, a, b);
    ckt_lk_push_owner(L, ki);
    ckt_lk_push_expr(L, o->kb, -1, r);
    return 1;
}

static int e_add(lua_State *L) { return expr_binop(L, CKT_E_ADD, "+"); }
static int e_sub(lua_State *L) { return expr_binop(L, CKT_E_SUB, "-"); }
static int e_mul(lua_State *L) { return expr_binop(L, CKT_E_MUL, "*"); }
/* Lua's / always divides as floats: so does a value expression (one over map inputs); index
 * arithmetic keeps integer / (floor division) for tile counts and coordinates. */
static int e_div(lua_State *L)
{
    int ki = find_kernel_arg(L, 1, 2);
    if (ki < 0) return ckt_l_errorf(L, "/: no kernel expression among the operands");
    l_kobj *o = ckt_lk_testexpr(L, ki);
    ckt_expr_pool *ex = ckt_kernel_exprs(o->kb->k);
    ckt_expr_id a = ckt_lk_toexpr(L, 1, o->kb, NULL), b = ckt_lk_toexpr(L, 2, o->kb, NULL);
    if (ckt_expr_has_input(ex, a) || ckt_expr_has_input(ex, b)) {
        a = ckt_expr_unary(ex, CKT_E_TOFLOAT, a);
        b = ckt_expr_unary(ex, CKT_E_TOFLOAT, b);
    }
    ckt_lk_push_owner(L, ki);
    ckt_lk_push_expr(L, o->kb, -1, ckt_expr_binary(ex, CKT_E_DIV, a, b));
    return 1;
}

/* Lua's //: floor division of integers (the engine's integer /), floor(a / b) of floats */
static int e_idiv(lua_State *L)
{
    int ki = find_kernel_arg(L, 1, 2);
    if (ki < 0) return ckt_l_errorf(L, "//: no kernel expression among the operands");
    l_kobj *o = ckt_lk_testexpr(L, ki);
    ckt_expr_pool *ex = ckt_kernel_exprs(o->kb->k);
    ckt_expr_id a = ckt_lk_toexpr(L, 1, o->kb, NULL), b = ckt_lk_toexpr(L, 2, o->kb, NULL);
    ckt_expr_id q = ckt_expr_binary(ex, CKT_E_DIV, a, b);
    if (ckt_expr_type_of(ex, q) == CKT_T_F32) q = ckt_expr_unary(ex, CKT_E_FLOOR, q);
    ckt_lk_push_owner(L, ki);
    ckt_lk_push_expr(L, o->kb, -1, q);
    return 1;
}
static int e_mod(lua_State *L) { return expr_binop(L, CKT_E_MOD, "%"); }
static int e_band(lua_State *L) { return expr_binop(L, CKT_E_AND, "&"); }
static int e_bor(lua_State *L) { return expr_binop(L, CKT_E_OR, "|"); }
static int e_bxor(lua_State *L) { return expr_binop(L, CKT_E_XOR, "~"); }
static int e_shl(lua_State *L) { return expr_binop(L, CKT_E_SHL, "<<"); }
static int e_shr(lua_State *L) { return expr_binop(L, CKT_E_SHR, ">>"); }

static int e_unm(lua_State *L)
{
    l_kobj *o = luaL_checkudata(L, 1, CKT_L_EXPR);
    ckt_expr_id a = ckt_lk_toexpr(L, 1, o->kb, NULL);
    ckt_lk_push_owner(L, 1);
    ckt_lk_push_expr(L, o->kb, -1, ckt_expr_unary(ckt_kernel_exprs(o->kb->k), CKT_E_NEG, a));
    return 1;
}

static int e_compare(lua_State *L)
{
    return ckt_l_errorf(L, "comparing kernel expressions with < or <= has no Lua meaning: use "
                           "ckt.lt(a, b), ckt.le, ckt.gt, ckt.ge, ckt.eq, ckt.ne");
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
    if (o->param < 0 && ckt_expr_is_const(ckt_kernel_exprs(o->kb->k), o->id, &v))
        lua_pushinteger(L, (lua_Integer)v);
    else
        lua_pushnil(L);
    return 1;
}

/* ckt.min/max/lt/... on plain numbers compute in Lua; with an expression among the operands
 * they build an expression. */
static int math_binary(lua_State *L, ckt_expr_op op, const char *name)
{
    luaL_checkany(L, 1);
    luaL_checkany(L, 2);
    if (find_kernel_arg(L, 1, 2) < 0) {
        int bad = lua_type(L, 1) != LUA_TNUMBER ? 1 : lua_type(L, 2) != LUA_TNUMBER ? 2 : 0;
        if (bad)
            return ckt_l_argerror(L, bad, "number or kernel expression expected, got %s",
                                  luaL_typename(L, bad));
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
static int m_gt(lua_State *L)
{
    lua_rotate(L, 1, 1);
    return math_binary(L, CKT_E_LT, "gt");
}
static int m_ge(lua_State *L)
{
    lua_rotate(L, 1, 1);
    return math_binary(L, CKT_E_LE, "ge");
}
/* A condition on plain values, as a kernel reads one: false, nil and 0 are false (so
 * ckt.select(0, a, b) is b on both sides; Lua alone would call 0 true). */
static bool truthy(lua_State *L, int idx)
{
    if (lua_type(L, idx) == LUA_TNUMBER)
        return lua_tonumber(L, idx) != 0 || lua_tonumber(L, idx) != lua_tonumber(L, idx);
    return lua_toboolean(L, idx);
}

static int logic_binary(lua_State *L, ckt_expr_op op, const char *name)
{
    luaL_checkany(L, 1);
    luaL_checkany(L, 2);
    if (find_kernel_arg(L, 1, 2) >= 0) return expr_binop(L, op, name);
    lua_pushboolean(L,
                    op == CKT_E_LAND ? truthy(L, 1) && truthy(L, 2) : truthy(L, 1) || truthy(L, 2));
    return 1;
}

static int m_and(lua_State *L) { return logic_binary(L, CKT_E_LAND, "land"); }
static int m_or(lua_State *L) { return logic_binary(L, CKT_E_LOR, "lor"); }

static int math_unary(lua_State *L, ckt_expr_op op, const char *name, double (*f)(double))
{
    luaL_checkany(L, 1);
    l_kobj *o = ckt_lk_testexpr(L, 1);
    if (!o && op == CKT_E_NOT &&
        lua_type(L, 1) == LUA_TBOOLEAN) { /* conditions in Lua are booleans */
        lua_pushboolean(L, !lua_toboolean(L, 1));
        return 1;
    }
    if (!o) {
        if (lua_type(L, 1) != LUA_TNUMBER)
            return ckt_l_argerror(L, 1, "number or kernel expression expected, got %s",
                                  luaL_typename(L, 1));
        double x = lua_tonumber(L, 1);
        if (op == CKT_E_NOT)
            lua_pushboolean(L, !truthy(L, 1));
        else if (op == CKT_E_TOFLOAT)
            lua_pushnumber(L, (lua_Number)(float)x); /* the kernel's f32 */
        else if ((op == CKT_E_TOINT || op == CKT_E_ABS) &&
                 lua_isinteger(L, 1)) { /* math.abs: integers stay integers, wrapping */
            lua_Integer i = lua_tointeger(L, 1);
            lua_pushinteger(L, op == CKT_E_ABS && i < 0 ? (lua_Integer)(0u - (lua_Unsigned)i) : i);
        } else if (op ==
                   CKT_E_TOINT) { /* toward zero, NaN -> 0, saturating: the kernel's ckt_toint */
            char buf[8];
            ckt_dtype_store(CKT_I64, buf, x);
            lua_pushinteger(L, (lua_Integer)ckt_dtype_load_i64(CKT_I64, buf));
        } else if (!f)
            return ckt_l_argerror(L, 1, "kernel expression expected, got number");
        else
            lua_pushnumber(L, f(x));
        return 1;
    }
    ckt_expr_id a = ckt_lk_toexpr(L, 1, o->kb, name);
    ckt_lk_push_owner(L, 1);
    ckt_lk_push_expr(L, o->kb, -1, ckt_expr_unary(ckt_kernel_exprs(o->kb->k), op, a));
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
        lua_pushvalue(L, truthy(L, 1) ? 2 : 3);
        return 1;
    }
    l_kobj *o = ckt_lk_testexpr(L, ki);
    ckt_expr_id c = ckt_lk_toexpr(L, 1, o->kb, "condition"),
                a = ckt_lk_toexpr(L, 2, o->kb, "value if true"),
                b = ckt_lk_toexpr(L, 3, o->kb, "value if false");
    ckt_lk_push_owner(L, ki);
    ckt_lk_push_expr(L, o->kb, -1, ckt_expr_select(ckt_kernel_exprs(o->kb->k), c, a, b));
    return 1;
}

/* ckt.cast(x, dtype): round an f32 value through f16 / bf16 (RNE), or to an integer type the way
 * ckt.array stores a number there (toward zero, NaN -> 0, saturating); on a plain number, the
 * value a one-element ckt.array of that dtype would hold. */
static int m_cast(lua_State *L)
{
    l_kobj *o = ckt_lk_testexpr(L, 1);
    if (!o && lua_type(L, 1) == LUA_TNUMBER) {
        ckt_dtype t = ckt_l_checkdtype(L, 2, NULL);
        char buf[16];
        bool integral = t == CKT_I32 || t == CKT_I8 || t == CKT_U8 || t == CKT_I64;
        if (integral && lua_isinteger(L, 1))
            ckt_dtype_store_i64(t, buf, (int64_t)lua_tointeger(L, 1));
        else
            ckt_dtype_store(t, buf,
                            (double)(float)lua_tonumber(L, 1)); /* the kernel casts from f32 */
        if (integral)
            lua_pushinteger(L, (lua_Integer)ckt_dtype_load_i64(t, buf));
        else
            lua_pushnumber(L, ckt_dtype_load(t, buf));
        return 1;
    }
    if (!o)
        return ckt_l_argerror(L, 1, "number or kernel expression expected, got %s",
                              luaL_typename(L, 1));
    ckt_dtype t = ckt_l_checkdtype(L, 2, NULL);
    ckt_expr_id a = ckt_lk_toexpr(L, 1, o->kb, NULL);
    ckt_expr_pool *ex = ckt_kernel_exprs(o->kb->k);
    ckt_expr_id r;
    if (t == CKT_F16 || t == CKT_BF16)
        r = ckt_expr_round(ex, a, (int)t);
    else if (t == CKT_F32)
        r = ckt_expr_unary(ex, CKT_E_TOFLOAT, a);
    else if (t == CKT_I32 || t == CKT_I8 || t == CKT_U8 || t == CKT_I64) {
        r = ckt_expr_unary(ex, CKT_E_TOINT, a);
        int64_t lo = t == CKT_I32  ? INT32_MIN
                     : t == CKT_I8 ? INT8_MIN
                     : t == CKT_U8 ? 0
                                   : INT64_MIN;
        int64_t hi = t == CKT_I32  ? INT32_MAX
                     : t == CKT_I8 ? INT8_MAX
                     : t == CKT_U8 ? UINT8_MAX
                                   : INT64_MAX;
        if (t != CKT_I64)
            r = ckt_expr_binary(ex, CKT_E_MAX,
                                ckt_expr_binary(ex, CKT_E_MIN, r, ckt_expr_int(ex, hi)),
                                ckt_expr_int(ex, lo));
    } else
        return ckt_l_argerror(L, 2, "cannot cast to %s", ckt_dtype_name(t));
    ckt_lk_push_owner(L, 1);
    ckt_lk_push_expr(L, o->kb, -1, r);
    return 1;
}

void ckt_lk_open_expr(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_EXPR, "__add", e_add},
                                       {CKT_L_EXPR, "__sub", e_sub},
                                       {CKT_L_EXPR, "__mul", e_mul},
                                       {CKT_L_EXPR, "__div", e_div},
                                       {CKT_L_EXPR, "__idiv", e_idiv},
                                       {CKT_L_EXPR, "__mod", e_mod},
                                       {CKT_L_EXPR, "__unm", e_unm},
                                       {CKT_L_EXPR, "__band", e_band},
                                       {CKT_L_EXPR, "__bor", e_bor},
                                       {CKT_L_EXPR, "__bxor", e_bxor},
                                       {CKT_L_EXPR, "__shl", e_shl},
                                       {CKT_L_EXPR, "__shr", e_shr},
                                       {CKT_L_EXPR, "__lt", e_compare},
                                       {CKT_L_EXPR, "__le", e_compare},
                                       {CKT_L_EXPR, "__tostring", e_tostring},
                                       {CKT_L_EXPR, "value", e_value},
                                       {CKT_L_MODULE, "min", m_min},
                                       {CKT_L_MODULE, "max", m_max},
                                       {CKT_L_MODULE, "lt", m_lt},
                                       {CKT_L_MODULE, "le", m_le},
                                       {CKT_L_MODULE, "gt", m_gt},
                                       {CKT_L_MODULE, "ge", m_ge},
                                       {CKT_L_MODULE, "eq", m_eq},
                                       {CKT_L_MODULE, "ne", m_ne},
                                       {CKT_L_MODULE, "land", m_and},
                                       {CKT_L_MODULE, "lor", m_or},
                                       {CKT_L_MODULE, "lnot", m_not},
                                       {CKT_L_MODULE, "select", m_select},
                                       {CKT_L_MODULE, "exp", m_exp},
                                       {CKT_L_MODULE, "log", m_log},
                                       {CKT_L_MODULE, "sqrt", m_sqrt},
                                       {CKT_L_MODULE, "abs", m_abs},
                                       {CKT_L_MODULE, "cast", m_cast},
                                       {CKT_L_MODULE, "float", m_float},
                                       {CKT_L_MODULE, "int", m_int},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
}
