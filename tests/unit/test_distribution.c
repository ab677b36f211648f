/* CK Tile encodings and the 2D raked patterns: the equations of
 * tile_distribution_encoding_pattern_2d, CK's encodings checked against an independent model of
 * each pattern written from the documentation's prose, seeded properties over random general
 * encodings (ownership, TV round trip, owner inverts calculate_index), and bad input for every
 * entry point. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"
#include "ckt/distribution.h"

static uint64_t rng_state;
static uint64_t rnd(void) /* splitmix64: deterministic across platforms */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int64_t rnd_in(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static ckt_pattern_2d pat(int64_t block, int64_t y, int64_t x, int64_t vec, ckt_pattern_kind k,
                          int64_t groups, int64_t warp)
{
    ckt_pattern_2d p = {block, y, x, vec, groups, warp, k};
    return p;
}

static ckt_encoding make_pattern(ckt_pattern_2d p)
{
    ckt_encoding e;
    ckt_error err;
    if (ckt_encoding_pattern_2d(&p, &e, &err) != CKT_OK) fail_msg("pattern_2d: %s", err.msg);
    return e;
}

static const char *refuse_pattern(ckt_pattern_2d p)
{
    static ckt_error err;
    ckt_encoding e;
    assert_int_not_equal(ckt_encoding_pattern_2d(&p, &e, &err), CKT_OK);
    assert_non_null(strstr(err.msg, "encoding_pattern_2d: "));
    return err.msg;
}

static void expect_msg(const char *msg, const char *want)
{
    if (!strstr(msg, want)) fail_msg("message \"%s\" lacks \"%s\"", msg, want);
}

/* ---- tile_distribution_encoding_pattern_2d: the equations ---- */

static void pattern_2d_equations(void **state)
{
    (void)state;
    /* 64x64 tile, 256 threads, vectors of 8, AMD warp 64 */
    ckt_encoding t = make_pattern(pat(256, 64, 64, 8, CKT_THREAD_RAKED, 1, 64));
    int64_t got[5] = {t.x0, t.x1, t.y0, t.y1, t.y2}, want[5] = {8, 8, 4, 8, 2};
    assert_memory_equal(got, want, sizeof want);
    ckt_encoding w = make_pattern(pat(256, 64, 64, 8, CKT_WARP_RAKED, 1, 64));
    assert_int_equal(w.y0, 4); /* warps */
    assert_int_equal(w.y2, 8); /* rows per warp */
    assert_int_equal(w.y1, 2); /* iterations */
    ckt_encoding b = make_pattern(pat(256, 64, 64, 8, CKT_BLOCK_RAKED, 1, 64));
    assert_int_equal(b.y0, 2); /* iterations */
    assert_int_equal(b.y1, 4); /* warps */
    assert_int_equal(b.y2, 8); /* rows per warp */
    /* X0 clamps to TileSize/BlockSize = 16*64/256 = 4 */
    ckt_encoding c = make_pattern(pat(256, 16, 64, 8, CKT_THREAD_RAKED, 1, 64));
    assert_int_equal(c.x0, 4);
    assert_int_equal(c.x1, 16);
    assert_int_equal(c.y1, 4);
    /* NVIDIA warps of 32 */
    ckt_encoding n = make_pattern(pat(128, 32, 32, 4, CKT_THREAD_RAKED, 1, 32));
    int64_t gn[5] = {n.x0, n.x1, n.y0, n.y1, n.y2}, wn[5] = {4, 8, 4, 4, 2};
    assert_memory_equal(gn, wn, sizeof wn);
    ckt_encoding nw = make_pattern(pat(128, 64, 64, 8, CKT_WARP_RAKED, 1, 32));
    assert_int_equal(nw.y2, 4);
    assert_int_equal(nw.y1, 4);
    /* two wave groups: Y0 = 8 warps / 2, CK's encoding replicates them over R */
    ckt_encoding g = make_pattern(pat(512, 64, 64, 8, CKT_THREAD_RAKED, 2, 64));
    assert_int_equal(g.y0, 4);
    assert_int_equal(g.y1, 8);
    assert_int_equal(g.y2, 2);
    assert_int_equal(ckt_encoding_num_threads(&g), 256);
    assert_int_equal(g.d.nr, 1);
    assert_int_equal(g.d.rs[0], 4);
    int64_t xl[2];
    assert_int_equal(ckt_encoding_x_lengths(&g, xl, NULL), CKT_OK);
    assert_int_equal(xl[0], 16); /* Y1*Y2 rows: CK's H0 = <Y1, Y2> */
    assert_int_equal(xl[1], 64);
}

/* CK's encodings, field by field (static_encoding_pattern.hpp, CK's X0 = our X1 threads, CK's X1 =
 * our X0 vector) */
static void ck_encodings_literal(void **state)
{
    (void)state;
    ckt_encoding t = make_pattern(pat(256, 64, 64, 8, CKT_THREAD_RAKED, 1, 64));
    assert_int_equal(t.d.nr, 1);
    assert_int_equal(t.d.rs[0], 1);
    assert_int_equal(t.d.nh[0], 3);
    assert_int_equal(t.d.hs[0][0], 4);
    assert_int_equal(t.d.hs[0][1], 8);
    assert_int_equal(t.d.hs[0][2], 2);
    assert_int_equal(t.d.hs[1][0], 8); /* threads along X */
    assert_int_equal(t.d.hs[1][1], 8); /* vector */
    int pm[2][2] = {{t.d.p_major[0][0], -1}, {t.d.p_major[1][0], t.d.p_major[1][1]}};
    int pn[2][2] = {{t.d.p_minor[0][0], -1}, {t.d.p_minor[1][0], t.d.p_minor[1][1]}};
    int wpm[2][2] = {{1, -1}, {1, 2}}, wpn[2][2] = {{0, -1}, {1, 0}};
    assert_memory_equal(pm, wpm, sizeof pm);
    assert_memory_equal(pn, wpn, sizeof pn);
    assert_int_equal(t.d.y_major[0], 1);
    assert_int_equal(t.d.y_minor[0], 2);
    assert_int_equal(t.d.y_major[1], 2);
    assert_int_equal(t.d.y_minor[1], 1);
    ckt_encoding w = make_pattern(pat(256, 64, 64, 8, CKT_WARP_RAKED, 1, 64));
    assert_int_equal(w.d.p_minor[1][0], 2);
    assert_int_equal(w.d.y_minor[0], 1);
    assert_int_equal(w.d.y_minor[1], 1);
    ckt_encoding b = make_pattern(pat(256, 64, 64, 8, CKT_BLOCK_RAKED, 1, 64));
    assert_int_equal(b.d.p_minor[0][0], 1);
    assert_int_equal(b.d.p_minor[1][0], 2);
    assert_int_equal(b.d.y_minor[0], 0);
    /* wave groups: R=<Y0>, H=<<Y1,Y2>,<X1,X0>>, P0 -> R0, P1 -> (Y1, X1), Ys -> (Y2, X0) */
    ckt_encoding g = make_pattern(pat(512, 64, 64, 8, CKT_THREAD_RAKED, 2, 64));
    assert_int_equal(g.d.p_major[0][0], 0);
    assert_int_equal(g.d.p_minor[0][0], 0);
    assert_int_equal(g.d.p_major[1][0], 1);
    assert_int_equal(g.d.p_minor[1][0], 0);
    assert_int_equal(g.d.y_minor[0], 1);
    assert_int_equal(g.d.y_minor[1], 1);
    /* shuffled: X axis first; thread raked Ys are <X0 vector, Y2> */
    ckt_pattern_2d p = pat(256, 64, 32, 8, CKT_THREAD_RAKED, 1, 64);
    ckt_encoding s;
    ckt_error err;
    assert_int_equal(ckt_encoding_pattern_2d_shuffled(&p, &s, &err), CKT_OK);
    assert_true(s.shuffled);
    assert_int_equal(s.d.hs[0][0], s.x1);
    assert_int_equal(s.d.hs[0][1], s.x0);
    assert_int_equal(s.d.p_major[0][0], 2);
    assert_int_equal(s.d.p_major[1][0], 2);
    assert_int_equal(s.d.p_major[1][1], 1);
    assert_int_equal(s.d.y_major[0], 1);
    assert_int_equal(s.d.y_minor[0], 1);
    assert_int_equal(s.d.y_major[1], 2);
    assert_int_equal(s.d.y_minor[1], 2);
}

/* An independent model of the patterns, from the documentation's prose: the warp id and the lane's
 * row pick rows, the lane's column picks a vector of X0 columns; the iteration sits after the
 * thread (thread raked), between warp and thread (warp raked) or before the warp (block raked). */
static void model_xy(const ckt_encoding *e, int64_t tid, int64_t iter, int64_t vec, int64_t *row,
                     int64_t *col)
{
    const ckt_pattern_2d *p = &e->pattern;
    int64_t warp = tid / p->warp_size, lane = tid % p->warp_size;
    int64_t lrow = lane / e->x1, lcol = lane % e->x1;
    *col = lcol * e->x0 + vec;
    switch (p->pattern) {
    case CKT_THREAD_RAKED:
        if (p->num_wave_groups > 1)
            *row = lrow * e->y2 + iter; /* warps replicate */
        else
            *row = (warp * e->y1 + lrow) * e->y2 + iter;
        break;
    case CKT_WARP_RAKED: *row = (warp * e->y1 + iter) * e->y2 + lrow; break;
    default: *row = (iter * e->y1 + warp) * e->y2 + lrow; break;
    }
}

static int64_t pattern_iterations(const ckt_encoding *e)
{
    switch (e->pattern.pattern) {
    case CKT_THREAD_RAKED: return e->y2;
    case CKT_WARP_RAKED: return e->y1;
    default: return e->y0;
    }
}

static void patterns_match_the_model(void **state)
{
    (void)state;
    rng_state = 2024;
    int made = 0, refused = 0, shuffled = 0;
    for (int trial = 0; trial < 1500; trial++) {
        int64_t warp = rnd() % 2 ? 64 : 32;
        ckt_pattern_kind k = (ckt_pattern_kind)rnd_in(1, 3);
        int64_t groups = k == CKT_THREAD_RAKED && rnd() % 4 == 0 ? 2 : 1;
        ckt_pattern_2d p =
            pat(warp << rnd_in(0, 3), (int64_t)1 << rnd_in(0, 8), (int64_t)1 << rnd_in(0, 8),
                (int64_t)1 << rnd_in(0, 4), k, groups, warp);
        if (rnd() % 8 == 0) p.x_per_tile = rnd_in(1, 200); /* not a power of two */
        if (rnd() % 8 == 0) p.y_per_tile = rnd_in(1, 200);
        ckt_encoding e;
        ckt_error err;
        if (ckt_encoding_pattern_2d(&p, &e, &err) != CKT_OK) {
            refused++;
            assert_non_null(strstr(err.msg, "encoding_pattern_2d: "));
            continue;
        }
        made++;
        /* the documented equations */
        int64_t tile = p.y_per_tile * p.x_per_tile,
                vec = p.vec_size < tile / p.block_size ? p.vec_size : tile / p.block_size;
        assert_int_equal(e.x0, vec);
        assert_int_equal(e.x0 * e.x1, p.x_per_tile);
        assert_int_equal(e.y0 * e.y1 * e.y2, p.y_per_tile);
        assert_int_equal(ckt_encoding_num_threads(&e), p.block_size / groups);
        int64_t ys[2], ylen[2], xs[2], xl[2];
        assert_int_equal(ckt_encoding_ys_lengths(&e, ylen, NULL), CKT_OK);
        assert_int_equal(ckt_encoding_x_lengths(&e, xl, NULL), CKT_OK);
        assert_int_equal(ylen[0], pattern_iterations(&e));
        assert_int_equal(ylen[1], e.x0);
        /* every (thread, iteration, vector element) lands where the model says */
        int64_t nt = ckt_encoding_num_threads(&e);
        for (int s = 0; s < 40; s++) {
            int64_t t = rnd_in(0, nt - 1);
            ys[0] = rnd_in(0, ylen[0] - 1);
            ys[1] = rnd_in(0, ylen[1] - 1);
            assert_int_equal(ckt_encoding_calculate_index(&e, t, ys, xs, &err), CKT_OK);
            int64_t row, col;
            model_xy(&e, t, ys[0], ys[1], &row, &col);
            assert_int_equal(xs[0], row);
            assert_int_equal(xs[1], col);
        }
        /* the shuffled twin is the transpose: same threads, same Y order, X swapped */
        if (rnd() % 4 == 0) {
            ckt_encoding sh;
            assert_int_equal(ckt_encoding_pattern_2d_shuffled(&p, &sh, &err), CKT_OK);
            int64_t sl[2], sx[2], sy[2];
            ckt_encoding_x_lengths(&sh, sl, NULL);
            assert_int_equal(sl[0], xl[1]);
            assert_int_equal(sl[1], xl[0]);
            for (int s = 0; s < 20; s++) {
                int64_t t = rnd_in(0, nt - 1);
                ys[0] = rnd_in(0, ylen[0] - 1);
                ys[1] = rnd_in(0, ylen[1] - 1);
                /* CK orders Ys by H sequence: once shuffled the vector (on X, now first) comes
                 * first */
                sy[0] = ys[1];
                sy[1] = ys[0];
                assert_int_equal(ckt_encoding_calculate_index(&e, t, ys, xs, &err), CKT_OK);
                assert_int_equal(ckt_encoding_calculate_index(&sh, t, sy, sx, &err), CKT_OK);
                assert_int_equal(sx[0], xs[1]);
                assert_int_equal(sx[1], xs[0]);
            }
            shuffled++;
        }
    }
    assert_true(made > 300);
    assert_true(refused > 100);
    assert_true(shuffled > 50);
}

static void pattern_refusals_name_the_equation(void **state)
{
    (void)state;
    expect_msg(refuse_pattern(pat(256, 48, 64, 8, CKT_THREAD_RAKED, 1, 64)),
               "Y0*Y1*Y2 == YPerTile fails: 4*8*1 != 48");
    expect_msg(refuse_pattern(pat(256, 20, 64, 2, CKT_WARP_RAKED, 1, 64)),
               "Y0*Y1*Y2 == YPerTile fails: 4*2*2 != 20");
    expect_msg(refuse_pattern(pat(256, 20, 64, 2, CKT_BLOCK_RAKED, 1, 64)),
               "Y0*Y1*Y2 == YPerTile fails: 2*4*2 != 20");
    expect_msg(refuse_pattern(pat(256, 64, 60, 8, CKT_THREAD_RAKED, 1, 64)),
               "XPerTile % VecSize == 0 fails: 60 % 8 = 4");
    /* CK checks VecSize, not the clamped X0: refused even though X0 = 4 would divide 36 */
    expect_msg(refuse_pattern(pat(64, 8, 36, 8, CKT_THREAD_RAKED, 1, 64)),
               "XPerTile % VecSize == 0 fails");
    expect_msg(refuse_pattern(pat(256, 64, 1024, 8, CKT_THREAD_RAKED, 1, 64)),
               "X1*Y1 == WarpSize fails: 128*0 != 64");
    expect_msg(refuse_pattern(pat(256, 64, 1024, 8, CKT_WARP_RAKED, 1, 64)),
               "X1*Y2 == WarpSize fails: 128*0 != 64");
    expect_msg(refuse_pattern(pat(192, 64, 96, 8, CKT_WARP_RAKED, 1, 64)),
               "X1*Y2 == WarpSize fails: 12*5 != 64");
    expect_msg(refuse_pattern(pat(100, 64, 64, 8, CKT_THREAD_RAKED, 1, 64)),
               "X1*Y1*Y0*NumWaveGroups == BlockSize fails: 8*8*1*1 != 100");
    expect_msg(refuse_pattern(pat(100, 64, 64, 8, CKT_WARP_RAKED, 1, 64)),
               "X1*Y2*Y0 == BlockSize fails: 8*8*1 != 100");
    expect_msg(refuse_pattern(pat(100, 64, 64, 8, CKT_BLOCK_RAKED, 1, 64)),
               "X1*Y2*Y1 == BlockSize fails: 8*8*1 != 100");
    expect_msg(refuse_pattern(pat(256, 64, 64, 8, CKT_THREAD_RAKED, 3, 64)),
               "X1*Y1*Y0*NumWaveGroups == BlockSize fails: 8*8*1*3 != 256");
    expect_msg(refuse_pattern(pat(256, 64, 64, 8, CKT_THREAD_RAKED, 8, 64)),
               "X1*Y1*Y0*NumWaveGroups == BlockSize fails: 8*8*0*8 != 256");
    /* the clamp leaves X0 = 3 for a 14-wide tile: CK accepts and drops 2 columns; ckt refuses */
    expect_msg(refuse_pattern(pat(64, 16, 14, 7, CKT_THREAD_RAKED, 1, 64)),
               "X0*X1 == XPerTile fails: 3*4 != 14");
    expect_msg(refuse_pattern(pat(32, 64, 64, 8, CKT_THREAD_RAKED, 1, 64)),
               "BlockSize / WarpSize is 0");
    expect_msg(refuse_pattern(pat(256, 4, 4, 4, CKT_THREAD_RAKED, 1, 64)),
               "TileSize / BlockSize is 0");
    expect_msg(refuse_pattern(pat(0, 64, 64, 8, CKT_THREAD_RAKED, 1, 64)),
               "block_size is 0, must be positive");
    expect_msg(refuse_pattern(pat(256, -64, 64, 8, CKT_THREAD_RAKED, 1, 64)), "y_per_tile is -64");
    expect_msg(refuse_pattern(pat(256, 64, 0, 8, CKT_THREAD_RAKED, 1, 64)), "x_per_tile is 0");
    expect_msg(refuse_pattern(pat(256, 64, 64, 0, CKT_THREAD_RAKED, 1, 64)), "vec_size is 0");
    expect_msg(refuse_pattern(pat(256, 64, 64, 8, CKT_THREAD_RAKED, 0, 64)),
               "num_wave_groups is 0");
    expect_msg(refuse_pattern(pat(256, 64, 64, 8, CKT_THREAD_RAKED, 1, -64)), "warp_size is -64");
    expect_msg(refuse_pattern(pat(256, 64, 64, 8, CKT_PATTERN_NONE, 1, 64)),
               "pattern 0 is not one of");
    expect_msg(refuse_pattern(pat(256, 64, 64, 8, (ckt_pattern_kind)9, 1, 64)), "pattern 9");
    expect_msg(refuse_pattern(pat(256, INT64_MAX / 2, 64, 8, CKT_THREAD_RAKED, 1, 64)),
               "overflows");
    ckt_error err;
    ckt_encoding e;
    ckt_pattern_2d p = pat(256, 64, 64, 8, CKT_THREAD_RAKED, 1, 64);
    assert_int_equal(ckt_encoding_pattern_2d(NULL, &e, &err), CKT_EINVAL);
    assert_int_equal(ckt_encoding_pattern_2d(&p, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_encoding_pattern_2d_shuffled(NULL, &e, &err), CKT_EINVAL);
}

/* ---- the general encoding ---- */

static ckt_encoding_desc desc_2d(void)
{
    /* R=<2>, H=<<4,2>,<8>>, P0 = (R0, H0[0]), P1 = (H1[0]), Y0 = H0[1] */
    ckt_encoding_desc d;
    memset(&d, 0, sizeof d);
    d.nr = 1;
    d.rs[0] = 2;
    d.nx = 2;
    d.nh[0] = 2;
    d.hs[0][0] = 4;
    d.hs[0][1] = 2;
    d.nh[1] = 1;
    d.hs[1][0] = 8;
    d.np = 2;
    d.np_comp[0] = 2;
    d.p_major[0][0] = 0; /* R0, most significant */
    d.p_minor[0][0] = 0;
    d.p_major[0][1] = 1; /* H0[0] */
    d.p_minor[0][1] = 0;
    d.np_comp[1] = 1;
    d.p_major[1][0] = 2;
    d.p_minor[1][0] = 0;
    d.ny = 1;
    d.y_major[0] = 1;
    d.y_minor[0] = 1;
    return d;
}

static void general_literal(void **state)
{
    (void)state;
    ckt_encoding_desc d = desc_2d();
    ckt_encoding e;
    ckt_error err;
    assert_int_equal(ckt_encoding_make(&d, &e, &err), CKT_OK);
    assert_int_equal(ckt_encoding_num_threads(&e), 2 * 4 * 8);
    assert_int_equal(ckt_encoding_num_values(&e), 2);
    assert_int_equal(ckt_encoding_ndim_x(&e), 2);
    assert_int_equal(ckt_encoding_ndim_y(&e), 1);
    /* thread 45 = P0 * 8 + P1 with P0 = 5 = (R0 = 1, H0[0] = 1), P1 = 5: X0 = 1*2 + y, X1 = 5 */
    int64_t ys[1] = {1}, xs[2];
    assert_int_equal(ckt_encoding_calculate_index(&e, 45, ys, xs, &err), CKT_OK);
    assert_int_equal(xs[0], 3);
    assert_int_equal(xs[1], 5);
    /* thread 13 differs only in R: same element */
    assert_int_equal(ckt_encoding_calculate_index(&e, 13, ys, xs, &err), CKT_OK);
    assert_int_equal(xs[0], 3);
    assert_int_equal(xs[1], 5);
    int64_t owners[4], n, oy[1];
    int64_t want[2] = {3, 5};
    assert_int_equal(ckt_encoding_owner(&e, want, owners, 4, &n, oy, &err), CKT_OK);
    assert_int_equal(n, 2);
    assert_int_equal(owners[0], 13);
    assert_int_equal(owners[1], 45);
    assert_int_equal(oy[0], 1);
    /* capacity smaller than the owners: count still reported */
    assert_int_equal(ckt_encoding_owner(&e, want, owners, 1, &n, NULL, &err), CKT_OK);
    assert_int_equal(n, 2);
    ckt_layout tv;
    assert_int_equal(ckt_encoding_tv_layout(&e, &tv, &err), CKT_OK);
    char buf[128];
    ckt_layout_to_string(&tv, buf, sizeof buf);
    /* threads: P1 (8, stride 1), H0[0] (4, stride 16), R0 (2, stride 0); value: H0[1] (2, stride 8)
     */
    assert_string_equal(buf, "((8,4,2),2):((1,16,0),8)");
    char text[512];
    ckt_encoding_to_string(&e, text, sizeof text);
    assert_string_equal(
        text,
        "tile_distribution_encoding{R=<2>, H=<<4,2>,<8>>, P=<<(0,0),(1,0)>,<(2,0)>>, Y=<(1,1)>}");
}

/* A random valid general encoding: the RH components shuffled among Ps and Ys. */
static ckt_encoding_desc random_desc(void)
{
    ckt_encoding_desc d;
    memset(&d, 0, sizeof d);
    int comps[32][2], nc = 0;
    d.nr = (int)rnd_in(0, 2);
    for (int i = 0; i < d.nr; i++) {
        d.rs[i] = rnd_in(1, 3);
        comps[nc][0] = 0;
        comps[nc++][1] = i;
    }
    d.nx = (int)rnd_in(1, 3);
    for (int x = 0; x < d.nx; x++) {
        d.nh[x] = (int)rnd_in(1, 3);
        for (int k = 0; k < d.nh[x]; k++) {
            d.hs[x][k] = rnd_in(1, 4);
            comps[nc][0] = x + 1;
            comps[nc++][1] = k;
        }
    }
    for (int i = nc - 1; i > 0; i--) { /* Fisher-Yates */
        int j = (int)rnd_in(0, i), t0 = comps[i][0], t1 = comps[i][1];
        comps[i][0] = comps[j][0];
        comps[i][1] = comps[j][1];
        comps[j][0] = t0;
        comps[j][1] = t1;
    }
    d.np = (int)rnd_in(1, 3);
    for (int p = 0; p < d.np; p++) d.np_comp[p] = 0;
    for (int c = 0; c < nc; c++) {
        /* R components must go to a P; H components to a P or a Y */
        bool to_p = comps[c][0] == 0 || rnd() % 2 || d.ny == CKT_DIST_MAX_Y;
        if (to_p) {
            int p = (int)rnd_in(0, d.np - 1);
            d.p_major[p][d.np_comp[p]] = comps[c][0];
            d.p_minor[p][d.np_comp[p]++] = comps[c][1];
        } else {
            d.y_major[d.ny] = comps[c][0];
            d.y_minor[d.ny++] = comps[c][1];
        }
    }
    for (int p = 0; p < d.np; p++)
        if (d.np_comp[p] == 0) d.np = p; /* an empty P is not allowed: stop before it */
    return d;
}

static void general_properties(void **state)
{
    (void)state;
    rng_state = 77;
    int checked = 0;
    for (int trial = 0; trial < 600; trial++) {
        ckt_encoding_desc d = random_desc();
        ckt_encoding e;
        ckt_error err;
        if (d.np == 0) continue;
        /* a component dropped with an emptied P is "reached by no P and no Y" */
        if (ckt_encoding_make(&d, &e, &err) != CKT_OK) {
            assert_true(strstr(err.msg, "reached by no P") != NULL);
            continue;
        }
        checked++;
        int64_t xl[CKT_DIST_MAX_X], yl[CKT_DIST_MAX_Y], cells = 1, repl = 1;
        ckt_encoding_x_lengths(&e, xl, NULL);
        ckt_encoding_ys_lengths(&e, yl, NULL);
        for (int x = 0; x < d.nx; x++) cells *= xl[x];
        for (int r = 0; r < d.nr; r++) repl *= d.rs[r];
        int64_t nt = ckt_encoding_num_threads(&e), nv = ckt_encoding_num_values(&e);
        assert_int_equal(nt * nv, cells * repl); /* every element held once per replica */
        ckt_layout tv;
        assert_int_equal(ckt_encoding_tv_layout(&e, &tv, &err), CKT_OK);
        assert_int_equal(ckt_layout_size(&tv), nt * nv);
        int64_t *count = calloc((size_t)cells, sizeof *count);
        for (int64_t t = 0; t < nt; t++)
            for (int64_t v = 0; v < nv; v++) {
                int64_t ys[CKT_DIST_MAX_Y], xs[CKT_DIST_MAX_X], r = v, off = 0, tvoff;
                for (int y = d.ny - 1; y >= 0; y--) {
                    ys[y] = r % yl[y];
                    r /= yl[y];
                }
                assert_int_equal(ckt_encoding_calculate_index(&e, t, ys, xs, &err), CKT_OK);
                for (int x = 0; x < d.nx; x++) {
                    assert_true(xs[x] >= 0 && xs[x] < xl[x]);
                    off = off * xl[x] + xs[x];
                }
                count[off]++;
                /* the TV view agrees with calculate_index */
                ckt_tuple c;
                int64_t tvc[2] = {t, v};
                ckt_tuple_flat(&c, 2, tvc, &err);
                assert_int_equal(ckt_layout_eval_coord(&tv, &c, &tvoff, &err), CKT_OK);
                assert_int_equal(tvoff, off);
                /* owner inverts calculate_index */
                int64_t owners[64], n, oy[CKT_DIST_MAX_Y];
                assert_int_equal(ckt_encoding_owner(&e, xs, owners, 64, &n, oy, &err), CKT_OK);
                bool found = false;
                for (int64_t i = 0; i < n && i < 64; i++) found = found || owners[i] == t;
                assert_true(found);
                assert_memory_equal(oy, ys, sizeof(int64_t) * (size_t)d.ny);
            }
        int64_t reached = 1; /* replicas: the R components some P lists */
        for (int p = 0; p < d.np; p++)
            for (int j = 0; j < d.np_comp[p]; j++)
                if (d.p_major[p][j] == 0) reached *= d.rs[d.p_minor[p][j]];
        for (int64_t i = 0; i < cells; i++) assert_int_equal(count[i], reached);
        free(count);
    }
    assert_true(checked > 300);
}

static void general_refusals(void **state)
{
    (void)state;
    ckt_encoding e;
    ckt_error err;
    ckt_encoding_desc d;
#define REFUSE(edit, want)                                                                         \
    do {                                                                                           \
        d = desc_2d();                                                                             \
        edit;                                                                                      \
        assert_int_not_equal(ckt_encoding_make(&d, &e, &err), CKT_OK);                             \
        expect_msg(err.msg, "tile_distribution_encoding: ");                                       \
        expect_msg(err.msg, want);                                                                 \
    } while (0)
    REFUSE(d.p_major[1][0] = 3, "P 1 entry 0 has major 3, out of range [0, 2]");
    REFUSE(d.p_major[1][0] = -1, "major -1");
    REFUSE(d.p_minor[1][0] = 1, "minor 1, out of range for an H sequence (length 1)");
    REFUSE(d.p_minor[0][0] = 4, "minor 4, out of range for R");
    REFUSE(d.y_minor[0] = 0, "RH component (1, 0) is used twice (again by Y0)");
    REFUSE((d.p_major[1][0] = 1, d.p_minor[1][0] = 0),
           "RH component (1, 0) is used twice (again by P1)");
    REFUSE(d.ny = 0, "H0 component 1 (length 2) is reached by no P and no Y");
    REFUSE(d.np_comp[0] = 1, "H0 component 0 (length 4) is reached by no P and no Y");
    REFUSE((d.y_major[0] = 0, d.y_minor[0] = 0, d.np_comp[0] = 1, d.p_major[0][0] = 1,
            d.p_minor[0][0] = 0),
           "Y0 maps to R component 0");
    REFUSE(d.hs[0][1] = 0, "H0 length 1 is 0, must be positive");
    REFUSE(d.hs[1][0] = -8, "H1 length 0 is -8");
    REFUSE(d.rs[0] = 0, "R length 0 is 0");
    REFUSE(d.nx = 0, "0 X dimensions");
    REFUSE(d.nx = CKT_DIST_MAX_X + 1, "X dimensions (1 to");
    REFUSE(d.np = 0, "0 P dimensions");
    REFUSE(d.np = CKT_DIST_MAX_P + 1, "P dimensions");
    REFUSE(d.nr = CKT_DIST_MAX_H + 1, "R lengths (at most");
    REFUSE(d.nr = -1, "R lengths");
    REFUSE(d.ny = CKT_DIST_MAX_Y + 1, "Y dimensions (at most");
    REFUSE(d.ny = -1, "Y dimensions");
    REFUSE(d.nh[0] = 0, "H0 has 0 lengths");
    REFUSE(d.nh[0] = CKT_DIST_MAX_H + 1, "H0 has 9 lengths");
    REFUSE(d.np_comp[1] = 0, "P1 lists 0 components");
    REFUSE(d.np_comp[1] = CKT_DIST_MAX_H + 1, "P1 lists 9 components");
    REFUSE((d.hs[0][0] = INT64_MAX / 2, d.hs[1][0] = 4), "overflows");
#undef REFUSE
    /* R=<3> replicates three times */
    d = desc_2d();
    d.rs[0] = 3;
    assert_int_equal(ckt_encoding_make(&d, &e, &err), CKT_OK);
    assert_int_equal(ckt_encoding_num_threads(&e), 3 * 4 * 8);
    d = desc_2d();
    d.np_comp[0] = 1; /* R0 of length 2 no longer reached ... and H0[0] neither: */
    d.p_major[0][0] = 1;
    d.p_minor[0][0] = 0;
    d.rs[0] = 2;
    assert_int_not_equal(ckt_encoding_make(&d, &e, &err), CKT_OK);
    expect_msg(err.msg, "R component 0 (length 2) is reached by no P");
    assert_int_equal(ckt_encoding_make(NULL, &e, &err), CKT_EINVAL);
    d = desc_2d();
    assert_int_equal(ckt_encoding_make(&d, NULL, &err), CKT_EINVAL);
}

static void method_refusals(void **state)
{
    (void)state;
    ckt_encoding_desc d = desc_2d();
    ckt_encoding e;
    ckt_error err;
    assert_int_equal(ckt_encoding_make(&d, &e, &err), CKT_OK);
    int64_t ys[1] = {0}, xs[2], t[4], n;
    assert_int_equal(ckt_encoding_calculate_index(&e, 64, ys, xs, &err), CKT_EINVAL);
    expect_msg(err.msg, "calculate_index: thread 64 is out of range [0, 64)");
    assert_int_equal(ckt_encoding_calculate_index(&e, -1, ys, xs, &err), CKT_EINVAL);
    ys[0] = 2;
    assert_int_equal(ckt_encoding_calculate_index(&e, 0, ys, xs, &err), CKT_EINVAL);
    expect_msg(err.msg, "calculate_index: Y0 = 2 is out of range [0, 2)");
    ys[0] = -1;
    assert_int_equal(ckt_encoding_calculate_index(&e, 0, ys, xs, &err), CKT_EINVAL);
    assert_int_equal(ckt_encoding_calculate_index(&e, 0, NULL, xs, &err), CKT_EINVAL);
    assert_int_equal(ckt_encoding_calculate_index(NULL, 0, ys, xs, &err), CKT_EINVAL);
    assert_int_equal(ckt_encoding_calculate_index(&e, 0, ys, NULL, &err), CKT_EINVAL);
    int64_t bad[2] = {8, 0};
    assert_int_equal(ckt_encoding_owner(&e, bad, t, 4, &n, NULL, &err), CKT_EINVAL);
    expect_msg(err.msg, "owner: X0 = 8 is out of range [0, 8)");
    bad[0] = 0;
    bad[1] = -1;
    assert_int_equal(ckt_encoding_owner(&e, bad, t, 4, &n, NULL, &err), CKT_EINVAL);
    bad[1] = 0;
    assert_int_equal(ckt_encoding_owner(&e, bad, t, -1, &n, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_encoding_owner(&e, bad, NULL, 4, &n, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_encoding_owner(&e, bad, t, 4, NULL, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_encoding_owner(NULL, bad, t, 4, &n, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_encoding_ys_lengths(&e, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_encoding_x_lengths(NULL, xs, &err), CKT_EINVAL);
    assert_int_equal(ckt_encoding_tv_layout(&e, NULL, &err), CKT_EINVAL);
    ckt_layout tv;
    assert_int_equal(ckt_encoding_tv_layout(NULL, &tv, &err), CKT_EINVAL);
}

/* too many leaves for a layout mode: refused by the TV view, not truncated */
static void tv_capacity(void **state)
{
    (void)state;
    ckt_encoding_desc d;
    memset(&d, 0, sizeof d);
    d.nx = 3;
    d.np = 3;
    for (int x = 0; x < 3; x++) {
        d.nh[x] = 7;
        for (int k = 0; k < 7; k++) {
            d.hs[x][k] = 2;
            d.p_major[x][k] = x + 1;
            d.p_minor[x][k] = k;
        }
        d.np_comp[x] = 7;
    }
    ckt_encoding e;
    ckt_error err;
    assert_int_equal(ckt_encoding_make(&d, &e, &err), CKT_OK);
    ckt_layout tv;
    assert_int_not_equal(ckt_encoding_tv_layout(&e, &tv, &err), CKT_OK);
    expect_msg(err.msg, "capacity");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pattern_2d_equations),
        cmocka_unit_test(ck_encodings_literal),
        cmocka_unit_test(patterns_match_the_model),
        cmocka_unit_test(pattern_refusals_name_the_equation),
        cmocka_unit_test(general_literal),
        cmocka_unit_test(general_properties),
        cmocka_unit_test(general_refusals),
        cmocka_unit_test(method_refusals),
        cmocka_unit_test(tv_capacity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
