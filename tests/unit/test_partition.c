/* Partitions of kernel tiles among threads (kernel_partition.c, CuTe's local_partition): the
 * thread index forms, the tile of a window or tensor, the value options, and the partition
 * itself checked element by element against CuTe's definition; every refusal names the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"

#define REFUSED(call, text)                                                                        \
    do {                                                                                           \
        assert_int_equal((call), CKT_EINVAL);                                                      \
        if (!strstr(err.msg, (text))) fail_msg("%s", err.msg);                                     \
    } while (0)

/* A kernel of `block` threads with a global 64 x 128 f32 tensor (static shape), a 32 x 64 window
 * of it at the block's origin, an LDS 16 x 8 tensor, a runtime-sized tensor and registers. */
typedef struct {
    ckt_kernel *k;
    int global, window, lds, runtime, regs;
} fixture;

static fixture make(int64_t block)
{
    fixture f;
    ckt_error err;
    int p, n;
    assert_int_equal(ckt_kernel_create("part", block, &f.k, &err), CKT_OK);
    ckt_expr_pool *ex = ckt_kernel_exprs(f.k);
    assert_int_equal(ckt_kernel_param_ptr(f.k, "X", CKT_F32, false, 16, &p, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_scalar(f.k, "n", CKT_PARAM_I32, false, 0, 0, 1, &n, &err),
                     CKT_OK);
    ckt_expr_id shape[2] = {ckt_expr_int(ex, 64), ckt_expr_int(ex, 128)},
                stride[2] = {ckt_expr_int(ex, 128), ckt_expr_int(ex, 1)};
    assert_int_equal(ckt_kernel_global(f.k, p, CKT_F32, 2, shape, stride, false, &f.global, &err),
                     CKT_OK);
    ckt_expr_id rshape[2] = {ckt_kernel_param(f.k, n)->expr, ckt_expr_int(ex, 128)};
    assert_int_equal(ckt_kernel_global(f.k, p, CKT_F32, 2, rshape, stride, false, &f.runtime, &err),
                     CKT_OK);
    const int64_t len[2] = {32, 64};
    ckt_expr_id origin[2] = {ckt_expr_mulc(ex, ckt_expr_bid(ex, 0), 32), ckt_expr_int(ex, 0)};
    assert_int_equal(ckt_kernel_window_make(f.k, f.global, 2, len, origin, &f.window, &err),
                     CKT_OK);
    ckt_layout lay;
    assert_int_equal(ckt_layout_parse("(16,8):(8,1)", &lay, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(f.k, CKT_F32, &lay, NULL, &f.lds, &err), CKT_OK);
    assert_int_equal(ckt_kernel_registers(f.k, CKT_F32, -1, 4, &f.regs, &err), CKT_OK);
    return f;
}

static ckt_expr_id op(ckt_kernel *k, ckt_expr_op o, ckt_expr_id a, int64_t c)
{
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    return ckt_expr_binary(ex, o, a, ckt_expr_int(ex, c));
}

static void thread_index_forms(void **state)
{
    (void)state;
    fixture f = make(256);
    ckt_expr_pool *ex = ckt_kernel_exprs(f.k);
    ckt_error err;
    int64_t q, m;
    ckt_expr_id tid = ckt_expr_tid(ex);
    assert_int_equal(ckt_partition_thread_index(f.k, tid, &q, &m, &err), CKT_OK);
    assert_true(q == 1 && m == 0);
    assert_int_equal(ckt_partition_thread_index(f.k, op(f.k, CKT_E_DIV, tid, 4), &q, &m, &err),
                     CKT_OK);
    assert_true(q == 4 && m == 0);
    assert_int_equal(ckt_partition_thread_index(f.k, op(f.k, CKT_E_MOD, tid, 8), &q, &m, &err),
                     CKT_OK);
    assert_true(q == 1 && m == 8);
    /* (tid >> 2) & 7 = (tid / 4) % 8; (tid % 64) / 8 = (tid / 8) % 8 */
    assert_int_equal(ckt_partition_thread_index(
                         f.k, op(f.k, CKT_E_AND, op(f.k, CKT_E_SHR, tid, 2), 7), &q, &m, &err),
                     CKT_OK);
    assert_true(q == 4 && m == 8);
    assert_int_equal(ckt_partition_thread_index(
                         f.k, op(f.k, CKT_E_DIV, op(f.k, CKT_E_MOD, tid, 64), 8), &q, &m, &err),
                     CKT_OK);
    assert_true(q == 8 && m == 8);
    REFUSED(ckt_partition_thread_index(f.k, op(f.k, CKT_E_ADD, tid, 1), &q, &m, &err),
            "thread index must be the thread id");
    REFUSED(ckt_partition_thread_index(f.k, op(f.k, CKT_E_MUL, tid, 2), &q, &m, &err), "got ");
    REFUSED(ckt_partition_thread_index(f.k, ckt_expr_bid(ex, 0), &q, &m, &err),
            "does not depend on the thread id");
    REFUSED(ckt_partition_thread_index(f.k, op(f.k, CKT_E_DIV, op(f.k, CKT_E_MOD, tid, 12), 8), &q,
                                       &m, &err),
            "thread index must be");
    REFUSED(ckt_partition_thread_index(f.k, (ckt_expr_id)1 << 30, &q, &m, &err),
            "no expression of this kernel");
    REFUSED(ckt_partition_thread_index(NULL, tid, &q, &m, &err), "NULL");
    ckt_kernel_destroy(f.k);
}

static void tiles_and_values(void **state)
{
    (void)state;
    fixture f = make(256);
    ckt_error err;
    int64_t len[CKT_K_MAX_RANK];
    int rank;
    assert_int_equal(ckt_partition_tile(f.k, -1, f.window, len, &rank, &err), CKT_OK);
    assert_true(rank == 2 && len[0] == 32 && len[1] == 64);
    assert_int_equal(ckt_partition_tile(f.k, f.global, -1, len, &rank, &err), CKT_OK);
    assert_true(rank == 2 && len[0] == 64 && len[1] == 128);
    assert_int_equal(ckt_partition_tile(f.k, f.lds, -1, len, &rank, &err), CKT_OK);
    assert_true(rank == 2 && len[0] == 16 && len[1] == 8);
    REFUSED(ckt_partition_tile(f.k, f.regs, -1, len, &rank, &err),
            "register tensor is already per thread");
    REFUSED(ckt_partition_tile(f.k, f.runtime, -1, len, &rank, &err), "dim 0 of tensor");
    REFUSED(ckt_partition_tile(f.k, 99, -1, len, &rank, &err), "no tensor 99");
    REFUSED(ckt_partition_tile(f.k, -1, 99, len, &rank, &err), "no window 99");

    int64_t v[CKT_K_MAX_RANK];
    bool given;
    ckt_partition_opts o = {.nvalues = -1};
    assert_int_equal(ckt_partition_values(2, &o, v, &given, &err), CKT_OK);
    assert_true(!given && v[0] == 1 && v[1] == 1);
    o.has_scalar_per_vector = true;
    o.scalar_per_vector = 4;
    assert_int_equal(ckt_partition_values(2, &o, v, &given, &err), CKT_OK);
    assert_true(given && v[0] == 1 && v[1] == 4); /* the last dim by default */
    o.has_vector_dim = true;
    o.vector_dim = 0;
    assert_int_equal(ckt_partition_values(2, &o, v, &given, &err), CKT_OK);
    assert_true(v[0] == 4 && v[1] == 1);
    o.vector_dim = 2;
    REFUSED(ckt_partition_values(2, &o, v, &given, &err), "vector_dim 2 outside 0..1");
    o.vector_dim = -1;
    REFUSED(ckt_partition_values(2, &o, v, &given, &err), "vector_dim -1 outside 0..1");
    o.vector_dim = 0;
    o.scalar_per_vector = 32;
    REFUSED(ckt_partition_values(2, &o, v, &given, &err), "scalar_per_vector 32 outside 1..16");
    o.scalar_per_vector = 0;
    REFUSED(ckt_partition_values(2, &o, v, &given, &err), "scalar_per_vector 0 outside 1..16");
    o = (ckt_partition_opts){.nvalues = -1, .has_vector_dim = true};
    REFUSED(ckt_partition_values(2, &o, v, &given, &err), "vector_dim needs scalar_per_vector");
    o = (ckt_partition_opts){.nvalues = 2, .values = {2, 3}};
    assert_int_equal(ckt_partition_values(2, &o, v, &given, &err), CKT_OK);
    assert_true(given && v[0] == 2 && v[1] == 3);
    o.nvalues = 1;
    REFUSED(ckt_partition_values(2, &o, v, &given, &err),
            "values lists 1 extents for a rank-2 tile");
    o = (ckt_partition_opts){
        .nvalues = 2, .values = {1, 2}, .has_scalar_per_vector = true, .scalar_per_vector = 2};
    REFUSED(ckt_partition_values(2, &o, v, &given, &err), "not both");
    o = (ckt_partition_opts){
        .nvalues = -1, .packed = true, .has_scalar_per_vector = true, .scalar_per_vector = 2};
    REFUSED(ckt_partition_values(2, &o, v, &given, &err), "packed=true");
    REFUSED(ckt_partition_values(0, &o, v, &given, &err), "rank 0");
    ckt_kernel_destroy(f.k);
}

/* The partition of the 32 x 64 window over a (16,16):(1,16) thread layout: thread i has
 * c = (i % 16, i / 16) and owns (c0 + 16 k0, c1 + 16 k1) (CuTe's local_partition), 2 x 4 values;
 * with scalar_per_vector 2 along dim 1: (c0 + 16 k0, 2 c1 + j + 32 k1), j < 2. */
static void partition_matches_cute(void **state)
{
    (void)state;
    for (int vec = 1; vec <= 2; vec++) {
        fixture f = make(256);
        ckt_error err;
        ckt_layout thr;
        assert_int_equal(ckt_layout_parse("(16,16):(1,16)", &thr, &err), CKT_OK);
        ckt_partition_opts o = {
            .nvalues = -1, .has_scalar_per_vector = vec == 2, .scalar_per_vector = vec};
        int dist, win;
        assert_int_equal(ckt_kernel_partition(f.k, -1, f.window, &thr,
                                              ckt_expr_tid(ckt_kernel_exprs(f.k)), &o, &dist, &win,
                                              &err),
                         CKT_OK);
        const ckt_dist *d = ckt_kernel_dist(f.k, dist);
        const ckt_kwindow *w = ckt_kernel_window(f.k, win),
                          *parent = ckt_kernel_window(f.k, f.window);
        assert_int_equal(w->tensor, f.global);
        assert_true(w->rank == 2 && w->lengths[0] == 32 && w->lengths[1] == 64);
        /* it starts where the parent window is when partitioned */
        assert_int_equal(w->init[0], parent->origin[0]);
        assert_int_equal(w->init[1], parent->origin[1]);
        assert_int_equal(d->nvalues, 8);
        static int owner[32][64];
        memset(owner, 0, sizeof owner);
        for (int64_t t = 0; t < 256; t++) {
            int64_t c0 = t % 16, c1 = t / 16;
            for (int64_t v = 0; v < d->nvalues; v++) {
                int64_t coord[CKT_K_MAX_RANK];
                ckt_dist_coord(d, t, v, coord);
                assert_true(coord[0] >= 0 && coord[0] < 32 && coord[1] >= 0 && coord[1] < 64);
                assert_int_equal(coord[0] % 16, c0);
                if (vec == 1)
                    assert_int_equal(coord[1] % 16, c1);
                else
                    assert_int_equal((coord[1] % 32) / 2, c1);
                owner[coord[0]][coord[1]]++;
            }
        }
        for (int r = 0; r < 32; r++)
            for (int c = 0; c < 64; c++) assert_int_equal(owner[r][c], 1); /* every element once */
        ckt_kernel_destroy(f.k);
    }
}

static void partition_refusals(void **state)
{
    (void)state;
    fixture f = make(64);
    ckt_error err;
    ckt_layout thr;
    assert_int_equal(ckt_layout_parse("(16,16):(1,16)", &thr, &err), CKT_OK);
    ckt_expr_id tid = ckt_expr_tid(ckt_kernel_exprs(f.k));
    ckt_partition_opts o = {.nvalues = -1};
    int dist, win;
    /* 256 threads in the layout, 64 in the block */
    REFUSED(ckt_kernel_partition(f.k, -1, f.window, &thr, tid, &o, &dist, &win, &err), "64");
    REFUSED(ckt_kernel_partition(f.k, f.regs, -1, &thr, tid, &o, &dist, &win, &err),
            "register tensor");
    REFUSED(ckt_kernel_partition(f.k, -1, f.window, &thr, op(f.k, CKT_E_ADD, tid, 1), &o, &dist,
                                 &win, &err),
            "thread index");
    o.nvalues = 3;
    REFUSED(ckt_kernel_partition(f.k, -1, f.window, &thr, tid, &o, &dist, &win, &err),
            "values lists 3");
    REFUSED(ckt_kernel_partition(f.k, -1, f.window, NULL, tid, &o, &dist, &win, &err), "NULL");
    ckt_kernel_destroy(f.k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(thread_index_forms),
        cmocka_unit_test(tiles_and_values),
        cmocka_unit_test(partition_matches_cute),
        cmocka_unit_test(partition_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
