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

#include "../../engine/src/jit_internal.h"     /* ckt_rtc_failure */
#include "../../engine/src/runtime_internal.h" /* the launch check against declared argument sizes */
#include "ckt/jit.h"

static void expect_refusal(const ckt_compile_request *req, ckt_binary **out, ckt_status want,
                           const char *says)
{
    ckt_error err;
    ckt_status st = ckt_compile(NULL, req, CKT_COMPILE_NO_CACHE, out, &err);
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
    ckt_status st = ckt_compile(NULL, &r12, CKT_COMPILE_NO_CACHE, &b, &err);
    assert_int_not_equal(st, CKT_OK); /* EINVAL with hipRTC, ERUNTIME without: never a compile */
}

static void cpu_compiles_and_reports(void **state)
{
    (void)state;
    const char *opts[] = {"-DVALUE=7"};
    ckt_compile_request req = {"cpu:gfx90a", "int f(void) { return VALUE; }", "f", opts, 1};
    ckt_binary *b;
    ckt_error err;
    assert_int_equal(ckt_compile(NULL, &req, CKT_COMPILE_NO_CACHE | CKT_COMPILE_ONLY, &b, &err),
                     CKT_OK);
    size_t n;
    const uint8_t *code = ckt_binary_code(b, &n);
    assert_true(n > 64);
    assert_memory_equal(code,
                        "\x7f"
                        "ELF",
                        4);
    assert_string_equal(ckt_binary_target(b), "cpu:gfx90a");
    assert_string_equal(ckt_binary_kernel_name(b), "f");
    assert_true(ckt_binary_compile_only(b));
    assert_false(ckt_binary_from_cache(b));
    assert_true(ckt_binary_compile_ms(b) > 0);
    assert_non_null(strstr(ckt_binary_compiler(b), "host C compiler"));
    assert_int_equal(ckt_binary_resources(b)->shared_bytes, 0);
    assert_int_equal(ckt_binary_resources(b)->vgprs, -1); /* unknown on this target */
    const char *dis = ckt_binary_disassembly(b);
    if (dis)
        assert_non_null(strstr(dis, "<f>:"));
    else
        assert_non_null(strstr(ckt_binary_disassembly_note(b), "objdump"));
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
    assert_int_equal(ckt_compile(NULL, &req, CKT_COMPILE_NO_CACHE, &b, &err), CKT_ECOMPILE);
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
    assert_int_equal(
        ckt_code_object_resources(
            (const uint8_t *)"not an elf file at all, just words and more words to pass 64 bytes",
            66, &r, &err),
        CKT_EINVAL);
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
    assert_int_equal(ckt_code_object_kernel_args(co, n, "other", sizes, 8, &count, &err),
                     CKT_EINVAL);
    assert_non_null(strstr(err.msg, "no kernel 'other'"));
    assert_int_equal(ckt_code_object_kernel_args(co, n, "k", sizes, 0, &count, &err),
                     CKT_EINVAL); /* capacity */
    assert_int_equal(ckt_code_object_kernel_args(co, n, NULL, sizes, 8, &count, &err), CKT_EINVAL);
    /* damaged copies: a result or an error, never a crash */
    uint8_t *m = malloc(n);
    uint64_t s = 5;
    for (int trial = 0; trial < 3000; trial++) {
        memcpy(m, co, n);
        s = s * 6364136223846793005u + 1442695040888963407u;
        m[(s >> 20) % n] ^= (uint8_t)(1 + (s >> 56) % 255);
        count = -1;
        if (ckt_code_object_kernel_args(m, n, "k", sizes, 8, &count, &err) == CKT_OK)
            assert_true(count >= 0 && count <= 8);
    }
    free(m);
    free(co);
    /* a fresh hipRTC object with three explicit arguments (pointer, pointer, int) */
    ckt_compile_request req = {"gfx90a",
                               "extern \"C\" __global__ void three(const float *a, float *b, int "
                               "n) { int i = threadIdx.x; if (i < n) b[i] = a[i]; }",
                               "three", NULL, 0};
    ckt_binary *b;
    if (ckt_compile(NULL, &req, CKT_COMPILE_NO_CACHE, &b, &err) == CKT_OK) {
        const uint8_t *code = ckt_binary_code(b, &n);
        assert_int_equal(ckt_code_object_kernel_args(code, n, "three", sizes, 8, &count, &err),
                         CKT_OK);
        assert_int_equal(count, 3);
        assert_int_equal(sizes[0], 8);
        assert_int_equal(sizes[1], 8);
        assert_int_equal(sizes[2], 4);
        /* the check a HIP launch makes with them */
        ckt_param good[] = {{CKT_PARAM_PTR, "a"}, {CKT_PARAM_PTR, "b"}, {CKT_PARAM_I32, "n"}};
        ckt_param bad[] = {{CKT_PARAM_PTR, "a"}, {CKT_PARAM_PTR, "b"}, {CKT_PARAM_I64, "n"}};
        ckt_launch_params p = {{1, 1, 1}, {64, 1, 1}, 0, NULL, 3, good, 3, 0};
        assert_int_equal(ckt_runtime_check_arg_sizes("three", sizes, count, &p, &err), CKT_OK);
        p.signature = bad;
        assert_int_equal(ckt_runtime_check_arg_sizes("three", sizes, count, &p, &err), CKT_EINVAL);
        assert_non_null(strstr(err.msg, "kernel 'three' takes 3 arguments of (8, 8, 4) bytes, the "
                                        "launch passes 3 of (8, 8, 8) bytes"));
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
    ckt_compile_request req = {"sm_90",
                               "extern \"C\" __global__ void six(const float *x, float *y, int n, "
                               "float a, long long q, char c)"
                               " { int i = threadIdx.x; if (i < n) y[i] += a * x[i] + q + c; }",
                               "six", NULL, 0};
    ckt_binary *b;
    ckt_error err;
    if (ckt_compile(NULL, &req, CKT_COMPILE_NO_CACHE, &b, &err) != CKT_OK) {
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
    assert_int_equal(ckt_cubin_kernel_args(code, n, "six", sizes, 3, &count, &err),
                     CKT_EINVAL); /* capacity */
    uint8_t *m = malloc(n);
    uint64_t s = 17;
    for (int trial = 0; trial < 3000; trial++) {
        memcpy(m, code, n);
        s = s * 6364136223846793005u + 1442695040888963407u;
        m[(s >> 20) % n] ^= (uint8_t)(1 + (s >> 56) % 255);
        count = -1;
        if (ckt_cubin_kernel_args(m, n, "six", sizes, 8, &count, &err) == CKT_OK)
            assert_true(count >= 0 && count <= 8);
    }
    free(m);
    ckt_binary_free(b);
}

/* A minimal cubin: ELF64 header (EM_CUDA), .shstrtab, the section headers, and last, so that a
 * shorter buffer cuts it, .nv.info.<kernel> holding `info`. Returns the size. */
static size_t synth_cubin(uint8_t *out, size_t cap, const char *kernel, const uint8_t *info,
                          size_t ninfo)
{
    char names[200];
    int nl = snprintf(names, sizeof names, "%c.shstrtab%c.nv.info.%s", 0, 0, kernel) + 1;
    size_t shoff = (64 + (size_t)nl + 7) & ~(size_t)7, infooff = shoff + 3 * 64,
           total = infooff + ninfo;
    if (total > cap) fail_msg("synthetic cubin of %zu bytes does not fit %zu", total, cap);
    memset(out, 0, total);
    memcpy(out,
           "\x7f"
           "ELF\x02\x01\x01\x33",
           8); /* ELF64, little-endian, ELFOSABI_CUDA */
    uint16_t h16[] = {2 /* ET_EXEC */, 190 /* EM_CUDA */};
    memcpy(out + 0x10, h16, sizeof h16);
    uint32_t version = 1;
    memcpy(out + 0x14, &version, 4);
    uint64_t off64 = shoff;
    memcpy(out + 0x28, &off64, 8);
    uint16_t ehsize = 64, shentsize = 64, shnum = 3, shstrndx = 1;
    memcpy(out + 0x34, &ehsize, 2);
    memcpy(out + 0x3a, &shentsize, 2);
    memcpy(out + 0x3c, &shnum, 2);
    memcpy(out + 0x3e, &shstrndx, 2);
    memcpy(out + 64, names, (size_t)nl);
    struct {
        uint32_t name, type;
        uint64_t off, size;
    } sec[2] = {{1, 3 /* SHT_STRTAB */, 64, (uint64_t)nl},
                {11, 0x70000000 /* SHT_LOPROC, as NVRTC's .nv.info */, infooff, ninfo}};
    for (int i = 0; i < 2; i++) {
        uint8_t *sh = out + shoff + 64 * (size_t)(i + 1);
        memcpy(sh, &sec[i].name, 4);
        memcpy(sh + 4, &sec[i].type, 4);
        memcpy(sh + 0x18, &sec[i].off, 8);
        memcpy(sh + 0x20, &sec[i].size, 8);
    }
    memcpy(out + infooff, info, ninfo);
    return total;
}

/* .nv.info.axpy of axpy(const float *, float *, int, float) with a __syncthreads, as NVRTC 13.0
 * writes it for sm_80 (readelf -x): CUDA_API_VERSION, an EIFMT_NVAL record (attribute 0x35),
 * PARAM_CBANK, CBANK_PARAM_SIZE 24, four KPARAM_INFO (ordinals 3..0), MAXREG_COUNT, an EIFMT_BVAL
 * record (0x4c, the barrier count), 0x5f, EXIT_INSTR_OFFSETS, CRS_STACK_SIZE. */
static const uint8_t cuda13_axpy[] = {
    0x04, 0x37, 0x04, 0x00, 0x82, 0x00, 0x00, 0x00, 0x01, 0x35, 0x00, 0x00, 0x04, 0x0a, 0x08, 0x00,
    0x05, 0x00, 0x00, 0x00, 0x60, 0x01, 0x18, 0x00, 0x03, 0x19, 0x18, 0x00, 0x04, 0x17, 0x0c, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x14, 0x00, 0x00, 0xf0, 0x11, 0x00, 0x04, 0x17, 0x0c, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x10, 0x00, 0x00, 0xf0, 0x11, 0x00, 0x04, 0x17, 0x0c, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x08, 0x00, 0x00, 0xf0, 0x21, 0x00, 0x04, 0x17, 0x0c, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x21, 0x00, 0x03, 0x1b, 0xff, 0x00,
    0x02, 0x4c, 0x01, 0x00, 0x03, 0x5f, 0x00, 0x00, 0x04, 0x1c, 0x08, 0x00, 0x00, 0x01, 0x00, 0x00,
    0x70, 0x01, 0x00, 0x00, 0x04, 0x1e, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00};
/* .nv.info.big of big(const __grid_constant__ struct { int a[5000]; }, int *) for sm_90: two
 * KPARAM_INFO_V2 records (attribute 0x45: u32 index, u16 ordinal, u16 offset, u16 size, u16 flags),
 * CBANK_PARAM_SIZE 0x4e28 = 20008 and PARAM_CBANK with the same size. */
static const uint8_t cuda13_big[] = {
    0x04, 0x37, 0x04, 0x00, 0x82, 0x00, 0x00, 0x00, 0x04, 0x45, 0x0c, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x20, 0x4e, 0x08, 0x00, 0x00, 0x00, 0x04, 0x45, 0x0c, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x4e, 0x00, 0x00, 0x03, 0x50,
    0x00, 0x00, 0x03, 0x1b, 0xff, 0x00, 0x03, 0x5f, 0x01, 0x01, 0x04, 0x1c, 0x04, 0x00,
    0xa0, 0x00, 0x00, 0x00, 0x03, 0x19, 0x28, 0x4e, 0x04, 0x0a, 0x08, 0x00, 0x09, 0x00,
    0x00, 0x00, 0x10, 0x02, 0x28, 0x4e, 0x04, 0x36, 0x04, 0x00, 0x08, 0x00, 0x00, 0x00};

static ckt_status synth_args(const uint8_t *info, size_t ninfo, const char *kernel, int64_t *sizes,
                             int cap, int *count, ckt_error *err)
{
    uint8_t elf[1024];
    size_t n = synth_cubin(elf, sizeof elf, kernel, info, ninfo);
    uint8_t *exact =
        malloc(n); /* exactly the bytes, so that a read past them is caught (ASan, valgrind) */
    memcpy(exact, elf, n);
    err->msg[0] = 0;
    ckt_status st = ckt_cubin_kernel_args(exact, n, kernel, sizes, cap, count, err);
    free(exact);
    return st;
}

static void cubin_parameter_records(void **state)
{
    (void)state;
    int64_t sizes[8];
    int count = -1;
    ckt_error err;
    /* CUDA 13: NVAL and BVAL records among the parameters */
    assert_int_equal(synth_args(cuda13_axpy, sizeof cuda13_axpy, "axpy", sizes, 8, &count, &err),
                     CKT_OK);
    assert_int_equal(count, 4);
    int64_t want[4] = {8, 8, 4, 4};
    assert_memory_equal(sizes, want, sizeof want);
    /* the older layout: the same without the NVAL and BVAL records */
    uint8_t old[sizeof cuda13_axpy];
    size_t nold = 0;
    for (size_t i = 0; i < sizeof cuda13_axpy;) {
        size_t len =
            cuda13_axpy[i] == 4 ? 4 + (size_t)(cuda13_axpy[i + 2] | cuda13_axpy[i + 3] << 8) : 4;
        if (cuda13_axpy[i] == 3 || cuda13_axpy[i] == 4) {
            memcpy(old + nold, cuda13_axpy + i, len);
            nold += len;
        }
        i += len;
    }
    assert_int_equal(nold, sizeof cuda13_axpy - 8);
    count = -1;
    assert_int_equal(synth_args(old, nold, "axpy", sizes, 8, &count, &err), CKT_OK);
    assert_int_equal(count, 4);
    assert_memory_equal(sizes, want, sizeof want);
    /* KPARAM_INFO_V2 */
    assert_int_equal(synth_args(cuda13_big, sizeof cuda13_big, "big", sizes, 8, &count, &err),
                     CKT_OK);
    assert_int_equal(count, 2);
    assert_int_equal(sizes[0], 20000);
    assert_int_equal(sizes[1], 8);
    /* no parameters: no records, no bank size */
    static const uint8_t none[] = {0x04, 0x37, 0x04, 0x00, 0x82, 0x00, 0x00, 0x00,
                                   0x03, 0x50, 0x00, 0x00, 0x03, 0x1b, 0xff, 0x00};
    assert_int_equal(synth_args(none, sizeof none, "none", sizes, 8, &count, &err), CKT_OK);
    assert_int_equal(count, 0);
    /* refusals, each named */
    uint8_t m[sizeof cuda13_axpy];
    memcpy(m, cuda13_axpy, sizeof m);
    m[26] = 0x1c; /* CBANK_PARAM_SIZE 28 */
    assert_int_equal(synth_args(m, sizeof m, "axpy", sizes, 8, &count, &err), CKT_EUNSUPPORTED);
    assert_non_null(
        strstr(err.msg, "cubin: .nv.info.axpy gives two parameter bank sizes (24, 28)"));
    memcpy(m, cuda13_axpy, sizeof m);
    m[22] = m[26] = 0x1c; /* PARAM_CBANK and CBANK_PARAM_SIZE agree on 28: the records end at 24 */
    assert_int_equal(synth_args(m, sizeof m, "axpy", sizes, 8, &count, &err), CKT_EUNSUPPORTED);
    assert_non_null(strstr(
        err.msg,
        "the 4 parameter records of 'axpy' end at byte 24, its parameter bank holds 28 bytes"));
    memcpy(m, cuda13_axpy, sizeof m);
    m[8] = 5; /* an unknown record format */
    assert_int_equal(synth_args(m, sizeof m, "axpy", sizes, 8, &count, &err), CKT_EUNSUPPORTED);
    assert_non_null(
        strstr(err.msg, "cubin: .nv.info.axpy has a record of format 5 (attribute 0x35)"));
    memcpy(m, cuda13_axpy, sizeof m);
    m[sizeof m - 6] = 8; /* the last record's length runs past the section */
    assert_int_equal(synth_args(m, sizeof m, "axpy", sizes, 8, &count, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "record (attribute 0x1e) of 8 bytes runs past the section"));
    memcpy(m, cuda13_axpy, sizeof m);
    m[36] = 5; /* ordinal 3 becomes 5: 0, 1, 2, 5 */
    assert_int_equal(synth_args(m, sizeof m, "axpy", sizes, 8, &count, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "parameter ordinals of 'axpy' have gaps"));
    m[36] = 2; /* ordinal 2 twice */
    assert_int_equal(synth_args(m, sizeof m, "axpy", sizes, 8, &count, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "parameter ordinal 2 of 'axpy' repeated"));
    assert_int_equal(synth_args(cuda13_axpy, sizeof cuda13_axpy, "axpy", sizes, 3, &count, &err),
                     CKT_EINVAL);
    assert_non_null(strstr(err.msg, "parameter ordinal 3 of 'axpy' repeated or beyond 3"));
    assert_int_equal(synth_args(cuda13_axpy, sizeof cuda13_axpy, "other", sizes, 8, &count, &err),
                     CKT_OK); /* names the section itself */
    uint8_t elf[1024];
    size_t n = synth_cubin(elf, sizeof elf, "axpy", cuda13_axpy, sizeof cuda13_axpy);
    assert_int_equal(ckt_cubin_kernel_args(elf, n, "other", sizes, 8, &count, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "no section .nv.info.other"));
    assert_int_equal(ckt_cubin_kernel_args(NULL, n, "axpy", sizes, 8, &count, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "elf is NULL"));
    assert_int_equal(ckt_cubin_kernel_args(elf, n, NULL, sizes, 8, &count, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "kernel is NULL"));
    assert_int_equal(ckt_cubin_kernel_args(elf, n, "axpy", sizes, -1, &count, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "cap -1 is negative"));
    /* hostile copies: every cut of the section (it ends the file), every byte of it set to each
     * of several values, and whole-file damage: a result within the capacity, or a message */
    for (size_t len = 0; len < sizeof cuda13_axpy; len++) {
        count = -1;
        if (synth_args(cuda13_axpy, len, "axpy", sizes, 8, &count, &err) == CKT_OK)
            assert_true(count >= 0 && count <= 8);
        else
            assert_true(err.msg[0] != 0);
    }
    static const uint8_t vals[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
                                   0x17, 0x45, 0x7f, 0x80, 0xff};
    for (int which = 0; which < 2; which++) {
        const uint8_t *src = which ? cuda13_big : cuda13_axpy;
        size_t ns = which ? sizeof cuda13_big : sizeof cuda13_axpy;
        uint8_t d[sizeof cuda13_axpy > sizeof cuda13_big ? sizeof cuda13_axpy : sizeof cuda13_big];
        for (size_t i = 0; i < ns; i++)
            for (size_t v = 0; v < sizeof vals; v++) {
                memcpy(d, src, ns);
                d[i] = vals[v];
                count = -1;
                if (synth_args(d, ns, which ? "big" : "axpy", sizes, 8, &count, &err) == CKT_OK)
                    assert_true(count >= 0 && count <= 8);
                else
                    assert_true(err.msg[0] != 0);
            }
    }
    uint64_t s = 23;
    for (int trial = 0; trial < 3000; trial++) {
        n = synth_cubin(elf, sizeof elf, "axpy", cuda13_axpy, sizeof cuda13_axpy);
        s = s * 6364136223846793005u + 1442695040888963407u;
        elf[(s >> 20) % n] ^= (uint8_t)(1 + (s >> 56) % 255);
        uint8_t *exact = malloc(n);
        memcpy(exact, elf, n);
        count = -1;
        err.msg[0] = 0;
        if (ckt_cubin_kernel_args(exact, n, "axpy", sizes, 8, &count, &err) == CKT_OK)
            assert_true(count >= 0 && count <= 8);
        else
            assert_true(err.msg[0] != 0);
        free(exact);
    }
}

/* A failed NVRTC / hipRTC compile shows the log's error lines, not the warnings before them. */
static void failure_messages_show_the_errors(void **state)
{
    (void)state;
    char buf[256];
    const char *log = "k(1): warning #177-D: variable \"x\" was declared but never referenced\n"
                      "   int x;\n"
                      "ptxas fatal   : (C7602) Insufficient registers\n"
                      "k(9): error: identifier \"y\" is undefined\n"
                      "1 error detected";
    assert_string_equal("ptxas fatal   : (C7602) Insufficient registers\n"
                        "k(9): error: identifier \"y\" is undefined\n"
                        "1 error detected\n",
                        ckt_rtc_failure(log, buf, sizeof buf));
    assert_string_equal("only warnings", ckt_rtc_failure("only warnings", buf, sizeof buf));
    assert_string_equal("(no log)", ckt_rtc_failure(NULL, buf, sizeof buf));
    /* lines that do not fit are left out, never cut (the first one takes 41 of the 48 bytes) */
    char small[48];
    assert_string_equal("k(9): error: identifier \"y\" is undefined\n",
                        ckt_rtc_failure("k(9): error: identifier \"y\" is undefined\nthe error "
                                        "is on a line too long to fit in the rest of the buffer\n",
                                        small, sizeof small));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requests_are_validated),
        cmocka_unit_test(cpu_compiles_and_reports),
        cmocka_unit_test(compile_errors_carry_the_log),
        cmocka_unit_test(failure_messages_show_the_errors),
        cmocka_unit_test(amdgpu_metadata_of_a_real_code_object),
        cmocka_unit_test(kernel_arguments_from_the_metadata),
        cmocka_unit_test(cubin_parameters),
        cmocka_unit_test(cubin_parameter_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
