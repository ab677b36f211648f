/* Parsing of the CuTe notation: tuples "(4,(2,8))" and layouts "(4,(2,8)):(16,(1,2))".
 * Static markers ("_4") are accepted and ignored. Errors name the position. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/layout.h"

typedef struct {
    const char *s, *p;
    ckt_tuple *t;
    ckt_error *err;
    int depth;
} parser;

static void skip_ws(parser *ps)
{
    while (*ps->p && isspace((unsigned char)*ps->p)) ps->p++;
}

static ckt_status perr(parser *ps, const char *what)
{
    return ckt_fail(ps->err, CKT_EINVAL, "parse: %s at position %d of \"%.60s\"", what,
                    (int)(ps->p - ps->s), ps->s);
}

static ckt_status add_node(parser *ps, int8_t arity, int64_t v, int *index)
{
    if (ps->t->n >= CKT_TUPLE_NODES)
        return ckt_fail(ps->err, CKT_ECAPACITY, "parse: more than %d nodes in \"%.60s\"",
                        CKT_TUPLE_NODES, ps->s);
    *index = ps->t->n;
    ps->t->arity[ps->t->n] = arity;
    ps->t->value[ps->t->n] = v;
    ps->t->n++;
    return CKT_OK;
}

static ckt_status parse_node(parser *ps)
{
    skip_ws(ps);
    int idx = 0;
    ckt_status st;
    if (*ps->p == '(') {
        if (++ps->depth > CKT_MAX_DEPTH)
            return ckt_fail(ps->err, CKT_ECAPACITY, "parse: nesting deeper than %d in \"%.60s\"",
                            CKT_MAX_DEPTH, ps->s);
        ps->p++;
        if ((st = add_node(ps, 0, 0, &idx))) return st;
        int children = 0;
        for (;;) {
            if ((st = parse_node(ps))) return st;
            if (++children > CKT_MAX_RANK)
                return ckt_fail(ps->err, CKT_ECAPACITY,
                                "parse: more than %d modes in one tuple of \"%.60s\"", CKT_MAX_RANK,
                                ps->s);
            skip_ws(ps);
            if (*ps->p == ',') {
                ps->p++;
                continue;
            }
            if (*ps->p == ')') {
                ps->p++;
                break;
            }
            return perr(ps, "expected ',' or ')'");
        }
        ps->t->arity[idx] = (int8_t)children;
        ps->depth--;
        return CKT_OK;
    }
    if (*ps->p == '_') ps->p++;
    if (!(*ps->p == '-' || isdigit((unsigned char)*ps->p)))
        return perr(ps, "expected an integer or '('");
    char *end;
    errno = 0;
    long long v = strtoll(ps->p, &end, 10);
    if (errno == ERANGE)
        return ckt_fail(ps->err, CKT_EOVERFLOW,
                        "parse: integer out of the 64-bit range at position %d of \"%.60s\"",
                        (int)(ps->p - ps->s), ps->s);
    if (end == ps->p || (*ps->p == '-' && end == ps->p + 1)) return perr(ps, "expected an integer");
    ps->p = end;
    return add_node(ps, CKT_LEAF, (int64_t)v, &idx);
}

static ckt_status parse_tuple_at(parser *ps, ckt_tuple *out)
{
    memset(out, 0, sizeof *out);
    ps->t = out;
    ps->depth = 0;
    return parse_node(ps);
}

ckt_status ckt_tuple_parse(const char *s, ckt_tuple *out, ckt_error *err)
{
    if (!s) return ckt_fail(err, CKT_EINVAL, "parse: string is NULL");
    parser ps = {s, s, NULL, err, 0};
    ckt_tuple t;
    ckt_status st = parse_tuple_at(&ps, &t);
    if (st) return st;
    skip_ws(&ps);
    if (*ps.p) return perr(&ps, "unexpected trailing text");
    *out = t;
    return CKT_OK;
}

ckt_status ckt_layout_parse(const char *s, ckt_layout *out, ckt_error *err)
{
    if (!s) return ckt_fail(err, CKT_EINVAL, "parse: string is NULL");
    parser ps = {s, s, NULL, err, 0};
    ckt_tuple shape, stride;
    ckt_status st = parse_tuple_at(&ps, &shape);
    if (st) return st;
    skip_ws(&ps);
    if (*ps.p != ':') return perr(&ps, "expected ':' between shape and stride");
    ps.p++;
    if ((st = parse_tuple_at(&ps, &stride))) return st;
    skip_ws(&ps);
    if (*ps.p) return perr(&ps, "unexpected trailing text");
    return ckt_layout_make(out, &shape, &stride, err);
}

int ckt_layout_to_string(const ckt_layout *l, char *buf, size_t cap)
{
    int n = ckt_tuple_to_string(&l->shape, buf, cap);
    size_t used = (size_t)n < cap ? (size_t)n : (cap ? cap - 1 : 0);
    if (used + 1 < cap) {
        buf[used] = ':';
        buf[used + 1] = '\0';
    }
    int m = ckt_tuple_to_string(&l->stride, buf && used + 1 < cap ? buf + used + 1 : NULL,
                                used + 1 < cap ? cap - used - 1 : 0);
    return n + 1 + m;
}
