/* Runtimes: the CPU device runs hand-written kernels in the CPU ABI over grids (every block
 * once, LDS per worker, 3D block ids); buffers; every bad input answered with a clear error;
 * missing GPU runtimes are clear errors naming the library and the cpu target. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/runtime.h"

/* The positional form of a launch (grid, block, shared bytes, arguments, signature). */
static ckt_status launch_kernel(ckt_device *dev, const ckt_binary *bin, const int64_t grid[3],
                                const int64_t block[3], int64_t dyn_shared_bytes, void *const *args,
                                int arg_count, const ckt_param *signature, int signature_count,
                                double *ms, ckt_error *err)
{
    if (!grid || !block) return ckt_fail(err, CKT_EINVAL, "launch: grid or block is NULL");
    ckt_launch_params p = {{grid[0], grid[1], grid[2]},
                           {block[0], block[1], block[2]},
                           dyn_shared_bytes,
                           args,
                           arg_count,
                           signature,
                           signature_count,
                           0};
    return ckt_launch(dev, bin, &p, ms, err);
}

/* out[i] = a * in[reversed within the block] + block_id.y, staged through LDS like a GPU kernel */
static const char *const reverse_src =
    "#include <stdint.h>\n"
    "typedef struct ckt_cpu_launch { int64_t grid[3], block[3], block_id[3]; void *lds; } "
    "ckt_cpu_launch;\n"
    "const unsigned long long reverse__lds_bytes = 256 * sizeof(float);\n"
    "void reverse(void *const *args, const ckt_cpu_launch *l) {\n"
    "  const float *in = *(const float *const *)args[0]; float *out = *(float *const *)args[1];\n"
    "  int32_t n = *(const int32_t *)args[2]; float a = *(const float *)args[3];\n"
    "  float *tile = (float *)l->lds;\n"
    "  if (((uintptr_t)tile & 63) != 0) return; /* the ABI promises 64-byte alignment */\n"
    "  int64_t bs = l->block[0], base = (l->block_id[1] * l->grid[0] + l->block_id[0]) * bs;\n"
    "  for (int64_t t = 0; t < bs; t++) tile[t] = base + t < n ? in[base + t] : 0;\n"
    "  for (int64_t t = 0; t < bs; t++) if (base + t < n) out[base + t] = a * tile[bs - 1 - t] + "
    "(float)l->block_id[1];\n"
    "}\n";

/* counts how often each block runs: a GPU runs each block exactly once */
static const char *const count_src =
    "#include <stdint.h>\n"
    "typedef struct ckt_cpu_launch { int64_t grid[3], block[3], block_id[3]; void *lds; } "
    "ckt_cpu_launch;\n"
    "void count(void *const *args, const ckt_cpu_launch *l) {\n"
    "  int32_t *hits = *(int32_t *const *)args[0];\n"
    "  int64_t id = (l->block_id[2] * l->grid[1] + l->block_id[1]) * l->grid[0] + l->block_id[0];\n"
    "  __atomic_fetch_add(&hits[id], 1, __ATOMIC_RELAXED);\n"
    "  if (l->lds != 0) hits[0] = -1000000; /* no LDS declared: none given */\n"
    "}\n";

static ckt_binary *build(const char *src, const char *name, unsigned flags)
{
    ckt_compile_request req = {"cpu", src, name, NULL, 0};
    ckt_binary *b = NULL;
    ckt_error err;
    if (ckt_compile(NULL, &req, flags | CKT_COMPILE_NO_CACHE, &b, &err))
        fail_msg("compile: %s", err.msg);
    return b;
}

static ckt_device *cpu(void)
{
    ckt_device *d = NULL;
    ckt_error err;
    if (ckt_device_open(NULL, "cpu", &d, &err)) fail_msg("%s", err.msg);
    return d;
}

static const ckt_param reverse_sig[] = {
    {CKT_PARAM_PTR, "in"}, {CKT_PARAM_PTR, "out"}, {CKT_PARAM_I32, "n"}, {CKT_PARAM_F32, "a"}};

static void cpu_kernel_over_a_grid(void **state)
{
    (void)state;
    ckt_device *dev = cpu();
    ckt_binary *bin = build(reverse_src, "reverse", 0);
    uint64_t seed = 12345;
    for (int trial = 0; trial < 20; trial++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        int32_t n = 1 + (int32_t)(seed >> 40) % 5000;
        int64_t bs = 1 + (int64_t)(seed >> 20) % 256;
        int64_t blocks = (n + bs - 1) / bs, gy = 1 + (int64_t)(seed >> 10) % 3;
        int64_t gx = (blocks + gy - 1) / gy;
        float *in = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
        for (int i = 0; i < n; i++) in[i] = (float)((i * 7919) % 1000) + 0.5f;
        ckt_buffer *din, *dout;
        ckt_error err;
        assert_int_equal(ckt_buffer_alloc(dev, (size_t)n * 4, &din, &err), CKT_OK);
        assert_int_equal(ckt_buffer_alloc(dev, (size_t)n * 4, &dout, &err), CKT_OK);
        assert_int_equal(ckt_buffer_upload(din, 0, in, (size_t)n * 4, &err), CKT_OK);
        assert_int_equal(ckt_buffer_memset(dout, 0, 0xff, (size_t)n * 4, &err),
                         CKT_OK); /* poison: NaN */
        void *pin = ckt_buffer_ptr(din), *pout = ckt_buffer_ptr(dout);
        float a = 2.0f;
        void *args[] = {&pin, &pout, &n, &a};
        int64_t grid[3] = {gx, gy, 1}, block[3] = {bs, 1, 1};
        double ms = -1;
        if (launch_kernel(dev, bin, grid, block, 0, args, 4, reverse_sig, 4, &ms, &err))
            fail_msg("%s", err.msg);
        assert_true(ms >= 0);
        assert_int_equal(ckt_buffer_download(dout, 0, out, (size_t)n * 4, &err), CKT_OK);
        for (int i = 0; i < n; i++) {
            int64_t blk = i / bs, t = i % bs, base = blk * bs, src = base + bs - 1 - t;
            float want = 2.0f * (src < n ? in[src] : 0) + (float)(blk / gx);
            if (out[i] != want)
                fail_msg("n=%d bs=%lld: out[%d] = %g, want %g", n, (long long)bs, i, out[i], want);
        }
        ckt_buffer_free(din);
        ckt_buffer_free(dout);
        free(in);
        free(out);
    }
    ckt_binary_free(bin);
    ckt_device_close(dev);
}

static void every_block_runs_exactly_once(void **state)
{
    (void)state;
    ckt_device *dev = cpu();
    ckt_binary *bin = build(count_src, "count", 0);
    int64_t grid[3] = {37, 5, 3}, block[3] = {64, 2, 1}, nb = 37 * 5 * 3;
    ckt_buffer *hits;
    ckt_error err;
    assert_int_equal(ckt_buffer_alloc(dev, (size_t)nb * 4, &hits, &err), CKT_OK);
    for (int rep = 0; rep < 5; rep++) {
        assert_int_equal(ckt_buffer_memset(hits, 0, 0, (size_t)nb * 4, &err), CKT_OK);
        void *p = ckt_buffer_ptr(hits);
        void *args[] = {&p};
        ckt_param sig[] = {{CKT_PARAM_PTR, "hits"}};
        if (launch_kernel(dev, bin, grid, block, 0, args, 1, sig, 1, NULL, &err))
            fail_msg("%s", err.msg);
        int32_t h[37 * 5 * 3];
        assert_int_equal(ckt_buffer_download(hits, 0, h, sizeof h, &err), CKT_OK);
        for (int i = 0; i < nb; i++) assert_int_equal(h[i], 1);
    }
    ckt_buffer_free(hits);
    ckt_binary_free(bin);
    ckt_device_close(dev);
}

static void buffers_copy_and_bounds(void **state)
{
    (void)state;
    ckt_device *dev = cpu();
    ckt_error err;
    ckt_buffer *a, *b;
    assert_int_equal(ckt_buffer_alloc(dev, 100, &a, &err), CKT_OK);
    assert_int_equal(ckt_buffer_alloc(dev, 50, &b, &err), CKT_OK);
    assert_int_equal(ckt_buffer_size(a), 100);
    assert_ptr_equal(ckt_buffer_device(a), dev);
    assert_int_equal((uintptr_t)ckt_buffer_ptr(a) % 64, 0);
    unsigned char host[100], back[100];
    for (int i = 0; i < 100; i++) host[i] = (unsigned char)i;
    assert_int_equal(ckt_buffer_upload(a, 0, host, 100, &err), CKT_OK);
    assert_int_equal(ckt_buffer_copy(b, 10, a, 60, 40, &err), CKT_OK);
    assert_int_equal(ckt_buffer_download(b, 10, back, 40, &err), CKT_OK);
    assert_memory_equal(back, host + 60, 40);
    /* oversize and out-of-range copies */
    assert_int_equal(ckt_buffer_upload(a, 1, host, 100, &err), CKT_EINVAL);
    assert_non_null(
        strstr(err.msg, "100 bytes at offset 1 do not fit the destination buffer of 100 bytes"));
    assert_int_equal(ckt_buffer_download(b, 0, back, 51, &err), CKT_EINVAL);
    assert_int_equal(ckt_buffer_copy(b, 0, a, 0, 51, &err), CKT_EINVAL);
    assert_int_equal(ckt_buffer_copy(a, 0, b, 49, 2, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "source buffer of 50 bytes"));
    assert_int_equal(ckt_buffer_memset(a, (size_t)-1, 0, 2, &err),
                     CKT_EINVAL); /* offset + n wraps */
    assert_int_equal(ckt_buffer_upload(a, 0, NULL, 4, &err), CKT_EINVAL);
    assert_int_equal(ckt_buffer_download(NULL, 0, back, 4, &err), CKT_EINVAL);
    assert_int_equal(ckt_buffer_alloc(dev, 0, &a, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "size is 0 bytes"));
    assert_int_equal(ckt_buffer_alloc(dev, SIZE_MAX, &a, &err), CKT_EINVAL);
    assert_int_equal(ckt_buffer_alloc(NULL, 8, &a, &err), CKT_EINVAL);
    /* a device closed before its buffers stays alive until the last one is freed */
    ckt_device_close(dev);
    assert_int_equal(ckt_buffer_upload(b, 0, host, 50, &err), CKT_OK);
    ckt_buffer_free(b);
    ckt_buffer_free(a);
    ckt_buffer_free(NULL);
    ckt_device_close(NULL);
}

static void launch_bad_input(void **state)
{
    (void)state;
    ckt_device *dev = cpu();
    ckt_binary *bin = build(reverse_src, "reverse", 0);
    ckt_error err;
    ckt_buffer *buf;
    assert_int_equal(ckt_buffer_alloc(dev, 64, &buf, &err), CKT_OK);
    void *p = ckt_buffer_ptr(buf), *nul = NULL, *host = &err, *past = (char *)p + 64;
    int32_t n = 16;
    float a = 1;
    void *args[] = {&p, &p, &n, &a};
    int64_t g[3] = {1, 1, 1}, blk[3] = {16, 1, 1};
#define LAUNCH_FAILS(expect, ...)                                                                  \
    do {                                                                                           \
        assert_int_equal(launch_kernel(__VA_ARGS__, NULL, &err), CKT_EINVAL);                      \
        if (!strstr(err.msg, expect)) fail_msg("'%s' does not say '%s'", err.msg, expect);         \
    } while (0)
    LAUNCH_FAILS("takes 4 arguments, got 3", dev, bin, g, blk, 0, args, 3, reverse_sig, 4);
    LAUNCH_FAILS("device is NULL", NULL, bin, g, blk, 0, args, 4, reverse_sig, 4);
    LAUNCH_FAILS("binary is NULL", dev, NULL, g, blk, 0, args, 4, reverse_sig, 4);
    LAUNCH_FAILS("grid or block is NULL", dev, bin, NULL, blk, 0, args, 4, reverse_sig, 4);
    int64_t g0[3] = {0, 1, 1}, gneg[3] = {1, -3, 1}, big[3] = {2048, 1, 1}, many[3] = {64, 32, 1},
            gbig[3] = {1, 70000, 1};
    LAUNCH_FAILS("grid.x is 0", dev, bin, g0, blk, 0, args, 4, reverse_sig, 4);
    LAUNCH_FAILS("grid.y is -3", dev, bin, gneg, blk, 0, args, 4, reverse_sig, 4);
    LAUNCH_FAILS("grid.y = 70000 exceeds", dev, bin, gbig, blk, 0, args, 4, reverse_sig, 4);
    LAUNCH_FAILS("block.x = 2048 exceeds", dev, bin, g, big, 0, args, 4, reverse_sig, 4);
    LAUNCH_FAILS("block of 2048 threads exceeds", dev, bin, g, many, 0, args, 4, reverse_sig, 4);
    LAUNCH_FAILS("dyn_shared_bytes -1", dev, bin, g, blk, -1, args, 4, reverse_sig, 4);
    void *args_null_dev[] = {&nul, &p, &n, &a}, *args_host[] = {&p, &host, &n, &a},
         *args_past[] = {&past, &p, &n, &a};
    void *args_missing[] = {&p, &p, NULL, &a};
    LAUNCH_FAILS("argument 0 'in' is a NULL device pointer", dev, bin, g, blk, 0, args_null_dev, 4,
                 reverse_sig, 4);
    LAUNCH_FAILS("argument 1 'out'", dev, bin, g, blk, 0, args_host, 4, reverse_sig, 4);
    assert_non_null(strstr(err.msg, "not inside a live buffer"));
    LAUNCH_FAILS("not inside a live buffer", dev, bin, g, blk, 0, args_past, 4, reverse_sig, 4);
    LAUNCH_FAILS("argument 2 'n' (i32) is a NULL pointer to its value", dev, bin, g, blk, 0,
                 args_missing, 4, reverse_sig, 4);
    LAUNCH_FAILS("args is NULL", dev, bin, g, blk, 0, NULL, 4, reverse_sig, 4);
    ckt_param badkind[] = {{CKT_PARAM_PTR, "in"},
                           {CKT_PARAM_PTR, "out"},
                           {(ckt_param_kind)9, "n"},
                           {CKT_PARAM_F32, "a"}};
    LAUNCH_FAILS("parameter 2 'n' has an unknown kind", dev, bin, g, blk, 0, args, 4, badkind, 4);
    /* a tensor map is derived by an executable's launch, never a raw launch's caller value (an
     * enqueued launch copies 128 bytes of it) */
    badkind[2].kind = CKT_PARAM_TMAP;
    LAUNCH_FAILS("parameter 2 'n' is a tensor map, which only an executable's launch derives", dev,
                 bin, g, blk, 0, args, 4, badkind, 4);
    /* compile-only binaries and binaries for other devices are refused */
    ckt_binary *co = build(reverse_src, "reverse", CKT_COMPILE_ONLY);
    LAUNCH_FAILS("compiled compile-only", dev, co, g, blk, 0, args, 4, reverse_sig, 4);
    ckt_binary_free(co);
    /* a shared object without the kernel's symbol */
    ckt_compile_request req = {"cpu", "int other(void) { return 1; }", "missing_kernel", NULL, 0};
    ckt_binary *nosym;
    assert_int_equal(ckt_compile(NULL, &req, CKT_COMPILE_NO_CACHE, &nosym, &err), CKT_OK);
    LAUNCH_FAILS("no function 'missing_kernel'", dev, nosym, g, blk, 0, NULL, 0, NULL, 0);
    ckt_binary_free(nosym);
    /* the valid launch still works after all that */
    assert_int_equal(launch_kernel(dev, bin, g, blk, 0, args, 4, reverse_sig, 4, NULL, &err),
                     CKT_OK);
    ckt_buffer_free(buf);
    ckt_binary_free(bin);
    ckt_device_close(dev);
}

static void backends_and_missing_runtimes(void **state)
{
    (void)state;
    ckt_backend b;
    ckt_error err;
    assert_int_equal(ckt_backend_for("cpu:gfx90a", &b, &err), CKT_OK);
    assert_int_equal(b, CKT_BACKEND_CPU);
    assert_int_equal(ckt_backend_for("sm_90", &b, &err), CKT_OK);
    assert_int_equal(b, CKT_BACKEND_CUDA);
    assert_int_equal(ckt_backend_for("gfx942", &b, &err), CKT_OK);
    assert_int_equal(b, CKT_BACKEND_HIP);
    assert_int_equal(ckt_backend_for("vulkan", &b, &err), CKT_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "unknown backend 'vulkan'"));
    assert_int_equal(ckt_backend_for(NULL, &b, &err), CKT_EINVAL);
    assert_string_equal(ckt_backend_name(CKT_BACKEND_HIP), "hip");
    ckt_device *dev = NULL;
    /* On a machine without the GPU (this one, CI), the errors name the library and the cpu target;
     * with a GPU the device opens. Either way: no crash, a clear answer. */
    ckt_status st = ckt_device_open(NULL, "cuda", &dev, &err);
    if (st) {
        assert_int_equal(st, CKT_ERUNTIME);
        assert_non_null(strstr(err.msg, "cpu:sm_90"));
    } else {
        assert_non_null(strstr(ckt_device_target(dev), "sm_"));
        ckt_device_close(dev);
    }
    st = ckt_device_open(NULL, "hip", &dev, &err);
    if (st) {
        assert_int_equal(st, CKT_ERUNTIME);
        assert_non_null(strstr(err.msg, "cpu:gfx90a"));
    } else {
        assert_non_null(strstr(ckt_device_target(dev), "gfx"));
        ckt_device_close(dev);
    }
    assert_int_equal(ckt_device_open(NULL, "cpu", NULL, &err), CKT_EINVAL);
    /* a cpu device refuses GPU binaries (where hipRTC exists to make one) */
    dev = cpu();
    ckt_compile_request req = {
        "gfx90a", "extern \"C\" __global__ void k(int *p) { p[threadIdx.x] = 1; }", "k", NULL, 0};
    ckt_binary *gpu;
    if (ckt_compile(NULL, &req, CKT_COMPILE_NO_CACHE, &gpu, &err) == CKT_OK) {
        int64_t g[3] = {1, 1, 1};
        assert_int_equal(launch_kernel(dev, gpu, g, g, 0, NULL, 0, NULL, 0, NULL, &err),
                         CKT_EINVAL);
        assert_non_null(strstr(err.msg, "a binary for gfx90a cannot run on the cpu device"));
        ckt_binary_free(gpu);
    }
    ckt_device_close(dev);
}

/* A kernel declaring its parameters' kinds (K__nparams, K__param_kinds) is launched only with
 * that signature; declarations that are incomplete or name no ckt_param_kind are refused. */
static const char *const declared_fmt =
    "#include <stdint.h>\n"
    "typedef struct ckt_cpu_launch { int64_t grid[3], block[3], block_id[3]; void *lds; } "
    "ckt_cpu_launch;\n"
    "%s\n"
    "void fill(void *const *args, const ckt_cpu_launch *l) {\n"
    "  int32_t *y = *(int32_t *const *)args[0]; int32_t v = *(const int32_t *)args[1];\n"
    "  for (int64_t t = 0; t < l->block[0]; t++) y[t] = v;\n"
    "}\n";

static ckt_status launch_declared(const char *decl, const ckt_param *sig, int nsig, ckt_error *err)
{
    char src[1024];
    snprintf(src, sizeof src, declared_fmt, decl);
    ckt_device *dev = cpu();
    ckt_binary *bin = build(src, "fill", 0);
    ckt_buffer *y = NULL;
    assert_int_equal(ckt_buffer_alloc(dev, 64 * sizeof(int32_t), &y, err), CKT_OK);
    void *yp = ckt_buffer_ptr(y);
    int32_t v = 7;
    int64_t vi = 7;
    void *args[2] = {&yp, nsig > 1 && sig[1].kind == CKT_PARAM_I64 ? (void *)&vi : (void *)&v};
    const int64_t grid[3] = {1, 1, 1}, block[3] = {64, 1, 1};
    double ms;
    ckt_status st = launch_kernel(dev, bin, grid, block, 0, args, nsig, sig, nsig, &ms, err);
    if (st == CKT_OK) {
        int32_t back[64];
        assert_int_equal(ckt_buffer_download(y, 0, back, sizeof back, err), CKT_OK);
        for (int i = 0; i < 64; i++) assert_int_equal(back[i], 7);
    }
    ckt_buffer_free(y);
    ckt_binary_free(bin);
    ckt_device_close(dev);
    return st;
}

static void declared_parameter_kinds(void **state)
{
    (void)state;
    ckt_error err;
    const ckt_param good[] = {{CKT_PARAM_PTR, "y"}, {CKT_PARAM_I32, "v"}};
    const ckt_param wide[] = {{CKT_PARAM_PTR, "y"}, {CKT_PARAM_I64, "v"}};
    const char *ok = "const int fill__nparams = 2; const int fill__param_kinds[2] = {0, 1};";
    assert_int_equal(launch_declared(ok, good, 2, &err), CKT_OK);
    assert_int_equal(launch_declared(ok, wide, 2, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "the kernel takes (ptr,i32), the launch passes (ptr,i64)"));
    assert_int_equal(launch_declared(ok, good, 1, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "the launch passes (ptr)"));
    /* without a declaration the launch is not checked against one */
    assert_int_equal(launch_declared("", good, 2, &err), CKT_OK);
    assert_int_equal(launch_declared("const int fill__nparams = 2;", good, 2, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "without __param_kinds"));
    assert_int_equal(
        launch_declared("const int fill__nparams = -1; const int fill__param_kinds[1] = {-1};",
                        good, 2, &err),
        CKT_EINVAL);
    assert_non_null(strstr(err.msg, "outside [0, 256]"));
    assert_int_equal(
        launch_declared("const int fill__nparams = 2; const int fill__param_kinds[2] = {0, 9};",
                        good, 2, &err),
        CKT_EINVAL);
    assert_non_null(strstr(err.msg, "parameter 1 of kind 9, not a ckt_param_kind"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpu_kernel_over_a_grid),
        cmocka_unit_test(every_block_runs_exactly_once),
        cmocka_unit_test(buffers_copy_and_bounds),
        cmocka_unit_test(launch_bad_input),
        cmocka_unit_test(backends_and_missing_runtimes),
        cmocka_unit_test(declared_parameter_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
