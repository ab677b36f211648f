/* Benchmark (not a test): layout evaluation and algebra speed on one core.
 * Budgets (issue 3): >= 50 M evaluations/s from C, composition of the reference examples < 2 us.
 * Prints a table and writes bench/results/layout_algebra.json (bench/layout_algebra.lua adds the
 * Lua side). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckt/ckt.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static ckt_layout P(const char *s)
{
    ckt_layout l;
    ckt_error err;
    if (ckt_layout_parse(s, &l, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    return l;
}

/* Microseconds per call of f over at least 0.3 s. */
typedef ckt_status (*binop)(const ckt_layout *, const ckt_layout *, ckt_layout *, ckt_error *);
static ckt_status divide0(const ckt_layout *a, const ckt_layout *b, ckt_layout *r, ckt_error *err)
{
    return ckt_logical_divide(a, 0, b, r, err);
}
static double time_op(binop f, const ckt_layout *a, const ckt_layout *b, int64_t *sink)
{
    ckt_error err;
    ckt_layout r;
    long iters = 0;
    double t0 = now(), t1;
    do {
        for (int i = 0; i < 10000; i++) f(a, b, &r, &err);
        iters += 10000;
        t1 = now();
    } while (t1 - t0 < 0.3);
    if (f(a, b, &r, &err) != CKT_OK) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    *sink += ckt_layout_size(&r);
    return (t1 - t0) / (double)iters * 1e6;
}

int main(int argc, char **argv)
{
    const char *json = argc > 1 ? argv[1] : "bench/results/layout_algebra.json";
    ckt_error err;
    ckt_layout d2 = P("(4,(2,8)):(16,(1,2))");
    /* evaluation of a depth-2 layout, 1-D index and hierarchical coordinate */
    int64_t n = 0, sink = 0, size = ckt_layout_size(&d2);
    double t0 = now(), t1;
    do {
        for (int rep = 0; rep < 100000; rep++) {
            int64_t off;
            ckt_layout_eval(&d2, rep & (size - 1), &off, &err);
            sink += off;
        }
        n += 100000;
        t1 = now();
    } while (t1 - t0 < 1.0);
    double evals = (double)n / (t1 - t0);
    ckt_tuple crd;
    ckt_tuple_parse("(3,(1,7))", &crd, &err);
    n = 0;
    t0 = now();
    do {
        for (int rep = 0; rep < 100000; rep++) {
            int64_t off;
            crd.value[1] = rep & 3;
            ckt_layout_eval_coord(&d2, &crd, &off, &err);
            sink += off;
        }
        n += 100000;
        t1 = now();
    } while (t1 - t0 < 0.5);
    double coord_evals = (double)n / (t1 - t0);
    /* the algebra on the reference examples (CuTe's layout algebra documentation) */
    static const struct {
        const char *name, *a, *b;
        binop f;
    } ex[] = {
        {"composition", "(4,3):(3,1)", "6:2", ckt_composition},
        {"composition", "12:2", "(4,3):(3,1)", ckt_composition},
        {"composition", "(8,16):(1,8)", "(4,8):(1,4)", ckt_composition},
        {"composition", "((2,4),(3,5)):((1,30),(2,8))", "(4,6):(2,1)", ckt_composition},
        {"logical_divide", "32:1", "2:8", divide0},
        {"logical_divide", "(8,16):(1,8)", "(4,8):(1,4)", divide0},
        {"logical_product", "(2,5):(5,1)", "(3,4):(1,3)", ckt_logical_product},
        {"blocked_product", "(2,5):(5,1)", "(3,4):(1,3)", ckt_blocked_product},
        {"raked_product", "(2,2):(1,2)", "(3,3):(1,3)", ckt_raked_product},
    };
    enum { NEX = sizeof ex / sizeof *ex };
    double us[NEX];
    for (int k = 0; k < NEX; k++) {
        ckt_layout a = P(ex[k].a), b = P(ex[k].b);
        us[k] = time_op(ex[k].f, &a, &b, &sink);
    }
    printf("| measurement | value | budget |\n|---|---|---|\n");
    printf("| C evaluations/s of (4,(2,8)):(16,(1,2)) (1-D index) | %.1f M/s | >= 50 M/s |\n",
           evals / 1e6);
    printf("| C evaluations/s of the same (hierarchical coordinate) | %.1f M/s | - |\n",
           coord_evals / 1e6);
    for (int k = 0; k < NEX; k++)
        printf("| %s(%s, %s) | %.3f us | %s |\n", ex[k].name, ex[k].a, ex[k].b, us[k],
               strcmp(ex[k].name, "composition") ? "-" : "< 2 us");
    FILE *f = fopen(json, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", json);
        return 1;
    }
    fprintf(
        f, "{\n  \"what\": \"layout evaluation and algebra, one core, bench/layout_algebra.c\",\n");
    fprintf(f, "  \"c_evals_per_s\": %.0f,\n  \"c_coord_evals_per_s\": %.0f,\n  \"ops_us\": [\n",
            evals, coord_evals);
    for (int k = 0; k < NEX; k++)
        fprintf(f, "    {\"op\": \"%s\", \"a\": \"%s\", \"b\": \"%s\", \"us\": %.4f}%s\n",
                ex[k].name, ex[k].a, ex[k].b, us[k], k + 1 < NEX ? "," : "");
    fprintf(f, "  ],\n  \"sink\": %lld\n}\n", (long long)sink);
    fclose(f);
    return 0;
}
