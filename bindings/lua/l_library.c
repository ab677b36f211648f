/* ckt Lua bindings — the kernel library: require "ckt.kernels.<name>" loads kernels/<name>.lua,
 * embedded at build time; a package is a directory: "ckt.kernels.gemm" is kernels/gemm/init.lua,
 * "ckt.kernels.gemm.plan" kernels/gemm/plan.lua. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embedded.h"
#include "l_kernel.h"

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
void ckt_lk_open_library(lua_State *L)
{
    int top = lua_gettop(L);
    if (lua_getglobal(L, "package") != LUA_TTABLE ||
        lua_getfield(L, -1, "preload") != LUA_TTABLE) { /* a sandbox without require */
        lua_settop(L, top);
        return;
    }
    for (int i = 0; ckt_embedded_kernels[i].name; i++) {
        char mod[96];
        snprintf(mod, sizeof mod, "ckt.kernels.%s", ckt_embedded_kernels[i].name);
        char *dot = strrchr(mod, '.');
        if (dot && !strcmp(dot, ".lua")) *dot = 0;
        for (char *c = mod; *c; c++)
            if (*c == '/') *c = '.';
        dot = strrchr(mod, '.');
        if (dot && !strcmp(dot, ".init")) *dot = 0;
        lua_pushinteger(L, i);
        lua_pushcclosure(L, load_library_module, 1);
        lua_setfield(L, -2, mod);
    }
    lua_settop(L, top);
}
