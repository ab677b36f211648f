/* bench/launch.c — the C twin of bench/launch.lua's first part: the host cost of an
 * asynchronous launch through the engine's C API, beside a bare cuLaunchKernel of the same code
 * object in the same run (the driver's floor), and a graph replay against its launches.
 *
 *   bench_launch [target=sm_90] [count=10000] [json=bench/results/launch_c.json]
 *
 * The kernel: Y = X over n f32 (a 1-D copy built with the kernel IR, 256 elements a block).
 * Rows (microseconds a launch, wall clock of `count` launches back to back on one stream until
 * it is drained): ckt_exe_launch_async; ckt_launch_async (a compiled binary and raw arguments);
 * cuLaunchKernel (GPU targets); the enqueue alone for each; a timed ckt_exe_launch (waits); a
 * graph of 10 launches replayed, against 10 launches. The copy is checked at the end. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckt/ckt.h"

enum { TILE = 256, BLOCK = 64 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        if ((call) != CKT_OK) {                                                                    \
            fprintf(stderr, "bench_launch: %s: %s\n", #call, err.msg);                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Y[i] = X[i] for i < n: one window of TILE elements a block, 4 values a thread */
static ckt_kernel *build(void)
{
    ckt_error err;
    ckt_kernel *k;
    int x, y, n, gx, gy, wx, wy, v, di;
    CHECK(ckt_kernel_create("copy1d", BLOCK, &k, &err));
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    CHECK(ckt_kernel_param_ptr(k, "X", CKT_F32, true, 16, &x, &err));
    CHECK(ckt_kernel_param_ptr(k, "Y", CKT_F32, false, 16, &y, &err));
    CHECK(ckt_kernel_param_scalar(k, "n", CKT_PARAM_I32, false, 0, 0, 4, &n, &err));
    ckt_expr_id shape[1] = {ckt_kernel_param(k, n)->expr}, stride[1] = {ckt_expr_int(ex, 1)};
    CHECK(ckt_kernel_global(k, x, CKT_F32, 1, shape, stride, true, &gx, &err));
    CHECK(ckt_kernel_global(k, y, CKT_F32, 1, shape, stride, true, &gy, &err));
    const int64_t tile[1] = {TILE};
    ckt_expr_id origin[1] = {ckt_expr_mulc(ex, ckt_expr_bid(ex, 0), TILE)};
    CHECK(ckt_expr_pool_status(ex, &err));
    CHECK(ckt_kernel_window_make(k, gx, 1, tile, origin, &wx, &err));
    CHECK(ckt_kernel_window_make(k, gy, 1, tile, origin, &wy, &err));
    ckt_layout threads;
    ckt_tuple ts, td;
    CHECK(ckt_tuple_flat(&ts, 1, (const int64_t[]){BLOCK}, &err));
    CHECK(ckt_tuple_flat(&td, 1, (const int64_t[]){1}, &err));
    CHECK(ckt_layout_make(&threads, &ts, &td, &err));
    ckt_dist d;
    CHECK(ckt_dist_from_thread_layout(&threads, 1, tile, 0, 4, NULL, &d, &err));
    CHECK(ckt_kernel_add_dist(k, &d, &di, &err));
    CHECK(ckt_kernel_load(k, wx, di, -1, 0, 0.0f, &v, &err));
    CHECK(ckt_kernel_store(k, wy, v, -1, 0, &err));
    CHECK(ckt_kernel_finish(k, &err));
    return k;
}

/* The driver's own launch of the same cubin, in the context ckt made current. */
typedef struct {
    int (*module_load)(void **, const void *);
    int (*get_function)(void **, void *, const char *);
    int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                  void *, void **, void **);
    int (*stream_sync)(void *);
    int (*ctx_get)(void **);
} driver;

static int bind_driver(driver *d)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 0;
    *(void **)&d->module_load = dlsym(lib, "cuModuleLoadData");
    *(void **)&d->get_function = dlsym(lib, "cuModuleGetFunction");
    *(void **)&d->launch = dlsym(lib, "cuLaunchKernel");
    *(void **)&d->stream_sync = dlsym(lib, "cuStreamSynchronize");
    *(void **)&d->ctx_get = dlsym(lib, "cuCtxGetCurrent");
    return d->module_load && d->get_function && d->launch && d->stream_sync && d->ctx_get;
}

typedef struct {
    const char *name;
    double enqueue_us, drained_us;
} row;

int main(int argc, char **argv)
{
    const char *target = argc > 1 ? argv[1] : "sm_90";
    int count = argc > 2 ? atoi(argv[2]) : 10000;
    const char *json = argc > 3 ? argv[3] : "bench/results/launch_c.json";
    if (count < 10) count = 10;
    ckt_error err;
    ckt_target_record t;
    CHECK(ckt_target_parse(target, &t, &err));
    ckt_device *dev;
    if (ckt_device_open(NULL, target, &dev, &err)) {
        printf("SKIPPED: bench_launch: no device for %s: %s\n", target, err.msg);
        return 77;
    }
    ckt_kernel *k = build();
    ckt_executable *exe;
    CHECK(ckt_kernel_compile(NULL, k, target, NULL, &exe, &err));
    const int32_t n = 2 * 1024;
    float *host = malloc(sizeof(float) * n), *back = malloc(sizeof(float) * n);
    for (int i = 0; i < n; i++) host[i] = (float)((i * 7919) % 1000) / 7.0f + 1.0f;
    ckt_buffer *bx, *by;
    CHECK(ckt_buffer_alloc(dev, sizeof(float) * n, &bx, &err));
    CHECK(ckt_buffer_alloc(dev, sizeof(float) * n, &by, &err));
    CHECK(ckt_buffer_upload(bx, 0, host, sizeof(float) * n, &err));
    ckt_stream *s;
    CHECK(ckt_stream_create(dev, &s, &err));
    const int64_t grid[3] = {n / TILE, 1, 1};
    ckt_arg args[3] = {ckt_arg_buffer(bx), ckt_arg_buffer(by), ckt_arg_i32(n)};
    row rows[8];
    int nrows = 0;
    double t0, t1, t2;

    /* the executable's asynchronous launch */
    for (int i = 0; i < 100; i++) CHECK(ckt_exe_launch_async(exe, s, NULL, grid, args, 3, &err));
    CHECK(ckt_stream_synchronize(s, &err));
    t0 = now();
    for (int i = 0; i < count; i++) CHECK(ckt_exe_launch_async(exe, s, NULL, grid, args, 3, &err));
    t1 = now();
    CHECK(ckt_stream_synchronize(s, &err));
    t2 = now();
    rows[nrows++] = (row){"ckt_exe_launch_async", (t1 - t0) / count * 1e6, (t2 - t0) / count * 1e6};

    /* the raw launch of the binary */
    int nsig;
    const ckt_param *sig = ckt_exe_signature(exe, &nsig);
    void *px = ckt_buffer_ptr(bx), *py = ckt_buffer_ptr(by);
    int32_t nv = n;
    void *raw[3] = {&px, &py, &nv};
    ckt_launch_params p = {{grid[0], 1, 1}, {BLOCK, 1, 1}, 0, raw, 3, sig, nsig, 0};
    const ckt_binary *bin = ckt_exe_binary(exe);
    t0 = now();
    for (int i = 0; i < count; i++) CHECK(ckt_launch_async(dev, bin, &p, s, &err));
    t1 = now();
    CHECK(ckt_stream_synchronize(s, &err));
    t2 = now();
    rows[nrows++] =
        (row){"ckt_launch_async (binary)", (t1 - t0) / count * 1e6, (t2 - t0) / count * 1e6};

    /* the driver's floor: cuLaunchKernel of the same cubin on the same stream */
    driver d;
    if (t.runtime == CKT_BACKEND_CUDA && bind_driver(&d)) {
        size_t bytes;
        const uint8_t *code = ckt_binary_code(bin, &bytes);
        void *mod = NULL, *fn = NULL, *native = ckt_stream_native(s);
        if (d.module_load(&mod, code) || d.get_function(&fn, mod, ckt_binary_kernel_name(bin))) {
            fprintf(stderr, "bench_launch: the driver cannot load the cubin\n");
            return 1;
        }
        t0 = now();
        for (int i = 0; i < count; i++)
            if (d.launch(fn, (unsigned)grid[0], 1, 1, BLOCK, 1, 1, 0, native, raw, NULL)) {
                fprintf(stderr, "bench_launch: cuLaunchKernel failed\n");
                return 1;
            }
        t1 = now();
        d.stream_sync(native);
        t2 = now();
        rows[nrows++] =
            (row){"cuLaunchKernel (bare)", (t1 - t0) / count * 1e6, (t2 - t0) / count * 1e6};
    }

    /* a timed launch: waits for the kernel (the old default) */
    int timed_count = count / 10;
    double ms;
    t0 = now();
    for (int i = 0; i < timed_count; i++)
        CHECK(ckt_exe_launch_on(exe, s, NULL, grid, args, 3, 0, &ms, &err));
    t1 = now();
    rows[nrows++] = (row){"ckt_exe_launch_on, timed (waits)", (t1 - t0) / timed_count * 1e6,
                          (t1 - t0) / timed_count * 1e6};

    /* a graph of 10 launches against the 10 launches */
    ckt_stream *cs;
    ckt_graph *g;
    CHECK(ckt_stream_create(dev, &cs, &err));
    CHECK(ckt_stream_begin_capture(cs, &err));
    for (int i = 0; i < 10; i++) CHECK(ckt_exe_launch_async(exe, cs, NULL, grid, args, 3, &err));
    CHECK(ckt_stream_end_capture(cs, &g, &err));
    int reps = count / 10;
    t0 = now();
    for (int i = 0; i < reps; i++) CHECK(ckt_graph_launch(g, s, &err));
    t1 = now();
    CHECK(ckt_stream_synchronize(s, &err));
    t2 = now();
    rows[nrows++] =
        (row){"graph of 10 launches (a replay)", (t1 - t0) / reps * 1e6, (t2 - t0) / reps * 1e6};
    t0 = now();
    for (int i = 0; i < reps * 10; i++)
        CHECK(ckt_exe_launch_async(exe, s, NULL, grid, args, 3, &err));
    t1 = now();
    CHECK(ckt_stream_synchronize(s, &err));
    t2 = now();
    rows[nrows++] = (row){"10 launches", (t1 - t0) / reps * 1e6, (t2 - t0) / reps * 1e6};

    CHECK(ckt_buffer_download(by, 0, back, sizeof(float) * n, &err));
    int ok = !memcmp(host, back, sizeof(float) * n);
    printf("bench_launch on %s (%s), %d launches a row\n\n", ckt_device_name(dev), target, count);
    printf("| what | µs to enqueue | µs until drained |\n|---|---|---|\n");
    for (int i = 0; i < nrows; i++)
        printf("| %s | %.2f | %.2f |\n", rows[i].name, rows[i].enqueue_us, rows[i].drained_us);
    printf("| copy valid | %s | |\n", ok ? "yes" : "NO");
    FILE *f = fopen(json, "w");
    if (f) {
        fprintf(
            f, "{\"device\": \"%s\", \"target\": \"%s\", \"count\": %d, \"valid\": %s, \"rows\": [",
            ckt_device_name(dev), target, count, ok ? "true" : "false");
        for (int i = 0; i < nrows; i++)
            fprintf(f, "%s{\"what\": \"%s\", \"enqueue_us\": %.4f, \"drained_us\": %.4f}",
                    i ? ", " : "", rows[i].name, rows[i].enqueue_us, rows[i].drained_us);
        fprintf(f, "]}\n");
        fclose(f);
        printf("\nJSON: %s\n", json);
    }
    ckt_graph_free(g);
    CHECK(ckt_stream_destroy(cs, &err));
    CHECK(ckt_stream_destroy(s, &err));
    ckt_buffer_free(bx);
    ckt_buffer_free(by);
    ckt_exe_free(exe);
    ckt_kernel_destroy(k);
    ckt_device_close(dev);
    free(host);
    free(back);
    return ok ? 0 : 1;
}
