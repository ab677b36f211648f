/* GPU runtime test (label gpu): on a machine with the backend's GPU, compile a kernel for the
 * device's own target, move data through every buffer operation, launch over a grid, check
 * every element, and check that bad launches are refused before anything runs.
 * Without the GPU it prints "SKIPPED: ..." and exits 77 (ctest SKIP_RETURN_CODE). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/runtime.h"

/* The positional form of a launch (grid, block, shared bytes, arguments, signature). */
static ckt_status launch_kernel(ckt_device *dev, const ckt_binary *bin, const int64_t grid[3], const int64_t block[3], int64_t dyn_shared_bytes,
                                void *const *args, int arg_count, const ckt_param *signature, int signature_count, double *ms, ckt_error *err)
{
    if (!grid || !block) return ckt_fail(err, CKT_EINVAL, "launch: grid or block is NULL");
    ckt_launch_params p = {{grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, dyn_shared_bytes, args, arg_count, signature, signature_count, 0};
    return ckt_launch(dev, bin, &p, ms, err);
}
#include "check.h"

#define SKIP 77

static const char *const src =
    "extern \"C\" __global__ void axpy(const float *x, float *y, int n, float a) {\n"
    "  __shared__ float stage[256];\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  stage[threadIdx.x] = i < n ? x[i] : 0.0f;\n"
    "  __syncthreads();\n"
    "  if (i < n) y[i] += a * stage[threadIdx.x];\n"
    "}\n";


int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: runtime_check <cuda|hip>\n"); return 2; }
    ckt_error err;
    ckt_device *dev;
    if (ckt_device_open(NULL, argv[1], &dev, &err)) {
        printf("SKIPPED: %s runtime test: %s\n", argv[1], err.msg);
        return SKIP;
    }
    printf("%s: %s\n", argv[1], ckt_device_name(dev));
    ckt_compile_request req = {ckt_device_target(dev), src, "axpy", NULL, 0};
    ckt_binary *bin;
    if (ckt_compile(NULL, &req, CKT_COMPILE_NO_CACHE, &bin, &err)) {
        fprintf(stderr, "FAIL: compile for %s: %s\n", ckt_device_target(dev), err.msg);
        return 1;
    }
    const int n = 1000003; /* not a multiple of the block */
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *out = malloc(n * sizeof *out);
    for (int i = 0; i < n; i++) x[i] = (float)(i % 97) * 0.25f + 1, y[i] = (float)(i % 13) - 6.5f;
    ckt_buffer *dx, *dy, *dtmp;
    if (ckt_buffer_alloc(dev, n * sizeof(float), &dx, &err) || ckt_buffer_alloc(dev, n * sizeof(float), &dy, &err) ||
        ckt_buffer_alloc(dev, n * sizeof(float), &dtmp, &err)) {
        fprintf(stderr, "FAIL: alloc: %s\n", err.msg);
        return 1;
    }
    CHECK(!ckt_buffer_upload(dx, 0, x, n * sizeof(float), &err), "%s", err.msg);
    CHECK(!ckt_buffer_upload(dtmp, 0, y, n * sizeof(float), &err), "%s", err.msg);
    CHECK(!ckt_buffer_memset(dy, 0, 0xff, n * sizeof(float), &err), "%s", err.msg); /* poison */
    CHECK(!ckt_buffer_copy(dy, 0, dtmp, 0, n * sizeof(float), &err), "%s", err.msg); /* d2d overwrites it */
    void *px = ckt_buffer_ptr(dx), *py = ckt_buffer_ptr(dy);
    int nn = n;
    float a = 0.5f;
    void *args[] = {&px, &py, &nn, &a};
    ckt_param sig[] = {{CKT_PARAM_PTR, "x"}, {CKT_PARAM_PTR, "y"}, {CKT_PARAM_I32, "n"}, {CKT_PARAM_F32, "a"}};
    int64_t grid[3] = {(n + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
    double ms = -1;
    CHECK(!launch_kernel(dev, bin, grid, block, 0, args, 4, sig, 4, &ms, &err), "%s", err.msg);
    CHECK(ms > 0, "kernel time %g ms", ms);
    CHECK(!ckt_buffer_download(dy, 0, out, n * sizeof(float), &err), "%s", err.msg);
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (out[i] != y[i] + 0.5f * x[i]) bad++;
    CHECK(bad == 0, "%d of %d elements wrong", bad, n);
    printf("%s: axpy over %d elements in %.3f ms\n", argv[1], n, ms);
    /* refusals before anything runs */
    void *host = x;
    void *args_host[] = {&px, &host, &nn, &a};
    CHECK(launch_kernel(dev, bin, grid, block, 0, args_host, 4, sig, 4, NULL, &err) == CKT_EINVAL && strstr(err.msg, "not inside a live buffer"),
          "host pointer: %s", err.msg);
    CHECK(launch_kernel(dev, bin, grid, block, 0, args, 3, sig, 3, NULL, &err) == CKT_EINVAL, "3 of 4 arguments accepted");
    { /* the code object (AMDGPU metadata / cubin .nv.info) declares the sizes */
        ckt_param wide[] = {{CKT_PARAM_PTR, "x"}, {CKT_PARAM_PTR, "y"}, {CKT_PARAM_I64, "n"}, {CKT_PARAM_F32, "a"}};
        CHECK(launch_kernel(dev, bin, grid, block, 0, args, 4, wide, 4, NULL, &err) == CKT_EINVAL && strstr(err.msg, "bytes"),
              "an i64 for an int: %s", err.msg);
    }
    int64_t huge[3] = {1, 1, 1}, bigblock[3] = {2048, 1, 1};
    CHECK(launch_kernel(dev, bin, huge, bigblock, 0, args, 4, sig, 4, NULL, &err) == CKT_EINVAL, "block of 2048 accepted");
    ckt_buffer_free(dx);
    ckt_buffer_free(dy);
    ckt_buffer_free(dtmp);
    ckt_binary_free(bin);
    ckt_device_close(dev);
    free(x);
    free(y);
    free(out);
    if (failures) return 1;
    printf("PASS: %s runtime test\n", argv[1]);
    return 0;
}
