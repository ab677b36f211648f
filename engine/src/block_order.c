/* The order in which blocks take the tiles of an m x n grid of tiles (ckt_kernel_block_order):
 * row-major, column-major, or grouped — `group` tile rows at a time down a column of groups, the
 * L2-friendly order of CK's and Triton's grouped GEMM schedules: consecutive blocks share the
 * tiles of A of a few rows while they walk the columns. */
#include <stdint.h>

#include "ckt/kernel_ir.h"

static bool index_of(ckt_expr_pool *ex, ckt_expr_id e)
{
    return ckt_expr_get(ex, e) && ckt_expr_type_of(ex, e) == CKT_T_INDEX;
}

/* Grouped: the first tile row of id's group, the group's rows (at least 1, which a real tile's
 * group has anyway, first < m: so a block past the tiles lands past them too, never at a negative
 * row or column, and the range analysis knows both are >= 0), then the row within and the column */
static void grouped(ckt_expr_pool *ex, ckt_expr_id id, ckt_expr_id m, ckt_expr_id n, int64_t group,
                    ckt_expr_id *tm, ckt_expr_id *tn)
{
    ckt_expr_id per_group = ckt_expr_mulc(ex, n, group);
    ckt_expr_id first = ckt_expr_mulc(ex, ckt_expr_binary(ex, CKT_E_DIV, id, per_group), group);
    ckt_expr_id rows = ckt_expr_binary(ex, CKT_E_MIN, ckt_expr_binary(ex, CKT_E_SUB, m, first),
                                       ckt_expr_int(ex, group));
    rows = ckt_expr_binary(ex, CKT_E_MAX, rows, ckt_expr_int(ex, 1));
    ckt_expr_id in_group = ckt_expr_binary(ex, CKT_E_MOD, id, per_group);
    *tm = ckt_expr_add(ex, first, ckt_expr_binary(ex, CKT_E_MOD, in_group, rows));
    *tn = ckt_expr_binary(ex, CKT_E_DIV, in_group, rows);
}

ckt_status ckt_kernel_block_order(ckt_kernel *k, ckt_expr_id m, ckt_expr_id n,
                                  ckt_block_order order, int64_t group, ckt_expr_id id,
                                  ckt_expr_id *tm, ckt_expr_id *tn, ckt_error *err)
{
    if (!k || !tm || !tn)
        return ckt_fail(err, CKT_EINVAL, "block_order: NULL %s", !k ? "kernel" : "result");
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    if (!index_of(ex, m) || !index_of(ex, n))
        return ckt_fail(err, CKT_EINVAL,
                        "block_order: 'tiles' must be integer expressions of this kernel");
    if (!ckt_expr_uniform(ex, m) || !ckt_expr_uniform(ex, n))
        return ckt_fail(err, CKT_EINVAL,
                        "block_order: 'tiles' must be the same for every thread of the block, "
                        "got an expression of the thread id");
    if (id == CKT_EXPR_NONE) id = ckt_expr_bid(ex, 0);
    if (!index_of(ex, id))
        return ckt_fail(err, CKT_EINVAL,
                        "block_order: 'id' must be an integer expression of this kernel");
    if (!ckt_expr_uniform(ex, id))
        return ckt_fail(err, CKT_EINVAL,
                        "block_order: 'id' must be the same for every thread of the block (a "
                        "tile number over block ids, sizes and loop counters), got an expression "
                        "of the thread id");
    /* the grouped order multiplies the tile count by group, in 64 bits: bounded like a grid
     * dimension (more tile rows than a grid has blocks mean nothing), and the product is checked
     * where the expression is built */
    if (group < 1 || group > INT32_MAX)
        return ckt_fail(err, CKT_EINVAL, "block_order: 'group' must be in 1..%d, got %lld",
                        INT32_MAX, (long long)group);
    switch (order) {
    case CKT_ORDER_ROW:
        *tm = ckt_expr_binary(ex, CKT_E_DIV, id, n);
        *tn = ckt_expr_binary(ex, CKT_E_MOD, id, n);
        break;
    case CKT_ORDER_COL:
        *tm = ckt_expr_binary(ex, CKT_E_MOD, id, m);
        *tn = ckt_expr_binary(ex, CKT_E_DIV, id, m);
        break;
    case CKT_ORDER_GROUPED: grouped(ex, id, m, n, group, tm, tn); break;
    default:
        return ckt_fail(err, CKT_EINVAL, "block_order: order %d is not row, col or grouped",
                        (int)order);
    }
    return ckt_expr_pool_status(ex, err);
}
