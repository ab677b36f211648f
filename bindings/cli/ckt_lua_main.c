/* ckt-lua: placeholder main (the full CLI/REPL replaces this). */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>

int luaopen_ckt(lua_State *L);

int main(int argc, char **argv)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    luaL_requiref(L, "ckt", luaopen_ckt, 1);
    lua_pop(L, 1);
    int i = 1;
    if (i < argc && strcmp(argv[i], "--target") == 0) i += 2;
    if (i + 1 < argc + 1 && i < argc && strcmp(argv[i], "-e") == 0) {
        if (luaL_dostring(L, argv[i + 1])) { fprintf(stderr, "%s\n", lua_tostring(L, -1)); return 1; }
        return 0;
    }
    if (i < argc && luaL_dofile(L, argv[i])) { fprintf(stderr, "%s\n", lua_tostring(L, -1)); return 1; }
    lua_close(L);
    return 0;
}
