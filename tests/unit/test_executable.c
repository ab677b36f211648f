/* The kernel pipeline in C (ckt/executable.h): compile and launch a built kernel, and every
 * refusal of bad input naming the argument and the reason. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"

/* Y[i] = X[i] * 2 over n values, n a multiple of 4 (a launch condition), 32 threads a block. */
static ckt_kernel *doubler_at(bool finish, bool let)
{
    ckt_error err;
    ckt_kernel *k;
    int x, y, n, gx, gy, wx, wy, r, o;
    assert_int_equal(ckt_kernel_create("doubler", 32, &k, &err), CKT_OK);
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    assert_int_equal(ckt_kernel_param_ptr(k, "X", CKT_F32, true, 16, &x, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_ptr(k, "Y", CKT_F32, false, 16, &y, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_scalar(k, "n", CKT_PARAM_I32, false, 0, 0, 4, &n, &err),
                     CKT_OK);
    ckt_expr_id shape[1] = {ckt_kernel_param(k, n)->expr}, stride[1] = {ckt_expr_int(ex, 1)};
    assert_int_equal(ckt_kernel_global(k, x, CKT_F32, 1, shape, stride, true, &gx, &err), CKT_OK);
    assert_int_equal(ckt_kernel_global(k, y, CKT_F32, 1, shape, stride, true, &gy, &err), CKT_OK);
    const int64_t len[1] = {128};
    ckt_expr_id origin[1] = {ckt_expr_mulc(ex, ckt_expr_bid(ex, 0), 128)};
    if (let) assert_int_equal(ckt_kernel_let(k, "o", origin[0], &origin[0], &err), CKT_OK);
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
    if (finish) assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    return k;
}

static ckt_kernel *doubler(bool finish) { return doubler_at(finish, false); }

#define REFUSED(call, code, text)                                                                  \
    do {                                                                                           \
        assert_int_equal((call), (code));                                                          \
        if (!strstr(err.msg, (text))) fail_msg("%s", err.msg);                                     \
    } while (0)

/* ckt_kernel_reduce_run: consecutive group reductions of more than 32 threads over the same
 * groups share one exchange; a narrower group, another group size, the same accumulator again, an
 * operation between them or a plain block reduction end the run; the scratch holds every partial
 * of the run; bad arguments answer 0. */
static void reduction_runs(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k;
    int a, b2, c, d;
    assert_int_equal(ckt_kernel_create("runs", 256, &k, &err), CKT_OK);
    assert_int_equal(ckt_kernel_registers(k, CKT_F32, -1, 1, &a, &err), CKT_OK);
    assert_int_equal(ckt_kernel_registers(k, CKT_F32, -1, 2, &b2, &err), CKT_OK);
    assert_int_equal(ckt_kernel_registers(k, CKT_F32, -1, 1, &c, &err), CKT_OK);
    assert_int_equal(ckt_kernel_registers(k, CKT_F32, -1, 1, &d, &err), CKT_OK);
    int first = ckt_kernel_nops(k);
    assert_int_equal(ckt_kernel_group_reduce(k, a, CKT_REDUCE_SUM, 128, &err), CKT_OK);  /* run: */
    assert_int_equal(ckt_kernel_group_reduce(k, b2, CKT_REDUCE_MAX, 128, &err), CKT_OK); /* 3 ops */
    assert_int_equal(ckt_kernel_group_reduce(k, c, CKT_REDUCE_SUM, 128, &err),
                     CKT_OK); /* 4 values */
    assert_int_equal(ckt_kernel_group_reduce(k, a, CKT_REDUCE_SUM, 128, &err),
                     CKT_OK);                                                          /* a again */
    assert_int_equal(ckt_kernel_group_reduce(k, d, CKT_REDUCE_SUM, 64, &err), CKT_OK); /* 64 */
    assert_int_equal(ckt_kernel_group_reduce(k, c, CKT_REDUCE_SUM, 16, &err), CKT_OK); /* lanes */
    assert_int_equal(ckt_kernel_clear(k, a, 0.0f, &err), CKT_OK);
    assert_int_equal(ckt_kernel_group_reduce(k, a, CKT_REDUCE_SUM, 256, &err), CKT_OK);
    assert_int_equal(ckt_kernel_reduce_run(k, first), 3);
    assert_int_equal(ckt_kernel_reduce_run(k, first + 1), 3); /* b2, c, then a: distinct */
    assert_int_equal(ckt_kernel_reduce_run(k, first + 2), 2);
    assert_int_equal(ckt_kernel_reduce_run(k, first + 3), 1);
    assert_int_equal(ckt_kernel_reduce_run(k, first + 4), 1);
    assert_int_equal(ckt_kernel_reduce_run(k, first + 5), 0); /* 16 threads: lane shuffles only */
    assert_int_equal(ckt_kernel_reduce_run(k, first + 6), 0); /* the clear */
    assert_int_equal(ckt_kernel_reduce_run(k, first + 7), 1);
    /* (maximum, sum) pairs: an exchange of their own, through the softmax entry point only */
    REFUSED(ckt_kernel_group_reduce(k, a, CKT_REDUCE_SOFTMAX, 128, &err), CKT_EINVAL,
            "needs the sums beside the maxima");
    REFUSED(ckt_kernel_group_reduce_softmax(k, a, a, 128, &err), CKT_EINVAL,
            "a register tensor of their own");
    REFUSED(ckt_kernel_group_reduce_softmax(k, a, b2, 128, &err), CKT_EINVAL,
            "the same number of values (1 and 2)");
    REFUSED(ckt_kernel_block_reduce(k, a, CKT_REDUCE_SOFTMAX, &err), CKT_EINVAL,
            "across threads only");
    assert_int_equal(ckt_kernel_group_reduce_softmax(k, c, d, 128, &err), CKT_OK);
    assert_int_equal(ckt_kernel_reduce_run(k, ckt_kernel_nops(k) - 1), 0);
    assert_int_equal(ckt_kernel_reduce_run(k, -1), 0);
    assert_int_equal(ckt_kernel_reduce_run(k, ckt_kernel_nops(k)), 0);
    assert_int_equal(ckt_kernel_reduce_run(NULL, 0), 0);
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    /* the run's 4 values x 8 waves of partials, 4 bytes each */
    assert_int_equal(ckt_kernel_lds_bytes(k) - ckt_kernel_reduce_scratch(k), 4 * 4 * 8);
    ckt_kernel_destroy(k);
}

static void compile_and_launch(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k = doubler(true);
    size_t before = ckt_kernel_footprint(k);
    ckt_executable *e;
    ckt_kernel_compile_options o = {CKT_COMPILE_NO_CACHE, NULL, 0};
    assert_int_equal(ckt_kernel_compile(NULL, k, "cpu", &o, &e, &err), CKT_OK);
    assert_int_equal(ckt_kernel_footprint(k), before); /* emitting does not change the kernel */
    int ns;
    const ckt_param *sig = ckt_exe_signature(e, &ns);
    assert_int_equal(ns, 3);
    assert_int_equal(sig[2].kind, CKT_PARAM_I32);
    assert_string_equal(ckt_exe_target(e)->arch, CKT_CPU_DEFAULT_ARCH);
    assert_non_null(strstr(ckt_exe_source(e), "doubler"));
    assert_int_equal(ckt_exe_dynamic_lds_bytes(e), 0);
    ckt_device *dev, *other;
    assert_int_equal(ckt_device_open(NULL, "cpu", &dev, &err), CKT_OK);
    assert_int_equal(ckt_device_open(NULL, "cpu", &other, &err), CKT_OK);
    enum { N = 300 };
    float hx[N], hy[N];
    for (int i = 0; i < N; i++) hx[i] = (float)(i * 7 % 13) - 6.5f, hy[i] = NAN;
    ckt_buffer *bx, *by, *bo;
    assert_int_equal(ckt_buffer_alloc(dev, sizeof hx, &bx, &err), CKT_OK);
    assert_int_equal(ckt_buffer_alloc(dev, sizeof hy, &by, &err), CKT_OK);
    assert_int_equal(ckt_buffer_alloc(other, sizeof hy, &bo, &err), CKT_OK);
    assert_int_equal(ckt_buffer_upload(bx, 0, hx, sizeof hx, &err), CKT_OK);
    assert_int_equal(ckt_buffer_upload(by, 0, hy, sizeof hy, &err), CKT_OK);
    const int64_t grid[3] = {(N + 127) / 128, 1, 1};
    ckt_arg args[3] = {ckt_arg_buffer(bx), ckt_arg_buffer(by), ckt_arg_i32(N)};
    assert_int_equal(ckt_exe_launch(e, NULL, grid, args, 3, 0, NULL, &err), CKT_OK);
    assert_int_equal(ckt_buffer_download(by, 0, hy, sizeof hy, &err), CKT_OK);
    for (int i = 0; i < N; i++) assert_true(hy[i] == 2.0f * hx[i]);
    /* refusals */
    REFUSED(ckt_exe_launch(e, dev, grid, args, 2, 0, NULL, &err), CKT_EINVAL,
            "takes 3 arguments, got 2");
    ckt_arg wrong[3] = {ckt_arg_buffer(bx), ckt_arg_i32(1), ckt_arg_i32(N)};
    REFUSED(ckt_exe_launch(e, dev, grid, wrong, 3, 0, NULL, &err), CKT_EINVAL,
            "argument 'Y' must be a buffer, got i32");
    ckt_arg wide[3] = {ckt_arg_buffer(bx), ckt_arg_buffer(by), ckt_arg_i64(N)};
    REFUSED(ckt_exe_launch(e, dev, grid, wide, 3, 0, NULL, &err), CKT_EINVAL,
            "argument 'n' must be i32, got i64");
    ckt_arg null_buf[3] = {ckt_arg_buffer(bx), ckt_arg_buffer(NULL), ckt_arg_i32(N)};
    REFUSED(ckt_exe_launch(e, dev, grid, null_buf, 3, 0, NULL, &err), CKT_EINVAL,
            "'Y' is a NULL buffer");
    ckt_arg foreign[3] = {ckt_arg_buffer(bx), ckt_arg_buffer(bo), ckt_arg_i32(N)};
    REFUSED(ckt_exe_launch(e, dev, grid, foreign, 3, 0, NULL, &err), CKT_EINVAL,
            "'Y' is a buffer of another device");
    ckt_arg odd[3] = {ckt_arg_buffer(bx), ckt_arg_buffer(by), ckt_arg_i32(N - 1)};
    assert_int_not_equal(ckt_exe_launch(e, dev, grid, odd, 3, 0, NULL, &err),
                         CKT_OK); /* n must be a multiple of 4 */
    assert_non_null(strstr(err.msg, "n"));
    ckt_arg none[3] = {ckt_arg_i32(0), ckt_arg_i32(0), ckt_arg_i32(N)};
    REFUSED(ckt_exe_launch(e, NULL, grid, none, 3, 0, NULL, &err), CKT_EINVAL, "no device");
    REFUSED(ckt_exe_launch(e, dev, grid, NULL, 3, 0, NULL, &err), CKT_EINVAL, "args is NULL");
    REFUSED(ckt_exe_launch(e, dev, NULL, args, 3, 0, NULL, &err), CKT_EINVAL, "grid is NULL");
    REFUSED(ckt_exe_launch(NULL, dev, grid, args, 3, 0, NULL, &err), CKT_EINVAL,
            "executable is NULL");
    const int64_t zero[3] = {0, 1, 1};
    REFUSED(ckt_exe_launch(e, dev, zero, args, 3, 0, NULL, &err), CKT_EINVAL, "grid.x is 0");
    ckt_buffer_free(bx);
    ckt_buffer_free(by);
    ckt_buffer_free(bo);
    ckt_device_close(dev);
    ckt_device_close(other);
    ckt_exe_free(e);
    ckt_exe_free(NULL);
    ckt_kernel_destroy(k);
}

static void compile_refusals(void **state)
{
    (void)state;
    ckt_error err;
    ckt_executable *e = (ckt_executable *)&err;
    ckt_kernel *open = doubler(false), *k = doubler(true);
    REFUSED(ckt_kernel_compile(NULL, open, "cpu", NULL, &e, &err), CKT_EINVAL, "not finished");
    assert_null(e);
    REFUSED(ckt_kernel_compile(NULL, k, "vax780", NULL, &e, &err), CKT_EUNSUPPORTED,
            "unknown target 'vax780'");
    REFUSED(ckt_kernel_compile(NULL, k, "", NULL, &e, &err), CKT_EINVAL, "empty");
    REFUSED(ckt_kernel_compile(NULL, k, NULL, NULL, &e, &err), CKT_EINVAL, "empty");
    REFUSED(ckt_kernel_compile(NULL, NULL, "cpu", NULL, &e, &err), CKT_EINVAL, "kernel is NULL");
    REFUSED(ckt_kernel_compile(NULL, k, "cpu", NULL, NULL, &err), CKT_EINVAL, "out is NULL");
    const char *bad_opt[] = {NULL};
    ckt_kernel_compile_options o = {CKT_COMPILE_NO_CACHE, bad_opt, 1};
    REFUSED(ckt_kernel_compile(NULL, k, "cpu", &o, &e, &err), CKT_EINVAL, "option 0 is NULL");
    o.noptions = -1;
    REFUSED(ckt_kernel_compile(NULL, k, "cpu", &o, &e, &err), CKT_EINVAL, "noptions -1");
    ckt_kernel_destroy(open);
    ckt_kernel_destroy(k);
}

/* A let: computed once where it is declared, read by the windows (the launch check of windows
 * against the grid reading through it: tests/lua/launch_safety_spec.lua); refusals name the rule.
 */
static void let_values(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k = doubler_at(true, true);
    const char *src = NULL;
    ckt_executable *e;
    ckt_kernel_compile_options o = {CKT_COMPILE_NO_CACHE, NULL, 0};
    assert_int_equal(ckt_kernel_compile(NULL, k, "cpu", &o, &e, &err), CKT_OK);
    src = ckt_exe_source(e);
    int sets = 0; /* declared, then assigned once */
    for (const char *p = strstr(src, "let0_o = "); p; p = strstr(p + 1, "let0_o = ")) sets++;
    assert_int_equal(sets, 2);
    assert_non_null(strstr(src, "ckt_i64 let0_o = 0;"));
    assert_non_null(strstr(src, "= let0_o")); /* the windows read it */
    ckt_device *dev;
    assert_int_equal(ckt_device_open(NULL, "cpu", &dev, &err), CKT_OK);
    enum { N = 256 };
    float hx[N], hy[N];
    for (int i = 0; i < N; i++) hx[i] = (float)(i % 17) - 8.0f, hy[i] = NAN;
    ckt_buffer *bx, *by;
    assert_int_equal(ckt_buffer_alloc(dev, sizeof hx, &bx, &err), CKT_OK);
    assert_int_equal(ckt_buffer_alloc(dev, sizeof hy, &by, &err), CKT_OK);
    assert_int_equal(ckt_buffer_upload(bx, 0, hx, sizeof hx, &err), CKT_OK);
    assert_int_equal(ckt_buffer_upload(by, 0, hy, sizeof hy, &err), CKT_OK);
    ckt_arg args[3] = {ckt_arg_buffer(bx), ckt_arg_buffer(by), ckt_arg_i32(N)};
    const int64_t grid[3] = {N / 128, 1, 1};
    assert_int_equal(ckt_exe_launch(e, dev, grid, args, 3, 0, NULL, &err), CKT_OK);
    assert_int_equal(ckt_buffer_download(by, 0, hy, sizeof hy, &err), CKT_OK);
    for (int i = 0; i < N; i++) assert_true(hy[i] == 2.0f * hx[i]);
    ckt_buffer_free(bx);
    ckt_buffer_free(by);
    ckt_device_close(dev);
    ckt_exe_free(e);
    ckt_kernel_destroy(k);

    /* the let's facts are its value's */
    assert_int_equal(ckt_kernel_create("lets", 64, &k, &err), CKT_OK);
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    ckt_expr_id v, four = ckt_expr_mulc(ex, ckt_expr_bid(ex, 0), 4);
    assert_int_equal(ckt_kernel_let(k, NULL, four, &v, &err), CKT_OK);
    assert_int_equal(ckt_expr_divisor(ex, v), 4);
    int64_t lo, hi;
    ckt_expr_range(ex, v, &lo, &hi);
    assert_true(lo == 0);
    REFUSED(ckt_kernel_let(k, "t", ckt_expr_tid(ex), &v, &err), CKT_EINVAL, "block-uniform");
    REFUSED(ckt_kernel_let(k, "f", ckt_expr_float(ex, 1.5f), &v, &err), CKT_EINVAL, "integer");
    REFUSED(ckt_kernel_let(k, "9lives", four, &v, &err), CKT_EINVAL, "not an identifier");
    REFUSED(ckt_kernel_let(k, "a_name_longer_than_16", four, &v, &err), CKT_EINVAL,
            "at most 16 characters");
    REFUSED(ckt_kernel_let(k, "x", four, NULL, &err), CKT_EINVAL, "NULL result");
    REFUSED(ckt_kernel_let(NULL, "x", four, &v, &err), CKT_EINVAL, "NULL kernel");
    ckt_expr_id i;
    assert_int_equal(ckt_kernel_loop(k, ckt_expr_int(ex, 4), &i, &err), CKT_OK);
    REFUSED(ckt_kernel_let(k, "in_loop", i, &v, &err), CKT_EINVAL, "inside a loop");
    assert_int_equal(ckt_kernel_end(k, &err), CKT_OK);
    ckt_kernel_destroy(k);
}

/* ckt_kernel_loop_rolled: "#pragma unroll 1" before the loop in the GPU dialects (their compilers
 * would write short constant loops out), nothing in the C dialect; a plain loop has none */
static void rolled_loops(void **state)
{
    (void)state;
    ckt_error err;
    for (int rolled = 0; rolled < 2; rolled++) {
        ckt_kernel *k;
        assert_int_equal(ckt_kernel_create("rolled", 64, &k, &err), CKT_OK);
        ckt_expr_pool *ex = ckt_kernel_exprs(k);
        ckt_expr_id i;
        assert_int_equal(ckt_kernel_loop_rolled(k, ckt_expr_int(ex, 2), rolled, &i, &err), CKT_OK);
        assert_int_equal(ckt_kernel_sync(k, &err), CKT_OK);
        assert_int_equal(ckt_kernel_end(k, &err), CKT_OK);
        assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
        const char *targets[] = {"sm_90", "gfx90a", "cpu"};
        for (int t = 0; t < 3; t++) {
            char *src = NULL;
            assert_int_equal(ckt_emit_named(k, targets[t], &src, &err), CKT_OK);
            bool gpu = t < 2;
            assert_true((strstr(src, "#pragma unroll 1\n    for (ckt_i64 k0 = 0; k0 < 2; ++k0)") !=
                         NULL) == (rolled && gpu));
            free(src);
        }
        ckt_kernel_destroy(k);
    }
    ckt_expr_id i;
    REFUSED(ckt_kernel_loop_rolled(NULL, 0, true, &i, &err), CKT_EINVAL, "NULL");
}

/* ckt_kernel_block_order: each order visits every tile of an m x n grid once, tile numbers past
 * them land past them (never at a negative coordinate, whatever the grouping), and bad arguments
 * are refused naming them */
static void block_orders(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k;
    assert_int_equal(ckt_kernel_create("orders", 32, &k, &err), CKT_OK);
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    const int64_t M = 7, N = 5;
    const ckt_block_order orders[] = {CKT_ORDER_ROW, CKT_ORDER_COL, CKT_ORDER_GROUPED};
    const int64_t groups[] = {1, 3, 8};
    for (int o = 0; o < 3; o++)
        for (int g = 0; g < 3; g++) {
            ckt_expr_id tm, tn;
            assert_int_equal(ckt_kernel_block_order(k, ckt_expr_int(ex, M), ckt_expr_int(ex, N),
                                                    orders[o], groups[g], CKT_EXPR_NONE, &tm, &tn,
                                                    &err),
                             CKT_OK);
            int seen[7 * 5] = {0};
            for (int64_t id = 0; id < M * N + 9; id++) {
                ckt_expr_env env = {0};
                env.bid[0] = id;
                int64_t r, c;
                assert_int_equal(ckt_expr_eval_int(ex, tm, &env, &r, &err), CKT_OK);
                assert_int_equal(ckt_expr_eval_int(ex, tn, &env, &c, &err), CKT_OK);
                assert_true(r >= 0 && c >= 0);
                if (id < M * N) {
                    assert_true(r < M && c < N);
                    seen[r * N + c]++;
                } else {
                    assert_true(r >= M || c >= N);
                }
            }
            for (int i = 0; i < M * N; i++) assert_int_equal(seen[i], 1);
        }
    ckt_expr_id tm, tn, four = ckt_expr_int(ex, 4);
    REFUSED(
        ckt_kernel_block_order(NULL, four, four, CKT_ORDER_ROW, 8, CKT_EXPR_NONE, &tm, &tn, &err),
        CKT_EINVAL, "NULL kernel");
    REFUSED(ckt_kernel_block_order(k, four, four, CKT_ORDER_ROW, 8, CKT_EXPR_NONE, NULL, &tn, &err),
            CKT_EINVAL, "NULL result");
    REFUSED(ckt_kernel_block_order(k, ckt_expr_tid(ex), four, CKT_ORDER_ROW, 8, CKT_EXPR_NONE, &tm,
                                   &tn, &err),
            CKT_EINVAL, "'tiles' must be the same for every thread");
    REFUSED(ckt_kernel_block_order(k, ckt_expr_float(ex, 2.0f), four, CKT_ORDER_ROW, 8,
                                   CKT_EXPR_NONE, &tm, &tn, &err),
            CKT_EINVAL, "'tiles' must be integer expressions");
    REFUSED(
        ckt_kernel_block_order(k, four, four, CKT_ORDER_ROW, 8, ckt_expr_tid(ex), &tm, &tn, &err),
        CKT_EINVAL, "'id' must be the same for every thread");
    REFUSED(ckt_kernel_block_order(k, four, four, CKT_ORDER_ROW, 8, 123456789, &tm, &tn, &err),
            CKT_EINVAL, "'id' must be an integer expression");
    REFUSED(
        ckt_kernel_block_order(k, four, four, CKT_ORDER_GROUPED, 0, CKT_EXPR_NONE, &tm, &tn, &err),
        CKT_EINVAL, "'group' must be in 1..2147483647, got 0");
    REFUSED(ckt_kernel_block_order(k, four, four, CKT_ORDER_GROUPED, (int64_t)1 << 40,
                                   CKT_EXPR_NONE, &tm, &tn, &err),
            CKT_EINVAL, "'group'");
    REFUSED(
        ckt_kernel_block_order(k, four, four, (ckt_block_order)7, 8, CKT_EXPR_NONE, &tm, &tn, &err),
        CKT_EINVAL, "order 7 is not row, col or grouped");
    ckt_kernel_destroy(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reduction_runs),   cmocka_unit_test(compile_and_launch),
        cmocka_unit_test(compile_refusals), cmocka_unit_test(let_values),
        cmocka_unit_test(rolled_loops),     cmocka_unit_test(block_orders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
