/* A C program that builds a kernel with ckt's C API, compiles it and launches it, without Lua.
 *
 *   Y = alpha * X + 1   over a row-major M x N matrix of f32
 *
 * Each block moves one 8 x 32 tile: the window of block (bm, bn) starts at (8*bm, 32*bn); the 64
 * threads of a block are laid out 8 x 8 (row-major) over the tile, each holding 4 values of its
 * row; the tensors are padded (accesses past M x N are masked), so M and N need not be multiples
 * of the tile. The kernel is compiled for the CPU target and launched on the CPU runtime, and the
 * result is checked element by element against a double-precision reference on random data,
 * with Y poisoned (NaN) before the launch. When a GPU compiler is installed, the same kernel is
 * also compiled for it (compile only: this program does not need a GPU).
 *
 * Build: cc embed_kernel.c $(pkg-config --cflags --libs ckt)   Run: ./embed_kernel [M N] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ckt/ckt.h>

enum { TM = 8, TN = 32, BLOCK = 64 };

#define CHECK(call)                                                                                \
    do {                                                                                           \
        if ((call) != CKT_OK) {                                                                    \
            fprintf(stderr, "embed_kernel: %s: %s\n", #call, err.msg);                             \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* The IR of Y = alpha * X + 1 over M x N; returns NULL (with err) on failure. */
static ckt_kernel *build(ckt_error *errp)
{
    ckt_error err;
    ckt_kernel *k = NULL;
    int x, y, m, n, alpha, gx, gy, wx, wy, in, out, di;
    CHECK(ckt_kernel_create("scale_add", BLOCK, &k, &err));
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    CHECK(ckt_kernel_param_ptr(k, "X", CKT_F32, true, 16, &x, &err));
    CHECK(ckt_kernel_param_ptr(k, "Y", CKT_F32, false, 16, &y, &err));
    CHECK(ckt_kernel_param_scalar(k, "M", CKT_PARAM_I32, false, 0, 0, 1, &m, &err));
    CHECK(ckt_kernel_param_scalar(k, "N", CKT_PARAM_I32, false, 0, 0, 1, &n, &err));
    CHECK(ckt_kernel_param_scalar(k, "alpha", CKT_PARAM_F32, false, 0, 0, 1, &alpha, &err));
    /* global tensors: shape (M, N), strides (N, 1) */
    ckt_expr_id M = ckt_kernel_param(k, m)->expr, N = ckt_kernel_param(k, n)->expr;
    ckt_expr_id shape[2] = {M, N}, stride[2] = {N, ckt_expr_int(ex, 1)};
    CHECK(ckt_kernel_global(k, x, CKT_F32, 2, shape, stride, true, &gx, &err));
    CHECK(ckt_kernel_global(k, y, CKT_F32, 2, shape, stride, true, &gy, &err));
    /* the tile of this block */
    const int64_t tile[2] = {TM, TN};
    ckt_expr_id origin[2] = {ckt_expr_mulc(ex, ckt_expr_bid(ex, 0), TM),
                             ckt_expr_mulc(ex, ckt_expr_bid(ex, 1), TN)};
    CHECK(ckt_expr_pool_status(ex, &err));
    CHECK(ckt_kernel_window_make(k, gx, 2, tile, origin, &wx, &err));
    CHECK(ckt_kernel_window_make(k, gy, 2, tile, origin, &wy, &err));
    /* threads 8 x 8 row-major: thread (r, c) = r * 8 + c, one value at a time along the rows */
    ckt_layout threads;
    ckt_tuple tshape, tstride;
    ckt_dist d;
    CHECK(ckt_tuple_flat(&tshape, 2, (const int64_t[]){8, 8}, &err));
    CHECK(ckt_tuple_flat(&tstride, 2, (const int64_t[]){8, 1}, &err));
    CHECK(ckt_layout_make(&threads, &tshape, &tstride, &err));
    CHECK(ckt_dist_from_thread_layout(&threads, 2, tile, 1, 1, NULL, &d, &err));
    CHECK(ckt_kernel_add_dist(k, &d, &di, &err));
    /* load, out[v] = alpha * in[v] + 1, store */
    CHECK(ckt_kernel_load(k, wx, di, -1, 0, 0.0f, &in, &err));
    ckt_expr_id f =
        ckt_expr_add(ex, ckt_expr_mul(ex, ckt_kernel_param(k, alpha)->expr, ckt_expr_input(ex, 0)),
                     ckt_expr_float(ex, 1.0f));
    CHECK(ckt_expr_pool_status(ex, &err));
    CHECK(ckt_kernel_map(k, 1, &in, f, CKT_F32, &out, &err));
    CHECK(ckt_kernel_store(k, wy, out, -1, 0, &err));
    CHECK(ckt_kernel_finish(k, &err));
    return k;
done:
    ckt_kernel_destroy(k);
    *errp = err;
    return NULL;
}

/* Compile for a GPU target when its compiler is installed (compile only). 0: compiled, or the
 * compiler library is not installed ("SKIPPED", the engine's "NVRTC not found (..." / "hipRTC not
 * found (..." message); 1: any other failure, a compile error of the generated code included. */
static int compile_for_gpu(const ckt_kernel *k, const char *target)
{
    ckt_error err;
    ckt_executable *exe = NULL;
    ckt_kernel_compile_options o = {CKT_COMPILE_ONLY | CKT_COMPILE_NO_CACHE, NULL, 0};
    ckt_status s = ckt_kernel_compile(NULL, k, target, &o, &exe, &err);
    if (s == CKT_ERUNTIME &&
        (strstr(err.msg, "NVRTC not found (") || strstr(err.msg, "hipRTC not found ("))) {
        printf("%s: SKIPPED, compiler not installed (%s)\n", target, err.msg);
        return 0;
    }
    if (s != CKT_OK) {
        fprintf(stderr, "embed_kernel: compile for %s: %s\n", target, err.msg);
        return 1;
    }
    size_t bytes;
    ckt_binary_code(ckt_exe_binary(exe), &bytes);
    printf("%s: compiled, %zu bytes of code (%s)\n", target, bytes,
           ckt_binary_compiler(ckt_exe_binary(exe)));
    ckt_exe_free(exe);
    return 0;
}

int main(int argc, char **argv)
{
    int64_t M = argc > 2 ? atoll(argv[1]) : 37, N = argc > 2 ? atoll(argv[2]) : 101;
    const float alpha = 1.75f;
    if (M < 1 || N < 1 || M * N > (1 << 24)) {
        fprintf(stderr, "embed_kernel: M and N must be positive, M*N at most 2^24\n");
        return 2;
    }
    int rc = 1;
    ckt_error err;
    ckt_kernel *k = build(&err);
    ckt_executable *exe = NULL;
    ckt_device *dev = NULL;
    ckt_buffer *bx = NULL, *by = NULL;
    size_t count = (size_t)(M * N), bytes = count * sizeof(float);
    float *hx = malloc(bytes), *hy = malloc(bytes);
    if (!k) {
        fprintf(stderr, "embed_kernel: build: %s\n", err.msg);
        goto done;
    }
    if (!hx || !hy) goto done;
    CHECK(ckt_kernel_compile(NULL, k, "cpu", NULL, &exe, &err));
    CHECK(ckt_device_open(NULL, "cpu", &dev, &err));
    /* random data in [-1, 1); the output poisoned with NaN */
    srand(14);
    for (size_t i = 0; i < count; i++) {
        hx[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
        hy[i] = NAN;
    }
    CHECK(ckt_buffer_alloc(dev, bytes, &bx, &err));
    CHECK(ckt_buffer_alloc(dev, bytes, &by, &err));
    CHECK(ckt_buffer_upload(bx, 0, hx, bytes, &err));
    CHECK(ckt_buffer_upload(by, 0, hy, bytes, &err));
    const int64_t grid[3] = {(M + TM - 1) / TM, (N + TN - 1) / TN, 1};
    const ckt_arg args[] = {ckt_arg_buffer(bx), ckt_arg_buffer(by), ckt_arg_i32((int32_t)M),
                            ckt_arg_i32((int32_t)N), ckt_arg_f32(alpha)};
    double ms;
    CHECK(ckt_exe_launch(exe, NULL, grid, args, 5, 0, &ms, &err));
    CHECK(ckt_buffer_download(by, 0, hy, bytes, &err));
    int64_t bad = 0;
    for (size_t i = 0; i < count; i++) {
        double want = (double)alpha * (double)hx[i] + 1.0;
        if (!(fabs((double)hy[i] - want) <= 1e-6 * (1.0 + fabs(want)))) {
            if (bad++ < 5)
                fprintf(stderr, "embed_kernel: Y[%zu][%zu] = %g, want %g\n", i / (size_t)N,
                        i % (size_t)N, (double)hy[i], want);
        }
    }
    if (bad) {
        fprintf(stderr, "embed_kernel: %lld of %zu elements wrong\n", (long long)bad, count);
        goto done;
    }
    printf("cpu: %lld x %lld, %zu elements match (%.3f ms)\n", (long long)M, (long long)N, count,
           ms);
    rc = compile_for_gpu(k, "gfx90a") | compile_for_gpu(k, "sm_90");
done:
    ckt_buffer_free(bx);
    ckt_buffer_free(by);
    ckt_device_close(dev);
    ckt_exe_free(exe);
    ckt_kernel_destroy(k);
    free(hx);
    free(hy);
    return rc;
}
