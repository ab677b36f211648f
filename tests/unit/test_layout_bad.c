/* Layouts: every public entry point answers bad input with a status and a message that
 * names the function and the reason: NULLs, hand-built malformed structs, zero and
 * negative shapes, capacity, 64-bit overflow, non-divisible tiles, malformed strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"
#include "ckt/visual.h"

static ckt_layout P(const char *s)
{
    ckt_layout l;
    ckt_error err;
    if (ckt_layout_parse(s, &l, &err) != CKT_OK) fail_msg("parse %s: %s", s, err.msg);
    return l;
}

static ckt_tuple T(const char *s)
{
    ckt_tuple t;
    ckt_error err;
    if (ckt_tuple_parse(s, &t, &err) != CKT_OK) fail_msg("parse %s: %s", s, err.msg);
    return t;
}

/* The call failed with status want (any failure when want == -1) and a message holding both words.
 */
#define REFUSED(call, want, w1, w2)                                                                \
    do {                                                                                           \
        memset(&err, 0, sizeof err);                                                               \
        ckt_status st_ = (call);                                                                   \
        if (st_ == CKT_OK) fail_msg("%s: accepted", #call);                                        \
        if ((int)(want) >= 0 && st_ != (ckt_status)(want))                                         \
            fail_msg("%s: status %d, want %d (%s)", #call, st_, (int)(want), err.msg);             \
        if (!strstr(err.msg, w1) || !strstr(err.msg, w2))                                          \
            fail_msg("%s: message \"%s\" lacks \"%s\"/\"%s\"", #call, err.msg, w1, w2);            \
    } while (0)

/* Malformed layouts a careless C caller could build by hand. */
static ckt_layout malformed(int k)
{
    ckt_layout l = P("(4,(2,8)):(16,(1,2))");
    switch (k) {
    case 0: l.shape.n = l.stride.n = 0; break;                 /* no nodes */
    case 1: l.shape.n = l.stride.n = 200; break;               /* beyond the node capacity */
    case 2: l.shape.arity[0] = l.stride.arity[0] = 17; break;  /* rank beyond capacity */
    case 3: l.shape.arity[2] = l.stride.arity[2] = 0; break;   /* empty tuple */
    case 4: l.shape.arity[0] = l.stride.arity[0] = 3; break;   /* the tree does not close */
    case 5: ckt_tuple_parse("(16,2)", &l.stride, NULL); break; /* not congruent */
    case 6: l.shape.value[1] = 0; break;                       /* zero shape */
    case 7: l.shape.value[3] = -2; break;                      /* negative shape */
    case 8: l.stride.value[1] = INT64_MIN; break;              /* unnegatable stride */
    case 9: l.shape.value[1] = (int64_t)1 << 62; break;        /* size overflows */
    case 10: l.stride.value[4] = (int64_t)1 << 62; break;      /* cosize overflows */
    case 11:
        l.shape.arity[1] = -5;
        l.stride.arity[1] = -5;
        break;
    }
    return l;
}

static void malformed_layouts_everywhere(void **state)
{
    (void)state;
    ckt_error err;
    ckt_layout good = P("(8,16):(1,8)"), r;
    ckt_tuple tt = T("(4,8)"), tc = T("(1,1)"), tiler;
    int64_t v, off;
    for (int k = 0; k <= 11; k++) {
        ckt_layout b = malformed(k);
        if (ckt_layout_check(&b, &err) == CKT_OK) fail_msg("malformed layout %d accepted", k);
        REFUSED(ckt_coalesce(&b, &r, &err), -1, "coalesce: layout: ", "");
        REFUSED(ckt_filter(&b, &r, &err), -1, "filter: ", "");
        REFUSED(ckt_composition(&b, &good, &r, &err), -1, "composition: A: ", "");
        REFUSED(ckt_composition(&good, &b, &r, &err), -1, "composition: B: ", "");
        REFUSED(ckt_composition_tiler(&b, 1, &good, &r, &err), -1, "composition", "");
        REFUSED(ckt_complement(&b, 0, &r, &err), -1, "complement: ", "");
        REFUSED(ckt_right_inverse(&b, &r, &err), -1, "right_inverse: ", "");
        REFUSED(ckt_left_inverse(&b, &r, &err), -1, "left_inverse: ", "");
        REFUSED(ckt_logical_divide(&b, 0, &good, &r, &err), -1, "logical_divide: ", "");
        REFUSED(ckt_logical_divide(&good, 0, &b, &r, &err), -1, "logical_divide: ", "");
        REFUSED(ckt_zipped_divide(&b, 0, &good, &r, &err), -1, "logical_divide: ", "");
        REFUSED(ckt_tiled_divide(&good, 0, &b, &r, &err), -1, "logical_divide: ", "");
        REFUSED(ckt_flat_divide(&b, 0, &good, &r, &err), -1, "logical_divide: ", "");
        REFUSED(ckt_logical_product(&b, &good, &r, &err), -1, "logical_product: ", "");
        REFUSED(ckt_zipped_product(&good, &b, &r, &err), -1, "logical_product: ", "");
        REFUSED(ckt_tiled_product(&b, &good, &r, &err), -1, "logical_product: ", "");
        REFUSED(ckt_logical_product_tiler(&b, 1, &good, &r, &err), -1, "logical_product: ", "");
        REFUSED(ckt_logical_product_tiler(&good, 1, &b, &r, &err), -1,
                "logical_product: ", "mode 0");
        REFUSED(ckt_zipped_product_tiler(&good, 0, &b, &r, &err), -1, "logical_product: ", "");
        REFUSED(ckt_tiled_product_tiler(&b, 2, (ckt_layout[]){good, good}, &r, &err), -1,
                "logical_product: ", "");
        REFUSED(ckt_flat_product(&good, 1, &b, &r, &err), -1, "logical_product: ", "mode 0");
        REFUSED(ckt_blocked_product(&b, &good, &r, &err), -1, "blocked_product: ", "");
        REFUSED(ckt_raked_product(&good, &b, &r, &err), -1, "raked_product: ", "");
        REFUSED(ckt_tile_to_shape(&b, &tt, NULL, &r, &err), -1, "tile_to_shape: ", "");
        REFUSED(ckt_max_common_vector(&b, &good, &v, &err), -1, "max_common_vector: ", "");
        REFUSED(ckt_max_common_layout(&good, &b, &r, &err), -1, "max_common_layout: ", "");
        REFUSED(ckt_nullspace(&b, &r, &err), -1, "nullspace: ", "");
        REFUSED(ckt_make_layout_tv(&b, &good, &tiler, &r, &err), -1, "make_layout_tv: ", "");
        REFUSED(ckt_local_tile(&b, &tt, &tc, &r, &off, &err), -1, "local_tile: ", "");
        REFUSED(ckt_local_partition(&good, &b, 0, &r, &off, &err), -1, "local_partition: ", "");
        REFUSED(ckt_pad(&b, &tt, &r, &err), -1, "pad: ", "");
        REFUSED(ckt_layout_make(&r, &b.shape, &b.stride, &err), -1, "layout", "");
        /* malformed tuples as tuple arguments (k < 5 break the tuple itself) */
        if (k <= 4 || k == 11) {
            REFUSED(ckt_make_ordered_layout(&b.shape, &tt, &r, &err), -1,
                    "make_ordered_layout: shape: ", "");
            REFUSED(ckt_tile_to_shape(&good, &b.shape, NULL, &r, &err), -1,
                    "tile_to_shape: shape: ", "");
            REFUSED(ckt_local_tile(&good, &b.shape, &tc, &r, &off, &err), -1,
                    "local_tile: tiler: ", "");
            REFUSED(ckt_local_tile(&good, &tt, &b.shape, &r, &off, &err), -1,
                    "local_tile: coord: ", "");
            REFUSED(ckt_pad(&good, &b.shape, &r, &err), -1, "pad: tile_shape: ", "");
            REFUSED(ckt_tuple_check(&b.shape, &err), -1, "tuple", "");
            REFUSED(ckt_layout_col_major(&r, &b.shape, &err), -1, "layout: shape: ", "");
            REFUSED(ckt_layout_eval_coord(&good, &b.shape, &v, &err), -1, "coordinate", "");
            REFUSED(ckt_idx2crd(&b.shape, 0, &tiler, &err), -1, "idx2crd", "");
        }
    }
    /* the messages say what is wrong */
    ckt_layout b = malformed(5);
    REFUSED(ckt_coalesce(&b, &r, &err), CKT_EINVAL, "not congruent", "(4,(2,8))");
    b = malformed(6);
    REFUSED(ckt_coalesce(&b, &r, &err), CKT_EINVAL, "shape 0", "positive");
    b = malformed(9);
    REFUSED(ckt_coalesce(&b, &r, &err), CKT_EOVERFLOW, "size", "64 bits");
    b = malformed(10);
    REFUSED(ckt_coalesce(&b, &r, &err), CKT_EOVERFLOW, "offsets", "64 bits");
    b = malformed(2);
    REFUSED(ckt_coalesce(&b, &r, &err), CKT_ECAPACITY, "rank 17", "capacity");
}

static void nulls(void **state)
{
    (void)state;
    ckt_error err;
    ckt_layout a = P("(8,16):(1,8)"), r;
    ckt_tuple t = T("(4,8)"), tiler;
    int64_t v, off;
    REFUSED(ckt_coalesce(NULL, &r, &err), CKT_EINVAL, "coalesce", "NULL");
    REFUSED(ckt_coalesce(&a, NULL, &err), CKT_EINVAL, "coalesce", "NULL");
    REFUSED(ckt_composition(&a, NULL, &r, &err), CKT_EINVAL, "composition", "NULL");
    REFUSED(ckt_composition(&a, &a, NULL, &err), CKT_EINVAL, "composition", "NULL");
    REFUSED(ckt_complement(NULL, 4, &r, &err), CKT_EINVAL, "complement", "NULL");
    REFUSED(ckt_right_inverse(&a, NULL, &err), CKT_EINVAL, "right_inverse", "NULL");
    REFUSED(ckt_left_inverse(NULL, &r, &err), CKT_EINVAL, "left_inverse", "NULL");
    REFUSED(ckt_logical_divide(&a, 0, NULL, &r, &err), CKT_EINVAL, "logical_divide", "NULL");
    REFUSED(ckt_logical_product(&a, NULL, &r, &err), CKT_EINVAL, "logical_product", "NULL");
    REFUSED(ckt_blocked_product(NULL, &a, &r, &err), CKT_EINVAL, "blocked_product", "NULL");
    REFUSED(ckt_make_ordered_layout(NULL, &t, &r, &err), CKT_EINVAL, "make_ordered_layout", "NULL");
    REFUSED(ckt_tile_to_shape(&a, NULL, NULL, &r, &err), CKT_EINVAL, "tile_to_shape", "NULL");
    REFUSED(ckt_max_common_vector(&a, &a, NULL, &err), CKT_EINVAL, "max_common_vector", "NULL");
    REFUSED(ckt_nullspace(&a, NULL, &err), CKT_EINVAL, "nullspace", "NULL");
    REFUSED(ckt_make_layout_tv(&a, &a, NULL, &r, &err), CKT_EINVAL, "make_layout_tv", "NULL");
    REFUSED(ckt_local_tile(&a, &t, &t, &r, NULL, &err), CKT_EINVAL, "local_tile", "NULL");
    REFUSED(ckt_local_partition(&a, NULL, 0, &r, &off, &err), CKT_EINVAL, "local_partition",
            "NULL");
    REFUSED(ckt_pad(&a, NULL, &r, &err), CKT_EINVAL, "pad", "NULL");
    REFUSED(ckt_layout_make(&r, NULL, &t, &err), CKT_EINVAL, "layout", "NULL");
    REFUSED(ckt_layout_parse(NULL, &r, &err), CKT_EINVAL, "parse", "NULL");
    REFUSED(ckt_tuple_parse(NULL, &tiler, &err), CKT_EINVAL, "parse", "NULL");
    REFUSED(ckt_swizzle_make(1, 1, 1, NULL, &err), CKT_EINVAL, "swizzle", "NULL");
    REFUSED(ckt_composed_eval(NULL, 0, &v, &err), CKT_EINVAL, "composed", "NULL");
    REFUSED(ckt_layout_eval_coord(&a, NULL, &v, &err), CKT_EINVAL, "layout", "NULL");
    REFUSED(ckt_layout_mode(&a, 0, NULL, &err), CKT_EINVAL, "mode", "NULL");
    /* a NULL error pointer is allowed: the status alone comes back */
    assert_int_equal(ckt_composition(&a, NULL, &r, NULL), CKT_EINVAL);
}

static void semantic_refusals(void **state)
{
    (void)state;
    ckt_error err;
    ckt_layout a, b, r, tl[3];
    ckt_tuple t, o;
    int64_t v, off;
    /* composition: the modes and values that break divisibility are named */
    a = P("(4,3):(3,1)"), b = P("4:3");
    REFUSED(ckt_composition(&a, &b, &r, &err), CKT_EINVAL, "stride 3 of B", "shape 4 of mode 0");
    a = P("(4,6):(1,5)"), b = P("6:1");
    REFUSED(ckt_composition(&a, &b, &r, &err), CKT_EINVAL, "shape 6 of B", "not divisible");
    /* complement: overlap and gaps */
    a = P("(2,2):(1,1)");
    REFUSED(ckt_complement(&a, 8, &r, &err), CKT_EINVAL, "not injective", "2:1");
    a = P("(3,2):(1,4)");
    REFUSED(ckt_complement(&a, 24, &r, &err), CKT_EINVAL, "not a multiple of 3", "stride 4");
    REFUSED(ckt_left_inverse(&a, &r, &err), CKT_EINVAL, "left_inverse: complement", "");
    a = P("4:-1");
    REFUSED(ckt_complement(&a, 8, &r, &err), CKT_EINVAL, "complement", "negative");
    /* divides and products */
    a = P("((4,2),16):((1,64),4)");
    tl[0] = P("3:1");
    REFUSED(ckt_logical_divide(&a, 1, tl, &r, &err), CKT_EINVAL, "logical_divide: mode 0", "");
    a = P("(8,16):(1,8)");
    tl[0] = tl[1] = tl[2] = P("2:1");
    REFUSED(ckt_logical_divide(&a, 3, tl, &r, &err), CKT_EINVAL, "3 modes", "only 2");
    REFUSED(ckt_zipped_divide(&a, -1, tl, &r, &err), CKT_EINVAL, "logical_divide", "");
    REFUSED(ckt_composition_tiler(&a, 0, tl, &r, &err), CKT_EINVAL, "composition", "at least one");
    a = P("(3,(2,2)):(2,(1,12))"), b = P("(2,3):(3,1)");
    REFUSED(ckt_logical_product(&a, &b, &r, &err), CKT_EINVAL,
            "logical_product: ", "do not divide");
    /* shapes */
    t = T("(2,2,2)"), o = T("(0,1)");
    REFUSED(ckt_make_ordered_layout(&t, &o, &r, &err), CKT_EINVAL, "3 modes", "order has 2");
    t = T("(2,0)"), o = T("(0,1)");
    REFUSED(ckt_make_ordered_layout(&t, &o, &r, &err), CKT_EINVAL, "shape 0", "positive");
    t = T("(4000000000,4000000000,4000000000)"), o = T("(0,1,2)");
    REFUSED(ckt_make_ordered_layout(&t, &o, &r, &err), CKT_EOVERFLOW, "overflow", "");
    a = P("(4,8):(1,4)"), t = T("(3,5)");
    REFUSED(ckt_tile_to_shape(&a, &t, NULL, &r, &err), CKT_EINVAL, "not divisible", "mode 0");
    t = T("8");
    REFUSED(ckt_tile_to_shape(&a, &t, NULL, &r, &err), CKT_EINVAL, "rank 2", "only 1");
    /* tiles and partitions */
    a = P("(8,16):(1,8)"), t = T("(4,8)");
    ckt_tuple c = T("(2,0)");
    REFUSED(ckt_local_tile(&a, &t, &c, &r, &off, &err), CKT_EINVAL, "local_tile", "out of range");
    t = T("(0,8)"), c = T("(0,0)");
    REFUSED(ckt_local_tile(&a, &t, &c, &r, &off, &err), CKT_EINVAL, "local_tile", "positive");
    t = T("(4,8,2)");
    REFUSED(ckt_local_tile(&a, &t, &c, &r, &off, &err), CKT_EINVAL, "3 modes", "only 2");
    b = P("(2,4):(1,2)");
    REFUSED(ckt_local_partition(&a, &b, 8, &r, &off, &err), CKT_EINVAL, "thread index 8",
            "out of range");
    REFUSED(ckt_local_partition(&a, &b, -1, &r, &off, &err), CKT_EINVAL, "thread index -1",
            "out of range");
    t = T("(4,0)");
    REFUSED(ckt_pad(&a, &t, &r, &err), CKT_EINVAL, "pad", "positive");
    t = T("4");
    REFUSED(ckt_pad(&a, &t, &r, &err), CKT_EINVAL, "rank 2", "tile shape 1");
    a = P("(4611686018427387905,1):(1,1)"), t = T("(4611686018427387904,1)");
    REFUSED(ckt_pad(&a, &t, &r, &err), -1, "pad", "overflow");
    /* capacity: a product whose result needs more than 16 modes */
    a = P("(2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2):(1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,"
          "16384,32768)");
    b = P("(2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2):(1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,"
          "16384,32768)");
    REFUSED(
        ckt_flat_divide(&a, 16,
                        (ckt_layout[16]){P("2:1"), P("1:1"), P("1:1"), P("1:1"), P("1:1"), P("1:1"),
                                         P("1:1"), P("1:1"), P("1:1"), P("1:1"), P("1:1"), P("1:1"),
                                         P("1:1"), P("1:1"), P("1:1"), P("1:1")},
                        &r, &err),
        CKT_ECAPACITY, "rank", "capacity");
    (void)v;
    /* evaluation */
    a = P("(4,8):(1,4)");
    REFUSED(ckt_layout_eval(&a, 32, &v, &err), CKT_EINVAL, "index 32", "[0, 32)");
    REFUSED(ckt_layout_eval(&a, -1, &v, &err), CKT_EINVAL, "index -1", "out of range");
    c = T("(1,(2,3))");
    REFUSED(ckt_layout_eval_coord(&a, &c, &v, &err), CKT_EINVAL, "rank 2", "rank 1");
    c = T("(4,0)");
    REFUSED(ckt_layout_eval_coord(&a, &c, &v, &err), CKT_EINVAL, "coordinate 4", "[0, 4)");
    c = T("(1,2,3)");
    REFUSED(ckt_layout_eval_coord(&a, &c, &v, &err), CKT_EINVAL, "rank 3", "rank 2");
    REFUSED(ckt_layout_mode(&a, 2, &r, &err), CKT_EINVAL, "mode 2", "rank 2");
    REFUSED(ckt_idx2crd(&a.shape, 32, &c, &err), CKT_EINVAL, "index 32", "out of range");
    /* swizzles and composed layouts */
    ckt_swizzle sw;
    REFUSED(ckt_swizzle_make(3, 0, 2, &sw, &err), CKT_EINVAL, "|S| = 2", "B = 3");
    REFUSED(ckt_swizzle_make(-1, 0, 2, &sw, &err), CKT_EINVAL, "B = -1", ">= 0");
    REFUSED(ckt_swizzle_make(1, -1, 2, &sw, &err), CKT_EINVAL, "M = -1", ">= 0");
    REFUSED(ckt_swizzle_make(20, 20, 30, &sw, &err), CKT_EINVAL, "62 bits", "");
    REFUSED(ckt_swizzle_make(1, 1, 1000, &sw, &err), CKT_EINVAL, "62 bits", "");
    ckt_composed cl;
    ckt_swizzle_make(2, 0, 2, &cl.sw, &err);
    cl.inner = P("4:-1");
    cl.offset = 1;
    assert_int_equal(ckt_composed_eval(&cl, 1, &v, &err), CKT_OK);
    REFUSED(ckt_composed_eval(&cl, 2, &v, &err), CKT_EINVAL, "negative", "");
    cl.offset = INT64_MAX;
    cl.inner = P("4:1");
    REFUSED(ckt_composed_eval(&cl, 3, &v, &err), CKT_EOVERFLOW, "overflows", "");
    /* tuples */
    int64_t big[20] = {0};
    REFUSED(ckt_tuple_flat(&t, 20, big, &err), CKT_ECAPACITY, "rank 20", "capacity");
    ckt_tuple kids[16];
    for (int i = 0; i < 16; i++) kids[i] = T("(1,2,3,4)");
    REFUSED(ckt_tuple_make(&t, 16, kids, &err), CKT_ECAPACITY, "nodes", "capacity");
}

static void malformed_strings(void **state)
{
    (void)state;
    ckt_error err;
    ckt_layout l;
    ckt_tuple t;
    static const struct {
        const char *s, *why;
    } bad[] = {
        {"(4,2:(1", "expected"},
        {"4:", "expected an integer"},
        {"(,)", "expected an integer"},
        {":", "expected"},
        {"(4,2):(1)", "congruent"},
        {"(4,0):(1,4)", "positive"},
        {"(4,-2):(1,4)", "positive"},
        {"99999999999999999999:1", "64-bit"},
        {"(4,2):(1,4) junk", "trailing"},
        {"((((((((((1))))))))))):1", "deeper"},
        {"", "expected"},
        {"()", "expected an integer"},
        {"4:1:1", "trailing"},
        {"(4,,2):(1,1,1)", "expected"},
        {"(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17):(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)",
         "more than 16"},
        {"4 :1", NULL},
        {"-:1", "expected"},
        {"4:-", "expected"},
        {"(4611686018427387904,4):(1,1)", "overflow"},
        {"(3,2):(4611686018427387904,1)", "overflow"},
        {"0x10:1", "expected ':'"},
        {"4.5:1", "expected ':'"},
        {"(4\x01):(1)", "expected"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        memset(&err, 0, sizeof err);
        ckt_status st = ckt_layout_parse(bad[k].s, &l, &err);
        if (!bad[k].why) {
            assert_int_equal(st, CKT_OK);
            continue;
        } /* whitespace is fine */
        if (st == CKT_OK) fail_msg("\"%s\" was accepted", bad[k].s);
        if (!strstr(err.msg, bad[k].why))
            fail_msg("\"%s\": \"%s\" lacks \"%s\"", bad[k].s, err.msg, bad[k].why);
    }
    /* many nodes */
    char buf[4096] = "(";
    for (int i = 0; i < 15; i++) strcat(buf, i ? ",(1,1,1,1,1)" : "(1,1,1,1,1)");
    strcat(buf, ")");
    REFUSED(ckt_tuple_parse(buf, &t, &err), CKT_ECAPACITY, "more than 64 nodes", "");
    REFUSED(ckt_tuple_parse("(1,2", &t, &err), CKT_EINVAL, "position 4", "expected ',' or ')'");
    /* a long string is quoted, truncated, in the message */
    memset(buf, '(', 3000);
    buf[3000] = 0;
    REFUSED(ckt_tuple_parse(buf, &t, &err), CKT_ECAPACITY, "deeper", "");
    assert_true(strlen(err.msg) < 200);
}

static void render_refusals(void **state)
{
    (void)state;
    ckt_error err;
    int64_t v[4] = {0, 1, 2, 3};
    ckt_cells c = {2, 2, v, NULL, NULL};
    memset(&err, 0, sizeof err);
    assert_null(ckt_render_grid(NULL, &err));
    assert_non_null(strstr(err.msg, "render"));
    ckt_cells z = {0, 2, v, NULL, NULL};
    assert_null(ckt_render_svg(&z, &err));
    assert_non_null(strstr(err.msg, "positive"));
    ckt_cells n = {-3, 2, v, NULL, NULL};
    assert_null(ckt_render_grid(&n, &err));
    ckt_cells nv = {2, 2, NULL, NULL, NULL};
    assert_null(ckt_render_grid(&nv, &err));
    assert_non_null(strstr(err.msg, "values"));
    ckt_cells huge = {INT64_MAX, INT64_MAX, v, NULL, NULL};
    assert_null(ckt_render_svg(&huge, &err));
    assert_non_null(strstr(err.msg, "more than"));
    assert_null(ckt_render_svg_sized(&c, 3, &err));
    assert_non_null(strstr(err.msg, "cell size 3"));
    char *s = ckt_render_svg_sized(&c, 40, &err);
    assert_non_null(s);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(malformed_layouts_everywhere),
        cmocka_unit_test(nulls),
        cmocka_unit_test(semantic_refusals),
        cmocka_unit_test(malformed_strings),
        cmocka_unit_test(render_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
