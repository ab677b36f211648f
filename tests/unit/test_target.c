/* Hardware models: the documented numbers, the lane-phase tables (AMD's note on LDS bank conflicts,
 * the CUDA programming guide) as partitions of the wave, instruction lookup, unknown names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"
#include "ckt/target.h"

static ckt_target get(const char *name)
{
    ckt_target t;
    ckt_error err;
    if (ckt_target_get(name, &t, &err) != CKT_OK) fail_msg("%s: %s", name, err.msg);
    return t;
}

static void numbers(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        ckt_vendor v;
        int wave, banks;
        int64_t lds;
    } want[] = {
        {"gfx908", CKT_VENDOR_AMD, 64, 32, 64 << 10},
        {"gfx90a", CKT_VENDOR_AMD, 64, 32, 64 << 10},
        {"gfx942", CKT_VENDOR_AMD, 64, 32, 64 << 10},
        {"gfx950", CKT_VENDOR_AMD, 64, 64, 160 << 10},
        {"sm_80", CKT_VENDOR_NVIDIA, 32, 32, 163 << 10},
        {"sm_90", CKT_VENDOR_NVIDIA, 32, 32, 227 << 10},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        ckt_target t = get(want[i].name);
        assert_string_equal(t.name, want[i].name);
        assert_int_equal(t.vendor, want[i].v);
        assert_int_equal(t.wave_size, want[i].wave);
        assert_int_equal(t.lds_banks, want[i].banks);
        assert_int_equal(t.bank_bytes, 4);
        assert_int_equal(t.lds_bytes, want[i].lds);
        assert_non_null(t.matrix);
        assert_true(strlen(t.matrix) > 0);
        assert_non_null(strstr(t.matrix, t.vendor == CKT_VENDOR_AMD ? "mfma" : "mma"));
        assert_int_equal(t.ninstr, 6);
    }
    /* the CPU target emulating a GPU uses that GPU's model */
    ckt_target c = get("cpu:gfx950");
    assert_string_equal(c.name, "gfx950");
    assert_int_equal(c.lds_banks, 64);
}

/* Every instruction's phases cover every lane of the wave exactly once. */
static void phases_partition_the_wave(void **state)
{
    (void)state;
    static const char *const names[] = {"gfx908", "gfx90a", "gfx942", "gfx950", "sm_80", "sm_90"};
    for (size_t i = 0; i < 6; i++) {
        ckt_target t = get(names[i]);
        for (int k = 0; k < t.ninstr; k++) {
            const ckt_lds_instr *in = &t.instr[k];
            assert_int_equal(in->nphases * in->lanes_per_phase, t.wave_size);
            /* a phase moves at most one bank-row: lanes x bytes <= banks x bank bytes */
            assert_true(in->lanes_per_phase * in->bytes <= t.lds_banks * t.bank_bytes);
            int seen[CKT_MAX_LANES] = {0};
            for (int p = 0; p < in->nphases; p++)
                for (int l = 0; l < in->lanes_per_phase; l++) {
                    int lane = in->lanes[p][l];
                    assert_true(lane >= 0 && lane < t.wave_size);
                    seen[lane]++;
                }
            for (int l = 0; l < t.wave_size; l++) assert_int_equal(seen[l], 1);
            assert_non_null(in->source);
            assert_ptr_equal(ckt_target_instr(&t, in->name), in);
            assert_ptr_equal(ckt_target_instr_for(&t, in->bytes, in->is_write), in);
        }
    }
}

static void lds_bank_note_tables(void **state)
{
    (void)state;
    ckt_target t = get("gfx90a");
    const ckt_lds_instr *r = ckt_target_instr(&t, "ds_read_b128"),
                        *w = ckt_target_instr(&t, "ds_write_b128");
    assert_non_null(r);
    assert_non_null(w);
    assert_true(r->documented);
    assert_true(w->documented);
    static const int starts[8][2] = {{0, 20},  {4, 16},  {8, 28},  {12, 24},
                                     {32, 52}, {36, 48}, {40, 60}, {44, 56}};
    assert_int_equal(r->nphases, 8);
    for (int p = 0; p < 8; p++)
        for (int k = 0; k < 4; k++) {
            assert_int_equal(r->lanes[p][k], starts[p][0] + k);
            assert_int_equal(r->lanes[p][4 + k], starts[p][1] + k);
            assert_int_equal(w->lanes[p][k], 8 * p + k);
            assert_int_equal(w->lanes[p][4 + k], 8 * p + 4 + k);
        }
    /* narrower AMD instructions and gfx950's are assumptions and say so */
    assert_false(ckt_target_instr(&t, "ds_read_b32")->documented);
    assert_int_equal(ckt_target_instr(&t, "ds_read_b32")->nphases, 2);
    assert_false(ckt_target_instr(&t, "ds_read_b64")->documented);
    assert_int_equal(ckt_target_instr(&t, "ds_read_b64")->nphases, 4);
    ckt_target g950 = get("gfx950");
    assert_false(ckt_target_instr(&g950, "ds_read_b128")->documented);
    assert_int_equal(ckt_target_instr(&g950, "ds_read_b32")->nphases, 1);
    /* NVIDIA: 32-bit one phase of 32, 64-bit two of 16, 128-bit four of 8, documented */
    ckt_target n = get("sm_90");
    static const struct {
        const char *name;
        int phases;
    } nv[] = {{"lds32", 1}, {"sts64", 2}, {"lds128", 4}};
    for (int i = 0; i < 3; i++) {
        const ckt_lds_instr *in = ckt_target_instr(&n, nv[i].name);
        assert_non_null(in);
        assert_true(in->documented);
        assert_int_equal(in->nphases, nv[i].phases);
        for (int p = 0; p < in->nphases; p++)
            for (int k = 0; k < in->lanes_per_phase; k++)
                assert_int_equal(in->lanes[p][k], p * in->lanes_per_phase + k);
    }
    /* generic names */
    assert_ptr_equal(ckt_target_instr(&n, "read_b128"), ckt_target_instr(&n, "lds128"));
    assert_ptr_equal(ckt_target_instr(&t, "write_b64"), ckt_target_instr(&t, "ds_write_b64"));
}

static void unknown_names(void **state)
{
    (void)state;
    ckt_target t;
    ckt_error err;
    assert_int_not_equal(ckt_target_get("gfx1100", &t, &err), CKT_OK);
    assert_non_null(strstr(err.msg, "unknown target 'gfx1100'"));
    assert_non_null(strstr(err.msg, "gfx90a"));
    assert_non_null(strstr(err.msg, "sm_90"));
    assert_int_not_equal(ckt_target_get("cpu:", &t, &err), CKT_OK);
    assert_int_not_equal(ckt_target_get("", &t, &err), CKT_OK);
    assert_int_not_equal(ckt_target_get("GFX90A", &t, &err), CKT_OK);
    assert_int_not_equal(ckt_target_get(NULL, &t, &err), CKT_OK);
    assert_non_null(strstr(err.msg, "NULL"));
    assert_int_not_equal(ckt_target_get("gfx90a", NULL, &err), CKT_OK);
    ckt_target g = get("gfx90a");
    assert_null(ckt_target_instr(&g, "ds_read_b256"));
    assert_null(ckt_target_instr(&g, "read_b256"));
    assert_null(ckt_target_instr(&g, "lds128")); /* another vendor's name */
    assert_null(ckt_target_instr(&g, NULL));
    assert_null(ckt_target_instr(NULL, "ds_read_b32"));
    assert_null(ckt_target_instr_for(&g, 2, 0));
    assert_null(ckt_target_instr_for(NULL, 4, 0));
    assert_non_null(strstr(ckt_target_names(), "gfx950"));
}

/* One parse per target name: dialect, compiler, runtime, the architecture and its model. */
static void parsed_records(void **state)
{
    (void)state;
    static const struct {
        const char *name, *arch;
        ckt_dialect_kind dialect;
        ckt_compiler_kind compiler;
        ckt_backend runtime;
        bool emulated, modelled;
        int wave;
        int64_t lds_static, lds_max;
    } want[] = {
        {"cpu", CKT_CPU_DEFAULT_ARCH, CKT_DIALECT_C, CKT_COMPILER_HOST_CC, CKT_BACKEND_CPU, true,
         true, 64, 0, 64 << 10},
        {"cpu:gfx90a", "gfx90a", CKT_DIALECT_C, CKT_COMPILER_HOST_CC, CKT_BACKEND_CPU, true, true,
         64, 0, 64 << 10},
        {"cpu:sm_90", "sm_90", CKT_DIALECT_C, CKT_COMPILER_HOST_CC, CKT_BACKEND_CPU, true, true, 32,
         0, 227 << 10},
        {"gfx90a", "gfx90a", CKT_DIALECT_HIP, CKT_COMPILER_HIPRTC, CKT_BACKEND_HIP, false, true, 64,
         0, 64 << 10},
        {"gfx908", "gfx908", CKT_DIALECT_HIP, CKT_COMPILER_HIPRTC, CKT_BACKEND_HIP, false, true, 64,
         0, 64 << 10},
        {"gfx950", "gfx950", CKT_DIALECT_HIP, CKT_COMPILER_HIPRTC, CKT_BACKEND_HIP, false, true, 64,
         0, 160 << 10},
        {"sm_80", "sm_80", CKT_DIALECT_CUDA, CKT_COMPILER_NVRTC, CKT_BACKEND_CUDA, false, true, 32,
         48 << 10, 163 << 10},
        {"sm_90", "sm_90", CKT_DIALECT_CUDA, CKT_COMPILER_NVRTC, CKT_BACKEND_CUDA, false, true, 32,
         48 << 10, 227 << 10},
        {"sm_90a", "sm_90a", CKT_DIALECT_CUDA, CKT_COMPILER_NVRTC, CKT_BACKEND_CUDA, false, true,
         32, 48 << 10, 227 << 10},
        {"gfx1100", "gfx1100", CKT_DIALECT_HIP, CKT_COMPILER_HIPRTC, CKT_BACKEND_HIP, false, false,
         0, 0, 0},
        {"sm_89", "sm_89", CKT_DIALECT_CUDA, CKT_COMPILER_NVRTC, CKT_BACKEND_CUDA, false, false, 0,
         48 << 10, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        ckt_target_record r;
        ckt_error err;
        if (ckt_target_parse(want[i].name, &r, &err)) fail_msg("%s: %s", want[i].name, err.msg);
        assert_string_equal(r.name, want[i].name);
        assert_string_equal(r.arch, want[i].arch);
        assert_int_equal(r.dialect, want[i].dialect);
        assert_int_equal(r.compiler, want[i].compiler);
        assert_int_equal(r.runtime, want[i].runtime);
        assert_int_equal(r.emulated, want[i].emulated);
        assert_int_equal(r.modelled, want[i].modelled);
        assert_int_equal(r.wave_size, want[i].wave);
        assert_int_equal(r.lds_static_bytes, want[i].lds_static);
        assert_int_equal(r.lds_max_bytes, want[i].lds_max);
        assert_non_null(r.matrix);
        if (r.modelled)
            assert_non_null(strstr(r.matrix, r.hw.vendor == CKT_VENDOR_AMD ? "mfma" : "mma"));
    }
    /* sm_90a compiles for sm_90a with sm_90's model; the CPU emulates the named GPU's model */
    ckt_target_record r;
    ckt_error err;
    assert_int_equal(ckt_target_parse("sm_90a", &r, &err), CKT_OK);
    assert_string_equal(r.hw.name, "sm_90");
    assert_true(r.compiler_known);
    assert_int_equal(ckt_target_parse("sm_75", &r, &err), CKT_OK);
    assert_false(r.compiler_known);
    assert_int_equal(ckt_target_get("cpu", &(ckt_target){0}, &err), CKT_OK);
    static const char *bad[] = {"",
                                "gpu",
                                "cpu:",
                                "cpu:gfx1100",
                                "cpu:cpu",
                                "gfx",
                                "gfx90z",
                                "sm_",
                                "sm_9x",
                                "sm_90b",
                                "CPU",
                                "gfx90a;rm -rf /",
                                "sm_9000000000000000000000000000",
                                " gfx90a",
                                "gfx90a "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (ckt_target_parse(bad[i], &r, &err) == CKT_OK) fail_msg("'%s' accepted", bad[i]);
        assert_non_null(strstr(err.msg, "target: "));
    }
    assert_int_equal(ckt_target_parse("vulkan", &r, &err), CKT_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "unknown target 'vulkan'; known: cpu, gfx908"));
    assert_int_equal(ckt_target_parse(NULL, &r, &err), CKT_EINVAL);
    assert_int_equal(ckt_target_parse("cpu", NULL, &err), CKT_EINVAL);
    assert_string_equal(ckt_dialect_name(CKT_DIALECT_CUDA), "cuda");
    assert_string_equal(ckt_compiler_name(CKT_COMPILER_HIPRTC), "hiprtc");
    assert_string_equal(ckt_backend_name(CKT_BACKEND_HIP), "hip");
}

static ckt_target_record rec(const char *name)
{
    ckt_target_record r;
    ckt_error err;
    if (ckt_target_parse(name, &r, &err) != CKT_OK) fail_msg("%s: %s", name, err.msg);
    return r;
}

/* The capabilities are flags of the model, and each product's resources are its own. */
static void capabilities_and_resources(void **state)
{
    (void)state;
    ckt_target h100 = get("sm_90"), h100a = get("sm_90a"), a100 = get("sm_80");
    assert_true(h100.tma && h100a.tma && !a100.tma);
    assert_true(h100a.wgmma && !h100.wgmma && !a100.wgmma && !get("gfx90a").wgmma);
    assert_true(get("cpu:sm_90a").wgmma);
    assert_int_equal(h100.sm_count, 132);
    assert_int_equal(h100.regs_per_sm, 65536);
    assert_int_equal(h100.regs_per_thread_max, 255);
    assert_int_equal(h100.lds_per_sm, 228 << 10);
    assert_int_equal(h100.lds_per_block, 227 << 10);
    assert_int_equal(h100.threads_per_sm_max, 2048);
    assert_int_equal(h100.blocks_per_sm_max, 32);
    assert_int_equal(a100.sm_count, 108);
    assert_int_equal(a100.lds_per_sm, 164 << 10);
    ckt_target mi250 = get("gfx90a"), mi100 = get("gfx908"), mi355 = get("gfx950");
    assert_int_equal(mi250.sm_count, 110);
    assert_int_equal(mi250.regs_per_sm, 4 * 512 * 64);
    assert_int_equal(mi250.regs_per_thread_max, 512);
    assert_int_equal(mi250.threads_per_sm_max, 2048);
    assert_int_equal(mi100.regs_per_thread_max, 256);
    assert_int_equal(mi100.threads_per_sm_max, 2560);
    assert_int_equal(mi355.lds_per_sm, 160 << 10);
    assert_int_equal(get("gfx942").sm_count, 304);
    for (int i = 0; ckt_target_modelled_at(i); i++) {
        ckt_target t = get(ckt_target_modelled_at(i));
        assert_true(t.sm_count > 0 && t.reg_granule > 0 && t.simds > 0);
        assert_true(t.lds_per_block <= t.lds_per_sm && t.lds_per_block == t.lds_bytes);
    }
}

static ckt_occupancy occ(const char *target, int64_t threads, int64_t regs, int64_t lds)
{
    ckt_target_record r = rec(target);
    ckt_occupancy o;
    ckt_error err;
    if (ckt_target_occupancy(&r, threads, regs, lds, &o, &err)) fail_msg("%s", err.msg);
    return o;
}

static void occupancy(void **state)
{
    (void)state;
    /* the sm_90 GEMM: 256 threads, 128 registers, ~96 KiB of shared memory: 2 blocks by registers
     * and by shared memory alike (registers come first among equals) */
    ckt_occupancy o = occ("sm_90", 256, 128, 96 << 10);
    assert_int_equal(o.blocks_per_sm, 2);
    assert_int_equal(o.limiter, CKT_LIMIT_REGISTERS);
    assert_int_equal(o.waves, 16);
    /* sm_90a's: 288 threads (a producer warp), 225 KiB: one block, by LDS */
    o = occ("sm_90a", 288, 0, 230448);
    assert_int_equal(o.blocks_per_sm, 1);
    assert_int_equal(o.limiter, CKT_LIMIT_LDS);
    o = occ("sm_90", 64, 0, 0); /* nothing but the block count */
    assert_int_equal(o.blocks_per_sm, 32);
    assert_int_equal(o.limiter, CKT_LIMIT_BLOCKS);
    o = occ("sm_90", 1024, 0, 0);
    assert_int_equal(o.blocks_per_sm, 2);
    assert_int_equal(o.limiter, CKT_LIMIT_THREADS);
    o = occ("sm_90", 256, 255, 0); /* 255 registers are allocated as 256 */
    assert_int_equal(o.blocks_per_sm, 1);
    assert_int_equal(o.waves, 8);
    /* AMD: waves per SIMD; a 256-thread block is a wave on each of the 4 SIMDs */
    o = occ("gfx90a", 256, 128, 0);
    assert_int_equal(o.blocks_per_sm, 4);
    assert_int_equal(o.waves, 4);
    o = occ("gfx908", 256, 24, 0);
    assert_int_equal(o.waves, 10);
    o = occ("gfx90a", 256, 0, 40 << 10);
    assert_int_equal(o.blocks_per_sm, 1);
    assert_int_equal(o.limiter, CKT_LIMIT_LDS);
    assert_int_equal(occ("cpu:sm_90", 256, 128, 0).blocks_per_sm, 2); /* the emulated model */
    assert_string_equal(ckt_limiter_name(CKT_LIMIT_LDS), "lds");
    assert_string_equal(ckt_limiter_name(CKT_LIMIT_REGISTERS), "registers");
}

#define REFUSED(call, want)                                                                        \
    do {                                                                                           \
        assert_int_equal((call), CKT_EINVAL);                                                      \
        assert_non_null(strstr(err.msg, want));                                                    \
    } while (0)

static void occupancy_refusals(void **state)
{
    (void)state;
    ckt_target_record r = rec("sm_90"), odd = rec("sm_89");
    ckt_occupancy o;
    ckt_error err;
    REFUSED(ckt_target_occupancy(NULL, 256, 0, 0, &o, &err), "NULL");
    REFUSED(ckt_target_occupancy(&r, 256, 0, 0, NULL, &err), "NULL");
    REFUSED(ckt_target_occupancy(&odd, 256, 0, 0, &o, &err), "no hardware model");
    REFUSED(ckt_target_occupancy(&r, 0, 0, 0, &o, &err), "threads 0");
    REFUSED(ckt_target_occupancy(&r, 2048, 0, 0, &o, &err), "threads 2048 must be 1 to 1024");
    REFUSED(ckt_target_occupancy(&r, 256, -1, 0, &o, &err), "registers -1");
    REFUSED(ckt_target_occupancy(&r, 256, 256, 0, &o, &err), "registers 256");
    REFUSED(ckt_target_occupancy(&r, 256, 0, -4, &o, &err), "lds_bytes -4");
    REFUSED(ckt_target_occupancy(&r, 256, 0, 228 << 10, &o, &err), "lds_bytes 233472");
}

/* The launch's device check reads the record: only an architecture-specific binary is bound. */
static void device_check(void **state)
{
    (void)state;
    ckt_target_record a = rec("sm_90a"), plain = rec("sm_90"), cpu = rec("cpu:sm_90a");
    ckt_error err;
    assert_int_equal(ckt_target_check_device(&a, "sm_90", &err), CKT_OK);
    assert_int_equal(ckt_target_check_device(&a, "sm_100", &err), CKT_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "sm_90a"));
    assert_int_equal(ckt_target_check_device(&plain, "sm_100", &err), CKT_OK);
    assert_int_equal(ckt_target_check_device(&cpu, "cpu", &err), CKT_OK);
    assert_int_equal(ckt_target_check_device(NULL, "sm_90", &err), CKT_EINVAL);
    assert_int_equal(ckt_target_check_device(&a, NULL, &err), CKT_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(numbers),
        cmocka_unit_test(phases_partition_the_wave),
        cmocka_unit_test(lds_bank_note_tables),
        cmocka_unit_test(unknown_names),
        cmocka_unit_test(parsed_records),
        cmocka_unit_test(capabilities_and_resources),
        cmocka_unit_test(occupancy),
        cmocka_unit_test(occupancy_refusals),
        cmocka_unit_test(device_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
