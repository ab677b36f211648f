#include "l_internal.h"

void ckt_l_open_help(lua_State *L) { (void)L; }
