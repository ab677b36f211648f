/* CK Tile tile_distribution_encoding with CK's meaning (CK Tile's tile_distribution_encoding,
 * in its core tensor headers): which
 * (thread, Y index) reaches which X coordinate, who owns an X coordinate, the TV view. The 2D
 * raked patterns that build encodings are in encoding_pattern.c (which calls this file, never
 * the other way). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "ckt/distribution.h"

/* The pattern an encoding was built by (a field of the encoding, printed by to_string): named
 * here, beside the encoding, so that this file needs nothing of encoding_pattern.c, which builds
 * on it. */
const char *ckt_pattern_name(ckt_pattern_kind k)
{
    switch (k) {
    case CKT_THREAD_RAKED: return "thread_raked";
    case CKT_WARP_RAKED: return "warp_raked";
    case CKT_BLOCK_RAKED: return "block_raked";
    default: return "general";
    }
}

/* Where each RH component gets its value: from a P (digit of that P) or from a Y. */
typedef struct {
    int kind; /* 0 unused, 1 P, 2 Y */
    int index;
} source;

static int64_t comp_len(const ckt_encoding_desc *d, int major, int minor)
{
    return major == 0 ? d->rs[minor] : d->hs[major - 1][minor];
}

static int seq_len(const ckt_encoding_desc *d, int major)
{
    return major == 0 ? d->nr : d->nh[major - 1];
}

static ckt_status check_ref(const ckt_encoding_desc *d, int major, int minor, const char *who,
                            int i, int j, ckt_error *err)
{
    if (major < 0 || major > d->nx)
        return ckt_fail(
            err, CKT_EINVAL,
            "tile_distribution_encoding: %s %d entry %d has major %d, out of range [0, %d]", who, i,
            j, major, d->nx);
    if (minor < 0 || minor >= seq_len(d, major))
        return ckt_fail(err, CKT_EINVAL,
                        "tile_distribution_encoding: %s %d entry %d has minor %d, out of range for "
                        "%s (length %d)",
                        who, i, j, minor, major == 0 ? "R" : "an H sequence", seq_len(d, major));
    return CKT_OK;
}

ckt_status ckt_encoding_make(const ckt_encoding_desc *d, ckt_encoding *out, ckt_error *err)
{
    if (!d || !out) return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: NULL argument");
    if (d->nr < 0 || d->nr > CKT_DIST_MAX_H)
        return ckt_fail(err, CKT_ECAPACITY, "tile_distribution_encoding: %d R lengths (at most %d)",
                        d->nr, CKT_DIST_MAX_H);
    if (d->nx < 1 || d->nx > CKT_DIST_MAX_X)
        return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: %d X dimensions (1 to %d)",
                        d->nx, CKT_DIST_MAX_X);
    if (d->np < 1 || d->np > CKT_DIST_MAX_P)
        return ckt_fail(err, CKT_EINVAL, "tile_distribution_encoding: %d P dimensions (1 to %d)",
                        d->np, CKT_DIST_MAX_P);
    if (d->ny < 0 || d->ny > CKT_DIST_MAX_Y)
        return ckt_fail(err, CKT_ECAPACITY,
                        "tile_distribution_encoding: %d Y dimensions (at most %d)", d->ny,
                        CKT_DIST_MAX_Y);
    for (int i = 0; i < d->nr; i++)
        if (d->rs[i] <= 0)
            return ckt_fail(err, CKT_EINVAL,
                            "tile_distribution_encoding: R length %d is %lld, must be positive", i,
                            (long long)d->rs[i]);
    for (int x = 0; x < d->nx; x++) {
        if (d->nh[x] < 1 || d->nh[x] > CKT_DIST_MAX_H)
            return ckt_fail(err, CKT_EINVAL,
                            "tile_distribution_encoding: H%d has %d lengths (1 to %d)", x, d->nh[x],
                            CKT_DIST_MAX_H);
        for (int k = 0; k < d->nh[x]; k++)
            if (d->hs[x][k] <= 0)
                return ckt_fail(
                    err, CKT_EINVAL,
                    "tile_distribution_encoding: H%d length %d is %lld, must be positive", x, k,
                    (long long)d->hs[x][k]);
    }
    source src[CKT_DIST_MAX_X + 1][CKT_DIST_MAX_H];
    memset(src, 0, sizeof src);
    int64_t threads = 1;
    for (int p = 0; p < d->np; p++) {
        if (d->np_comp[p] < 1 || d->np_comp[p] > CKT_DIST_MAX_H)
            return ckt_fail(err, CKT_EINVAL,
                            "tile_distribution_encoding: P%d lists %d components (1 to %d)", p,
                            d->np_comp[p], CKT_DIST_MAX_H);
        for (int j = 0; j < d->np_comp[p]; j++) {
            int ma = d->p_major[p][j], mi = d->p_minor[p][j];
            ckt_status st = check_ref(d, ma, mi, "P", p, j, err);
            if (st) return st;
            if (src[ma][mi].kind)
                return ckt_fail(err, CKT_EINVAL,
                                "tile_distribution_encoding: RH component (%d, %d) is used twice "
                                "(again by P%d)",
                                ma, mi, p);
            src[ma][mi] = (source){1, p};
            if (ckt_mul_ovf(threads, comp_len(d, ma, mi), &threads))
                return ckt_fail(err, CKT_EOVERFLOW,
                                "tile_distribution_encoding: thread count overflows");
        }
    }
    for (int y = 0; y < d->ny; y++) {
        int ma = d->y_major[y], mi = d->y_minor[y];
        ckt_status st = check_ref(d, ma, mi, "Y", y, 0, err);
        if (st) return st;
        if (ma == 0)
            return ckt_fail(err, CKT_EINVAL,
                            "tile_distribution_encoding: Y%d maps to R component %d; Ys must map "
                            "to H components",
                            y, mi);
        if (src[ma][mi].kind)
            return ckt_fail(
                err, CKT_EINVAL,
                "tile_distribution_encoding: RH component (%d, %d) is used twice (again by Y%d)",
                ma, mi, y);
        src[ma][mi] = (source){2, y};
    }
    for (int x = 0; x < d->nx; x++)
        for (int k = 0; k < d->nh[x]; k++)
            if (!src[x + 1][k].kind)
                return ckt_fail(err, CKT_EINVAL,
                                "tile_distribution_encoding: H%d component %d (length %lld) is "
                                "reached by no P and no Y",
                                x, k, (long long)d->hs[x][k]);
    for (int k = 0; k < d->nr; k++)
        if (!src[0][k].kind && d->rs[k] != 1)
            return ckt_fail(
                err, CKT_EINVAL,
                "tile_distribution_encoding: R component %d (length %lld) is reached by no P", k,
                (long long)d->rs[k]);
    int64_t elems = 1;
    for (int x = 0; x < d->nx; x++)
        for (int k = 0; k < d->nh[x]; k++)
            if (ckt_mul_ovf(elems, d->hs[x][k], &elems))
                return ckt_fail(err, CKT_EOVERFLOW,
                                "tile_distribution_encoding: tile size overflows");
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
        for (int j = 0; j < e->d.np_comp[p]; j++)
            n *= comp_len(&e->d, e->d.p_major[p][j], e->d.p_minor[p][j]);
    return n; /* ckt_encoding_make checked the product */
}

int ckt_encoding_ndim_x(const ckt_encoding *e) { return e->d.nx; }
int ckt_encoding_ndim_y(const ckt_encoding *e) { return e->d.ny; }

int64_t ckt_encoding_num_values(const ckt_encoding *e)
{
    int64_t n = 1;
    for (int y = 0; y < e->d.ny; y++) n *= comp_len(&e->d, e->d.y_major[y], e->d.y_minor[y]);
    return n; /* Ys are distinct H components: bounded by the tile size ckt_encoding_make checked */
}

ckt_status ckt_encoding_ys_lengths(const ckt_encoding *e, int64_t *ys, ckt_error *err)
{
    if (!e || !ys) return ckt_fail(err, CKT_EINVAL, "ys_lengths: NULL argument");
    for (int y = 0; y < e->d.ny; y++) ys[y] = comp_len(&e->d, e->d.y_major[y], e->d.y_minor[y]);
    return CKT_OK;
}

ckt_status ckt_encoding_x_lengths(const ckt_encoding *e, int64_t *xs, ckt_error *err)
{
    if (!e || !xs) return ckt_fail(err, CKT_EINVAL, "x_lengths: NULL argument");
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

ckt_status ckt_encoding_calculate_index(const ckt_encoding *e, int64_t thread, const int64_t *ys,
                                        int64_t *xs, ckt_error *err)
{
    if (!e || !xs || (!ys && e->d.ny > 0))
        return ckt_fail(err, CKT_EINVAL, "calculate_index: NULL argument");
    const ckt_encoding_desc *d = &e->d;
    int64_t nt = ckt_encoding_num_threads(e);
    if (thread < 0 || thread >= nt)
        return ckt_fail(err, CKT_EINVAL, "calculate_index: thread %lld is out of range [0, %lld)",
                        (long long)thread, (long long)nt);
    int64_t val[CKT_DIST_MAX_X + 1][CKT_DIST_MAX_H];
    memset(val, 0, sizeof val);
    /* thread = merge of the Ps, P0 most significant; each P = merge of its components, first most
     * significant */
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
            return ckt_fail(err, CKT_EINVAL,
                            "calculate_index: Y%d = %lld is out of range [0, %lld)", y,
                            (long long)ys[y], (long long)len);
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

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The inverse of calculate_index: X coordinates fix every H component (and so every Y and the P
 * digits on H); the R components a P lists are free, and each of their values is one more owner. */
ckt_status ckt_encoding_owner(const ckt_encoding *e, const int64_t *xs, int64_t *threads,
                              int64_t cap, int64_t *count, int64_t *ys, ckt_error *err)
{
    if (!e || !xs || !count || (!threads && cap > 0))
        return ckt_fail(err, CKT_EINVAL, "owner: NULL argument");
    if (cap < 0)
        return ckt_fail(err, CKT_EINVAL, "owner: capacity %lld is negative", (long long)cap);
    const ckt_encoding_desc *d = &e->d;
    int64_t val[CKT_DIST_MAX_X + 1][CKT_DIST_MAX_H];
    memset(val, 0, sizeof val);
    for (int x = 0; x < d->nx; x++) {
        int64_t len = 1;
        for (int k = 0; k < d->nh[x]; k++) len *= d->hs[x][k];
        if (xs[x] < 0 || xs[x] >= len)
            return ckt_fail(err, CKT_EINVAL, "owner: X%d = %lld is out of range [0, %lld)", x,
                            (long long)xs[x], (long long)len);
        int64_t r = xs[x];
        for (int k = d->nh[x] - 1; k >= 0; k--) {
            val[x + 1][k] = r % d->hs[x][k];
            r /= d->hs[x][k];
        }
    }
    if (ys)
        for (int y = 0; y < d->ny; y++) ys[y] = val[d->y_major[y]][d->y_minor[y]];
    /* the free R components: every combination is an owner */
    int free_minor[CKT_DIST_MAX_H], nfree = 0;
    int64_t combos = 1;
    for (int p = 0; p < d->np; p++)
        for (int j = 0; j < d->np_comp[p]; j++)
            if (d->p_major[p][j] == 0) {
                free_minor[nfree++] = d->p_minor[p][j];
                combos *=
                    d->rs[d->p_minor[p][j]]; /* <= the thread count, checked by ckt_encoding_make */
            }
    *count = combos;
    for (int64_t c = 0; c < combos && c < cap; c++) {
        int64_t r = c;
        for (int f = nfree - 1; f >= 0; f--) {
            val[0][free_minor[f]] = r % d->rs[free_minor[f]];
            r /= d->rs[free_minor[f]];
        }
        int64_t t = 0;
        for (int p = 0; p < d->np; p++)
            for (int j = 0; j < d->np_comp[p]; j++) {
                int ma = d->p_major[p][j], mi = d->p_minor[p][j];
                t = t * comp_len(d, ma, mi) + val[ma][mi];
            }
        threads[c] = t;
    }
    if (combos <= cap) qsort(threads, (size_t)combos, sizeof *threads, cmp64);
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

ckt_status ckt_encoding_tv_layout(const ckt_encoding *e, ckt_layout *tv, ckt_error *err)
{
    if (!e || !tv) return ckt_fail(err, CKT_EINVAL, "tv_layout: NULL argument");
    const ckt_encoding_desc *d = &e->d;
    int64_t ts[CKT_DIST_MAX_P * CKT_DIST_MAX_H], td[CKT_DIST_MAX_P * CKT_DIST_MAX_H],
        vs[CKT_DIST_MAX_Y], vd[CKT_DIST_MAX_Y];
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
    if (nt > CKT_MAX_RANK || nv > CKT_MAX_RANK)
        return ckt_fail(err, CKT_ECAPACITY,
                        "tv_layout: %d thread or %d value components are beyond the capacity %d of "
                        "a layout mode",
                        nt, nv, CKT_MAX_RANK);
    return ckt_tv_from_leaves(nt, ts, td, nv, vs, vd, tv, err);
}

int ckt_encoding_to_string(const ckt_encoding *e, char *buf, size_t cap)
{
    if (e->pattern.pattern != CKT_PATTERN_NONE) {
        char extra[64] = "";
        if (e->pattern.num_wave_groups != 1)
            snprintf(extra, sizeof extra, ", %lld wave groups",
                     (long long)e->pattern.num_wave_groups);
        if (e->shuffled) strcat(extra, ", shuffled");
        return snprintf(buf, cap,
                        "encoding_pattern_2d{%s, block %lld, tile %lldx%lld, warp %lld%s: X0=%lld "
                        "(vector) X1=%lld, Y0=%lld Y1=%lld Y2=%lld, %lld threads}",
                        ckt_pattern_name(e->pattern.pattern), (long long)e->pattern.block_size,
                        (long long)e->pattern.y_per_tile, (long long)e->pattern.x_per_tile,
                        (long long)e->pattern.warp_size, extra, (long long)e->x0, (long long)e->x1,
                        (long long)e->y0, (long long)e->y1, (long long)e->y2,
                        (long long)ckt_encoding_num_threads(e));
    }
    const ckt_encoding_desc *d = &e->d;
    size_t n = 0;
#define PUT(...)                                                                                   \
    n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__)
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
        for (int j = 0; j < d->np_comp[p]; j++)
            PUT("%s(%d,%d)", j ? "," : "", d->p_major[p][j], d->p_minor[p][j]);
        PUT(">");
    }
    PUT(">, Y=<");
    for (int y = 0; y < d->ny; y++) PUT("%s(%d,%d)", y ? "," : "", d->y_major[y], d->y_minor[y]);
    PUT(">}");
#undef PUT
    return (int)n;
}
