/* Layout algebra: seeded property tests over thousands of random layouts of depth <= 2
 * (small sizes so every property is checked by brute force over the whole domain).
 * The generator mixes stride orders, holes, zero and negative strides; each property
 * also counts how often it was really exercised so a vacuous pass fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"

static uint64_t rng_state;
static void seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ull + 1; }
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int64_t pick(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

enum kind {
    ANY,       /* strides anywhere in [-6, 12], zeros included */
    INJECTIVE, /* positive strides in a random order, with holes */
    COMPACT,   /* a bijection onto [0, size): a permuted column-major layout */
};

/* A random layout of rank 1..3 whose modes are integers or pairs (depth <= 2). */
static ckt_layout random_layout(enum kind k, int max_shape)
{
    ckt_error err;
    int r = (int)pick(1, 3), leaves = 0, sub[3];
    int64_t s[6], d[6];
    for (int i = 0; i < r; i++) {
        sub[i] = (int)pick(1, 2);
        for (int j = 0; j < sub[i]; j++) s[leaves++] = pick(1, max_shape);
    }
    if (k == ANY) {
        for (int i = 0; i < leaves; i++) d[i] = pick(0, 4) == 0 ? 0 : pick(-6, 12);
    } else {
        /* lay the leaves out in a random order, each starting where the previous ends */
        int order[6];
        for (int i = 0; i < leaves; i++) order[i] = i;
        for (int i = leaves - 1; i > 0; i--) {
            int j = (int)pick(0, i), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        int64_t cur = 1;
        for (int i = 0; i < leaves; i++) {
            int m = order[i];
            d[m] = cur * (k == COMPACT ? 1 : pick(1, 2));
            cur = d[m] * s[m];
        }
    }
    ckt_tuple shapes[3], strides[3];
    for (int i = 0, at = 0; i < r; at += sub[i], i++) {
        if (sub[i] == 1) {
            shapes[i] = ckt_tuple_int(s[at]);
            strides[i] = ckt_tuple_int(d[at]);
        } else {
            ckt_tuple_flat(&shapes[i], sub[i], &s[at], &err);
            ckt_tuple_flat(&strides[i], sub[i], &d[at], &err);
        }
    }
    ckt_tuple sh, st;
    if (r == 1) {
        sh = shapes[0];
        st = strides[0];
    } else {
        assert_int_equal(ckt_tuple_make(&sh, r, shapes, &err), CKT_OK);
        assert_int_equal(ckt_tuple_make(&st, r, strides, &err), CKT_OK);
    }
    ckt_layout out;
    assert_int_equal(ckt_layout_make(&out, &sh, &st, &err), CKT_OK);
    return out;
}

static int64_t ev(const ckt_layout *l, int64_t i)
{
    int64_t o;
    ckt_error err;
    if (ckt_layout_eval(l, i, &o, &err) != CKT_OK) fail_msg("eval %lld: %s", (long long)i, err.msg);
    return o;
}

/* A's function beyond its domain: colexicographic, the last leaf takes what is left
 * (CuTe's meaning of A(x) for x >= size(A), which composition relies on). */
static int64_t ev_ext(const ckt_layout *l, int64_t x)
{
    int64_t s[64], d[64];
    int n = ckt_tuple_flatten(&l->shape, s, 64);
    ckt_tuple_flatten(&l->stride, d, 64);
    int64_t off = 0;
    for (int i = 0; i < n; i++) {
        int64_t c = i + 1 < n ? x % s[i] : x;
        off += c * d[i];
        x = i + 1 < n ? x / s[i] : 0;
    }
    return off;
}

static void str(const ckt_layout *l, char *buf) { ckt_layout_to_string(l, buf, 512); }

/* Is l a bijection onto [0, n)? */
static bool bijection_onto(const ckt_layout *l, int64_t n)
{
    if (ckt_layout_size(l) != n) return false;
    char *seen = calloc((size_t)n, 1);
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++) {
        int64_t o = ev(l, i);
        if (o < 0 || o >= n || seen[o])
            ok = false;
        else
            seen[o] = 1;
    }
    free(seen);
    return ok;
}

static bool injective(const ckt_layout *l)
{
    int64_t n = ckt_layout_size(l), c = ckt_layout_cosize(l);
    char *seen = calloc((size_t)(2 * c + 1), 1);
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++) {
        int64_t o = ev(l, i) + c;
        if (seen[o]) ok = false;
        seen[o] = 1;
    }
    free(seen);
    return ok;
}

static void coalesce_filter_parse_eval(void **state)
{
    (void)state;
    ckt_error err;
    seed(1);
    for (int t = 0; t < 4000; t++) {
        ckt_layout a = random_layout(ANY, 5), c, f, p;
        char buf[512], again[512];
        assert_int_equal(ckt_coalesce(&a, &c, &err), CKT_OK);
        assert_int_equal(ckt_layout_size(&c), ckt_layout_size(&a));
        assert_true(ckt_layout_depth(&c) <= 1);
        for (int64_t i = 0; i < ckt_layout_size(&a); i++) assert_int_equal(ev(&c, i), ev(&a, i));
        /* filter keeps the image, drops the broadcast modes */
        assert_int_equal(ckt_filter(&a, &f, &err), CKT_OK);
        int64_t s[64], d[64], want = 1;
        int n = ckt_tuple_flatten(&a.shape, s, 64);
        ckt_tuple_flatten(&a.stride, d, 64);
        for (int i = 0; i < n; i++) want *= d[i] ? s[i] : 1;
        assert_int_equal(ckt_layout_size(&f), want);
        for (int64_t i = 0; i < ckt_layout_size(&f); i++) {
            int64_t o = ev(&f, i);
            bool found = false;
            for (int64_t j = 0; j < ckt_layout_size(&a) && !found; j++) found = ev(&a, j) == o;
            assert_true(found);
        }
        /* print -> parse is the identity; a coordinate and its index agree */
        str(&a, buf);
        assert_int_equal(ckt_layout_parse(buf, &p, &err), CKT_OK);
        assert_true(ckt_layout_equal(&p, &a));
        str(&p, again);
        assert_string_equal(buf, again);
        for (int64_t i = 0; i < ckt_layout_size(&a); i++) {
            ckt_tuple crd;
            int64_t o, back;
            assert_int_equal(ckt_idx2crd(&a.shape, i, &crd, &err), CKT_OK);
            assert_int_equal(ckt_layout_eval_coord(&a, &crd, &o, &err), CKT_OK);
            assert_int_equal(o, ev(&a, i));
            assert_int_equal(ckt_crd2idx(&a.shape, &crd, &back, &err), CKT_OK);
            assert_int_equal(back, i);
        }
    }
}

static void composition_is_function_composition(void **state)
{
    (void)state;
    ckt_error err;
    int admissible = 0, beyond = 0, refused = 0;
    seed(2);
    for (int t = 0; t < 6000; t++) {
        /* admissible B: injective (any order, holes) plus broadcast modes; A anything */
        ckt_layout a = random_layout(t % 3 == 0 ? ANY : INJECTIVE, 4),
                   b = random_layout(INJECTIVE, 4), r;
        if (t % 4 == 0) {
            int64_t leaf = pick(0, ckt_tuple_leaves(&b.stride) - 1);
            for (int i = 0; i < b.stride.n; i++)
                if (b.stride.arity[i] == CKT_LEAF && leaf-- == 0) b.stride.value[i] = 0;
        }
        if (ckt_composition(&a, &b, &r, &err) != CKT_OK) {
            assert_non_null(strstr(err.msg, "composition:"));
            refused++;
            continue;
        }
        /* R is compatible with B: same size, and per mode when B is a tuple */
        assert_int_equal(ckt_layout_size(&r), ckt_layout_size(&b));
        if (!ckt_tuple_is_int(&b.shape)) assert_int_equal(ckt_layout_rank(&r), ckt_layout_rank(&b));
        for (int m = 0; m < ckt_layout_rank(&b) && !ckt_tuple_is_int(&b.shape); m++) {
            ckt_layout rm, bm;
            ckt_layout_mode(&r, m, &rm, &err);
            ckt_layout_mode(&b, m, &bm, &err);
            assert_int_equal(ckt_layout_size(&rm), ckt_layout_size(&bm));
        }
        bool outside = false;
        for (int64_t i = 0; i < ckt_layout_size(&b); i++) {
            int64_t x = ev(&b, i);
            if (x >= ckt_layout_size(&a)) outside = true;
            if (ev(&r, i) != ev_ext(&a, x)) {
                char sa[512], sb[512], sr[512];
                str(&a, sa), str(&b, sb), str(&r, sr);
                fail_msg("%s o %s = %s: R(%lld) = %lld, A(B(i)) = %lld", sa, sb, sr, (long long)i,
                         (long long)ev(&r, i), (long long)ev_ext(&a, x));
            }
        }
        if (outside)
            beyond++;
        else
            admissible++;
    }
    /* arbitrary B (negative, overlapping strides): an answer or a reason, never a crash */
    for (int t = 0; t < 3000; t++) {
        ckt_layout a = random_layout(ANY, 5), b = random_layout(ANY, 5), r;
        if (ckt_composition(&a, &b, &r, &err) == CKT_OK)
            assert_int_equal(ckt_layout_size(&r), ckt_layout_size(&b));
        else
            assert_non_null(strstr(err.msg, "composition: "));
    }
    assert_true(admissible > 1000);
    assert_true(beyond > 300);
    assert_true(refused > 100);
}

static void composition_literal_edges(void **state)
{
    (void)state;
    ckt_error err;
    static const char *const cases[][3] = {
        {"(4,3):(3,1)", "6:2", "(2,3):(6,1)"},
        {"12:2", "(4,3):(3,1)", "(4,3):(6,2)"},
        {"(4,1):(1,0)", "8:1",
         "(4,2):(1,0)"},                 /* A's size-1 last mode still extends A (coalesce_x) */
        {"1:5", "4:1", "4:5"},           /* an integral A scales */
        {"(4,3):(3,1)", "1:3", "1:1"},   /* a single point: no divisibility needed */
        {"(4,8):(1,4)", "4:-1", "4:-1"}, /* negative strides of B keep their sign */
        {"(4,8):(8,1)", "(8,2):(4,0)", "(8,2):(1,0)"}, /* stride 4 skips mode 0 entirely */
        {"(4,8):(8,1)", "(2,8):(2,4)", "(2,8):(16,1)"},
        {"((2,2),8):((1,16),2)", "(4,4):(1,4)", "((2,2),4):((1,16),2)"},
        {"(8,16):(1,8)", "(4,8):(1,4)", "(4,8):(1,4)"}, /* A coalesces to 128:1 */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        ckt_layout a, b, r;
        char got[512];
        assert_int_equal(ckt_layout_parse(cases[k][0], &a, &err), CKT_OK);
        assert_int_equal(ckt_layout_parse(cases[k][1], &b, &err), CKT_OK);
        if (ckt_composition(&a, &b, &r, &err) != CKT_OK)
            fail_msg("%s o %s: %s", cases[k][0], cases[k][1], err.msg);
        str(&r, got);
        if (strcmp(got, cases[k][2]) != 0)
            fail_msg("%s o %s = %s, want %s", cases[k][0], cases[k][1], got, cases[k][2]);
    }
}

static void complement_and_inverses(void **state)
{
    (void)state;
    ckt_error err;
    seed(3);
    int left = 0;
    for (int t = 0; t < 4000; t++) {
        ckt_layout a = random_layout(t % 2 ? INJECTIVE : COMPACT, 4), c, pair, ri, li;
        int64_t cot = ckt_layout_cosize(&a) * pick(1, 3) + pick(0, 2);
        assert_int_equal(ckt_complement(&a, cot, &c, &err), CKT_OK);
        int64_t sc = ckt_layout_size(&c);
        for (int64_t i = 1; i < sc; i++) assert_true(ev(&c, i) > ev(&c, i - 1)); /* ordered */
        for (int64_t i = 1; i < sc; i++) /* disjoint from A except 0 */
            for (int64_t j = 0; j < ckt_layout_size(&a); j++)
                assert_int_not_equal(ev(&c, i), ev(&a, j));
        /* (A, complement) is a bijection onto [0, size) that covers the cotarget */
        ckt_tuple s2[2] = {a.shape, c.shape}, d2[2] = {a.stride, c.stride};
        ckt_tuple ps, pd;
        ckt_tuple_make(&ps, 2, s2, &err);
        ckt_tuple_make(&pd, 2, d2, &err);
        assert_int_equal(ckt_layout_make(&pair, &ps, &pd, &err), CKT_OK);
        assert_true(ckt_layout_size(&pair) >= cot);
        assert_true(bijection_onto(&pair, ckt_layout_size(&pair)));
        /* inverses */
        assert_int_equal(ckt_right_inverse(&a, &ri, &err), CKT_OK);
        for (int64_t i = 0; i < ckt_layout_size(&ri); i++) assert_int_equal(ev(&a, ev(&ri, i)), i);
        assert_int_equal(ckt_left_inverse(&a, &li, &err), CKT_OK);
        for (int64_t i = 0; i < ckt_layout_size(&a); i++) assert_int_equal(ev(&li, ev(&a, i)), i);
        left++;
        if (t % 2 == 0)
            assert_int_equal(ckt_layout_size(&ri),
                             ckt_layout_size(&a)); /* compact: a full inverse */
        /* right_inverse of any layout, even with zero or negative strides */
        ckt_layout any = random_layout(ANY, 4), rany;
        assert_int_equal(ckt_right_inverse(&any, &rany, &err), CKT_OK);
        for (int64_t i = 0; i < ckt_layout_size(&rany); i++) {
            int64_t x = ev(&rany, i);
            assert_true(x >= 0 && x < ckt_layout_size(&any));
            assert_int_equal(ev(&any, x), i);
        }
    }
    assert_true(left == 4000);
}

static void divides(void **state)
{
    (void)state;
    ckt_error err;
    seed(4);
    int checked = 0, by_mode = 0;
    for (int t = 0; t < 4000; t++) {
        ckt_layout a = random_layout(t % 2 ? INJECTIVE : ANY, 4), b = random_layout(INJECTIVE, 3),
                   d, m0, c, pair;
        if (ckt_logical_divide(&a, 0, &b, &d, &err) == CKT_OK) {
            assert_int_equal(ckt_layout_rank(&d), 2);
            ckt_layout_mode(&d, 0, &m0, &err);
            assert_int_equal(ckt_layout_size(&m0), ckt_layout_size(&b));
            assert_int_equal(ckt_layout_rank(&m0), ckt_layout_rank(&b));
            /* the same function as A o (B, complement(B, size(A))) */
            assert_int_equal(ckt_complement(&b, ckt_layout_size(&a), &c, &err), CKT_OK);
            ckt_tuple s2[2] = {b.shape, c.shape}, d2[2] = {b.stride, c.stride};
            ckt_tuple ps, pd;
            ckt_tuple_make(&ps, 2, s2, &err);
            ckt_tuple_make(&pd, 2, d2, &err);
            ckt_layout_make(&pair, &ps, &pd, &err);
            assert_int_equal(ckt_layout_size(&d), ckt_layout_size(&pair));
            for (int64_t i = 0; i < ckt_layout_size(&d); i++)
                assert_int_equal(ev(&d, i), ev_ext(&a, ev(&pair, i)));
            checked++;
        } else {
            assert_non_null(strstr(err.msg, "logical_divide"));
        }
        /* per-mode tilers on a rank-2 layout: logical, zipped, tiled, flat are one function */
        int64_t sh[2] = {pick(1, 3) * 2, pick(1, 3) * 4}, st[2] = {1, sh[0]};
        if (t % 2) st[0] = sh[1], st[1] = 1;
        ckt_layout A, T[2], lg, zp, td, fl;
        ckt_layout_flat(&A, 2, sh, st, &err);
        int64_t t0 = 2, t1 = pick(1, 2) * 2, one = 1, s0 = pick(1, 2);
        ckt_layout_flat(&T[0], 1, &t0, &s0, &err);
        ckt_layout_flat(&T[1], 1, &t1, &one, &err);
        if (ckt_logical_divide(&A, 2, T, &lg, &err) != CKT_OK) continue;
        assert_int_equal(ckt_zipped_divide(&A, 2, T, &zp, &err), CKT_OK);
        assert_int_equal(ckt_tiled_divide(&A, 2, T, &td, &err), CKT_OK);
        assert_int_equal(ckt_flat_divide(&A, 2, T, &fl, &err), CKT_OK);
        assert_int_equal(ckt_layout_rank(&zp), 2);
        assert_int_equal(ckt_layout_rank(&td), 3);
        assert_int_equal(ckt_layout_rank(&fl), 4);
        /* ((t0,r0),(t1,r1)) == ((t0,t1),(r0,r1)) == ((t0,t1),r0,r1) == (t0,t1,r0,r1) */
        ckt_layout l0, l1;
        ckt_layout_mode(&lg, 0, &l0, &err);
        ckt_layout_mode(&lg, 1, &l1, &err);
        int64_t n0 = ckt_layout_size(&l0), n1 = ckt_layout_size(&l1);
        ckt_layout m00, m10;
        ckt_layout_mode(&l0, 0, &m00, &err);
        ckt_layout_mode(&l1, 0, &m10, &err);
        int64_t T0 = ckt_layout_size(&m00), T1 = ckt_layout_size(&m10), R0 = n0 / T0, R1 = n1 / T1;
        for (int64_t a0 = 0; a0 < T0; a0++)
            for (int64_t b0 = 0; b0 < R0; b0++)
                for (int64_t a1 = 0; a1 < T1; a1++)
                    for (int64_t b1 = 0; b1 < R1; b1++) {
                        int64_t vl, vz, vt, vf, c4[4] = {a0, a1, b0, b1};
                        ckt_tuple cl, cz, ct, cf, x[2], y[3];
                        int64_t p0[2] = {a0, b0}, p1[2] = {a1, b1}, tt[2] = {a0, a1},
                                rr[2] = {b0, b1};
                        ckt_tuple_flat(&x[0], 2, p0, &err);
                        ckt_tuple_flat(&x[1], 2, p1, &err);
                        ckt_tuple_make(&cl, 2, x, &err);
                        ckt_tuple_flat(&x[0], 2, tt, &err);
                        ckt_tuple_flat(&x[1], 2, rr, &err);
                        ckt_tuple_make(&cz, 2, x, &err);
                        y[0] = x[0];
                        y[1] = ckt_tuple_int(b0);
                        y[2] = ckt_tuple_int(b1);
                        ckt_tuple_make(&ct, 3, y, &err);
                        ckt_tuple_flat(&cf, 4, c4, &err);
                        assert_int_equal(ckt_layout_eval_coord(&lg, &cl, &vl, &err), CKT_OK);
                        assert_int_equal(ckt_layout_eval_coord(&zp, &cz, &vz, &err), CKT_OK);
                        assert_int_equal(ckt_layout_eval_coord(&td, &ct, &vt, &err), CKT_OK);
                        assert_int_equal(ckt_layout_eval_coord(&fl, &cf, &vf, &err), CKT_OK);
                        assert_int_equal(vl, vz);
                        assert_int_equal(vl, vt);
                        assert_int_equal(vl, vf);
                    }
        by_mode++;
    }
    assert_true(checked > 1000);
    assert_true(by_mode > 1000);
}

/* Products with a tuple of per-mode tilers (CuTe's transform_layout): mode i of the logical product
 * is the product of A's mode i by tiler i, the other modes are A's; zipped, tiled and flat are
 * the same function with the blocks first (the 1-D index walks the blocks, then the rests). */
static int64_t colex(int n, const int64_t *digit, const int64_t *size)
{
    int64_t idx = 0;
    for (int i = n - 1; i >= 0; i--) idx = idx * size[i] + digit[i];
    return idx;
}

static void products_with_tuple_tilers(void **state)
{
    (void)state;
    ckt_error err;
    seed(8);
    int checked = 0, refused = 0, kept = 0;
    for (int t = 0; t < 3000; t++) {
        ckt_layout A = random_layout(t % 2 ? INJECTIVE : COMPACT, 3), T[3], lp, zp, td, fl;
        int r = ckt_layout_rank(&A), n = ckt_tuple_is_int(&A.shape) ? 1 : (int)pick(1, r);
        for (int i = 0; i < n; i++) T[i] = random_layout(t % 3 ? COMPACT : INJECTIVE, 3);
        if (ckt_logical_product_tiler(&A, n, T, &lp, &err) != CKT_OK) {
            assert_non_null(strstr(err.msg, "logical_product: "));
            refused++;
            continue;
        }
        assert_int_equal(ckt_zipped_product_tiler(&A, n, T, &zp, &err), CKT_OK);
        assert_int_equal(ckt_tiled_product_tiler(&A, n, T, &td, &err), CKT_OK);
        assert_int_equal(ckt_flat_product(&A, n, T, &fl, &err), CKT_OK);
        /* mode by mode: block i = A_i, rest i from the single-layout product; the others kept */
        int m = ckt_tuple_is_int(&A.shape) ? 1 : r;
        int64_t sz[2 * CKT_MAX_RANK], zsz[2 * CKT_MAX_RANK];
        int nd = 0;
        for (int i = 0; i < m; i++) {
            ckt_layout ai, li, want;
            if (m == 1 && ckt_tuple_is_int(&A.shape))
                ai = A, li = lp;
            else
                ckt_layout_mode(&A, i, &ai, &err), ckt_layout_mode(&lp, i, &li, &err);
            if (i < n) {
                assert_int_equal(ckt_logical_product(&ai, &T[i], &want, &err), CKT_OK);
                assert_true(ckt_layout_equal(&li, &want));
                sz[nd++] = ckt_layout_size(&ai);
                sz[nd++] = ckt_layout_size(&T[i]);
            } else {
                assert_true(ckt_layout_equal(&li, &ai));
                sz[nd++] = ckt_layout_size(&ai);
                kept++;
            }
        }
        int64_t total = ckt_layout_size(&lp);
        assert_int_equal(ckt_layout_size(&zp), total);
        assert_int_equal(ckt_layout_size(&td), total);
        assert_int_equal(ckt_layout_size(&fl), total);
        if (total > 4096) continue;
        /* digits in the logical product's order (b0 q0 b1 q1 ... others) and the zipped order (b...
         * q... others) */
        int zmap[2 * CKT_MAX_RANK], k = 0;
        for (int i = 0; i < n; i++) zmap[k++] = 2 * i;
        for (int i = 0; i < n; i++) zmap[k++] = 2 * i + 1;
        for (int i = 2 * n; i < nd; i++) zmap[k++] = i;
        for (int i = 0; i < nd; i++) zsz[i] = sz[zmap[i]];
        for (int64_t x = 0; x < total; x++) {
            int64_t dg[2 * CKT_MAX_RANK], zd[2 * CKT_MAX_RANK], rest = x;
            for (int i = 0; i < nd; i++) dg[i] = rest % sz[i], rest /= sz[i];
            for (int i = 0; i < nd; i++) zd[i] = dg[zmap[i]];
            int64_t want = ev(&lp, colex(nd, dg, sz)), zi = colex(nd, zd, zsz);
            assert_int_equal(ev(&zp, zi), want);
            assert_int_equal(ev(&td, zi), want);
            assert_int_equal(ev(&fl, zi), want);
        }
        checked++;
    }
    assert_true(checked > 1000);
    assert_true(kept > 100);
    (void)refused;
}

static void products(void **state)
{
    (void)state;
    ckt_error err;
    seed(5);
    int bij = 0, holes = 0;
    for (int t = 0; t < 3000; t++) {
        ckt_layout a = random_layout(t % 2 ? INJECTIVE : COMPACT, 3),
                   b = random_layout(t % 3 ? INJECTIVE : COMPACT, 3), p, m0;
        /* a compact block always has a one-mode complement; with holes B must fit them */
        if (ckt_logical_product(&a, &b, &p, &err) != CKT_OK) {
            assert_true(t % 2 == 1);
            assert_non_null(strstr(err.msg, "logical_product: "));
            continue;
        }
        holes += t % 2;
        ckt_layout_mode(&p, 0, &m0, &err);
        assert_true(ckt_layout_equal(&m0, &a));
        assert_int_equal(ckt_layout_size(&p), ckt_layout_size(&a) * ckt_layout_size(&b));
        assert_true(injective(&p));
        /* blocked and raked products of compact layouts tile [0, size(A) size(B)) exactly */
        ckt_layout ca = random_layout(COMPACT, 3), cb = random_layout(COMPACT, 3), bp, rp;
        int64_t n = ckt_layout_size(&ca) * ckt_layout_size(&cb);
        int r = ckt_layout_rank(&ca) > ckt_layout_rank(&cb) ? ckt_layout_rank(&ca)
                                                            : ckt_layout_rank(&cb);
        assert_int_equal(ckt_blocked_product(&ca, &cb, &bp, &err), CKT_OK);
        assert_int_equal(ckt_raked_product(&ca, &cb, &rp, &err), CKT_OK);
        assert_int_equal(ckt_layout_rank(&bp), r == 1 ? 2 : r);
        assert_true(bijection_onto(&bp, n));
        assert_true(bijection_onto(&rp, n));
        /* blocked: the block's first-mode elements are adjacent in the result's first mode */
        if (r >= 2) {
            ckt_layout b0, bb;
            ckt_layout_mode(&bp, 0, &b0, &err);
            ckt_layout_mode(&b0, 0, &bb, &err);
            ckt_layout ma;
            ckt_layout_mode(&ca, 0, &ma, &err);
            assert_true(ckt_layout_equal(&bb, &ma));
        }
        bij++;
    }
    assert_true(bij > 2000 && holes > 500);
}

static void tv_layouts_and_tiling(void **state)
{
    (void)state;
    ckt_error err;
    seed(6);
    for (int t = 0; t < 2000; t++) {
        int64_t ts[2] = {pick(1, 4), pick(1, 4)}, vs[2] = {pick(1, 3), pick(1, 3)}, td[2], vd[2];
        /* thread and value layouts in either order (row- or column-major) */
        if (t % 2)
            td[0] = 1, td[1] = ts[0];
        else
            td[0] = ts[1], td[1] = 1;
        if (t % 3)
            vd[0] = 1, vd[1] = vs[0];
        else
            vd[0] = vs[1], vd[1] = 1;
        ckt_layout thr, val, tv, mn;
        ckt_tuple tiler;
        ckt_layout_flat(&thr, 2, ts, td, &err);
        ckt_layout_flat(&val, 2, vs, vd, &err);
        assert_int_equal(ckt_make_layout_tv(&thr, &val, &tiler, &tv, &err), CKT_OK);
        assert_int_equal(ckt_raked_product(&thr, &val, &mn, &err), CKT_OK);
        int64_t n = ts[0] * ts[1] * vs[0] * vs[1], tl[2];
        assert_int_equal(ckt_tuple_flatten(&tiler, tl, 2), 2);
        assert_int_equal(tl[0], ts[0] * vs[0]);
        assert_int_equal(tl[1], ts[1] * vs[1]);
        assert_true(bijection_onto(&tv, n));
        /* (thread t, value v) -> an (m, n) position whose raked index is t + v * size(thr) */
        for (int64_t i = 0; i < n; i++) assert_int_equal(ev(&mn, ev(&tv, i)), i);
        /* tile_to_shape: the block repeated to the target shape, a bijection for a compact block */
        ckt_layout blk = random_layout(COMPACT, 3), tts;
        int rb = ckt_layout_rank(&blk);
        int64_t tgt[3];
        for (int m = 0; m < rb; m++) {
            ckt_layout bm;
            ckt_layout_mode(&blk, m, &bm, &err);
            tgt[m] = ckt_layout_size(&bm) * pick(1, 3);
        }
        ckt_tuple tshape;
        if (rb == 1)
            tshape = ckt_tuple_int(tgt[0]);
        else
            ckt_tuple_flat(&tshape, rb, tgt, &err);
        assert_int_equal(ckt_tile_to_shape(&blk, &tshape, NULL, &tts, &err), CKT_OK);
        int64_t total = 1;
        for (int m = 0; m < rb; m++) total *= tgt[m];
        assert_true(bijection_onto(&tts, total));
        if (rb > 1)
            for (int m = 0; m < rb; m++) {
                ckt_layout tm;
                ckt_layout_mode(&tts, m, &tm, &err);
                assert_int_equal(ckt_layout_size(&tm), tgt[m]);
            }
    }
}

static void vectors_nullspace_partitions(void **state)
{
    (void)state;
    ckt_error err;
    seed(7);
    int vec = 0;
    for (int t = 0; t < 3000; t++) {
        /* two compact layouts of the same shape: max_common_vector elements agree */
        ckt_layout a = random_layout(COMPACT, 4), b = a, ml;
        int64_t s[8], d[8], v;
        int n = ckt_tuple_flatten(&b.shape, s, 8);
        int order[8];
        for (int i = 0; i < n; i++) order[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)pick(0, i), x = order[i];
            order[i] = order[j];
            order[j] = x;
        }
        int64_t cur = 1;
        for (int i = 0; i < n; i++) d[order[i]] = cur, cur *= s[order[i]];
        for (int i = 0, k = 0; i < b.stride.n; i++)
            if (b.stride.arity[i] == CKT_LEAF) b.stride.value[i] = d[k++];
        assert_int_equal(ckt_max_common_vector(&a, &b, &v, &err), CKT_OK);
        assert_int_equal(ckt_max_common_layout(&a, &b, &ml, &err), CKT_OK);
        assert_true(v >= 1);
        if (v > 1) assert_int_equal(ckt_layout_size(&ml), v);
        for (int64_t i = 0; i < ckt_layout_size(&ml) && v > 1; i++) {
            int64_t x = ev(&ml, i); /* a(R(i)) == b(R(i)) == i */
            assert_int_equal(ev(&a, x), i);
            assert_int_equal(ev(&b, x), i);
        }
        vec += v > 1;
        /* nullspace: every index it produces maps to 0, and all of them are distinct */
        ckt_layout any = random_layout(ANY, 4), ns;
        assert_int_equal(ckt_nullspace(&any, &ns, &err), CKT_OK);
        int64_t want = 1, ss[64], dd[64];
        int nn = ckt_tuple_flatten(&any.shape, ss, 64);
        ckt_tuple_flatten(&any.stride, dd, 64);
        for (int i = 0; i < nn; i++) want *= dd[i] == 0 ? ss[i] : 1;
        assert_int_equal(ckt_layout_size(&ns), want);
        assert_true(injective(&ns));
        for (int64_t i = 0; i < ckt_layout_size(&ns); i++)
            assert_int_equal(ev(&any, ev(&ns, i)), 0);
        /* local_tile over all tile coordinates and local_partition over all threads cover T once */
        int64_t tsz[2] = {pick(1, 3), pick(1, 3)}, reps[2] = {pick(1, 3), pick(1, 3)},
                full[2] = {tsz[0] * reps[0], tsz[1] * reps[1]};
        ckt_tuple fs, tt;
        ckt_tuple_flat(&fs, 2, full, &err);
        ckt_tuple_flat(&tt, 2, tsz, &err);
        ckt_layout T, tile, part, thr;
        if (t % 2)
            ckt_layout_col_major(&T, &fs, &err);
        else
            ckt_layout_row_major(&T, &fs, &err);
        int64_t N = full[0] * full[1];
        char *hit = calloc((size_t)N, 1), *hit2 = calloc((size_t)N, 1);
        for (int64_t i = 0; i < reps[0]; i++)
            for (int64_t j = 0; j < reps[1]; j++) {
                int64_t ij[2] = {i, j}, off;
                ckt_tuple crd;
                ckt_tuple_flat(&crd, 2, ij, &err);
                assert_int_equal(ckt_local_tile(&T, &tt, &crd, &tile, &off, &err), CKT_OK);
                for (int64_t k = 0; k < ckt_layout_size(&tile); k++) {
                    int64_t o = off + ev(&tile, k);
                    assert_true(o >= 0 && o < N && !hit[o]);
                    hit[o] = 1;
                }
            }
        ckt_layout_col_major(&thr, &tt, &err);
        for (int64_t id = 0; id < tsz[0] * tsz[1]; id++) {
            int64_t off;
            assert_int_equal(ckt_local_partition(&T, &thr, id, &part, &off, &err), CKT_OK);
            assert_int_equal(ckt_layout_size(&part), reps[0] * reps[1]);
            for (int64_t k = 0; k < ckt_layout_size(&part); k++) {
                int64_t o = off + ev(&part, k);
                assert_true(o >= 0 && o < N && !hit2[o]);
                hit2[o] = 1;
            }
        }
        for (int64_t o = 0; o < N; o++) assert_true(hit[o] && hit2[o]);
        free(hit);
        free(hit2);
        /* pad: shapes rounded up to the tile, strides kept, the original cells unchanged */
        ckt_layout padded;
        int64_t pt[2] = {pick(1, 4), pick(1, 4)};
        ckt_tuple pts;
        ckt_tuple_flat(&pts, 2, pt, &err);
        assert_int_equal(ckt_pad(&T, &pts, &padded, &err), CKT_OK);
        assert_true(ckt_tuple_equal(&padded.stride, &T.stride));
        int64_t ps[2];
        ckt_tuple_flatten(&padded.shape, ps, 2);
        for (int m = 0; m < 2; m++) {
            assert_int_equal(ps[m] % pt[m], 0);
            assert_true(ps[m] >= full[m] && ps[m] < full[m] + pt[m]);
        }
        for (int64_t i = 0; i < full[0]; i++)
            for (int64_t j = 0; j < full[1]; j++) {
                int64_t ij[2] = {i, j}, o1, o2;
                ckt_tuple crd;
                ckt_tuple_flat(&crd, 2, ij, &err);
                ckt_layout_eval_coord(&T, &crd, &o1, &err);
                ckt_layout_eval_coord(&padded, &crd, &o2, &err);
                assert_int_equal(o1, o2);
            }
    }
    assert_true(vec > 300);
}

static void swizzles(void **state)
{
    (void)state;
    ckt_error err;
    int tried = 0;
    for (int b = 0; b <= 3; b++)
        for (int m = 0; m <= 3; m++)
            for (int s = -4; s <= 4; s++) {
                ckt_swizzle sw;
                if ((s < 0 ? -s : s) < b) {
                    assert_int_equal(ckt_swizzle_make(b, m, s, &sw, &err), CKT_EINVAL);
                    continue;
                }
                assert_int_equal(ckt_swizzle_make(b, m, s, &sw, &err), CKT_OK);
                int bits = b + m + (s < 0 ? -s : s);
                int64_t n = (int64_t)1 << bits;
                char *seen = calloc((size_t)n, 1);
                for (int64_t x = 0; x < n; x++) {
                    int64_t y = ckt_swizzle_apply(sw, x);
                    assert_true(y >= 0 && y < n);
                    assert_int_equal(seen[y], 0);
                    seen[y] = 1;
                    assert_int_equal(ckt_swizzle_apply(sw, y),
                                     x); /* XOR of disjoint fields: an involution */
                    assert_int_equal(ckt_swizzle_apply(sw, x + n),
                                     y + n); /* the bits above are untouched */
                }
                free(seen);
                tried++;
            }
    assert_true(tried > 50);
    /* the composed layout: sw(offset + L(i)) */
    ckt_composed c;
    ckt_swizzle_make(3, 3, 3, &c.sw, &err);
    c.offset = 64;
    int64_t sh[2] = {8, 64}, st[2] = {64, 1};
    ckt_layout_flat(&c.inner, 2, sh, st, &err);
    for (int64_t i = 0; i < 512; i++) {
        int64_t o;
        assert_int_equal(ckt_composed_eval(&c, i, &o, &err), CKT_OK);
        assert_int_equal(o, ckt_swizzle_apply(c.sw, 64 + ev(&c.inner, i)));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(coalesce_filter_parse_eval),
        cmocka_unit_test(composition_is_function_composition),
        cmocka_unit_test(composition_literal_edges),
        cmocka_unit_test(complement_and_inverses),
        cmocka_unit_test(divides),
        cmocka_unit_test(products),
        cmocka_unit_test(products_with_tuple_tilers),
        cmocka_unit_test(tv_layouts_and_tiling),
        cmocka_unit_test(vectors_nullspace_partitions),
        cmocka_unit_test(swizzles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
