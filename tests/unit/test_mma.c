/* Matrix instructions as data (ckt/mma.h) and the blockwise GEMM's distributions (ckt/gemm.h):
 * every lane and value of every instruction's A, B and C layouts against the vendors' lane
 * formulas (AMD's CDNA instruction set reference for the MFMA operand layouts, NVIDIA's PTX
 * ISA for the mma.sync fragments), written here independently of mma.c; the block-level A, B and C
 * distributions against an independent formula (waves, repeats, CK's KPack permutation of K);
 * lookups; targets; the builder's op and the emitter's refusals; bad input for every entry point.
 */
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
#include "ckt/gemm.h"
#include "ckt/mma.h"

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

/* (row, col) of the operand tile that lane l, value r holds (A M x K, B K x N, C M x N) */
static void formula(const char *name, char op, int64_t l, int64_t r, int64_t *row, int64_t *col)
{
    if (strstr(name, "32x32x8")) {
        if (op == 'A') {
            *row = l % 32;
            *col = 4 * (l / 32) + r;
        } else if (op == 'B') {
            *row = 4 * (l / 32) + r;
            *col = l % 32;
        } else {
            *row = 8 * (r / 4) + 4 * (l / 32) + r % 4;
            *col = l % 32;
        }
    } else if (strstr(name, "16x16x16")) {
        if (op == 'A') {
            *row = l % 16;
            *col = 4 * (l / 16) + r;
        } else {
            *row = 4 * (l / 16) + r;
            *col = l % 16;
        }
    } else { /* mma.sync m16n8k16, g = l>>2, t = l%4 */
        int64_t g = l >> 2, t = l % 4;
        if (op == 'A') {
            *row = (r == 0 || r == 1 || r == 4 || r == 5) ? g : g + 8;
            *col = r < 4 ? 2 * t + (r & 1) : 2 * t + 8 + (r & 1);
        } else if (op == 'B') {
            *row = r < 2 ? 2 * t + (r & 1) : 2 * t + 8 + (r & 1);
            *col = g;
        } else {
            *row = r < 2 ? g : g + 8;
            *col = 2 * t + (r & 1);
        }
    }
}

static void every_lane_of_every_instruction(void **state)
{
    (void)state;
    assert_int_equal(ckt_mma_count(), 25); /* 6 of them the 8-bit wgmma forms, 12 the 16-bit ones */
    for (int i = 0; i < ckt_mma_count(); i++) {
        const ckt_mma *m = ckt_mma_at(i);
        assert_non_null(m);
        if (ckt_mma_is_wgmma(m)) continue; /* test_wgmma.c: B through descriptors */
        for (int o = 0; o < 3; o++) {
            char op = "ABC"[o];
            ckt_layout tv;
            ckt_error err;
            assert_int_equal(ckt_mma_layout(m, op, &tv, &err), CKT_OK);
            int64_t rows, cols,
                values = op == 'A'   ? m->a_values
                         : op == 'B' ? m->b_values
                                     : m->c_values;
            ckt_mma_operand_shape(m, op, &rows, &cols);
            assert_int_equal(rows * cols, m->lanes * values); /* every element once */
            assert_int_equal(ckt_layout_size(&tv), m->lanes * values);
            char *seen = calloc((size_t)(rows * cols), 1);
            for (int64_t l = 0; l < m->lanes; l++)
                for (int64_t r = 0; r < values; r++) {
                    int64_t off, row, col;
                    assert_int_equal(ckt_layout_eval(&tv, l + m->lanes * r, &off, &err), CKT_OK);
                    formula(m->name, op, l, r, &row, &col);
                    if (off != row * cols + col)
                        fail_msg(
                            "%s %c lane %lld value %lld: layout offset %lld, formula (%lld, %lld)",
                            m->name, op, (long long)l, (long long)r, (long long)off, (long long)row,
                            (long long)col);
                    assert_false(seen[off]);
                    seen[off] = 1;
                }
            free(seen);
        }
    }
}

static void descriptions_and_targets(void **state)
{
    (void)state;
    const ckt_mma *m;
    ckt_error err;
    assert_int_equal(ckt_mma_get("v_mfma_f32_32x32x8f16", &m, &err), CKT_OK);
    assert_string_equal(m->name, "mfma_f32_32x32x8f16");
    assert_int_equal(m->m * 1000000 + m->n * 1000 + m->k, 32032008);
    assert_int_equal(m->a, CKT_F16);
    assert_int_equal(m->c, CKT_F32);
    assert_int_equal(m->lanes, 64);
    assert_int_equal(ckt_mma_get("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", &m, &err),
                     CKT_OK);
    assert_string_equal(m->name, "mma_m16n8k16_bf16");
    assert_int_equal(m->lanes, 32);
    assert_true(m->ldmatrix);
    /* gfx908 has the f16 MFMAs but neither bf16_1k form; gfx90a has all four */
    assert_true(ckt_mma_on_target(ckt_mma_at(0), T("gfx908")));
    assert_int_equal(ckt_mma_get("mfma_f32_32x32x8bf16_1k", &m, &err), CKT_OK);
    assert_false(ckt_mma_on_target(m, T("gfx908")));
    assert_true(ckt_mma_on_target(m, T("gfx90a")));
    assert_true(ckt_mma_on_target(m, T("cpu"))); /* the CPU target emulates gfx90a */
    assert_false(ckt_mma_on_target(m, T("cpu:sm_90")));
    assert_false(ckt_mma_on_target(m, T("sm_90")));
    assert_int_equal(ckt_mma_check_target(m, T("gfx908"), &err), CKT_EUNSUPPORTED);
    expect_msg(err.msg, "gfx90a");
    int n = 0;
    while (ckt_mma_for_target(T("gfx908"), n)) n++;
    assert_int_equal(n, 2);
    n = 0;
    while (ckt_mma_for_target(T("cpu:sm_80"), n)) n++;
    assert_int_equal(n, 3); /* mma.sync f16, bf16 and the emulation-only f32 */
    assert_int_equal(ckt_mma_find(T("cpu:sm_90"), CKT_F32, CKT_F32, CKT_F32, 0, 0, 0, &m, &err),
                     CKT_OK);
    assert_string_equal(m->name, "emu_f32_32x32x8f32");
    assert_false(ckt_mma_on_target(m, T("gfx90a")));
    assert_false(ckt_mma_on_target(m, T("sm_90")));
    assert_true(ckt_mma_on_target(m, T("cpu")));
    assert_null(ckt_mma_for_target(T("gfx1100"), 0));
    assert_null(ckt_mma_for_target(NULL, 0));
    assert_int_equal(ckt_mma_find(T("sm_90"), CKT_BF16, CKT_BF16, CKT_F32, 0, 0, 0, &m, &err),
                     CKT_OK);
    assert_string_equal(m->name, "mma_m16n8k16_bf16");
    assert_int_equal(ckt_mma_find(T("gfx90a"), CKT_F16, CKT_F16, CKT_F32, 16, 16, 16, &m, &err),
                     CKT_OK);
    assert_string_equal(m->name, "mfma_f32_16x16x16f16");
    /* sm_90a is sm_90 with more enabled: the same mma.sync, listed once under sm_90 */
    assert_int_equal(ckt_mma_get("mma_m16n8k16_f16", &m, &err), CKT_OK);
    assert_true(ckt_mma_on_target(m, T("sm_90a")));
    assert_true(ckt_mma_on_target(m, T("cpu:sm_90a")));
    char buf[64];
    assert_string_equal(ckt_mma_targets(m, buf, sizeof buf), "sm_80,sm_90");
    assert_string_equal(ckt_mma_targets(ckt_mma_at(0), buf, sizeof buf),
                        "gfx908,gfx90a,gfx942,gfx950");
    assert_int_equal(ckt_mma_get("mfma_f32_16x16x16bf16_1k", &m, &err), CKT_OK);
    assert_string_equal(ckt_mma_targets(m, buf, sizeof buf), "gfx90a,gfx942,gfx950");
    assert_int_equal(ckt_mma_get("emu_f32_32x32x8f32", &m, &err), CKT_OK);
    assert_string_equal(ckt_mma_targets(m, buf, sizeof buf), "cpu");
}

static void lookup_refusals(void **state)
{
    (void)state;
    const ckt_mma *m;
    ckt_error err;
    assert_int_equal(ckt_mma_get("mfma_f32_64x64", &m, &err), CKT_EINVAL);
    expect_msg(err.msg, "unknown instruction 'mfma_f32_64x64'");
    expect_msg(err.msg, "mma_m16n8k16_f16");
    assert_int_equal(ckt_mma_get(NULL, &m, &err), CKT_EINVAL);
    assert_int_equal(ckt_mma_find(T("gfx908"), CKT_BF16, CKT_BF16, CKT_F32, 0, 0, 0, &m, &err),
                     CKT_EUNSUPPORTED);
    expect_msg(err.msg, "gfx908");
    assert_int_equal(ckt_mma_find(T("gfx90a"), CKT_F32, CKT_F32, CKT_F32, 0, 0, 0, &m, &err),
                     CKT_EUNSUPPORTED); /* f32: the CPU target only */
    assert_int_equal(ckt_mma_find(T("gfx90a"), CKT_F16, CKT_F16, CKT_F32, -1, 0, 0, &m, &err),
                     CKT_EINVAL);
    assert_int_equal(ckt_mma_find(NULL, CKT_F16, CKT_F16, CKT_F32, 0, 0, 0, &m, &err), CKT_EINVAL);
    ckt_layout tv;
    assert_int_equal(ckt_mma_layout(ckt_mma_at(0), 'X', &tv, &err), CKT_EINVAL);
    expect_msg(err.msg, "operand 'X'");
    assert_int_equal(ckt_mma_layout(NULL, 'A', &tv, &err), CKT_EINVAL);
    int64_t rows = 1, cols = 1;
    ckt_mma_operand_shape(ckt_mma_at(0), 'Q', &rows, &cols);
    assert_int_equal(rows + cols, 0);
    ckt_mma_operand_shape(NULL, 'A', &rows, &cols);
    assert_int_equal(rows + cols, 0);
    char buf[8];
    assert_null(ckt_mma_targets(ckt_mma_at(0), buf, 0));
    assert_string_equal(ckt_mma_targets(ckt_mma_at(0), buf, sizeof buf),
                        "gfx908"); /* truncated to whole names */
    assert_string_equal(ckt_mma_targets(NULL, buf, sizeof buf), "");
    assert_false(ckt_mma_on_target(NULL, T("gfx90a")));
    assert_false(ckt_mma_on_target(ckt_mma_at(0), T("a_very_long_target_name")));
    assert_false(ckt_mma_on_target(ckt_mma_at(0), T("cpu:gfx1100"))); /* not a target */
    assert_int_equal(ckt_mma_check_target(ckt_mma_at(0), T("sm_90"), &err), CKT_EUNSUPPORTED);
    expect_msg(err.msg, "target 'sm_90' (sm_90) has no v_mfma_f32_32x32x8f16");
    expect_msg(err.msg, "it exists on gfx908,gfx90a,gfx942,gfx950");
    assert_int_equal(ckt_mma_check_target(NULL, T("gfx90a"), &err), CKT_EINVAL);
    assert_null(ckt_mma_at(-1));
    assert_null(ckt_mma_at(ckt_mma_count()));
}

static void traits_and_geometry(void **state)
{
    (void)state;
    ckt_gemm_traits t;
    ckt_gemm_geom g;
    ckt_error err;
    assert_int_equal(ckt_gemm_traits_preset("BlockwisGemmXdlTraits_32x32Xdl_4x2XdlPerWave_8K1",
                                            CKT_F16, &t, &err),
                     CKT_OK);
    assert_string_equal(t.instr->name, "mfma_f32_32x32x8f16");
    assert_int_equal(t.m_per_wave * 100 + t.n_per_wave * 10 + t.k_pack, 428);
    assert_int_equal(ckt_gemm_traits_preset("16x16Xdl_2x2XdlPerWave_4K1", CKT_BF16, &t, &err),
                     CKT_OK);
    assert_string_equal(t.instr->name, "mfma_f32_16x16x16bf16_1k");
    assert_int_equal(ckt_gemm_traits_preset("64x64Xdl_2x2XdlPerWave_4K1", CKT_F16, &t, &err),
                     CKT_EINVAL);
    assert_int_equal(ckt_gemm_traits_preset("32x32Xdl_2x2XdlPerWave_4K1", CKT_F32, &t, &err),
                     CKT_EINVAL);
    expect_msg(err.msg, "f32");
    assert_int_equal(ckt_gemm_traits_preset("32x32", CKT_F16, &t, &err), CKT_EINVAL);
    assert_int_equal(ckt_gemm_traits_make("mfma_f32_32x32x8f16", 0, 2, 8, &t, &err), CKT_EINVAL);
    expect_msg(err.msg, "m_per_wave");
    assert_int_equal(ckt_gemm_traits_make("mfma_f32_32x32x8f16", 2, -1, 8, &t, &err), CKT_EINVAL);
    expect_msg(err.msg, "n_per_wave");
    assert_int_equal(ckt_gemm_traits_make("mfma_f32_32x32x8f16", 2, 2, 6, &t, &err), CKT_EINVAL);
    expect_msg(err.msg, "k_pack 6");
    assert_int_equal(ckt_gemm_traits_make("nope", 2, 2, 8, &t, &err), CKT_EINVAL);
    expect_msg(err.msg, "instr");
    assert_int_equal(ckt_gemm_traits_make("mfma_f32_32x32x8f16", 2, 2, 8, &t, &err), CKT_OK);
    assert_int_equal(ckt_gemm_geometry(&t, 128, 128, 32, 256, &g, &err), CKT_OK);
    assert_int_equal(g.waves_m * 10 + g.waves_n, 22);
    assert_int_equal(g.k_step, 16);
    assert_int_equal(ckt_gemm_geometry(&t, 96, 128, 32, 256, &g, &err), CKT_EINVAL);
    expect_msg(err.msg, "MPerBlock 96");
    assert_int_equal(ckt_gemm_geometry(&t, 128, 100, 32, 256, &g, &err), CKT_EINVAL);
    expect_msg(err.msg, "NPerBlock 100");
    assert_int_equal(ckt_gemm_geometry(&t, 128, 128, 24, 256, &g, &err), CKT_EINVAL);
    expect_msg(err.msg, "KPerBlock 24");
    assert_int_equal(ckt_gemm_geometry(&t, 128, 128, 32, 128, &g, &err), CKT_EINVAL);
    expect_msg(err.msg, "threads");
    assert_int_equal(ckt_gemm_geometry(NULL, 128, 128, 32, 256, &g, &err), CKT_EINVAL);
}

/* The block-level distributions against (waves, repeats, KPack) written out: thread t is lane
 * t % lanes of wave t / lanes = wm * NWaves + wn; value orders of ckt/gemm.h. */
static void check_block_dists(const ckt_gemm_traits *t, int64_t mpb, int64_t npb, int64_t threads)
{
    const ckt_mma *m = t->instr;
    ckt_gemm_geom g;
    ckt_error err;
    assert_int_equal(ckt_gemm_geometry(t, mpb, npb, 0, threads, &g, &err), CKT_OK);
    int64_t P = g.pack, c = m->k_chunk, MX = t->m_per_wave, NX = t->n_per_wave;
    for (int o = 0; o < 3; o++) {
        char op = "ABC"[o];
        ckt_dist d;
        if (ckt_gemm_dist(t, &g, op, &d, &err)) fail_msg("%s %c: %s", m->name, op, err.msg);
        int64_t vals = op == 'A' ? m->a_values : op == 'B' ? m->b_values : m->c_values;
        for (int64_t tid = 0; tid < threads; tid++) {
            int64_t lane = tid % m->lanes, w = tid / m->lanes, wm = w / g.waves_n,
                    wn = w % g.waves_n;
            for (int64_t v = 0; v < d.nvalues; v++) {
                int64_t r = v % vals, q = v / vals, row, col, want[2], got[2];
                formula(m->name, op, lane, r, &row, &col);
                if (op == 'C') {
                    int64_t ni = q % NX, mi = q / NX;
                    want[0] = wm * MX * m->m + mi * m->m + row;
                    want[1] = wn * NX * m->n + ni * m->n + col;
                } else {
                    int64_t kp = q % P, rep = q / P, kk = op == 'A' ? col : row,
                            mn = op == 'A' ? row : col;
                    int64_t kdim = (kk / c) * c * P + kp * c + kk % c; /* CK's KPack order */
                    want[0] = op == 'A' ? wm * MX * m->m + rep * m->m + mn
                                        : wn * NX * m->n + rep * m->n + mn;
                    want[1] = kdim;
                }
                ckt_dist_coord(&d, tid, v, got);
                if (got[0] != want[0] || got[1] != want[1])
                    fail_msg("%s %c thread %lld value %lld: (%lld, %lld), want (%lld, %lld)",
                             m->name, op, (long long)tid, (long long)v, (long long)got[0],
                             (long long)got[1], (long long)want[0], (long long)want[1]);
            }
        }
    }
}

static void block_distributions(void **state)
{
    (void)state;
    ckt_gemm_traits t;
    ckt_error err;
    const struct {
        const char *instr;
        int64_t mx, nx, kp, mpb, npb, threads;
    } cases[] = {
        {"mfma_f32_32x32x8f16", 2, 2, 8, 128, 128, 256},
        {"mfma_f32_32x32x8bf16_1k", 1, 2, 4, 32, 128, 128},
        {"mfma_f32_16x16x16f16", 4, 2, 16, 128, 64, 256},
        {"mfma_f32_16x16x16bf16_1k", 1, 1, 4, 16, 16, 64},
        {"mma_m16n8k16_f16", 4, 8, 4, 128, 128, 128},
        {"mma_m16n8k16_bf16", 2, 2, 2, 64, 32, 128},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(
            ckt_gemm_traits_make(cases[i].instr, cases[i].mx, cases[i].nx, cases[i].kp, &t, &err),
            CKT_OK);
        check_block_dists(&t, cases[i].mpb, cases[i].npb, cases[i].threads);
    }
}

/* ldmatrix as the PTX ISA defines it: thread l of a warp receives in register j the elements at
 * row l/4, columns 2*(l%4) and 2*(l%4)+1 of matrix j, whose row r starts at the address thread
 * 8*j + r supplies. With the address distribution and the register order of the emitter, every
 * thread must receive exactly the fragment values the A and B distributions assign to it. */
static void ldmatrix_delivers_the_fragments(void **state)
{
    (void)state;
    const struct {
        const char *instr;
        int64_t mx, nx, mpb, npb, threads;
    } cases[] = {{"mma_m16n8k16_f16", 2, 4, 64, 64, 128},
                 {"mma_m16n8k16_bf16", 4, 4, 128, 128, 256},
                 {"mma_m16n8k16_f16", 1, 1, 16, 8, 32}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ckt_gemm_traits t;
        ckt_gemm_geom g;
        ckt_error err;
        assert_int_equal(
            ckt_gemm_traits_make(cases[c].instr, cases[c].mx, cases[c].nx, 2, &t, &err), CKT_OK);
        assert_int_equal(
            ckt_gemm_geometry(&t, cases[c].mpb, cases[c].npb, 0, cases[c].threads, &g, &err),
            CKT_OK);
        for (int o = 0; o < 4; o++) {
            char op = "ABab"[o], upper = o < 2 ? op : (char)(op - 'a' + 'A');
            ckt_dist frag, addr;
            assert_int_equal(ckt_gemm_dist(&t, &g, upper, &frag, &err), CKT_OK);
            assert_int_equal(ckt_gemm_ldmatrix_dist(&t, &g, op, &addr, &err), CKT_OK);
            /* x4 for A; for B x4 over two N tiles when the wave has an even number, else x2 */
            int64_t nregs = upper == 'A' || t.n_per_wave % 2 == 0 ? 4 : 2, per = 2 * nregs;
            int64_t reps = (upper == 'A' ? t.m_per_wave * t.instr->a_values
                                         : t.n_per_wave * t.instr->b_values) /
                           per;
            assert_int_equal(addr.nvalues, 8 * reps);
            for (int64_t tid = 0; tid < g.threads; tid++) {
                int64_t lane = tid % 32, base = tid - lane;
                for (int64_t rep = 0; rep < reps; rep++)
                    for (int64_t j = 0; j < nregs; j++)
                        for (int64_t h = 0; h < 2; h++) {
                            /* the register's half comes from matrix j: plain, row lane / 4, column
                             * 2 (lane % 4) + h; transposed (.trans), row 2 (lane % 4) + h, column
                             * lane / 4 (rows are the 16-byte lines lanes 8 j .. 8 j + 7 point at)
                             */
                            int64_t got[2], want[2];
                            if (o < 2) {
                                ckt_dist_coord(&addr, base + 8 * j + lane / 4, 8 * rep, got);
                                got[1] += 2 * (lane % 4) + h;
                            } else {
                                ckt_dist_coord(&addr, base + 8 * j + 2 * (lane % 4) + h,
                                               8 * rep + lane / 4, got);
                            }
                            ckt_dist_coord(&frag, tid, rep * per + 2 * j + h, want);
                            if (got[0] != want[0] || got[1] != want[1])
                                fail_msg(
                                    "%s %c thread %lld repeat %lld register %lld half %lld: "
                                    "ldmatrix gives (%lld, %lld), the fragment is (%lld, %lld)",
                                    cases[c].instr, op, (long long)tid, (long long)rep,
                                    (long long)j, (long long)h, (long long)got[0],
                                    (long long)got[1], (long long)want[0], (long long)want[1]);
                        }
            }
        }
    }
    /* no ldmatrix form: K packs of more than one instruction, MFMA */
    ckt_gemm_traits t;
    ckt_gemm_geom g;
    ckt_dist d;
    ckt_error err;
    assert_int_equal(ckt_gemm_traits_make("mma_m16n8k16_f16", 2, 4, 4, &t, &err), CKT_OK);
    assert_int_equal(ckt_gemm_geometry(&t, 64, 64, 0, 128, &g, &err), CKT_OK);
    assert_int_equal(ckt_gemm_ldmatrix_dist(&t, &g, 'A', &d, &err), CKT_EUNSUPPORTED);
    expect_msg(err.msg, "k_pack 4");
    assert_int_equal(ckt_gemm_traits_make("mma_m16n8k16_f16", 2, 4, 2, &t, &err), CKT_OK);
    assert_int_equal(ckt_gemm_geometry(&t, 64, 64, 0, 128, &g, &err), CKT_OK);
    assert_int_equal(ckt_gemm_ldmatrix_dist(&t, &g, 'C', &d, &err), CKT_EINVAL);
    assert_int_equal(ckt_gemm_traits_make("mfma_f32_32x32x8f16", 2, 2, 4, &t, &err), CKT_OK);
    assert_int_equal(ckt_gemm_geometry(&t, 128, 128, 0, 256, &g, &err), CKT_OK);
    assert_int_equal(ckt_gemm_ldmatrix_dist(&t, &g, 'A', &d, &err), CKT_EUNSUPPORTED);
}

/* A kernel with one blockwise GEMM over two LDS tiles. */
static ckt_kernel *gemm_kernel(const char *instr, ckt_dtype dt, int64_t block, int64_t mx,
                               int64_t nx, int64_t kp, int64_t mpb, int64_t npb, int64_t kpb)
{
    ckt_kernel *k;
    ckt_error err;
    assert_int_equal(ckt_kernel_create("g", block, &k, &err), CKT_OK);
    ckt_gemm_traits t;
    assert_int_equal(ckt_gemm_traits_make(instr, mx, nx, kp, &t, &err), CKT_OK);
    char s[64];
    ckt_layout la, lb;
    snprintf(s, sizeof s, "(%lld,%lld):(%lld,1)", (long long)mpb, (long long)kpb, (long long)kpb);
    assert_int_equal(ckt_layout_parse(s, &la, &err), CKT_OK);
    snprintf(s, sizeof s, "(%lld,%lld):(%lld,1)", (long long)npb, (long long)kpb, (long long)kpb);
    assert_int_equal(ckt_layout_parse(s, &lb, &err), CKT_OK);
    int a, b, c;
    assert_int_equal(ckt_kernel_lds(k, dt, &la, NULL, &a, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(k, dt, &lb, NULL, &b, &err), CKT_OK);
    assert_int_equal(ckt_kernel_gemm_c_vgpr(k, &t, mpb, npb, &c, NULL, &err), CKT_OK);
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a, b, c, &t, &err), CKT_OK);
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK); /* emitting does not change a kernel */
    return k;
}

/* blockwise_gemm with a register A (ckt_kernel_regather), ckt_kernel_broadcast and
 * ckt_kernel_lds_view: what they build and what they refuse */
static void register_a_broadcast_and_views(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k;
    ckt_gemm_traits t1, t2;
    assert_int_equal(ckt_gemm_traits_make("mma_m16n8k16_f16", 1, 4, 2, &t1, &err), CKT_OK);
    assert_int_equal(ckt_gemm_traits_make("mma_m16n8k16_f16", 1, 2, 2, &t2, &err), CKT_OK);
    assert_int_equal(ckt_kernel_create("rega", 128, &k, &err), CKT_OK);
    ckt_layout la, lb, lb2, lbig;
    assert_int_equal(ckt_layout_parse("(64,16):(16,1)", &la, &err), CKT_OK);
    assert_int_equal(ckt_layout_parse("(32,16):(16,1)", &lb, &err), CKT_OK);
    assert_int_equal(ckt_layout_parse("(16,32):(32,1)", &lb2, &err), CKT_OK); /* N x K of P V */
    assert_int_equal(ckt_layout_parse("(64,64):(64,1)", &lbig, &err), CKT_OK);
    int a, b, b2, s, sdist, p, acc, acc_dist;
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &la, NULL, &a, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &lb, NULL, &b, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &lb2, NULL, &b2, &err), CKT_OK);
    assert_int_equal(ckt_kernel_gemm_c_vgpr(k, &t1, 64, 32, &s, &sdist, &err), CKT_OK);
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a, b, s, &t1, &err), CKT_OK);
    /* P: the 64 x 32 accumulator's fragments in f16, the next product's A */
    assert_int_equal(
        ckt_kernel_registers(k, CKT_F16, sdist, ckt_kernel_tensor(k, s)->nvalues, &p, &err),
        CKT_OK);
    assert_int_equal(ckt_kernel_gemm_c_vgpr(k, &t2, 64, 16, &acc, &acc_dist, &err), CKT_OK);
    assert_int_equal(ckt_kernel_blockwise_gemm(k, p, b2, acc, &t2, &err), CKT_OK);
    /* a row statistic of S spread over acc's tile of the same rows */
    int bc;
    assert_int_equal(ckt_kernel_broadcast(k, s, acc, 1, &bc, &err), CKT_OK);
    assert_int_equal(ckt_kernel_broadcast(k, s, acc, 2, &bc, &err), CKT_EINVAL);
    expect_msg(err.msg, "dim 2 outside");
    assert_int_equal(ckt_kernel_broadcast(k, s, acc, 0, &bc, &err), CKT_EINVAL);
    expect_msg(err.msg, "differ in dimension 1");
    assert_int_equal(ckt_kernel_broadcast(k, a, acc, 1, &bc, &err), CKT_EINVAL);
    expect_msg(err.msg, "distributed register");
    /* a register A the lanes do not hold as fragments: a copy's row-major partition */
    ckt_layout thr;
    ckt_dist rd;
    int rdi, r;
    int64_t len[2] = {64, 32};
    assert_int_equal(ckt_layout_parse("(32,4):(4,1)", &thr, &err), CKT_OK);
    assert_int_equal(ckt_dist_from_thread_layout(&thr, 2, len, 1, 8, NULL, &rd, &err), CKT_OK);
    assert_int_equal(ckt_kernel_add_dist(k, &rd, &rdi, &err), CKT_OK);
    assert_int_equal(ckt_kernel_registers(k, CKT_F16, rdi, rd.nvalues, &r, &err), CKT_OK);
    assert_int_equal(ckt_kernel_blockwise_gemm(k, r, b2, acc, &t2, &err), CKT_EINVAL);
    expect_msg(err.msg, "does not hold in the source");
    int64_t at[3] = {0, 0, 0};
    int out;
    assert_int_equal(ckt_kernel_regather(k, p, 999, at, &out, &err), CKT_EINVAL);
    expect_msg(err.msg, "no distribution");
    assert_int_equal(ckt_kernel_regather(k, a, acc_dist, at, &out, &err), CKT_EINVAL);
    expect_msg(err.msg, "distributed register");
    at[1] = 32; /* past the source's columns */
    assert_int_equal(ckt_kernel_regather(k, p, acc_dist, at, &out, &err), CKT_EINVAL);
    expect_msg(err.msg, "differ in dimension 1");
    /* views: the same elements through another layout, no larger */
    int ring, v;
    ckt_layout l4, l2, lneg;
    assert_int_equal(ckt_layout_parse("(1,1,32,64):(0,0,64,1)", &l4, &err), CKT_OK);
    assert_int_equal(ckt_layout_parse("(32,64):(64,1)", &l2, &err), CKT_OK);
    assert_int_equal(ckt_layout_parse("(32,64):(-64,1)", &lneg, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &l4, NULL, &ring, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds_stages(k, ring, 2, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds_view(k, ring, &l2, &v, &err), CKT_OK);
    assert_int_equal(ckt_kernel_tensor(k, v)->rank, 2);
    assert_int_equal(ckt_kernel_tensor(k, v)->stages, 2);
    assert_int_equal(ckt_kernel_tensor(k, v)->lds_offset, ckt_kernel_tensor(k, ring)->lds_offset);
    assert_int_equal(ckt_kernel_lds_view(k, ring, &lbig, &v, &err), CKT_EINVAL);
    expect_msg(err.msg, "spans 4096 elements, more than the 2048");
    assert_int_equal(ckt_kernel_lds_view(k, ring, &lneg, &v, &err), CKT_EINVAL);
    expect_msg(err.msg, "negative");
    assert_int_equal(ckt_kernel_lds_view(k, s, &l2, &v, &err), CKT_EINVAL);
    expect_msg(err.msg, "not an LDS tensor");
    assert_int_equal(ckt_kernel_lds_view(k, ring, NULL, &v, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    char *src;
    assert_int_equal(ckt_emit_named(k, "cpu:sm_90", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "relabelled"));
    free(src);
    assert_int_equal(ckt_emit_named(k, "sm_90", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "spread along dim 1"));
    free(src);
    ckt_kernel_destroy(k);
}

/* ckt_kernel_blockwise_gemm_zero: c = a b^T, c's old values ignored — on wgmma one op whose
 * first K step has scale-d 0 (CUDA: the predicate's input; C: the tile zeroed), on mma.sync a
 * clear and then the product; bad arguments refused as blockwise_gemm's */
static void zeroing_gemm(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k;
    ckt_gemm_traits t, tm;
    assert_int_equal(ckt_gemm_traits_make("wgmma_m64n64k16_f16", 1, 1, 16, &t, &err), CKT_OK);
    assert_int_equal(ckt_gemm_traits_make("mma_m16n8k16_f16", 2, 4, 2, &tm, &err), CKT_OK);
    assert_int_equal(ckt_kernel_create("z", 128, &k, &err), CKT_OK);
    ckt_layout l;
    assert_int_equal(ckt_layout_parse("(64,64):(64,1)", &l, &err), CKT_OK);
    ckt_swizzle sw = {3, 3, 3};
    int a, b, c, d, pa, pb;
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &l, &sw, &a, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &l, &sw, &b, &err), CKT_OK);
    assert_int_equal(ckt_kernel_gemm_c_vgpr(k, &t, 64, 64, &c, NULL, &err), CKT_OK);
    int before = ckt_kernel_nops(k);
    assert_int_equal(ckt_kernel_blockwise_gemm_zero(k, a, b, c, &t, &err), CKT_OK);
    assert_int_equal(ckt_kernel_nops(k), before + 1);
    const ckt_kop *op = ckt_kernel_op(k, before);
    assert_int_equal(op->kind, CKT_OP_WGMMA);
    int64_t always = 0; /* zero: an expression, here the constant 1 (always) */
    assert_true(ckt_expr_is_const(ckt_kernel_exprs(k), op->zero, &always));
    assert_int_equal(always, 1);
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a, b, c, &t, &err), CKT_OK);
    assert_int_equal(ckt_kernel_op(k, before + 1)->zero, CKT_EXPR_NONE);
    /* refusals: as blockwise_gemm's */
    assert_int_equal(ckt_kernel_blockwise_gemm_zero(NULL, a, b, c, &t, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_blockwise_gemm_zero(k, a, b, c, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_blockwise_gemm_zero(k, a, b, 99, &t, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_blockwise_gemm_zero(k, c, b, c, &t, &err), CKT_EINVAL);
    /* zero_if: the condition an index expression that every thread of a warpgroup shares */
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    ckt_expr_id tid0 = ckt_expr_binary(ex, CKT_E_EQ, ckt_expr_tid(ex), ckt_expr_int(ex, 0));
    assert_int_equal(ckt_kernel_blockwise_gemm_zero_if(k, a, b, c, &t, tid0, &err), CKT_EINVAL);
    expect_msg(err.msg, "same on every thread");
    assert_int_equal(
        ckt_kernel_blockwise_gemm_zero_if(k, a, b, c, &t, ckt_expr_float(ex, 1.0f), &err),
        CKT_EINVAL);
    assert_int_equal(ckt_kernel_blockwise_gemm_zero_if(k, a, b, c, &t, (ckt_expr_id)1000000, &err),
                     CKT_EINVAL);
    assert_int_equal(ckt_kernel_blockwise_gemm_zero_if(NULL, a, b, c, &t, tid0, &err), CKT_EINVAL);
    ckt_expr_id first = ckt_expr_binary(ex, CKT_E_EQ, ckt_expr_bid(ex, 0), ckt_expr_int(ex, 0));
    before = ckt_kernel_nops(k);
    assert_int_equal(ckt_kernel_blockwise_gemm_zero_if(k, a, b, c, &t, first, &err), CKT_OK);
    assert_int_equal(ckt_kernel_op(k, before)->zero, first);
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    char *src;
    assert_int_equal(ckt_emit_named(k, "sm_90a", &src, &err), CKT_OK);
    /* (every K step in one statement: the first step's scale-d its operand, 0 for zero = true) */
    assert_non_null(strstr(src, "\"r\"(0));"));
    assert_non_null(strstr(src, "\"r\"(1));"));
    free(src);
    assert_int_equal(ckt_emit_named(k, "cpu:sm_90a", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "if (ckt_kk == 0) ckt_emu_wgmma_zero("));
    free(src);
    ckt_kernel_destroy(k);
    /* mma.sync: a clear, then the product */
    assert_int_equal(ckt_kernel_create("zm", 128, &k, &err), CKT_OK);
    ckt_layout lr;
    assert_int_equal(ckt_layout_parse("(64,32):(32,1)", &lr, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &lr, NULL, &pa, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &lr, NULL, &pb, &err), CKT_OK);
    assert_int_equal(ckt_kernel_gemm_c_vgpr(k, &tm, 64, 64, &d, NULL, &err), CKT_OK);
    before = ckt_kernel_nops(k);
    assert_int_equal(ckt_kernel_blockwise_gemm_zero(k, pa, pb, d, &tm, &err), CKT_OK);
    assert_int_equal(ckt_kernel_op(k, before)->kind, CKT_OP_CLEAR);
    assert_true(ckt_kernel_nops(k) > before + 1);
    for (int i = before; i < ckt_kernel_nops(k); i++)
        assert_int_equal(ckt_kernel_op(k, i)->zero, CKT_EXPR_NONE);
    ckt_kernel_destroy(k);
}

/* wgmma with A from registers (the RS form): accepted in the m64nKk16 accumulator's distribution
 * only; the GPU's LDS leaves out the reduction scratch a lane-exchange reduction never touches */
static void wgmma_register_a_and_gpu_lds(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k;
    ckt_gemm_traits t;
    assert_int_equal(ckt_gemm_traits_make("wgmma_m64n64k16_f16", 1, 1, 16, &t, &err), CKT_OK);
    assert_int_equal(ckt_kernel_create("rs", 128, &k, &err), CKT_OK);
    ckt_layout lq, lb;
    assert_int_equal(ckt_layout_parse("(64,64):(64,1)", &lq, &err), CKT_OK);
    assert_int_equal(ckt_layout_parse("(64,64):(64,1)", &lb, &err), CKT_OK);
    ckt_swizzle sw = {3, 3, 3};
    int q, b, s, sdist, p, acc, red;
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &lq, &sw, &q, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &lb, &sw, &b, &err), CKT_OK);
    assert_int_equal(ckt_kernel_gemm_c_vgpr(k, &t, 64, 64, &s, &sdist, &err), CKT_OK);
    assert_int_equal(ckt_kernel_blockwise_gemm(k, q, b, s, &t, &err), CKT_OK);
    assert_int_equal(ckt_kernel_reduce_dim(k, s, 1, CKT_REDUCE_MAX, CKT_F32, &red, &err), CKT_OK);
    /* P: the accumulator in f16, the next product's A from registers */
    assert_int_equal(
        ckt_kernel_registers(k, CKT_F16, sdist, ckt_kernel_tensor(k, s)->nvalues, &p, &err),
        CKT_OK);
    assert_int_equal(ckt_kernel_gemm_c_vgpr(k, &t, 64, 64, &acc, NULL, &err), CKT_OK);
    assert_int_equal(ckt_kernel_blockwise_gemm(k, p, b, acc, &t, &err), CKT_OK);
    /* a register tile in another distribution: refused, naming the place */
    ckt_layout thr;
    ckt_dist rd;
    int rdi, r;
    int64_t len[2] = {64, 64};
    assert_int_equal(ckt_layout_parse("(16,8):(8,1)", &thr, &err), CKT_OK);
    assert_int_equal(ckt_dist_from_thread_layout(&thr, 2, len, 1, 8, NULL, &rd, &err), CKT_OK);
    assert_int_equal(ckt_kernel_add_dist(k, &rd, &rdi, &err), CKT_OK);
    assert_int_equal(ckt_kernel_registers(k, CKT_F16, rdi, rd.nvalues, &r, &err), CKT_OK);
    assert_int_equal(ckt_kernel_blockwise_gemm(k, r, b, acc, &t, &err), CKT_EINVAL);
    expect_msg(err.msg, "accumulator distribution: thread");
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    char *src;
    assert_int_equal(ckt_emit_named(k, "sm_90a", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "{%32, %33, %34, %35}")); /* A as four 32-bit registers */
    free(src);
    assert_int_equal(ckt_emit_named(k, "cpu:sm_90a", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "ckt_emu_wgmma_ra("));
    free(src);
    /* the row max is lane exchanges on the GPU: its 64 x 64 f32 scratch is left out there */
    int64_t all = ckt_kernel_lds_bytes(k);
    assert_int_equal(ckt_emit_lds_bytes(k, T("sm_90a")), all - 64 * 64 * 4);
    assert_int_equal(ckt_emit_lds_bytes(k, T("cpu:sm_90a")), all);
    assert_int_equal(ckt_emit_lds_bytes(k, NULL), all);
    assert_int_equal(ckt_emit_lds_bytes(NULL, T("sm_90a")), 0);
    assert_int_equal(ckt_emit_dynamic_lds_bytes(NULL, T("sm_90a")), 0);
    assert_int_equal(ckt_emit_dynamic_lds_bytes(k, NULL), 0);
    ckt_kernel_destroy(k);
}

static void emit_per_target(void **state)
{
    (void)state;
    ckt_error err;
    char *src;
    ckt_kernel *k = gemm_kernel("mfma_f32_32x32x8bf16_1k", CKT_BF16, 256, 2, 2, 8, 128, 128, 32);
    assert_int_equal(ckt_emit_named(k, "gfx90a", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k("));
    free(src);
    assert_int_equal(ckt_emit_named(k, "cpu", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "ckt_emu_mfma_32x32x8(ckt_a, ckt_b, ckt_c)"));
    free(src);
    /* targets without the instruction: named with the ones that have it */
    assert_int_equal(ckt_emit_named(k, "gfx908", &src, &err), CKT_EUNSUPPORTED);
    expect_msg(err.msg, "gfx908");
    expect_msg(err.msg, "v_mfma_f32_32x32x8bf16_1k");
    assert_int_equal(ckt_emit_named(k, "sm_90", &src, &err), CKT_EUNSUPPORTED);
    assert_int_equal(ckt_emit_named(k, "cpu:sm_90", &src, &err), CKT_EUNSUPPORTED);
    expect_msg(err.msg, "cpu:sm_90");
    ckt_kernel_destroy(k);
    k = gemm_kernel("mma_m16n8k16_f16", CKT_F16, 128, 4, 8, 4, 128, 128, 64);
    assert_int_equal(ckt_emit_named(k, "sm_80", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
    /* two K steps (k_pack 4: 32 of K each), pipelined: both operands of both steps loaded before
     * step 0's math */
    assert_null(strstr(src, "for (ckt_i64 k"));
    const char *math = strstr(src, "blockwise_gemm: ");
    assert_non_null(math);
    int before = 0;
    for (const char *p = strstr(src, "load from LDS"); p && p < math;
         p = strstr(p + 1, "load from LDS"))
        before++;
    assert_int_equal(before, 4);
    free(src);
    ckt_kernel_destroy(k);
    /* beyond 8 K steps (a 512-wide tile: 32 steps) they stay a loop; the windows then move with
     * the loop, so each ldmatrix spells out its address */
    k = gemm_kernel("mma_m16n8k16_f16", CKT_F16, 32, 1, 1, 2, 16, 8, 512);
    assert_int_equal(ckt_emit_named(k, "sm_80", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "for (ckt_i64 k"));
    assert_non_null(strstr(src, "ckt_u32 sa;"));
    assert_null(strstr(src, "ckt_lt"));
    free(src);
    ckt_kernel_destroy(k);
    /* unrolled K steps: one shared address per thread and site, an immediate per matrix */
    k = gemm_kernel("mma_m16n8k16_f16", CKT_F16, 128, 2, 4, 2, 64, 64, 32);
    assert_int_equal(ckt_emit_named(k, "sm_80", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "const ckt_u32 ckt_lt = "));
    assert_non_null(strstr(src, "[%4+1024]"));
    assert_null(strstr(src, "ckt_u32 sa;"));
    free(src);
    ckt_kernel_destroy(k);
    k = gemm_kernel("mma_m16n8k16_f16", CKT_F16, 128, 4, 8, 4, 128, 128, 64);
    assert_int_equal(ckt_emit_named(k, "cpu:sm_90", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "ckt_emu_mma_m16n8k16("));
    free(src);
    assert_int_equal(ckt_emit_named(k, "gfx90a", &src, &err), CKT_EUNSUPPORTED);
    ckt_kernel_destroy(k);
    /* k_pack 2 over K-contiguous tiles: ldmatrix.x4 for A, for B too (4 N tiles a wave: two a
     * load), .x2 for B with an odd number of N tiles; the CPU emulation loads values */
    k = gemm_kernel("mma_m16n8k16_bf16", CKT_BF16, 128, 2, 4, 2, 64, 64, 32);
    assert_int_equal(ckt_emit_named(k, "sm_90", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
    assert_null(strstr(src, "ldmatrix.sync.aligned.m8n8.x2.shared.b16"));
    free(src);
    ckt_kernel_destroy(k);
    k = gemm_kernel("mma_m16n8k16_bf16", CKT_BF16, 128, 2, 1, 2, 64, 16, 32);
    assert_int_equal(ckt_emit_named(k, "sm_90", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "ldmatrix.sync.aligned.m8n8.x2.shared.b16"));
    free(src);
    assert_int_equal(ckt_emit_named(k, "cpu:sm_90", &src, &err), CKT_OK);
    assert_null(strstr(src, "ldmatrix"));
    free(src);
    ckt_kernel_destroy(k);
}

static void builder_refusals(void **state)
{
    (void)state;
    ckt_kernel *k;
    ckt_error err;
    ckt_gemm_traits t;
    assert_int_equal(ckt_gemm_traits_make("mfma_f32_32x32x8f16", 2, 2, 8, &t, &err), CKT_OK);
    assert_int_equal(ckt_kernel_create("g", 256, &k, &err), CKT_OK);
    ckt_layout la, l3, lk;
    assert_int_equal(ckt_layout_parse("(128,32):(32,1)", &la, &err), CKT_OK);
    assert_int_equal(ckt_layout_parse("(4,4,4):(16,4,1)", &l3, &err), CKT_OK);
    assert_int_equal(ckt_layout_parse("(128,16):(16,1)", &lk, &err), CKT_OK);
    int a, a32, b3, bk, c, c2, cf;
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &la, NULL, &a, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(k, CKT_F32, &la, NULL, &a32, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &l3, NULL, &b3, &err), CKT_OK);
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &lk, NULL, &bk, &err), CKT_OK);
    assert_int_equal(ckt_kernel_gemm_c_vgpr(k, &t, 128, 128, &c, NULL, &err), CKT_OK);
    assert_int_equal(ckt_kernel_registers(k, CKT_F32, -1, 64, &cf, &err), CKT_OK);
    /* operand dtypes the instruction lacks */
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a32, a, c, &t, &err), CKT_EINVAL);
    expect_msg(err.msg, "a_lds is f32");
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a, a32, c, &t, &err), CKT_EINVAL);
    expect_msg(err.msg, "b_lds is f32");
    /* the wgmma path checks its operands the same way */
    ckt_gemm_traits tw;
    assert_int_equal(ckt_gemm_traits_make("wgmma_m64n128k16_f16", 1, 1, 16, &tw, &err), CKT_OK);
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a32, a, c, &tw, &err), CKT_EINVAL);
    expect_msg(err.msg, "a_lds is f32");
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a, bk, c, &tw, &err), CKT_EINVAL);
    expect_msg(err.msg, "b_lds has K = 16");
    /* shapes */
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a, b3, c, &t, &err), CKT_EINVAL);
    expect_msg(err.msg, "rank 3");
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a, bk, c, &t, &err), CKT_EINVAL);
    expect_msg(err.msg, "b_lds has K = 16");
    assert_int_equal(ckt_kernel_blockwise_gemm(k, c, a, c, &t, &err), CKT_EINVAL);
    expect_msg(err.msg, "a_lds");
    assert_int_equal(ckt_kernel_blockwise_gemm(k, 99, a, c, &t, &err), CKT_EINVAL);
    /* a C tensor that is not the traits' */
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a, a, cf, &t, &err), CKT_EINVAL);
    expect_msg(err.msg, "c_reg");
    assert_int_equal(ckt_kernel_gemm_c_vgpr(k, &t, 64, 64, &c2, NULL, &err),
                     CKT_EINVAL); /* one wave, not the block's four */
    expect_msg(err.msg, "threads");
    /* the waves must fill the block */
    ckt_gemm_traits t1;
    assert_int_equal(ckt_gemm_traits_make("mfma_f32_32x32x8f16", 1, 1, 4, &t1, &err), CKT_OK);
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a, a, c, &t1, &err), CKT_EINVAL);
    expect_msg(err.msg, "threads");
    /* the op itself */
    int64_t rep[3] = {2, 2, 2}, bad[3] = {0, 2, 2};
    assert_int_equal(ckt_kernel_mma(k, c, c, c, 0, rep, &err), CKT_EINVAL);
    expect_msg(err.msg, "A is f32");
    assert_int_equal(ckt_kernel_mma(k, c, c, c, 0, bad, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_mma(k, c, c, c, 17, rep, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_blockwise_gemm(k, a, a, c, NULL, &err), CKT_EINVAL);
    /* the fragment-load mark: only right after the load it names */
    assert_int_equal(ckt_kernel_fragment_load(k, c, 4, 'A', 0, &err), CKT_EINVAL);
    expect_msg(err.msg, "not the load");
    /* the block-level layouts: bad operands, NULLs, geometry */
    ckt_gemm_geom g;
    char text[64];
    ckt_dist d;
    assert_int_equal(ckt_gemm_geometry(&t, 128, 128, 32, 256, &g, &err), CKT_OK);
    assert_int_equal(ckt_gemm_tv(&t, &g, 'X', text, sizeof text, &err), CKT_EINVAL);
    assert_int_equal(ckt_gemm_tv(&t, &g, 'C', text, 8, &err), CKT_ECAPACITY);
    assert_int_equal(ckt_gemm_tv(NULL, &g, 'A', text, sizeof text, &err), CKT_EINVAL);
    assert_int_equal(ckt_gemm_dist(&t, &g, 'Z', &d, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_gemm_c_dist(k, &t, 128, 128, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_gemm_c_vgpr(k, &t, 128, 128, NULL, NULL, &err), CKT_EINVAL);
    ckt_kernel_destroy(k);
    /* a block that is not whole waves */
    assert_int_equal(ckt_kernel_create("g", 96, &k, &err), CKT_OK);
    int r16, r32;
    assert_int_equal(ckt_kernel_registers(k, CKT_F16, -1, 4, &r16, &err), CKT_OK);
    assert_int_equal(ckt_kernel_registers(k, CKT_F32, -1, 16, &r32, &err), CKT_OK);
    int64_t one[3] = {1, 1, 1};
    assert_int_equal(ckt_kernel_mma(k, r32, r16, r16, 0, one, &err), CKT_EINVAL);
    expect_msg(err.msg, "whole waves");
    ckt_kernel_destroy(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_lane_of_every_instruction),
        cmocka_unit_test(descriptions_and_targets),
        cmocka_unit_test(lookup_refusals),
        cmocka_unit_test(traits_and_geometry),
        cmocka_unit_test(block_distributions),
        cmocka_unit_test(emit_per_target),
        cmocka_unit_test(builder_refusals),
        cmocka_unit_test(register_a_broadcast_and_views),
        cmocka_unit_test(wgmma_register_a_and_gpu_lds),
        cmocka_unit_test(zeroing_gemm),
        cmocka_unit_test(ldmatrix_delivers_the_fragments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
