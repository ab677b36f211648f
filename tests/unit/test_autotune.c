/* Autotuning in C (ckt/autotune.h) on the CPU target: the winner is the fastest measured one,
 * pruned candidates are never compiled (counted by the compile cache's writes), each model
 * prunes what it should, a failing callback stops the search, the remembered choice survives a
 * garbled file, and bad input is refused naming the argument; a streamed search of 10,000
 * candidates keeps budget_s and at most its window of kernels alive, and a NaN score is an
 * error. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ckt/autotune.h"
#include "ckt/cache.h"
#include "ckt/ckt.h"

enum { N = 768 };

/* Y[i] = X[i] * 2, `tile` elements a block of 32 threads; n must be a multiple of the tile (a
 * launch condition, so a tile that does not divide the problem is pruned before compiling).
 * lds_elems > 0 declares an LDS tensor of that many f32 (for the LDS limit). */
static ckt_kernel *scaler_named(int64_t tile, int64_t lds_elems, int id)
{
    ckt_error err;
    ckt_kernel *k;
    int x, y, n, gx, gy, wx, wy, r, o, lt;
    char name[32];
    if (id >= 0)
        snprintf(name, sizeof name, "scale_%lld_%d", (long long)tile, id);
    else
        snprintf(name, sizeof name, "scale_%lld", (long long)tile);
    assert_int_equal(ckt_kernel_create(name, 32, &k, &err), CKT_OK);
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    assert_int_equal(ckt_kernel_param_ptr(k, "X", CKT_F32, true, 16, &x, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_ptr(k, "Y", CKT_F32, false, 16, &y, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_scalar(k, "n", CKT_PARAM_I32, false, 0, 0, tile, &n, &err),
                     CKT_OK);
    ckt_expr_id shape[1] = {ckt_kernel_param(k, n)->expr}, stride[1] = {ckt_expr_int(ex, 1)};
    assert_int_equal(ckt_kernel_global(k, x, CKT_F32, 1, shape, stride, false, &gx, &err), CKT_OK);
    assert_int_equal(ckt_kernel_global(k, y, CKT_F32, 1, shape, stride, false, &gy, &err), CKT_OK);
    if (lds_elems > 0) {
        char text[64];
        ckt_layout l;
        snprintf(text, sizeof text, "%lld:1", (long long)lds_elems);
        assert_int_equal(ckt_layout_parse(text, &l, &err), CKT_OK);
        assert_int_equal(ckt_kernel_lds(k, CKT_F32, &l, NULL, &lt, &err), CKT_OK);
    }
    const int64_t len[1] = {tile};
    ckt_expr_id origin[1] = {ckt_expr_mulc(ex, ckt_expr_bid(ex, 0), tile)};
    assert_int_equal(ckt_kernel_window_make(k, gx, 1, len, origin, &wx, &err), CKT_OK);
    assert_int_equal(ckt_kernel_window_make(k, gy, 1, len, origin, &wy, &err), CKT_OK);
    ckt_dist d;
    int di;
    assert_int_equal(ckt_dist_default_copy(1, len, 4, 32, &d, &err), CKT_OK);
    assert_int_equal(ckt_kernel_add_dist(k, &d, &di, &err), CKT_OK);
    assert_int_equal(ckt_kernel_load(k, wx, di, -1, 0, 0.0f, &r, &err), CKT_OK);
    assert_int_equal(
        ckt_kernel_map(k, 1, &r, ckt_expr_mulc(ex, ckt_expr_input(ex, 0), 2), CKT_F32, &o, &err),
        CKT_OK);
    assert_int_equal(ckt_kernel_store(k, wy, o, -1, 0, &err), CKT_OK);
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    return k;
}

static ckt_kernel *scaler(int64_t tile, int64_t lds_elems)
{
    return scaler_named(tile, lds_elems, -1);
}

typedef struct fixture {
    char dir[128];
    ckt_context *ctx;
    ckt_device *dev;
    ckt_buffer *x, *y;
    ckt_arg args[3];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    ckt_error err;
    snprintf(f->dir, sizeof f->dir, "/tmp/ckt-autotune-test-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    ckt_context_options o = {f->dir, 0, "cpu"};
    assert_int_equal(ckt_context_create(&o, &f->ctx, &err), CKT_OK);
    assert_int_equal(ckt_device_open(f->ctx, "cpu", &f->dev, &err), CKT_OK);
    float hx[N];
    for (int i = 0; i < N; i++) hx[i] = (float)(i % 17) - 8.25f;
    assert_int_equal(ckt_buffer_alloc(f->dev, sizeof hx, &f->x, &err), CKT_OK);
    assert_int_equal(ckt_buffer_alloc(f->dev, sizeof hx, &f->y, &err), CKT_OK);
    assert_int_equal(ckt_buffer_upload(f->x, 0, hx, sizeof hx, &err), CKT_OK);
    f->args[0] = ckt_arg_buffer(f->x), f->args[1] = ckt_arg_buffer(f->y),
    f->args[2] = ckt_arg_i32(N);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[256];
    ckt_buffer_free(f->x);
    ckt_buffer_free(f->y);
    ckt_device_close(f->dev);
    ckt_context_destroy(f->ctx);
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static ckt_autotune_candidate cand(fixture *f, ckt_kernel *k, int64_t tile)
{
    ckt_autotune_candidate c = {k,
                                {N / tile > 0 ? (N + tile - 1) / tile : 1, 1, 1},
                                f->args,
                                3,
                                0,
                                0,
                                CKT_AUTOTUNE_PENDING,
                                NULL};
    return c;
}

static int64_t compiles(fixture *f)
{
    return ckt_cache_get_stats(ckt_context_cache(f->ctx)).writes;
}

static void winner_is_fastest_and_correct(void **state)
{
    fixture *f = *state;
    ckt_error err;
    const int64_t tiles[] = {64, 128, 256};
    ckt_kernel *k[3];
    ckt_autotune_candidate c[3];
    for (int i = 0; i < 3; i++) k[i] = scaler(tiles[i], 0), c[i] = cand(f, k[i], tiles[i]);
    ckt_autotune_result r[3];
    ckt_autotune_options o = {.threads = 2, .warmup = 1, .runs = 3};
    int best;
    assert_int_equal(ckt_autotune(f->ctx, NULL, "cpu", c, 3, &o, r, &best, &err), CKT_OK);
    assert_true(best >= 0 && best < 3);
    assert_int_equal(compiles(f), 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r[i].state, CKT_AUTOTUNE_MEASURED);
        assert_true(r[i].compile_ms >= 0 && r[i].ms > 0);
        assert_true(r[best].score <= r[i].score);
        assert_true(i == best ? r[i].exe != NULL : 1);
    }
    /* the winner's executable computes the right thing */
    float poison[N], hy[N];
    for (int i = 0; i < N; i++) poison[i] = NAN;
    assert_int_equal(ckt_buffer_upload(f->y, 0, poison, sizeof poison, &err), CKT_OK);
    assert_int_equal(ckt_exe_launch(r[best].exe, f->dev, c[best].grid, f->args, 3, 0, NULL, &err),
                     CKT_OK);
    assert_int_equal(ckt_buffer_download(f->y, 0, hy, sizeof hy, &err), CKT_OK);
    for (int i = 0; i < N; i++) assert_float_equal(hy[i], 2 * ((float)(i % 17) - 8.25f), 0);
    ckt_autotune_results_free(r, 3);
    for (int i = 0; i < 3; i++) ckt_kernel_destroy(k[i]);
}

static void pruned_are_never_compiled(void **state)
{
    fixture *f = *state;
    ckt_error err;
    /* 0: fine; 1: the caller's filter; 2: 512 does not divide 768; 3: 128 KiB of LDS on gfx90a
     * (64 KiB); 4: the bank model rates it 4x worse than 0; 5: its build failed */
    const int64_t tiles[] = {64, 64, 512, 64, 128, 256};
    ckt_kernel *k[6];
    ckt_autotune_candidate c[6];
    for (int i = 0; i < 6; i++)
        k[i] = scaler(tiles[i], i == 3 ? 32768 : 0), c[i] = cand(f, k[i], tiles[i]);
    c[1].verdict = CKT_AUTOTUNE_PRUNED, c[1].reason = "filter: not today";
    c[0].bank_cycles = 8, c[0].bank_ideal = 8, c[4].bank_cycles = 32, c[4].bank_ideal = 8;
    c[5].kernel = NULL, c[5].verdict = CKT_AUTOTUNE_FAILED, c[5].reason = "build: boom";
    ckt_autotune_result r[6];
    ckt_autotune_options o = {.runs = 1};
    int best;
    int64_t before = compiles(f);
    assert_int_equal(ckt_autotune(f->ctx, f->dev, "cpu", c, 6, &o, r, &best, &err), CKT_OK);
    assert_int_equal(best, 0);
    assert_int_equal(compiles(f) - before, 1); /* only candidate 0 reached the compiler */
    assert_int_equal(r[0].state, CKT_AUTOTUNE_MEASURED);
    const char *why[6] = {"",
                          "filter: not today",
                          "does not fit the problem",
                          "LDS: 131072 bytes",
                          "bank model: 4.00",
                          "build: boom"};
    for (int i = 1; i < 6; i++) {
        assert_int_equal(r[i].state, i == 5 ? CKT_AUTOTUNE_FAILED : CKT_AUTOTUNE_PRUNED);
        assert_true(r[i].compile_ms < 0 && r[i].ms < 0 && !r[i].exe);
        if (!strstr(r[i].reason, why[i])) fail_msg("candidate %d: %s", i, r[i].reason);
    }
    ckt_autotune_results_free(r, 6);
    /* bank_slack < 0: the model prunes nothing; 4 is compiled (0 comes from the compile cache) */
    o.bank_slack = -1;
    before = compiles(f);
    assert_int_equal(ckt_autotune(f->ctx, f->dev, "cpu", c, 5, &o, r, &best, &err), CKT_OK);
    assert_int_equal(r[4].state, CKT_AUTOTUNE_MEASURED);
    assert_int_equal(compiles(f) - before, 1);
    assert_true(r[0].from_cache);
    ckt_autotune_results_free(r, 5);
    /* every candidate pruned: no winner, not an error */
    assert_int_equal(ckt_autotune(f->ctx, f->dev, "cpu", c + 1, 2, &o, r, &best, &err), CKT_OK);
    assert_int_equal(best, -1);
    for (int i = 0; i < 6; i++) ckt_kernel_destroy(k[i]);
}

static int failing_metric(void *user, int i, double ms, const double *t, int n, double *score,
                          ckt_error *err)
{
    (void)user, (void)i, (void)ms, (void)t, (void)n, (void)score;
    return ckt_fail(err, CKT_EINVAL, "metric: refused") != CKT_OK;
}

static int negate_metric(void *user, int i, double ms, const double *t, int n, double *score,
                         ckt_error *err)
{
    (void)err, (void)t, (void)n, (void)ms;
    ++*(int *)user;
    *score = -(double)i; /* the last candidate wins whatever its time */
    return 0;
}

static void metric_and_stop(void **state)
{
    fixture *f = *state;
    ckt_error err;
    ckt_kernel *k[2] = {scaler(64, 0), scaler(128, 0)};
    ckt_autotune_candidate c[2] = {cand(f, k[0], 64), cand(f, k[1], 128)};
    ckt_autotune_result r[2];
    int calls = 0, best;
    ckt_autotune_options o = {.runs = 2, .metric = negate_metric, .user = &calls};
    assert_int_equal(ckt_autotune(f->ctx, f->dev, "cpu", c, 2, &o, r, &best, &err), CKT_OK);
    assert_int_equal(best, 1);
    assert_int_equal(calls, 2);
    ckt_autotune_results_free(r, 2);
    o.metric = failing_metric;
    assert_int_equal(ckt_autotune(f->ctx, f->dev, "cpu", c, 2, &o, r, &best, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "metric: refused"));
    ckt_autotune_results_free(r, 2);
    for (int i = 0; i < 2; i++) ckt_kernel_destroy(k[i]);
}

/* A source of many candidates built on demand (issue 30: a budget over 10,000 configurations
 * ran 16-25 s and held every kernel): kernels are created when asked for and destroyed when
 * handed back; tiles cycle through 64, 128, 256, 384 (every fourth a distinct kernel name, so
 * the compiles are real). */
typedef struct many {
    fixture *f;
    ckt_kernel **k; /* per candidate; NULL once handed back */
    int n, alive, max_alive, released, bad_release;
} many;

static int many_next(void *user, int i, ckt_autotune_candidate *c, ckt_error *err)
{
    (void)err;
    many *m = user;
    static const int64_t tiles[4] = {64, 128, 256, 384};
    int64_t tile = tiles[i % 4];
    ckt_kernel *k = scaler_named(tile, 0, i % 4 == 3 ? i : -1);
    m->k[i] = k;
    if (++m->alive > m->max_alive) m->max_alive = m->alive;
    *c = cand(m->f, k, tile);
    return 0;
}

static void many_release(void *user, int i)
{
    many *m = user;
    if (!m->k[i]) {
        m->bad_release++;
        return;
    }
    ckt_kernel_destroy(m->k[i]);
    m->k[i] = NULL;
    m->alive--, m->released++;
}

static void many_free(many *m)
{
    for (int i = 0; i < m->n; i++) ckt_kernel_destroy(m->k[i]);
    free(m->k);
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void budget_bounds_a_large_stream(void **state)
{
    fixture *f = *state;
    ckt_error err;
    enum { MANY = 10000 };
    many m = {f, calloc(MANY, sizeof(ckt_kernel *)), MANY, 0, 0, 0, 0};
    ckt_autotune_result *r = calloc(MANY, sizeof *r);
    ckt_autotune_source src = {many_next, many_release, &m};
    /* the budget and the margin (the compiles already running at the deadline, which cannot be
     * interrupted) stretch where the build runs slower (CKT_TEST_TIME_SCALE: sanitizers,
     * valgrind), so that a cold compile under valgrind on a loaded machine still fits */
    const char *scale_env = getenv("CKT_TEST_TIME_SCALE");
    double scale = scale_env && atof(scale_env) >= 1 ? atof(scale_env) : 1;
    ckt_autotune_options o = {.runs = 1, .budget_s = scale, .threads = 2, .window = 16};
    int best;
    double t0 = mono_s();
    assert_int_equal(ckt_autotune_stream(f->ctx, f->dev, "cpu", &src, MANY, &o, r, &best, &err),
                     CKT_OK);
    double took = mono_s() - t0;
    if (took > scale + 1.5 * scale)
        fail_msg("budget_s = %g took %.2f s (scale %g)", scale, took, scale);
    if (best < 0) fail_msg("budget_s = %g measured no candidate in %.2f s", scale, took);
    assert_int_equal(r[best].state, CKT_AUTOTUNE_MEASURED);
    assert_non_null(r[best].exe);
    /* memory follows the candidates in flight: at most the window (and the best) alive */
    if (m.max_alive > 16 + 1) fail_msg("%d kernels alive at once (window 16)", m.max_alive);
    assert_int_equal(m.bad_release, 0);
    assert_int_equal(m.alive, 1); /* only the winner's kernel is left to the caller */
    assert_non_null(m.k[best]);
    int measured = 0, not_reached = 0, late = 0, taken = 0;
    for (int i = 0; i < MANY; i++) {
        measured += r[i].state == CKT_AUTOTUNE_MEASURED;
        not_reached += r[i].out_of_budget == 1, late += r[i].out_of_budget == 2;
        taken += r[i].out_of_budget != 1;
        assert_true(i == best || r[i].exe == NULL);
        if (r[i].out_of_budget) {
            assert_int_equal(r[i].state, CKT_AUTOTUNE_PRUNED);
            assert_non_null(strstr(r[i].reason, "budget_s spent"));
        }
        if (r[i].state == CKT_AUTOTUNE_MEASURED) assert_true(r[best].score <= r[i].score);
    }
    assert_true(measured >= 1 && not_reached > MANY / 2);
    assert_int_equal(m.released, taken - 1);
    /* the winner's executable computes the right thing */
    float hy[N];
    static const int64_t tiles[4] = {64, 128, 256, 384};
    ckt_autotune_candidate c = cand(f, m.k[best], tiles[best % 4]);
    assert_int_equal(ckt_exe_launch(r[best].exe, f->dev, c.grid, c.args, 3, 0, NULL, &err), CKT_OK);
    assert_int_equal(ckt_buffer_download(f->y, 0, hy, sizeof hy, &err), CKT_OK);
    for (int i = 0; i < N; i++) assert_float_equal(hy[i], 2 * ((float)(i % 17) - 8.25f), 0);
    ckt_autotune_results_free(r, MANY);
    many_free(&m);
    /* a budget too small to measure any: no winner (not an error), everything pruned by it,
     * and every kernel handed back */
    m = (many){f, calloc(100, sizeof(ckt_kernel *)), 100, 0, 0, 0, 0};
    o.budget_s = 1e-6;
    t0 = mono_s();
    assert_int_equal(ckt_autotune_stream(f->ctx, f->dev, "cpu", &src, 100, &o, r, &best, &err),
                     CKT_OK);
    assert_true(mono_s() - t0 < 1e-6 + 1.5);
    assert_int_equal(best, -1);
    assert_int_equal(m.alive, 0);
    for (int i = 0; i < 100; i++) assert_true(r[i].out_of_budget != 0 && !r[i].exe);
    many_free(&m);
    free(r);
}

static int nan_metric(void *user, int i, double ms, const double *t, int n, double *score,
                      ckt_error *err)
{
    (void)user, (void)i, (void)ms, (void)t, (void)n, (void)err;
    *score = NAN;
    return 0;
}

static void nan_score_and_bad_source(void **state)
{
    fixture *f = *state;
    ckt_error err;
    many m = {f, calloc(4, sizeof(ckt_kernel *)), 4, 0, 0, 0, 0};
    ckt_autotune_result r[4];
    ckt_autotune_source src = {many_next, many_release, &m};
    ckt_autotune_options o = {.runs = 1, .metric = nan_metric};
    int best;
    assert_int_equal(ckt_autotune_stream(f->ctx, f->dev, "cpu", &src, 4, &o, r, &best, &err),
                     CKT_EINVAL);
    assert_non_null(strstr(err.msg, "the score of candidate 0 is NaN"));
    assert_int_equal(m.bad_release, 0);
    ckt_autotune_results_free(r, 4);
    many_free(&m);
    ckt_autotune_source none = {NULL, NULL, NULL};
    assert_int_equal(ckt_autotune_stream(f->ctx, f->dev, "cpu", &none, 4, NULL, r, &best, &err),
                     CKT_EINVAL);
    assert_non_null(strstr(err.msg, "no next function"));
    o.metric = NULL, o.window = -1;
    assert_int_equal(ckt_autotune_stream(f->ctx, f->dev, "cpu", &src, 4, &o, r, &best, &err),
                     CKT_EINVAL);
    assert_non_null(strstr(err.msg, "window -1"));
}

static void bad_input(void **state)
{
    fixture *f = *state;
    ckt_error err;
    ckt_kernel *k = scaler(64, 0);
    ckt_autotune_candidate c = cand(f, k, 64);
    ckt_autotune_result r[1];
    int best;
    ckt_autotune_options o = {0};
#define BAD(call, text)                                                                            \
    do {                                                                                           \
        assert_int_not_equal((call), CKT_OK);                                                      \
        if (!strstr(err.msg, (text))) fail_msg("expected '%s' in: %s", (text), err.msg);           \
    } while (0)
    BAD(ckt_autotune(f->ctx, f->dev, "cpu", &c, 0, NULL, r, &best, &err), "0 candidates");
    BAD(ckt_autotune(f->ctx, f->dev, "cpu", NULL, 1, NULL, r, &best, &err), "candidates is NULL");
    BAD(ckt_autotune(f->ctx, f->dev, "cpu", &c, 1, NULL, NULL, &best, &err), "results is NULL");
    BAD(ckt_autotune(f->ctx, f->dev, "nope", &c, 1, NULL, r, &best, &err), "unknown target");
    BAD(ckt_autotune(f->ctx, f->dev, "sm_90", &c, 1, NULL, r, &best, &err),
        "runs on a cuda device");
    o.threads = -1;
    BAD(ckt_autotune(f->ctx, f->dev, "cpu", &c, 1, &o, r, &best, &err), "threads -1");
    o.threads = 0, o.runs = 5000;
    BAD(ckt_autotune(f->ctx, f->dev, "cpu", &c, 1, &o, r, &best, &err), "runs 5000");
    o.runs = 0, o.bank_slack = 0.5;
    BAD(ckt_autotune(f->ctx, f->dev, "cpu", &c, 1, &o, r, &best, &err), "bank_slack");
    o.bank_slack = 0, o.budget_s = NAN;
    BAD(ckt_autotune(f->ctx, f->dev, "cpu", &c, 1, &o, r, &best, &err), "budget_s");
    o.budget_s = 0;
    c.nargs = 2;
    assert_int_equal(ckt_autotune(f->ctx, f->dev, "cpu", &c, 1, &o, r, &best, &err), CKT_OK);
    assert_int_equal(r[0].state, CKT_AUTOTUNE_PRUNED);
    assert_non_null(strstr(r[0].reason, "problem: argument 'n' is missing"));
    c.nargs = 3, c.grid[0] = 0;
    assert_int_equal(ckt_autotune(f->ctx, f->dev, "cpu", &c, 1, &o, r, &best, &err), CKT_OK);
    assert_int_equal(r[0].state, CKT_AUTOTUNE_PRUNED);
    ckt_kernel_destroy(k);
}

static void remembered_choice(void **state)
{
    fixture *f = *state;
    ckt_error err;
    char key[65], other[65], note[600], *payload = NULL;
    size_t size = 0;
    const char *parts[3] = {"family", "space", "problem"};
    assert_int_equal(ckt_autotune_key(parts, 3, f->dev, key, &err), CKT_OK);
    parts[2] = "another problem";
    assert_int_equal(ckt_autotune_key(parts, 3, f->dev, other, &err), CKT_OK);
    assert_string_not_equal(key, other);
    assert_int_equal(ckt_autotune_key(parts, -1, f->dev, key, &err), CKT_EINVAL);
    parts[2] = "problem";
    assert_int_equal(ckt_autotune_key(parts, 3, f->dev, key, &err), CKT_OK);
    assert_int_equal(ckt_autotune_recall(f->ctx, key, &payload, &size, note, sizeof note),
                     CKT_RECALL_MISS);
    assert_int_equal(ckt_autotune_remember(f->ctx, key, "best=3", 6), 1);
    assert_int_equal(ckt_autotune_recall(f->ctx, key, &payload, &size, note, sizeof note),
                     CKT_RECALL_HIT);
    assert_int_equal(size, 6);
    assert_string_equal(payload, "best=3");
    free(payload);
    /* garble one byte of the payload: detected, removed, reported */
    char path[4400];
    ckt_cache_entry_path(ckt_context_cache(f->ctx), key, path, sizeof path);
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, -2, SEEK_END), 0);
    fputc('X', fp);
    fclose(fp);
    assert_int_equal(ckt_autotune_recall(f->ctx, key, &payload, &size, note, sizeof note),
                     CKT_RECALL_CORRUPT);
    assert_non_null(strstr(note, "checksum"));
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(ckt_autotune_recall(f->ctx, key, &payload, &size, note, sizeof note),
                     CKT_RECALL_MISS);
    assert_int_equal(ckt_autotune_recall(NULL, key, &payload, &size, note, sizeof note),
                     CKT_RECALL_MISS);
}

static void occupancy_model(void **state)
{
    (void)state;
    ckt_error err;
    ckt_target_record sm90, gfx90a, gfx908;
    assert_int_equal(ckt_target_parse("sm_90", &sm90, &err), CKT_OK);
    assert_int_equal(ckt_target_parse("gfx90a", &gfx90a, &err), CKT_OK);
    assert_int_equal(ckt_target_parse("gfx908", &gfx908, &err), CKT_OK);
    assert_int_equal(ckt_autotune_occupancy(&sm90, 32, 256), 64);
    assert_int_equal(ckt_autotune_occupancy(&sm90, 128, 256), 16);
    assert_int_equal(ckt_autotune_occupancy(&sm90, 255, 256), 8);
    assert_int_equal(ckt_autotune_occupancy(&gfx90a, 128, 256), 4);
    assert_int_equal(ckt_autotune_occupancy(&gfx90a, 40, 256), 8);
    assert_int_equal(ckt_autotune_occupancy(&gfx908, 24, 256), 10);
    assert_int_equal(ckt_autotune_occupancy(&sm90, -1, 256), -1);
    assert_string_equal(ckt_autotune_state_name(CKT_AUTOTUNE_PRUNED), "pruned");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(winner_is_fastest_and_correct, setup, teardown),
        cmocka_unit_test_setup_teardown(pruned_are_never_compiled, setup, teardown),
        cmocka_unit_test_setup_teardown(metric_and_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(budget_bounds_a_large_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(nan_score_and_bad_source, setup, teardown),
        cmocka_unit_test_setup_teardown(remembered_choice, setup, teardown),
        cmocka_unit_test(occupancy_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
