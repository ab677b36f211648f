/* The compile and runtime checks' one assertion: count a failure, say where and why, go on. */
#ifndef CKT_TESTS_COMPILE_CHECK_H
#define CKT_TESTS_COMPILE_CHECK_H
#include <stdio.h>

static int failures;
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            failures++;                                                    \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)
#endif
