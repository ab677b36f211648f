/* Space-filling curves: the examples of CK Tile's space-filling curve documentation, CK's snake
 * semantics against an independent recursive construction, seeded properties over random curves,
 * bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"
#include "ckt/sfc.h"

static ckt_sfc make(int n, const int64_t *len, const int64_t *ord, const int64_t *spa, bool snake)
{
    ckt_sfc s;
    ckt_error err;
    if (ckt_sfc_make(n, len, ord, spa, snake, &s, &err) != CKT_OK)
        fail_msg("sfc_make: %s", err.msg);
    return s;
}

static void expect_index(const ckt_sfc *s, int64_t i, const int64_t *want, bool want_partial)
{
    int64_t c[CKT_SFC_MAX_DIM];
    bool partial = !want_partial;
    ckt_error err;
    if (ckt_sfc_index(s, i, c, &partial, &err) != CKT_OK)
        fail_msg("index %lld: %s", (long long)i, err.msg);
    for (int d = 0; d < s->ndim; d++)
        if (c[d] != want[d])
            fail_msg("access %lld dim %d: got %lld, want %lld", (long long)i, d, (long long)c[d],
                     (long long)want[d]);
    assert_int_equal(partial, want_partial);
}

static void seed_examples(void **state)
{
    (void)state;
    /* row-major 4x6: [0,0], [0,1], ..., [0,5], [1,0] */
    ckt_sfc rm = make(2, (int64_t[]){4, 6}, (int64_t[]){0, 1}, (int64_t[]){1, 1}, false);
    assert_int_equal(rm.num_access, 24);
    expect_index(&rm, 0, (int64_t[]){0, 0}, false);
    expect_index(&rm, 5, (int64_t[]){0, 5}, false);
    expect_index(&rm, 6, (int64_t[]){1, 0}, false);
    expect_index(&rm, 23, (int64_t[]){3, 5}, false);
    /* vector-4 on dim 1 of 4x8: row 0 cols 0:3, row 0 cols 4:7, row 1 cols 0:3 */
    ckt_sfc v4 = make(2, (int64_t[]){4, 8}, (int64_t[]){0, 1}, (int64_t[]){1, 4}, false);
    assert_int_equal(v4.num_access, 8);
    expect_index(&v4, 1, (int64_t[]){0, 4}, false);
    expect_index(&v4, 2, (int64_t[]){1, 0}, false);
    /* column-major 4x6: [0,0], [1,0], [2,0], [3,0], [0,1] */
    ckt_sfc cm = make(2, (int64_t[]){4, 6}, (int64_t[]){1, 0}, NULL, false);
    expect_index(&cm, 1, (int64_t[]){1, 0}, false);
    expect_index(&cm, 4, (int64_t[]){0, 1}, false);
    /* snake 4x8: row 1 runs 7..0, row 3 too */
    ckt_sfc sn = make(2, (int64_t[]){4, 8}, (int64_t[]){0, 1}, NULL, true);
    expect_index(&sn, 7, (int64_t[]){0, 7}, false);
    expect_index(&sn, 8, (int64_t[]){1, 7}, false);
    expect_index(&sn, 15, (int64_t[]){1, 0}, false);
    expect_index(&sn, 16, (int64_t[]){2, 0}, false);
    expect_index(&sn, 24, (int64_t[]){3, 7}, false);
    expect_index(&sn, 31, (int64_t[]){3, 0}, false);
    /* 3-D 4x8x16 with vectors 1, 2, 4: 4*4*4 = 64 accesses */
    ckt_sfc d3 = make(3, (int64_t[]){4, 8, 16}, (int64_t[]){0, 1, 2}, (int64_t[]){1, 2, 4}, false);
    assert_int_equal(d3.num_access, 64);
    for (int d = 0; d < 3; d++) assert_int_equal(d3.access_lengths[d], 4);
    expect_index(&d3, 4, (int64_t[]){0, 2, 0}, false);
    expect_index(&d3, 63, (int64_t[]){3, 6, 12}, false);
    /* GEMM tile 16x32, column-major, vector 8 on dim 1: 64 accesses, down the columns */
    ckt_sfc g = make(2, (int64_t[]){16, 32}, (int64_t[]){1, 0}, (int64_t[]){1, 8}, false);
    assert_int_equal(g.num_access, 64);
    expect_index(&g, 1, (int64_t[]){1, 0}, false);
    expect_index(&g, 16, (int64_t[]){0, 8}, false);
    /* 5x7 with 2x3 accesses: ceil to 3x3, the edge accesses are partial */
    ckt_sfc e = make(2, (int64_t[]){5, 7}, (int64_t[]){0, 1}, (int64_t[]){2, 3}, false);
    assert_int_equal(e.access_lengths[0], 3);
    assert_int_equal(e.access_lengths[1], 3);
    assert_int_equal(e.num_access, 9);
    expect_index(&e, 0, (int64_t[]){0, 0}, false);
    expect_index(&e, 1, (int64_t[]){0, 3}, false);
    expect_index(&e, 2, (int64_t[]){0, 6}, true);
    expect_index(&e, 4, (int64_t[]){2, 3}, false);
    expect_index(&e, 6, (int64_t[]){4, 0}, true);
    expect_index(&e, 8, (int64_t[]){4, 6}, true);
    int64_t st[2];
    ckt_error err;
    assert_int_equal(ckt_sfc_step(&e, 2, 3, st, &err), CKT_OK);
    assert_int_equal(st[0], 2);
    assert_int_equal(st[1], -6);
}

/* CK's rule, checked by hand on a 3-D snake with odd lengths (order 2, 0, 1). */
static void snake_every_level(void **state)
{
    (void)state;
    ckt_sfc s = make(3, (int64_t[]){3, 2, 2}, (int64_t[]){2, 0, 1}, NULL, true);
    /* ordered lengths (2, 3, 2); ordered digits (a, b, c) -> dims (c2=a, d0=b, d1=c):
     * i = 6 is (1,0,0): b reversed (a odd) -> 2; merged 1*3+0 = 3 odd -> c reversed -> 1 */
    expect_index(&s, 6, (int64_t[]){2, 1, 1}, false);
    expect_index(&s, 7, (int64_t[]){2, 0, 1}, false);
    expect_index(&s, 8, (int64_t[]){1, 0, 1},
                 false); /* (1,1,0): b -> 1, merged 4 even: c forward */
    expect_index(&s, 11, (int64_t[]){0, 0, 1}, false);
}

/* Reference: the ordered-digit sequence built by recursion, each block of dims k+1.. reversed
 * as a whole after an odd digit of dim k (the textbook boustrophedon). */
static int64_t ref_build(const int64_t *olen, int n, int k, int64_t *out /* [count][n] */)
{
    /* k >= 4 too: olen has at most 4 entries, and gcc -O3 cannot see that n <= 4 */
    if (k >= n || k >= 4) return 1;
    int64_t inner = 1;
    for (int j = k + 1; j < n; j++) inner *= olen[j];
    int64_t *blk = malloc(sizeof(int64_t) * (size_t)(inner * n + 1));
    ref_build(olen, n, k + 1, blk);
    int64_t w = 0;
    for (int64_t v = 0; v < olen[k]; v++)
        for (int64_t q = 0; q < inner; q++, w++) {
            int64_t src = v % 2 ? inner - 1 - q : q;
            out[w * n + k] = v;
            for (int j = k + 1; j < n; j++) out[w * n + j] = blk[src * n + j];
        }
    free(blk);
    return w;
}

static void properties_over_random_curves(void **state)
{
    (void)state;
    srand(303);
    ckt_error err;
    for (int iter = 0; iter < 500; iter++) {
        int n = 1 + rand() % 4;
        int64_t len[4], spa[4], ord[4];
        for (int d = 0; d < n; d++) {
            len[d] = 1 + rand() % 6;
            spa[d] = 1 + rand() % 3;
            ord[d] = d;
        }
        for (int d = n - 1; d > 0; d--) {
            int j = rand() % (d + 1);
            int64_t t = ord[d];
            ord[d] = ord[j];
            ord[j] = t;
        }
        ckt_sfc lin = make(n, len, ord, spa, false), snk = make(n, len, ord, spa, true);
        assert_int_equal(lin.num_access, snk.num_access);
        int64_t olen[4];
        for (int k = 0; k < n; k++) olen[k] = lin.access_lengths[ord[k]];
        int64_t *ref = malloc(sizeof(int64_t) * (size_t)(lin.num_access * n));
        assert_int_equal(ref_build(olen, n, 0, ref), snk.num_access);
        int64_t cells = 1;
        for (int d = 0; d < n; d++) cells *= lin.access_lengths[d];
        for (int which = 0; which < 2; which++) {
            const ckt_sfc *s = which ? &snk : &lin;
            char *seen = calloc((size_t)cells, 1);
            int64_t prev[4] = {0}, dist_total = 0;
            for (int64_t i = 0; i < s->num_access; i++) {
                int64_t c[4], st[4], back[4];
                bool partial;
                assert_int_equal(ckt_sfc_index(s, i, c, &partial, &err), CKT_OK);
                /* every access coordinate is a multiple of the vector, visited once */
                int64_t key = 0;
                bool want_partial = false;
                for (int d = 0; d < n; d++) {
                    assert_int_equal(c[d] % spa[d], 0);
                    assert_true(c[d] >= 0 && c[d] < len[d]);
                    want_partial |= c[d] + spa[d] > len[d];
                    key = key * lin.access_lengths[d] + c[d] / spa[d];
                }
                assert_int_equal(partial, want_partial);
                assert_false(seen[key]);
                seen[key] = 1;
                /* linear: the ordered digits in lexicographic order; snake: the recursive reference
                 */
                int64_t r = i;
                for (int k = n - 1; k >= 0; k--) {
                    int64_t digit = which ? ref[i * n + k] : r % olen[k];
                    r /= olen[k];
                    assert_int_equal(c[ord[k]], digit * spa[ord[k]]);
                }
                if (i > 0) {
                    assert_int_equal(ckt_sfc_step(s, i - 1, i, st, &err), CKT_OK);
                    assert_int_equal(ckt_sfc_step(s, i, i - 1, back, &err), CKT_OK);
                    int moved = 0;
                    for (int d = 0; d < n; d++) {
                        assert_int_equal(st[d], c[d] - prev[d]);
                        assert_int_equal(back[d], -st[d]);
                        dist_total += llabs(st[d]);
                        if (st[d] != 0) {
                            moved++;
                            if (which)
                                assert_int_equal(llabs(st[d]),
                                                 spa[d]); /* a snake moves one access in one dim */
                        }
                    }
                    if (which) assert_int_equal(moved, 1);
                }
                memcpy(prev, c, sizeof prev);
            }
            free(seen);
            ckt_sfc_locality loc;
            assert_int_equal(ckt_sfc_locality_of(s, 1, 16, &loc, &err), CKT_OK);
            assert_int_equal(loc.sequential + loc.cache_line + loc.large, s->num_access - 1);
            assert_int_equal(loc.total_distance, dist_total);
        }
        ckt_sfc_locality a, b;
        ckt_sfc_locality_of(&lin, 1, 16, &a, &err);
        ckt_sfc_locality_of(&snk, 1, 16, &b, &err);
        assert_true(b.total_distance <= a.total_distance);
        free(ref);
    }
}

static void locality_thresholds(void **state)
{
    (void)state;
    ckt_error err;
    ckt_sfc_locality l;
    /* 4x8 row-major: 28 unit steps, 3 row changes of distance 1 + 7 = 8 */
    ckt_sfc rm = make(2, (int64_t[]){4, 8}, NULL, NULL, false);
    assert_int_equal(ckt_sfc_locality_of(&rm, 1, 16, &l, &err), CKT_OK);
    assert_int_equal(l.sequential, 28);
    assert_int_equal(l.cache_line, 3);
    assert_int_equal(l.large, 0);
    assert_int_equal(l.total_distance, 28 + 3 * 8);
    assert_int_equal(ckt_sfc_locality_of(&rm, 1, 4, &l, &err), CKT_OK);
    assert_int_equal(l.large, 3);
    /* the snake never jumps */
    ckt_sfc sn = make(2, (int64_t[]){4, 8}, NULL, NULL, true);
    assert_int_equal(ckt_sfc_locality_of(&sn, 1, 16, &l, &err), CKT_OK);
    assert_int_equal(l.sequential, 31);
    assert_int_equal(l.total_distance, 31);
    /* one access: no steps */
    ckt_sfc one = make(1, (int64_t[]){3}, NULL, (int64_t[]){4}, false);
    assert_int_equal(ckt_sfc_locality_of(&one, 1, 16, &l, &err), CKT_OK);
    assert_int_equal(l.sequential + l.cache_line + l.large, 0);
}

static void expect_fail_at(ckt_status st, const ckt_error *err, const char *needle, int line)
{
    if (st == CKT_OK) fail_msg("line %d: accepted, expected an error with '%s'", line, needle);
    if (!strstr(err->msg, needle))
        fail_msg("line %d: message '%s' lacks '%s'", line, err->msg, needle);
}
#define expect_fail(st, err, needle) expect_fail_at((st), (err), (needle), __LINE__)

static void bad_input(void **state)
{
    (void)state;
    ckt_sfc s;
    ckt_error err;
    int64_t len[9] = {4, 4, 4, 4, 4, 4, 4, 4, 4};
    expect_fail(ckt_sfc_make(0, len, NULL, NULL, false, &s, &err), &err, "dimensions");
    expect_fail(ckt_sfc_make(9, len, NULL, NULL, false, &s, &err), &err, "dimensions");
    expect_fail(ckt_sfc_make(2, NULL, NULL, NULL, false, &s, &err), &err, "NULL");
    expect_fail(ckt_sfc_make(2, len, NULL, NULL, false, NULL, &err), &err, "NULL");
    expect_fail(ckt_sfc_make(2, (int64_t[]){4, 0}, NULL, NULL, false, &s, &err), &err,
                "lengths[1] = 0 must be positive");
    expect_fail(ckt_sfc_make(2, (int64_t[]){-4, 4}, NULL, NULL, false, &s, &err), &err,
                "lengths[0]");
    expect_fail(ckt_sfc_make(2, len, NULL, (int64_t[]){1, 0}, false, &s, &err), &err,
                "scalars_per_access[1] = 0");
    expect_fail(ckt_sfc_make(2, len, NULL, (int64_t[]){-2, 1}, false, &s, &err), &err,
                "scalars_per_access[0]");
    expect_fail(ckt_sfc_make(2, len, (int64_t[]){0, 0}, NULL, false, &s, &err), &err,
                "permutation");
    expect_fail(ckt_sfc_make(2, len, (int64_t[]){0, 2}, NULL, false, &s, &err), &err,
                "permutation");
    expect_fail(ckt_sfc_make(2, len, (int64_t[]){-1, 0}, NULL, false, &s, &err), &err,
                "permutation");
    /* 2^32 x 2^32 accesses overflow int64 */
    int64_t huge[3] = {INT64_C(1) << 32, INT64_C(1) << 32, INT64_C(1) << 32};
    expect_fail(ckt_sfc_make(3, huge, NULL, NULL, false, &s, &err), &err, "overflows");
    /* the largest lengths that fit still index without overflow at the last access */
    ckt_sfc big = make(1, (int64_t[]){INT64_MAX}, NULL, (int64_t[]){INT64_MAX / 2}, true);
    int64_t c[8];
    bool partial;
    assert_int_equal(ckt_sfc_index(&big, big.num_access - 1, c, &partial, &err), CKT_OK);
    assert_true(partial);
    ckt_sfc ok = make(2, len, NULL, NULL, false);
    expect_fail(ckt_sfc_index(&ok, 16, c, NULL, &err), &err, "out of range");
    expect_fail(ckt_sfc_index(&ok, -1, c, NULL, &err), &err, "out of range");
    expect_fail(ckt_sfc_index(NULL, 0, c, NULL, &err), &err, "NULL");
    expect_fail(ckt_sfc_index(&ok, 0, NULL, NULL, &err), &err, "NULL");
    expect_fail(ckt_sfc_step(&ok, 15, 16, c, &err), &err,
                "out of range"); /* forward_step of the last access */
    expect_fail(ckt_sfc_step(&ok, 0, -1, c, &err), &err,
                "out of range"); /* backward_step of the first */
    expect_fail(ckt_sfc_step(&ok, 0, 1, NULL, &err), &err, "NULL");
    ckt_sfc_locality l;
    expect_fail(ckt_sfc_locality_of(&ok, -1, 16, &l, &err), &err, "thresholds");
    expect_fail(ckt_sfc_locality_of(&ok, 8, 4, &l, &err), &err, "thresholds");
    expect_fail(ckt_sfc_locality_of(&ok, 1, 16, NULL, &err), &err, "NULL");
    ckt_sfc lots = make(2, (int64_t[]){INT64_C(1) << 20, INT64_C(1) << 20}, NULL, NULL, false);
    expect_fail(ckt_sfc_locality_of(&lots, 1, 16, &l, &err), &err, "analysis limit");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed_examples),
        cmocka_unit_test(snake_every_level),
        cmocka_unit_test(properties_over_random_curves),
        cmocka_unit_test(locality_thresholds),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
