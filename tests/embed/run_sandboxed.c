/* Runs a script in a sandboxed embedding state (used for the Lua API fuzzer under ASan). */
#include <stdio.h>

#include "ckt_lua.h"

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: run_sandboxed script.lua\n"); return 2; }
    ckt_lua_options o = {.sandbox = 1, .memory_limit = 512u << 20, .instruction_limit = 4000000000ull, .time_limit = 600};
    ckt_lua *s;
    ckt_error err;
    if (ckt_lua_open(&o, &s, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    int rc = ckt_lua_run_file(s, argv[1], &err) == CKT_OK ? 0 : 1;
    if (rc) fprintf(stderr, "%s\n", err.msg);
    ckt_lua_close(s);
    return rc;
}
