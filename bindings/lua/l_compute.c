/* ckt Lua bindings — compute on register tensors: b:clear, b:map, ckt.sweep, b:reduce, b:fold,
 * b:block_reduce, b:broadcast. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_kernel.h"

/* b:clear(reg [, value]) */
static int b_clear(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "clear");
    l_kobj *r = ckt_lk_checkreg(L, 2, kb, NULL);
    double v = luaL_optnumber(L, 3, 0.0);
    ckt_error err;
    if (ckt_kernel_clear(kb->k, r->id, (float)v, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* coords = true: the rank of the map's tile (the first input of more than one value per thread,
 * else input 1), whose coordinates the function receives after the inputs */
static int coords_rank(lua_State *L, l_kernel *kb, int nin, const int *inputs, const char *fn)
{
    const ckt_ktensor *t = ckt_kernel_tensor(kb->k, inputs[0]);
    for (int i = 0; i < nin; i++)
        if (ckt_kernel_tensor(kb->k, inputs[i])->nvalues > 1) {
            t = ckt_kernel_tensor(kb->k, inputs[i]);
            break;
        }
    if (t->dist < 0)
        return ckt_l_errorf(
            L, "%s: coords needs a distributed input (the values' tile coordinates)", fn);
    return ckt_kernel_dist(kb->k, t->dist)->rank;
}

/* the map, with the coordinates (ckt_kernel_map_coords) or without */
static ckt_status map_call(ckt_kernel *k, int nin, const int *inputs, ckt_expr_id e, ckt_dtype out,
                           int into, int coords, int *r, ckt_error *err)
{
    if (coords) return ckt_kernel_map_coords(k, nin, inputs, e, out, into, r, err);
    if (into >= 0) return ckt_kernel_map_into(k, nin, inputs, e, into, err);
    return ckt_kernel_map(k, nin, inputs, e, out, r, err);
}

/* b:map(fn, reg1 [, reg2 ...] [, {dtype=}]) -> reg: out[v] = fn(reg1[v], reg2[v], ...), the
 * arithmetic in f32; stored as dtype (default: reg1's). {into = reg}: written into that existing
 * register tensor (same distribution; it may be an input): loop-carried state; returns it.
 * An input of one value per thread is the thread's scalar for every value. {coords = true}: fn
 * also receives the value's integer coordinates in the tile, one per dimension, after the
 * inputs. */
static int map_regs(lua_State *L, l_kernel *kb, int ki, int fi, int first, int last, const char *fn)
{
    int nin = last - first + 1;
    ckt_dtype out = CKT_F32;
    int into = -1, into_idx = 0, coords = 0;
    if (nin >= 1 && lua_istable(L, last) && !luaL_testudata(L, last, CKT_L_KTENSOR)) {
        static const char *const allowed[] = {"dtype", "into", "coords", NULL};
        ckt_l_check_fields(L, last, fn, allowed);
        ckt_l_field_bool(L, last, fn, "coords", &coords);
        if (lua_getfield(L, last, "dtype") != LUA_TNIL)
            out = ckt_l_checkdtype(L, -1, "map: dtype");
        else
            out = (ckt_dtype)-1;
        lua_pop(L, 1);
        if (lua_getfield(L, last, "into") != LUA_TNIL) {
            if ((int)out >= 0)
                return ckt_l_errorf(L,
                                    "%s: into and dtype exclude each other (the "
                                    "result takes into's dtype)",
                                    fn);
            into = ckt_lk_checkreg(L, lua_gettop(L), kb, "into")->id;
        }
        lua_pop(L, 1);
        if (into >= 0) {
            lua_getfield(L, last, "into");
            into_idx = lua_gettop(L);
        }
        nin--;
    } else {
        out = (ckt_dtype)-1;
    }
    if (nin < 1 || nin > CKT_K_MAX_INPUTS)
        return ckt_l_errorf(L, "%s: 1 to %d register tensors", fn, CKT_K_MAX_INPUTS);
    int inputs[CKT_K_MAX_INPUTS];
    ckt_expr_pool *ex = ckt_kernel_exprs(kb->k);
    for (int i = 0; i < nin; i++) {
        char what[48];
        snprintf(what, sizeof what, "input %d", i + 1);
        inputs[i] = ckt_lk_checkreg(L, first + i, kb, what)->id;
    }
    if ((int)out < 0) out = ckt_kernel_tensor(kb->k, inputs[0])->dtype;
    int rank = coords ? coords_rank(L, kb, nin, inputs, fn) : 0;
    lua_pushvalue(L, fi);
    for (int i = 0; i < nin; i++) { /* integer registers are integer values, as in Lua */
        ckt_dtype dt = ckt_kernel_tensor(kb->k, inputs[i])->dtype;
        bool integral = dt == CKT_I32 || dt == CKT_I8 || dt == CKT_U8 || dt == CKT_I64;
        ckt_lk_push_expr(L, kb, ki, integral ? ckt_expr_input_int(ex, i) : ckt_expr_input(ex, i));
    }
    for (int r = 0; r < rank; r++) ckt_lk_push_expr(L, kb, ki, ckt_expr_input_int(ex, nin + r));
    lua_call(L, nin + rank, 1);
    ckt_expr_id e = ckt_lk_toexpr(L, -1, kb, "map: the function's result");
    lua_pop(L, 1);
    ckt_lk_mark_line(L, kb);
    int r;
    ckt_error err;
    if (into >= 0) {
        if (map_call(kb->k, nin, inputs, e, out, into, coords, &r, &err))
            return ckt_l_error(L, &err);
        lua_pushvalue(L, into_idx);
        return 1;
    }
    if (map_call(kb->k, nin, inputs, e, out, -1, coords, &r, &err)) return ckt_l_error(L, &err);
    ckt_lk_newobj(L, kb, ki, CKT_L_KTENSOR, r);
    return 1;
}

static int b_map(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "map");
    luaL_checktype(L, 2, LUA_TFUNCTION);
    return map_regs(L, kb, 1, 2, 3, lua_gettop(L), "map");
}

/* ckt.sweep(reg, fn [, {dtype=}]): fn over every value a thread holds (CK Tile's sweep_tile) */
static int l_sweep(lua_State *L)
{
    l_kobj *r = ckt_lk_checktensor(L, 1, NULL);
    ckt_lk_require_building(L, r->kb, "sweep");
    luaL_checktype(L, 2, LUA_TFUNCTION);
    int top = lua_gettop(L);
    ckt_lk_push_owner(L, 1);
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
 * op over the thread's values (and, with block=true, over the whole block);
 * b:reduce(reg, op, {dim = d [, dtype=]}) -> a register tensor in reg's distribution whose value v
 * is op over the elements of reg's tile on value v's line along dim d (0-based): the row max /
 * row sum of an accumulator fragment with dim = 1, held by every lane that holds the row */
static int b_reduce(lua_State *L)
{
    static const char *const allowed[] = {"block", "dtype", "dim", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, "reduce");
    l_kobj *src = ckt_lk_checkreg(L, 2, kb, NULL);
    ckt_reduce_op op = checkreduce(L, 3, "reduce");
    int block = 0, dim = -1;
    ckt_dtype dt = CKT_F32;
    if (!lua_isnoneornil(L, 4)) {
        ckt_l_check_fields(L, 4, "reduce", allowed);
        ckt_l_field_bool(L, 4, "reduce", "block", &block);
        if (lua_getfield(L, 4, "dtype") != LUA_TNIL) dt = ckt_l_checkdtype(L, -1, "reduce: dtype");
        lua_pop(L, 1);
        if (lua_getfield(L, 4, "dim") != LUA_TNIL) {
            if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0 ||
                lua_tointeger(L, -1) >= CKT_K_MAX_RANK)
                return ckt_l_errorf(L, "reduce: dim must be an integer in 0..%d",
                                    CKT_K_MAX_RANK - 1);
            dim = (int)lua_tointeger(L, -1);
        }
        lua_pop(L, 1);
    }
    int acc;
    ckt_error err;
    if (dim >= 0) {
        if (block) return ckt_l_errorf(L, "reduce: dim and block exclude each other");
        if (ckt_kernel_reduce_dim(kb->k, src->id, dim, op, dt, &acc, &err))
            return ckt_l_error(L, &err);
        ckt_lk_newobj(L, kb, 1, CKT_L_KTENSOR, acc);
        return 1;
    }
    float init = op == CKT_REDUCE_SUM ? 0.0f : op == CKT_REDUCE_MAX ? -INFINITY : INFINITY;
    if (ckt_kernel_registers(kb->k, dt, -1, 1, &acc, &err) ||
        ckt_kernel_clear(kb->k, acc, init, &err) || ckt_kernel_fold(kb->k, acc, src->id, op, &err))
        return ckt_l_error(L, &err);
    if (block && ckt_kernel_block_reduce(kb->k, acc, op, &err)) return ckt_l_error(L, &err);
    ckt_lk_newobj(L, kb, 1, CKT_L_KTENSOR, acc);
    return 1;
}

/* b:broadcast(src, like, {dim = d}) -> a register tensor in like's distribution whose value at an
 * element is src's value on the element's line along d (src constant along d: a row statistic
 * from b:reduce{dim =}), taken from the thread's own registers */
static int b_broadcast(lua_State *L)
{
    static const char *const allowed[] = {"dim", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, "broadcast");
    l_kobj *src = ckt_lk_checkreg(L, 2, kb, "src"), *like = ckt_lk_checkreg(L, 3, kb, "like");
    luaL_checktype(L, 4, LUA_TTABLE);
    ckt_l_check_fields(L, 4, "broadcast", allowed);
    lua_getfield(L, 4, "dim");
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0 || lua_tointeger(L, -1) >= CKT_K_MAX_RANK)
        return ckt_l_errorf(L, "broadcast: dim must be an integer in 0..%d", CKT_K_MAX_RANK - 1);
    int dim = (int)lua_tointeger(L, -1), out;
    lua_pop(L, 1);
    ckt_error err;
    if (ckt_kernel_broadcast(kb->k, src->id, like->id, dim, &out, &err))
        return ckt_l_error(L, &err);
    ckt_lk_newobj(L, kb, 1, CKT_L_KTENSOR, out);
    return 1;
}

/* b:fold(acc, src, op), b:block_reduce(acc, op): the two steps of reduce, on your accumulator */
static int b_fold(lua_State *L)
{
    l_kernel *kb = ckt_lk_checkbuilder(L, "fold");
    l_kobj *acc = ckt_lk_checkreg(L, 2, kb, "accumulator"),
           *src = ckt_lk_checkreg(L, 3, kb, "source");
    ckt_error err;
    if (ckt_kernel_fold(kb->k, acc->id, src->id, checkreduce(L, 4, "fold"), &err))
        return ckt_l_error(L, &err);
    return 0;
}

/* b:block_reduce(acc, op [, {threads = n}]): without options the LDS tree over the block (one
 * value per thread); with threads, lane shuffles over each group of n consecutive threads, every
 * value of acc reduced on its own and every thread of the group getting the result.
 * b:block_reduce(maxima, "softmax", {threads = n, sum = sums}): the online softmax's (maximum,
 * sum of exp(x - maximum)) pairs over the group, both tensors updated */
static int b_block_reduce(lua_State *L)
{
    static const char *const allowed[] = {"threads", "sum", NULL};
    l_kernel *kb = ckt_lk_checkbuilder(L, "block_reduce");
    l_kobj *acc = ckt_lk_checkreg(L, 2, kb, "accumulator");
    ckt_reduce_op op = checkreduce(L, 3, "block_reduce");
    ckt_error err;
    if (lua_isnoneornil(L, 4)) {
        if (ckt_kernel_block_reduce(kb->k, acc->id, op, &err)) return ckt_l_error(L, &err);
        return 0;
    }
    luaL_checktype(L, 4, LUA_TTABLE);
    ckt_l_check_fields(L, 4, "block_reduce", allowed);
    lua_getfield(L, 4, "threads");
    if (!lua_isinteger(L, -1))
        return ckt_l_errorf(L, "block_reduce: threads must be an integer (a power of two)");
    lua_Integer n = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (lua_getfield(L, 4, "sum") != LUA_TNIL) {
        if (op != CKT_REDUCE_SOFTMAX)
            return ckt_l_errorf(L, "block_reduce: sum = is the sums of 'softmax' pairs only");
        l_kobj *sums = ckt_lk_checkreg(L, lua_absindex(L, -1), kb, "sum");
        if (ckt_kernel_group_reduce_softmax(kb->k, acc->id, sums->id, (int64_t)n, &err))
            return ckt_l_error(L, &err);
        lua_pop(L, 1);
        return 0;
    }
    lua_pop(L, 1);
    if (ckt_kernel_group_reduce(kb->k, acc->id, op, (int64_t)n, &err)) return ckt_l_error(L, &err);
    return 0;
}

void ckt_lk_open_compute(lua_State *L)
{
    static const ckt_l_entry rows[] = {
        {CKT_L_KERNEL, "clear", b_clear},         {CKT_L_KERNEL, "map", b_map},
        {CKT_L_KERNEL, "reduce", b_reduce},       {CKT_L_KERNEL, "fold", b_fold},
        {CKT_L_KERNEL, "broadcast", b_broadcast}, {CKT_L_KERNEL, "block_reduce", b_block_reduce},
        {CKT_L_MODULE, "sweep", l_sweep},         {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    ckt_l_help_add(L, "sweep",
                   "ckt.sweep(reg, fn [, {dtype=}]): fn over every value a thread holds in "
                   "register tensor reg, a new register tensor of the results (CK Tile's "
                   "sweep_tile; b:map(fn, reg) is the same).");
}
