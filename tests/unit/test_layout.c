/* Layout algebra: literal examples (CuTe's layout documentation) and seeded
 * property tests over thousands of random layouts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"

static ckt_layout P(const char *s)
{
    ckt_layout l;
    ckt_error err;
    if (ckt_layout_parse(s, &l, &err) != CKT_OK) fail_msg("parse %s: %s", s, err.msg);
    return l;
}

static void expect(const ckt_layout *l, const char *want)
{
    char buf[512];
    ckt_layout_to_string(l, buf, sizeof buf);
    if (strcmp(buf, want) != 0) fail_msg("got %s, want %s", buf, want);
}

static void literal_examples(void **state)
{
    (void)state;
    ckt_error err;
    ckt_layout a, b, r;
    int64_t v;
    a = P("(2,(1,6)):(1,(6,2))");
    assert_int_equal(ckt_coalesce(&a, &r, &err), CKT_OK);
    expect(&r, "12:1");
    a = P("(2,1,6):(4,7,8)");
    assert_int_equal(ckt_coalesce(&a, &r, &err), CKT_OK);
    expect(&r, "12:4");
    a = P("(4,3):(3,1)");
    b = P("6:2");
    assert_int_equal(ckt_composition(&a, &b, &r, &err), CKT_OK);
    expect(&r, "(2,3):(6,1)");
    a = P("12:2");
    b = P("(4,3):(3,1)");
    assert_int_equal(ckt_composition(&a, &b, &r, &err), CKT_OK);
    expect(&r, "(4,3):(6,2)");
    a = P("4:2");
    assert_int_equal(ckt_complement(&a, 24, &r, &err), CKT_OK);
    expect(&r, "(2,3):(1,8)");
    a = P("(2,4):(1,6)");
    assert_int_equal(ckt_complement(&a, 24, &r, &err), CKT_OK);
    expect(&r, "3:2");
    a = P("(8,4):(4,1)");
    assert_int_equal(ckt_right_inverse(&a, &r, &err), CKT_OK);
    expect(&r, "(4,8):(8,1)");
    a = P("32:1");
    b = P("2:8");
    assert_int_equal(ckt_logical_divide(&a, 0, &b, &r, &err), CKT_OK);
    expect(&r, "(2,(8,2)):(8,(1,16))");
    a = P("(2,5):(5,1)");
    b = P("(3,4):(1,3)");
    assert_int_equal(ckt_blocked_product(&a, &b, &r, &err), CKT_OK);
    expect(&r, "((2,3),(5,4)):((5,10),(1,30))");
    /* CuTe's tuple tilers, by hand: mode 0 2:5 x 3:1 = (2:5, complement(2:5, 6) o 3:1) =
     * (2,3):(5,1); mode 1 5:1 x 2:1 = (5:1, complement(5:1, 10) o 2:1) = (5,2):(1,5) */
    ckt_layout t2[2] = {P("3:1"), P("2:1")};
    assert_int_equal(ckt_logical_product_tiler(&a, 2, t2, &r, &err), CKT_OK);
    expect(&r, "((2,3),(5,2)):((5,1),(1,5))");
    assert_int_equal(ckt_zipped_product_tiler(&a, 2, t2, &r, &err), CKT_OK);
    expect(&r, "((2,5),(3,2)):((5,1),(1,5))");
    assert_int_equal(ckt_tiled_product_tiler(&a, 2, t2, &r, &err), CKT_OK);
    expect(&r, "((2,5),3,2):((5,1),1,5)");
    assert_int_equal(ckt_flat_product(&a, 2, t2, &r, &err), CKT_OK);
    expect(&r, "(2,5,3,2):(5,1,1,5)");
    /* fewer tiler modes than the layout: the others are kept; mode 0 4:1 x 2:2 = (4,2):(1,8) */
    a = P("(4,3,2):(1,4,12)");
    b = P("2:2");
    assert_int_equal(ckt_logical_product_tiler(&a, 1, &b, &r, &err), CKT_OK);
    expect(&r, "((4,2),3,2):((1,8),4,12)");
    assert_int_equal(ckt_flat_product(&a, 1, &b, &r, &err), CKT_OK);
    expect(&r, "(4,2,3,2):(1,8,4,12)");
    /* one layout (n = 0) is the plain product */
    a = P("(2,2):(1,2)");
    b = P("3:1");
    assert_int_equal(ckt_logical_product_tiler(&a, 0, &b, &r, &err), CKT_OK);
    expect(&r, "((2,2),3):((1,2),4)");
    assert_int_equal(ckt_flat_product(&a, 0, &b, &r, &err), CKT_OK);
    expect(&r, "(2,2,3):(1,2,4)");
    ckt_tuple s, o;
    ckt_tuple_parse("(2,2,2,2)", &s, &err);
    ckt_tuple_parse("(0,2,3,1)", &o, &err);
    assert_int_equal(ckt_make_ordered_layout(&s, &o, &r, &err), CKT_OK);
    expect(&r, "(2,2,2,2):(1,4,8,2)");
    a = P("(4,8):(1,4)");
    b = P("(4,8):(1,8)");
    assert_int_equal(ckt_max_common_vector(&a, &b, &v, &err), CKT_OK);
    assert_int_equal(v, 4);
    assert_int_equal(ckt_max_common_layout(&a, &a, &r, &err), CKT_OK);
    expect(&r, "32:1");
    a = P("(2,(3,4)):(0,(1,0))");
    assert_int_equal(ckt_nullspace(&a, &r, &err), CKT_OK);
    expect(&r, "(2,4):(1,6)");
    a = P("(8,16):(1,8)");
    ckt_tuple tiler, coord;
    ckt_tuple_parse("(4,8)", &tiler, &err);
    ckt_tuple_parse("(1,1)", &coord, &err);
    assert_int_equal(ckt_local_tile(&a, &tiler, &coord, &r, &v, &err), CKT_OK);
    expect(&r, "(4,8):(1,8)");
    assert_int_equal(v, 68);
    b = P("(2,4):(1,2)");
    assert_int_equal(ckt_local_partition(&a, &b, 5, &r, &v, &err), CKT_OK);
    expect(&r, "(4,4):(2,32)");
    assert_int_equal(v, 17);
    a = P("(2,3):(3,1)");
    b = P("(2,2):(2,1)");
    assert_int_equal(ckt_make_layout_tv(&a, &b, &tiler, &r, &err), CKT_OK);
    expect(&r, "((3,2),(2,2)):((8,2),(4,1))");
    char buf[64];
    ckt_tuple_to_string(&tiler, buf, sizeof buf);
    assert_string_equal(buf, "(4,6)");
    ckt_swizzle sw;
    assert_int_equal(ckt_swizzle_make(2, 0, 2, &sw, &err), CKT_OK);
    static const int64_t want[16] = {0, 1, 2, 3, 5, 4, 7, 6, 10, 11, 8, 9, 15, 14, 13, 12};
    for (int i = 0; i < 16; i++) assert_int_equal(ckt_swizzle_apply(sw, i), want[i]);
    a = P("(5,7):(1,5)");
    ckt_tuple_parse("(4,4)", &tiler, &err);
    assert_int_equal(ckt_pad(&a, &tiler, &r, &err), CKT_OK);
    expect(&r, "(8,8):(1,5)");
}

static void evaluation_and_printing(void **state)
{
    (void)state;
    ckt_error err;
    ckt_layout a = P("(4,(2,8)):(16,(1,2))");
    assert_int_equal(ckt_layout_size(&a), 64);
    assert_int_equal(ckt_layout_cosize(&a), 3 * 16 + 1 + 14 + 1);
    assert_int_equal(ckt_layout_rank(&a), 2);
    assert_int_equal(ckt_layout_depth(&a), 2);
    int64_t off;
    assert_int_equal(ckt_layout_eval(&a, 5, &off, &err), CKT_OK); /* (1,(1,0)) */
    assert_int_equal(off, 16 + 1);
    ckt_tuple c;
    ckt_tuple_parse("(3,(1,7))", &c, &err);
    assert_int_equal(ckt_layout_eval_coord(&a, &c, &off, &err), CKT_OK);
    assert_int_equal(off, 48 + 1 + 14);
    ckt_tuple_parse("(3,15)", &c, &err); /* an integer for a sub-tuple: 1-D index into it */
    assert_int_equal(ckt_layout_eval_coord(&a, &c, &off, &err), CKT_OK);
    assert_int_equal(off, 48 + 1 + 14);
    char buf[128];
    ckt_layout_to_string(&a, buf, sizeof buf);
    assert_string_equal(buf, "(4,(2,8)):(16,(1,2))");
    ckt_layout i = P("12:1");
    ckt_layout_to_string(&i, buf, sizeof buf);
    assert_string_equal(buf, "12:1");
    ckt_layout st = P("(_4,_2):(_1,_4)"); /* static markers accepted */
    ckt_layout_to_string(&st, buf, sizeof buf);
    assert_string_equal(buf, "(4,2):(1,4)");
}

static void bad_input_is_refused_with_reasons(void **state)
{
    (void)state;
    ckt_error err;
    ckt_layout l, a, b, r;
    static const char *bad[] = {"(4,2:(1",
                                "4:",
                                "(,)",
                                ":",
                                "(4,2):(1)",
                                "(4,0):(1,4)",
                                "(4,-2):(1,4)",
                                "99999999999999999999:1",
                                "(4,2):(1,4) junk",
                                "((((((((((1))))))))))):1",
                                ""};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        err.msg[0] = 0;
        assert_int_not_equal(ckt_layout_parse(bad[k], &l, &err), CKT_OK);
        assert_true(strlen(err.msg) > 0);
    }
    assert_int_equal(ckt_layout_parse("(4611686018427387904,4):(1,1)", &l, &err), CKT_EOVERFLOW);
    assert_int_equal(ckt_layout_parse("(3,2):(4611686018427387904,1)", &l, &err), CKT_EOVERFLOW);
    a = P("(4,3):(3,1)");
    b = P("4:3");
    ckt_layout t3[3] = {b, b, b};
    assert_int_equal(ckt_logical_product_tiler(&a, 3, t3, &r, &err), CKT_EINVAL);
    assert_non_null(
        strstr(err.msg, "logical_product: the tiler has 3 modes but the layout only 2"));
    assert_int_equal(ckt_zipped_product_tiler(&a, -1, t3, &r, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "a tiler of -1 modes"));
    assert_int_equal(ckt_tiled_product_tiler(&a, 1, NULL, &r, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "NULL"));
    assert_int_equal(ckt_flat_product(NULL, 1, t3, &r, &err), CKT_EINVAL);
    assert_int_equal(ckt_composition(&a, &b, &r, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "do not divide"));
    a = P("(2,2):(1,1)"); /* not injective */
    assert_int_equal(ckt_complement(&a, 8, &r, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "injective"));
    a = P("(4,8):(1,4)");
    assert_int_equal(ckt_layout_eval(&a, 32, &r.shape.value[0], &err), CKT_EINVAL);
    assert_int_equal(ckt_layout_eval(&a, -1, &r.shape.value[0], &err), CKT_EINVAL);
    ckt_tuple c;
    ckt_tuple_parse("(1,(2,3))", &c, &err);
    assert_int_equal(ckt_layout_eval_coord(&a, &c, &r.shape.value[0], &err), CKT_EINVAL);
    ckt_tuple t;
    ckt_tuple_parse("(3,5)", &t, &err);
    assert_int_equal(ckt_tile_to_shape(&a, &t, NULL, &r, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "divisible"));
    ckt_swizzle sw;
    assert_int_equal(ckt_swizzle_make(3, 0, 2, &sw, &err), CKT_EINVAL);
    assert_int_equal(ckt_swizzle_make(-1, 0, 2, &sw, &err), CKT_EINVAL);
    int64_t big[20] = {0};
    for (int i = 0; i < 20; i++) big[i] = 2;
    assert_int_equal(ckt_tuple_flat(&t, 20, big, &err), CKT_ECAPACITY);
}

/* ---- properties over random layouts ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
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

/* A random layout of depth <= 2 with small shapes, random (possibly zero) strides. */
/* injective: 0 any strides, 1 injective with holes, 2 compact (a bijection onto [0, size)) */
static ckt_layout random_layout(int injective)
{
    ckt_error err;
    int r = (int)pick(1, 3);
    ckt_tuple shapes[3], strides[3];
    int64_t cur = 1;
    for (int i = 0; i < r; i++) {
        int sub = (int)pick(1, 2);
        int64_t s[2], d[2];
        for (int k = 0; k < sub; k++) {
            s[k] = pick(1, 4);
            if (injective) {
                d[k] = cur * (injective == 2 ? 1 : pick(1, 2));
                cur = d[k] * s[k];
            } else
                d[k] = pick(0, 3) == 0 ? 0 : pick(1, 12);
        }
        if (sub == 1) {
            shapes[i] = ckt_tuple_int(s[0]);
            strides[i] = ckt_tuple_int(d[0]);
        } else {
            ckt_tuple_flat(&shapes[i], sub, s, &err);
            ckt_tuple_flat(&strides[i], sub, d, &err);
        }
    }
    ckt_layout l;
    if (r == 1) {
        l.shape = shapes[0];
        l.stride = strides[0];
    } else {
        ckt_tuple_make(&l.shape, r, shapes, &err);
        ckt_tuple_make(&l.stride, r, strides, &err);
    }
    ckt_layout out;
    assert_int_equal(ckt_layout_make(&out, &l.shape, &l.stride, &err), CKT_OK);
    return out;
}

static int64_t ev(const ckt_layout *l, int64_t i)
{
    int64_t o;
    ckt_error err;
    if (ckt_layout_eval(l, i, &o, &err) != CKT_OK) fail_msg("eval %lld: %s", (long long)i, err.msg);
    return o;
}

static void property_coalesce_and_parse(void **state)
{
    (void)state;
    ckt_error err;
    for (int t = 0; t < 3000; t++) {
        ckt_layout a = random_layout(0), c, p;
        assert_int_equal(ckt_coalesce(&a, &c, &err), CKT_OK);
        assert_int_equal(ckt_layout_size(&c), ckt_layout_size(&a));
        assert_true(ckt_layout_depth(&c) <= 1);
        for (int64_t i = 0; i < ckt_layout_size(&a); i++) assert_int_equal(ev(&c, i), ev(&a, i));
        char buf[512];
        ckt_layout_to_string(&a, buf, sizeof buf);
        assert_int_equal(ckt_layout_parse(buf, &p, &err), CKT_OK);
        assert_true(ckt_layout_equal(&p, &a));
    }
}

static void property_composition(void **state)
{
    (void)state;
    ckt_error err;
    int admissible = 0;
    for (int t = 0; t < 4000; t++) {
        ckt_layout a = random_layout(t % 2), b = random_layout(1), r;
        if (ckt_composition(&a, &b, &r, &err) != CKT_OK) {
            assert_true(strlen(err.msg) > 0);
            continue;
        }
        /* R(i) == A(B(i)) wherever B(i) is inside A's domain */
        int64_t sa = ckt_layout_size(&a);
        bool inside = true;
        for (int64_t i = 0; i < ckt_layout_size(&b); i++)
            if (ev(&b, i) >= sa) inside = false;
        if (!inside) continue;
        admissible++;
        assert_int_equal(ckt_layout_size(&r), ckt_layout_size(&b));
        for (int64_t i = 0; i < ckt_layout_size(&b); i++)
            assert_int_equal(ev(&r, i), ev(&a, ev(&b, i)));
    }
    assert_true(admissible > 500); /* the property was really exercised */
}

static void property_complement_and_inverses(void **state)
{
    (void)state;
    ckt_error err;
    for (int t = 0; t < 3000; t++) {
        ckt_layout a = random_layout(1), c, ri, li;
        int64_t cot = ckt_layout_cosize(&a) * pick(1, 3);
        assert_int_equal(ckt_complement(&a, cot, &c, &err), CKT_OK);
        /* disjoint codomains (except 0) and (A, complement) injective */
        int64_t sa = ckt_layout_size(&a), sc = ckt_layout_size(&c);
        for (int64_t i = 1; i < sc; i++) assert_true(ev(&c, i) > ev(&c, i - 1)); /* ordered */
        char *seen = calloc((size_t)(ckt_layout_cosize(&a) * ckt_layout_cosize(&c) + 1), 1);
        for (int64_t j = 0; j < sc; j++)
            for (int64_t i = 0; i < sa; i++) {
                int64_t o = ev(&a, i) + ev(&c, j);
                assert_int_equal(seen[o], 0);
                seen[o] = 1;
            }
        free(seen);
        assert_true(sa * sc >= cot);
        assert_int_equal(ckt_right_inverse(&a, &ri, &err), CKT_OK);
        for (int64_t i = 0; i < ckt_layout_size(&ri); i++) assert_int_equal(ev(&a, ev(&ri, i)), i);
        assert_int_equal(ckt_left_inverse(&a, &li, &err), CKT_OK);
        for (int64_t i = 0; i < sa; i++) assert_int_equal(ev(&li, ev(&a, i)), i);
    }
}

static void property_divide_and_product(void **state)
{
    (void)state;
    ckt_error err;
    int checked = 0;
    for (int t = 0; t < 3000; t++) {
        ckt_layout a = random_layout(t % 2), b = random_layout(1), d, m0, p;
        if (ckt_logical_divide(&a, 0, &b, &d, &err) == CKT_OK) {
            assert_int_equal(ckt_layout_rank(&d), 2);
            ckt_layout_mode(&d, 0, &m0, &err);
            assert_int_equal(ckt_layout_size(&m0), ckt_layout_size(&b));
            /* mode 0 is A o B */
            ckt_layout ab;
            if (ckt_composition(&a, &b, &ab, &err) == CKT_OK)
                for (int64_t i = 0; i < ckt_layout_size(&b); i++)
                    assert_int_equal(ev(&m0, i), ev(&ab, i));
            checked++;
        }
        ckt_layout ia = random_layout(2), ib = random_layout(1);
        assert_int_equal(ckt_logical_product(&ia, &ib, &p, &err), CKT_OK);
        ckt_layout_mode(&p, 0, &m0, &err);
        assert_true(ckt_layout_equal(&m0, &ia));
        /* a product of injective layouts is injective */
        int64_t n = ckt_layout_size(&p), cs = ckt_layout_cosize(&p);
        char *seen = calloc((size_t)cs, 1);
        for (int64_t i = 0; i < n; i++) {
            int64_t o = ev(&p, i);
            assert_true(o >= 0 && o < cs);
            assert_int_equal(seen[o], 0);
            seen[o] = 1;
        }
        free(seen);
    }
    assert_true(checked > 300);
}

static void property_swizzle_is_a_bijection(void **state)
{
    (void)state;
    ckt_error err;
    for (int b = 0; b <= 3; b++)
        for (int m = 0; m <= 3; m++)
            for (int s = b; s <= 4; s++) {
                ckt_swizzle sw;
                if (s == 0 && b > 0) continue;
                assert_int_equal(ckt_swizzle_make(b, m, s, &sw, &err), CKT_OK);
                int n = 1 << (b + m + s);
                char *seen = calloc((size_t)n, 1);
                for (int x = 0; x < n; x++) {
                    int64_t y = ckt_swizzle_apply(sw, x);
                    assert_true(y >= 0 && y < n);
                    assert_int_equal(seen[y], 0);
                    seen[y] = 1;
                    assert_int_equal(ckt_swizzle_apply(sw, y),
                                     x); /* an XOR of disjoint bit fields is an involution */
                }
                free(seen);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(literal_examples),
        cmocka_unit_test(evaluation_and_printing),
        cmocka_unit_test(bad_input_is_refused_with_reasons),
        cmocka_unit_test(property_coalesce_and_parse),
        cmocka_unit_test(property_composition),
        cmocka_unit_test(property_complement_and_inverses),
        cmocka_unit_test(property_divide_and_product),
        cmocka_unit_test(property_swizzle_is_a_bijection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
