/* GPU libraries loaded at run time (not installed): the library-list + symbol-table pattern of
 * the JIT compilers (jit_cuda.c, jit_hip.c) and the runtimes (runtime_cuda.c, runtime_hip.c). */
#ifndef CKT_DYNLIB_H
#define CKT_DYNLIB_H

#include <stdbool.h>
#include <stddef.h>

/* The HIP runtime library, in the order every user of it tries (hipRTC lives in it on ROCm 5). */
extern const char *const ckt_dynlib_hip_names[];

/* One entry point: *slot gets the first of name, alt (may be NULL) the library has. */
typedef struct ckt_dynsym {
    void **slot;
    const char *name, *alt;
    bool optional; /* NULL when absent instead of a failure */
} ckt_dynsym;

/* The first library of `names` (NULL-terminated) that loads and, when `needs` is given, has that
 * symbol; its name (one of names) into *opened. NULL when none. */
void *ckt_dynlib_open(const char *const *names, const char *needs, const char **opened);
/* Resolve syms[0..n) in lib: NULL when all required ones are there, else the first missing
 * name (then lib is closed and the slots are unusable). */
const char *ckt_dynlib_bind(void *lib, const ckt_dynsym *syms, size_t n);

#endif
