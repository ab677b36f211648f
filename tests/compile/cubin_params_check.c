/* Compile test (label compile, no GPU needed): the parameter sizes ckt_cubin_kernel_args reads
 * from the cubin NVRTC produces for one target (argv[1]: sm_80 or sm_90), the sizes the CUDA
 * runtime checks every launch against. Kernels:
 *   axpy  (ptr, ptr, int, float) with a barrier: CUDA 13 puts format-1/2 records (EIFMT_NVAL on
 *         sm_8x, EIATTR_NUM_BARRIERS) among the parameter records; an older reader stopped there
 *         and the launch check was skipped (tests/compile/runtime_check.c on an H100);
 *   big   a 20000-byte __grid_constant__ struct and a pointer: EIATTR_KPARAM_INFO_V2 records;
 *   none  no parameters.
 * Then the launch check itself refuses 3 of 4 arguments and an i64 for the int.
 * Exit 77 (ctest SKIP_RETURN_CODE) with "SKIPPED: ..." when NVRTC is absent. */
#include <stdio.h>
#include <string.h>

#include "ckt/jit.h"
#include "../../engine/src/runtime_internal.h" /* ckt_runtime_check_arg_sizes, the check a CUDA launch makes */
#include "check.h"

#define SKIP 77

static const char *const axpy =
    "extern \"C\" __global__ void axpy(const float *x, float *y, int n, float a) {\n"
    "  __shared__ float stage[256];\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  stage[threadIdx.x] = i < n ? x[i] : 0.0f;\n"
    "  __syncthreads();\n"
    "  if (i < n) y[i] += a * stage[threadIdx.x];\n"
    "}\n";
static const char *const big =
    "struct Big { int a[5000]; };\n"
    "extern \"C\" __global__ void big(const __grid_constant__ Big b, int *out) { out[threadIdx.x] = b.a[threadIdx.x]; }\n";
static const char *const none = "extern \"C\" __global__ void none() { }\n";


/* compile `src` for `target`; 0: compiled, 1: failed (counted), SKIP: no NVRTC */
static int params(const char *target, const char *src, const char *name, int64_t *sizes, int cap, int *count)
{
    ckt_compile_request req = {target, src, name, NULL, 0};
    ckt_binary *b;
    ckt_error err;
    ckt_status st = ckt_compile(NULL, &req, CKT_COMPILE_ONLY | CKT_COMPILE_NO_CACHE, &b, &err);
    if (st == CKT_ERUNTIME && strstr(err.msg, "not found")) {
        printf("SKIPPED: %s cubin parameter test: %s\n", target, err.msg);
        return SKIP;
    }
    if (st) {
        fprintf(stderr, "FAIL: compile of %s for %s: %s\n", name, target, err.msg);
        failures++;
        return 1;
    }
    size_t n;
    const uint8_t *code = ckt_binary_code(b, &n);
    *count = -1;
    st = ckt_cubin_kernel_args(code, n, name, sizes, cap, count, &err);
    CHECK(st == CKT_OK, "%s %s: %s", target, name, err.msg);
    printf("%s %s (%s): %d parameters:", target, name, ckt_binary_compiler(b), *count);
    for (int i = 0; i < *count; i++) printf(" %lld", (long long)sizes[i]);
    printf("\n");
    ckt_binary_free(b);
    return st == CKT_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 2 || strncmp(argv[1], "sm_", 3)) { fprintf(stderr, "usage: cubin_params_check <sm_80|sm_90|...>\n"); return 2; }
    const char *target = argv[1];
    int64_t sizes[64];
    int count;
    ckt_error err;
    int r = params(target, axpy, "axpy", sizes, 64, &count);
    if (r == SKIP) return SKIP;
    if (r == 0) {
        CHECK(count == 4, "axpy: %d parameters, want 4", count);
        int64_t want[4] = {8, 8, 4, 4};
        CHECK(count == 4 && !memcmp(sizes, want, sizeof want), "axpy: sizes (%lld, %lld, %lld, %lld), want (8, 8, 4, 4)", (long long)sizes[0],
              (long long)sizes[1], (long long)sizes[2], (long long)sizes[3]);
        /* the refusals the GPU test expects of a launch, made from these sizes */
        ckt_param sig[] = {{CKT_PARAM_PTR, "x"}, {CKT_PARAM_PTR, "y"}, {CKT_PARAM_I32, "n"}, {CKT_PARAM_F32, "a"}};
        ckt_param wide[] = {{CKT_PARAM_PTR, "x"}, {CKT_PARAM_PTR, "y"}, {CKT_PARAM_I64, "n"}, {CKT_PARAM_F32, "a"}};
        ckt_launch_params p = {{1, 1, 1}, {256, 1, 1}, 0, NULL, 4, sig, 4, 0};
        CHECK(ckt_runtime_check_arg_sizes("axpy", sizes, count, &p, &err) == CKT_OK, "the right arguments refused: %s", err.msg);
        p.arg_count = p.signature_count = 3;
        CHECK(ckt_runtime_check_arg_sizes("axpy", sizes, count, &p, &err) == CKT_EINVAL, "3 of 4 arguments accepted");
        p.arg_count = p.signature_count = 4;
        p.signature = wide;
        CHECK(ckt_runtime_check_arg_sizes("axpy", sizes, count, &p, &err) == CKT_EINVAL && strstr(err.msg, "bytes"), "an i64 for an int: %s", err.msg);
    }
    if (params(target, big, "big", sizes, 64, &count) == 0)
        CHECK(count == 2 && sizes[0] == 20000 && sizes[1] == 8, "big: %d parameters (%lld, %lld), want 2 (20000, 8)", count, (long long)sizes[0],
              (long long)sizes[1]);
    if (params(target, none, "none", sizes, 64, &count) == 0) CHECK(count == 0, "none: %d parameters, want 0", count);
    if (failures) { fprintf(stderr, "%d check(s) failed\n", failures); return 1; }
    printf("PASS: %s cubin parameter test\n", target);
    return 0;
}
