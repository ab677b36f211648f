#include "l_internal.h"

void ckt_l_open_lds(lua_State *L) { (void)L; }
