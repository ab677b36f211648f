/* The LDS bank model: the write and read of AMD's note on LDS bank conflicts by hand, the
 * wavefronts measured with ncu on an H100, a naive reference over random addresses, invariances,
 * whole-tile analyses, the remedies and the search, bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"
#include "ckt/lds.h"
#include "ckt/target.h"

static ckt_target get(const char *name)
{
    ckt_target t;
    ckt_error err;
    if (ckt_target_get(name, &t, &err) != CKT_OK) fail_msg("%s: %s", name, err.msg);
    return t;
}

static ckt_lds_result run(const ckt_target *t, const char *instr, const int64_t *addr)
{
    ckt_lds_result r;
    ckt_error err;
    const ckt_lds_instr *in = ckt_target_instr(t, instr);
    if (!in) fail_msg("no %s on %s", instr, t->name);
    if (ckt_lds_analyze(t, in, addr, t->wave_size, &r, &err) != CKT_OK)
        fail_msg("%s: %s", instr, err.msg);
    return r;
}

static ckt_layout P(const char *s)
{
    ckt_layout l;
    ckt_error err;
    if (ckt_layout_parse(s, &l, &err) != CKT_OK) fail_msg("parse %s: %s", s, err.msg);
    return l;
}

static void lds_bank_note_by_hand(void **state)
{
    (void)state;
    ckt_target t = get("gfx90a");
    int64_t a[64];
    /* ds_write_b128 of consecutive 16-byte vectors: 8 phases, each lane on its own 4 banks */
    for (int l = 0; l < 64; l++) a[l] = 16 * l;
    ckt_lds_result r = run(&t, "ds_write_b128", a);
    assert_int_equal(r.ways, 1);
    assert_int_equal(r.cycles, 8);
    assert_int_equal(r.ideal_cycles, 8);
    for (int p = 0; p < 8; p++) {
        assert_int_equal(r.phases[p].nlanes, 8);
        for (int k = 0; k < 8; k++) assert_int_equal(r.phases[p].bank[k], 4 * k);
    }
    /* the vertical MFMA read of a 64-half row-major tile: lane l reads row l%16, 16-byte column
     * block l/16. Phase 0 = lanes 0..3 (rows 0..3, block 0) + 20..23 (rows 4..7, block 1):
     * every row is 128 bytes = all 32 banks, so rows 0..3 hit banks 0..3 four times: 4-way */
    for (int l = 0; l < 64; l++) a[l] = (l % 16) * 128 + (l / 16) * 16;
    r = run(&t, "ds_read_b128", a);
    assert_int_equal(r.ways, 4);
    for (int p = 0; p < 8; p++) assert_int_equal(r.phases[p].ways, 4);
    assert_int_equal(r.cycles, 32);
    assert_int_equal(r.ideal_cycles, 8);
    /* the note's XOR preshuffle of the same read: col' = (row mod 8) xor col in 8-half units */
    for (int l = 0; l < 64; l++) {
        int64_t row = l % 16, col = l / 16;
        a[l] = 2 * (row * 64 + ((row % 8) ^ col) * 8);
    }
    r = run(&t, "ds_read_b128", a);
    assert_int_equal(r.cycles, r.ideal_cycles);
    for (int l = 0; l < 64; l++) {
        int64_t row = l / 8, col = l % 8;
        a[l] = 2 * (row * 64 + ((row % 8) ^ col) * 8);
    }
    r = run(&t, "ds_write_b128", a);
    assert_int_equal(r.cycles, r.ideal_cycles);
    /* 32-bit stride-1 is conflict-free on every target; a broadcast is free */
    static const char *const names[] = {"gfx908", "gfx90a", "gfx942", "gfx950", "sm_80", "sm_90"};
    for (int i = 0; i < 6; i++) {
        ckt_target x = get(names[i]);
        const char *r32 = x.vendor == CKT_VENDOR_AMD ? "ds_read_b32" : "lds32";
        for (int l = 0; l < x.wave_size; l++) a[l] = 4 * l;
        r = run(&x, r32, a);
        assert_int_equal(r.ways, 1);
        assert_int_equal(r.cycles, r.ideal_cycles);
        for (int l = 0; l < x.wave_size; l++) a[l] = 256;
        r = run(&x, r32, a);
        assert_int_equal(r.ways, 1);
        assert_int_equal(r.cycles, r.ideal_cycles);
        /* stride of one bank-row: every lane of a phase on bank 0, all distinct words */
        for (int l = 0; l < x.wave_size; l++) a[l] = (int64_t)l * x.lds_banks * 4;
        r = run(&x, r32, a);
        assert_int_equal(r.ways, ckt_target_instr(&x, r32)->lanes_per_phase);
    }
}

/* ncu's l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum, one warp-wide load per pattern,
 * measured on an H100 (docs/sfc_lds.md, tests/gpu/bank_probe.c). */
static void nvidia_wavefronts_as_measured(void **state)
{
    (void)state;
    ckt_target t = get("sm_90");
    static const char *const instr[3] = {"lds32", "lds64", "lds128"};
    static const int width[3] = {4, 8, 16};
    static const int measured[7][3] = {{1, 2, 4},    {2, 4, 8}, {32, 32, 32}, {1, 1, 2},
                                       {16, 32, 32}, {2, 4, 4}, {16, 17, 19}};
    for (int w = 0; w < 3; w++)
        for (int p = 0; p < 7; p++) {
            int64_t a[32];
            for (int l = 0; l < 32; l++) {
                switch (p) {
                case 0: a[l] = (int64_t)l * width[w]; break;
                case 1: a[l] = (int64_t)l * 2 * width[w]; break;
                case 2: a[l] = (int64_t)l * 128; break;
                case 3: a[l] = 64; break;
                case 4: a[l] = (l % 16) * 128 + (l / 16) * 16; break;
                case 5: a[l] = (l / 8) * 144 + (l % 8) * width[w]; break;
                /* the probe meant odd lanes to be inactive, but its alignment step turned
                 * their -1 into address 0: what ran (and was measured) reads address 0 */
                default: a[l] = (l % 2) ? -1 : (int64_t)l * 64; break;
                }
                a[l] -= a[l] % width[w];
            }
            ckt_lds_result r = run(&t, instr[w], a);
            if (r.cycles != measured[p][w])
                fail_msg("%s pattern %d: predicted %d wavefronts, measured %d", instr[w], p,
                         r.cycles, measured[p][w]);
        }
}

/* A naive model: per phase, per bank, the set of distinct words; a phase costs its largest set. */
static int naive_cycles(const ckt_target *t, const ckt_lds_instr *in, const int64_t *addr,
                        int *ways)
{
    int cycles = 0;
    *ways = 0;
    for (int p = 0; p < in->nphases; p++) {
        int64_t words[64][64];
        int count[64] = {0}, worst = 0;
        for (int k = 0; k < in->lanes_per_phase; k++) {
            int64_t a = addr[in->lanes[p][k]];
            if (a < 0) continue;
            for (int w = 0; w < in->bytes / 4; w++) {
                int64_t word = a / 4 + w;
                int b = (int)(word % t->lds_banks), dup = 0;
                for (int j = 0; j < count[b]; j++) dup |= words[b][j] == word;
                if (!dup) words[b][count[b]++] = word;
                if (count[b] > worst) worst = count[b];
            }
        }
        cycles += worst;
        if (worst > *ways) *ways = worst;
    }
    return cycles;
}

static void random_addresses_against_naive_model(void **state)
{
    (void)state;
    srand(404);
    static const char *const names[] = {"gfx908", "gfx90a", "gfx942", "gfx950", "sm_80", "sm_90"};
    for (int iter = 0; iter < 3000; iter++) {
        ckt_target t = get(names[iter % 6]);
        const ckt_lds_instr *in = &t.instr[rand() % t.ninstr];
        int64_t a[64], b[64];
        int span = 1 + rand() % 512; /* small spans force conflicts and broadcasts */
        for (int l = 0; l < t.wave_size; l++)
            a[l] = rand() % 8 == 0 ? -1 : (int64_t)(rand() % span) * in->bytes;
        ckt_lds_result r = run(&t, in->name, a);
        int ways, naive = naive_cycles(&t, in, a, &ways);
        assert_int_equal(r.ways, ways);
        if (!in->merge_pairs)
            assert_int_equal(r.cycles, naive);
        else
            assert_true(r.cycles <= naive && r.cycles >= (naive + 1) / 2);
        assert_true(r.cycles >= r.ideal_cycles);
        int active_phases = 0;
        for (int p = 0; p < in->nphases; p++) active_phases += r.phases[p].nlanes > 0;
        if (!in->merge_pairs) assert_int_equal(r.ideal_cycles, active_phases);
        /* permuting the addresses of the lanes inside each phase changes nothing */
        memcpy(b, a, sizeof b);
        for (int p = 0; p < in->nphases; p++)
            for (int k = in->lanes_per_phase - 1; k > 0; k--) {
                int j = rand() % (k + 1);
                int64_t tmp = b[in->lanes[p][k]];
                b[in->lanes[p][k]] = b[in->lanes[p][j]];
                b[in->lanes[p][j]] = tmp;
            }
        ckt_lds_result r2 = run(&t, in->name, b);
        assert_int_equal(r2.cycles, r.cycles);
        assert_int_equal(r2.ways, r.ways);
        /* moving everything by whole bank-rows changes nothing */
        for (int l = 0; l < t.wave_size; l++)
            b[l] = a[l] < 0 ? -1 : a[l] + (int64_t)t.lds_banks * t.bank_bytes * 3;
        r2 = run(&t, in->name, b);
        assert_int_equal(r2.cycles, r.cycles);
    }
}

static void tensor_analyses(void **state)
{
    (void)state;
    ckt_target t = get("gfx90a");
    ckt_error err;
    ckt_lds_tensor lt;
    memset(&lt, 0, sizeof lt);
    lt.layout = P("(64,64):(64,1)");
    lt.elem_bytes = 2;
    /* (thread, value) -> tile index (row + 64 col) of each 8-half vector */
    ckt_layout write_map = P("((8,8),8):((512,1),8)"), read_map = P("((16,4),4):((1,512),16)");
    ckt_lds_tensor_result r;
    assert_int_equal(ckt_lds_analyze_tensor(&t, &lt, &write_map, 8, 1, &r, &err), CKT_OK);
    assert_int_equal(r.instructions, 8);
    assert_int_equal(r.cycles, 64);
    assert_int_equal(r.ideal_cycles, 64);
    assert_int_equal(ckt_lds_analyze_tensor(&t, &lt, &read_map, 8, 0, &r, &err), CKT_OK);
    assert_int_equal(r.instructions, 4);
    assert_int_equal(r.ways, 4);
    assert_int_equal(r.cycles, 128);
    assert_int_equal(r.ideal_cycles, 32);
    /* the XOR preshuffle as a swizzle removes it */
    assert_int_equal(ckt_lds_xor_preshuffle(64, 8, &lt.sw, &err), CKT_OK);
    assert_int_equal(ckt_lds_analyze_tensor(&t, &lt, &read_map, 8, 0, &r, &err), CKT_OK);
    assert_int_equal(r.cycles, 32);
    assert_int_equal(ckt_lds_analyze_tensor(&t, &lt, &write_map, 8, 1, &r, &err), CKT_OK);
    assert_int_equal(r.cycles, 64);
    /* padding 8 banks (16 halves) per row: conflict-free at 2016 bytes more */
    ckt_layout padded;
    assert_int_equal(ckt_lds_pad(&lt.layout, 8, 4, 2, &padded, &err), CKT_OK);
    char buf[64];
    ckt_layout_to_string(&padded, buf, sizeof buf);
    assert_string_equal(buf, "(64,64):(80,1)");
    assert_int_equal((ckt_layout_cosize(&padded) - 4096) * 2, 2016);
    memset(&lt.sw, 0, sizeof lt.sw);
    lt.layout = padded;
    assert_int_equal(ckt_lds_analyze_tensor(&t, &lt, &read_map, 8, 0, &r, &err), CKT_OK);
    assert_int_equal(r.cycles, r.ideal_cycles);
    /* a column-major tile pads its columns (the larger stride) */
    ckt_layout cm = P("(32,16):(1,32)");
    assert_int_equal(ckt_lds_pad(&cm, 1, 4, 4, &padded, &err), CKT_OK);
    ckt_layout_to_string(&padded, buf, sizeof buf);
    assert_string_equal(buf, "(32,16):(1,33)");
}

/* 1- and 2-byte accesses are the 32-bit access of their word: lanes sharing a word share it. */
static void sub_word_accesses(void **state)
{
    (void)state;
    ckt_error err;
    ckt_lds_tensor lt;
    ckt_lds_tensor_result r;
    memset(&lt, 0, sizeof lt);
    lt.layout = P("(64,64):(64,1)");
    lt.elem_bytes = 2;
    ckt_target t = get("gfx90a"), n = get("sm_90");
    /* a row of 64 halves read one half per lane: 32 words, two lanes per word, two phases of 32 */
    ckt_layout row = P("(64,1):(64,0)");
    assert_int_equal(ckt_lds_analyze_tensor(&t, &lt, &row, 1, 0, &r, &err), CKT_OK);
    assert_int_equal(r.cycles, r.ideal_cycles);
    assert_int_equal(r.access_bytes, 2);
    assert_string_equal(r.instr, "ds_read_b32");
    /* the transposed read (ds_read_u16 down a column): 64 rows of 128 bytes all on bank 0 */
    ckt_layout col = P("(64,1):(1,0)");
    assert_int_equal(ckt_lds_analyze_tensor(&t, &lt, &col, 1, 0, &r, &err), CKT_OK);
    assert_int_equal(r.ways, 32);
    assert_int_equal(r.cycles, 64);
    /* sm_90, a warp of 32 reading one column: 32-way, 32 wavefronts */
    ckt_layout col32 = P("(32,1):(1,0)");
    assert_int_equal(ckt_lds_analyze_tensor(&n, &lt, &col32, 1, 0, &r, &err), CKT_OK);
    assert_int_equal(r.cycles, 32);
    assert_string_equal(r.instr, "lds32");
    /* bytes: 4 lanes per word */
    lt.elem_bytes = 1;
    assert_int_equal(ckt_lds_analyze_tensor(&t, &lt, &row, 1, 1, &r, &err), CKT_OK);
    assert_int_equal(r.cycles, 2);
    assert_string_equal(r.instr, "ds_write_b32");
}

/* The preshuffle swizzle is the note's formula on every (row, col) of tiles of several sizes. */
static void xor_preshuffle_formula(void **state)
{
    (void)state;
    static const int64_t cfg[][2] = {{64, 8}, {32, 8}, {64, 4}, {128, 8}, {16, 16}, {8, 1}};
    for (size_t i = 0; i < sizeof cfg / sizeof *cfg; i++) {
        int64_t K = cfg[i][0], KP = cfg[i][1];
        ckt_swizzle sw;
        ckt_error err;
        assert_int_equal(ckt_lds_xor_preshuffle(K, KP, &sw, &err), CKT_OK);
        for (int64_t row = 0; row < 3 * K / KP; row++)
            for (int64_t col = 0; col < K / KP; col++)
                for (int64_t e = 0; e < KP; e++) {
                    int64_t want = row * K + ((row % (K / KP)) ^ col) * KP + e;
                    assert_int_equal(ckt_swizzle_apply(sw, row * K + col * KP + e), want);
                }
    }
}

static void search(void **state)
{
    (void)state;
    ckt_target t = get("gfx90a");
    ckt_error err;
    ckt_layout tile = P("(64,64):(64,1)");
    ckt_lds_pattern w = {P("((8,8),8):((512,1),8)"), 8}, r = {P("((16,4),4):((1,512),16)"), 8};
    ckt_lds_choice c;
    assert_int_equal(ckt_lds_find_swizzle(&t, &tile, 2, &w, &r, NULL, &c, &err), CKT_OK);
    assert_true(c.conflict_free);
    assert_true(c.tensor.sw.b > 0);
    assert_int_equal(c.lds_extra_bytes, 0);
    assert_int_equal(c.lds_bytes, 8192);
    assert_int_equal(c.read.cycles, c.read.ideal_cycles);
    assert_int_equal(c.write.cycles, c.write.ideal_cycles);
    /* and the choice really is conflict-free when analysed again */
    ckt_lds_tensor_result again;
    assert_int_equal(ckt_lds_analyze_tensor(&t, &c.tensor, &r.thread_map, 8, 0, &again, &err),
                     CKT_OK);
    assert_int_equal(again.cycles, again.ideal_cycles);
    /* swizzles confined to M = 0 (they split the 8-half vectors): padding wins, at a cost */
    ckt_lds_search_opts o;
    ckt_lds_search_defaults(&o);
    o.m_max = 0;
    assert_int_equal(ckt_lds_find_swizzle(&t, &tile, 2, &w, &r, &o, &c, &err), CKT_OK);
    assert_true(c.conflict_free);
    assert_int_equal(c.tensor.sw.b, 0);
    assert_int_equal(c.padding_banks, 8);
    assert_int_equal(c.lds_extra_bytes, 2016);
    /* nothing that helps allowed: the best found, not conflict-free, is the plain tile */
    o.max_padding_banks = 2;
    assert_int_equal(ckt_lds_find_swizzle(&t, &tile, 2, NULL, &r, &o, &c, &err), CKT_OK);
    assert_false(c.conflict_free);
    assert_false(c.has_write);
    assert_true(c.read.cycles > c.read.ideal_cycles);
    assert_true(c.candidates > 1);
    /* an already conflict-free pattern needs nothing */
    assert_int_equal(ckt_lds_find_swizzle(&t, &tile, 2, &w, NULL, NULL, &c, &err), CKT_OK);
    assert_true(c.conflict_free);
    assert_int_equal(c.tensor.sw.b, 0);
    assert_int_equal(c.padding_banks, 0);
    assert_int_equal(c.candidates, 1);
}

/* Whatever the search returns is what an analysis of its choice says, over many tiles and maps. */
static void search_is_consistent(void **state)
{
    (void)state;
    srand(505);
    static const char *const names[] = {"gfx90a", "gfx950", "sm_90"};
    for (int iter = 0; iter < 36; iter++) {
        ckt_target t = get(names[iter % 3]);
        ckt_error err;
        int64_t cols = 32 << (rand() % 3), rows = 64; /* halves per row: 32, 64, 128 */
        int64_t R = 4 << (rand() % 4);                /* lanes down a column: 4..32 */
        int64_t cb = cols / 8;                        /* 16-byte column blocks per row */
        if (t.wave_size / R > cb) R = t.wave_size / cb;
        char buf[128];
        snprintf(buf, sizeof buf, "(%lld,%lld):(%lld,1)", (long long)rows, (long long)cols,
                 (long long)cols);
        ckt_layout tile = P(buf);
        /* read: lane l -> row l % R, column block l / R; values step down the rows */
        int64_t vals = rows / R;
        snprintf(buf, sizeof buf, "((%lld,%lld),%lld):((1,%lld),%lld)", (long long)R,
                 (long long)(t.wave_size / R), (long long)vals, (long long)(8 * rows),
                 (long long)R);
        ckt_lds_pattern rd = {P(buf), 8};
        /* write: consecutive lanes along a row */
        snprintf(buf, sizeof buf, "((%lld,%lld),%lld):((%lld,1),%lld)", (long long)cb,
                 (long long)(t.wave_size / cb), (long long)(rows * cb / t.wave_size),
                 (long long)(8 * rows), (long long)(t.wave_size / cb));
        ckt_lds_pattern wr = {P(buf), 8};
        ckt_lds_choice c;
        if (ckt_lds_find_swizzle(&t, &tile, 2, &wr, &rd, NULL, &c, &err) != CKT_OK)
            fail_msg("%s: %s", t.name, err.msg);
        ckt_lds_tensor_result a, b;
        assert_int_equal(ckt_lds_analyze_tensor(&t, &c.tensor, &rd.thread_map, 8, 0, &a, &err),
                         CKT_OK);
        assert_int_equal(ckt_lds_analyze_tensor(&t, &c.tensor, &wr.thread_map, 8, 1, &b, &err),
                         CKT_OK);
        assert_int_equal(a.cycles, c.read.cycles);
        assert_int_equal(b.cycles, c.write.cycles);
        assert_int_equal(c.conflict_free, a.cycles == a.ideal_cycles && b.cycles == b.ideal_cycles);
        assert_true(c.lds_extra_bytes >= 0);
        assert_int_equal(c.lds_bytes - c.lds_extra_bytes, rows * cols * 2);
        /* never worse than the plain tile */
        ckt_lds_tensor plain;
        memset(&plain, 0, sizeof plain);
        plain.layout = tile;
        plain.elem_bytes = 2;
        assert_int_equal(ckt_lds_analyze_tensor(&t, &plain, &rd.thread_map, 8, 0, &a, &err),
                         CKT_OK);
        assert_int_equal(ckt_lds_analyze_tensor(&t, &plain, &wr.thread_map, 8, 1, &b, &err),
                         CKT_OK);
        assert_true(c.read.cycles + c.write.cycles <= a.cycles + b.cycles || c.conflict_free);
        /* these tiles are powers of two: a swizzle always fixes them at no LDS cost */
        if (!c.conflict_free || c.lds_extra_bytes != 0)
            fail_msg("%s cols %lld R %lld: no free fix", t.name, (long long)cols, (long long)R);
    }
}

static void expect_fail_at(ckt_status st, const ckt_error *err, const char *needle, int line)
{
    if (st == CKT_OK) fail_msg("line %d: accepted, expected an error with '%s'", line, needle);
    if (!strstr(err->msg, needle))
        fail_msg("line %d: message '%s' lacks '%s'", line, err->msg, needle);
}
#define expect_fail(st, err, needle) expect_fail_at((st), (err), (needle), __LINE__)

static void bad_input(void **state)
{
    (void)state;
    ckt_target t = get("gfx90a"), n = get("sm_90");
    ckt_error err;
    ckt_lds_result r;
    int64_t a[64];
    for (int l = 0; l < 64; l++) a[l] = 16 * l;
    const ckt_lds_instr *rd = ckt_target_instr(&t, "ds_read_b128");
    expect_fail(ckt_lds_analyze(&t, rd, a, 32, &r, &err), &err,
                "32 addresses given, gfx90a has 64 lanes");
    expect_fail(ckt_lds_analyze(NULL, rd, a, 64, &r, &err), &err, "NULL");
    expect_fail(ckt_lds_analyze(&t, NULL, a, 64, &r, &err), &err, "NULL");
    expect_fail(ckt_lds_analyze(&t, rd, NULL, 64, &r, &err), &err, "NULL");
    expect_fail(ckt_lds_analyze(&n, rd, a, 32, &r, &err), &err,
                "does not fit"); /* gfx90a's table on sm_90 */
    a[5] = 8;
    expect_fail(ckt_lds_analyze(&t, rd, a, 64, &r, &err), &err, "lane 5 address 8 is not aligned");
    a[5] = 65536 - 16;
    assert_int_equal(ckt_lds_analyze(&t, rd, a, 64, &r, &err),
                     CKT_OK); /* the last vector of the LDS */
    a[5] = 65536;
    expect_fail(ckt_lds_analyze(&t, rd, a, 64, &r, &err), &err, "outside the 65536-byte LDS");
    a[5] = INT64_MAX - 15;
    expect_fail(ckt_lds_analyze(&t, rd, a, 64, &r, &err), &err, "outside");

    ckt_lds_tensor lt;
    memset(&lt, 0, sizeof lt);
    lt.layout = P("(64,64):(64,1)");
    lt.elem_bytes = 2;
    ckt_lds_tensor_result tr;
    ckt_layout map = P("((16,4),4):((1,512),16)");
    expect_fail(ckt_lds_analyze_tensor(&t, &lt, &map, 3, 0, &tr, &err), &err,
                "no read instruction on gfx90a moves vector 3 x 2 bytes");
    expect_fail(ckt_lds_analyze_tensor(&t, &lt, &map, INT64_MAX / 2, 0, &tr, &err), &err,
                "no read instruction");
    lt.elem_bytes = 1;
    ckt_layout odd = P("(64,1):(1,0)"); /* thread l -> (row l, col 0): byte 64 l */
    ckt_layout odd2 =
        P("(64,1):(64,0)"); /* thread l -> (row 0, col l): byte l, odd for odd lanes */
    assert_int_equal(ckt_lds_analyze_tensor(&t, &lt, &odd, 1, 0, &tr, &err), CKT_OK);
    expect_fail(ckt_lds_analyze_tensor(&t, &lt, &odd2, 2, 0, &tr, &err), &err,
                "byte address 1 is not aligned to its 2-byte access");
    lt.elem_bytes = 2;
    expect_fail(ckt_lds_analyze_tensor(&t, &lt, &map, 0, 0, &tr, &err), &err,
                "vector 0 must be positive");
    expect_fail(ckt_lds_analyze_tensor(&t, &lt, &map, -8, 0, &tr, &err), &err, "must be positive");
    ckt_layout rank1 = P("64:1");
    expect_fail(ckt_lds_analyze_tensor(&t, &lt, &rank1, 8, 0, &tr, &err), &err, "rank 2");
    ckt_layout thirty = P("(32,4):(1,32)");
    expect_fail(ckt_lds_analyze_tensor(&t, &lt, &thirty, 8, 0, &tr, &err), &err,
                "not a multiple of the wave size 64");
    ckt_layout outside = P("(64,4):(1,4096)");
    expect_fail(ckt_lds_analyze_tensor(&t, &lt, &outside, 8, 0, &tr, &err), &err,
                "outside the 4096-element tile");
    lt.elem_bytes = 0;
    expect_fail(ckt_lds_analyze_tensor(&t, &lt, &map, 8, 0, &tr, &err), &err, "element size 0");
    lt.elem_bytes = 2;
    assert_int_equal(ckt_swizzle_make(3, 1, 3, &lt.sw, &err),
                     CKT_OK); /* moves 2-half blocks: splits 8-half vectors */
    expect_fail(ckt_lds_analyze_tensor(&t, &lt, &map, 8, 0, &tr, &err), &err,
                "splits the 8-element vector");
    expect_fail(ckt_lds_analyze_tensor(&t, NULL, &map, 8, 0, &tr, &err), &err, "NULL");

    ckt_layout out, tile = P("(64,64):(64,1)"), r3 = P("(4,4,4):(16,4,1)");
    expect_fail(ckt_lds_pad(&tile, -1, 4, 2, &out, &err), &err, "banks -1");
    expect_fail(ckt_lds_pad(&tile, 1, 4, 8, &out, &err), &err,
                "not a whole number of 8-byte elements");
    expect_fail(ckt_lds_pad(&tile, 1, 0, 2, &out, &err), &err, "bank width");
    expect_fail(ckt_lds_pad(&tile, 1, 4, 0, &out, &err), &err, "elements");
    expect_fail(ckt_lds_pad(&r3, 1, 4, 2, &out, &err), &err, "rank-2");
    expect_fail(ckt_lds_pad(NULL, 1, 4, 2, &out, &err), &err, "NULL");
    ckt_layout huge = P("(2,2):(9223372036854775000,1)");
    expect_fail(ckt_lds_pad(&huge, 1 << 20, 4, 1, &out, &err), &err, "overflow");

    ckt_swizzle sw;
    expect_fail(ckt_lds_xor_preshuffle(64, 6, &sw, &err), &err,
                "k_pack 6 does not divide k_per_block 64");
    expect_fail(ckt_lds_xor_preshuffle(48, 8, &sw, &err), &err, "KPerBlock/KPack = 6");
    expect_fail(ckt_lds_xor_preshuffle(96, 12, &sw, &err), &err, "powers of two");
    expect_fail(ckt_lds_xor_preshuffle(64, 128, &sw, &err), &err, "does not divide");
    expect_fail(ckt_lds_xor_preshuffle(0, 8, &sw, &err), &err, "positive");
    expect_fail(ckt_lds_xor_preshuffle(64, -8, &sw, &err), &err, "positive");
    expect_fail(ckt_lds_xor_preshuffle(64, 8, NULL, &err), &err, "NULL");

    ckt_lds_pattern pr = {map, 8}, bad = {P("(32,4):(1,32)"), 8};
    ckt_lds_choice c;
    ckt_lds_search_opts o;
    expect_fail(ckt_lds_find_swizzle(&t, &tile, 2, NULL, NULL, NULL, &c, &err), &err,
                "write pattern, a read pattern or both");
    expect_fail(ckt_lds_find_swizzle(&t, &tile, 0, NULL, &pr, NULL, &c, &err), &err,
                "element size");
    expect_fail(ckt_lds_find_swizzle(&t, &tile, 2, &bad, &pr, NULL, &c, &err), &err,
                "wave size"); /* the caller's error, not skipped */
    ckt_lds_search_defaults(&o);
    o.b_min = 0;
    expect_fail(ckt_lds_find_swizzle(&t, &tile, 2, NULL, &pr, &o, &c, &err), &err, "B range");
    ckt_lds_search_defaults(&o);
    o.m_max = -1;
    expect_fail(ckt_lds_find_swizzle(&t, &tile, 2, NULL, &pr, &o, &c, &err), &err, "M range");
    ckt_lds_search_defaults(&o);
    o.s_min = 9;
    expect_fail(ckt_lds_find_swizzle(&t, &tile, 2, NULL, &pr, &o, &c, &err), &err, "S range");
    ckt_lds_search_defaults(&o);
    o.max_padding_banks = -1;
    expect_fail(ckt_lds_find_swizzle(&t, &tile, 2, NULL, &pr, &o, &c, &err), &err,
                "max_padding_banks");
    ckt_lds_pattern big = {P("(65536,64):(1,65536)"), 1};
    ckt_layout bigtile = P("4194304:1");
    expect_fail(ckt_lds_find_swizzle(&t, &bigtile, 2, NULL, &big, NULL, &c, &err), &err,
                "analysis limit");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lds_bank_note_by_hand),
        cmocka_unit_test(nvidia_wavefronts_as_measured),
        cmocka_unit_test(random_addresses_against_naive_model),
        cmocka_unit_test(tensor_analyses),
        cmocka_unit_test(sub_word_accesses),
        cmocka_unit_test(xor_preshuffle_formula),
        cmocka_unit_test(search),
        cmocka_unit_test(search_is_consistent),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
