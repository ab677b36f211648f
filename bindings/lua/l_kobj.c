/* ckt Lua bindings — the objects of a kernel being built (expressions, tensors, windows,
 * partitions, mbarrier sets): userdata of class tname holding an id into the kernel, whose first
 * user value keeps the kernel alive. Every file of the builder (l_kernel.h) makes them here. */
#include "l_kernel.h"

l_kobj *ckt_lk_newobj(lua_State *L, l_kernel *kb, int kidx, const char *tname, int id)
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
void ckt_lk_push_owner(lua_State *L, int idx) { lua_getiuservalue(L, idx, 1); }
