/* The CPU target's launch struct is one ABI between the CPU runtime (ckt_cpu_launch of ckt/jit.h,
 * which it fills) and the generated kernels (which read it through the C prelude): the build
 * splices jit.h's definition into the prelude. A generated kernel compiled on the cpu target
 * reports the struct's size, alignment and member offsets as its compiler sees them, and what it
 * reads of each member at a launch; both must match this file's view of jit.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"
#include "ckt/emit.h"
#include "ckt/jit.h"
#include "ckt/runtime.h"

/* Appended to a generated kernel's source (its prelude declares ckt_cpu_launch): out[0..8] the
 * layout, then per block (x fastest) its block ids, the grid and block sizes and whether the LDS
 * buffer, the fault word and the (clear) stop flag arrived. */
static const char *const abi_kernel =
    "\n#include <stddef.h>\n"
    "void abi(void *const *args, const ckt_cpu_launch *launch)\n"
    "{\n"
    "    long long *out = *(long long *const *)args[0];\n"
    "    out[0] = (long long)sizeof(ckt_cpu_launch);\n"
    "    out[1] = (long long)_Alignof(ckt_cpu_launch);\n"
    "    out[2] = (long long)offsetof(ckt_cpu_launch, grid);\n"
    "    out[3] = (long long)offsetof(ckt_cpu_launch, block);\n"
    "    out[4] = (long long)offsetof(ckt_cpu_launch, block_id);\n"
    "    out[5] = (long long)offsetof(ckt_cpu_launch, lds);\n"
    "    out[6] = (long long)offsetof(ckt_cpu_launch, fault);\n"
    "    out[7] = (long long)sizeof launch->grid[0];\n"
    "    out[8] = (long long)offsetof(ckt_cpu_launch, stop);\n"
    "    const int64_t *g = launch->grid, *b = launch->block_id;\n"
    "    long long *o = out + 9 + 10 * (b[0] + g[0] * (b[1] + g[1] * b[2]));\n"
    "    for (int d = 0; d < 3; d++) o[d] = b[d], o[3 + d] = g[d];\n"
    "    o[6] = launch->block[0];\n"
    "    o[7] = launch->lds != NULL && (size_t)launch->lds % 64 == 0;\n"
    "    o[8] = launch->fault != NULL;\n"
    "    o[9] = launch->stop != NULL && !CKT_STOPPED();\n"
    "}\n"
    "const unsigned long long abi__lds_bytes = 64;\n"
    "const int abi__nparams = 1;\n"
    "const int abi__param_kinds[1] = {0};\n";

/* a tiny kernel's generated source for the cpu target: the C prelude and common.h, as every
 * generated kernel has them */
static char *generated_source(void)
{
    ckt_kernel *k = NULL;
    ckt_error err;
    char *src = NULL;
    assert_int_equal(ckt_kernel_create("tiny", 1, &k, &err), CKT_OK);
    if (ckt_kernel_finish(k, &err) || ckt_emit_named(k, "cpu", &src, &err)) fail_msg("%s", err.msg);
    ckt_kernel_destroy(k);
    return src;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    char *b = calloc(1, 1 << 20);
    size_t n = fread(b, 1, (1 << 20) - 1, f);
    fclose(f);
    b[n] = 0;
    return b;
}

/* the prelude holds jit.h's block, byte for byte, and no other definition of the struct */
static void prelude_holds_the_headers_definition(void **state)
{
    (void)state;
    char *jit = read_file(CKT_SOURCE_DIR "/engine/include/ckt/jit.h");
    char *from = strstr(jit, "#ifndef CKT_CPU_LAUNCH_DEFINED\n");
    assert_non_null(from);
    char *to = strstr(from, "#endif\n");
    assert_non_null(to);
    to[strlen("#endif\n")] = 0;
    char *src = generated_source();
    const char *at = strstr(src, from);
    if (!at) fail_msg("the generated C source lacks jit.h's ckt_cpu_launch block:\n%s", from);
    assert_null(strstr(at + strlen(from), "struct ckt_cpu_launch {"));
    assert_ptr_equal(strstr(src, "struct ckt_cpu_launch {"), strstr(at, "struct ckt_cpu_launch {"));
    free(src);
    free(jit);
}

static void kernel_and_runtime_agree_on_the_layout(void **state)
{
    (void)state;
    char *gen = generated_source();
    size_t n = strlen(gen) + strlen(abi_kernel) + 1;
    char *src = malloc(n);
    snprintf(src, n, "%s%s", gen, abi_kernel);
    free(gen);
    ckt_compile_request req = {"cpu", src, "abi", NULL, 0};
    ckt_binary *bin = NULL;
    ckt_device *dev = NULL;
    ckt_buffer *buf = NULL;
    ckt_error err;
    if (ckt_compile(NULL, &req, CKT_COMPILE_NO_CACHE, &bin, &err)) fail_msg("compile: %s", err.msg);
    if (ckt_device_open(NULL, "cpu", &dev, &err)) fail_msg("%s", err.msg);
    enum { GX = 3, GY = 2, GZ = 2, BX = 5, NOUT = 9 + 10 * GX * GY * GZ };
    long long out[NOUT];
    assert_int_equal(ckt_buffer_alloc(dev, sizeof out, &buf, &err), CKT_OK);
    assert_int_equal(ckt_buffer_memset(buf, 0, 0xff, sizeof out, &err), CKT_OK);
    void *p = ckt_buffer_ptr(buf);
    void *args[] = {&p};
    static const ckt_param sig[] = {{CKT_PARAM_PTR, "out"}};
    ckt_launch_params lp = {{GX, GY, GZ}, {BX, 1, 1}, 0, args, 1, sig, 1, 0};
    if (ckt_launch(dev, bin, &lp, NULL, &err)) fail_msg("launch: %s", err.msg);
    assert_int_equal(ckt_buffer_download(buf, 0, out, sizeof out, &err), CKT_OK);

    assert_int_equal(out[0], sizeof(ckt_cpu_launch));
    assert_int_equal(out[1], _Alignof(ckt_cpu_launch));
    assert_int_equal(out[2], offsetof(ckt_cpu_launch, grid));
    assert_int_equal(out[3], offsetof(ckt_cpu_launch, block));
    assert_int_equal(out[4], offsetof(ckt_cpu_launch, block_id));
    assert_int_equal(out[5], offsetof(ckt_cpu_launch, lds));
    assert_int_equal(out[6], offsetof(ckt_cpu_launch, fault));
    assert_int_equal(out[7], sizeof((ckt_cpu_launch *)0)->grid[0]);
    assert_int_equal(out[8], offsetof(ckt_cpu_launch, stop));
    for (int z = 0; z < GZ; z++)
        for (int y = 0; y < GY; y++)
            for (int x = 0; x < GX; x++) {
                const long long *o = out + 9 + 10 * (x + GX * (y + GY * z));
                const long long want[10] = {x, y, z, GX, GY, GZ, BX, 1, 1, 1};
                for (int i = 0; i < 10; i++)
                    if (o[i] != want[i])
                        fail_msg("block (%d, %d, %d): value %d is %lld, want %lld", x, y, z, i,
                                 o[i], want[i]);
            }
    ckt_buffer_free(buf);
    ckt_binary_free(bin);
    ckt_device_close(dev);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prelude_holds_the_headers_definition),
        cmocka_unit_test(kernel_and_runtime_agree_on_the_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
