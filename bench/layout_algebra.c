/* Benchmark (not a test): layout evaluation and algebra speed on one core.
 * Budgets (issue 3): >= 50 M evaluations/s from C, composition of the reference examples < 2 us.
 * Prints a table and writes bench/results/layout_algebra_c.json. */
#include <stdio.h>
#include <stdlib.h>
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
    if (ckt_layout_parse(s, &l, &err)) { fprintf(stderr, "%s\n", err.msg); exit(1); }
    return l;
}

int main(int argc, char **argv)
{
    const char *json = argc > 1 ? argv[1] : "bench/results/layout_algebra_c.json";
    ckt_error err;
    ckt_layout d2 = P("(4,(2,8)):(16,(1,2))");
    /* evaluation of a depth-2 layout */
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
    /* composition and logical_divide of the reference examples */
    struct { const char *a, *b; } ex[] = {{"(4,3):(3,1)", "6:2"}, {"12:2", "(4,3):(3,1)"}, {"(8,16):(1,8)", "(4,8):(1,4)"}};
    double comp_us[3], div_us;
    for (int k = 0; k < 3; k++) {
        ckt_layout a = P(ex[k].a), b = P(ex[k].b), r;
        int iters = 0;
        t0 = now();
        do {
            for (int i = 0; i < 10000; i++) ckt_composition(&a, &b, &r, &err);
            iters += 10000;
            t1 = now();
        } while (t1 - t0 < 0.5);
        comp_us[k] = (t1 - t0) / iters * 1e6;
        sink += ckt_layout_size(&r);
    }
    {
        ckt_layout a = P("32:1"), b = P("2:8"), r;
        int iters = 0;
        t0 = now();
        do {
            for (int i = 0; i < 10000; i++) ckt_logical_divide(&a, 0, &b, &r, &err);
            iters += 10000;
            t1 = now();
        } while (t1 - t0 < 0.5);
        div_us = (t1 - t0) / iters * 1e6;
        sink += ckt_layout_size(&r);
    }
    printf("| measurement | value | budget |\n|---|---|---|\n");
    printf("| C evaluations/s of (4,(2,8)):(16,(1,2)) | %.1f M/s | >= 50 M/s |\n", evals / 1e6);
    for (int k = 0; k < 3; k++) printf("| composition %s o %s | %.3f us | < 2 us |\n", ex[k].a, ex[k].b, comp_us[k]);
    printf("| logical_divide 32:1 / 2:8 | %.3f us | - |\n", div_us);
    FILE *f = fopen(json, "w");
    if (f) {
        fprintf(f, "{\"c_evals_per_s\": %.0f, \"composition_us\": [%.4f, %.4f, %.4f], \"logical_divide_us\": %.4f, \"sink\": %lld}\n",
                evals, comp_us[0], comp_us[1], comp_us[2], div_us, (long long)sink);
        fclose(f);
    }
    return 0;
}
