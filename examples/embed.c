/* A host application that runs untrusted ckt scripts in a sandbox and keeps serving.
 * Usage: embed [script.lua]   (without a script: a built-in demonstration) */
#include <stdio.h>

#include <ckt/ckt_lua.h>

int main(int argc, char **argv)
{
    ckt_lua_options opts = {
        .sandbox = 1, .memory_limit = 64u << 20, .instruction_limit = 50000000, .time_limit = 10.0};
    ckt_lua *s;
    ckt_error err;
    if (ckt_lua_open(&opts, &s, &err) != CKT_OK) {
        fprintf(stderr, "embed: %s\n", err.msg);
        return 1;
    }
    int rc = 0;
    if (argc > 1) {
        if (ckt_lua_run_file(s, argv[1], &err) != CKT_OK) {
            fprintf(stderr, "embed: %s\n", err.msg);
            rc = 1;
        }
    } else {
        /* a kernel whose LDS window the script puts far out of range is refused, not run */
        static const char *const lds_far =
            "local k = ckt.kernel{name = 'far', block = 64, build = function(b)\n"
            "  local w = ckt.tile_window(ckt.tensor('lds', 'f32', ckt.layout{64}), {64}, "
            "{b:size('o')})\n"
            "  w:store(w:load())\n"
            "end}\n"
            "k:compile{target = 'cpu'}:launch{grid = 1, o = 1 << 30}";
        if (ckt_lua_run_string(s, lds_far, "=hostile_launch", &err) == CKT_OK)
            rc = 1;
        else
            printf("refused: %.120s\n", err.msg);
        /* a hostile script is stopped (catching the refusal with pcall does not help), then the
         * same state answers a normal one */
        if (ckt_lua_run_string(s, "pcall(function() while true do end end)", "=hostile", &err) ==
            CKT_OK)
            rc = 1;
        else
            printf("stopped: %s\n", err.msg);
        if (ckt_lua_run_string(
                s,
                "print('ckt ' .. ckt.version .. ': ' .. "
                "tostring(ckt.composition(ckt.layout'(4,3):(3,1)', ckt.layout'6:2')))",
                "=normal", &err) != CKT_OK) {
            fprintf(stderr, "embed: %s\n", err.msg);
            rc = 1;
        }
    }
    ckt_lua_close(s);
    return rc;
}
