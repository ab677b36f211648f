#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "checked.h"
#include "ckt/ckt.h"

static void fail_formats_and_returns_status(void **state)
{
    (void)state;
    ckt_error err;
    assert_int_equal(ckt_fail(&err, CKT_EINVAL, "shape %d of %s", 3, "A"), CKT_EINVAL);
    assert_string_equal(err.msg, "shape 3 of A");
    assert_int_equal(err.status, CKT_EINVAL);
    assert_int_equal(ckt_fail_prefix(&err, "composition: "), CKT_EINVAL);
    assert_string_equal(err.msg, "composition: shape 3 of A");
    assert_int_equal(ckt_fail(NULL, CKT_EOVERFLOW, "x"), CKT_EOVERFLOW); /* NULL err is allowed */
}

static void version_is_the_header_version(void **state)
{
    (void)state;
    assert_string_equal(ckt_version(), CKT_VERSION_STRING);
}

static void checked_arithmetic_detects_overflow(void **state)
{
    (void)state;
    int64_t r;
    assert_false(ckt_mul_ovf(1 << 20, 1 << 20, &r));
    assert_true(ckt_mul_ovf(INT64_MAX / 2 + 1, 2, &r));
    assert_true(ckt_add_ovf(INT64_MAX, 1, &r));
    assert_int_equal(ckt_ceil_div(7, 3), 3);
    assert_int_equal(ckt_gcd(12, -18), 6);
}

static void context_rejects_bad_target_names(void **state)
{
    (void)state;
    ckt_context *ctx = NULL;
    ckt_error err;
    assert_int_equal(ckt_context_create(NULL, &ctx, &err), CKT_OK);
    assert_string_equal(ckt_context_default_target(ctx), "cpu");
    assert_int_equal(ckt_context_set_default_target(ctx, "", &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "empty"));
    ckt_context_destroy(ctx);
    assert_int_equal(ckt_context_create(NULL, NULL, &err), CKT_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fail_formats_and_returns_status),
        cmocka_unit_test(version_is_the_header_version),
        cmocka_unit_test(checked_arithmetic_detects_overflow),
        cmocka_unit_test(context_rejects_bad_target_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
