/* CK Tile tile_distribution_encoding (see shared/reference/ck_tile.md) and the 2D raked
 * patterns of seed 000 (static_encoding_pattern.hpp). */
#include <stdio.h>
#include <string.h>

#include "ckt/checked.h"
#include "ckt/distribution.h"

/* Where each RH component gets its value: from a P (digit of that P) or from a Y. */
typedef struct {
    int kind; /* 0 unused, 1 P, 2 Y */
    int index;
} source;

static int64_t comp_len(const ckt_encoding_desc *d, int major, int minor)
{
    return major == 0 ? d->rs[minor] : d->hs[major - 1][minor];
}

static int seq_len(const ckt_encoding_desc *d, int major) { return major == 0 ? d->nr : d->nh[major - 1]; }

static ckt_status check_ref(const ckt_encoding_desc *d, int major, int minor, const char *who, int i, int j, ckt_error *err)
{
    if (major < 0 || major > d->nx)
        return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: %s %d entry %d has major %d, out of range [0, %d]", who, i, j, major, d->nx);
    if (minor < 0 || minor >= seq_len(d, major))
        return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: %s %d entry %d has minor %d, out of range for %s (length %d)",
                        who, i, j, minor, major == 0 ? "R" : "an H sequence", seq_len(d, major));
    return CKT_OK;
}

ckt_status ckt_encoding_make(const ckt_encoding_desc *d, ckt_encoding *out, ckt_error *err)
{
    if (!d || !out) return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: NULL argument");
    if (d->nr < 0 || d->nr > CKT_DIST_MAX_H) return ckt_fail(err, CKT_ECAPACITY, "tile_distribution_encoding: %d R lengths (at most %d)", d->nr, CKT_DIST_MAX_H);
    if (d->nx < 1 || d->nx > CKT_DIST_MAX_X) return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: %d X dimensions (1 to %d)", d->nx, CKT_DIST_MAX_X);
    if (d->np < 1 || d->np > CKT_DIST_MAX_P) return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: %d P dimensions (1 to %d)", d->np, CKT_DIST_MAX_P);
    if (d->ny < 0 || d->ny > CKT_DIST_MAX_Y) return ckt_fail(err, CKT_ECAPACITY, "tile_distribution_encoding: %d Y dimensions (at most %d)", d->ny, CKT_DIST_MAX_Y);
    for (int i = 0; i < d->nr; i++)
        if (d->rs[i] <= 0) return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: R length %d is %lld, must be positive", i, (long long)d->rs[i]);
    for (int x = 0; x < d->nx; x++) {
        if (d->nh[x] < 1 || d->nh[x] > CKT_DIST_MAX_H) return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: H%d has %d lengths (1 to %d)", x, d->nh[x], CKT_DIST_MAX_H);
        for (int k = 0; k < d->nh[x]; k++)
            if (d->hs[x][k] <= 0) return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: H%d length %d is %lld, must be positive", x, k, (long long)d->hs[x][k]);
    }
    source src[CKT_DIST_MAX_X + 1][CKT_DIST_MAX_H];
    memset(src, 0, sizeof src);
    int64_t threads = 1;
    for (int p = 0; p < d->np; p++) {
        if (d->np_comp[p] < 1 || d->np_comp[p] > CKT_DIST_MAX_H) return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: P%d lists %d components (1 to %d)", p, d->np_comp[p], CKT_DIST_MAX_H);
        for (int j = 0; j < d->np_comp[p]; j++) {
            int ma = d->p_major[p][j], mi = d->p_minor[p][j];
            ckt_status st = check_ref(d, ma, mi, "P", p, j, err);
            if (st) return st;
            if (src[ma][mi].kind) return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: RH component (%d, %d) is used twice (again by P%d)", ma, mi, p);
            src[ma][mi] = (source){1, p};
            if (ckt_mul_ovf(threads, comp_len(d, ma, mi), &threads)) return ckt_fail(err, CKT_EOVERFLOW, "tile_distribution_encoding: thread count overflows");
        }
    }
    for (int y = 0; y < d->ny; y++) {
        int ma = d->y_major[y], mi = d->y_minor[y];
        ckt_status st = check_ref(d, ma, mi, "Y", y, 0, err);
        if (st) return st;
        if (ma == 0) return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: Y%d maps to R component %d; Ys must map to H components", y, mi);
        if (src[ma][mi].kind) return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: RH component (%d, %d) is used twice (again by Y%d)", ma, mi, y);
        src[ma][mi] = (source){2, y};
    }
    for (int x = 0; x < d->nx; x++)
        for (int k = 0; k < d->nh[x]; k++)
            if (!src[x + 1][k].kind)
                return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: H%d component %d (length %lld) is reached by no P and no Y", x, k, (long long)d->hs[x][k]);
    for (int k = 0; k < d->nr; k++)
        if (!src[0][k].kind && d->rs[k] != 1)
            return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: R component %d (length %lld) is reached by no P", k, (long long)d->rs[k]);
    int64_t elems = 1;
    for (int x = 0; x < d->nx; x++)
        for (int k = 0; k < d->nh[x]; k++)
            if (ckt_mul_ovf(elems, d->hs[x][k], &elems)) return ckt_fail(err, CKT_EOVERFLOW, "tile_distribution_encoding: tile size overflows");
    ckt_encoding e;
    memset(&e, 0, sizeof e);
    e.d = *d;
    *out = e;
    return CKT_OK;
}

int64_t ckt_encoding_num_threads(const ckt_encoding *e)
{
    int64_t n = 1;
    for (int p = 0; p < e->d.np; p++)
        for (int j = 0; j < e->d.np_comp[p]; j++) n *= comp_len(&e->d, e->d.p_major[p][j], e->d.p_minor[p][j]);
    return n;
}

int ckt_encoding_ndim_x(const ckt_encoding *e) { return e->d.nx; }
int ckt_encoding_ndim_y(const ckt_encoding *e) { return e->d.ny; }

ckt_status ckt_encoding_ys_lengths(const ckt_encoding *e, int64_t *ys, ckt_error *err)
{
    (void)err;
    for (int y = 0; y < e->d.ny; y++) ys[y] = comp_len(&e->d, e->d.y_major[y], e->d.y_minor[y]);
    return CKT_OK;
}

ckt_status ckt_encoding_x_lengths(const ckt_encoding *e, int64_t *xs, ckt_error *err)
{
    (void)err;
    for (int x = 0; x < e->d.nx; x++) {
        xs[x] = 1;
        for (int k = 0; k < e->d.nh[x]; k++) xs[x] *= e->d.hs[x][k];
    }
    return CKT_OK;
}

static int64_t p_size(const ckt_encoding_desc *d, int p)
{
    int64_t n = 1;
    for (int j = 0; j < d->np_comp[p]; j++) n *= comp_len(d, d->p_major[p][j], d->p_minor[p][j]);
    return n;
}

ckt_status ckt_encoding_calculate_index(const ckt_encoding *e, int64_t thread, const int64_t *ys, int64_t *xs, ckt_error *err)
{
    const ckt_encoding_desc *d = &e->d;
    int64_t nt = ckt_encoding_num_threads(e);
    if (thread < 0 || thread >= nt)
        return ckt_fail(err, CKT_EINVAL, "calculate_index: thread %lld is out of range [0, %lld)", (long long)thread, (long long)nt);
    int64_t val[CKT_DIST_MAX_X + 1][CKT_DIST_MAX_H];
    memset(val, 0, sizeof val);
    /* thread = merge of the Ps, P0 most significant; each P = merge of its components, first most significant */
    int64_t rest = thread;
    for (int p = d->np - 1; p >= 0; p--) {
        int64_t ps = p_size(d, p), pv = rest % ps;
        rest /= ps;
        for (int j = d->np_comp[p] - 1; j >= 0; j--) {
            int ma = d->p_major[p][j], mi = d->p_minor[p][j];
            int64_t len = comp_len(d, ma, mi);
            val[ma][mi] = pv % len;
            pv /= len;
        }
    }
    for (int y = 0; y < d->ny; y++) {
        int64_t len = comp_len(d, d->y_major[y], d->y_minor[y]);
        if (ys[y] < 0 || ys[y] >= len)
            return ckt_fail(err, CKT_EINVAL, "calculate_index: Y%d = %lld is out of range [0, %lld)", y, (long long)ys[y], (long long)len);
        val[d->y_major[y]][d->y_minor[y]] = ys[y];
    }
    /* X_i = merge of H_i's components, the first listed outermost */
    for (int x = 0; x < d->nx; x++) {
        int64_t v = 0;
        for (int k = 0; k < d->nh[x]; k++) v = v * d->hs[x][k] + val[x + 1][k];
        xs[x] = v;
    }
    return CKT_OK;
}

/* Offset weight of component (major, minor) in the row-major tile (0 for R: replication). */
static int64_t comp_stride(const ckt_encoding_desc *d, int major, int minor)
{
    if (major == 0) return 0;
    int x = major - 1;
    int64_t w = 1;
    for (int k = minor + 1; k < d->nh[x]; k++) w *= d->hs[x][k];
    for (int j = x + 1; j < d->nx; j++)
        for (int k = 0; k < d->nh[j]; k++) w *= d->hs[j][k];
    return w;
}

static ckt_status mode_of(int n0, const int64_t *s0, const int64_t *d0, ckt_layout *out, ckt_error *err)
{
    /* size-1 leaves carry no information: drop them */
    int64_t s[CKT_MAX_RANK * 4], dd[CKT_MAX_RANK * 4];
    int n = 0;
    for (int i = 0; i < n0 && n < CKT_MAX_RANK * 4; i++)
        if (s0[i] != 1) { s[n] = s0[i]; dd[n++] = d0[i]; }
    if (n > CKT_MAX_RANK) return ckt_fail(err, CKT_ECAPACITY, "tv_layout: %d modes are beyond the capacity %d", n, CKT_MAX_RANK);
    if (n == 0) {
        int64_t one = 1, zero = 0;
        return ckt_layout_flat(out, 1, &one, &zero, err);
    }
    return ckt_layout_flat(out, n, s, dd, err);
}

ckt_status ckt_tv_from_modes(int nt, const int64_t *ts, const int64_t *td, int nv, const int64_t *vs, const int64_t *vd, ckt_layout *tv, ckt_error *err);
ckt_status ckt_tv_from_modes(int nt, const int64_t *ts, const int64_t *td, int nv, const int64_t *vs, const int64_t *vd, ckt_layout *tv, ckt_error *err)
{
    ckt_layout t, v;
    ckt_status st;
    if ((st = mode_of(nt, ts, td, &t, err)) || (st = mode_of(nv, vs, vd, &v, err))) return st;
    ckt_tuple sh[2] = {t.shape, v.shape}, sd[2] = {t.stride, v.stride};
    ckt_tuple a, b;
    if ((st = ckt_tuple_make(&a, 2, sh, err)) || (st = ckt_tuple_make(&b, 2, sd, err))) return st;
    return ckt_layout_make(tv, &a, &b, err);
}

ckt_status ckt_encoding_tv_layout(const ckt_encoding *e, ckt_layout *tv, ckt_error *err)
{
    const ckt_encoding_desc *d = &e->d;
    int64_t ts[CKT_DIST_MAX_P * CKT_DIST_MAX_H], td[CKT_DIST_MAX_P * CKT_DIST_MAX_H], vs[CKT_DIST_MAX_Y], vd[CKT_DIST_MAX_Y];
    int nt = 0, nv = 0;
    /* colexicographic leaves: the fastest-varying component first */
    for (int p = d->np - 1; p >= 0; p--)
        for (int j = d->np_comp[p] - 1; j >= 0; j--) {
            int ma = d->p_major[p][j], mi = d->p_minor[p][j];
            ts[nt] = comp_len(d, ma, mi);
            td[nt++] = comp_stride(d, ma, mi);
        }
    for (int y = d->ny - 1; y >= 0; y--) {
        vs[nv] = comp_len(d, d->y_major[y], d->y_minor[y]);
        vd[nv++] = comp_stride(d, d->y_major[y], d->y_minor[y]);
    }
    if (nt > CKT_MAX_RANK || nv > CKT_MAX_RANK) return ckt_fail(err, CKT_ECAPACITY, "tv_layout: too many components");
    return ckt_tv_from_modes(nt, ts, td, nv, vs, vd, tv, err);
}

const char *ckt_pattern_name(ckt_pattern_kind k)
{
    switch (k) {
    case CKT_THREAD_RAKED: return "thread_raked";
    case CKT_WARP_RAKED: return "warp_raked";
    case CKT_BLOCK_RAKED: return "block_raked";
    default: return "general";
    }
}

#define NEED(cond, ...) \
    do { if (!(cond)) return ckt_fail(err, CKT_EINVAL, "encoding_pattern_2d: " __VA_ARGS__); } while (0)

ckt_status ckt_encoding_pattern_2d(const ckt_pattern_2d *p, ckt_encoding *out, ckt_error *err)
{
    if (!p || !out) return ckt_fail(err, CKT_EINVAL, "encoding_pattern_2d: NULL argument");
    NEED(p->block_size > 0, "block_size %lld must be positive", (long long)p->block_size);
    NEED(p->y_per_tile > 0, "y_per_tile %lld must be positive", (long long)p->y_per_tile);
    NEED(p->x_per_tile > 0, "x_per_tile %lld must be positive", (long long)p->x_per_tile);
    NEED(p->vec_size > 0, "vec_size %lld must be positive", (long long)p->vec_size);
    NEED(p->num_wave_groups > 0, "num_wave_groups %lld must be positive", (long long)p->num_wave_groups);
    NEED(p->warp_size > 0, "warp_size %lld must be positive", (long long)p->warp_size);
    NEED(p->pattern >= CKT_THREAD_RAKED && p->pattern <= CKT_BLOCK_RAKED, "unknown pattern");
    NEED(p->block_size % p->warp_size == 0, "BlockSize %% WarpSize == 0 fails: %lld %% %lld != 0", (long long)p->block_size, (long long)p->warp_size);
    NEED(p->num_wave_groups == 1 || p->pattern == CKT_THREAD_RAKED, "num_wave_groups %lld: only the thread-raked pattern takes wave groups", (long long)p->num_wave_groups);
    int64_t tile;
    if (ckt_mul_ovf(p->y_per_tile, p->x_per_tile, &tile)) return ckt_fail(err, CKT_EOVERFLOW, "encoding_pattern_2d: tile size overflows");
    int64_t max_vec = tile / p->block_size;
    NEED(max_vec >= 1, "the tile (%lld elements) is smaller than the block (%lld threads): TileSize / BlockSize == 0", (long long)tile, (long long)p->block_size);
    int64_t x0 = ckt_min64(max_vec, p->vec_size);
    NEED(p->x_per_tile % x0 == 0, "XPerTile %% X0 == 0 fails: %lld %% %lld != 0 (X0 = min(TileSize/BlockSize, VecSize))", (long long)p->x_per_tile, (long long)x0);
    int64_t x1 = p->x_per_tile / x0;
    NEED(p->warp_size % x1 == 0, "X1 * rows-per-warp == WarpSize fails: X1 = XPerTile/X0 = %lld does not divide WarpSize %lld", (long long)x1, (long long)p->warp_size);
    int64_t warps = p->block_size / p->warp_size, rows_per_warp = p->warp_size / x1;
    int64_t y0, y1, y2;
    ckt_encoding_desc d;
    memset(&d, 0, sizeof d);
    d.nr = 1;
    d.rs[0] = 1;
    d.nx = 2;
    d.nh[0] = 3;
    d.nh[1] = 2;
    d.np = 2;
    d.np_comp[0] = 1;
    d.np_comp[1] = 2;
    d.ny = 2;
    d.p_major[0][0] = 1;
    d.p_major[1][0] = 1;
    d.p_major[1][1] = 2;
    d.p_minor[1][1] = 0;
    d.y_major[0] = 1;
    d.y_major[1] = 2;
    switch (p->pattern) {
    case CKT_THREAD_RAKED:
        NEED(warps % p->num_wave_groups == 0, "warps %% NumWaveGroups == 0 fails: %lld %% %lld != 0", (long long)warps, (long long)p->num_wave_groups);
        y0 = warps / p->num_wave_groups;
        y1 = rows_per_warp;
        y2 = p->y_per_tile / (y0 * y1);
        NEED(y2 >= 1 && y0 * y1 * y2 == p->y_per_tile, "Y0*Y1*Y2 == YPerTile fails: Y0 = %lld warps, Y1 = %lld rows per warp, YPerTile = %lld is not a multiple of %lld",
             (long long)y0, (long long)y1, (long long)p->y_per_tile, (long long)(y0 * y1));
        d.p_minor[0][0] = 0; d.p_minor[1][0] = 1; d.y_minor[0] = 2; d.y_minor[1] = 1;
        break;
    case CKT_WARP_RAKED:
        y0 = warps;
        y2 = rows_per_warp;
        y1 = p->y_per_tile / (y0 * y2);
        NEED(y1 >= 1 && y0 * y1 * y2 == p->y_per_tile, "Y0*Y1*Y2 == YPerTile fails: Y0 = %lld warps, Y2 = %lld rows per warp, YPerTile = %lld is not a multiple of %lld",
             (long long)y0, (long long)y2, (long long)p->y_per_tile, (long long)(y0 * y2));
        d.p_minor[0][0] = 0; d.p_minor[1][0] = 2; d.y_minor[0] = 1; d.y_minor[1] = 1;
        break;
    default:
        y1 = warps;
        y2 = rows_per_warp;
        y0 = p->y_per_tile / (y1 * y2);
        NEED(y0 >= 1 && y0 * y1 * y2 == p->y_per_tile, "Y0*Y1*Y2 == YPerTile fails: Y1 = %lld warps, Y2 = %lld rows per warp, YPerTile = %lld is not a multiple of %lld",
             (long long)y1, (long long)y2, (long long)p->y_per_tile, (long long)(y1 * y2));
        d.p_minor[0][0] = 1; d.p_minor[1][0] = 2; d.y_minor[0] = 0; d.y_minor[1] = 1;
        break;
    }
    d.hs[0][0] = y0;
    d.hs[0][1] = y1;
    d.hs[0][2] = y2;
    d.hs[1][0] = x1; /* threads along X */
    d.hs[1][1] = x0; /* the vector */
    ckt_encoding e;
    ckt_status st = ckt_encoding_make(&d, &e, err);
    if (st) return st;
    e.pattern = *p;
    e.x0 = x0;
    e.x1 = x1;
    e.y0 = y0;
    e.y1 = y1;
    e.y2 = y2;
    *out = e;
    return CKT_OK;
}

int ckt_encoding_to_string(const ckt_encoding *e, char *buf, size_t cap)
{
    if (e->pattern.pattern != CKT_PATTERN_NONE)
        return snprintf(buf, cap, "encoding_pattern_2d{%s, block %lld, tile %lldx%lld, X0=%lld (vector) X1=%lld, Y0=%lld Y1=%lld Y2=%lld, %lld threads}",
                        ckt_pattern_name(e->pattern.pattern), (long long)e->pattern.block_size, (long long)e->pattern.y_per_tile,
                        (long long)e->pattern.x_per_tile, (long long)e->x0, (long long)e->x1, (long long)e->y0, (long long)e->y1,
                        (long long)e->y2, (long long)ckt_encoding_num_threads(e));
    const ckt_encoding_desc *d = &e->d;
    size_t n = 0;
#define PUT(...) n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__)
    PUT("tile_distribution_encoding{R=<");
    for (int i = 0; i < d->nr; i++) PUT("%s%lld", i ? "," : "", (long long)d->rs[i]);
    PUT(">, H=<");
    for (int x = 0; x < d->nx; x++) {
        PUT("%s<", x ? "," : "");
        for (int k = 0; k < d->nh[x]; k++) PUT("%s%lld", k ? "," : "", (long long)d->hs[x][k]);
        PUT(">");
    }
    PUT(">, P=<");
    for (int p = 0; p < d->np; p++) {
        PUT("%s<", p ? "," : "");
        for (int j = 0; j < d->np_comp[p]; j++) PUT("%s(%d,%d)", j ? "," : "", d->p_major[p][j], d->p_minor[p][j]);
        PUT(">");
    }
    PUT(">, Y=<");
    for (int y = 0; y < d->ny; y++) PUT("%s(%d,%d)", y ? "," : "", d->y_major[y], d->y_minor[y]);
    PUT(">}");
#undef PUT
    return (int)n;
}
