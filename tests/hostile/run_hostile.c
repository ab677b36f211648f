/* Runs hostile scripts in one sandboxed state with tight caps (16 MiB, 10^8 instructions,
 * 20 s): run_hostile script.lua... Each script must finish (a result, or its own assertion
 * errors); the state's memory cap is visible to them as the global MEMORY_LIMIT. */
#include <stdio.h>

#include "ckt_lua.h"

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: run_hostile script.lua...\n"); return 2; }
    ckt_lua_options o = {.sandbox = 1, .memory_limit = 16u << 20, .instruction_limit = 100000000ull, .time_limit = 20};
    ckt_lua *s;
    ckt_error err;
    if (ckt_lua_open(&o, &s, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    char set[64];
    snprintf(set, sizeof set, "MEMORY_LIMIT = %zu", o.memory_limit);
    int rc = ckt_lua_run_string(s, set, "=setup", &err) == CKT_OK ? 0 : 1;
    for (int i = 1; i < argc && !rc; i++) {
        if (ckt_lua_run_file(s, argv[i], &err) != CKT_OK) { fprintf(stderr, "%s\n", err.msg); rc = 1; }
    }
    ckt_lua_close(s);
    if (!rc) printf("hostile scripts survived: %d\n", argc - 1);
    return rc;
}
