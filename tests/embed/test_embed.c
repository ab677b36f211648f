/* Embedding API: sandbox refusals, memory cap, instruction budget, time limit; the host
 * keeps running and the same state serves a normal script afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "ckt_lua.h"

static ckt_lua *open_sandbox(void)
{
    ckt_lua_options o = {.sandbox = 1, .memory_limit = 32u << 20, .instruction_limit = 20000000, .time_limit = 20.0};
    ckt_lua *s = NULL;
    ckt_error err;
    assert_int_equal(ckt_lua_open(&o, &s, &err), CKT_OK);
    return s;
}

static void expect_error(ckt_lua *s, const char *code, const char *needle, ckt_status want)
{
    ckt_error err;
    ckt_status st = ckt_lua_run_string(s, code, "=t", &err);
    if (st == CKT_OK) fail_msg("'%s' ran without error", code);
    if (want != CKT_OK) assert_int_equal(st, want);
    if (!strstr(err.msg, needle)) fail_msg("'%s': message '%s' lacks '%s'", code, err.msg, needle);
}

static void expect_ok(ckt_lua *s, const char *code)
{
    ckt_error err;
    if (ckt_lua_run_string(s, code, "=t", &err) != CKT_OK) fail_msg("'%s' failed: %s", code, err.msg);
}

static void sandbox_refuses_dangerous_functions(void **state)
{
    (void)state;
    ckt_lua *s = open_sandbox();
    expect_error(s, "io.open('/etc/passwd')", "io", CKT_ERUNTIME);
    expect_error(s, "os.execute('true')", "sandbox", CKT_ERUNTIME);
    expect_error(s, "os.remove('/tmp/x')", "sandbox", CKT_ERUNTIME);
    expect_error(s, "require('lpeg')", "sandbox: module 'lpeg' is not preloaded, and Lua files and C modules are not loaded", CKT_ERUNTIME);
    expect_error(s, "require('socket.core')", "C modules are not loaded in a sandboxed state", CKT_ERUNTIME);
    expect_error(s, "package.cpath = '/usr/lib/x86_64-linux-gnu/lua/5.4/?.so' require('lpeg')", "sandbox", CKT_ERUNTIME);
    expect_error(s, "io.write('x')", "attempt to index a nil value (global 'io')", CKT_ERUNTIME);
    expect_error(s, "os.exit(3)", "sandbox: os.exit is not available", CKT_ERUNTIME);
    expect_error(s, "os.getenv('HOME')", "sandbox: os.getenv is not available", CKT_ERUNTIME);
    expect_error(s, "loadfile('/etc/passwd')", "sandbox: loadfile is not available", CKT_ERUNTIME);
    expect_error(s, "assert(load('\\27LuaT\\0', 'x', 'b'))", "attempt to load a binary chunk (mode is 't')", CKT_ERUNTIME);
    expect_error(s, "string.dump(print)", "attempt to call a nil value (field 'dump')", CKT_ERUNTIME);
    expect_error(s, "collectgarbage('generational')", "sandbox", CKT_ERUNTIME);
    expect_error(s, "collectgarbage('setpause', 1000)", "sandbox", CKT_ERUNTIME);
    expect_error(s, "package.loadlib('/lib/x86_64-linux-gnu/libc.so.6', 'system')", "sandbox", CKT_ERUNTIME);
    expect_error(s, "dofile('/etc/passwd')", "sandbox", CKT_ERUNTIME);
    expect_error(s, "assert(load('\\27Lua'))", "binary", CKT_ERUNTIME);
    expect_error(s, "debug.getinfo(1)", "debug", CKT_ERUNTIME);
    expect_error(s, "collectgarbage('stop')", "sandbox", CKT_ERUNTIME);
    expect_ok(s, "assert(require('ckt') == ckt); assert(tostring(ckt.layout{4,8}) == '(4,8):(1,4)')");
    expect_ok(s, "assert(load('return 1 + 1')() == 2)");
    expect_ok(s, "assert(type(os.time()) == 'number' and type(os.clock()) == 'number' and math.sqrt(4) == 2)");
    expect_ok(s, "assert(collectgarbage('count') > 0)");
    expect_ok(s, "assert(package.loaded.io == nil and package.loaded.debug == nil and debug == nil)");
    ckt_lua_close(s);
}

static void caps_stop_runaway_scripts_and_the_state_recovers(void **state)
{
    (void)state;
    ckt_lua *s = open_sandbox();
    size_t base = ckt_lua_memory_used(s);
    /* a 2 GiB allocation loop */
    expect_error(s, "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1 << 20) .. i end", "memory limit", CKT_ELIMIT);
    expect_error(s, "local s = 'x' while true do s = s .. s end", "memory limit", CKT_ELIMIT);
    /* an infinite loop, also one that tries to pcall its way past the budget */
    expect_error(s, "while true do end", "instruction budget", CKT_ELIMIT);
    expect_error(s, "while true do pcall(function() while true do end end) end", "instruction budget", CKT_ELIMIT);
    /* ... or hide in coroutines, one created in an earlier run included */
    /* (under valgrind the wall-clock limit may come first: either limit is the right answer) */
    expect_error(s, "coroutine.wrap(function() while true do end end)()", "exceeded", CKT_ELIMIT);
    expect_error(s, "while true do coroutine.resume(coroutine.create(function() while true do end end)) end", "exceeded", CKT_ELIMIT);
    expect_ok(s, "co = coroutine.create(function() coroutine.yield() while true do end end) coroutine.resume(co)");
    expect_error(s, "while true do coroutine.resume(co) end", "exceeded", CKT_ELIMIT);
    expect_ok(s, "co = nil");
    expect_error(s, "local t = {} while true do t[#t + 1] = coroutine.create(print) end", "memory limit", CKT_ELIMIT);
    /* deep recursion ends in Lua's stack overflow or in the memory cap, whichever comes first */
    ckt_error e;
    assert_int_not_equal(ckt_lua_run_string(s, "local function f(n) return 1 + f(n + 1) end f(1)", "=t", &e), CKT_OK);
    assert_true(strstr(e.msg, "stack overflow") || strstr(e.msg, "memory limit"));
    /* the same state still answers correctly and its memory came back */
    expect_ok(s, "x = tostring(ckt.composition(ckt.layout'(4,3):(3,1)', ckt.layout'6:2')); assert(x == '(2,3):(6,1)', x)");
    expect_ok(s, "x = nil collectgarbage() collectgarbage()");
    if (ckt_lua_memory_used(s) > base + (2u << 20)) fail_msg("memory grew from %zu to %zu bytes", base, ckt_lua_memory_used(s));
    ckt_lua_close(s);
}

static void time_limit_stops_a_slow_script(void **state)
{
    (void)state;
    ckt_lua_options o = {.sandbox = 1, .time_limit = 0.3};
    ckt_lua *s;
    ckt_error err;
    assert_int_equal(ckt_lua_open(&o, &s, &err), CKT_OK);
    expect_error(s, "while true do end", "sandbox: time limit of 0.3", CKT_ELIMIT);
    expect_error(s, "while true do pcall(function() while true do end end) end", "time limit", CKT_ELIMIT);
    expect_ok(s, "local n = 0 for i = 1, 1000 do n = n + i end assert(n == 500500)"); /* each run has its own clock */
    ckt_lua_close(s);
}

static void trusted_state_has_the_standard_libraries_and_the_kernel_path(void **state)
{
    (void)state;
    ckt_lua_options o = {.target = "cpu:gfx90a"};
    ckt_lua *s;
    ckt_error err;
    assert_int_equal(ckt_lua_open(&o, &s, &err), CKT_OK);
    expect_ok(s, "assert(io.write and os.getenv and debug.traceback and string.dump)");
    expect_ok(s, "assert(package.path:find('/kernels/?.lua', 1, true))");
    expect_ok(s, "assert(ckt.default_target() == 'cpu:gfx90a', ckt.default_target())");
    /* errors carry the chunk name, the line and a traceback */
    ckt_status st = ckt_lua_run_string(s, "\nlocal t = nil\nreturn t.x", "=host", &err);
    assert_int_equal(st, CKT_ERUNTIME);
    assert_non_null(strstr(err.msg, "host:3: attempt to index a nil value"));
    assert_non_null(strstr(err.msg, "stack traceback:"));
    st = ckt_lua_run_string(s, "error({})", "=host", &err);
    assert_non_null(strstr(err.msg, "error object is a table value"));
    ckt_lua_close(s);
}

static void ckt_joins_an_existing_state(void **state)
{
    (void)state;
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    assert_int_equal(ckt_lua_openlib(L), 1);
    lua_pop(L, 1);
    assert_int_equal(luaL_dostring(L, "assert(ckt == require('ckt')) assert(type(help) == 'function')"
                                      "return tostring(ckt.zipped_divide(ckt.layout{8, 16}, {4, 8}))"), LUA_OK);
    assert_string_equal(lua_tostring(L, -1), "((4,8),(2,2)):((1,8),(4,64))");
    lua_close(L);
}

static void targets_are_checked(void **state)
{
    (void)state;
    ckt_error err;
    static const char *good[] = {"cpu", "cpu:gfx90a", "cpu:sm_90", "gfx90a", "gfx942", "sm_80", "gfx1100", "sm_89", "sm_90a"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        if (ckt_lua_check_target(good[i], &err) != CKT_OK) fail_msg("%s refused: %s", good[i], err.msg);
    static const char *bad[] = {"", "gpu", "cpu:", "cpu:gfx1100", "gfx", "gfx90z", "sm_", "sm_9x", "sm_90b", "CPU"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (ckt_lua_check_target(bad[i], &err) == CKT_OK) fail_msg("'%s' accepted", bad[i]);
        assert_non_null(strstr(err.msg, "target: "));
    }
    assert_int_equal(ckt_lua_check_target(NULL, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "empty"));
    ckt_lua_options o = {.target = "nosuch"};
    ckt_lua *s = NULL;
    assert_int_equal(ckt_lua_open(&o, &s, &err), CKT_ERUNTIME);
    assert_null(s);
    assert_non_null(strstr(err.msg, "unknown target 'nosuch'"));
}

/* 1,000 hostile scripts in a row in one host process (CKT_HOSTILE_RUNS overrides, e.g. under
 * valgrind), then a normal script that gives the right answer; the state's memory stays bounded. */
static void many_hostile_scripts_in_one_host(void **state)
{
    (void)state;
    static const char *hostile[] = {"while true do end", "local s = 'x' while true do s = s .. s end",
                                    "local function f() return f() + 1 end f()", "error(setmetatable({}, {__tostring = function() while true do end end}))",
                                    "ckt.layout({2^62, 4}, {1, 2^62})", "local t = {} for i = 1, 1e8 do t[i] = i end",
                                    "while true do pcall(function() while true do end end) end", "io.open('/etc/passwd')",
                                    "ckt.sfc{lengths = {2^31, 2^20}}:locality()", "local t = {} while true do t[#t + 1] = ckt.layout{2, 2} end",
                                    /* the kernel builder: shared subexpressions that multiply when written out, endless
                                     * operations, nesting, LDS beyond any target, huge windows, maps in a loop */
                                    "ckt.kernel{name = 'k', block = 64, build = function(b) local e = b:thread_id() + 1 for i = 1, 40 do e = e * e end ckt.min(e, 5) end}",
                                    "ckt.kernel{name = 'k', block = 64, build = function(b) while true do b:sync() end end}",
                                    "ckt.kernel{name = 'k', block = 64, build = function(b) local function f() b:loop(2, f) end f() end}",
                                    "ckt.kernel{name = 'k', block = 64, build = function(b) ckt.tensor('lds', 'f32', ckt.layout{2^31, 2^31}) end}",
                                    "ckt.kernel{name = 'k', block = 64, build = function(b) ckt.tile_window(ckt.tensor(b:pointer('x', 'f32'), 'f32', {shape = {1 << 40}}), {1 << 40}, {0}) end}",
                                    ("ckt.kernel{name = 'k', block = 64, build = function(b) local t = ckt.tensor(b:pointer('x', 'f32'), 'f32', {shape = {4096}}) "
                                     "local r = ckt.tile_window(t, {64}, {0}):load() while true do r = b:map(function(v) return v * 2 + 1 end, r) end end}")};
    const int nh = (int)(sizeof hostile / sizeof *hostile);
    const char *env = getenv("CKT_HOSTILE_RUNS");
    int runs = env ? atoi(env) : 1000;
    ckt_lua_options o = {.sandbox = 1, .memory_limit = 16u << 20, .instruction_limit = 300000, .time_limit = 5.0};
    ckt_lua *s;
    ckt_error err;
    assert_int_equal(ckt_lua_open(&o, &s, &err), CKT_OK);
    size_t base = ckt_lua_memory_used(s), peak = 0;
    for (int i = 0; i < runs; i++) {
        ckt_status st = ckt_lua_run_string(s, hostile[i % nh], "=hostile", &err);
        assert_int_not_equal(st, CKT_OK);
        assert_true(strlen(err.msg) > 0);
        if (ckt_lua_memory_used(s) > peak) peak = ckt_lua_memory_used(s);
    }
    expect_ok(s, "assert(ckt.layout{4,8}(3, 2) == 11)");
    expect_ok(s, "collectgarbage() collectgarbage()");
    if (ckt_lua_memory_used(s) > base + (2u << 20)) fail_msg("memory grew from %zu to %zu bytes over %d hostile scripts", base, ckt_lua_memory_used(s), runs);
    assert_true(peak <= (16u << 20));
    ckt_lua_close(s);
}

static void bad_arguments_are_errors(void **state)
{
    (void)state;
    ckt_error err;
    assert_int_equal(ckt_lua_open(NULL, NULL, &err), CKT_EINVAL);
    ckt_lua_options o = {.time_limit = -1};
    ckt_lua *s;
    assert_int_equal(ckt_lua_open(&o, &s, &err), CKT_EINVAL);
    ckt_lua_options tiny = {.memory_limit = 1000};
    assert_int_not_equal(ckt_lua_open(&tiny, &s, &err), CKT_OK);
    assert_int_equal(ckt_lua_run_string(NULL, "x", NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_lua_open(NULL, &s, &err), CKT_OK);
    assert_int_equal(ckt_lua_run_string(s, NULL, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_lua_run_file(s, "/nonexistent/x.lua", &err), CKT_ERUNTIME);
    assert_non_null(strstr(err.msg, "nonexistent"));
    assert_int_equal(ckt_lua_run_string(s, "x = = 1", "=syntax", &err), CKT_ERUNTIME);
    assert_non_null(strstr(err.msg, "syntax:1:"));
    ckt_lua_close(s);
    ckt_lua_close(NULL);
    /* a NULL error pointer is allowed: the status still says what happened */
    assert_int_equal(ckt_lua_open(NULL, NULL, NULL), CKT_EINVAL);
    assert_int_equal(ckt_lua_run_string(NULL, "x", NULL, NULL), CKT_EINVAL);
    assert_int_equal(ckt_lua_run_file(NULL, "x", NULL), CKT_EINVAL);
    assert_null(ckt_lua_state(NULL));
    assert_int_equal(ckt_lua_memory_used(NULL), 0);
    assert_int_equal(ckt_lua_open(NULL, &s, NULL), CKT_OK);
    assert_int_equal(ckt_lua_run_string(s, "error('x')", NULL, NULL), CKT_ERUNTIME);
    assert_int_equal(ckt_lua_run_file(s, NULL, NULL), CKT_EINVAL);
    ckt_lua_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sandbox_refuses_dangerous_functions),
        cmocka_unit_test(caps_stop_runaway_scripts_and_the_state_recovers),
        cmocka_unit_test(many_hostile_scripts_in_one_host),
        cmocka_unit_test(time_limit_stops_a_slow_script),
        cmocka_unit_test(trusted_state_has_the_standard_libraries_and_the_kernel_path),
        cmocka_unit_test(ckt_joins_an_existing_state),
        cmocka_unit_test(targets_are_checked),
        cmocka_unit_test(bad_arguments_are_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
