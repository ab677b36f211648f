/* Hopper's warpgroup MMA: the sm_90a device check, the wgmma descriptions' lane layouts against
 * the PTX ISA's fragment formulas (written here independently of mma.c), and the shared-memory
 * matrix descriptors against hand-worked cases of the canonical layouts (NVIDIA's PTX ISA and
 * CUTLASS's GMMA descriptor documentation), refusals, encoding and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"
#include "ckt/wgmma.h"

/* a target name parsed (ckt_target_parse) for the calls that take the record; NULL when it names
 * no target. A ring of four, so that one expression may hold several. */
static const ckt_target_record *T(const char *name)
{
    static ckt_target_record ring[4];
    static int next;
    ckt_target_record *r = &ring[next++ % 4];
    return ckt_target_parse(name, r, NULL) == CKT_OK ? r : NULL;
}

static void expect_msg(const char *msg, const char *want)
{
    if (!strstr(msg, want)) fail_msg("message \"%s\" lacks \"%s\"", msg, want);
}

static ckt_layout L(const char *text)
{
    ckt_layout l;
    ckt_error err;
    if (ckt_layout_parse(text, &l, &err)) fail_msg("%s: %s", text, err.msg);
    return l;
}

static void sm90a_runs_only_on_capability_9_0(void **state)
{
    (void)state;
    ckt_error err;
    assert_int_equal(ckt_target_check_device(T("sm_90a"), "sm_90", &err), CKT_OK);
    assert_int_equal(ckt_target_check_device(T("sm_90a"), "sm_89", &err), CKT_EUNSUPPORTED);
    expect_msg(err.msg, "compute capability 9.0");
    expect_msg(err.msg, "sm_89");
    assert_int_equal(ckt_target_check_device(T("sm_90a"), "sm_100", &err), CKT_EUNSUPPORTED);
    assert_int_equal(ckt_target_check_device(T("sm_90a"), "sm_80", &err), CKT_EUNSUPPORTED);
    /* portable targets: the driver decides */
    assert_int_equal(ckt_target_check_device(T("sm_90"), "sm_100", &err), CKT_OK);
    assert_int_equal(ckt_target_check_device(T("sm_80"), "sm_90", &err), CKT_OK);
    assert_int_equal(ckt_target_check_device(T("cpu:sm_90a"), "cpu", &err), CKT_OK);
    assert_int_equal(ckt_target_check_device(NULL, "sm_90", &err), CKT_EINVAL);
    assert_int_equal(ckt_target_check_device(T("sm_90a"), NULL, &err), CKT_EINVAL);
    ckt_target_record r;
    assert_int_equal(ckt_target_parse("cpu:sm_90a", &r, &err), CKT_OK);
    assert_true(r.emulated);
    assert_string_equal(r.arch, "sm_90a");
    assert_int_equal(ckt_target_parse("sm_90a", &r, &err), CKT_OK);
    assert_int_equal(r.compiler, CKT_COMPILER_NVRTC);
    assert_true(r.compiler_known);
}

/* PTX ISA, wgmma m64nNk16 fragments: warp w = l / 32, g = (l % 32) / 4, t = l % 4 */
static void d_formula(int64_t l, int64_t i, int64_t *row, int64_t *col)
{
    int64_t w = l / 32, g = (l % 32) / 4, t = l % 4;
    *row = 16 * w + g + 8 * ((i / 2) % 2);
    *col = 8 * (i / 4) + 2 * t + i % 2;
}

static void a_formula(int64_t l, int64_t i, int64_t *row, int64_t *col)
{
    int64_t w = l / 32, g = (l % 32) / 4, t = l % 4;
    *row = 16 * w + g + 8 * ((i / 2) % 2);
    *col = 2 * t + i % 2 + 8 * (i / 4);
}

/* the 8-bit forms (k32): value i at row 16w + g + 8*((i/4)%2), column 4t + i%4 + 16*(i/8) */
static void a8_formula(int64_t l, int64_t i, int64_t *row, int64_t *col)
{
    int64_t w = l / 32, g = (l % 32) / 4, t = l % 4;
    *row = 16 * w + g + 8 * ((i / 4) % 2);
    *col = 4 * t + i % 4 + 16 * (i / 8);
}

static void wgmma_lane_layouts(void **state)
{
    (void)state;
    int found = 0;
    for (int i = 0; ckt_mma_at(i); i++) {
        const ckt_mma *m = ckt_mma_at(i);
        if (!ckt_mma_is_wgmma(m)) continue;
        found++;
        assert_int_equal(m->m, 64);
        const bool fp8 = m->a == CKT_E4M3 || m->a == CKT_E5M2;
        assert_int_equal(m->k, fp8 ? 32 : 16);
        assert_int_equal(m->lanes, 128);
        assert_int_equal(m->c_values, m->n / 2);
        assert_true(ckt_mma_on_target(m, T("sm_90a")));
        assert_true(ckt_mma_on_target(m, T("cpu:sm_90a")));
        assert_false(ckt_mma_on_target(m, T("sm_90")));
        assert_false(ckt_mma_on_target(m, T("cpu:sm_90")));
        ckt_layout tv;
        ckt_error err;
        for (int o = 0; o < 2; o++) {
            char op = o ? 'C' : 'A';
            int64_t cols = op == 'A' ? m->k : m->n, values = op == 'A' ? m->k / 2 : m->c_values;
            assert_int_equal(ckt_mma_layout(m, op, &tv, &err), CKT_OK);
            char *seen = calloc((size_t)(64 * cols), 1);
            for (int64_t l = 0; l < 128; l++)
                for (int64_t v = 0; v < values; v++) {
                    int64_t off, row, col;
                    assert_int_equal(ckt_layout_eval(&tv, l + 128 * v, &off, &err), CKT_OK);
                    if (op == 'A' && fp8)
                        a8_formula(l, v, &row, &col);
                    else if (op == 'A')
                        a_formula(l, v, &row, &col);
                    else
                        d_formula(l, v, &row, &col);
                    if (off != row * cols + col)
                        fail_msg("%s %c lane %lld value %lld: %lld, formula (%lld, %lld)", m->name,
                                 op, (long long)l, (long long)v, (long long)off, (long long)row,
                                 (long long)col);
                    assert_false(seen[off]);
                    seen[off] = 1;
                }
            free(seen);
        }
        assert_int_equal(ckt_mma_layout(m, 'B', &tv, &err), CKT_EUNSUPPORTED);
        expect_msg(err.msg, "descriptor");
    }
    assert_int_equal(found, 18);
    const ckt_mma *m;
    ckt_error err;
    assert_int_equal(ckt_mma_get("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", &m, &err),
                     CKT_OK);
    assert_string_equal(m->name, "wgmma_m64n128k16_bf16");
    assert_int_equal(ckt_mma_find(T("sm_90a"), CKT_F16, CKT_F16, CKT_F32, 64, 256, 16, &m, &err),
                     CKT_OK);
    assert_string_equal(m->name, "wgmma_m64n256k16_f16");
    /* mma.sync stays on sm_90a (the architecture-specific target keeps the portable instructions)
     */
    assert_int_equal(ckt_mma_find(T("sm_90a"), CKT_F16, CKT_F16, CKT_F32, 16, 0, 0, &m, &err),
                     CKT_OK);
    assert_string_equal(m->name, "mma_m16n8k16_f16");
    assert_int_equal(ckt_mma_find(T("sm_90"), CKT_F16, CKT_F16, CKT_F32, 64, 0, 0, &m, &err),
                     CKT_EUNSUPPORTED);
}

static ckt_wgmma_desc make_ok(const char *layout, int b, int mm, ckt_dtype dt, int64_t rows,
                              int64_t r0, int64_t k0)
{
    ckt_layout l = L(layout);
    ckt_swizzle sw = {b, mm, 3};
    ckt_wgmma_desc d;
    ckt_error err;
    if (ckt_wgmma_desc_make(&l, b ? &sw : NULL, dt, rows, r0, k0, &d, &err))
        fail_msg("%s: %s", layout, err.msg);
    return d;
}

static void k_major_hand_worked(void **state)
{
    (void)state;
    /* 128B: a 128 x 64 f16 tile, rows of 128 bytes, Sw<3,3,3> on elements (Sw<3,4,3> on bytes):
     * 8-row groups 1024 bytes apart; the operand at (64, 16) starts at 64*128 + 16*2 bytes */
    ckt_wgmma_desc d = make_ok("(128,64):(64,1)", 3, 3, CKT_F16, 64, 0, 0);
    assert_false(d.mn_major);
    assert_int_equal(d.swizzle_bytes, 128);
    assert_int_equal(d.start, 0);
    assert_int_equal(d.sbo, 1024);
    d = make_ok("(128,64):(64,1)", 3, 3, CKT_BF16, 64, 64, 16);
    assert_int_equal(d.start, 8224);
    uint64_t bits;
    ckt_error err;
    assert_int_equal(ckt_wgmma_desc_encode(&d, 4096, &bits, &err), CKT_OK);
    /* (4096 + 8224) >> 4 = 770; LBO 16 >> 4 = 1 (unused); SBO 1024 >> 4 = 64; mode 1 (128B) */
    assert_true(bits == (770ull | (1ull << 16) | (64ull << 32) | (1ull << 62)));
    ckt_wgmma_desc back;
    ckt_wgmma_desc_decode(bits, &back);
    assert_int_equal(back.start, 4096 + 8224);
    assert_int_equal(back.sbo, 1024);
    assert_int_equal(back.swizzle_bytes, 128);
    /* 64B and 32B: rows of 64 and 32 bytes, groups 512 and 256 bytes apart */
    d = make_ok("(64,32):(32,1)", 2, 3, CKT_F16, 64, 0, 16);
    assert_int_equal(d.swizzle_bytes, 64);
    assert_int_equal(d.sbo, 512);
    assert_int_equal(d.start, 32);
    d = make_ok("(128,16):(16,1)", 1, 3, CKT_F16, 128, 0, 0);
    assert_int_equal(d.swizzle_bytes, 32);
    assert_int_equal(d.sbo, 256);
    assert_int_equal(ckt_wgmma_desc_encode(&d, 256, &bits, &err), CKT_OK);
    assert_int_equal((int)(bits >> 62), 3);
    /* no swizzle: 8 x 8 core matrices (128 contiguous bytes), K chunks 128 bytes apart (LBO),
     * 8-row groups 256 bytes apart (SBO) */
    d = make_ok("((8,8),(8,2)):((8,128),(1,64))", 0, 0, CKT_F16, 64, 0, 0);
    assert_int_equal(d.swizzle_bytes, 0);
    assert_int_equal(d.lbo, 128);
    assert_int_equal(d.sbo, 256);
    /* K tiled in 64-element atoms one after the other (CuTe's tile_to_shape of the 128B atom):
     * the second atom's K slices start after all 128 rows of the first */
    d = make_ok("(128,(64,2)):(64,(1,8192))", 3, 3, CKT_F16, 64, 64, 80);
    assert_int_equal(d.start, 8192 * 2 + 64 * 128 + 16 * 2);
    assert_int_equal(d.sbo, 1024);
}

static void mn_major_hand_worked(void **state)
{
    (void)state;
    /* 128B, N-major B of N = 128, K = 64: atoms of 64 N x 8 K (rows of 128 bytes along N), the
     * second 64 N after all K (LBO 64*64*2 = 8192), 8-K groups 1024 bytes apart (SBO) */
    ckt_wgmma_desc d = make_ok("((64,2),64):((1,4096),64)", 3, 3, CKT_F16, 128, 0, 16);
    assert_true(d.mn_major);
    assert_int_equal(d.swizzle_bytes, 128);
    assert_int_equal(d.lbo, 8192);
    assert_int_equal(d.sbo, 1024);
    assert_int_equal(d.start, 16 * 128);
    /* the A operand (64 rows) fits one atom: LBO unused */
    d = make_ok("((64,2),64):((1,4096),64)", 3, 3, CKT_F16, 64, 64, 0);
    assert_int_equal(d.start, 8192);
    assert_int_equal(d.sbo, 1024);
    /* no swizzle: 8 contiguous rows (16 bytes), K rows 16 bytes apart, row groups SBO = 128 bytes,
     * 8-K groups LBO = 1024 bytes */
    d = make_ok("((8,8),(8,2)):((1,64),(8,512))", 0, 0, CKT_F16, 64, 0, 0);
    assert_true(d.mn_major);
    assert_int_equal(d.sbo, 128);
    assert_int_equal(d.lbo, 1024);
    /* 64B: atoms of 32 rows */
    d = make_ok("((32,2),16):((1,512),32)", 2, 3, CKT_BF16, 64, 0, 0);
    assert_int_equal(d.swizzle_bytes, 64);
    assert_int_equal(d.lbo, 1024);
    assert_int_equal(d.sbo, 512);
}

static void refuse(const char *layout, int b, int mm, int s, ckt_dtype dt, int64_t rows, int64_t r0,
                   int64_t k0, ckt_status want, const char *msg)
{
    ckt_layout l = L(layout);
    ckt_swizzle sw = {b, mm, s};
    ckt_wgmma_desc d;
    ckt_error err;
    assert_int_equal(ckt_wgmma_desc_make(&l, b ? &sw : NULL, dt, rows, r0, k0, &d, &err), want);
    expect_msg(err.msg, msg);
}

static void layouts_the_hardware_cannot_read(void **state)
{
    (void)state;
    /* a plain row-major tile: rows 128 bytes apart where the unswizzled layout needs 16 */
    refuse("(64,64):(64,1)", 0, 0, 0, CKT_F16, 64, 0, 0, CKT_EINVAL,
           "not one the hardware reads (K-major");
    /* rows of 128 bytes with the 64-byte swizzle */
    refuse("(64,64):(64,1)", 2, 3, 3, CKT_F16, 64, 0, 0, CKT_EINVAL, "the hardware reads");
    /* the byte-unit swizzle given on f16 elements, and a swizzle of another shift */
    refuse("(64,64):(64,1)", 3, 4, 3, CKT_F16, 64, 0, 0, CKT_EINVAL, "Sw<3,5,3> on byte addresses");
    refuse("(64,64):(64,1)", 3, 3, 2, CKT_F16, 64, 0, 0, CKT_EINVAL, "hardware swizzles");
    /* padding rows (CK's trick) break the 8-row groups */
    refuse("(64,64):(72,1)", 3, 3, 3, CKT_F16, 64, 0, 0, CKT_EINVAL, "the hardware reads");
    refuse("(64,16):(32,2)", 0, 0, 0, CKT_F16, 64, 0, 0, CKT_EINVAL,
           "neither K nor the rows are contiguous");
    refuse("(128,64):(64,1)", 3, 3, 3, CKT_F16, 64, 0, 4, CKT_EINVAL, "16-byte boundary");
    refuse("(128,64):(64,1)", 3, 3, 3, CKT_F16, 64, 96, 0, CKT_EINVAL, "does not fit");
    refuse("(128,64):(64,1)", 3, 3, 3, CKT_F16, 64, 0, 56, CKT_EINVAL, "does not fit");
    refuse("(128,64):(64,1)", 3, 3, 3, CKT_F16, 12, 0, 0, CKT_EINVAL, "multiple of 8");
    refuse("(128,64):(64,1)", 3, 3, 3, CKT_F32, 64, 0, 0, CKT_EUNSUPPORTED,
           "f16, bf16, e4m3 and e5m2");
    refuse("(2,64,64):(4096,64,1)", 0, 0, 0, CKT_F16, 64, 0, 0, CKT_EINVAL, "rank 3");
    /* an 8-row group farther than the 14-bit field reaches */
    refuse("((8,8),64):((64,131072),1)", 3, 3, 3, CKT_F16, 64, 0, 0, CKT_EINVAL, "14-bit");
    ckt_wgmma_desc d = make_ok("(128,64):(64,1)", 3, 3, CKT_F16, 64, 0, 0);
    uint64_t bits;
    ckt_error err;
    assert_int_equal(ckt_wgmma_desc_encode(&d, 512, &bits, &err), CKT_EINVAL);
    expect_msg(err.msg, "1024-byte boundary");
    assert_int_equal(ckt_wgmma_desc_encode(&d, 1 << 18, &bits, &err), CKT_EINVAL);
    assert_int_equal(ckt_wgmma_desc_encode(NULL, 0, &bits, &err), CKT_EINVAL);
    assert_int_equal(ckt_wgmma_desc_make(NULL, NULL, CKT_F16, 64, 0, 0, &d, &err), CKT_EINVAL);
    ckt_swizzle sw = {3, 3, 3};
    assert_int_equal(ckt_wgmma_tile_alignment(&sw, CKT_F16), 1024);
    assert_int_equal(ckt_wgmma_tile_alignment(NULL, CKT_F16), 16);
}

/* Every element through the encoded, then decoded descriptor lands where the ckt layout puts it
 * (what the CPU target's emulation does, at a tile base that is not 0). */
static void decoded_descriptors_read_the_layout(void **state)
{
    (void)state;
    static const struct {
        const char *layout;
        int b;
        int64_t rows, r0, k0;
    } cases[] = {
        {"(128,64):(64,1)", 3, 64, 64, 48},
        {"((64,2),64):((1,4096),64)", 3, 128, 0, 32},
        {"(64,32):(32,1)", 2, 64, 0, 16},
        {"((8,8),(8,2)):((8,128),(1,64))", 0, 64, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ckt_layout l = L(cases[c].layout);
        ckt_swizzle sw = {cases[c].b, 3, 3};
        ckt_wgmma_desc d, x;
        ckt_error err;
        assert_int_equal(ckt_wgmma_desc_make(&l, cases[c].b ? &sw : NULL, CKT_F16, cases[c].rows,
                                             cases[c].r0, cases[c].k0, &d, &err),
                         CKT_OK);
        uint64_t bits;
        int64_t base = 3 * 1024;
        assert_int_equal(ckt_wgmma_desc_encode(&d, base, &bits, &err), CKT_OK);
        ckt_wgmma_desc_decode(bits, &x);
        x.elem_bytes = 2;
        x.mn_major = d.mn_major;
        ckt_layout m0;
        assert_int_equal(ckt_layout_mode(&l, 0, &m0, &err), CKT_OK);
        int64_t R = ckt_layout_size(&m0);
        for (int64_t r = 0; r < cases[c].rows; r++)
            for (int64_t k = 0; k < 16; k++) {
                int64_t o;
                assert_int_equal(
                    ckt_layout_eval(&l, (cases[c].r0 + r) + R * (cases[c].k0 + k), &o, &err),
                    CKT_OK);
                if (cases[c].b) o = ckt_swizzle_apply(sw, o);
                assert_int_equal(ckt_wgmma_desc_address(&x, r, k), base + 2 * o);
            }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sm90a_runs_only_on_capability_9_0),
        cmocka_unit_test(wgmma_lane_layouts),
        cmocka_unit_test(k_major_hand_worked),
        cmocka_unit_test(mn_major_hand_worked),
        cmocka_unit_test(layouts_the_hardware_cannot_read),
        cmocka_unit_test(decoded_descriptors_read_the_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
