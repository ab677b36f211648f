/* The run's limits hold inside C (issue 30): the count hook fires only between Lua instructions,
 * so before, a pattern-matching bomb ran for minutes under a 1 s limit, string.rep("", 2^62)
 * never returned, a plain string.find was quadratic, table.concat through an __index written in
 * C ran until the memory ran out, and two cold host compiles of the library GEMM ran 30 s under
 * a 10 s limit. Each case runs under a short limit here and must end within it plus a margin,
 * with CKT_ELIMIT and the limit's message, and leave the state serving the next script. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ckt/jit.h"
#include "ckt_lua.h"

enum { MARGIN_S = 1 };

static ckt_lua *open_with(size_t memory, uint64_t instructions, double seconds)
{
    ckt_lua_options o = {.sandbox = 1,
                         .memory_limit = memory,
                         .instruction_limit = instructions,
                         .time_limit = seconds};
    ckt_lua *s = NULL;
    ckt_error err;
    assert_int_equal(ckt_lua_open(&o, &s, &err), CKT_OK);
    return s;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void expect_ok(ckt_lua *s, const char *code)
{
    ckt_error err;
    if (ckt_lua_run_string(s, code, "=t", &err) != CKT_OK)
        fail_msg("%s (in '%.60s...')", err.msg, code);
}

/* code must end with CKT_ELIMIT and needle within limit + MARGIN_S; the state then runs a script */
static void expect_stopped(ckt_lua *s, double limit, const char *code, const char *needle)
{
    ckt_error err;
    double t0 = now();
    ckt_status st = ckt_lua_run_string(s, code, "=t", &err);
    double took = now() - t0;
    if (st == CKT_OK)
        fail_msg("'%.80s' ran to its end (%.2f s) under a %.1f s limit", code, took, limit);
    if (st != CKT_ELIMIT)
        fail_msg("'%.80s': status %d, wanted CKT_ELIMIT (%s)", code, (int)st, err.msg);
    if (!strstr(err.msg, needle))
        fail_msg("'%.80s': message '%s' lacks '%s'", code, err.msg, needle);
    if (took > limit + MARGIN_S)
        fail_msg("'%.80s' ran %.2f s under a %.1f s limit", code, took, limit);
    if (ckt_compile_deadline() != 0) fail_msg("the run left its compile deadline set");
    expect_ok(s, "local n = 0 for i = 1, 100 do n = n + i end assert(n == 5050)\n"
                 "assert(('abc'):find('b') == 2 and ('x'):rep(3) == 'xxx' and table.concat({1, 2}, "
                 "',') == '1,2')");
}

#define BOMB "string.find(string.rep('a', 30), string.rep('a?', 30) .. string.rep('a', 30))"

static void pattern_matching_stops_at_the_time_limit(void **state)
{
    (void)state;
    ckt_lua *s = open_with(64u << 20, 0, 1.0);
    expect_stopped(s, 1.0, BOMB, "time limit");
    expect_stopped(
        s, 1.0,
        "return string.match(string.rep('a', 30), string.rep('a?', 30) .. string.rep('a', 30))",
        "time limit");
    expect_stopped(s, 1.0,
                   "for m in string.gmatch(string.rep('a', 30), string.rep('a?', 30) .. "
                   "string.rep('a', 30)) do end",
                   "time limit");
    expect_stopped(
        s, 1.0,
        "return (string.rep('a', 30)):gsub(string.rep('a?', 30) .. string.rep('a', 30), 'x')",
        "time limit");
    /* a caught limit raises again: the script cannot go on past it */
    expect_stopped(s, 1.0,
                   "pcall(string.find, string.rep('a', 30), string.rep('a?', 30) .. "
                   "string.rep('a', 30)) return 1",
                   "time limit");
    /* .- and backreferences: quadratic in C */
    expect_stopped(s, 1.0, "local x = string.rep('a', 1 << 20) return x:find('.-b')", "time limit");
    /* a plain find compares up to |pattern| bytes at every position */
    expect_stopped(
        s, 1.0,
        "return string.find(string.rep('a', 4000000), string.rep('a', 2000000) .. 'b', 1, true)",
        "time limit");
    /* the matcher still means Lua's */
    expect_ok(
        s, "assert(('hello world'):match('^(%w+)') == 'hello')\n"
           "assert(select(2, ('abc'):gsub('%w', '%0%0')) == 3 and ('abc'):gsub('%w', '%0%0') == "
           "'aabbcc')\n"
           "assert(('THE (quick) fox'):find('%((%a+)%)') == 5)\n"
           "assert(('f(a(b)c)'):match('%b()') == '(a(b)c)')\n"
           "assert(('THE (quick) fox'):gsub('%f[%a]%a+', function(w) return w:lower() end) == 'the "
           "(quick) fox')\n"
           "local t = {} for k, v in ('a=1, b=2'):gmatch('(%w+)=(%w+)') do t[#t + 1] = k .. v end\n"
           "assert(table.concat(t, ';') == 'a1;b2')\n"
           "assert(('abc'):gsub('', '-') == '-a-b-c-')\n"
           "assert(('hello'):find('l', 1, true) == 3 and ('hello'):find('xl', 1, true) == nil)\n"
           "assert(('abcabc'):match('(a)(b)c%1%2') == 'a')\n"
           "assert(('x = 1'):match('()=()') == 3)\n"
           "assert(not pcall(string.gsub, 'abc', '%w', '%9'))\n"
           "assert(not pcall(string.find, 'a', '[a'))\n"
           "assert(select(2, pcall(string.rep)):find('bad argument #1'))\n"
           "assert(select(2, pcall(string.gsub, 'x', 'x', true)):find('string/function/table'))\n"
           "assert(('abc'):gsub('b', {b = 'B'}) == 'aBc' and ('abc'):gsub('b', {}) == 'abc')\n"
           "local ok, e = pcall(string.rep, 'xx', 1 << 62) assert(not ok and e:find('too large'))\n"
           "assert(string.rep('ab', 3, ',') == 'ab,ab,ab' and string.rep('ab', 0) == '')");
    ckt_lua_close(s);
}

static void pattern_matching_counts_against_the_instruction_budget(void **state)
{
    (void)state;
    ckt_lua *s = open_with(64u << 20, 10000000, 0);
    double t0 = now();
    expect_stopped(s, 30, BOMB, "instruction budget");
    if (now() - t0 > 10)
        fail_msg("the bomb ran %.1f s under a 10^7 instruction budget", now() - t0);
    ckt_lua_close(s);
}

static void long_string_and_table_operations_stop(void **state)
{
    (void)state;
    /* no memory cap to stop them: only the limits */
    ckt_lua *s = open_with(1u << 30, 0, 1.0);
    /* Lua's string.rep copies nothing 2^62 times */
    expect_ok(s, "assert(string.rep('', 1 << 62) == '' and string.rep('', 1 << 62, '') == '')");
    /* every element of table.concat from an __index written in C (no hook fires there): before,
     * it ran until the memory cap (10 s and more), now the time limit stops it */
    expect_stopped(
        s, 1.0,
        "return table.concat(setmetatable({}, {__index = type, __len = rawlen}), '', 1, 1 << 62)",
        "time limit");
    expect_ok(
        s,
        "assert(table.concat({1, 'b', 3}, '-', 2) == 'b-3' and table.concat({}) == '')\n"
        "assert(select(2, pcall(table.concat, {1, {}, 3})):find('invalid value %(at index 2%)'))");
    ckt_lua_close(s);
}

/* the files in dir (the host compiler's temporaries, the kernel's source and object) */
static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void a_cold_host_compile_is_killed_at_the_time_limit(void **state)
{
    (void)state;
    char tmp[] = "/tmp/ckt-c-time-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    const char *old = getenv("TMPDIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("TMPDIR", tmp, 1);
    ckt_lua *s = open_with(256u << 20, 0, 2.0);
    /* the library GEMM with wgmma emulation: about 7-15 s of gcc when cold */
    expect_stopped(s, 2.0,
                   "local gemm = require 'ckt.kernels.gemm'\n"
                   "local k = gemm.build{dtype = 'f16', target = 'cpu:sm_90a'}\n"
                   "k:compile{target = 'cpu:sm_90a', cache = false}\n"
                   "k:compile{target = 'cpu:sm_90a', cache = false}",
                   "time limit ran out while the host C compiler built");
    /* the compiler's process group is gone with its files: nothing is left in TMPDIR */
    usleep(200000);
    int n = files_in(tmp);
    if (n != 0) fail_msg("%d files or directories left in %s", n, tmp);
    /* a compile that would start after the limit is refused at once */
    expect_stopped(s, 2.0,
                   "local k = ckt.kernel{name = 'small', block = 32, build = function(b) end}\n"
                   "while true do k:compile{target = 'cpu', cache = false} end",
                   "time limit");
    ckt_lua_close(s);
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
    rmdir(tmp);
}

/* NVRTC and hipRTC run in the process: the compile is abandoned at the limit and finishes on its
 * own thread; while two are still running, a third is refused. */
static void an_in_process_compile_is_abandoned_at_the_time_limit(void **state)
{
    (void)state;
    /* sm_90a with bulk tensor copies: 0.2-0.4 s of NVRTC cold, twelve of them well past the limit
     * (four once were; faster compiles finished four inside it) */
    static const char *const targets[] = {"sm_90a", "gfx90a"};
    static const char *const extra[] = {", aligned = true", ""};
    for (int i = 0; i < 2; i++) {
        const char *t = targets[i];
        ckt_lua *s = open_with(256u << 20, 0, 1.0);
        char code[512];
        ckt_error err;
        /* built in a run of its own: only the compiles meet the limit */
        snprintf(code, sizeof code,
                 "K = require('ckt.kernels.gemm').build{dtype = 'f16', target = '%s'%s}", t,
                 extra[i]);
        expect_ok(s, code);
        snprintf(code, sizeof code,
                 "for i = 1, 12 do K:compile{target = '%s', compile_only = true, cache = false} end",
                 t);
        double t0 = now();
        ckt_status st = ckt_lua_run_string(s, code, "=t", &err);
        double took = now() - t0;
        if (st != CKT_OK &&
            (strstr(err.msg, "NVRTC not found") || strstr(err.msg, "hipRTC not found"))) {
            printf("SKIPPED %s: %s\n", t, err.msg);
            ckt_lua_close(s);
            continue;
        }
        /* the limit meets a compile running (abandoned) or, where the compiler is fast, the
         * start of the next one (refused): either way the run stops at the limit */
        if (st != CKT_ELIMIT || !strstr(err.msg, "the time limit ran out"))
            fail_msg("%s: status %d after %.2f s: %s", t, (int)st, took, err.msg);
        if (took > 1.0 + MARGIN_S)
            fail_msg("%s: the compile held the run %.2f s past a 1 s limit", t, took);
        /* the second abandons one more; a third that finds two running is refused at once */
        expect_stopped(s, 1.0, code, "the time limit ran out");
        if (ckt_compile_abandoned() >= CKT_COMPILE_MAX_ABANDONED) {
            t0 = now();
            st = ckt_lua_run_string(s, code, "=t", &err);
            /* one of the two may finish between the count and the run (a loaded machine);
             * then the third starts and is abandoned at the limit like the others */
            bool refused = strstr(err.msg, "still running in the background") != NULL;
            bool abandoned = strstr(err.msg, "the time limit ran out") != NULL;
            if (st == CKT_OK || !(refused || abandoned) || now() - t0 > 1.0 + MARGIN_S)
                fail_msg("%s: a third compile: status %d after %.2f s: %s", t, (int)st, now() - t0,
                         err.msg);
        }
        /* the abandoned compiles finish and free what they hold (ASan / valgrind see it) */
        for (int w = 0; w < 1200 && ckt_compile_abandoned() > 0; w++) usleep(100000);
        assert_int_equal(ckt_compile_abandoned(), 0);
        ckt_lua_close(s);
    }
}

/* One block whose loops run 2^62 iterations: the runtime checks the time limit between blocks,
 * so before, a launch of a single block held the run (and the host thread) for as long as its
 * loops ran. Now the kernel's loops look at the launch's stop flag every iteration. */
#define SPIN_KERNEL                                                                                \
    "local k = ckt.kernel{name = 'spin', block = 32, build = function(b)\n"                        \
    "  local n = b:size('n')\n"                                                                    \
    "  local w = ckt.tile_window(ckt.tensor('lds', 'f32', ckt.layout{32}), {32}, {0})\n"           \
    "  b:loop(n, function() b:loop(n, function() w:store(w:load()) end) end)\n"                    \
    "end}\n"                                                                                       \
    "local exe = k:compile{target = 'cpu'}\n"

static void a_long_single_block_launch_stops_at_the_time_limit(void **state)
{
    (void)state;
    ckt_lua *s = open_with(64u << 20, 0, 5.0);
    /* compiled in a run of its own (the compile is not what meets the limit) */
    expect_ok(s, SPIN_KERNEL "SPIN = exe\nSPIN:launch{grid = 1, n = 100}");
    ckt_lua_close(s);
    s = open_with(64u << 20, 0, 1.0);
    expect_ok(s, SPIN_KERNEL "SPIN = exe");
    expect_stopped(s, 1.0, "SPIN:launch{grid = 1, n = 2147483647}", "time limit ran out");
    /* several blocks, each looping: all of them leave */
    expect_stopped(s, 1.0, "SPIN:launch{grid = {3, 2}, n = 2147483647}", "time limit ran out");
    /* a script that catches the stopped launch is stopped by the limit itself */
    expect_stopped(s, 1.0, "while true do pcall(SPIN.launch, SPIN, {grid = 1, n = 2147483647}) end",
                   "time limit");
    /* the kernel still runs to its end when the limit allows */
    expect_ok(s, "SPIN:launch{grid = 2, n = 50}");
    ckt_lua_close(s);
}

/* The same without the sandbox (a host's own scripts under a time limit): a pipelined kernel of
 * asynchronous copies left in flight at the stop frees its queue of copies (ASan's leak checker
 * and valgrind see it), and the device serves the next launch with the right result. */
static void a_stopped_launch_frees_its_copies_in_flight(void **state)
{
    (void)state;
    ckt_lua_options o = {.memory_limit = 256u << 20, .time_limit = 1.0};
    ckt_lua *s = NULL;
    ckt_error err;
    assert_int_equal(ckt_lua_open(&o, &s, &err), CKT_OK);
    expect_ok(s, "local L = ckt.layout({32, 16}, {16, 1})\n"
                 "local k = ckt.kernel{name = 'ring', block = 64, build = function(b)\n"
                 "  local X, Y = b:pointer('X', 'f32', {const = true}), b:pointer('Y', 'f32')\n"
                 "  local n = b:size('n')\n"
                 "  local gx = ckt.tensor(X, 'f32', {shape = {32, 16}})\n"
                 "  local gy = ckt.tensor(Y, 'f32', {shape = {32, 16}})\n"
                 "  local ring = ckt.tensor('lds', 'f32', L, {stages = 2})\n"
                 "  local function issue(st)\n"
                 "    b:blockwise_copy{src = ckt.tile_window(gx, {32, 16}, {0, 0}),\n"
                 "      dst = ckt.tile_window(ring:stage(st), {32, 16}, {0, 0}),\n"
                 "      thread_layout = ckt.layout({32, 2}, {2, 1}), async = true}\n"
                 "    b:commit()\n"
                 "  end\n"
                 "  issue(0)\n"
                 "  b:loop(n, function(i) b:loop(n, function(j)\n"
                 "    issue(1)\n"
                 "    b:wait{pending = 1}\n"
                 "    ckt.tile_window(gy, {32, 16}, {0, 0}):store(\n"
                 "      ckt.tile_window(ring:stage(0), {32, 16}, {0, 0}):load())\n"
                 "    b:sync()\n"
                 "    issue(0)\n"
                 "    b:wait{pending = 1}\n"
                 "    b:sync()\n"
                 "  end) end)\n"
                 "end}\n"
                 "RING = k:compile{target = 'cpu'}\n"
                 "DEV = ckt.device('cpu')\n"
                 "X = DEV:alloc('f32', 512) X:upload(ckt.array('f32', {512}):random{seed = 1})\n"
                 "Y = DEV:alloc('f32', 512)");
    expect_stopped(s, 1.0, "RING:launch{grid = 1, X = X, Y = Y, n = 2147483647, timed = true}",
                   "time limit ran out");
    expect_ok(s, "Y:upload(ckt.array('f32', {512}))\n"
                 "RING:launch{grid = 1, X = X, Y = Y, n = 3, timed = true}\n"
                 "local x, y = ckt.array('f32', {512}), ckt.array('f32', {512})\n"
                 "X:download(x) Y:download(y)\n"
                 "for i = 0, 511 do assert(x[i] == y[i], i) end");
    ckt_lua_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pattern_matching_stops_at_the_time_limit),
        cmocka_unit_test(pattern_matching_counts_against_the_instruction_budget),
        cmocka_unit_test(long_string_and_table_operations_stop),
        cmocka_unit_test(a_cold_host_compile_is_killed_at_the_time_limit),
        cmocka_unit_test(an_in_process_compile_is_abandoned_at_the_time_limit),
        cmocka_unit_test(a_long_single_block_launch_stops_at_the_time_limit),
        cmocka_unit_test(a_stopped_launch_frees_its_copies_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
