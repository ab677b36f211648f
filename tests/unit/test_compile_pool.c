/* Compiles in the background (ckt/compile_pool.h): many compiles started at once and collected
 * later, errors through the wait, and every misuse refused with a message: NULLs, pool sizes
 * outside 1..256, unknown targets, waiting twice or for the other kind, freeing jobs still queued
 * or running, freeing the pool under queued jobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ckt/compile_pool.h"
#include "compile_pool_internal.h"

static void says(ckt_status st, ckt_status want, const ckt_error *err, const char *what)
{
    if (st != want) fail_msg("status %d, want %d (%s)", st, want, err->msg);
    if (!strstr(err->msg, what)) fail_msg("'%s' does not say '%s'", err->msg, what);
}

static void pools_refuse_bad_sizes(void **state)
{
    (void)state;
    ckt_error err;
    ckt_compile_pool *p = (ckt_compile_pool *)1;
    says(ckt_compile_pool_create(-1, &p, &err), CKT_EINVAL, &err, "-1 threads (1..256");
    assert_null(p);
    says(ckt_compile_pool_create(257, &p, &err), CKT_EINVAL, &err, "257 threads");
    says(ckt_compile_pool_create(2, NULL, &err), CKT_EINVAL, &err, "out is NULL");
    assert_int_equal(ckt_compile_pool_create(0, &p, &err), CKT_OK); /* one per core */
    assert_true(ckt_compile_pool_threads(p) >= 1);
    ckt_compile_pool_free(p);
    assert_true(ckt_compile_pool_threads(NULL) >= 1); /* the shared pool */
    ckt_compile_pool_free(ckt_compile_pool_shared()); /* never freed: still usable */
    assert_true(ckt_compile_pool_threads(NULL) >= 1);
    ckt_compile_pool_free(NULL);
}

static void starts_refuse_bad_requests(void **state)
{
    (void)state;
    ckt_error err;
    ckt_compile_job *j = NULL;
    const char *src = "int f(void) { return 1; }";
    const char *opts[] = {"-O1", NULL};
    ckt_compile_request ok = {"cpu", src, "f", NULL, 0};
    says(ckt_compile_start(NULL, NULL, &ok, 0, NULL, &err), CKT_EINVAL, &err, "out is NULL");
    says(ckt_compile_start(NULL, NULL, NULL, 0, &j, &err), CKT_EINVAL, &err, "request is NULL");
    ckt_compile_request r1 = {NULL, src, "f", NULL, 0};
    says(ckt_compile_start(NULL, NULL, &r1, 0, &j, &err), CKT_EINVAL, &err, "target is empty");
    ckt_compile_request r2 = {"vulkan", src, "f", NULL, 0};
    says(ckt_compile_start(NULL, NULL, &r2, 0, &j, &err), CKT_EUNSUPPORTED, &err,
         "unknown target 'vulkan'");
    ckt_compile_request r3 = {"cpu", NULL, "f", NULL, 0};
    says(ckt_compile_start(NULL, NULL, &r3, 0, &j, &err), CKT_EINVAL, &err, "source is empty");
    ckt_compile_request r4 = {"cpu", src, "", NULL, 0};
    says(ckt_compile_start(NULL, NULL, &r4, 0, &j, &err), CKT_EINVAL, &err, "kernel_name is empty");
    ckt_compile_request r5 = {"cpu", src, "f", opts, 2};
    says(ckt_compile_start(NULL, NULL, &r5, 0, &j, &err), CKT_EINVAL, &err, "option 1 is NULL");
    ckt_compile_request r6 = {"cpu", src, "f", NULL, 3};
    says(ckt_compile_start(NULL, NULL, &r6, 0, &j, &err), CKT_EINVAL, &err,
         "options is NULL with noptions 3");
    ckt_compile_request r7 = {"cpu", src, "f", opts, 33};
    says(ckt_compile_start(NULL, NULL, &r7, 0, &j, &err), CKT_EINVAL, &err, "noptions 33");
    assert_null(j);
    says(ckt_compile_kernel_start(NULL, NULL, NULL, "cpu", NULL, &j, &err), CKT_EINVAL, &err,
         "kernel is NULL");
    says(ckt_compile_kernel_start(NULL, NULL, (const ckt_kernel *)&err, NULL, NULL, &j, &err),
         CKT_EINVAL, &err, "target is empty");
    says(ckt_compile_kernel_start(NULL, NULL, (const ckt_kernel *)&err, "vulkan", NULL, &j, &err),
         CKT_EUNSUPPORTED, &err, "unknown target 'vulkan'");
    const char *o[] = {NULL};
    ckt_kernel_compile_options bad = {0, o, 1};
    says(ckt_compile_kernel_start(NULL, NULL, (const ckt_kernel *)&err, "cpu", &bad, &j, &err),
         CKT_EINVAL, &err, "option 0 is NULL");
    says(ckt_compile_kernel_start(NULL, NULL, NULL, "cpu", NULL, NULL, &err), CKT_EINVAL, &err,
         "out is NULL");
    ckt_binary *b = (ckt_binary *)1;
    says(ckt_compile_wait(NULL, &b, &err), CKT_EINVAL, &err, "job is NULL");
    assert_null(b);
    ckt_executable *x = NULL;
    says(ckt_compile_wait_executable(NULL, &x, &err), CKT_EINVAL, &err, "job is NULL");
    assert_int_equal(ckt_compile_done(NULL), 0);
    ckt_compile_job_free(NULL);
}

/* n distinct CPU sources on `pool`, started at once, collected in order */
static void many_at_once(ckt_compile_pool *pool, int n)
{
    ckt_error err;
    ckt_compile_job *jobs[16];
    char src[16][96], name[16][16];
    for (int i = 0; i < n; i++) {
        snprintf(name[i], sizeof name[i], "f%d", i);
        snprintf(src[i], sizeof src[i], "/* pool %d %p */ int %s(void) { return %d; }", i,
                 (void *)pool, name[i], i);
        const char *o[] = {"-O1"};
        ckt_compile_request req = {"cpu", src[i], name[i], o, 1};
        assert_int_equal(ckt_compile_start(pool, NULL, &req, CKT_COMPILE_NO_CACHE, &jobs[i], &err),
                         CKT_OK);
        /* the request was copied: scribbling over it changes nothing */
        memset(src[i], 'x', sizeof src[i] - 1);
        memset(name[i], 0, sizeof name[i]);
    }
    for (int i = 0; i < n; i++) {
        ckt_binary *b = NULL;
        assert_int_equal(ckt_compile_wait(jobs[i], &b, &err), CKT_OK);
        assert_non_null(b);
        assert_int_equal(ckt_compile_done(jobs[i]), 1);
        char want[16];
        snprintf(want, sizeof want, "f%d", i);
        assert_string_equal(ckt_binary_kernel_name(b), want);
        size_t size;
        assert_non_null(ckt_binary_code(b, &size));
        assert_true(size > 0);
        /* one wait a job; the other kind's wait is refused too */
        ckt_binary *again = (ckt_binary *)1;
        says(ckt_compile_wait(jobs[i], &again, &err), CKT_EINVAL, &err, "already taken");
        assert_null(again);
        ckt_executable *x = NULL;
        says(ckt_compile_wait_executable(jobs[i], &x, &err), CKT_EINVAL, &err,
             "use ckt_compile_wait");
        says(ckt_compile_wait(jobs[i], NULL, &err), CKT_EINVAL, &err, "out is NULL");
        ckt_compile_job_free(jobs[i]);
        ckt_binary_free(b);
    }
}

static void compiles_many_at_once(void **state)
{
    (void)state;
    many_at_once(NULL, 8); /* the shared pool */
    ckt_compile_pool *p;
    ckt_error err;
    assert_int_equal(ckt_compile_pool_create(3, &p, &err), CKT_OK);
    assert_int_equal(ckt_compile_pool_threads(p), 3);
    many_at_once(p, 12);
    ckt_compile_pool_free(p);
}

static void errors_come_through_the_wait(void **state)
{
    (void)state;
    ckt_error err;
    ckt_compile_job *j;
    ckt_compile_request req = {"cpu", "int f(void) { return 1 }", "f", NULL, 0};
    assert_int_equal(ckt_compile_start(NULL, NULL, &req, CKT_COMPILE_NO_CACHE, &j, &err), CKT_OK);
    ckt_binary *b = (ckt_binary *)1;
    says(ckt_compile_wait(j, &b, &err), CKT_ECOMPILE, &err, "cpu compile failed for 'f'");
    assert_null(b);
    says(ckt_compile_wait(j, &b, &err), CKT_EINVAL, &err, "already taken");
    ckt_compile_job_free(j);
    /* a target the compiler refuses at compile time (GPU compiler missing or not): an error */
    ckt_compile_request g = {"gfx942", "extern \"C\" __global__ void f(int *p) { p[0] = 1; }", "f",
                             NULL, 0};
    if (ckt_compile_start(NULL, NULL, &g, CKT_COMPILE_NO_CACHE | CKT_COMPILE_ONLY, &j, &err) ==
        CKT_OK) {
        ckt_status st = ckt_compile_wait(j, &b, &err);
        if (st == CKT_OK)
            ckt_binary_free(b);
        else
            assert_true(strlen(err.msg) > 0);
        ckt_compile_job_free(j);
    }
}

static void pending_jobs_can_be_freed(void **state)
{
    (void)state;
    ckt_error err;
    ckt_compile_pool *p;
    assert_int_equal(ckt_compile_pool_create(1, &p, &err), CKT_OK);
    ckt_compile_job *jobs[6];
    char src[6][96];
    for (int i = 0; i < 6; i++) {
        snprintf(src[i], sizeof src[i], "/* pending %d */ int g(void) { return %d; }", i, i);
        ckt_compile_request req = {"cpu", src[i], "g", NULL, 0};
        assert_int_equal(ckt_compile_start(p, NULL, &req, CKT_COMPILE_NO_CACHE, &jobs[i], &err),
                         CKT_OK);
    }
    /* the first is running or done, the rest queued: freed in an odd order, none waited for */
    ckt_compile_job_free(jobs[3]);
    ckt_compile_job_free(jobs[0]);
    ckt_compile_job_free(jobs[5]);
    /* the queue still works after removals from its middle and end */
    ckt_binary *b;
    assert_int_equal(ckt_compile_wait(jobs[4], &b, &err), CKT_OK);
    ckt_binary_free(b);
    ckt_compile_job_free(jobs[4]);
    /* a result never taken is freed with its job */
    while (!ckt_compile_done(jobs[1])) {}
    ckt_compile_job_free(jobs[1]);
    /* the pool freed under a queued job: its wait says it was cancelled, or it already ran */
    ckt_compile_job *late[4];
    for (int i = 0; i < 4; i++) {
        char s[96];
        snprintf(s, sizeof s, "/* late %d */ int h(void) { return %d; }", i, i);
        ckt_compile_request req = {"cpu", s, "h", NULL, 0};
        assert_int_equal(ckt_compile_start(p, NULL, &req, CKT_COMPILE_NO_CACHE, &late[i], &err),
                         CKT_OK);
    }
    ckt_compile_pool_free(p);
    int cancelled = 0;
    for (int i = 0; i < 4; i++) {
        ckt_status st = ckt_compile_wait(late[i], &b, &err);
        if (st == CKT_OK)
            ckt_binary_free(b);
        else {
            says(st, CKT_EINVAL, &err, "cancelled (its pool was freed");
            cancelled++;
        }
        ckt_compile_job_free(late[i]);
    }
    assert_true(cancelled >= 2);   /* one thread: at most one ran before the free (2 on a race) */
    ckt_compile_job_free(jobs[2]); /* the pool is gone; its last job goes after it */
}

/* a task that waits until *gate opens, then counts itself */
typedef struct gate {
    _Atomic int open, ran;
} gate;
static void gated(void *arg)
{
    gate *g = arg;
    while (!g->open) usleep(1000);
    g->ran++;
}

static void tasks_run_on_the_pool(void **state)
{
    (void)state;
    ckt_error err;
    ckt_compile_pool *p;
    assert_int_equal(ckt_compile_pool_create(1, &p, &err), CKT_OK);
    gate g = {0, 0};
    ckt_compile_job *first, *second, *third;
    assert_int_equal(ckt_compile_task_start(p, gated, &g, &first, &err), CKT_OK);
    assert_int_equal(ckt_compile_task_start(p, gated, &g, &second, &err), CKT_OK);
    assert_int_equal(ckt_compile_task_start(p, gated, &g, &third, &err), CKT_OK);
    assert_false(ckt_compile_done(second));
    ckt_compile_job_free(second); /* queued behind the first: cancelled, never runs */
    ckt_binary *b;
    says(ckt_compile_wait(third, &b, &err), CKT_EINVAL, &err, "a task of the engine (free it)");
    g.open = 1;
    while (!ckt_compile_done(third)) usleep(1000);
    assert_true(ckt_compile_done(first));
    ckt_compile_job_free(first);
    ckt_compile_job_free(third);
    assert_int_equal(g.ran, 2);
    says(ckt_compile_task_start(p, NULL, &g, &first, &err), CKT_EINVAL, &err, "fn is NULL");
    says(ckt_compile_task_start(p, gated, &g, NULL, &err), CKT_EINVAL, &err, "out is NULL");
    ckt_compile_pool_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pools_refuse_bad_sizes),    cmocka_unit_test(starts_refuse_bad_requests),
        cmocka_unit_test(compiles_many_at_once),     cmocka_unit_test(errors_come_through_the_wait),
        cmocka_unit_test(pending_jobs_can_be_freed), cmocka_unit_test(tasks_run_on_the_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
