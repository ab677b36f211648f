/* Lua: IREE nested layouts (ckt.nested_layout). */
#include <stdio.h>
#include <string.h>

#include "ckt/distribution.h"
#include "ckt/nested.h"
#include "l_internal.h"

#define CKT_L_NESTED "ckt.nested_layout"

static ckt_nested *checknested(lua_State *L, int i) { return luaL_checkudata(L, i, CKT_L_NESTED); }

static int l_nested(lua_State *L)
{
    static const char *const fn = "nested_layout";
    static const char *const fields[] = {"subgroup_tile",  "batch_tile",    "outer_tile",
                                         "thread_tile",    "element_tile",  "subgroup_strides",
                                         "thread_strides", "subgroup_size", NULL};
    ckt_l_check_fields(L, 1, fn, fields);
    ckt_nested n;
    memset(&n, 0, sizeof n);
    int64_t *dst[] = {n.subgroup_tile, n.batch_tile,       n.outer_tile,    n.thread_tile,
                      n.element_tile,  n.subgroup_strides, n.thread_strides};
    int rank = -1;
    for (int f = 0; f < 7; f++) {
        char what[64];
        snprintf(what, sizeof what, "%s: %s", fn, fields[f]);
        if (lua_getfield(L, 1, fields[f]) == LUA_TNIL)
            return ckt_l_argerror(L, 1, "field '%s' is required", fields[f]);
        int64_t v[CKT_NESTED_MAX_RANK];
        if (lua_type(L, -1) == LUA_TTABLE && luaL_len(L, -1) > CKT_NESTED_MAX_RANK)
            return ckt_l_errorf(L, "%s: %s has %lld entries: rank %lld is beyond the capacity %d",
                                fn, fields[f], (long long)luaL_len(L, -1),
                                (long long)luaL_len(L, -1), CKT_NESTED_MAX_RANK);
        int k = ckt_l_int_list(L, -1, what, v, CKT_NESTED_MAX_RANK);
        lua_pop(L, 1);
        if (rank >= 0 && k != rank)
            return ckt_l_errorf(L,
                                "%s: all fields must have the same rank as the layout: %s has %d "
                                "entries, %s has %d",
                                fn, fields[f], k, fields[0], rank);
        rank = k;
        memcpy(dst[f], v, sizeof(int64_t) * (size_t)k);
    }
    n.rank = rank;
    if (ckt_l_field_int(L, 1, fn, "subgroup_size", &n.subgroup_size) && n.subgroup_size <= 0)
        return ckt_l_errorf(L, "%s: subgroup_size is %lld, must be positive", fn,
                            (long long)n.subgroup_size);
    ckt_nested out;
    ckt_error err;
    if (ckt_nested_make(&n, &out, &err)) return ckt_l_error(L, &err);
    ckt_l_pushnested(L, &out);
    return 1;
}

void ckt_l_pushnested(lua_State *L, const ckt_nested *n)
{
    ckt_l_push_value(L, CKT_L_NESTED, n, sizeof *n);
}

/* The three shapes of a nested layout: per_mode entries a mode, filled by the engine. */
static int push_shape(lua_State *L, void (*fill)(const ckt_nested *, int64_t *), int per_mode)
{
    ckt_nested *n = checknested(L, 1);
    int64_t s[5 * CKT_NESTED_MAX_RANK];
    fill(n, s);
    ckt_l_push_int_list(L, s, per_mode * n->rank);
    return 1;
}
static int n_undistributed(lua_State *L)
{
    return push_shape(L, ckt_nested_undistributed_shape, 1);
}
static int n_packed(lua_State *L) { return push_shape(L, ckt_nested_packed_shape, 5); }
static int n_distributed(lua_State *L) { return push_shape(L, ckt_nested_distributed_shape, 3); }

/* An optional subgroup size: an integer or {subgroup_size = n}; 0 when absent (the layout's own).
 */
static int64_t subgroup_size_arg(lua_State *L, int idx, const char *fn)
{
    int64_t s = 0;
    if (lua_isnoneornil(L, idx)) return 0;
    if (lua_istable(L, idx)) {
        static const char *const allowed[] = {"subgroup_size", NULL};
        ckt_l_check_fields(L, idx, fn, allowed);
        if (!ckt_l_field_int(L, idx, fn, "subgroup_size", &s)) return 0;
    } else {
        char what[64];
        snprintf(what, sizeof what, "%s: subgroup_size", fn);
        s = ckt_l_checkint(L, idx, what);
    }
    if (s <= 0)
        return ckt_l_errorf(L, "%s: subgroup_size is %lld, must be positive", fn, (long long)s);
    return s;
}

static int n_elements(lua_State *L)
{
    ckt_nested *n = checknested(L, 1);
    int64_t tid = ckt_l_checkint(L, 2, "tid");
    int64_t sgs = subgroup_size_arg(L, 3, "elements");
    int64_t nv = ckt_nested_values_per_thread(n);
    if (nv > (1 << 22))
        return ckt_l_errorf(L, "elements: %lld values per thread is too many", (long long)nv);
    int64_t *c = lua_newuserdatauv(L, sizeof(int64_t) * (size_t)(nv * n->rank), 0);
    ckt_error err;
    if (ckt_nested_elements(n, tid, sgs, c, &err)) return ckt_l_error(L, &err);
    lua_createtable(L, (int)nv, 0);
    for (int64_t v = 0; v < nv; v++) {
        ckt_l_push_int_list(L, c + v * n->rank, n->rank);
        lua_rawseti(L, -2, v + 1);
    }
    return 1;
}

static int n_num_threads(lua_State *L)
{
    ckt_nested *n = checknested(L, 1);
    int64_t t;
    ckt_error err;
    if (ckt_nested_num_threads(n, subgroup_size_arg(L, 2, "num_threads"), &t, &err))
        return ckt_l_error(L, &err);
    lua_pushinteger(L, (lua_Integer)t);
    return 1;
}

static int n_values_per_thread(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ckt_nested_values_per_thread(checknested(L, 1)));
    return 1;
}

static int n_tv_layout(lua_State *L)
{
    ckt_nested *n = checknested(L, 1);
    ckt_layout tv;
    ckt_error err;
    if (ckt_nested_tv_layout(n, subgroup_size_arg(L, 2, "tv_layout"), &tv, &err))
        return ckt_l_error(L, &err);
    ckt_l_pushlayout(L, &tv);
    return 1;
}

CKT_L_TOSTRING(n_tostring, checknested, ckt_nested_to_string)

static int n_draw(lua_State *L)
{
    int svg = ckt_l_svg(L);
    ckt_nested *n = checknested(L, 1);
    if (n->rank != 2)
        return ckt_l_errorf(L, "grid: only rank-2 nested layouts can be drawn (rank %d)", n->rank);
    int64_t s[2];
    ckt_nested_undistributed_shape(n, s);
    ckt_layout tv;
    ckt_error err;
    int opts = ckt_l_draw_opts(L, 2, svg, "subgroup_size");
    int64_t sgs = 0;
    if (opts && ckt_l_field_int(L, opts, svg ? "svg" : "grid", "subgroup_size", &sgs) && sgs <= 0)
        return ckt_l_errorf(L, "%s: subgroup_size is %lld, must be positive", svg ? "svg" : "grid",
                            (long long)sgs);
    if (ckt_nested_tv_layout(n, sgs, &tv, &err)) return ckt_l_error(L, &err);
    char title[1024];
    ckt_nested_to_string(n, title, sizeof title);
    return ckt_l_draw_tv(L, &tv, s[0], s[1], title, svg, opts);
}

void ckt_l_open_nested(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_NESTED, "__tostring", n_tostring},
                                       {CKT_L_NESTED, "undistributed_shape", n_undistributed},
                                       {CKT_L_NESTED, "packed_shape", n_packed},
                                       {CKT_L_NESTED, "distributed_shape", n_distributed},
                                       {CKT_L_NESTED, "elements", n_elements},
                                       {CKT_L_NESTED, "num_threads", n_num_threads},
                                       {CKT_L_NESTED, "values_per_thread", n_values_per_thread},
                                       {CKT_L_NESTED, "tv_layout", n_tv_layout},
                                       {CKT_L_NESTED, "grid", n_draw},
                                       {CKT_L_NESTED, "svg", n_draw},
                                       {CKT_L_MODULE, "nested_layout", l_nested},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    ckt_l_help_add(
        L, "nested_layout",
        "ckt.nested_layout{subgroup_tile=, batch_tile=, outer_tile=, thread_tile=, element_tile=,\n"
        "  subgroup_strides=, thread_strides= [, subgroup_size=64]}: an IREE nested layout, "
        "normalised and verified.\n"
        "Methods: N:undistributed_shape() N:packed_shape() N:distributed_shape() N:num_threads() "
        "N:values_per_thread()\n"
        "N:elements(tid [, subgroup_size]) N:tv_layout([subgroup_size]) N:grid() N:svg{title=, "
        "cell=, subgroup_size=}.");
}
