/* Symbolic expressions with folding at construction (see ckt/expr.h). */
#include "ckt/expr.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "ckt/dtype.h"

#define NTERMS 48
#define DIV_CAP ((int64_t)1 << 30)

ckt_status ckt_expr_pool_init(ckt_expr_pool *p, int64_t block_threads, ckt_error *err)
{
    if (!p) return ckt_fail(err, CKT_EINVAL, "expr pool: NULL pool");
    if (block_threads < 1)
        return ckt_fail(err, CKT_EINVAL, "expr pool: block_threads %lld must be >= 1",
                        (long long)block_threads);
    memset(p, 0, sizeof *p);
    p->cap = 256;
    p->nodes = malloc(sizeof(ckt_expr_node) * (size_t)p->cap);
    if (!p->nodes) return ckt_fail(err, CKT_ENOMEM, "expr pool: out of memory");
    p->block_threads = block_threads;
    p->hcap = 1024;
    p->hash = malloc(sizeof(int32_t) * (size_t)p->hcap);
    if (!p->hash) {
        free(p->nodes);
        p->nodes = NULL;
        return ckt_fail(err, CKT_ENOMEM, "expr pool: out of memory");
    }
    memset(p->hash, 0xff, sizeof(int32_t) * (size_t)p->hcap);
    return CKT_OK;
}

void ckt_expr_pool_free(ckt_expr_pool *p)
{
    if (!p) return;
    free(p->nodes);
    free(p->hash);
    p->nodes = NULL;
    p->hash = NULL;
    p->n = p->cap = p->hcap = 0;
}

ckt_status ckt_expr_pool_copy(ckt_expr_pool *dst, const ckt_expr_pool *src, ckt_error *err)
{
    if (!dst || !src) return ckt_fail(err, CKT_EINVAL, "expr pool: NULL pool");
    *dst = *src;
    dst->nodes = malloc(sizeof(ckt_expr_node) * (size_t)src->cap);
    dst->hash = malloc(sizeof(int32_t) * (size_t)src->hcap);
    if (!dst->nodes || !dst->hash) {
        ckt_expr_pool_free(dst);
        return ckt_fail(err, CKT_ENOMEM, "expr pool: out of memory");
    }
    memcpy(dst->nodes, src->nodes, sizeof(ckt_expr_node) * (size_t)src->n);
    memcpy(dst->hash, src->hash, sizeof(int32_t) * (size_t)src->hcap);
    return CKT_OK;
}

static ckt_expr_id fail(ckt_expr_pool *p, ckt_status s, const char *msg)
{
    if (!p->failed) {
        p->failed = s;
        ckt_fail(&p->err, s, "%s", msg);
    }
    return CKT_EXPR_NONE;
}

ckt_status ckt_expr_pool_status(const ckt_expr_pool *p, ckt_error *err)
{
    if (!p || !p->nodes) return ckt_fail(err, CKT_EINVAL, "expr pool: not initialized");
    if (p->failed) return ckt_fail(err, p->failed, "%s", p->err.msg);
    return CKT_OK;
}

static bool valid(const ckt_expr_pool *p, ckt_expr_id e)
{
    return p && p->nodes && e >= 0 && e < p->n;
}
const ckt_expr_node *ckt_expr_get(const ckt_expr_pool *p, ckt_expr_id e)
{
    return valid(p, e) ? &p->nodes[e] : NULL;
}

static uint32_t node_hash(const ckt_expr_node *nd)
{
    uint32_t f;
    memcpy(&f, &nd->f, 4);
    uint64_t h = 1469598103934665603ull;
    uint64_t parts[7] = {nd->op,
                         nd->type,
                         (uint64_t)(uint32_t)nd->a,
                         (uint64_t)(uint32_t)nd->b,
                         (uint64_t)(uint32_t)nd->c,
                         (uint64_t)nd->i,
                         f};
    for (int i = 0; i < 7; i++) h = (h ^ parts[i]) * 1099511628211ull;
    return (uint32_t)(h ^ (h >> 32));
}

static bool node_eq(const ckt_expr_node *x, const ckt_expr_node *y)
{
    return x->op == y->op && x->type == y->type && x->a == y->a && x->b == y->b && x->c == y->c &&
           x->i == y->i && !memcmp(&x->f, &y->f, sizeof x->f);
}

static bool rehash(ckt_expr_pool *p, int32_t cap)
{
    int32_t *h = malloc(sizeof(int32_t) * (size_t)cap);
    if (!h) return false;
    memset(h, 0xff, sizeof(int32_t) * (size_t)cap);
    for (int32_t i = 0; i < p->n; i++) {
        uint32_t j = node_hash(&p->nodes[i]) & (uint32_t)(cap - 1);
        while (h[j] >= 0) j = (j + 1) & (uint32_t)(cap - 1);
        h[j] = i;
    }
    free(p->hash);
    p->hash = h;
    p->hcap = cap;
    return true;
}

/* Shared subexpressions make a node's written-out tree (what every recursive analysis, the
 * evaluator and the printer walk) exponentially larger than the pool: x = x * x forty times is
 * 2^40 nodes written out. Composite nodes record their written-out size and depth in the bits of
 * `i` above the low 8 (ROUND keeps its dtype there), and both are bounded. */
#define TREE_MAX_SIZE ((int64_t)1 << 16)
#define TREE_MAX_DEPTH 2048
static int64_t tree_size(const ckt_expr_pool *p, ckt_expr_id e)
{
    if (e < 0 || e >= p->n) return 0;
    return p->nodes[e].a < 0 ? 1 : (p->nodes[e].i >> 8) & 0xffffff;
}
static int64_t tree_depth(const ckt_expr_pool *p, ckt_expr_id e)
{
    if (e < 0 || e >= p->n || p->nodes[e].a < 0) return 0;
    return (p->nodes[e].i >> 32) & 0xffff;
}

static ckt_expr_id push(ckt_expr_pool *p, ckt_expr_node nd)
{
    if (!p || !p->nodes || p->failed) return CKT_EXPR_NONE;
    if (nd.a >= 0) {
        int64_t size = 1 + tree_size(p, nd.a) + tree_size(p, nd.b) + tree_size(p, nd.c);
        int64_t depth =
            1 + ckt_max64(tree_depth(p, nd.a), ckt_max64(tree_depth(p, nd.b), tree_depth(p, nd.c)));
        if (size > TREE_MAX_SIZE || depth > TREE_MAX_DEPTH)
            return fail(p, CKT_ECAPACITY,
                        "expression: more than 65536 nodes or 2048 levels when written out (shared "
                        "subexpressions multiply)");
        nd.i = (nd.i & 0xff) | (size << 8) | (depth << 32);
    }
    /* parameters and variables are distinct leaves even with equal facts; all else is shared */
    bool share = nd.op != CKT_E_PARAM && nd.op != CKT_E_VAR;
    uint32_t slot = node_hash(&nd) & (uint32_t)(p->hcap - 1);
    if (share) {
        while (p->hash[slot] >= 0) {
            if (node_eq(&p->nodes[p->hash[slot]], &nd)) return p->hash[slot];
            slot = (slot + 1) & (uint32_t)(p->hcap - 1);
        }
    }
    if ((p->n + 1) * 2 > p->hcap) {
        if (!rehash(p, p->hcap * 2)) return fail(p, CKT_ENOMEM, "expression: out of memory");
        slot = node_hash(&nd) & (uint32_t)(p->hcap - 1);
    }
    while (p->hash[slot] >= 0) slot = (slot + 1) & (uint32_t)(p->hcap - 1);
    if (p->n == p->cap) {
        if (p->cap >= CKT_EXPR_MAX_NODES)
            return fail(p, CKT_ECAPACITY, "expression: more than 2^20 nodes in one kernel");
        int32_t cap = p->cap * 2;
        ckt_expr_node *nn = realloc(p->nodes, sizeof(ckt_expr_node) * (size_t)cap);
        if (!nn) return fail(p, CKT_ENOMEM, "expression: out of memory");
        p->nodes = nn;
        p->cap = cap;
    }
    p->nodes[p->n] = nd;
    p->hash[slot] = p->n;
    return p->n++;
}

static ckt_expr_node mk(ckt_expr_op op, ckt_expr_type t, ckt_expr_id a, ckt_expr_id b,
                        ckt_expr_id c)
{
    ckt_expr_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = (uint8_t)op;
    nd.type = (uint8_t)t;
    nd.a = a;
    nd.b = b;
    nd.c = c;
    return nd;
}

/* A leaf holding an integer: a constant, an axis, an input slot, a parameter or variable number. */
static ckt_expr_id valued(ckt_expr_pool *p, ckt_expr_op op, ckt_expr_type t, int64_t i)
{
    ckt_expr_node nd = mk(op, t, -1, -1, -1);
    nd.i = i;
    return push(p, nd);
}

ckt_expr_id ckt_expr_int(ckt_expr_pool *p, int64_t v)
{
    return valued(p, CKT_E_INT, CKT_T_INDEX, v);
}

/* a comparison folded to its value: a node of its own, not the integer constant 0 or 1 retyped
 * (which every other use of that constant shares: an index 0 became a boolean after `tid < 0` was
 * folded, and was refused as an index) */
static ckt_expr_id bool_const(ckt_expr_pool *p, bool v)
{
    return valued(p, CKT_E_INT, CKT_T_BOOL, v);
}

ckt_expr_id ckt_expr_float(ckt_expr_pool *p, float v)
{
    ckt_expr_node nd = mk(CKT_E_FLOAT, CKT_T_F32, -1, -1, -1);
    nd.f = v;
    return push(p, nd);
}

ckt_expr_id ckt_expr_tid(ckt_expr_pool *p)
{
    return push(p, mk(CKT_E_TID, CKT_T_INDEX, -1, -1, -1));
}

ckt_expr_id ckt_expr_bid(ckt_expr_pool *p, int axis)
{
    if (axis < 0 || axis > 2)
        return p ? fail(p, CKT_EINVAL, "block_id: axis must be 0, 1 or 2") : CKT_EXPR_NONE;
    return valued(p, CKT_E_BID, CKT_T_INDEX, axis);
}

ckt_expr_id ckt_expr_nblocks(ckt_expr_pool *p, int axis)
{
    if (axis < 0 || axis > 2)
        return p ? fail(p, CKT_EINVAL, "num_blocks: axis must be 0, 1 or 2") : CKT_EXPR_NONE;
    return valued(p, CKT_E_NBLK, CKT_T_INDEX, axis);
}

ckt_expr_id ckt_expr_input(ckt_expr_pool *p, int slot)
{
    return valued(p, CKT_E_INPUT, CKT_T_F32, slot);
}

ckt_expr_id ckt_expr_input_int(ckt_expr_pool *p, int slot)
{
    return valued(p, CKT_E_INPUT, CKT_T_INDEX, slot);
}

/* Lua's integer // and % (y != 0; INT64_MIN // -1 is the caller's overflow) */
static int64_t floor_div(int64_t x, int64_t y)
{
    int64_t q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

static int64_t floor_mod(int64_t x, int64_t y)
{
    int64_t r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

/* ckt.int / TOINT: toward zero, NaN -> 0, saturating (the i64 store of ckt.array) */
static int64_t to_int(double v)
{
    return isnan(v) ? 0 : v >= 0x1p63 ? INT64_MAX : v <= -0x1p63 ? INT64_MIN : (int64_t)v;
}

static ckt_expr_id leaf(ckt_expr_pool *p, ckt_expr_op op, const char *name, int64_t lo, int64_t hi,
                        int64_t divisor, bool is_float)
{
    if (!p || !p->nodes || p->failed) return CKT_EXPR_NONE;
    int *count = op == CKT_E_PARAM ? &p->nparams : &p->nvars;
    ckt_expr_leaf_info *tab = op == CKT_E_PARAM ? p->params : p->vars;
    if (*count >= CKT_EXPR_MAX_LEAVES)
        return fail(p, CKT_ECAPACITY, "expression: more than 256 parameters or variables");
    ckt_expr_leaf_info *li = &tab[*count];
    memset(li, 0, sizeof *li);
    li->lo = lo;
    li->hi = hi;
    li->divisor = divisor >= 1 ? divisor : 1;
    li->uniform = true;
    li->value = CKT_EXPR_NONE;
    snprintf(li->name, sizeof li->name, "%s", name ? name : "v");
    return valued(p, op, is_float ? CKT_T_F32 : CKT_T_INDEX, (*count)++);
}

ckt_expr_id ckt_expr_param(ckt_expr_pool *p, const char *name, int64_t lo, int64_t hi,
                           int64_t divisor, bool is_float)
{
    return leaf(p, CKT_E_PARAM, name, lo, hi, divisor, is_float);
}

ckt_expr_id ckt_expr_var(ckt_expr_pool *p, const char *name, int64_t lo, int64_t hi,
                         int64_t divisor)
{
    return leaf(p, CKT_E_VAR, name, lo, hi, divisor, false);
}

ckt_expr_id ckt_expr_let(ckt_expr_pool *p, const char *name, ckt_expr_id value)
{
    if (!valid(p, value)) return fail(p, CKT_EINVAL, "expression: let of an invalid expression");
    int64_t lo, hi;
    ckt_expr_range(p, value, &lo, &hi);
    ckt_expr_id v = leaf(p, CKT_E_VAR, name, lo, hi, ckt_expr_divisor(p, value), false);
    if (v != CKT_EXPR_NONE) p->vars[p->nodes[v].i].value = value;
    return v;
}

ckt_expr_id ckt_expr_load(ckt_expr_pool *p, const char *array, int64_t lo, int64_t hi,
                          ckt_expr_id index, ckt_expr_id count)
{
    if (!p || !p->nodes || p->failed) return CKT_EXPR_NONE;
    if (!valid(p, index) || !valid(p, count) || p->nodes[index].type != CKT_T_INDEX ||
        p->nodes[count].type != CKT_T_INDEX)
        return fail(p, CKT_EINVAL, "load: the index and the count must be integer expressions");
    ckt_expr_id arr = ckt_expr_var(p, array, lo, hi, 1);
    if (arr == CKT_EXPR_NONE) return CKT_EXPR_NONE;
    return push(p, mk(CKT_E_LOAD, CKT_T_INDEX, index, count, arr));
}

void ckt_expr_var_set(ckt_expr_pool *p, ckt_expr_id var, int64_t lo, int64_t hi, int64_t divisor)
{
    if (!valid(p, var) || p->nodes[var].op != CKT_E_VAR) return;
    ckt_expr_leaf_info *li = &p->vars[p->nodes[var].i];
    li->lo = lo;
    li->hi = hi;
    li->divisor = divisor >= 1 ? divisor : 1;
}

bool ckt_expr_is_const(const ckt_expr_pool *p, ckt_expr_id e, int64_t *v)
{
    if (!valid(p, e) || p->nodes[e].op != CKT_E_INT) return false;
    if (v) *v = p->nodes[e].i;
    return true;
}

ckt_expr_type ckt_expr_type_of(const ckt_expr_pool *p, ckt_expr_id e)
{
    return valid(p, e) ? (ckt_expr_type)p->nodes[e].type : CKT_T_INDEX;
}

/* ---------------------------------------------------------------- analyses */

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (a == INT64_MIN || b == INT64_MIN) return INT64_MIN;
    if (a == INT64_MAX || b == INT64_MAX) return INT64_MAX;
    if (ckt_add_ovf(a, b, &r)) return a > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    if (a == 0 || b == 0) return 0;
    if (ckt_mul_ovf(a, b, &r) || a == INT64_MIN || b == INT64_MIN || a == INT64_MAX ||
        b == INT64_MAX)
        return ((a < 0) != (b < 0)) ? INT64_MIN : INT64_MAX;
    return r;
}

/* a - b over range bounds, b an unknown bound (INT64_MIN or INT64_MAX, the saturated ends) giving
 * `unknown` (-b of INT64_MIN does not exist) */
static int64_t sat_sub(int64_t a, int64_t b, int64_t unknown)
{
    return (b == INT64_MAX || b == INT64_MIN) ? unknown : sat_add(a, -b);
}

static bool bounded(int64_t lo, int64_t hi) { return lo != INT64_MIN && hi != INT64_MAX; }

/* Whether a op b (ADD, SUB, MUL) provably can leave int64: both ranges known and a corner outside.
 * Such a value wraps (the printer spells it over unsigned 64 bits, as Lua computes it), so its
 * range is all of int64: S * S * S of sizes below 2^31 can be negative. (An operand of unknown
 * range keeps the old reading: no overflow assumed.) */
static bool overflows(ckt_expr_op op, int64_t al, int64_t ah, int64_t bl, int64_t bh)
{
    int64_t r;
    if (!bounded(al, ah) || !bounded(bl, bh)) return false;
    switch (op) {
    case CKT_E_ADD: return ckt_add_ovf(al, bl, &r) || ckt_add_ovf(ah, bh, &r);
    case CKT_E_SUB: return ckt_sub_ovf(al, bh, &r) || ckt_sub_ovf(ah, bl, &r);
    default:
        return ckt_mul_ovf(al, bl, &r) || ckt_mul_ovf(al, bh, &r) || ckt_mul_ovf(ah, bl, &r) ||
               ckt_mul_ovf(ah, bh, &r);
    }
}

void ckt_expr_range(const ckt_expr_pool *p, ckt_expr_id e, int64_t *lo, int64_t *hi)
{
    int64_t al, ah, bl, bh, l = INT64_MIN, h = INT64_MAX;
    if (!valid(p, e)) {
        *lo = l;
        *hi = h;
        return;
    }
    const ckt_expr_node *n = &p->nodes[e];
    switch ((ckt_expr_op)n->op) {
    case CKT_E_INT: l = h = n->i; break;
    case CKT_E_TID:
        l = 0;
        h = p->block_threads - 1;
        break;
    case CKT_E_BID:
        l = 0;
        h = INT32_MAX;
        break;
    case CKT_E_NBLK:
        l = 1;
        h = INT32_MAX;
        break;
    case CKT_E_PARAM:
        if (n->type == CKT_T_INDEX) {
            l = p->params[n->i].lo;
            h = p->params[n->i].hi;
        }
        break;
    case CKT_E_VAR:
        l = p->vars[n->i].lo;
        h = p->vars[n->i].hi;
        break;
    case CKT_E_LOAD: /* the element type's range, kept by the array's leaf */
        ckt_expr_range(p, n->c, &l, &h);
        break;
    case CKT_E_ADD:
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        l = sat_add(al, bl);
        h = sat_add(ah, bh);
        if (overflows(CKT_E_ADD, al, ah, bl, bh)) l = INT64_MIN, h = INT64_MAX;
        break;
    case CKT_E_SUB:
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        l = sat_sub(al, bh, INT64_MIN);
        h = sat_sub(ah, bl, INT64_MAX);
        if (overflows(CKT_E_SUB, al, ah, bl, bh)) l = INT64_MIN, h = INT64_MAX;
        break;
    case CKT_E_MUL: {
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        int64_t c[4] = {sat_mul(al, bl), sat_mul(al, bh), sat_mul(ah, bl), sat_mul(ah, bh)};
        l = h = c[0];
        for (int i = 1; i < 4; i++) {
            l = ckt_min64(l, c[i]);
            h = ckt_max64(h, c[i]);
        }
        if (overflows(CKT_E_MUL, al, ah, bl, bh)) l = INT64_MIN, h = INT64_MAX;
        break;
    }
    case CKT_E_DIV:
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        if (al >= 0 && bl > 0) {
            l = al / bh;
            h = ah == INT64_MAX ? INT64_MAX : ah / bl;
        } else if (al >= 0 && bl == 0) {
            l = 0;
            h = ah;
        } /* a zero divisor gives 0 (ckt_floordiv) */
        break;
    case CKT_E_MOD:
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        if (al >= 0 && bl > 0) {
            l = 0;
            h = ckt_min64(ah, bh == INT64_MAX ? INT64_MAX : bh - 1);
        } else if (al >= 0 && bl == 0) {
            l = 0;
            h = ckt_min64(ah, bh == INT64_MAX ? INT64_MAX : ckt_max64(bh - 1, 0));
        }
        break;
    case CKT_E_NEG: /* (what a - x becomes in the linear form: 3 - wg read unbounded) */
        ckt_expr_range(p, n->a, &al, &ah);
        if (bounded(al, ah) && al != INT64_MIN) l = -ah, h = -al;
        break;
    case CKT_E_MIN:
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        l = ckt_min64(al, bl);
        h = ckt_min64(ah, bh);
        break;
    case CKT_E_MAX:
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        l = ckt_max64(al, bl);
        h = ckt_max64(ah, bh);
        break;
    case CKT_E_LT:
    case CKT_E_LE:
    case CKT_E_EQ:
    case CKT_E_NE:
    case CKT_E_LAND:
    case CKT_E_LOR:
    case CKT_E_NOT:
        l = 0;
        h = 1;
        break;
    case CKT_E_SELECT:
        ckt_expr_range(p, n->b, &al, &ah);
        ckt_expr_range(p, n->c, &bl, &bh);
        l = ckt_min64(al, bl);
        h = ckt_max64(ah, bh);
        break;
    case CKT_E_AND:
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        if (al >= 0 || bl >= 0) { /* x & m with m >= 0 is in [0, m] */
            l = 0;
            h = al >= 0 && bl >= 0 ? ckt_min64(ah, bh) : al >= 0 ? ah : bh;
        }
        break;
    case CKT_E_SHR:
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        if (al >= 0 && bl >= 0 && bh < 63) {
            l = al >> bh;
            h = ah >> bl;
        }
        break;
    case CKT_E_XOR:
    case CKT_E_OR:
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        if (al >= 0 && bl >= 0 && ah < ((int64_t)1 << 62) && bh < ((int64_t)1 << 62)) {
            int64_t m = ckt_max64(ah, bh), pw = 1;
            while (pw <= m) pw <<= 1;
            l = 0;
            h = pw - 1;
        }
        break;
    default: break;
    }
    *lo = l;
    *hi = h;
}

int64_t ckt_expr_divisor(const ckt_expr_pool *p, ckt_expr_id e)
{
    if (!valid(p, e)) return 1;
    const ckt_expr_node *n = &p->nodes[e];
    int64_t a, b, c;
    switch ((ckt_expr_op)n->op) {
    case CKT_E_INT: {
        /* |INT64_MIN| does not fit an int64_t: take the magnitude unsigned */
        uint64_t m = n->i < 0 ? 0u - (uint64_t)n->i : (uint64_t)n->i;
        return m == 0 || m > (uint64_t)DIV_CAP ? DIV_CAP : (int64_t)m;
    }
    case CKT_E_PARAM: return n->type == CKT_T_INDEX ? p->params[n->i].divisor : 1;
    case CKT_E_VAR: return p->vars[n->i].divisor;
    case CKT_E_ADD:
    case CKT_E_SUB:
    case CKT_E_MIN:
    case CKT_E_MAX: return ckt_gcd(ckt_expr_divisor(p, n->a), ckt_expr_divisor(p, n->b));
    case CKT_E_SELECT: return ckt_gcd(ckt_expr_divisor(p, n->b), ckt_expr_divisor(p, n->c));
    case CKT_E_MUL:
        a = ckt_expr_divisor(p, n->a);
        b = ckt_expr_divisor(p, n->b);
        return ckt_min64(sat_mul(a, b), DIV_CAP);
    case CKT_E_MOD:
        if (ckt_expr_is_const(p, n->b, &c) && c > 0) return ckt_gcd(ckt_expr_divisor(p, n->a), c);
        return 1;
    case CKT_E_SHL:
        if (ckt_expr_is_const(p, n->b, &c) && c >= 0 && c < 30)
            return ckt_min64(sat_mul(ckt_expr_divisor(p, n->a), (int64_t)1 << c), DIV_CAP);
        return 1;
    case CKT_E_NEG: return ckt_expr_divisor(p, n->a);
    default: return 1;
    }
}

bool ckt_expr_uniform(const ckt_expr_pool *p, ckt_expr_id e)
{
    if (!valid(p, e)) return true;
    const ckt_expr_node *n = &p->nodes[e];
    if (n->op == CKT_E_TID || n->op == CKT_E_INPUT) return false;
    return ckt_expr_uniform(p, n->a) && ckt_expr_uniform(p, n->b) && ckt_expr_uniform(p, n->c);
}

bool ckt_expr_group_uniform(const ckt_expr_pool *p, ckt_expr_id e, int64_t group)
{
    if (group < 1) return false; /* (no such group: nothing is promised) */
    if (!valid(p, e)) return true;
    const ckt_expr_node *n = &p->nodes[e];
    int64_t c;
    if (n->op == CKT_E_DIV && valid(p, n->a) && p->nodes[n->a].op == CKT_E_TID &&
        ckt_expr_is_const(p, n->b, &c) && c > 0 && c % group == 0)
        return true;
    if (n->op == CKT_E_TID || n->op == CKT_E_INPUT) return false;
    return ckt_expr_group_uniform(p, n->a, group) && ckt_expr_group_uniform(p, n->b, group) &&
           ckt_expr_group_uniform(p, n->c, group);
}

bool ckt_expr_has_input(const ckt_expr_pool *p, ckt_expr_id e)
{
    if (!valid(p, e)) return false;
    const ckt_expr_node *n = &p->nodes[e];
    if (n->op == CKT_E_INPUT) return true;
    return ckt_expr_has_input(p, n->a) || ckt_expr_has_input(p, n->b) ||
           ckt_expr_has_input(p, n->c);
}

/* ---------------------------------------------------------------- folding */

/* An index expression as sum(coef[i] * term[i]) + k, terms being the non-sum parts. */
typedef struct lin {
    int n;
    ckt_expr_id term[NTERMS];
    int64_t coef[NTERMS];
    int64_t k;
    bool ok;
} lin;

static void lin_add(const ckt_expr_pool *p, lin *s, ckt_expr_id e, int64_t scale)
{
    if (!s->ok) return;
    /* a scale or coefficient of INT64_MIN has no negation (a - b, -x and the rebuilt sum negate
     * them): such a sum is left as it was (found by the API fuzzer under UBSan) */
    if (scale == INT64_MIN) {
        s->ok = false;
        return;
    }
    const ckt_expr_node *n = &p->nodes[e];
    int64_t c, t;
    if (n->op == CKT_E_INT) {
        if (ckt_mul_ovf(n->i, scale, &t) || ckt_add_ovf(s->k, t, &s->k)) s->ok = false;
        return;
    }
    if (n->type == CKT_T_INDEX) {
        if (n->op == CKT_E_ADD) {
            lin_add(p, s, n->a, scale);
            lin_add(p, s, n->b, scale);
            return;
        }
        if (n->op == CKT_E_SUB) {
            lin_add(p, s, n->a, scale);
            lin_add(p, s, n->b, -scale);
            return;
        }
        if (n->op == CKT_E_NEG) {
            lin_add(p, s, n->a, -scale);
            return;
        }
        if (n->op == CKT_E_MUL && ckt_expr_is_const(p, n->b, &c)) {
            if (ckt_mul_ovf(c, scale, &t)) {
                s->ok = false;
                return;
            }
            lin_add(p, s, n->a, t);
            return;
        }
    }
    for (int i = 0; i < s->n; i++)
        if (s->term[i] == e) {
            if (ckt_add_ovf(s->coef[i], scale, &s->coef[i]) || s->coef[i] == INT64_MIN)
                s->ok = false;
            return;
        }
    if (s->n == NTERMS) {
        s->ok = false;
        return;
    }
    s->term[s->n] = e;
    s->coef[s->n++] = scale;
}

static ckt_expr_id raw(ckt_expr_pool *p, ckt_expr_op op, ckt_expr_type t, ckt_expr_id a,
                       ckt_expr_id b)
{
    return push(p, mk(op, t, a, b, -1));
}

/* Rebuild sum(coef * term) + k, terms in their first-seen order (keeps source readable). */
static ckt_expr_id lin_build(ckt_expr_pool *p, const lin *s)
{
    ckt_expr_id acc = CKT_EXPR_NONE;
    for (int i = 0; i < s->n; i++) {
        if (s->coef[i] == 0) continue;
        ckt_expr_id t = s->term[i];
        if (s->coef[i] != 1 && s->coef[i] != -1)
            t = raw(p, CKT_E_MUL, CKT_T_INDEX, t,
                    ckt_expr_int(p, s->coef[i] < 0 ? -s->coef[i] : s->coef[i]));
        if (acc == CKT_EXPR_NONE)
            acc = s->coef[i] < 0 ? raw(p, CKT_E_NEG, CKT_T_INDEX, t, -1) : t;
        else
            acc = raw(p, s->coef[i] < 0 ? CKT_E_SUB : CKT_E_ADD, CKT_T_INDEX, acc, t);
    }
    if (acc == CKT_EXPR_NONE) return ckt_expr_int(p, s->k);
    if (s->k > 0) acc = raw(p, CKT_E_ADD, CKT_T_INDEX, acc, ckt_expr_int(p, s->k));
    if (s->k < 0 && s->k != INT64_MIN)
        acc = raw(p, CKT_E_SUB, CKT_T_INDEX, acc, ckt_expr_int(p, -s->k));
    if (s->k == INT64_MIN) acc = raw(p, CKT_E_ADD, CKT_T_INDEX, acc, ckt_expr_int(p, s->k));
    return acc;
}

static void term_range(const ckt_expr_pool *p, ckt_expr_id t, int64_t c, int64_t *lo, int64_t *hi)
{
    int64_t l, h;
    ckt_expr_range(p, t, &l, &h);
    int64_t a = sat_mul(l, c), b = sat_mul(h, c);
    *lo = ckt_min64(a, b);
    *hi = ckt_max64(a, b);
}

/* e / c or e % c for a constant c > 0: the terms whose coefficients c divides go to the
 * quotient; the rest must stay within [0, c) for the split to be exact. */
static ckt_expr_id fold_divmod(ckt_expr_pool *p, ckt_expr_op op, ckt_expr_id e, int64_t c)
{
    int64_t lo, hi;
    ckt_expr_range(p, e, &lo, &hi);
    if (lo >= 0 && hi < c) return op == CKT_E_DIV ? ckt_expr_int(p, 0) : e;
    if (c == 1) return op == CKT_E_DIV ? e : ckt_expr_int(p, 0);
    const ckt_expr_node *n = &p->nodes[e];
    int64_t inner;
    /* (x / a) / c == x / (a c) for x >= 0 */
    if (op == CKT_E_DIV && n->op == CKT_E_DIV && lo >= 0 && ckt_expr_is_const(p, n->b, &inner) &&
        inner > 0) {
        int64_t ac;
        if (!ckt_mul_ovf(inner, c, &ac))
            return ckt_expr_binary(p, CKT_E_DIV, n->a, ckt_expr_int(p, ac));
    }
    /* (x % m) % c == x % c when c divides m */
    if (op == CKT_E_MOD && n->op == CKT_E_MOD && ckt_expr_is_const(p, n->b, &inner) && inner > 0 &&
        inner % c == 0) {
        int64_t xl, xh;
        ckt_expr_range(p, n->a, &xl, &xh);
        if (xl >= 0) return ckt_expr_binary(p, CKT_E_MOD, n->a, ckt_expr_int(p, c));
    }
    lin s;
    memset(&s, 0, sizeof s);
    s.ok = true;
    lin_add(p, &s, e, 1);
    if (!s.ok || lo < 0) return CKT_EXPR_NONE;
    lin q, r;
    memset(&q, 0, sizeof q);
    memset(&r, 0, sizeof r);
    q.ok = r.ok = true;
    q.k = s.k / c;
    r.k = s.k % c;
    int64_t rlo = r.k, rhi = r.k;
    for (int i = 0; i < s.n; i++) {
        if (s.coef[i] % c == 0) {
            q.term[q.n] = s.term[i];
            q.coef[q.n++] = s.coef[i] / c;
        } else {
            int64_t l, h;
            term_range(p, s.term[i], s.coef[i], &l, &h);
            rlo = sat_add(rlo, l);
            rhi = sat_add(rhi, h);
            r.term[r.n] = s.term[i];
            r.coef[r.n++] = s.coef[i];
        }
    }
    if (rlo < 0 || rhi >= c) return CKT_EXPR_NONE;
    if (q.n == s.n && r.k == 0 && op == CKT_E_MOD) return ckt_expr_int(p, 0);
    if (op == CKT_E_MOD) return lin_build(p, &r);
    if (q.n == 0 && q.k == 0) return ckt_expr_int(p, 0);
    return lin_build(p, &q);
}

static bool is_float(const ckt_expr_pool *p, ckt_expr_id e)
{
    return p->nodes[e].type == CKT_T_F32;
}

static ckt_expr_id fold_float(ckt_expr_pool *p, ckt_expr_op op, float a, float b)
{
    switch (op) {
    case CKT_E_ADD: return ckt_expr_float(p, a + b);
    case CKT_E_SUB: return ckt_expr_float(p, a - b);
    case CKT_E_MUL: return ckt_expr_float(p, a * b);
    case CKT_E_DIV: return ckt_expr_float(p, a / b);
    case CKT_E_MIN: return ckt_expr_float(p, fminf(a, b));
    case CKT_E_MAX: return ckt_expr_float(p, fmaxf(a, b));
    default: return CKT_EXPR_NONE;
    }
}

static bool int_op_ok(ckt_expr_op op) { return op <= CKT_E_SHR && op >= CKT_E_ADD; }

/* Lua's x << n (n < 0: x >> -n), on the 64 bits as unsigned: counts of 64 or more give 0 */
static int64_t lua_shift(int64_t x, int64_t n)
{
    if (n <= -64 || n >= 64) return 0;
    return n >= 0 ? (int64_t)((uint64_t)x << n) : (int64_t)((uint64_t)x >> -n);
}

/* A known range: neither bound saturated (the analyses' "unknown"). */
/* Whether a op b (ADD, SUB, MUL), with both operands' ranges known, can leave int64. A value folded
 * in from an option (a constant) times a size can: the generated code would overflow (undefined
 * in C: a compiler may drop the zero-divisor check that follows, and the CPU launch dies of
 * SIGFPE), so such an expression is refused where it is built. */
static bool may_overflow(const ckt_expr_pool *p, ckt_expr_op op, ckt_expr_id a, ckt_expr_id b)
{
    if (p->nodes[a].type == CKT_T_F32 || p->nodes[b].type == CKT_T_F32) return false;
    int64_t al, ah, bl, bh, r;
    ckt_expr_range(p, a, &al, &ah);
    ckt_expr_range(p, b, &bl, &bh);
    (void)r;
    return overflows(op, al, ah, bl, bh);
}

static ckt_expr_id fail_overflow(ckt_expr_pool *p, ckt_expr_op op, ckt_expr_id a, ckt_expr_id b)
{
    char ea[96], eb[96], msg[400];
    int64_t al, ah, bl, bh;
    ckt_expr_range(p, a, &al, &ah);
    ckt_expr_range(p, b, &bl, &bh);
    ckt_expr_print(p, a, ea, sizeof ea, NULL);
    ckt_expr_print(p, b, eb, sizeof eb, NULL);
    snprintf(msg, sizeof msg,
             "expression: (%s) %s (%s) can overflow 64 bits (the operands reach [%lld, %lld] and "
             "[%lld, %lld]): a folded value is too large",
             ea,
             op == CKT_E_ADD   ? "+"
             : op == CKT_E_SUB ? "-"
                               : "*",
             eb, (long long)al, (long long)ah, (long long)bl, (long long)bh);
    return fail(p, CKT_EOVERFLOW, msg);
}

/* a << n or a >> n with a count n not known when built: Lua's meaning spelled out, as
 * n in (-64, 64) ? (n >= 0 ? a op (n & 63) : a op' (-n & 63)) : 0 */
static ckt_expr_id var_shift(ckt_expr_pool *p, ckt_expr_op op, ckt_expr_id a, ckt_expr_id n)
{
    int64_t lo, hi;
    ckt_expr_range(p, n, &lo, &hi);
    ckt_expr_op other = op == CKT_E_SHL ? CKT_E_SHR : CKT_E_SHL;
    if (lo >= 0 && hi < 64) return push(p, mk(op, CKT_T_INDEX, a, n, -1));
    ckt_expr_id m63 = ckt_expr_int(p, 63);
    ckt_expr_id pos = push(p, mk(op, CKT_T_INDEX, a, ckt_expr_binary(p, CKT_E_AND, n, m63), -1));
    ckt_expr_id neg = push(
        p,
        mk(other, CKT_T_INDEX, a,
           ckt_expr_binary(p, CKT_E_AND, ckt_expr_binary(p, CKT_E_SUB, ckt_expr_int(p, 0), n), m63),
           -1));
    ckt_expr_id in =
        ckt_expr_binary(p, CKT_E_LAND, ckt_expr_binary(p, CKT_E_LT, ckt_expr_int(p, -64), n),
                        ckt_expr_binary(p, CKT_E_LT, n, ckt_expr_int(p, 64)));
    return ckt_expr_select(
        p, in, ckt_expr_select(p, ckt_expr_binary(p, CKT_E_LE, ckt_expr_int(p, 0), n), pos, neg),
        ckt_expr_int(p, 0));
}

/* Lua's float %: m = fmod(a, b), plus b when m and b have opposite signs (m != 0) */
static ckt_expr_id float_mod(ckt_expr_pool *p, ckt_expr_id a, ckt_expr_id b)
{
    a = ckt_expr_unary(p, CKT_E_TOFLOAT, a);
    b = ckt_expr_unary(p, CKT_E_TOFLOAT, b);
    if (p->failed) return CKT_EXPR_NONE;
    const ckt_expr_node *na = &p->nodes[a], *nb = &p->nodes[b];
    if (na->op == CKT_E_FLOAT && nb->op == CKT_E_FLOAT) {
        float m = fmodf(na->f, nb->f);
        if (m > 0 ? nb->f < 0 : (m < 0 && nb->f != m)) m += nb->f;
        return ckt_expr_float(p, m);
    }
    ckt_expr_id m = push(p, mk(CKT_E_MOD, CKT_T_F32, a, b, -1)), z = ckt_expr_float(p, 0.0f);
    ckt_expr_id flip =
        ckt_expr_binary(p, CKT_E_LOR,
                        ckt_expr_binary(p, CKT_E_LAND, ckt_expr_binary(p, CKT_E_LT, z, m),
                                        ckt_expr_binary(p, CKT_E_LT, b, z)),
                        ckt_expr_binary(p, CKT_E_LAND, ckt_expr_binary(p, CKT_E_LT, m, z),
                                        ckt_expr_binary(p, CKT_E_LT, z, b)));
    return ckt_expr_select(p, flip, ckt_expr_binary(p, CKT_E_ADD, m, b), m);
}

ckt_expr_id ckt_expr_binary(ckt_expr_pool *p, ckt_expr_op op, ckt_expr_id a, ckt_expr_id b)
{
    if (!p || !p->nodes || p->failed) return CKT_EXPR_NONE;
    if (!valid(p, a) || !valid(p, b))
        return fail(p, CKT_EINVAL, "expression: operand is not an expression of this kernel");
    if (op < CKT_E_ADD || op > CKT_E_LOR || op == CKT_E_NOT)
        return fail(p, CKT_EINVAL, "expression: not a binary operator");
    bool fl = is_float(p, a) || is_float(p, b);
    bool cmp = op >= CKT_E_LT && op <= CKT_E_NE;
    bool logic = op == CKT_E_LAND || op == CKT_E_LOR;
    if (fl && op == CKT_E_MOD) return float_mod(p, a, b);
    if (fl && op >= CKT_E_AND && op <= CKT_E_SHR)
        return fail(p, CKT_EINVAL,
                    "expression: bitwise operators and shifts need integer operands, got a float "
                    "(convert with ckt.int)");
    ckt_expr_type t = cmp || logic ? CKT_T_BOOL : fl ? CKT_T_F32 : CKT_T_INDEX;
    int64_t x, y, r;
    bool cx = ckt_expr_is_const(p, a, &x), cy = ckt_expr_is_const(p, b, &y);
    if (fl) {
        const ckt_expr_node *na = &p->nodes[a], *nb = &p->nodes[b];
        bool fa = na->op == CKT_E_FLOAT || na->op == CKT_E_INT,
             fb = nb->op == CKT_E_FLOAT || nb->op == CKT_E_INT;
        if (fa && fb && !cmp && !logic) {
            ckt_expr_id f = fold_float(p, op, na->op == CKT_E_FLOAT ? na->f : (float)na->i,
                                       nb->op == CKT_E_FLOAT ? nb->f : (float)nb->i);
            if (f != CKT_EXPR_NONE) return f;
        }
        return push(p, mk(op, t, a, b, -1));
    }
    /* integer constants */
    if (cx && cy && int_op_ok(op)) {
        bool ovf = false;
        switch (op) {
        case CKT_E_ADD: ovf = ckt_add_ovf(x, y, &r); break;
        case CKT_E_SUB: ovf = ckt_sub_ovf(x, y, &r); break;
        case CKT_E_MUL: ovf = ckt_mul_ovf(x, y, &r); break;
        case CKT_E_DIV:
        case CKT_E_MOD:
            if (y == 0) return fail(p, CKT_EINVAL, "expression: division by the constant 0");
            if (x == INT64_MIN && y == -1) {
                ovf = true;
                break;
            }
            r = op == CKT_E_DIV ? floor_div(x, y) : floor_mod(x, y);
            break;
        case CKT_E_MIN: r = ckt_min64(x, y); break;
        case CKT_E_MAX: r = ckt_max64(x, y); break;
        case CKT_E_AND: r = x & y; break;
        case CKT_E_OR: r = x | y; break;
        case CKT_E_XOR: r = x ^ y; break;
        case CKT_E_SHL:
        case CKT_E_SHR: r = lua_shift(x, op == CKT_E_SHL ? y : y == INT64_MIN ? 64 : -y); break;
        default: r = 0; break;
        }
        if (ovf) return fail(p, CKT_EOVERFLOW, "expression: 64-bit overflow folding constants");
        return ckt_expr_int(p, r);
    }
    if (cx && cy && cmp) {
        bool v = op == CKT_E_LT   ? x < y
                 : op == CKT_E_LE ? x <= y
                 : op == CKT_E_EQ ? x == y
                                  : x != y;
        return bool_const(p, v);
    }
    int64_t al, ah, bl, bh;
    if ((op == CKT_E_ADD || op == CKT_E_SUB || op == CKT_E_MUL) && (cx || cy) &&
        may_overflow(p, op, a, b))
        return fail_overflow(p, op, a, b);
    if ((op == CKT_E_SHL || op == CKT_E_SHR) && !cy) return var_shift(p, op, a, b);
    switch (op) {
    case CKT_E_ADD:
    case CKT_E_SUB: {
        if (cy && y == 0) return a;
        if (cx && x == 0 && op == CKT_E_ADD) return b;
        /* keep sums flat and constants together: (x + 3) + 4 -> x + 7 */
        lin s;
        memset(&s, 0, sizeof s);
        s.ok = true;
        lin_add(p, &s, a, 1);
        lin_add(p, &s, b, op == CKT_E_ADD ? 1 : -1);
        if (s.ok) return lin_build(p, &s);
        break;
    }
    case CKT_E_MUL:
        if ((cx && x == 0) || (cy && y == 0)) return ckt_expr_int(p, 0);
        if (cy && y == 1) return a;
        if (cx && x == 1) return b;
        if (cx && !cy) return ckt_expr_binary(p, CKT_E_MUL, b, a); /* constants on the right */
        if (cy) {
            lin s;
            memset(&s, 0, sizeof s);
            s.ok = true;
            lin_add(p, &s, a, y);
            if (s.ok && (s.n > 1 || s.k != 0 || (s.n == 1 && p->nodes[a].op == CKT_E_MUL)))
                return lin_build(p, &s);
        }
        break;
    case CKT_E_DIV:
    case CKT_E_MOD:
        if (cy && y == 0) return fail(p, CKT_EINVAL, "expression: division by the constant 0");
        if (cy && y > 0) {
            ckt_expr_id f = fold_divmod(p, op, a, y);
            if (f != CKT_EXPR_NONE || p->failed) return f;
        }
        break;
    case CKT_E_MIN:
    case CKT_E_MAX:
        ckt_expr_range(p, a, &al, &ah);
        ckt_expr_range(p, b, &bl, &bh);
        if (ah <= bl) return op == CKT_E_MIN ? a : b;
        if (bh <= al) return op == CKT_E_MIN ? b : a;
        break;
    case CKT_E_LT:
    case CKT_E_LE:
        ckt_expr_range(p, a, &al, &ah);
        ckt_expr_range(p, b, &bl, &bh);
        if ((op == CKT_E_LT && ah < bl) || (op == CKT_E_LE && ah <= bl) ||
            (op == CKT_E_LT && al >= bh) || (op == CKT_E_LE && al > bh)) {
            bool v = (op == CKT_E_LT && ah < bl) || (op == CKT_E_LE && ah <= bl);
            return bool_const(p, v);
        }
        break;
    case CKT_E_LAND:
        if (cx) return x ? b : a;
        if (cy) return y ? a : b;
        break;
    case CKT_E_LOR:
        if (cx) return x ? a : b;
        if (cy) return y ? a : b;
        break;
    case CKT_E_SHL:
    case CKT_E_SHR:
        /* Lua's shifts: a count of 64 or more gives 0, a negative one shifts the other way */
        if (y == 0) return a;
        if (y >= 64 || y <= -64) return ckt_expr_int(p, 0);
        if (y < 0)
            return ckt_expr_binary(p, op == CKT_E_SHL ? CKT_E_SHR : CKT_E_SHL, a,
                                   ckt_expr_int(p, -y));
        break;
    case CKT_E_AND:
        if (cy && y == 0) return ckt_expr_int(p, 0);
        if (cy && y > 0) {
            /* x & mask is 0 when x stays below the mask's lowest bit (swizzles of small offsets) */
            ckt_expr_range(p, a, &al, &ah);
            if (al >= 0 && ah < (y & -y)) return ckt_expr_int(p, 0);
        }
        break;
    case CKT_E_XOR:
    case CKT_E_OR:
        if (cy && y == 0) return a;
        if (cx && x == 0) return b;
        break;
    default: break;
    }
    return push(p, mk(op, t, a, b, -1));
}

ckt_expr_id ckt_expr_unary(ckt_expr_pool *p, ckt_expr_op op, ckt_expr_id a)
{
    if (!p || !p->nodes || p->failed) return CKT_EXPR_NONE;
    if (!valid(p, a))
        return fail(p, CKT_EINVAL, "expression: operand is not an expression of this kernel");
    const ckt_expr_node *n = &p->nodes[a];
    switch (op) {
    case CKT_E_NEG:
        if (n->op == CKT_E_INT) {
            if (n->i == INT64_MIN)
                return fail(p, CKT_EOVERFLOW, "expression: 64-bit overflow negating a constant");
            return ckt_expr_int(p, -n->i);
        }
        if (n->op == CKT_E_FLOAT) return ckt_expr_float(p, -n->f);
        if (n->type == CKT_T_INDEX) return ckt_expr_binary(p, CKT_E_SUB, ckt_expr_int(p, 0), a);
        return push(p, mk(op, (ckt_expr_type)n->type, a, -1, -1));
    case CKT_E_NOT: return push(p, mk(op, CKT_T_BOOL, a, -1, -1));
    case CKT_E_EXP:
    case CKT_E_EXP2:
    case CKT_E_LOG:
    case CKT_E_SQRT:
        if (n->op == CKT_E_FLOAT) {
            float v = op == CKT_E_EXP    ? expf(n->f)
                      : op == CKT_E_EXP2 ? exp2f(n->f)
                      : op == CKT_E_LOG  ? logf(n->f)
                                         : sqrtf(n->f);
            return ckt_expr_float(p, v);
        }
        return push(p, mk(op, CKT_T_F32,
                          n->type == CKT_T_F32 ? a : ckt_expr_unary(p, CKT_E_TOFLOAT, a), -1, -1));
    case CKT_E_ABS:
        if (n->op == CKT_E_FLOAT) return ckt_expr_float(p, fabsf(n->f));
        if (n->op == CKT_E_INT && n->i != INT64_MIN)
            return ckt_expr_int(p, n->i < 0 ? -n->i : n->i);
        return push(p, mk(op, (ckt_expr_type)n->type, a, -1, -1));
    case CKT_E_TOFLOAT:
        if (n->type == CKT_T_F32) return a;
        if (n->op == CKT_E_INT) return ckt_expr_float(p, (float)n->i);
        return push(p, mk(op, CKT_T_F32, a, -1, -1));
    case CKT_E_TOINT:
        if (n->type != CKT_T_F32) return a;
        if (n->op == CKT_E_FLOAT) return ckt_expr_int(p, to_int(n->f));
        return push(p, mk(op, CKT_T_INDEX, a, -1, -1));
    case CKT_E_FLOOR:
        if (n->type != CKT_T_F32) return a; /* integers are their own floor */
        if (n->op == CKT_E_FLOAT) return ckt_expr_float(p, floorf(n->f));
        return push(p, mk(op, CKT_T_F32, a, -1, -1));
    default: return fail(p, CKT_EINVAL, "expression: not a unary operator");
    }
}

ckt_expr_id ckt_expr_select(ckt_expr_pool *p, ckt_expr_id c, ckt_expr_id a, ckt_expr_id b)
{
    if (!p || !p->nodes || p->failed) return CKT_EXPR_NONE;
    if (!valid(p, c) || !valid(p, a) || !valid(p, b))
        return fail(p, CKT_EINVAL, "select: operand is not an expression of this kernel");
    int64_t v;
    if (ckt_expr_is_const(p, c, &v)) return v ? a : b;
    if (is_float(p, a) != is_float(p, b)) {
        if (!is_float(p, a))
            a = ckt_expr_unary(p, CKT_E_TOFLOAT, a);
        else
            b = ckt_expr_unary(p, CKT_E_TOFLOAT, b);
    }
    return push(p, mk(CKT_E_SELECT, (ckt_expr_type)p->nodes[a].type, c, a, b));
}

ckt_expr_id ckt_expr_round(ckt_expr_pool *p, ckt_expr_id a, int dtype)
{
    if (!p || !p->nodes || p->failed) return CKT_EXPR_NONE;
    if (!valid(p, a))
        return fail(p, CKT_EINVAL, "cast: operand is not an expression of this kernel");
    switch ((ckt_dtype)dtype) {
    case CKT_F32: return ckt_expr_unary(p, CKT_E_TOFLOAT, a);
    case CKT_F16:
    case CKT_BF16: {
        ckt_expr_id f = ckt_expr_unary(p, CKT_E_TOFLOAT, a);
        if (valid(p, f) && p->nodes[f].op == CKT_E_FLOAT) {
            float v = p->nodes[f].f;
            return ckt_expr_float(p, dtype == CKT_F16 ? ckt_f16_to_f32(ckt_f32_to_f16(v))
                                                      : ckt_bf16_to_f32(ckt_f32_to_bf16(v)));
        }
        ckt_expr_node nd = mk(CKT_E_ROUND, CKT_T_F32, f, -1, -1);
        nd.i = dtype;
        return push(p, nd);
    }
    case CKT_I32:
    case CKT_I64:
    case CKT_I8:
    case CKT_U8: return ckt_expr_unary(p, CKT_E_TOFLOAT, ckt_expr_unary(p, CKT_E_TOINT, a));
    default: return fail(p, CKT_EINVAL, "cast: unsupported dtype");
    }
}

/* ---------------------------------------------------------------- evaluation */

static ckt_status ev(const ckt_expr_pool *p, ckt_expr_id e, const ckt_expr_env *env, double *out,
                     ckt_error *err);
static ckt_status evd(const ckt_expr_pool *p, ckt_expr_id e, const ckt_expr_env *env, double *out,
                      ckt_error *err);

static bool float_node(const ckt_expr_pool *p, ckt_expr_id e)
{
    return e >= 0 && valid(p, e) && p->nodes[e].type == CKT_T_F32;
}

/* An integer expression over integers, exactly as the generated code computes it: 64-bit
 * two's-complement arithmetic that wraps as Lua's integers do. (In doubles, as before, a launch
 * check saw (S * S * S) % 1024 differently from the kernel once S * S * S left 2^53 or int64, and
 * let a window past its buffer through.) Returns false where a float takes part (ev's business). */
static bool evi_applies(const ckt_expr_pool *p, const ckt_expr_node *n)
{
    switch ((ckt_expr_op)n->op) {
    case CKT_E_TOINT:
    case CKT_E_TOFLOAT:
    case CKT_E_ROUND:
    case CKT_E_FLOOR:
    case CKT_E_EXP:
    case CKT_E_EXP2:
    case CKT_E_LOG:
    case CKT_E_SQRT: return false;
    default:
        return n->type != CKT_T_F32 && !float_node(p, n->a) && !float_node(p, n->b) &&
               !float_node(p, n->c);
    }
}

static ckt_status evi(const ckt_expr_pool *p, ckt_expr_id e, const ckt_expr_env *env, int64_t *out,
                      ckt_error *err)
{
    if (!valid(p, e)) return ckt_fail(err, CKT_EINVAL, "expression eval: bad node %d", (int)e);
    const ckt_expr_node *n = &p->nodes[e];
    if (n->op == CKT_E_LOAD)
        return ckt_fail(err, CKT_EINVAL,
                        "expression eval: an element of '%s' is read on the device only",
                        p->vars[p->nodes[n->c].i].name);
    if (!evi_applies(p, n)) {
        double d;
        ckt_status s = evd(p, e, env, &d, err);
        if (!s) *out = to_int(d);
        return s;
    }
    int64_t a = 0, b = 0, c = 0;
    ckt_status s;
    if (n->a >= 0 && (s = evi(p, n->a, env, &a, err))) return s;
    if (n->b >= 0 && (s = evi(p, n->b, env, &b, err))) return s;
    if (n->c >= 0 && (s = evi(p, n->c, env, &c, err))) return s;
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch ((ckt_expr_op)n->op) {
    case CKT_E_INT: *out = n->i; break;
    case CKT_E_PARAM: *out = env->params ? env->params[n->i] : 0; break;
    case CKT_E_TID: *out = env->tid; break;
    case CKT_E_BID: *out = env->bid[n->i]; break;
    case CKT_E_NBLK: *out = env->nblk[n->i]; break;
    case CKT_E_VAR: *out = env->vars ? env->vars[n->i] : 0; break;
    case CKT_E_INPUT: *out = env->inputs ? to_int(env->inputs[n->i]) : 0; break;
    case CKT_E_ADD: *out = (int64_t)(ua + ub); break;
    case CKT_E_SUB: *out = (int64_t)(ua - ub); break;
    case CKT_E_MUL: *out = (int64_t)(ua * ub); break;
    case CKT_E_DIV:
        if (b == 0) return ckt_fail(err, CKT_EINVAL, "expression eval: division by zero");
        *out = b == -1 ? (int64_t)(0 - ua) : floor_div(a, b);
        break;
    case CKT_E_MOD:
        if (b == 0) return ckt_fail(err, CKT_EINVAL, "expression eval: remainder by zero");
        *out = b == -1 ? 0 : floor_mod(a, b);
        break;
    case CKT_E_MIN: *out = a < b ? a : b; break;
    case CKT_E_MAX: *out = a > b ? a : b; break;
    case CKT_E_AND: *out = a & b; break;
    case CKT_E_OR: *out = a | b; break;
    case CKT_E_XOR: *out = a ^ b; break;
    case CKT_E_SHL: *out = lua_shift(a, b); break;
    case CKT_E_SHR: *out = lua_shift(a, b == INT64_MIN ? 64 : -b); break;
    case CKT_E_LT: *out = a < b; break;
    case CKT_E_LE: *out = a <= b; break;
    case CKT_E_EQ: *out = a == b; break;
    case CKT_E_NE: *out = a != b; break;
    case CKT_E_LAND: *out = a != 0 && b != 0; break;
    case CKT_E_LOR: *out = a != 0 || b != 0; break;
    case CKT_E_NOT: *out = a == 0; break;
    case CKT_E_NEG: *out = (int64_t)(0 - ua); break;
    case CKT_E_SELECT: *out = a != 0 ? b : c; break;
    case CKT_E_ABS: *out = a < 0 ? (int64_t)(0 - ua) : a; break;
    default: return ckt_fail(err, CKT_EINVAL, "expression eval: unknown operator %d", n->op);
    }
    return CKT_OK;
}

/* integer nodes exactly (evi), the rest in doubles (evd) */
static ckt_status ev(const ckt_expr_pool *p, ckt_expr_id e, const ckt_expr_env *env, double *out,
                     ckt_error *err)
{
    if (!valid(p, e)) return ckt_fail(err, CKT_EINVAL, "expression eval: bad node %d", (int)e);
    if (!evi_applies(p, &p->nodes[e])) return evd(p, e, env, out, err);
    int64_t i;
    ckt_status s = evi(p, e, env, &i, err);
    if (!s) *out = (double)i;
    return s;
}

static ckt_status evd(const ckt_expr_pool *p, ckt_expr_id e, const ckt_expr_env *env, double *out,
                      ckt_error *err)
{
    const ckt_expr_node *n = &p->nodes[e];
    double a = 0, b = 0, c = 0;
    ckt_status s;
    if (n->op == CKT_E_LOAD)
        return ckt_fail(err, CKT_EINVAL,
                        "expression eval: an element of '%s' is read on the device only",
                        p->vars[p->nodes[n->c].i].name);
    if (n->a >= 0 && (s = ev(p, n->a, env, &a, err))) return s;
    if (n->b >= 0 && (s = ev(p, n->b, env, &b, err))) return s;
    if (n->c >= 0 && (s = ev(p, n->c, env, &c, err))) return s;
    bool fl = n->type == CKT_T_F32;
    int64_t ia = (int64_t)a, ib = (int64_t)b;
    switch ((ckt_expr_op)n->op) {
    case CKT_E_INT: *out = (double)n->i; break;
    case CKT_E_FLOAT: *out = n->f; break;
    case CKT_E_PARAM: *out = env->params ? (double)env->params[n->i] : 0; break;
    case CKT_E_TID: *out = (double)env->tid; break;
    case CKT_E_BID: *out = (double)env->bid[n->i]; break;
    case CKT_E_NBLK: *out = (double)env->nblk[n->i]; break;
    case CKT_E_VAR: *out = env->vars ? (double)env->vars[n->i] : 0; break;
    case CKT_E_INPUT: *out = env->inputs ? env->inputs[n->i] : 0; break;
    case CKT_E_ADD: *out = a + b; break;
    case CKT_E_SUB: *out = a - b; break;
    case CKT_E_MUL: *out = a * b; break;
    case CKT_E_DIV:
        if (fl)
            *out = a / b;
        else {
            if (ib == 0) return ckt_fail(err, CKT_EINVAL, "expression eval: division by zero");
            *out = ia == INT64_MIN && ib == -1 ? (double)ia : (double)floor_div(ia, ib);
        }
        break;
    case CKT_E_MOD:
        if (fl) {
            *out = fmodf((float)a, (float)b); /* float_mod adds Lua's sign adjustment around it */
            break;
        }
        if (ib == 0) return ckt_fail(err, CKT_EINVAL, "expression eval: remainder by zero");
        *out = ib == -1 ? 0 : (double)floor_mod(ia, ib);
        break;
    case CKT_E_MIN: *out = a < b ? a : b; break;
    case CKT_E_MAX: *out = a > b ? a : b; break;
    case CKT_E_AND: *out = (double)(ia & ib); break;
    case CKT_E_OR: *out = (double)(ia | ib); break;
    case CKT_E_XOR: *out = (double)(ia ^ ib); break;
    case CKT_E_SHL: *out = (double)lua_shift(ia, ib); break;
    case CKT_E_SHR: *out = (double)lua_shift(ia, ib == INT64_MIN ? 64 : -ib); break;
    case CKT_E_LT: *out = a < b; break;
    case CKT_E_LE: *out = a <= b; break;
    case CKT_E_EQ: *out = a == b; break;
    case CKT_E_NE: *out = a != b; break;
    case CKT_E_LAND: *out = (a != 0) && (b != 0); break;
    case CKT_E_LOR: *out = (a != 0) || (b != 0); break;
    case CKT_E_NOT: *out = a == 0; break;
    case CKT_E_NEG: *out = -a; break;
    case CKT_E_SELECT: *out = a != 0 ? b : c; break;
    case CKT_E_EXP: *out = exp(a); break;
    case CKT_E_EXP2: *out = exp2(a); break;
    case CKT_E_LOG: *out = log(a); break;
    case CKT_E_SQRT: *out = sqrt(a); break;
    case CKT_E_ABS: *out = fabs(a); break;
    case CKT_E_ROUND:
        *out = (n->i & 0xff) == CKT_F16 ? ckt_f16_to_f32(ckt_f64_to_f16(a))
                                        : ckt_bf16_to_f32(ckt_f64_to_bf16(a));
        break;
    case CKT_E_TOFLOAT: *out = a; break;
    case CKT_E_TOINT: *out = (double)to_int(a); break;
    case CKT_E_FLOOR: *out = floor(a); break;
    default: return ckt_fail(err, CKT_EINVAL, "expression eval: unknown operator %d", n->op);
    }
    if (fl && n->op != CKT_E_ROUND) *out = (float)*out;
    return CKT_OK;
}

ckt_status ckt_expr_eval_int(const ckt_expr_pool *p, ckt_expr_id e, const ckt_expr_env *env,
                             int64_t *out, ckt_error *err)
{
    if (!p || !env || !out) return ckt_fail(err, CKT_EINVAL, "expression eval: NULL argument");
    if (valid(p, e) && p->nodes[e].type == CKT_T_F32)
        return ckt_fail(err, CKT_EINVAL, "expression eval: a float expression is not an index");
    return evi(p, e, env, out, err);
}

/* ---------------------------------------------------------------- printing */

typedef struct sb {
    char *buf;
    size_t cap, len;
} sb;

static void put(sb *s, const char *fmt, ...) CKT_PRINTF(2, 3);
static void put(sb *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = s->len < s->cap ? s->cap - s->len : 0;
    int k = vsnprintf(s->buf ? s->buf + (s->len < s->cap ? s->len : s->cap) : NULL, room, fmt, ap);
    va_end(ap);
    if (k > 0) s->len += (size_t)k;
}

/* How each operation is spelled in C: one row per operation. INFIX rows print `a op b`
 * (parenthesized unless at the top of a statement or a call's argument), PREFIX rows `op a`, CALL
 * rows `fn(a[, b])`; `f32` is the spelling for a float-typed node where it differs (fminf for
 * ckt_imin), and ROUND picks between its two names by the dtype it rounds through (f16: `f32`). */
enum { FORM_LEAF, FORM_INFIX, FORM_PREFIX, FORM_CALL, FORM_SELECT };
typedef struct op_row {
    uint8_t form, arity;
    const char *c;   /* operator, prefix, or function name with its "(" */
    const char *f32; /* the spelling on f32 operands, when it differs */
} op_row;

static const op_row op_rows[] = {
    [CKT_E_ADD] = {FORM_INFIX, 2, "+", NULL},
    [CKT_E_SUB] = {FORM_INFIX, 2, "-", NULL},
    [CKT_E_MUL] = {FORM_INFIX, 2, "*", NULL},
    [CKT_E_DIV] = {FORM_INFIX, 2, "/", NULL},
    [CKT_E_MOD] = {FORM_INFIX, 2, "%", "fmodf("}, /* f32: C's fmod (float_mod adds Lua's sign) */
    [CKT_E_MIN] = {FORM_CALL, 2, "ckt_imin(", "fminf("},
    [CKT_E_MAX] = {FORM_CALL, 2, "ckt_imax(", "fmaxf("},
    [CKT_E_AND] = {FORM_INFIX, 2, "&", NULL},
    [CKT_E_OR] = {FORM_INFIX, 2, "|", NULL},
    [CKT_E_XOR] = {FORM_INFIX, 2, "^", NULL},
    [CKT_E_SHL] = {FORM_INFIX, 2, "<<", NULL},
    [CKT_E_SHR] = {FORM_INFIX, 2, ">>", NULL},
    [CKT_E_LT] = {FORM_INFIX, 2, "<", NULL},
    [CKT_E_LE] = {FORM_INFIX, 2, "<=", NULL},
    [CKT_E_EQ] = {FORM_INFIX, 2, "==", NULL},
    [CKT_E_NE] = {FORM_INFIX, 2, "!=", NULL},
    [CKT_E_LAND] = {FORM_INFIX, 2, "&&", NULL},
    [CKT_E_LOR] = {FORM_INFIX, 2, "||", NULL},
    [CKT_E_NOT] = {FORM_PREFIX, 1, "!", NULL},
    [CKT_E_NEG] = {FORM_PREFIX, 1, "-", NULL},
    [CKT_E_SELECT] = {FORM_SELECT, 3, "?", NULL},
    [CKT_E_EXP] = {FORM_CALL, 1, "ckt_expf(", NULL},
    [CKT_E_LOG] = {FORM_CALL, 1, "ckt_logf(", NULL},
    [CKT_E_SQRT] = {FORM_CALL, 1, "ckt_sqrtf(", NULL},
    [CKT_E_ABS] = {FORM_CALL, 1, "ckt_iabs(", "fabsf("},
    [CKT_E_ROUND] = {FORM_CALL, 1, "ckt_round_bf16(", "ckt_round_f16("},
    [CKT_E_TOFLOAT] = {FORM_PREFIX, 1, "(float)", NULL},
    [CKT_E_TOINT] = {FORM_CALL, 1, "ckt_toint(", NULL},
    [CKT_E_FLOOR] = {FORM_CALL, 1, "floorf(", NULL},
    [CKT_E_EXP2] = {FORM_CALL, 1, "ckt_exp2f(", NULL},
};

static const op_row *row_of(ckt_expr_op op)
{
    static const op_row leaf_row = {FORM_LEAF, 0, "?", NULL};
    return (size_t)op < sizeof op_rows / sizeof *op_rows && op_rows[op].form ? &op_rows[op]
                                                                             : &leaf_row;
}

/* the row's spelling for node n */
static const char *spelling(const op_row *r, const ckt_expr_node *n)
{
    bool alt = n->op == CKT_E_ROUND ? (n->i & 0xff) == CKT_F16 : n->type == CKT_T_F32;
    return alt && r->f32 ? r->f32 : r->c;
}

static void pr(const ckt_expr_pool *p, ckt_expr_id e, sb *s, const char *const *inputs, int top);

static void pr_leaf(const ckt_expr_pool *p, const ckt_expr_node *n, sb *s,
                    const char *const *inputs)
{
    switch ((ckt_expr_op)n->op) {
    case CKT_E_INT:
        if (n->type == CKT_T_BOOL)
            put(s, "%d", (int)n->i);
        else if (n->i > INT32_MAX || n->i < INT32_MIN)
            put(s, "%lldLL", (long long)n->i);
        else
            put(s, "%lld", (long long)n->i);
        return;
    case CKT_E_FLOAT:
        if (isnan(n->f))
            put(s, "CKT_NAN");
        else if (isinf(n->f))
            put(s, n->f > 0 ? "CKT_INF" : "(-CKT_INF)");
        else {
            char t[48];
            snprintf(t, sizeof t, "%.9g", (double)n->f);
            put(s, strpbrk(t, ".e") ? "%sf" : "%s.0f", t);
        }
        return;
    case CKT_E_PARAM: put(s, "%s", p->params[n->i].name); return;
    case CKT_E_VAR: put(s, "%s", p->vars[n->i].name); return;
    case CKT_E_TID: put(s, "tid"); return;
    case CKT_E_BID: put(s, "bid_%c", "xyz"[n->i]); return;
    case CKT_E_NBLK: put(s, "nblk_%c", "xyz"[n->i]); return;
    case CKT_E_INPUT:
        if (inputs && inputs[n->i])
            put(s, "%s", inputs[n->i]);
        else
            put(s, "x%d", (int)n->i);
        return;
    default: put(s, "/*?*/0"); return;
    }
}

/* Integer / and % (Lua's // and %). C truncates; Lua floors. They agree when neither side is
 * negative: index math keeps its plain operators, anything else goes through the prelude's
 * helpers. Returns false when the plain infix form applies. */
static bool pr_index_divmod(const ckt_expr_pool *p, const ckt_expr_node *n, sb *s,
                            const char *const *inputs)
{
    int64_t al, ah, bl, bh;
    ckt_expr_range(p, n->a, &al, &ah);
    ckt_expr_range(p, n->b, &bl, &bh);
    if (!(al >= 0 && bl >= 1)) {
        put(s, n->op == CKT_E_DIV ? "ckt_floordiv(" : "ckt_floormod(");
        pr(p, n->a, s, inputs, 1);
        put(s, ", ");
        pr(p, n->b, s, inputs, 1);
        put(s, ")");
        return true;
    }
    /* by a constant that is not a power of two, on a value that fits 32 bits: unsigned 32-bit
     * arithmetic (a multiply-high on GPUs, where 64-bit division is a long call) */
    int64_t c;
    if (ah <= INT32_MAX && ckt_expr_is_const(p, n->b, &c) && (c & (c - 1))) {
        put(s, "(ckt_i64)((ckt_u32)");
        pr(p, n->a, s, inputs, 0);
        put(s, " %s %lldu)", row_of((ckt_expr_op)n->op)->c, (long long)c);
        return true;
    }
    return false;
}

/* Integer +, -, * and shifts wrap around as Lua's integers do: where the ranges cannot rule out
 * leaving int64 (a value computed from map inputs), or a shift could push bits out of a signed
 * value, they are printed over unsigned 64 bits (defined in C, the same instructions); index math
 * whose ranges are known keeps the plain operators. A right shift is Lua's logical one. Returns
 * false when the plain form applies. */
/* Whether e is computed in 32 bits where it is printed: C does a plain operator over two int
 * operands (an i32 parameter, the thread id, a constant of int range) in int. Conservative (true
 * when unsure): it decides where a (ckt_i64) cast goes, which is harmless on a wide value. */
static bool narrow(const ckt_expr_pool *p, ckt_expr_id e)
{
    if (!valid(p, e)) return false;
    const ckt_expr_node *n = &p->nodes[e];
    int64_t l, h;
    switch ((ckt_expr_op)n->op) {
    case CKT_E_INT: return n->i >= INT32_MIN && n->i <= INT32_MAX;
    case CKT_E_PARAM: return p->params[n->i].lo >= INT32_MIN && p->params[n->i].hi <= INT32_MAX;
    case CKT_E_VAR: /* ckt_i64 locals */
    case CKT_E_LOAD:
    case CKT_E_BID:
    case CKT_E_NBLK:
    case CKT_E_MIN: /* ckt_imin / ckt_imax / ckt_toint return ckt_i64 */
    case CKT_E_MAX:
    case CKT_E_TOINT: return false;
    case CKT_E_ADD:
    case CKT_E_SUB:
    case CKT_E_MUL:
    case CKT_E_SHL: /* beyond int range they are printed wide (cast or wrapped) */
        ckt_expr_range(p, e, &l, &h);
        return l >= INT32_MIN && h <= INT32_MAX && narrow(p, n->a) && narrow(p, n->b);
    case CKT_E_SELECT: return narrow(p, n->b) || narrow(p, n->c);
    default: return (n->a < 0 || narrow(p, n->a)) && (n->b < 0 || narrow(p, n->b));
    }
}

/* a op b over two 32-bit operands whose result may leave int range: C would compute it in int
 * (overflowing at S_q * 64 for S_q >= 2^25 in the attention kernel's strides), so the left
 * operand is widened. Returns false when the plain form is exact. */
static bool pr_widened(const ckt_expr_pool *p, const ckt_expr_node *n, const op_row *r, sb *s,
                       const char *const *inputs, int64_t lo, int64_t hi)
{
    if ((lo >= INT32_MIN && hi <= INT32_MAX) || !narrow(p, n->a) || !narrow(p, n->b)) return false;
    put(s, "((ckt_i64)");
    pr(p, n->a, s, inputs, 0);
    put(s, " %s ", r->c);
    pr(p, n->b, s, inputs, 0);
    put(s, ")");
    return true;
}

static bool pr_wrapping(const ckt_expr_pool *p, const ckt_expr_node *n, const op_row *r, sb *s,
                        const char *const *inputs)
{
    int64_t al, ah, bl, bh, t;
    bool wrap;
    switch ((ckt_expr_op)n->op) {
    case CKT_E_ADD:
    case CKT_E_SUB:
    case CKT_E_MUL:
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        /* index math over sizes: only a provable overflow wraps (S * S * S); over map values
         * anything unknown does */
        if (!ckt_expr_has_input(p, n->a) && !ckt_expr_has_input(p, n->b))
            wrap = overflows((ckt_expr_op)n->op, al, ah, bl, bh);
        else
            wrap = !bounded(al, ah) || !bounded(bl, bh) ||
                   overflows((ckt_expr_op)n->op, al, ah, bl, bh);
        if (!wrap) {
            int64_t c[4] = {0, 0, 0, 0};
            if (n->op == CKT_E_ADD) c[0] = sat_add(al, bl), c[1] = sat_add(ah, bh);
            if (n->op == CKT_E_SUB)
                c[0] = sat_sub(al, bh, INT64_MIN), c[1] = sat_sub(ah, bl, INT64_MAX);
            if (n->op == CKT_E_MUL)
                c[0] = sat_mul(al, bl), c[1] = sat_mul(al, bh), c[2] = sat_mul(ah, bl),
                c[3] = sat_mul(ah, bh);
            int64_t lo =
                ckt_min64(ckt_min64(c[0], c[1]), n->op == CKT_E_MUL ? ckt_min64(c[2], c[3]) : c[0]);
            int64_t hi =
                ckt_max64(ckt_max64(c[0], c[1]), n->op == CKT_E_MUL ? ckt_max64(c[2], c[3]) : c[0]);
            return pr_widened(p, n, r, s, inputs, lo, hi);
        }
        (void)t;
        put(s, "(ckt_i64)((ckt_u64)");
        pr(p, n->a, s, inputs, 0);
        put(s, " %s (ckt_u64)", r->c);
        pr(p, n->b, s, inputs, 0);
        put(s, ")");
        return true;
    case CKT_E_SHL:
    case CKT_E_SHR: /* counts are in 0..63 by construction (var_shift, the folds) */
        ckt_expr_range(p, n->a, &al, &ah);
        ckt_expr_range(p, n->b, &bl, &bh);
        if (al >= 0 && (n->op == CKT_E_SHR || (bh < 63 && ah <= (INT64_MAX >> bh))))
            return n->op == CKT_E_SHL && bl >= 0 &&
                   pr_widened(p, n, r, s, inputs, al, bh < 63 ? ah << bh : INT64_MAX);
        put(s, "(ckt_i64)((ckt_u64)");
        pr(p, n->a, s, inputs, 0);
        put(s, " %s ", r->c);
        pr(p, n->b, s, inputs, 0);
        put(s, ")");
        return true;
    default: return false;
    }
}

static void pr(const ckt_expr_pool *p, ckt_expr_id e, sb *s, const char *const *inputs, int top)
{
    if (!valid(p, e)) {
        put(s, "/*?*/0");
        return;
    }
    const ckt_expr_node *n = &p->nodes[e];
    if (n->op == CKT_E_LOAD) { /* the prelude's clamped read */
        put(s, "ckt_ldidx(%s, ", p->vars[p->nodes[n->c].i].name);
        pr(p, n->a, s, inputs, 1);
        put(s, ", ");
        pr(p, n->b, s, inputs, 1);
        put(s, ")");
        return;
    }
    const op_row *r = row_of((ckt_expr_op)n->op);
    switch (r->form) {
    case FORM_LEAF: pr_leaf(p, n, s, inputs); return;
    case FORM_PREFIX:
        if (n->op == CKT_E_NEG && n->type == CKT_T_INDEX && ckt_expr_has_input(p, n->a)) {
            put(s, "(ckt_i64)(0ull - (ckt_u64)"); /* -INT64_MIN wraps, as in Lua */
            pr(p, n->a, s, inputs, 0);
            put(s, ")");
            return;
        }
        put(s, "%s", spelling(r, n));
        pr(p, n->a, s, inputs, 0);
        return;
    case FORM_CALL:
        put(s, "%s", spelling(r, n));
        pr(p, n->a, s, inputs, 1);
        if (r->arity == 2) {
            put(s, ", ");
            pr(p, n->b, s, inputs, 1);
        }
        put(s, ")");
        return;
    case FORM_SELECT:
        if (!top) put(s, "(");
        pr(p, n->a, s, inputs, 0);
        put(s, " ? ");
        pr(p, n->b, s, inputs, 0);
        put(s, " : ");
        pr(p, n->c, s, inputs, 0);
        if (!top) put(s, ")");
        return;
    default: /* FORM_INFIX; a - (b + c) keeps its parentheses, a + b + c reads without */
        if ((n->op == CKT_E_DIV || n->op == CKT_E_MOD) && n->type == CKT_T_INDEX &&
            pr_index_divmod(p, n, s, inputs))
            return;
        if (n->type == CKT_T_F32 && r->f32) { /* an operator that is a function on floats */
            put(s, "%s", r->f32);
            pr(p, n->a, s, inputs, 1);
            put(s, ", ");
            pr(p, n->b, s, inputs, 1);
            put(s, ")");
            return;
        }
        if (n->type == CKT_T_INDEX && pr_wrapping(p, n, r, s, inputs)) return;
        if (!top) put(s, "(");
        pr(p, n->a, s, inputs, 0);
        put(s, " %s ", spelling(r, n));
        pr(p, n->b, s, inputs, 0);
        if (!top) put(s, ")");
        return;
    }
}

/* an index + or - that pr_wrapping prints as it stands (no wrap, no widening) */
static bool prints_plain(const ckt_expr_pool *p, ckt_expr_id e)
{
    const ckt_expr_node *n = &p->nodes[e];
    int64_t al, ah, bl, bh, l, h;
    ckt_expr_range(p, n->a, &al, &ah);
    ckt_expr_range(p, n->b, &bl, &bh);
    if (overflows((ckt_expr_op)n->op, al, ah, bl, bh)) return false;
    ckt_expr_range(p, e, &l, &h);
    return (l >= INT32_MIN && h <= INT32_MAX) || !narrow(p, n->a) || !narrow(p, n->b);
}

/* Whether node e, printed bare, binds at least as tightly as C's binary + (a term of a flattened
 * chain then needs no parentheses): leaves, calls, prefix operators, *, / and %, and + and -
 * themselves. Shifts, bitwise and comparison operators bind more loosely: a swizzled offset
 * `x ^ s` plus a stage base must print as `(x ^ s) + base`, since `x ^ s + base` is
 * `x ^ (s + base)` in C (which differs wherever the base has bits the offset has: stages of 192
 * rows). */
static bool binds_as_term(const ckt_expr_pool *p, ckt_expr_id e)
{
    if (!valid(p, e)) return true;
    const op_row *r = row_of((ckt_expr_op)p->nodes[e].op);
    if (r->form != FORM_INFIX) return r->form != FORM_SELECT;
    switch ((ckt_expr_op)p->nodes[e].op) {
    case CKT_E_ADD:
    case CKT_E_SUB:
    case CKT_E_MUL:
    case CKT_E_DIV:
    case CKT_E_MOD: return true;
    default: return false;
    }
}

int ckt_expr_print(const ckt_expr_pool *p, ckt_expr_id e, char *buf, size_t cap,
                   const char *const *input_names)
{
    sb s = {buf, cap, 0};
    if (buf && cap) buf[0] = 0;
    /* flatten a top-level chain of + and - without parentheses */
    if (valid(p, e) && (p->nodes[e].op == CKT_E_ADD || p->nodes[e].op == CKT_E_SUB) &&
        p->nodes[e].type == CKT_T_INDEX && !ckt_expr_has_input(p, e) && prints_plain(p, e)) {
        ckt_expr_id chain[NTERMS * 2];
        int ops[NTERMS * 2], k = 0;
        ckt_expr_id cur = e;
        while (k < NTERMS * 2 - 1 &&
               (p->nodes[cur].op == CKT_E_ADD || p->nodes[cur].op == CKT_E_SUB) &&
               p->nodes[cur].type == CKT_T_INDEX && prints_plain(p, cur)) {
            chain[k] = p->nodes[cur].b;
            ops[k++] = p->nodes[cur].op;
            cur = p->nodes[cur].a;
        }
        pr(p, cur, &s, input_names, binds_as_term(p, cur));
        for (int i = k - 1; i >= 0; i--) {
            put(&s, " %s ", ops[i] == CKT_E_ADD ? "+" : "-");
            pr(p, chain[i], &s, input_names, ops[i] == CKT_E_ADD && binds_as_term(p, chain[i]));
        }
    } else {
        pr(p, e, &s, input_names, 1);
    }
    if (buf && cap) buf[s.len < cap ? s.len : cap - 1] = 0;
    return (int)s.len;
}
