/* The Lua module `ckt`: `require "ckt"` from a stock lua5.4, and preloaded by ckt-lua. */
#include "l_internal.h"

int luaopen_ckt(lua_State *L);

static int l_default_target(lua_State *L)
{
    lua_pushstring(L, ckt_context_default_target(ckt_l_context(L)));
    return 1;
}

static int l_set_default_target(lua_State *L)
{
    ckt_error err;
    const char *name = luaL_checkstring(L, 1);
    if (ckt_context_set_default_target(ckt_l_context(L), name, &err)) return ckt_l_error(L, &err);
    return 0;
}

int luaopen_ckt(lua_State *L)
{
    ckt_l_context(L); /* create the engine context early: errors surface at require */
    lua_newtable(L);
    ckt_l_set_string(L, "version", ckt_version());
    ckt_l_set_function(L, "default_target", l_default_target);
    ckt_l_set_function(L, "set_default_target", l_set_default_target);
    ckt_l_open_layout(L);
    ckt_l_open_distribution(L);
    ckt_l_open_nested(L);
    ckt_l_open_sfc(L);
    ckt_l_open_target(L);
    ckt_l_open_lds(L);
    ckt_l_open_array(L);
    ckt_l_open_device(L);
    ckt_l_open_stream(L);
    ckt_l_open_kernel(L);
    ckt_l_open_jit(L);
    ckt_l_open_compile_pool(L);
    ckt_l_open_wgmma(L);
    ckt_l_open_help(L);
    return 1;
}
