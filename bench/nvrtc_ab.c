/* Cold NVRTC compiles of two saved sources, interleaved in one process (A, B, A, B, ...), each
 * with its own options: what a change to the generated source or to the compile options costs,
 * with the machine's drift shared by both sides. NVRTC is opened at run time (no CUDA headers
 * needed to build this); every compile is a fresh program, --no-cache keeps NVRTC 12.9+'s own
 * cache out of it.
 *
 *   cc -O2 -o nvrtc_ab bench/nvrtc_ab.c -ldl
 *   ./nvrtc_ab REPS A.cu "A's options" B.cu "B's options"
 *
 * Options are one string, split at spaces (e.g. "-arch=sm_90a --std=c++17 -default-device"). Prints
 * min and median (ms) of each side and B / A of the medians; exits 1 when a compile fails. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*create_fn)(void **, const char *, const char *, int, const char *const *,
                         const char *const *);
typedef int (*compile_fn)(void *, int, const char *const *);
typedef int (*destroy_fn)(void **);
typedef int (*logsize_fn)(void *, size_t *);
typedef int (*log_fn)(void *, char *);

static create_fn create;
static compile_fn compile;
static destroy_fn destroy;
static logsize_fn logsize;
static log_fn getlog;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

static int split(char *s, const char **argv, int cap)
{
    int n = 0;
    for (char *t = strtok(s, " "); t && n < cap - 1; t = strtok(NULL, " ")) argv[n++] = t;
    argv[n++] = "--no-cache";
    return n;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* one cold compile (ms), or -1 after printing the log */
static double once(const char *src, int nopt, const char *const *opt)
{
    void *p = NULL;
    if (create(&p, src, "ab.cu", 0, NULL, NULL)) return -1;
    double t0 = now_ms();
    int rc = compile(p, nopt, opt);
    double ms = now_ms() - t0;
    if (rc) {
        size_t n = 0;
        logsize(p, &n);
        char *lg = malloc(n + 1);
        if (lg && !getlog(p, lg)) fprintf(stderr, "%s\n", lg);
        free(lg);
        ms = -1;
    }
    destroy(&p);
    return ms;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s REPS A.cu \"A options\" B.cu \"B options\"\n", argv[0]);
        return 2;
    }
    const char *libs[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                          "/usr/local/cuda/lib64/libnvrtc.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof libs / sizeof *libs && !lib; i++) lib = dlopen(libs[i], RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "NVRTC not found\n");
        return 77;
    }
    *(void **)&create = dlsym(lib, "nvrtcCreateProgram");
    *(void **)&compile = dlsym(lib, "nvrtcCompileProgram");
    *(void **)&destroy = dlsym(lib, "nvrtcDestroyProgram");
    *(void **)&logsize = dlsym(lib, "nvrtcGetProgramLogSize");
    *(void **)&getlog = dlsym(lib, "nvrtcGetProgramLog");
    int reps = atoi(argv[1]);
    if (reps < 1 || reps > 1000 || !create || !compile || !destroy || !logsize || !getlog) return 2;
    char *src[2] = {slurp(argv[2]), slurp(argv[4])};
    if (!src[0] || !src[1]) {
        fprintf(stderr, "cannot read the sources\n");
        return 2;
    }
    const char *opt[2][64];
    int nopt[2] = {split(argv[3], opt[0], 64), split(argv[5], opt[1], 64)};
    double *t[2] = {calloc((size_t)reps, sizeof(double)), calloc((size_t)reps, sizeof(double))};
    if (once(src[0], nopt[0], opt[0]) < 0 || once(src[1], nopt[1], opt[1]) < 0) return 1; /* warm */
    for (int r = 0; r < reps; r++)
        for (int s = 0; s < 2; s++)
            if ((t[s][r] = once(src[s], nopt[s], opt[s])) < 0) return 1;
    for (int s = 0; s < 2; s++) qsort(t[s], (size_t)reps, sizeof(double), cmp);
    double ma = t[0][reps / 2], mb = t[1][reps / 2];
    printf("A %s: min %.1f median %.1f ms | B %s: min %.1f median %.1f ms | B/A %.3f (%d each)\n",
           argv[2], t[0][0], ma, argv[4], t[1][0], mb, mb / ma, reps);
    return 0;
}
