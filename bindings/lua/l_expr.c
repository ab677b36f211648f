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
    return ckt_lk_toexpr_arg(L, idx, idx > 0 ? idx : 0, kb, what);
}

ckt_expr_id ckt_lk_toexpr_arg(lua_State *L, int idx, int arg, l_kernel *kb, const char *what)
{
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
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
                       ckt_l_typename(L, idx));
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

/* How an operator row (expr_op below) builds its expression. */
enum {
    OP_ARITH,   /* a op b */
    OP_DIV,     /* Lua's / always divides as floats: so does a value expression (one over map
                   inputs); index arithmetic keeps integer / (floor division) for tile counts and
                   coordinates */
    OP_IDIV,    /* Lua's //: floor division of integers (the engine's integer /), floor(a / b) of
                   floats */
    OP_MATH,    /* ckt.min/max/lt/...: math_binary */
    OP_SWAPPED, /* ckt.gt/ge: lt/le with the operands swapped */
    OP_LOGIC,   /* ckt.land/lor: logic_binary */
    OP_UNARY,   /* ckt.exp/log/...: math_unary */
};

static int expr_binop(lua_State *L, ckt_expr_op op, const char *name, int kind)
{
    int ki = find_kernel_arg(L, 1, 2);
    if (ki < 0) return ckt_l_errorf(L, "%s: no kernel expression among the operands", name);
    l_kobj *o = ckt_lk_testexpr(L, ki);
    ckt_expr_pool *ex = ckt_kernel_exprs(o->kb->k);
    ckt_expr_id a = ckt_lk_toexpr(L, 1, o->kb, NULL), b = ckt_lk_toexpr(L, 2, o->kb, NULL);
    if (kind == OP_DIV && (ckt_expr_has_input(ex, a) || ckt_expr_has_input(ex, b))) {
        a = ckt_expr_unary(ex, CKT_E_TOFLOAT, a);
        b = ckt_expr_unary(ex, CKT_E_TOFLOAT, b);
    }
    ckt_expr_id r = ckt_expr_binary(ex, op, a, b);
    if (kind == OP_IDIV && ckt_expr_type_of(ex, r) == CKT_T_F32)
        r = ckt_expr_unary(ex, CKT_E_FLOOR, r);
    ckt_lk_push_owner(L, ki);
    ckt_lk_push_expr(L, o->kb, -1, r);
    return 1;
}

static int e_unm(lua_State *L)
{
    l_kobj *o = luaL_checkudata(L, 1, CKT_L_EXPR);
    ckt_expr_id a = ckt_lk_toexpr(L, 1, o->kb, NULL);
    ckt_lk_push_owner(L, 1);
    ckt_lk_push_expr(L, o->kb, -1, ckt_expr_unary(ckt_kernel_exprs(o->kb->k), CKT_E_NEG, a));
    return 1;
}

/* ~x: Lua's bitwise not, x ~ -1 (integers only, as the other bitwise operators) */
static int e_bnot(lua_State *L)
{
    l_kobj *o = luaL_checkudata(L, 1, CKT_L_EXPR);
    ckt_expr_pool *ex = ckt_kernel_exprs(o->kb->k);
    ckt_expr_id a = ckt_lk_toexpr(L, 1, o->kb, NULL);
    ckt_lk_push_owner(L, 1);
    ckt_lk_push_expr(L, o->kb, -1, ckt_expr_binary(ex, CKT_E_XOR, a, ckt_expr_int(ex, -1)));
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
    return expr_binop(L, op, name, OP_ARITH);
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
    if (find_kernel_arg(L, 1, 2) >= 0) return expr_binop(L, op, name, OP_ARITH);
    lua_pushboolean(L,
                    op == CKT_E_LAND ? truthy(L, 1) && truthy(L, 2) : truthy(L, 1) || truthy(L, 2));
    return 1;
}

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

/* The operators, one l_expr_op closure over each row: the metamethods of expressions (named
 * __*; label: the operator in messages) and the ckt.* functions over numbers and expressions
 * (label NULL: messages name the function). */
typedef struct {
    const char *name;
    const char *label;
    ckt_expr_op op;
    int kind;
    double (*f)(double); /* OP_UNARY on a plain number */
} expr_op;

static const expr_op operators[] = {
    {"__add", "+", CKT_E_ADD, OP_ARITH, NULL},  {"__sub", "-", CKT_E_SUB, OP_ARITH, NULL},
    {"__mul", "*", CKT_E_MUL, OP_ARITH, NULL},  {"__div", "/", CKT_E_DIV, OP_DIV, NULL},
    {"__idiv", "//", CKT_E_DIV, OP_IDIV, NULL}, {"__mod", "%", CKT_E_MOD, OP_ARITH, NULL},
    {"__band", "&", CKT_E_AND, OP_ARITH, NULL}, {"__bor", "|", CKT_E_OR, OP_ARITH, NULL},
    {"__bxor", "~", CKT_E_XOR, OP_ARITH, NULL}, {"__shl", "<<", CKT_E_SHL, OP_ARITH, NULL},
    {"__shr", ">>", CKT_E_SHR, OP_ARITH, NULL}, {"min", NULL, CKT_E_MIN, OP_MATH, NULL},
    {"max", NULL, CKT_E_MAX, OP_MATH, NULL},    {"lt", NULL, CKT_E_LT, OP_MATH, NULL},
    {"le", NULL, CKT_E_LE, OP_MATH, NULL},      {"eq", NULL, CKT_E_EQ, OP_MATH, NULL},
    {"ne", NULL, CKT_E_NE, OP_MATH, NULL},      {"gt", NULL, CKT_E_LT, OP_SWAPPED, NULL},
    {"ge", NULL, CKT_E_LE, OP_SWAPPED, NULL},   {"land", NULL, CKT_E_LAND, OP_LOGIC, NULL},
    {"lor", NULL, CKT_E_LOR, OP_LOGIC, NULL},   {"exp", NULL, CKT_E_EXP, OP_UNARY, exp},
    {"log", NULL, CKT_E_LOG, OP_UNARY, log},    {"sqrt", NULL, CKT_E_SQRT, OP_UNARY, sqrt},
    {"exp2", NULL, CKT_E_EXP2, OP_UNARY, exp2}, {"abs", NULL, CKT_E_ABS, OP_UNARY, fabs},
    {"lnot", NULL, CKT_E_NOT, OP_UNARY, NULL},  {"float", NULL, CKT_E_TOFLOAT, OP_UNARY, NULL},
    {"int", NULL, CKT_E_TOINT, OP_UNARY, NULL},
};

static int l_expr_op(lua_State *L)
{
    const expr_op *o = ckt_l_row(L);
    const char *label = o->label ? o->label : o->name;
    switch (o->kind) {
    case OP_SWAPPED: lua_rotate(L, 1, 1); return math_binary(L, o->op, label);
    case OP_MATH: return math_binary(L, o->op, label);
    case OP_LOGIC: return logic_binary(L, o->op, label);
    case OP_UNARY: return math_unary(L, o->op, label, o->f);
    default: return expr_binop(L, o->op, label, o->kind);
    }
}

void ckt_lk_open_expr(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_EXPR, "__unm", e_unm},
                                       {CKT_L_EXPR, "__bnot", e_bnot},
                                       {CKT_L_EXPR, "__lt", e_compare},
                                       {CKT_L_EXPR, "__le", e_compare},
                                       {CKT_L_EXPR, "__tostring", e_tostring},
                                       {CKT_L_EXPR, "value", e_value},
                                       {CKT_L_MODULE, "select", m_select},
                                       {CKT_L_MODULE, "cast", m_cast},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    for (size_t i = 0; i < sizeof operators / sizeof *operators; i++)
        ckt_l_register_rows(L, strncmp(operators[i].name, "__", 2) ? CKT_L_MODULE : CKT_L_EXPR,
                            l_expr_op, &operators[i], sizeof operators[i], 1);
    ckt_l_help_add(L, "exp2",
                   "ckt.exp2(x) -> 2^x: on a number, Lua's own math; on an expression, the f32 "
                   "base-2 exponential of the kernel (the GPU's hardware exp2, exp2f in C), which "
                   "softmax reaches from exp(x) by folding log2(e) into x");
    ckt_l_help_add(
        L, "expr",
        "A kernel expression (ckt.expr): what b:size, b:thread_id, b:block_id, loop variables and "
        "b:map's\n"
        "values are. + - * / // % & | ~ << >> and unary - build new ones, meaning what Lua means "
        "(// floors;\n"
        "/ floors index arithmetic and divides map values as f32); x:value() is the number of a "
        "folded constant\n"
        "(nil otherwise).\n"
        "Comparisons and the rest are functions, since Lua's < would give a boolean: ckt.lt le gt "
        "ge eq ne,\n"
        "land lor lnot, min max abs, exp exp2 log sqrt, float int, select(c, a, b), cast(x, "
        "dtype).\n"
        "Every one also takes plain numbers and computes in Lua, so an epilogue is its own CPU "
        "reference.");
    ckt_l_help_add(
        L, "lt",
        "ckt.lt(a, b): a < b, as a kernel expression (integers or floats; 1 or 0 where a value is "
        "needed); on numbers, a Lua boolean. Lua's own < on expressions is refused.");
    ckt_l_help_add(L, "le",
                   "ckt.le(a, b): a <= b, as a kernel expression; on numbers, a Lua boolean.");
    ckt_l_help_add(
        L, "gt",
        "ckt.gt(a, b): a > b (ckt.lt(b, a)), as a kernel expression; on numbers, a Lua boolean.");
    ckt_l_help_add(
        L, "ge",
        "ckt.ge(a, b): a >= b (ckt.le(b, a)), as a kernel expression; on numbers, a Lua boolean.");
    ckt_l_help_add(L, "eq",
                   "ckt.eq(a, b): a == b, as a kernel expression; on numbers, a Lua boolean.");
    ckt_l_help_add(L, "ne",
                   "ckt.ne(a, b): a ~= b, as a kernel expression; on numbers, a Lua boolean.");
    ckt_l_help_add(L, "land",
                   "ckt.land(a, b): a and b, both nonzero (or true), as a kernel expression; on "
                   "numbers and booleans, a Lua boolean.");
    ckt_l_help_add(L, "lor",
                   "ckt.lor(a, b): a or b, either nonzero (or true), as a kernel expression; on "
                   "numbers and booleans, a Lua boolean.");
    ckt_l_help_add(L, "lnot",
                   "ckt.lnot(a): not a (a is zero or false), as a kernel expression; on a number "
                   "or boolean, a Lua boolean.");
    ckt_l_help_add(L, "min",
                   "ckt.min(a, b): the smaller, as a kernel expression (integers or f32); on "
                   "numbers, Lua's math.min.");
    ckt_l_help_add(L, "max",
                   "ckt.max(a, b): the larger, as a kernel expression (integers or f32); on "
                   "numbers, Lua's math.max.");
    ckt_l_help_add(L, "abs",
                   "ckt.abs(x): |x|, as a kernel expression (an integer's wraps at the minimum, as "
                   "Lua's math.abs); on a number, math.abs.");
    ckt_l_help_add(L, "exp",
                   "ckt.exp(x): e^x in f32 (the target's expf); on a number, Lua's math.exp. "
                   "ckt.exp2 is the hardware's base-2 form.");
    ckt_l_help_add(L, "log",
                   "ckt.log(x): the natural logarithm in f32 (the target's logf); on a number, "
                   "Lua's math.log.");
    ckt_l_help_add(
        L, "sqrt",
        "ckt.sqrt(x): the square root in f32 (the target's sqrtf); on a number, Lua's math.sqrt.");
    ckt_l_help_add(L, "float",
                   "ckt.float(x): an integer expression as f32; on a number, the float of it.");
    ckt_l_help_add(L, "int",
                   "ckt.int(x): an f32 expression as an integer, toward zero; on a number, the "
                   "integer toward zero.");
    ckt_l_help_add(
        L, "select",
        "ckt.select(cond, a, b): a where cond is nonzero (or true), else b, as a kernel expression "
        "(a choice of values, not a branch); on plain values, Lua's choice.");
    ckt_l_help_add(
        L, "cast",
        "ckt.cast(x, dtype): an f32 value rounded through f16 or bf16 (to nearest even), or to an "
        "integer dtype the way ckt.array stores a number (toward zero, NaN -> 0, saturating); on a "
        "number, the value a one-element ckt.array of that dtype holds.");
}
