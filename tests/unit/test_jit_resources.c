/* Compile reports that never go blank: ptxas' report read for the named entry only, checked
 * against saved NVRTC 13.0 logs (tests/unit/data/nvrtc-13.0: two entries, a callee with its own
 * frame, spills, static shared memory, a log full of warnings); the cubin's own records
 * (registers, frame, static shared memory) agree with those logs and survive damaged copies; and
 * every resource field is checked after compiles for gfx90a, sm_90, gfx90a, sm_90a in one process
 * (a gfx90a compile once blanked every later NVRTC report: issue 29). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/jit.h"

#define DATA CKT_SOURCE_DIR "/tests/unit/data/nvrtc-13.0/"

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)sz + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)sz, f), (size_t)sz);
    b[sz] = 0;
    fclose(f);
    if (n) *n = (size_t)sz;
    return b;
}

typedef struct {
    const char *file, *kernel;
    int64_t registers, shared, frame, stores, loads;
} expect;

/* what ptxas printed in each saved log (read by eye, not by the parser) */
static const expect logs[] = {
    {"two_and_spill_sm_90.log", "two", 24, 1024, 64, 0, 0},
    {"two_and_spill_sm_90.log", "spill", 32, 0, 416, 808, 828},
    {"two_and_spill_sm_80.log", "two", 24, 1024, 64, 0, 0},
    {"two_and_spill_sm_80.log", "spill", 32, 0, 416, 804, 824},
    {"transpose_f32_sm_90.log", "transpose_f32", 48, 16384, 0, 0, 0},
    {"gemm_f16_kk_sm_90a.log", "gemm_f16_kk", 166, 0, 0, 0, 0},
};

static void ptxas_logs_are_read_per_entry(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof logs / sizeof *logs; i++) {
        const expect *e = &logs[i];
        char path[512];
        snprintf(path, sizeof path, "%s%s", DATA, e->file);
        char *log = slurp(path, NULL);
        ckt_resources r;
        ckt_error err;
        if (ckt_ptxas_log_resources(log, e->kernel, &r, &err) != CKT_OK)
            fail_msg("%s %s: %s", e->file, e->kernel, err.msg);
        if (r.registers != e->registers || r.shared_bytes != e->shared ||
            r.scratch_bytes != e->frame || r.spill_stores != e->stores || r.spill_loads != e->loads)
            fail_msg("%s %s: registers %lld shared %lld frame %lld spills %lld/%lld", e->file,
                     e->kernel, (long long)r.registers, (long long)r.shared_bytes,
                     (long long)r.scratch_bytes, (long long)r.spill_stores,
                     (long long)r.spill_loads);
        assert_int_equal(r.vgprs, -1); /* AMD fields stay unknown */
        /* a name that is a prefix of an entry, or absent: no report, not another entry's */
        assert_int_equal(ckt_ptxas_log_resources(log, "tw", &r, &err), CKT_EINVAL);
        assert_non_null(strstr(err.msg, "no report for the entry function 'tw'"));
        free(log);
    }
    ckt_resources r;
    ckt_error err;
    assert_int_equal(ckt_ptxas_log_resources(NULL, "k", &r, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "log is NULL"));
    assert_int_equal(ckt_ptxas_log_resources("", NULL, &r, &err), CKT_EINVAL);
    assert_int_equal(ckt_ptxas_log_resources("", "k", NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_ptxas_log_resources("", "k", &r, &err), CKT_EINVAL);
    /* an entry line without a register count: refused, not half read */
    assert_int_equal(
        ckt_ptxas_log_resources("ptxas info    : Compiling entry function 'k' for 'sm_90'\n", "k",
                                &r, &err),
        CKT_EINVAL);
    assert_non_null(strstr(err.msg, "no register count"));
    /* CUDA 12's order (smem before cmem, no barriers), CRLF line ends, no trailing newline */
    const char *v12 = "ptxas info    : Compiling entry function 'k' for 'sm_80'\r\n"
                      "ptxas info    : Function properties for k\r\n"
                      "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\r\n"
                      "ptxas info    : Used 40 registers, 2048 bytes smem, 368 bytes cmem[0]";
    assert_int_equal(ckt_ptxas_log_resources(v12, "k", &r, &err), CKT_OK);
    assert_int_equal(r.registers, 40);
    assert_int_equal(r.shared_bytes, 2048);
    assert_int_equal(r.scratch_bytes, 8);
    assert_int_equal(r.spill_stores, 4);
    assert_int_equal(r.spill_loads, 4);
}

static void cubins_agree_with_ptxas(void **state)
{
    (void)state;
    static const struct {
        const char *cubin, *log, *arch, *kernels[2];
    } files[] = {
        {"two_and_spill_sm_90.cubin", "two_and_spill_sm_90.log", "sm_90", {"two", "spill"}},
        {"two_and_spill_sm_80.cubin", "two_and_spill_sm_80.log", "sm_80", {"two", "spill"}},
        {"transpose_f32_sm_90.cubin", "transpose_f32_sm_90.log", "sm_90", {"transpose_f32", NULL}},
    };
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[512];
        size_t n;
        snprintf(path, sizeof path, "%s%s", DATA, files[f].cubin);
        uint8_t *cubin = (uint8_t *)slurp(path, &n);
        snprintf(path, sizeof path, "%s%s", DATA, files[f].log);
        char *log = slurp(path, NULL);
        for (int k = 0; k < 2 && files[f].kernels[k]; k++) {
            const char *name = files[f].kernels[k];
            ckt_resources c, l;
            ckt_error err;
            if (ckt_cubin_resources(cubin, n, name, files[f].arch, &c, &err))
                fail_msg("%s %s: %s", files[f].cubin, name, err.msg);
            assert_int_equal(ckt_ptxas_log_resources(log, name, &l, &err), CKT_OK);
            if (c.registers != l.registers || c.shared_bytes != l.shared_bytes ||
                c.scratch_bytes != l.scratch_bytes)
                fail_msg("%s %s: cubin registers %lld shared %lld frame %lld, ptxas %lld %lld %lld",
                         files[f].cubin, name, (long long)c.registers, (long long)c.shared_bytes,
                         (long long)c.scratch_bytes, (long long)l.registers,
                         (long long)l.shared_bytes, (long long)l.scratch_bytes);
            /* spills are not in a cubin: known (0) only where there is no frame */
            assert_int_equal(c.spill_stores, c.scratch_bytes == 0 ? 0 : -1);
        }
        ckt_resources r;
        ckt_error err;
        assert_int_equal(ckt_cubin_resources(cubin, n, "absent", "sm_90", &r, &err), CKT_EINVAL);
        assert_non_null(strstr(err.msg, "no section .text.absent"));
        assert_int_equal(ckt_cubin_resources(NULL, n, "two", "sm_90", &r, &err), CKT_EINVAL);
        assert_int_equal(ckt_cubin_resources(cubin, n, NULL, "sm_90", &r, &err), CKT_EINVAL);
        assert_int_equal(ckt_cubin_resources(cubin, n, "two", "sm_90", NULL, &err), CKT_EINVAL);
        /* damaged copies: truncated anywhere, or bytes flipped: an error or values, never a crash
         * (ASan / valgrind runs read this too) */
        uint8_t *copy = malloc(n);
        for (size_t cut = 0; cut < n; cut += 97) {
            memcpy(copy, cubin, cut);
            (void)ckt_cubin_resources(copy, cut, files[f].kernels[0], "sm_90", &r, &err);
        }
        srand(29);
        for (int i = 0; i < 2000; i++) {
            memcpy(copy, cubin, n);
            for (int k = 0; k < 4; k++) copy[(size_t)rand() % n] = (uint8_t)rand();
            (void)ckt_cubin_resources(copy, n, files[f].kernels[0], "sm_90", &r, &err);
        }
        free(copy);
        free(cubin);
        free(log);
    }
}

/* ---- compiles in one process: gfx90a, sm_90, gfx90a, sm_90a, every field each time ---- */

static const char *src =
    "extern \"C\" __global__ void __launch_bounds__(256) res_probe(float *p) {\n"
    "  __shared__ float s[1024];\n"
    "  for (int i = threadIdx.x; i < 1024; i += 256) s[i] = p[i];\n"
    "  __syncthreads();\n"
    "  p[threadIdx.x] = s[1023 - threadIdx.x];\n"
    "}\n";
/* dynamic shared memory as ckt's emitter declares it, beside 1 KiB of static */
static const char *dyn_src =
    "extern \"C\" __global__ void __launch_bounds__(128) res_dyn(float *p) {\n"
    "  __shared__ float st[256];\n"
    "  extern __shared__ __attribute__((aligned(16))) unsigned char ckt_lds[]; /* 65536 bytes, "
    "requested at launch: above the static limit */\n"
    "  float *d = (float *)ckt_lds;\n"
    "  st[threadIdx.x] = p[threadIdx.x]; d[threadIdx.x] = st[127 - threadIdx.x];\n"
    "  __syncthreads();\n"
    "  p[threadIdx.x] = d[127 - threadIdx.x] + st[threadIdx.x];\n"
    "}\n";

/* 0: compiled and checked; 1: no compiler here */
static int check_target(const char *target, const char *source, const char *name,
                        int64_t want_dynamic)
{
    ckt_compile_request req = {target, source, name, NULL, 0};
    ckt_binary *b = NULL;
    ckt_error err;
    ckt_status st = ckt_compile(NULL, &req, CKT_COMPILE_ONLY | CKT_COMPILE_NO_CACHE, &b, &err);
    if (st == CKT_ERUNTIME) {
        printf("SKIPPED %s: %s\n", target, err.msg);
        return 1;
    }
    if (st) fail_msg("%s: %s", target, err.msg);
    const ckt_resources *r = ckt_binary_resources(b);
    int amd = target[0] == 'g';
    int64_t static_lds = want_dynamic ? 1024 : 4096;
    printf("%s %s: vgprs %lld sgprs %lld agprs %lld registers %lld spills %lld/%lld %lld/%lld "
           "lds %lld + %lld scratch %lld\n",
           target, name, (long long)r->vgprs, (long long)r->sgprs, (long long)r->agprs,
           (long long)r->registers, (long long)r->vgpr_spills, (long long)r->sgpr_spills,
           (long long)r->spill_stores, (long long)r->spill_loads, (long long)r->shared_bytes,
           (long long)ckt_binary_dynamic_shared_bytes(b), (long long)r->scratch_bytes);
    if (amd) {
        assert_true(r->vgprs > 0 && r->vgprs <= 512);
        assert_true(r->sgprs > 0 && r->sgprs <= 112);
        assert_true(r->agprs >= 0);
        assert_int_equal(r->vgpr_spills, 0);
        assert_int_equal(r->sgpr_spills, 0);
        assert_int_equal(r->registers, -1);
    } else {
        assert_true(r->registers > 0 && r->registers <= 255);
        assert_int_equal(r->spill_stores, 0);
        assert_int_equal(r->spill_loads, 0);
        assert_int_equal(r->vgprs, -1);
    }
    assert_int_equal(r->shared_bytes, static_lds);
    assert_int_equal(r->scratch_bytes, 0);
    assert_int_equal(ckt_binary_dynamic_shared_bytes(b), want_dynamic);
    assert_int_equal(ckt_binary_total_shared_bytes(b), static_lds + want_dynamic);
    ckt_binary_free(b);
    return 0;
}

static void every_field_whatever_came_before(void **state)
{
    (void)state;
    static const char *const order[] = {"gfx90a", "sm_90", "gfx90a", "sm_90a", "sm_90"};
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
            check_target(order[i], src, "res_probe", 0);
            check_target(order[i], dyn_src, "res_dyn", 65536);
        }
    /* a hand-written extern __shared__: its size is the launch's */
    static const char *const hand = "extern \"C\" __global__ void h(float *p) { extern __shared__ "
                                    "float d[]; d[threadIdx.x] = 1; p[threadIdx.x] = d[0]; }";
    ckt_compile_request req = {"sm_90", hand, "h", NULL, 0};
    ckt_binary *b;
    ckt_error err;
    if (ckt_compile(NULL, &req, CKT_COMPILE_ONLY | CKT_COMPILE_NO_CACHE, &b, &err) == CKT_OK) {
        assert_int_equal(ckt_binary_dynamic_shared_bytes(b), -1);
        assert_int_equal(ckt_binary_total_shared_bytes(b), -1);
        assert_int_equal(ckt_binary_resources(b)->shared_bytes, 0);
        ckt_binary_free(b);
    }
    assert_int_equal(ckt_binary_dynamic_shared_bytes(NULL), -1);
    assert_int_equal(ckt_binary_total_shared_bytes(NULL), -1);
}

/* a spilling kernel on sm_90a: the spills of its own entry, not of the entry before it */
static void spills_of_the_named_entry(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s%s", DATA, "spill_source.cu");
    char *source = slurp(path, NULL);
    ckt_compile_request req = {"sm_90a", source, "spill", NULL, 0};
    ckt_binary *b;
    ckt_error err;
    ckt_status st = ckt_compile(NULL, &req, CKT_COMPILE_ONLY | CKT_COMPILE_NO_CACHE, &b, &err);
    if (st == CKT_ERUNTIME) {
        printf("SKIPPED: %s\n", err.msg);
        free(source);
        return;
    }
    assert_int_equal(st, CKT_OK);
    const ckt_resources *r = ckt_binary_resources(b);
    assert_int_equal(r->registers, 32);
    assert_true(r->spill_stores > 0 && r->spill_loads > 0 && r->scratch_bytes > 0);
    assert_int_equal(r->shared_bytes, 0);
    ckt_binary_free(b);
    free(source);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ptxas_logs_are_read_per_entry),
        cmocka_unit_test(cubins_agree_with_ptxas),
        cmocka_unit_test(every_field_whatever_came_before),
        cmocka_unit_test(spills_of_the_named_entry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
