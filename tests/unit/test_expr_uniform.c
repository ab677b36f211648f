/* Which expressions are the same on every thread of a group (ckt_expr_group_uniform): the
 * thread id only divided by a multiple of the group. stmatrix (a warp's instruction) is emitted
 * under a branch only when its condition keeps warps whole, so a false "uniform" would leave part
 * of a warp out of the instruction (undefined behaviour on the GPU). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ckt/expr.h"

static ckt_expr_pool pool;

static int setup(void **state)
{
    (void)state;
    return ckt_expr_pool_init(&pool, 512, NULL) == CKT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ckt_expr_pool_free(&pool);
    return 0;
}

static ckt_expr_id bin(ckt_expr_op op, ckt_expr_id a, ckt_expr_id b)
{
    return ckt_expr_binary(&pool, op, a, b);
}

static ckt_expr_id num(int64_t v) { return ckt_expr_int(&pool, v); }

static bool warp_uniform(ckt_expr_id e) { return ckt_expr_group_uniform(&pool, e, 32); }

static void the_warp_index_is_uniform(void **state)
{
    (void)state;
    ckt_expr_id t = ckt_expr_tid(&pool), k = ckt_expr_var(&pool, "k2", 0, 1, 1);
    assert_true(warp_uniform(num(7)));
    assert_true(warp_uniform(k));
    assert_true(warp_uniform(bin(CKT_E_EQ, bin(CKT_E_DIV, t, num(128)), k)));
    assert_true(
        warp_uniform(bin(CKT_E_LT, bin(CKT_E_MOD, bin(CKT_E_DIV, t, num(32)), num(4)), num(2))));
    assert_true(warp_uniform(bin(CKT_E_ADD, ckt_expr_bid(&pool, 0), bin(CKT_E_DIV, t, num(64)))));
}

static void a_lane_dependence_is_not(void **state)
{
    (void)state;
    ckt_expr_id t = ckt_expr_tid(&pool);
    assert_false(warp_uniform(t));
    assert_false(warp_uniform(bin(CKT_E_LT, t, num(40))));
    assert_false(warp_uniform(bin(CKT_E_DIV, t, num(16))));
    assert_false(warp_uniform(bin(CKT_E_DIV, t, num(48))));
    assert_false(
        warp_uniform(bin(CKT_E_ADD, bin(CKT_E_DIV, t, num(32)), bin(CKT_E_MOD, t, num(2)))));
    /* a uniform expression is uniform over any group; tid / 64 over warps, not over 128 threads */
    assert_true(ckt_expr_group_uniform(&pool, bin(CKT_E_DIV, t, num(64)), 64));
    assert_false(ckt_expr_group_uniform(&pool, bin(CKT_E_DIV, t, num(64)), 128));
    /* bad input: no group (nothing is promised), ids the pool does not hold (as ckt_expr_uniform)
     */
    assert_false(ckt_expr_group_uniform(&pool, num(7), 0));
    assert_false(ckt_expr_group_uniform(&pool, bin(CKT_E_DIV, t, num(64)), -32));
    assert_true(ckt_expr_group_uniform(&pool, CKT_EXPR_NONE, 32));
    assert_true(ckt_expr_group_uniform(&pool, (ckt_expr_id)1000000, 32));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_warp_index_is_uniform),
        cmocka_unit_test(a_lane_dependence_is_not),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
