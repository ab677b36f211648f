/* Hierarchical integer tuples stored in pre-order (see ckt/layout.h). */
#include <stdio.h>
#include <string.h>

#include "checked.h"
#include "ckt/layout.h"
#include "tuple_internal.h"

int ckt_tuple_skip(const ckt_tuple *t, int i)
{
    int pending = 1;
    while (pending > 0 && i < t->n) {
        pending--;
        if (t->arity[i] != CKT_LEAF) pending += t->arity[i];
        i++;
    }
    return i;
}

/* A well-formed tuple: 1..CKT_TUPLE_NODES nodes forming exactly one pre-order tree
 * whose inner nodes have 1..CKT_MAX_RANK children and whose depth fits. */
ckt_status ckt_tuple_check(const ckt_tuple *t, ckt_error *err)
{
    if (!t) return ckt_fail(err, CKT_EINVAL, "tuple is NULL");
    if (t->n <= 0 || t->n > CKT_TUPLE_NODES)
        return ckt_fail(err, CKT_ECAPACITY, "tuple has %d nodes; 1 to %d are allowed", t->n,
                        CKT_TUPLE_NODES);
    for (int i = 0; i < t->n; i++) {
        int a = t->arity[i];
        if (a == CKT_LEAF) continue;
        if (a == 0) return ckt_fail(err, CKT_EINVAL, "tuple contains an empty tuple");
        if (a < 0 || a > CKT_MAX_RANK)
            return ckt_fail(err, CKT_ECAPACITY,
                            "tuple has a node of rank %d, beyond the capacity %d", a, CKT_MAX_RANK);
    }
    /* exactly one tree: the count of subtrees still to read reaches 0 at the last node, not before
     */
    int pending = 1;
    for (int i = 0; i < t->n; i++) {
        if (pending == 0)
            return ckt_fail(err, CKT_EINVAL,
                            "tuple is not one well-formed tree (node %d is left over)", i);
        pending += t->arity[i] == CKT_LEAF ? -1 : t->arity[i] - 1;
    }
    if (pending != 0)
        return ckt_fail(err, CKT_EINVAL, "tuple is not one well-formed tree (%d subtrees missing)",
                        pending);
    int depth = ckt_tuple_depth(t);
    if (depth > CKT_MAX_DEPTH)
        return ckt_fail(err, CKT_ECAPACITY, "tuple has depth %d, beyond the capacity %d", depth,
                        CKT_MAX_DEPTH);
    return CKT_OK;
}

ckt_tuple ckt_tuple_int(int64_t v)
{
    ckt_tuple t;
    memset(&t, 0, sizeof t);
    t.n = 1;
    t.arity[0] = CKT_LEAF;
    t.value[0] = v;
    return t;
}

ckt_status ckt_tuple_flat(ckt_tuple *out, int n, const int64_t *v, ckt_error *err)
{
    if (n < 0 || n > CKT_MAX_RANK || n + 1 > CKT_TUPLE_NODES)
        return ckt_fail(err, CKT_ECAPACITY, "tuple: rank %d is beyond the capacity %d", n,
                        CKT_MAX_RANK);
    ckt_tuple t;
    memset(&t, 0, sizeof t);
    t.n = (int16_t)(n + 1);
    t.arity[0] = (int8_t)n;
    for (int i = 0; i < n; i++) {
        t.arity[i + 1] = CKT_LEAF;
        t.value[i + 1] = v[i];
    }
    *out = t;
    return CKT_OK;
}

ckt_status ckt_tuple_make(ckt_tuple *out, int n, const ckt_tuple *children, ckt_error *err)
{
    if (n < 0 || n > CKT_MAX_RANK)
        return ckt_fail(err, CKT_ECAPACITY, "tuple: rank %d is beyond the capacity %d", n,
                        CKT_MAX_RANK);
    int total = 1;
    for (int i = 0; i < n; i++) total += children[i].n;
    if (total > CKT_TUPLE_NODES)
        return ckt_fail(err, CKT_ECAPACITY, "tuple: %d nodes are beyond the capacity %d", total,
                        CKT_TUPLE_NODES);
    ckt_tuple t;
    memset(&t, 0, sizeof t);
    t.arity[0] = (int8_t)n;
    int k = 1;
    for (int i = 0; i < n; i++) {
        memcpy(&t.arity[k], children[i].arity, (size_t)children[i].n);
        memcpy(&t.value[k], children[i].value, sizeof(int64_t) * (size_t)children[i].n);
        k += children[i].n;
    }
    t.n = (int16_t)k;
    if (ckt_tuple_depth(&t) > CKT_MAX_DEPTH)
        return ckt_fail(err, CKT_ECAPACITY, "tuple: depth %d is beyond the capacity %d",
                        ckt_tuple_depth(&t), CKT_MAX_DEPTH);
    *out = t;
    return CKT_OK;
}

bool ckt_tuple_is_int(const ckt_tuple *t) { return t->n == 1 && t->arity[0] == CKT_LEAF; }

int ckt_tuple_rank(const ckt_tuple *t) { return t->arity[0] == CKT_LEAF ? 1 : t->arity[0]; }

static int node_depth(const ckt_tuple *t, int i, int *next)
{
    if (t->arity[i] == CKT_LEAF) {
        *next = i + 1;
        return 0;
    }
    int k = i + 1, d = 0;
    for (int c = 0; c < t->arity[i]; c++) {
        int cd = node_depth(t, k, &k);
        if (cd > d) d = cd;
    }
    *next = k;
    return d + 1;
}

int ckt_tuple_depth(const ckt_tuple *t)
{
    int next;
    return t->n > 0 ? node_depth(t, 0, &next) : 0;
}

int ckt_tuple_leaves(const ckt_tuple *t)
{
    int k = 0;
    for (int i = 0; i < t->n; i++) k += t->arity[i] == CKT_LEAF;
    return k;
}

static ckt_tuple subtree(const ckt_tuple *t, int start)
{
    ckt_tuple r;
    memset(&r, 0, sizeof r);
    int end = ckt_tuple_skip(t, start);
    r.n = (int16_t)(end - start);
    memcpy(r.arity, &t->arity[start], (size_t)r.n);
    memcpy(r.value, &t->value[start], sizeof(int64_t) * (size_t)r.n);
    return r;
}

/* Node index of child i of the root. */
int ckt_tuple_child_node(const ckt_tuple *t, int i)
{
    int k = 1;
    for (int c = 0; c < i; c++) k = ckt_tuple_skip(t, k);
    return k;
}

ckt_status ckt_tuple_get(const ckt_tuple *t, int i, ckt_tuple *out, ckt_error *err)
{
    int r = ckt_tuple_rank(t);
    if (i < 0 || i >= r)
        return ckt_fail(err, CKT_EINVAL, "mode %d is out of range for rank %d", i, r);
    if (t->arity[0] == CKT_LEAF) {
        *out = *t;
        return CKT_OK;
    }
    *out = subtree(t, ckt_tuple_child_node(t, i));
    return CKT_OK;
}

int ckt_tuple_flatten(const ckt_tuple *t, int64_t *v, int cap)
{
    int k = 0;
    for (int i = 0; i < t->n; i++) {
        if (t->arity[i] != CKT_LEAF) continue;
        if (k >= cap) return -1;
        v[k++] = t->value[i];
    }
    return k;
}

ckt_status ckt_tuple_product(const ckt_tuple *t, int64_t *out, ckt_error *err)
{
    int64_t p = 1;
    for (int i = 0; i < t->n; i++)
        if (t->arity[i] == CKT_LEAF && ckt_mul_ovf(p, t->value[i], &p))
            return ckt_fail(err, CKT_EOVERFLOW, "the product of the tuple overflows 64 bits");
    *out = p;
    return CKT_OK;
}

bool ckt_tuple_equal(const ckt_tuple *a, const ckt_tuple *b)
{
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++) {
        if (a->arity[i] != b->arity[i]) return false;
        if (a->arity[i] == CKT_LEAF && a->value[i] != b->value[i]) return false;
    }
    return true;
}

bool ckt_tuple_congruent(const ckt_tuple *a, const ckt_tuple *b)
{
    return a->n == b->n && memcmp(a->arity, b->arity, (size_t)a->n) == 0;
}

/* snprintf-style appender that keeps counting past the end of the buffer. */
typedef struct {
    char *buf;
    size_t cap, len;
} sink;

static void put(sink *s, const char *str)
{
    size_t n = strlen(str);
    if (s->len < s->cap) {
        size_t room = s->cap - s->len - 1;
        memcpy(s->buf + s->len, str, n < room ? n : room);
        s->buf[s->len + (n < room ? n : room)] = '\0';
    }
    s->len += n;
}

static int write_node(sink *s, const ckt_tuple *t, int i)
{
    char num[32];
    if (t->arity[i] == CKT_LEAF) {
        snprintf(num, sizeof num, "%lld", (long long)t->value[i]);
        put(s, num);
        return i + 1;
    }
    put(s, "(");
    int k = i + 1;
    for (int c = 0; c < t->arity[i]; c++) {
        if (c) put(s, ",");
        k = write_node(s, t, k);
    }
    put(s, ")");
    return k;
}

int ckt_tuple_to_string(const ckt_tuple *t, char *buf, size_t cap)
{
    sink s = {buf, cap, 0};
    if (buf && cap) buf[0] = '\0';
    if (t->n > 0) write_node(&s, t, 0);
    return (int)s.len;
}
