/* Lua: space-filling curves (ckt.sfc). */
#include <string.h>

#include "ckt/sfc.h"
#include "l_internal.h"

#define CKT_L_SFC "ckt.sfc"

static ckt_sfc *checksfc(lua_State *L, int i) { return luaL_checkudata(L, i, CKT_L_SFC); }

static int l_sfc(lua_State *L)
{
    static const char *const fn = "sfc";
    static const char *const allowed[] = {"lengths", "order", "scalars_per_access", "snake", NULL};
    ckt_l_check_fields(L, 1, fn, allowed);
    int64_t len[CKT_SFC_MAX_DIM], ord[CKT_SFC_MAX_DIM], spa[CKT_SFC_MAX_DIM];
    if (lua_getfield(L, 1, "lengths") == LUA_TNIL)
        return ckt_l_argerror(L, 1, "field 'lengths' is required");
    int n = ckt_l_int_list(L, -1, "sfc: lengths", len, CKT_SFC_MAX_DIM);
    lua_pop(L, 1);
    int have_order = lua_getfield(L, 1, "order") != LUA_TNIL;
    if (have_order && ckt_l_int_list(L, -1, "sfc: order", ord, CKT_SFC_MAX_DIM) != n)
        return ckt_l_errorf(L, "sfc: order must have %d entries like lengths", n);
    lua_pop(L, 1);
    int have_spa = lua_getfield(L, 1, "scalars_per_access") != LUA_TNIL;
    if (have_spa && ckt_l_int_list(L, -1, "sfc: scalars_per_access", spa, CKT_SFC_MAX_DIM) != n)
        return ckt_l_errorf(L, "sfc: scalars_per_access must have %d entries like lengths", n);
    lua_pop(L, 1);
    int snake = 0;
    ckt_l_field_bool(L, 1, fn, "snake", &snake);
    ckt_sfc s;
    ckt_error err;
    if (ckt_sfc_make(n, len, have_order ? ord : NULL, have_spa ? spa : NULL, snake, &s, &err))
        return ckt_l_error(L, &err);
    ckt_l_push_value(L, CKT_L_SFC, &s, sizeof s);
    return 1;
}

static int s_num_access(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)checksfc(L, 1)->num_access);
    return 1;
}
static int s_access_lengths(lua_State *L)
{
    ckt_sfc *s = checksfc(L, 1);
    ckt_l_push_int_list(L, s->access_lengths, s->ndim);
    return 1;
}

/* S:index(i) -> coordinate list, partial (true when the access runs past an edge) */
static int s_index(lua_State *L)
{
    ckt_sfc *s = checksfc(L, 1);
    int64_t c[CKT_SFC_MAX_DIM];
    bool partial;
    ckt_error err;
    if (ckt_sfc_index(s, ckt_l_checkint(L, 2, "i"), c, &partial, &err)) return ckt_l_error(L, &err);
    ckt_l_push_int_list(L, c, s->ndim);
    lua_pushboolean(L, partial);
    return 2;
}

static int step_between(lua_State *L, ckt_sfc *s, int64_t i, int64_t j)
{
    int64_t st[CKT_SFC_MAX_DIM];
    ckt_error err;
    if (ckt_sfc_step(s, i, j, st, &err)) return ckt_l_error(L, &err);
    ckt_l_push_int_list(L, st, s->ndim);
    return 1;
}

static int s_step(lua_State *L)
{
    return step_between(L, checksfc(L, 1), ckt_l_checkint(L, 2, "i"), ckt_l_checkint(L, 3, "j"));
}
static int s_forward(lua_State *L)
{
    int64_t i = ckt_l_checkint(L, 2, "i");
    if (i == INT64_MAX) return ckt_l_errorf(L, "forward_step: i is out of range");
    return step_between(L, checksfc(L, 1), i, i + 1);
}
static int s_backward(lua_State *L)
{
    int64_t i = ckt_l_checkint(L, 2, "i");
    if (i == INT64_MIN) return ckt_l_errorf(L, "backward_step: i is out of range");
    return step_between(L, checksfc(L, 1), i, i - 1);
}

static int iter_next(lua_State *L)
{
    ckt_sfc *s = checksfc(L, 1);
    int64_t i = lua_isnil(L, 2) ? 0 : lua_tointeger(L, 2) + 1;
    if (i >= s->num_access) return 0;
    int64_t c[CKT_SFC_MAX_DIM];
    ckt_sfc_index(s, i, c, NULL, NULL);
    lua_pushinteger(L, (lua_Integer)i);
    ckt_l_push_int_list(L, c, s->ndim);
    return 2;
}

static int s_iter(lua_State *L)
{
    checksfc(L, 1);
    lua_pushcfunction(L, iter_next);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

static int s_locality(lua_State *L)
{
    ckt_sfc *s = checksfc(L, 1);
    int64_t seq = 1, line = 16;
    if (!lua_isnoneornil(L, 2)) {
        static const char *const allowed[] = {"sequential", "cache_line", NULL};
        ckt_l_check_fields(L, 2, "locality", allowed);
        ckt_l_field_int(L, 2, "locality", "sequential", &seq);
        ckt_l_field_int(L, 2, "locality", "cache_line", &line);
    }
    ckt_sfc_locality l;
    ckt_error err;
    if (ckt_sfc_locality_of(s, seq, line, &l, &err)) return ckt_l_error(L, &err);
    lua_createtable(L, 0, 5);
    ckt_l_set_int(L, "sequential", l.sequential);
    ckt_l_set_int(L, "cache_line", l.cache_line);
    ckt_l_set_int(L, "large", l.large);
    ckt_l_set_int(L, "total_distance", l.total_distance);
    ckt_l_set_int(L, "steps", (lua_Integer)(s->num_access > 0 ? s->num_access - 1 : 0));
    return 1;
}

static int s_tostring(lua_State *L)
{
    ckt_sfc *s = checksfc(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "sfc{lengths={");
    for (int i = 0; i < s->ndim; i++) {
        if (i) luaL_addchar(&b, ',');
        lua_pushinteger(L, (lua_Integer)s->lengths[i]);
        luaL_addvalue(&b);
    }
    luaL_addstring(&b, "}, order={");
    for (int i = 0; i < s->ndim; i++) {
        if (i) luaL_addchar(&b, ',');
        lua_pushinteger(L, (lua_Integer)s->order[i]);
        luaL_addvalue(&b);
    }
    luaL_addstring(&b, "}, scalars_per_access={");
    for (int i = 0; i < s->ndim; i++) {
        if (i) luaL_addchar(&b, ',');
        lua_pushinteger(L, (lua_Integer)s->scalars[i]);
        luaL_addvalue(&b);
    }
    luaL_addstring(&b, s->snake ? "}, snake=true, " : "}, snake=false, ");
    lua_pushfstring(L, "%I accesses}", (lua_Integer)s->num_access);
    luaL_addvalue(&b);
    luaL_pushresult(&b);
    return 1;
}

void ckt_l_open_sfc(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_SFC, "__tostring", s_tostring},
                                       {CKT_L_SFC, "num_access", s_num_access},
                                       {CKT_L_SFC, "access_lengths", s_access_lengths},
                                       {CKT_L_SFC, "index", s_index},
                                       {CKT_L_SFC, "step", s_step},
                                       {CKT_L_SFC, "forward_step", s_forward},
                                       {CKT_L_SFC, "backward_step", s_backward},
                                       {CKT_L_SFC, "iter", s_iter},
                                       {CKT_L_SFC, "locality", s_locality},
                                       {CKT_L_MODULE, "sfc", l_sfc},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
}
