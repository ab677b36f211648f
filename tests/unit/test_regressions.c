/* Regressions found by the fuzzers (tests/fuzz): each was undefined behaviour (signed overflow)
 * under UBSan before the fix; now each gives a result or a clear error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "checked.h"
#include "ckt/ckt.h"
#include "ckt/distribution.h"
#include "ckt/lds.h"
#include "ckt/sfc.h"

static void ceil_div_does_not_overflow(void **state)
{
    (void)state;
    assert_int_equal(ckt_ceil_div(INT64_MAX, 2), INT64_MAX / 2 + 1);
    assert_int_equal(ckt_ceil_div(INT64_MAX - 1, INT64_MAX), 1);
}

static void products_of_huge_layouts_are_refused(void **state)
{
    (void)state;
    ckt_error err;
    ckt_layout a, b, r;
    /* fuzz_layout_algebra: a pair of layouts whose product's size overflows */
    assert_int_equal(ckt_layout_parse("(27,2):(1,27)", &a, &err), CKT_OK);
    assert_int_equal(ckt_layout_parse("6397357760236748800:1", &b, &err), CKT_OK);
    ckt_status st = ckt_logical_product(&a, &b, &r, &err);
    if (st == CKT_OK)
        assert_true(ckt_layout_size(&r) > 0);
    else
        assert_true(strlen(err.msg) > 0);
    st = ckt_blocked_product(&a, &b, &r, &err);
    if (st != CKT_OK) assert_true(strlen(err.msg) > 0);
}

static void sfc_with_huge_scalars(void **state)
{
    (void)state;
    ckt_error err;
    ckt_sfc s;
    int64_t len[2] = {INT64_MAX / 2, 3}, spa[2] = {INT64_MAX / 2 + 7, 2}, c[2];
    bool partial;
    assert_int_equal(ckt_sfc_make(2, len, NULL, spa, true, &s, &err), CKT_OK);
    assert_int_equal(ckt_sfc_index(&s, s.num_access - 1, c, &partial, &err), CKT_OK);
    assert_true(partial);
    int64_t big[2] = {INT64_MAX / 2, INT64_MAX / 2}, one[2] = {INT64_MAX / 4, INT64_MAX / 4};
    assert_int_equal(ckt_sfc_make(2, big, NULL, one, false, &s, &err), CKT_OK);
    ckt_sfc_locality l;
    assert_int_equal(ckt_sfc_locality_of(&s, 1, 16, &l, &err),
                     CKT_OK); /* 9 accesses: saturating distances */
}

static void nested_thread_count_overflow(void **state)
{
    (void)state;
    ckt_error err;
    ckt_nested n, m;
    memset(&n, 0, sizeof n);
    n.rank = 1;
    n.subgroup_tile[0] = INT64_MAX / 4;
    n.batch_tile[0] = n.outer_tile[0] = n.thread_tile[0] = n.element_tile[0] = 1;
    n.subgroup_strides[0] = 1;
    assert_int_equal(ckt_nested_make(&n, &m, &err), CKT_OK);
    int64_t coords[1];
    assert_int_equal(ckt_nested_elements(&m, 5, 64, coords, &err), CKT_EOVERFLOW);
}

/* the API fuzzer under UBSan: a 2^63-ish k_per_block shifted 1 by 63 */
static void xor_preshuffle_of_huge_sizes(void **state)
{
    (void)state;
    ckt_error err;
    ckt_swizzle sw;
    assert_int_equal(ckt_lds_xor_preshuffle(INT64_MAX, 1, &sw, &err), CKT_EINVAL);
    assert_int_equal(ckt_lds_xor_preshuffle((int64_t)1 << 62, 1, &sw, &err), CKT_EINVAL);
    assert_int_equal(ckt_lds_xor_preshuffle(64, 8, &sw, &err), CKT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ceil_div_does_not_overflow),
        cmocka_unit_test(products_of_huge_layouts_are_refused),
        cmocka_unit_test(sfc_with_huge_scalars),
        cmocka_unit_test(nested_thread_count_overflow),
        cmocka_unit_test(xor_preshuffle_of_huge_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
