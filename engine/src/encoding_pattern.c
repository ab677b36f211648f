/* The 2D raked patterns: CK Tile's tile_distribution_encoding_pattern_2d
 * (TileDistributionEncodingPattern2D, CK Tile's static encoding pattern header), with the names of
 * its documentation: X0 = the vector, X1 = threads along X (CK's source swaps the two names). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "checked.h"
#include "ckt/distribution.h"

#define FAIL(...) ckt_fail(err, CKT_EINVAL, "encoding_pattern_2d: " __VA_ARGS__)
#define LL(x) ((long long)(x))

/* CK's static_assert(f[0]*f[1]*... == want), reported with the numbers when it fails. */
static ckt_status need(const char *eq, int n, const int64_t *f, int64_t want, const char *why,
                       ckt_error *err)
{
    int64_t r = 1;
    bool ovf = false;
    char text[160];
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        ovf = ovf || ckt_mul_ovf(r, f[i], &r);
        k += (size_t)snprintf(text + k, sizeof text - k, "%s%lld", i ? "*" : "", LL(f[i]));
    }
    if (!ovf && r == want) return CKT_OK;
    return FAIL("%s fails: %s != %lld (%s)", eq, text, LL(want), why);
}
#define NEED(eq, want, why, ...)                                                                   \
    need(eq, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__},  \
         want, why, err)

static ckt_status check_inputs(const ckt_pattern_2d *p, ckt_error *err)
{
    const struct {
        const char *name;
        int64_t v;
    } f[] = {{"block_size", p->block_size},           {"y_per_tile", p->y_per_tile},
             {"x_per_tile", p->x_per_tile},           {"vec_size", p->vec_size},
             {"num_wave_groups", p->num_wave_groups}, {"warp_size", p->warp_size}};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (f[i].v <= 0) return FAIL("%s is %lld, must be positive", f[i].name, LL(f[i].v));
    if (p->pattern != CKT_THREAD_RAKED && p->pattern != CKT_WARP_RAKED &&
        p->pattern != CKT_BLOCK_RAKED)
        return FAIL("pattern %d is not one of thread_raked, warp_raked, block_raked",
                    (int)p->pattern);
    return CKT_OK;
}

/* Where the three Y factors live in the H sequence of the Y axis (or, for the warp id of
 * thread raked with wave groups, in R), as CK lays them out per pattern. */
typedef struct {
    int warp_on_r; /* the warp id is replicated over R = <Y0> (thread raked, NumWaveGroups > 1) */
    int warp, rows,
        iters; /* minor index of the warp id, the rows one warp covers, the iterations */
} y_roles;

static ckt_status make_pattern(const ckt_pattern_2d *p, bool shuffled, ckt_encoding *out,
                               ckt_error *err)
{
    if (!p || !out) return ckt_fail(err, CKT_EINVAL, "encoding_pattern_2d: NULL argument");
    ckt_status st = check_inputs(p, err);
    if (st) return st;
    const int64_t B = p->block_size, W = p->warp_size, G = p->num_wave_groups, YT = p->y_per_tile,
                  XT = p->x_per_tile;
    if (XT % p->vec_size != 0)
        return FAIL("XPerTile %% VecSize == 0 fails: %lld %% %lld = %lld", LL(XT), LL(p->vec_size),
                    LL(XT % p->vec_size));
    int64_t warps = B / W, tile, threads;
    if (warps == 0)
        return FAIL("BlockSize / WarpSize is 0: %lld threads are less than one warp of %lld", LL(B),
                    LL(W));
    if (ckt_mul_ovf(YT, XT, &tile))
        return ckt_fail(err, CKT_EOVERFLOW,
                        "encoding_pattern_2d: YPerTile*XPerTile overflows 64 bits");
    threads = warps * W; /* <= B */
    int64_t largest_vec = tile / threads;
    if (largest_vec == 0)
        return FAIL(
            "TileSize / BlockSize is 0: a %lldx%lld tile has fewer elements than %lld threads",
            LL(YT), LL(XT), LL(threads));
    const int64_t x0 = ckt_min64(largest_vec, p->vec_size), x1 = XT / x0;
    /* CK does not check this one: a clamped X0 that does not divide XPerTile leaves columns unowned
     */
    if ((st = NEED("X0*X1 == XPerTile", XT,
                   "X0 = min(TileSize/BlockSize, VecSize), X1 = XPerTile/X0", x0, x1)))
        return st;
    int64_t y0, y1, y2;
    y_roles r;
    switch (p->pattern) {
    case CKT_THREAD_RAKED:
        y1 = W / x1;
        if ((st = NEED("X1*Y1 == WarpSize", W, "Y1 = WarpSize/X1 rows per warp", x1, y1)))
            return st;
        y0 = warps / G;
        if ((st = NEED("X1*Y1*Y0*NumWaveGroups == BlockSize", B, "Y0 = warps/NumWaveGroups", x1, y1,
                       y0, G)))
            return st;
        y2 = YT / (y1 * y0);
        if ((st = NEED("Y0*Y1*Y2 == YPerTile", YT, "Y2 = YPerTile/(Y0*Y1) iterations", y0, y1, y2)))
            return st;
        r = G > 1 ? (y_roles){1, 0, 0, 1} : (y_roles){0, 0, 1, 2};
        break;
    case CKT_WARP_RAKED:
    default: { /* warp-raked: Y0 counts the warps and Y1 the iterations; block-raked: the reverse */
        bool wr = p->pattern == CKT_WARP_RAKED;
        int64_t *yw = wr ? &y0 : &y1, *yi = wr ? &y1 : &y0;
        y2 = W / x1;
        if ((st = NEED("X1*Y2 == WarpSize", W, "Y2 = WarpSize/X1 rows per warp", x1, y2)))
            return st;
        *yw = warps;
        if ((st = NEED(wr ? "X1*Y2*Y0 == BlockSize" : "X1*Y2*Y1 == BlockSize", B,
                       wr ? "Y0 = BlockSize/WarpSize warps" : "Y1 = BlockSize/WarpSize warps", x1,
                       y2, *yw)))
            return st;
        *yi = YT / (y2 * *yw);
        if ((st = NEED("Y0*Y1*Y2 == YPerTile", YT,
                       wr ? "Y1 = YPerTile/(Y0*Y2) iterations" : "Y0 = YPerTile/(Y1*Y2) iterations",
                       y0, y1, y2)))
            return st;
        r = wr ? (y_roles){0, 0, 2, 1} : (y_roles){0, 1, 2, 0};
        break;
    }
    }
    /* Y axis H sequence (CK: <Y0,Y1,Y2>, or <Y1,Y2> with R = <Y0>), X axis H = <X1 threads, X0
     * vector>; shuffled puts the X axis first. */
    const int ya = shuffled ? 2 : 1, xa = shuffled ? 1 : 2;
    ckt_encoding_desc d;
    memset(&d, 0, sizeof d);
    d.nr = 1;
    d.rs[0] = r.warp_on_r ? y0 : 1;
    d.nx = 2;
    int64_t *yh = d.hs[ya - 1], *xh = d.hs[xa - 1];
    if (r.warp_on_r) {
        d.nh[ya - 1] = 2;
        yh[0] = y1;
        yh[1] = y2;
    } else {
        d.nh[ya - 1] = 3;
        yh[0] = y0;
        yh[1] = y1;
        yh[2] = y2;
    }
    d.nh[xa - 1] = 2;
    xh[0] = x1;
    xh[1] = x0;
    d.np = 2;
    d.np_comp[0] = 1; /* P0 = the warp id */
    d.p_major[0][0] = r.warp_on_r ? 0 : ya;
    d.p_minor[0][0] = r.warp;
    d.np_comp[1] = 2; /* P1 = the lane: (rows of the warp, threads along X) */
    d.p_major[1][0] = ya;
    d.p_minor[1][0] = r.rows;
    d.p_major[1][1] = xa;
    d.p_minor[1][1] = 0;
    /* Ys: the iterations and the vector, in the order of their H sequences */
    d.ny = 2;
    d.y_major[ya - 1] = ya;
    d.y_minor[ya - 1] = r.iters;
    d.y_major[xa - 1] = xa;
    d.y_minor[xa - 1] = 1;
    ckt_encoding e;
    if ((st = ckt_encoding_make(&d, &e, err))) return st;
    e.pattern = *p;
    e.shuffled = shuffled;
    e.x0 = x0;
    e.x1 = x1;
    e.y0 = y0;
    e.y1 = y1;
    e.y2 = y2;
    *out = e;
    return CKT_OK;
}

ckt_status ckt_encoding_pattern_2d(const ckt_pattern_2d *p, ckt_encoding *out, ckt_error *err)
{
    return make_pattern(p, false, out, err);
}

ckt_status ckt_encoding_pattern_2d_shuffled(const ckt_pattern_2d *p, ckt_encoding *out,
                                            ckt_error *err)
{
    return make_pattern(p, true, out, err);
}
