#include "l_internal.h"

void ckt_l_open_kernel(lua_State *L) { (void)L; }
