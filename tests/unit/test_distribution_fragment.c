/* Fragments and the common TV view: every lane and register of every fragment against the lane
 * tables of AMD's MFMA instructions and the PTX ISA's mma.sync (written here as formulas,
 * independently of fragment.c's layouts), the same fragments as CK encodings and as nested layouts,
 * same_distribution (strict and not, true for equal pairs, false for perturbed ones), bad input. */
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
#include "ckt/fragment.h"

static void expect_msg(const char *msg, const char *want)
{
    if (!strstr(msg, want)) fail_msg("message \"%s\" lacks \"%s\"", msg, want);
}

/* (row, col) that lane l, register r holds, per AMD's MFMA tables and the PTX ISA's mma.sync
 * fragments */
static void lane_table(const char *name, char op, int64_t l, int64_t r, int64_t *row, int64_t *col)
{
    if (strstr(name, "32x32x8")) {
        if (op == 'A') {
            *row = l % 32;
            *col = 4 * (l / 32) + r;
        } else if (op == 'B') {
            *row = 4 * (l / 32) + r;
            *col = l % 32;
        } else {
            *row = 8 * (r / 4) + 4 * (l / 32) + r % 4;
            *col = l % 32;
        }
    } else if (strstr(name, "16x16x16")) {
        if (op == 'A') {
            *row = l % 16;
            *col = 4 * (l / 16) + r;
        } else {
            *row = 4 * (l / 16) + r;
            *col = l % 16;
        }
    } else { /* mma m16n8k16: g = l>>2, t = l%4 */
        int64_t g = l >> 2, t = l % 4;
        if (op == 'A') {
            *row = (r == 0 || r == 1 || r == 4 || r == 5) ? g : g + 8;
            *col = r < 4 ? 2 * t + (r & 1) : 2 * t + 8 + (r & 1);
        } else if (op == 'B') {
            *row = r < 2 ? 2 * t + (r & 1) : 2 * t + 8 + (r & 1);
            *col = g;
        } else {
            *row = r < 2 ? g : g + 8;
            *col = 2 * t + (r & 1);
        }
    }
}

static const char *const names[] = {"mfma_f32_32x32x8f16", "mfma_f32_16x16x16f16",
                                    "mfma_f32_32x32x8bf16_1k", "mfma_f32_16x16x16bf16_1k",
                                    "mma_m16n8k16"};

static void every_lane_of_every_fragment(void **state)
{
    (void)state;
    const int64_t want_shape[5][3][2] = {{{32, 8}, {8, 32}, {32, 32}},
                                         {{16, 16}, {16, 16}, {16, 16}},
                                         {{32, 8}, {8, 32}, {32, 32}},
                                         {{16, 16}, {16, 16}, {16, 16}},
                                         {{16, 16}, {16, 8}, {16, 8}}};
    for (int i = 0; i < 5; i++)
        for (int o = 0; o < 3; o++) {
            char op = "ABC"[o];
            ckt_fragment f;
            ckt_error err;
            assert_int_equal(ckt_fragment_get(names[i], op, &f, &err), CKT_OK);
            assert_int_equal(f.rows, want_shape[i][o][0]);
            assert_int_equal(f.cols, want_shape[i][o][1]);
            assert_int_equal(f.rows * f.cols, f.lanes * f.values); /* each element once */
            ckt_encoding e;
            ckt_nested n;
            ckt_layout etv, ntv;
            assert_int_equal(ckt_fragment_encoding(&f, &e, &err), CKT_OK);
            assert_int_equal(ckt_fragment_nested(&f, &n, &err), CKT_OK);
            assert_int_equal(ckt_encoding_tv_layout(&e, &etv, &err), CKT_OK);
            assert_int_equal(ckt_nested_tv_layout(&n, 0, &ntv, &err), CKT_OK);
            assert_int_equal(ckt_encoding_num_threads(&e), f.lanes);
            int64_t *coords = malloc(sizeof(int64_t) * (size_t)f.values * 2);
            for (int64_t l = 0; l < f.lanes; l++) {
                assert_int_equal(ckt_nested_elements(&n, l, 0, coords, &err), CKT_OK);
                for (int64_t r = 0; r < f.values; r++) {
                    int64_t row, col, off, xs[2], ys[CKT_DIST_MAX_Y], ylen[CKT_DIST_MAX_Y],
                        rest = r;
                    lane_table(names[i], op, l, r, &row, &col);
                    ckt_tuple c;
                    int64_t lr[2] = {l, r};
                    ckt_tuple_flat(&c, 2, lr, &err);
                    assert_int_equal(ckt_layout_eval_coord(&f.tv, &c, &off, &err), CKT_OK);
                    if (off != row * f.cols + col)
                        fail_msg("%s %c lane %lld reg %lld: offset %lld, table (%lld, %lld)",
                                 names[i], op, (long long)l, (long long)r, (long long)off,
                                 (long long)row, (long long)col);
                    assert_int_equal(ckt_layout_eval_coord(&etv, &c, &off, &err), CKT_OK);
                    assert_int_equal(off, row * f.cols + col);
                    assert_int_equal(ckt_layout_eval_coord(&ntv, &c, &off, &err), CKT_OK);
                    assert_int_equal(off, row * f.cols + col);
                    /* the encoding's calculate_index and the nested layout's elements() say the
                     * same */
                    ckt_encoding_ys_lengths(&e, ylen, NULL);
                    for (int y = e.d.ny - 1; y >= 0; y--) {
                        ys[y] = rest % ylen[y];
                        rest /= ylen[y];
                    }
                    assert_int_equal(ckt_encoding_calculate_index(&e, l, ys, xs, &err), CKT_OK);
                    assert_int_equal(xs[0], row);
                    assert_int_equal(xs[1], col);
                    assert_int_equal(coords[2 * r], row);
                    assert_int_equal(coords[2 * r + 1], col);
                }
            }
            free(coords);
            bool same;
            assert_int_equal(ckt_same_distribution(&f.tv, &etv, true, &same, &err), CKT_OK);
            assert_true(same);
            assert_int_equal(ckt_same_distribution(&f.tv, &ntv, true, &same, &err), CKT_OK);
            assert_true(same);
        }
}

static ckt_layout parse(const char *s)
{
    ckt_layout l;
    ckt_error err;
    if (ckt_layout_parse(s, &l, &err) != CKT_OK) fail_msg("parse %s: %s", s, err.msg);
    return l;
}

static bool same(const char *a, const char *b, bool strict)
{
    ckt_layout x = parse(a), y = parse(b);
    bool s;
    ckt_error err;
    if (ckt_same_distribution(&x, &y, strict, &s, &err) != CKT_OK)
        fail_msg("same_distribution: %s", err.msg);
    return s;
}

static void same_distribution_semantics(void **state)
{
    (void)state;
    /* the MFMA 16x16 C fragment against twins written with other value modes */
    assert_true(same("((16,4),4):((1,64),16)", "((16,4),4):((1,64),16)", true));
    assert_true(same("((16,4),4):((1,64),16)", "((16,4),(2,2)):((1,64),(16,32))", true));
    assert_true(same("((16,4),4):((1,64),16)", "((16,4),(2,2)):((1,64),(32,16))",
                     false)); /* values permuted */
    assert_false(same("((16,4),4):((1,64),16)", "((16,4),(2,2)):((1,64),(32,16))",
                      true)); /* ... so not strictly */
    assert_false(
        same("((16,4),4):((1,64),16)", "((4,16),4):((64,1),16)", false)); /* threads permuted */
    assert_false(
        same("((16,4),4):((1,64),16)", "((16,4),2):((1,64),16)", false)); /* fewer values */
    assert_false(
        same("((16,4),4):((1,64),16)", "((16,2),4):((1,64),16)", false)); /* fewer threads */
    /* replicated threads compare by their elements too */
    assert_true(same("((4,2),2):((2,0),1)", "((4,2),2):((2,0),1)", true));
    assert_false(same("((4,2),2):((2,0),1)", "((4,2),2):((2,8),1)", false));
    /* the MFMA A and B fragments of 16x16x16 are different distributions of a 16x16 tile */
    ckt_fragment a, b;
    ckt_error err;
    assert_int_equal(ckt_fragment_get("mfma_f32_16x16x16f16", 'A', &a, &err), CKT_OK);
    assert_int_equal(ckt_fragment_get("mfma_f32_16x16x16f16", 'b', &b, &err), CKT_OK);
    bool s;
    assert_int_equal(ckt_same_distribution(&a.tv, &b.tv, false, &s, &err), CKT_OK);
    assert_false(s);
    /* a perturbed nested layout (swapped thread strides) differs from the fragment */
    ckt_nested in = {2, {1, 1}, {1, 1}, {1, 1}, {4, 16}, {4, 1}, {0, 0}, {1, 4}, 0}, n;
    ckt_layout tv;
    assert_int_equal(ckt_nested_make(&in, &n, &err), CKT_OK);
    assert_int_equal(ckt_nested_tv_layout(&n, 64, &tv, &err), CKT_OK);
    assert_int_equal(ckt_same_distribution(&b.tv, &tv, false, &s, &err), CKT_OK);
    assert_false(s);
    /* 'D' is the C operand */
    ckt_fragment c, d;
    assert_int_equal(ckt_fragment_get("mma_m16n8k16", 'C', &c, &err), CKT_OK);
    assert_int_equal(ckt_fragment_get("mma_m16n8k16", 'D', &d, &err), CKT_OK);
    assert_true(ckt_layout_equal(&c.tv, &d.tv));
}

/* Thread- and warp-raked patterns are IREE nested layouts too (the warp is the subgroup, the lane's
 * row and column the thread tile; the iterations are elements (thread raked) or batches (warp
 * raked)); block raked puts the iteration above the warp, which a nested layout cannot. */
static uint64_t rng_state = 99;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void patterns_as_nested_layouts(void **state)
{
    (void)state;
    int compared = 0, different = 0;
    for (int trial = 0; trial < 400; trial++) {
        int64_t warp = rnd() % 2 ? 64 : 32;
        ckt_pattern_2d p = {warp << (rnd() % 3),
                            (int64_t)4 << (rnd() % 5),
                            (int64_t)4 << (rnd() % 5),
                            (int64_t)1 << (rnd() % 4),
                            1,
                            warp,
                            (ckt_pattern_kind)(1 + rnd() % 3)};
        ckt_encoding e;
        ckt_error err;
        if (ckt_encoding_pattern_2d(&p, &e, &err) != CKT_OK) continue;
        bool thread = p.pattern == CKT_THREAD_RAKED;
        int64_t iters = thread ? e.y2 : p.pattern == CKT_WARP_RAKED ? e.y1 : e.y0;
        int64_t warps = p.pattern == CKT_BLOCK_RAKED ? e.y1 : e.y0,
                rows = p.pattern == CKT_THREAD_RAKED ? e.y1 : e.y2;
        /* the nested layout of the thread- or warp-raked reading of these numbers */
        ckt_nested in = {2,      {warps, 1},   {thread ? 1 : iters, 1},
                         {1, 1}, {rows, e.x1}, {thread ? iters : 1, e.x0},
                         {1, 0}, {e.x1, 1},    warp},
                   n;
        assert_int_equal(ckt_nested_make(&in, &n, &err), CKT_OK);
        ckt_layout a, b;
        assert_int_equal(ckt_encoding_tv_layout(&e, &a, &err), CKT_OK);
        assert_int_equal(ckt_nested_tv_layout(&n, 0, &b, &err), CKT_OK);
        bool same_strict, same_set;
        assert_int_equal(ckt_same_distribution(&a, &b, true, &same_strict, &err), CKT_OK);
        assert_int_equal(ckt_same_distribution(&a, &b, false, &same_set, &err), CKT_OK);
        if (p.pattern != CKT_BLOCK_RAKED) {
            assert_true(same_strict);
            compared++;
        } else if (iters > 1 && warps > 1) {
            assert_false(same_set); /* the iteration above the warp is another distribution */
            different++;
        }
    }
    assert_true(compared > 100);
    assert_true(different > 20);
}

static void refusals(void **state)
{
    (void)state;
    ckt_fragment f;
    ckt_error err;
    assert_int_equal(ckt_fragment_get("mfma_f32_64x64", 'A', &f, &err), CKT_EINVAL);
    expect_msg(err.msg, "fragment: unknown instruction 'mfma_f32_64x64'");
    assert_int_equal(ckt_fragment_get("mma_m16n8k16", 'Q', &f, &err), CKT_EINVAL);
    expect_msg(err.msg, "operand 'Q' of mma_m16n8k16 is not one of A, B, C");
    assert_int_equal(ckt_fragment_get(NULL, 'A', &f, &err), CKT_EINVAL);
    assert_int_equal(ckt_fragment_get("mma_m16n8k16", 'A', NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_fragment_get("", 'A', &f, &err), CKT_EINVAL);
    /* a fragment value that does not name a known fragment */
    assert_int_equal(ckt_fragment_get("mma_m16n8k16", 'A', &f, &err), CKT_OK);
    f.operand = 'Z';
    ckt_encoding e;
    ckt_nested n;
    assert_int_equal(ckt_fragment_encoding(&f, &e, &err), CKT_EINVAL);
    expect_msg(err.msg, "not a fragment ckt knows");
    assert_int_equal(ckt_fragment_nested(&f, &n, &err), CKT_EINVAL);
    assert_int_equal(ckt_fragment_encoding(NULL, &e, &err), CKT_EINVAL);
    f.operand = 'A';
    assert_int_equal(ckt_fragment_encoding(&f, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_fragment_nested(&f, NULL, &err), CKT_EINVAL);
    const char *const *known = ckt_fragment_names();
    int count = 0;
    while (known[count]) {
        assert_int_equal(ckt_fragment_get(known[count], 'C', &f, &err), CKT_OK);
        count++;
    }
    assert_int_equal(count, 3);

    /* same_distribution and the owner table */
    ckt_layout tv = parse("((16,4),4):((1,64),16)"), flat = parse("(64,4):(1,64)"),
               one = parse("256:1"), huge = parse("((65536,65536),2):((0,0),1)");
    bool s;
    assert_int_equal(ckt_same_distribution(&one, &tv, false, &s, &err), CKT_EINVAL);
    expect_msg(
        err.msg,
        "same_distribution: the first argument is not a (thread, value) layout (rank 1, need 2)");
    assert_int_equal(ckt_same_distribution(&tv, &one, false, &s, &err), CKT_EINVAL);
    expect_msg(err.msg, "the second argument");
    assert_int_equal(ckt_same_distribution(&huge, &huge, false, &s, &err), CKT_ECAPACITY);
    expect_msg(err.msg, "analysis limit");
    assert_int_equal(ckt_same_distribution(NULL, &tv, false, &s, &err), CKT_EINVAL);
    assert_int_equal(ckt_same_distribution(&tv, &tv, false, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_same_distribution(&tv, &flat, false, &s, &err), CKT_OK);
    assert_false(s);
    int64_t ot[256], ov[256];
    assert_int_equal(ckt_tv_owners(&tv, 256, ot, ov, &err), CKT_OK);
    assert_int_equal(ot[17], 1); /* row 1, column 1: lane 1, register 1 */
    assert_int_equal(ov[17], 1);
    assert_int_equal(ot[4 * 16 + 1], 17); /* row 4, column 1: lane 17, register 0 */
    assert_int_equal(ov[4 * 16 + 1], 0);
    assert_int_equal(ckt_tv_owners(&tv, 100, ot, ov, &err), CKT_EINVAL);
    expect_msg(err.msg, "outside the 100-cell tile");
    assert_int_equal(ckt_tv_owners(&one, 256, ot, ov, &err), CKT_EINVAL);
    assert_int_equal(ckt_tv_owners(&huge, 256, ot, ov, &err), CKT_ECAPACITY);
    assert_int_equal(ckt_tv_owners(&tv, -1, ot, ov, &err), CKT_EINVAL);
    assert_int_equal(ckt_tv_owners(&tv, 256, NULL, ov, &err), CKT_EINVAL);
    ckt_layout out;
    int64_t sz[2] = {2, 3}, st[2] = {1, 2};
    assert_int_equal(ckt_tv_from_leaves(2, sz, st, 1, sz, st, &out, &err), CKT_OK);
    assert_int_equal(ckt_tv_from_leaves(-1, sz, st, 1, sz, st, &out, &err), CKT_EINVAL);
    assert_int_equal(ckt_tv_from_leaves(2, NULL, st, 1, sz, st, &out, &err), CKT_EINVAL);
    assert_int_equal(ckt_tv_from_leaves(2, sz, st, 1, sz, st, NULL, &err), CKT_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_lane_of_every_fragment),
        cmocka_unit_test(same_distribution_semantics),
        cmocka_unit_test(patterns_as_nested_layouts),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
