#include "l_internal.h"

void ckt_l_open_layout(lua_State *L) { (void)L; }
