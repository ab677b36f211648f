/* IREE nested layouts: the NestedLayoutAttr documentation's example thread by thread, IREE's
 * normalisation and verification, seeded properties over random nested layouts (elements() agrees
 * with the TV view, every element owned by the same number of threads), bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"
#include "ckt/distribution.h"
#include "ckt/nested.h"

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int64_t rnd_in(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static void expect_msg(const char *msg, const char *want)
{
    if (!strstr(msg, want)) fail_msg("message \"%s\" lacks \"%s\"", msg, want);
}

static ckt_nested documented_example(void)
{
    ckt_nested n = {2, {2, 1}, {2, 4}, {1, 1}, {16, 4}, {1, 4}, {1, 0}, {1, 16}, 0};
    return n;
}

static ckt_nested make(ckt_nested in)
{
    ckt_nested out;
    ckt_error err;
    if (ckt_nested_make(&in, &out, &err) != CKT_OK) fail_msg("nested_make: %s", err.msg);
    return out;
}

static void documented_example_example(void **state)
{
    (void)state;
    ckt_nested n = make(documented_example());
    int64_t shape[5 * CKT_NESTED_MAX_RANK];
    ckt_nested_undistributed_shape(&n, shape);
    assert_int_equal(shape[0], 64);
    assert_int_equal(shape[1], 64);
    ckt_nested_distributed_shape(&n, shape);
    int64_t dist[6] = {2, 4, 1, 1, 1, 4};
    assert_memory_equal(shape, dist, sizeof dist);
    ckt_nested_packed_shape(&n, shape);
    int64_t packed[10] = {2, 1, 2, 4, 1, 1, 16, 4, 1, 4};
    assert_memory_equal(shape, packed, sizeof packed);
    assert_int_equal(ckt_nested_values_per_thread(&n), 32); /* vector<2x16> */
    assert_int_equal(ckt_nested_num_subgroups(&n), 2);
    int64_t nt;
    ckt_error err;
    assert_int_equal(ckt_nested_num_threads(&n, 0, &nt, &err), CKT_OK);
    assert_int_equal(nt, 128);
    /* thread 0: virtual thread (0, 0): rows {0, 16}, columns 16*b1 + e; value = (b0*4 + b1)*4 + e
     */
    int64_t c[32 * 2];
    assert_int_equal(ckt_nested_elements(&n, 0, 64, c, &err), CKT_OK);
    for (int b0 = 0; b0 < 2; b0++)
        for (int b1 = 0; b1 < 4; b1++)
            for (int e = 0; e < 4; e++) {
                int v = (b0 * 4 + b1) * 4 + e;
                assert_int_equal(c[2 * v], 16 * b0);
                assert_int_equal(c[2 * v + 1], 16 * b1 + e);
            }
    /* thread 16 is virtual thread (0, 1): four columns to the right */
    assert_int_equal(ckt_nested_elements(&n, 16, 64, c, &err), CKT_OK);
    for (int b0 = 0; b0 < 2; b0++)
        for (int b1 = 0; b1 < 4; b1++)
            for (int e = 0; e < 4; e++) {
                int v = (b0 * 4 + b1) * 4 + e;
                assert_int_equal(c[2 * v], 16 * b0);
                assert_int_equal(c[2 * v + 1], 16 * b1 + 4 + e);
            }
    /* thread 1 is virtual thread (1, 0); thread 64 is subgroup 1: rows 32 and 48 */
    assert_int_equal(ckt_nested_elements(&n, 1, 64, c, &err), CKT_OK);
    assert_int_equal(c[0], 1);
    assert_int_equal(c[1], 0);
    assert_int_equal(ckt_nested_elements(&n, 64 + 5, 64, c, &err), CKT_OK);
    assert_int_equal(c[0], 32 + 5);
    assert_int_equal(c[2 * 16], 48 + 5);
    char buf[512];
    ckt_nested_to_string(&n, buf, sizeof buf);
    assert_string_equal(
        buf, "nested_layout<subgroup_tile = [2, 1], batch_tile = [2, 4], outer_tile = [1, 1], "
             "thread_tile = [16, 4], "
             "element_tile = [1, 4], subgroup_strides = [1, 0], thread_strides = [1, 16]>");
}

/* IREE's outer level: outer_tile=[2,1], thread_tile=[2,5] duplicates the 2x5 thread layout */
static void outer_duplicates_thread_layout(void **state)
{
    (void)state;
    ckt_nested n = make((ckt_nested){2, {1, 1}, {1, 1}, {2, 1}, {2, 5}, {1, 1}, {0, 0}, {5, 1}, 0});
    ckt_error err;
    int64_t c[2 * 2];
    for (int64_t lane = 0; lane < 10; lane++) {
        assert_int_equal(ckt_nested_elements(&n, lane, 10, c, &err), CKT_OK);
        assert_int_equal(c[0], lane / 5); /* outer 0 */
        assert_int_equal(c[1], lane % 5);
        assert_int_equal(c[2], 2 + lane / 5); /* outer 1 */
        assert_int_equal(c[3], lane % 5);
    }
    /* lanes 10..15 of a 16-lane subgroup do not divide into the 10-lane tile: refused */
    assert_int_not_equal(ckt_nested_elements(&n, 12, 16, c, &err), CKT_OK);
    ckt_nested bad = {2, {1, 1}, {1, 1}, {2, 1}, {2, 5}, {1, 1}, {0, 0}, {5, 1}, 16}, out;
    assert_int_not_equal(ckt_nested_make(&bad, &out, &err), CKT_OK);
    expect_msg(err.msg, "the thread tile spans 10 lanes, which does not divide subgroup_size 16");
}

static void normalises_like_iree(void **state)
{
    (void)state;
    /* a tile of 1 is not distributed: its stride becomes 0 */
    ckt_nested n = make((ckt_nested){2, {1, 1}, {1, 1}, {1, 1}, {4, 1}, {1, 1}, {7, 3}, {1, 9}, 0});
    assert_int_equal(n.subgroup_strides[0], 0);
    assert_int_equal(n.subgroup_strides[1], 0);
    assert_int_equal(n.thread_strides[0], 1);
    assert_int_equal(n.thread_strides[1], 0);
    /* a gap between strides is allowed (lanes in between replicate) */
    ckt_nested g = make((ckt_nested){1, {1}, {1}, {1}, {4}, {1}, {0}, {2}, 0});
    int64_t c[1];
    ckt_error err;
    assert_int_equal(ckt_nested_elements(&g, 5, 0, c, &err), CKT_OK);
    assert_int_equal(c[0], 2); /* (5 / 2) % 4 */
    assert_int_equal(ckt_nested_elements(&g, 13, 0, c, &err), CKT_OK);
    assert_int_equal(c[0], 2); /* lanes wrap modulo the tile */
}

static void mfma_c_fragment_as_nested(void **state)
{
    (void)state;
    /* the MFMA C fragment: thread {4,16} strides {16,1} element {4,1}; lane 17 owns rows 4..7 of
     * column 1 */
    ckt_nested n =
        make((ckt_nested){2, {1, 1}, {1, 1}, {1, 1}, {4, 16}, {4, 1}, {0, 0}, {16, 1}, 0});
    int64_t c[4 * 2];
    ckt_error err;
    assert_int_equal(ckt_nested_elements(&n, 17, 64, c, &err), CKT_OK);
    for (int r = 0; r < 4; r++) {
        assert_int_equal(c[2 * r], 4 + r);
        assert_int_equal(c[2 * r + 1], 1);
    }
    ckt_layout tv;
    assert_int_equal(ckt_nested_tv_layout(&n, 64, &tv, &err), CKT_OK);
    char buf[128];
    ckt_layout_to_string(&tv, buf, sizeof buf);
    assert_string_equal(buf, "((16,4),4):((1,64),16)");
}

/* A random valid nested layout: strides nested in a random order, with random gaps. */
static ckt_nested random_nested(void)
{
    ckt_nested n;
    memset(&n, 0, sizeof n);
    n.rank = (int)rnd_in(1, 3);
    int64_t *tiles[5] = {n.subgroup_tile, n.batch_tile, n.outer_tile, n.thread_tile,
                         n.element_tile};
    for (int t = 0; t < 5; t++)
        for (int i = 0; i < n.rank; i++)
            tiles[t][i] = rnd_in(1, t == 0 ? 2 : 5 - n.rank); /* tiles up to a few thousand cells */
    int64_t *strides[2] = {n.subgroup_strides, n.thread_strides},
            *tt[2] = {n.subgroup_tile, n.thread_tile};
    for (int level = 0; level < 2; level++) {
        int perm[CKT_NESTED_MAX_RANK];
        for (int i = 0; i < n.rank; i++) perm[i] = i;
        for (int i = n.rank - 1; i > 0; i--) {
            int j = (int)rnd_in(0, i), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        int64_t running = 1;
        for (int k = 0; k < n.rank; k++) {
            int i = perm[k];
            strides[level][i] = running * (rnd() % 4 == 0 ? 2 : 1);
            running = strides[level][i] * tt[level][i];
        }
    }
    return n;
}

static void random_properties(void **state)
{
    (void)state;
    rng_state = 5;
    int checked = 0;
    for (int trial = 0; trial < 400; trial++) {
        ckt_nested in = random_nested(), n;
        ckt_error err;
        assert_int_equal(ckt_nested_make(&in, &n, &err), CKT_OK);
        int64_t lanes = 1;
        for (int i = 0; i < n.rank; i++)
            if (n.thread_strides[i] && n.thread_strides[i] * n.thread_tile[i] > lanes)
                lanes = n.thread_strides[i] * n.thread_tile[i];
        int64_t sgs = lanes * rnd_in(1, 2), nt, shape[CKT_NESTED_MAX_RANK], cells = 1;
        assert_int_equal(ckt_nested_num_threads(&n, sgs, &nt, &err), CKT_OK);
        ckt_nested_undistributed_shape(&n, shape);
        for (int i = 0; i < n.rank; i++) cells *= shape[i];
        int64_t nv = ckt_nested_values_per_thread(&n), distinct = 1;
        for (int i = 0; i < n.rank; i++) distinct *= n.subgroup_tile[i] * n.thread_tile[i];
        assert_int_equal(cells, distinct * nv);
        ckt_layout tv;
        ckt_status st = ckt_nested_tv_layout(&n, sgs, &tv, &err);
        if (st != CKT_OK) { /* only a layout with more leaves than a mode holds */
            expect_msg(err.msg, "capacity");
            continue;
        }
        checked++;
        assert_int_equal(ckt_layout_size(&tv), nt * nv);
        int64_t *count = calloc((size_t)cells, sizeof *count),
                *c = malloc(sizeof(int64_t) * (size_t)(nv * n.rank));
        for (int64_t t = 0; t < nt; t++) {
            assert_int_equal(ckt_nested_elements(&n, t, sgs, c, &err), CKT_OK);
            for (int64_t v = 0; v < nv; v++) {
                int64_t off = 0, got;
                for (int i = 0; i < n.rank; i++) {
                    assert_true(c[v * n.rank + i] >= 0 && c[v * n.rank + i] < shape[i]);
                    off = off * shape[i] + c[v * n.rank + i];
                }
                count[off]++;
                ckt_tuple crd;
                int64_t tvc[2] = {t, v};
                ckt_tuple_flat(&crd, 2, tvc, &err);
                assert_int_equal(ckt_layout_eval_coord(&tv, &crd, &got, &err), CKT_OK);
                assert_int_equal(got, off);
            }
        }
        /* every element has the same number of owners: the replication of the id spaces */
        for (int64_t i = 0; i < cells; i++) assert_int_equal(count[i], nt / distinct);
        free(count);
        free(c);
    }
    assert_true(checked > 300);
}

static void refusals(void **state)
{
    (void)state;
    ckt_nested n, out;
    ckt_error err;
#define REFUSE(edit, want)                                                                         \
    do {                                                                                           \
        n = documented_example();                                                                  \
        edit;                                                                                      \
        assert_int_not_equal(ckt_nested_make(&n, &out, &err), CKT_OK);                             \
        expect_msg(err.msg, "nested_layout: ");                                                    \
        expect_msg(err.msg, want);                                                                 \
    } while (0)
    REFUSE(n.rank = 0, "rank 0 is out of range [1, 4]");
    REFUSE(n.rank = 5, "rank 5");
    REFUSE(n.subgroup_tile[0] = 0, "subgroup_tile[0] is 0; tiles must be positive");
    REFUSE(n.batch_tile[1] = 0, "batch_tile[1] is 0");
    REFUSE(n.outer_tile[0] = -1, "outer_tile[0] is -1");
    REFUSE(n.thread_tile[1] = 0, "thread_tile[1] is 0");
    REFUSE(n.element_tile[1] = 0, "element_tile[1] is 0");
    REFUSE(n.thread_strides[0] = -1, "thread_strides[0] is negative");
    REFUSE(n.subgroup_strides[0] = -2, "subgroup_strides[0] is negative");
    REFUSE(n.thread_strides[1] = 0, "thread_tile[1] = 4 but its stride is 0");
    REFUSE(n.subgroup_strides[0] = 0, "subgroup_tile[0] = 2 but its stride is 0");
    /* IREE's example of strides that do not nest: thread_tile=[4,8], thread_strides=[1,2] */
    REFUSE((n.thread_tile[0] = 4, n.thread_tile[1] = 8, n.thread_strides[0] = 1,
            n.thread_strides[1] = 2),
           "thread_strides do not nest: dim 1 has stride 2, which is not a multiple of 4");
    REFUSE((n.thread_strides[0] = 4, n.thread_strides[1] = 4), "thread_strides do not nest");
    REFUSE((n.subgroup_tile[1] = 2, n.subgroup_strides[1] = 1), "subgroup_strides do not nest");
    REFUSE(n.batch_tile[0] = INT64_MAX / 4, "overflows");
    REFUSE(n.thread_strides[1] = (int64_t)1 << 62, "thread_strides overflow");
    REFUSE(n.subgroup_size = 48,
           "the thread tile spans 64 lanes, which does not divide subgroup_size 48");
    REFUSE(n.subgroup_size = -1, "subgroup_size -1 is negative");
#undef REFUSE
    assert_int_equal(ckt_nested_make(NULL, &out, &err), CKT_EINVAL);
    n = documented_example();
    assert_int_equal(ckt_nested_make(&n, NULL, &err), CKT_EINVAL);

    ckt_nested s = make(documented_example());
    int64_t c[64], nt;
    assert_int_equal(ckt_nested_elements(&s, 128, 64, c, &err), CKT_EINVAL);
    expect_msg(err.msg, "elements: thread id 128 is out of range [0, 128)");
    assert_int_equal(ckt_nested_elements(&s, -1, 64, c, &err), CKT_EINVAL);
    assert_int_equal(ckt_nested_elements(&s, 0, -64, c, &err), CKT_EINVAL);
    assert_int_equal(ckt_nested_elements(&s, 0, 32, c, &err), CKT_EINVAL);
    expect_msg(err.msg, "does not divide the subgroup size 32");
    assert_int_equal(ckt_nested_elements(&s, 0, 64, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_nested_elements(NULL, 0, 64, c, &err), CKT_EINVAL);
    ckt_layout tv;
    assert_int_equal(ckt_nested_tv_layout(&s, 96, &tv, &err), CKT_EINVAL);
    assert_int_equal(ckt_nested_tv_layout(&s, -1, &tv, &err), CKT_EINVAL);
    assert_int_equal(ckt_nested_tv_layout(NULL, 64, &tv, &err), CKT_EINVAL);
    assert_int_equal(ckt_nested_tv_layout(&s, 64, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_nested_num_threads(&s, 48, &nt, &err), CKT_EINVAL);
    assert_int_equal(ckt_nested_num_threads(&s, 64, NULL, &err), CKT_EINVAL);
    /* subgroup ids spanning 2^62 (a stride gap) times 2^31 lanes: the thread count overflows */
    const int64_t g = (int64_t)1 << 31;
    ckt_nested big = make((ckt_nested){1, {g}, {1}, {1}, {g}, {1}, {g}, {1}, 0});
    assert_int_equal(ckt_nested_num_threads(&big, 0, &nt, &err),
                     CKT_EINVAL); /* 2^31 lanes do not divide 64 */
    assert_int_equal(ckt_nested_num_threads(&big, g, &nt, &err), CKT_EOVERFLOW);
    assert_int_equal(ckt_nested_elements(&big, 0, g, c, &err), CKT_EOVERFLOW);
}

/* Many gaps: more thread leaves than a layout mode holds is a clear error, never a truncation. */
static void tv_capacity(void **state)
{
    (void)state;
    ckt_nested n = make((ckt_nested){4,
                                     {2, 2, 2, 2},
                                     {1, 1, 1, 1},
                                     {1, 1, 1, 1},
                                     {2, 2, 2, 2},
                                     {1, 1, 1, 1},
                                     {2, 8, 32, 128},
                                     {2, 8, 32, 128},
                                     0});
    ckt_layout tv;
    ckt_error err;
    assert_int_equal(ckt_nested_tv_layout(&n, 512, &tv, &err), CKT_ECAPACITY);
    expect_msg(err.msg, "capacity");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(documented_example_example),
        cmocka_unit_test(outer_duplicates_thread_layout),
        cmocka_unit_test(normalises_like_iree),
        cmocka_unit_test(mfma_c_fragment_as_nested),
        cmocka_unit_test(random_properties),
        cmocka_unit_test(refusals),
        cmocka_unit_test(tv_capacity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
