/* The expression printer (ckt_expr_print) spells C that means the tree: a top-level chain of +
 * and - is printed flat, and each of its terms bare only where it binds at least as tightly as +.
 * A swizzled LDS offset plus its stage's base, (x ^ s) + base, once printed as `x ^ s + base` —
 * x ^ (s + base) in C — which put the element copies of a 192-row tile's second stage over the
 * first one's rows 64..191 (stage bases that are not a power of two: 12288 elements). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/expr.h"

static ckt_expr_pool pool;

static int setup(void **state)
{
    (void)state;
    return ckt_expr_pool_init(&pool, 256, NULL) == CKT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ckt_expr_pool_free(&pool);
    return 0;
}

static const char *print(ckt_expr_id e)
{
    static char buf[512];
    ckt_expr_print(&pool, e, buf, sizeof buf, NULL);
    return buf;
}

static ckt_expr_id bin(ckt_expr_op op, ckt_expr_id a, ckt_expr_id b)
{
    return ckt_expr_binary(&pool, op, a, b);
}

static ckt_expr_id num(int64_t v) { return ckt_expr_int(&pool, v); }

static void swizzle_plus_stage_keeps_its_parentheses(void **state)
{
    (void)state;
    ckt_expr_id t = ckt_expr_tid(&pool);
    ckt_expr_id sw = bin(CKT_E_XOR, t, bin(CKT_E_SHR, bin(CKT_E_AND, t, num(448)), num(3)));
    assert_string_equal(print(bin(CKT_E_ADD, sw, num(12288))),
                        "(tid ^ ((tid & 448) >> 3)) + 12288");
    /* (the constructors put constants last) */
    assert_string_equal(print(bin(CKT_E_ADD, num(8), sw)), "(tid ^ ((tid & 448) >> 3)) + 8");
}

static void looser_operators_in_a_chain_are_parenthesized(void **state)
{
    (void)state;
    ckt_expr_id t = ckt_expr_tid(&pool);
    assert_string_equal(print(bin(CKT_E_ADD, bin(CKT_E_SHL, t, num(2)), num(1))), "(tid << 2) + 1");
    assert_string_equal(print(bin(CKT_E_ADD, bin(CKT_E_AND, t, num(7)), num(1))), "(tid & 7) + 1");
    assert_string_equal(print(bin(CKT_E_ADD, bin(CKT_E_OR, t, num(8)), num(1))), "(tid | 8) + 1");
    assert_string_equal(print(bin(CKT_E_SUB, num(300), bin(CKT_E_XOR, t, num(8)))),
                        "-(tid ^ 8) + 300");
}

static void tighter_terms_stay_bare(void **state)
{
    (void)state;
    ckt_expr_id t = ckt_expr_tid(&pool);
    assert_string_equal(print(bin(CKT_E_ADD, bin(CKT_E_MUL, t, num(64)), num(3))), "tid * 64 + 3");
    ckt_expr_id bx = ckt_expr_bid(&pool, 0);
    assert_string_equal(
        print(bin(CKT_E_ADD, bin(CKT_E_MUL, bx, num(128)), bin(CKT_E_MUL, t, num(2)))),
        "bid_x * 128 + tid * 2");
}

/* A comparison folded to a constant (tid < 0: never; 0 <= tid: always) is a boolean node of its
 * own: it once retyped the shared integer constant 0 or 1 to a boolean, after which every other
 * use of that integer (an index 0) was refused as "not an integer". */
static void folded_comparisons_leave_the_integers_alone(void **state)
{
    (void)state;
    ckt_expr_id zero = num(0), one = num(1), tid = ckt_expr_tid(&pool);
    ckt_expr_id never = bin(CKT_E_LT, tid, zero), always = bin(CKT_E_LE, zero, tid);
    ckt_expr_id c_never = bin(CKT_E_LT, num(3), num(2)), c_always = bin(CKT_E_EQ, num(2), num(2));
    assert_int_equal(ckt_expr_type_of(&pool, zero), CKT_T_INDEX);
    assert_int_equal(ckt_expr_type_of(&pool, one), CKT_T_INDEX);
    assert_int_equal(ckt_expr_type_of(&pool, never), CKT_T_BOOL);
    assert_int_equal(ckt_expr_type_of(&pool, always), CKT_T_BOOL);
    assert_int_equal(ckt_expr_type_of(&pool, c_never), CKT_T_BOOL);
    assert_int_equal(ckt_expr_type_of(&pool, c_always), CKT_T_BOOL);
    assert_true(never != zero && always != one && c_never == never && c_always == always);
    int64_t v = -1;
    assert_true(ckt_expr_is_const(&pool, never, &v) && v == 0);
    assert_true(ckt_expr_is_const(&pool, always, &v) && v == 1);
    assert_string_equal(print(bin(CKT_E_ADD, tid, zero)), "tid");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(swizzle_plus_stage_keeps_its_parentheses),
        cmocka_unit_test(looser_operators_in_a_chain_are_parenthesized),
        cmocka_unit_test(tighter_terms_stay_bare),
        cmocka_unit_test(folded_comparisons_leave_the_integers_alone),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
