/* The Lua module `ckt`: `require "ckt"` from a stock lua5.4, and preloaded by ckt-lua. */
#include "l_internal.h"

int luaopen_ckt(lua_State *L);

int luaopen_ckt(lua_State *L)
{
    ckt_l_context(L); /* create the engine context early: errors surface at require */
    lua_newtable(L);
    lua_pushstring(L, ckt_version());
    lua_setfield(L, -2, "version");
    ckt_l_open_layout(L);
    ckt_l_open_distribution(L);
    ckt_l_open_nested(L);
    ckt_l_open_sfc(L);
    ckt_l_open_lds(L);
    ckt_l_open_array(L);
    ckt_l_open_kernel(L);
    ckt_l_open_help(L);
    return 1;
}
