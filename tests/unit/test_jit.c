/* JIT: request validation (every bad field named), the CPU compiler end to end, compile
 * errors carrying the log, and the AMDGPU code-object reader on a real gfx90a object
 * (values confirmed with llvm-readelf-14 --notes) and on thousands of damaged copies of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/jit.h"
#include "../../engine/src/runtime_internal.h" /* the launch check against declared argument sizes */

static void expect_refusal(const ckt_compile_request *req, ckt_binary **out, ckt_status want, const char *says)
{
    ckt_error err;
    ckt_status st = ckt_compile_ex(NULL, req, CKT_COMPILE_NO_CACHE, out, &err);
    if (st != want) fail_msg("status %d, want %d (%s)", st, want, err.msg);
    if (!strstr(err.msg, says)) fail_msg("'%s' does not say '%s'", err.msg, says);
}

static void requests_are_validated(void **state)
{
    (void)state;
    ckt_binary *b = NULL;
    const char *src = "int f(void) { return 1; }";
    const char *opts[] = {"-O1", NULL};
    ckt_compile_request ok = {"cpu", src, "f", NULL, 0};
    expect_refusal(NULL, &b, CKT_EINVAL, "request is NULL");
    expect_refusal(&ok, NULL, CKT_EINVAL, "out is NULL");
    ckt_compile_request r1 = {NULL, src, "f", NULL, 0};
    expect_refusal(&r1, &b, CKT_EINVAL, "target is empty");
    ckt_compile_request r2 = {"cpu", "", "f", NULL, 0};
    expect_refusal(&r2, &b, CKT_EINVAL, "source is empty");
    ckt_compile_request r3 = {"cpu", NULL, "f", NULL, 0};
    expect_refusal(&r3, &b, CKT_EINVAL, "source is empty");
    ckt_compile_request r4 = {"cpu", src, "", NULL, 0};
    expect_refusal(&r4, &b, CKT_EINVAL, "kernel_name is empty");
    ckt_compile_request r5 = {"cpu", src, "f; rm -rf /", NULL, 0};
    expect_refusal(&r5, &b, CKT_EINVAL, "is not a C identifier");
    ckt_compile_request r6 = {"cpu", src, "f", NULL, 2};
    expect_refusal(&r6, &b, CKT_EINVAL, "options is NULL with noptions 2");
    ckt_compile_request r7 = {"cpu", src, "f", opts, -1};
    expect_refusal(&r7, &b, CKT_EINVAL, "noptions -1");
    ckt_compile_request r8 = {"cpu", src, "f", opts, 2};
    expect_refusal(&r8, &b, CKT_EINVAL, "option 1 is NULL");
    ckt_compile_request r9 = {"vulkan", src, "f", NULL, 0};
    expect_refusal(&r9, &b, CKT_EUNSUPPORTED, "unknown target 'vulkan'");
    ckt_compile_request r10 = {"sm_75", src, "f", NULL, 0};
    expect_refusal(&r10, &b, CKT_EUNSUPPORTED, "sm_75");
    char longname[300];
    memset(longname, 'k', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    ckt_compile_request r11 = {"cpu", src, longname, NULL, 0};
    expect_refusal(&r11, &b, CKT_EINVAL, "longer than 127");
    ckt_compile_request r12 = {"gfx90a;reboot", src, "f", NULL, 0};
    ckt_error err;
    ckt_status st = ckt_compile_ex(NULL, &r12, CKT_COMPILE_NO_CACHE, &b, &err);
    assert_int_not_equal(st, CKT_OK); /* EINVAL with hipRTC, ERUNTIME without: never a compile */
}

static void cpu_compiles_and_reports(void **state)
{
    (void)state;
    const char *opts[] = {"-DVALUE=7"};
    ckt_compile_request req = {"cpu:gfx90a", "int f(void) { return VALUE; }", "f", opts, 1};
    ckt_binary *b;
    ckt_error err;
    assert_int_equal(ckt_compile_ex(NULL, &req, CKT_COMPILE_NO_CACHE | CKT_COMPILE_ONLY, &b, &err), CKT_OK);
    size_t n;
    const uint8_t *code = ckt_binary_code(b, &n);
    assert_true(n > 64);
    assert_memory_equal(code, "\x7f" "ELF", 4);
    assert_string_equal(ckt_binary_target(b), "cpu:gfx90a");
    assert_string_equal(ckt_binary_kernel_name(b), "f");
    assert_true(ckt_binary_compile_only(b));
    assert_false(ckt_binary_from_cache(b));
    assert_true(ckt_binary_compile_ms(b) > 0);
    assert_non_null(strstr(ckt_binary_compiler(b), "host C compiler"));
    assert_int_equal(ckt_binary_resources(b)->shared_bytes, 0);
    assert_int_equal(ckt_binary_resources(b)->vgprs, -1); /* unknown on this target */
    const char *dis = ckt_binary_disassembly(b);
    if (dis) assert_non_null(strstr(dis, "<f>:"));
    else assert_non_null(strstr(ckt_binary_disassembly_note(b), "objdump"));
    ckt_binary_free(b);
    ckt_binary_free(NULL);
    assert_null(ckt_binary_target(NULL));
    assert_null(ckt_binary_disassembly(NULL));
}

static void compile_errors_carry_the_log(void **state)
{
    (void)state;
    ckt_compile_request req = {"cpu", "int f(void) { return undefined_name; }", "f", NULL, 0};
    ckt_binary *b = NULL;
    ckt_error err;
    assert_int_equal(ckt_compile_ex(NULL, &req, CKT_COMPILE_NO_CACHE, &b, &err), CKT_ECOMPILE);
    assert_non_null(strstr(err.msg, "cpu compile failed for 'f'"));
    assert_non_null(strstr(err.msg, "undefined_name"));
    assert_null(b);
}

static uint8_t *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    uint8_t *buf = malloc(1 << 20);
    *n = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static void amdgpu_metadata_of_a_real_code_object(void **state)
{
    (void)state;
    size_t n;
    uint8_t *co = read_all(CKT_SOURCE_DIR "/tests/fuzz/corpus/code_object/gfx90a_kernel.co", &n);
    ckt_resources r;
    ckt_error err;
    assert_int_equal(ckt_code_object_resources(co, n, &r, &err), CKT_OK);
    /* llvm-readelf-14 --notes: .vgpr_count 3, .sgpr_count 6, .group_segment_fixed_size 256 */
    assert_int_equal(r.vgprs, 3);
    assert_int_equal(r.sgprs, 6);
    assert_int_equal(r.agprs, 0);
    assert_int_equal(r.shared_bytes, 256);
    assert_int_equal(r.vgpr_spills, 0);
    assert_int_equal(r.sgpr_spills, 0);
    assert_int_equal(r.scratch_bytes, 0);
    assert_int_equal(r.registers, -1);
    /* hostile copies: every truncation and thousands of random byte changes give a result or an
     * error with a message; never a crash or a read outside the buffer (the ASan build checks) */
    for (size_t len = 0; len < n; len += 7) {
        uint8_t *cut = malloc(len ? len : 1);
        memcpy(cut, co, len);
        err.msg[0] = 0;
        if (ckt_code_object_resources(cut, len, &r, &err) != CKT_OK) assert_true(err.msg[0] != 0);
        free(cut);
    }
    uint64_t s = 99;
    uint8_t *m = malloc(n);
    for (int trial = 0; trial < 4000; trial++) {
        memcpy(m, co, n);
        for (int k = 0; k < 1 + trial % 8; k++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            m[(s >> 20) % n] = (uint8_t)(s >> 56);
        }
        err.msg[0] = 0;
        if (ckt_code_object_resources(m, n, &r, &err) != CKT_OK) assert_true(err.msg[0] != 0);
    }
    free(m);
    assert_int_equal(ckt_code_object_resources(NULL, 10, &r, &err), CKT_EINVAL);
    assert_int_equal(ckt_code_object_resources(co, n, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_code_object_resources((const uint8_t *)"not an elf file at all, just words and more words to pass 64 bytes", 66, &r, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "not a little-endian ELF64"));
    free(co);
}

static void kernel_arguments_from_the_metadata(void **state)
{
    (void)state;
    size_t n;
    uint8_t *co = read_all(CKT_SOURCE_DIR "/tests/fuzz/corpus/code_object/gfx90a_kernel.co", &n);
    int64_t sizes[8];
    int count = -1;
    ckt_error err;
    assert_int_equal(ckt_code_object_kernel_args(co, n, "k", sizes, 8, &count, &err), CKT_OK);
    assert_int_equal(count, 1); /* llvm-readelf-14: one global_buffer of 8 bytes */
    assert_int_equal(sizes[0], 8);
    assert_int_equal(ckt_code_object_kernel_args(co, n, "other", sizes, 8, &count, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "no kernel 'other'"));
    assert_int_equal(ckt_code_object_kernel_args(co, n, "k", sizes, 0, &count, &err), CKT_EINVAL); /* capacity */
    assert_int_equal(ckt_code_object_kernel_args(co, n, NULL, sizes, 8, &count, &err), CKT_EINVAL);
    /* damaged copies: a result or an error, never a crash */
    uint8_t *m = malloc(n);
    uint64_t s = 5;
    for (int trial = 0; trial < 3000; trial++) {
        memcpy(m, co, n);
        s = s * 6364136223846793005u + 1442695040888963407u;
        m[(s >> 20) % n] ^= (uint8_t)(1 + (s >> 56) % 255);
        count = -1;
        if (ckt_code_object_kernel_args(m, n, "k", sizes, 8, &count, &err) == CKT_OK) assert_true(count >= 0 && count <= 8);
    }
    free(m);
    free(co);
    /* a fresh hipRTC object with three explicit arguments (pointer, pointer, int) */
    ckt_compile_request req = {"gfx90a", "extern \"C\" __global__ void three(const float *a, float *b, int n) { int i = threadIdx.x; if (i < n) b[i] = a[i]; }",
                               "three", NULL, 0};
    ckt_binary *b;
    if (ckt_compile_ex(NULL, &req, CKT_COMPILE_NO_CACHE, &b, &err) == CKT_OK) {
        const uint8_t *code = ckt_binary_code(b, &n);
        assert_int_equal(ckt_code_object_kernel_args(code, n, "three", sizes, 8, &count, &err), CKT_OK);
        assert_int_equal(count, 3);
        assert_int_equal(sizes[0], 8);
        assert_int_equal(sizes[1], 8);
        assert_int_equal(sizes[2], 4);
        /* the check a HIP launch makes with them */
        ckt_param good[] = {{CKT_PARAM_PTR, "a"}, {CKT_PARAM_PTR, "b"}, {CKT_PARAM_I32, "n"}};
        ckt_param bad[] = {{CKT_PARAM_PTR, "a"}, {CKT_PARAM_PTR, "b"}, {CKT_PARAM_I64, "n"}};
        ckt_launch_params p = {{1, 1, 1}, {64, 1, 1}, 0, NULL, 3, good, 3};
        assert_int_equal(ckt_runtime_check_arg_sizes("three", sizes, count, &p, &err), CKT_OK);
        p.signature = bad;
        assert_int_equal(ckt_runtime_check_arg_sizes("three", sizes, count, &p, &err), CKT_EINVAL);
        assert_non_null(strstr(err.msg, "kernel 'three' takes 3 arguments of (8, 8, 4) bytes, the launch passes 3 of (8, 8, 8) bytes"));
        p.signature_count = 2;
        assert_int_equal(ckt_runtime_check_arg_sizes("three", sizes, count, &p, &err), CKT_EINVAL);
        ckt_binary_free(b);
    } else {
        printf("SKIPPED: hipRTC argument metadata check: %s\n", err.msg);
    }
}

static void cubin_parameters(void **state)
{
    (void)state;
    ckt_compile_request req = {"sm_90", "extern \"C\" __global__ void six(const float *x, float *y, int n, float a, long long q, char c)"
                                        " { int i = threadIdx.x; if (i < n) y[i] += a * x[i] + q + c; }", "six", NULL, 0};
    ckt_binary *b;
    ckt_error err;
    if (ckt_compile_ex(NULL, &req, CKT_COMPILE_NO_CACHE, &b, &err) != CKT_OK) {
        printf("SKIPPED: NVRTC parameter check: %s\n", err.msg);
        return;
    }
    size_t n;
    const uint8_t *code = ckt_binary_code(b, &n);
    int64_t sizes[8];
    int count = -1;
    assert_int_equal(ckt_cubin_kernel_args(code, n, "six", sizes, 8, &count, &err), CKT_OK);
    assert_int_equal(count, 6);
    int64_t want[6] = {8, 8, 4, 4, 8, 1};
    assert_memory_equal(sizes, want, sizeof want);
    assert_int_equal(ckt_cubin_kernel_args(code, n, "seven", sizes, 8, &count, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "no section .nv.info.seven"));
    assert_int_equal(ckt_cubin_kernel_args(code, n, "six", sizes, 3, &count, &err), CKT_EINVAL); /* capacity */
    uint8_t *m = malloc(n);
    uint64_t s = 17;
    for (int trial = 0; trial < 3000; trial++) {
        memcpy(m, code, n);
        s = s * 6364136223846793005u + 1442695040888963407u;
        m[(s >> 20) % n] ^= (uint8_t)(1 + (s >> 56) % 255);
        count = -1;
        if (ckt_cubin_kernel_args(m, n, "six", sizes, 8, &count, &err) == CKT_OK) assert_true(count >= 0 && count <= 8);
    }
    free(m);
    ckt_binary_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requests_are_validated), cmocka_unit_test(cpu_compiles_and_reports),
        cmocka_unit_test(compile_errors_carry_the_log), cmocka_unit_test(amdgpu_metadata_of_a_real_code_object),
        cmocka_unit_test(kernel_arguments_from_the_metadata), cmocka_unit_test(cubin_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
