/* Shared-memory matrix descriptors of wgmma from ckt layouts (see ckt/wgmma.h for the canonical
 * layouts and the encoding). The parameters are read off the layout at the operand's origin and
 * then every element of the operand is checked against what the hardware would read with them,
 * so a layout is accepted exactly when the descriptor reproduces it. */
#include <stdio.h>
#include <string.h>

#include "ckt/wgmma.h"

bool ckt_mma_is_wgmma(const ckt_mma *m)
{
    return m && m->lanes == 128 && !strncmp(m->isa, "wgmma.", 6);
}

static int log2_bytes(int64_t e) { return e == 1 ? 0 : e == 2 ? 1 : e == 4 ? 2 : e == 8 ? 3 : -1; }

/* The swizzle width in bytes of an element-unit swizzle (0: none), or -1 when the hardware has
 * no such mode. */
static int swizzle_width(const ckt_swizzle *sw, int64_t esz)
{
    if (!sw || sw->b == 0) return 0;
    if (sw->s != 3 || sw->m + log2_bytes(esz) != 4 || sw->b < 1 || sw->b > 3) return -1;
    return 16 << sw->b;
}

int64_t ckt_wgmma_tile_alignment(const ckt_swizzle *sw, ckt_dtype dtype)
{
    int w = swizzle_width(sw, (int64_t)ckt_dtype_size(dtype));
    return w > 0 ? (int64_t)w * 8 : 16;
}

int64_t ckt_wgmma_desc_address(const ckt_wgmma_desc *d, int64_t r, int64_t k)
{
    int64_t e = d->elem_bytes, t = 16 / e, w = d->swizzle_bytes, off;
    if (!d->mn_major)
        off = w ? (r % 8) * w + (r / 8) * d->sbo + k * e
                : (r % 8) * 16 + (r / 8) * d->sbo + (k % t) * e + (k / t) * d->lbo;
    else if (w)
        off = (r % (w / e)) * e + (r / (w / e)) * d->lbo + (k % 8) * w + (k / 8) * d->sbo;
    else
        off = (r % t) * e + (r / t) * d->sbo + (k % 8) * 16 + (k / 8) * d->lbo;
    int64_t a = d->start + off;
    return w ? a ^ (((a >> 7) & (w / 16 - 1)) << 4) : a;
}

/* The unswizzled element offset of tile element (r, k). */
static ckt_status at(const ckt_layout *tile, int64_t rows, int64_t r, int64_t k, int64_t *off,
                     ckt_error *err)
{
    return ckt_layout_eval(tile, r + rows * k, off, err);
}

static ckt_status field(const char *name, int64_t bytes, const char *what, ckt_error *err)
{
    if (bytes < 0 || bytes % 16)
        return ckt_fail(
            err, CKT_EINVAL,
            "wgmma descriptor: the %s (%s) is %lld bytes, not a non-negative multiple of 16", name,
            what, (long long)bytes);
    if (bytes >= (int64_t)1 << 18)
        return ckt_fail(
            err, CKT_EINVAL,
            "wgmma descriptor: the %s (%s) is %lld bytes, beyond the 14-bit field (< 256 KiB)",
            name, what, (long long)bytes);
    return CKT_OK;
}

static const char *canon(const ckt_wgmma_desc *d)
{
    if (!d->mn_major)
        return d->swizzle_bytes
                   ? "K-major swizzled: rows W bytes apart, 8-row groups SBO apart, K contiguous"
                   : "K-major: 8 x 16-byte core matrices, rows 16 bytes apart, 8-row groups SBO "
                     "apart, K chunks LBO apart";
    return d->swizzle_bytes ? "M/N-major swizzled: W/e contiguous rows, row atoms LBO apart, K "
                              "rows W bytes apart, 8-K groups SBO apart"
                            : "M/N-major: T contiguous rows, row groups SBO apart, K rows 16 bytes "
                              "apart, 8-K groups LBO apart";
}

ckt_status ckt_wgmma_desc_make(const ckt_layout *tile, const ckt_swizzle *sw, ckt_dtype dtype,
                               int64_t rows, int64_t row0, int64_t k0, ckt_wgmma_desc *out,
                               ckt_error *err)
{
    if (!tile || !out) return ckt_fail(err, CKT_EINVAL, "wgmma descriptor: NULL argument");
    const bool fp8 = dtype == CKT_E4M3 || dtype == CKT_E5M2;
    if (dtype != CKT_F16 && dtype != CKT_BF16 && !fp8)
        return ckt_fail(err, CKT_EUNSUPPORTED,
                        "wgmma descriptor: dtype %s: only f16, bf16, e4m3 and e5m2 operands are "
                        "described here",
                        ckt_dtype_name(dtype) ? ckt_dtype_name(dtype) : "?");
    if (ckt_tuple_rank(&tile->shape) != 2)
        return ckt_fail(err, CKT_EINVAL,
                        "wgmma descriptor: the tile has rank %d; it must be rows x K (rank 2)",
                        ckt_tuple_rank(&tile->shape));
    ckt_layout m0, m1;
    ckt_status s;
    if ((s = ckt_layout_mode(tile, 0, &m0, err)) || (s = ckt_layout_mode(tile, 1, &m1, err)))
        return s;
    /* one instruction's K is 32 bytes: 16 elements of 16 bits, 32 of 8 */
    int64_t R = ckt_layout_size(&m0), K = ckt_layout_size(&m1), e = (int64_t)ckt_dtype_size(dtype),
            t = 16 / e, kin = 32 / e;
    if (rows < 8 || rows % 8)
        return ckt_fail(err, CKT_EINVAL,
                        "wgmma descriptor: rows %lld is not a positive multiple of 8",
                        (long long)rows);
    if (row0 < 0 || k0 < 0 || row0 + rows > R || k0 + kin > K)
        return ckt_fail(err, CKT_EINVAL,
                        "wgmma descriptor: the %lldx%lld operand at (%lld, %lld) does not fit the "
                        "%lldx%lld tile",
                        (long long)rows, (long long)kin, (long long)row0, (long long)k0,
                        (long long)R, (long long)K);
    int w = swizzle_width(sw, e);
    if (w < 0)
        return ckt_fail(
            err, CKT_EINVAL,
            "wgmma descriptor: swizzle Sw<%d,%d,%d> on %lld-byte elements is Sw<%d,%d,%d> on byte "
            "addresses; the hardware swizzles are Sw<1,4,3> (32B), "
            "Sw<2,4,3> (64B) and Sw<3,4,3> (128B) on bytes, i.e. Sw<1,%d,3>, Sw<2,%d,3>, "
            "Sw<3,%d,3> on these elements",
            sw->b, sw->m, sw->s, (long long)e, sw->b, sw->m + log2_bytes(e), sw->s,
            4 - log2_bytes(e), 4 - log2_bytes(e), 4 - log2_bytes(e));
    int64_t o00, o01, o10;
    if ((s = at(tile, R, row0, k0, &o00, err)) || (s = at(tile, R, row0, k0 + 1, &o01, err)) ||
        (s = at(tile, R, row0 + 1, k0, &o10, err)))
        return s;
    ckt_wgmma_desc d = {0};
    d.elem_bytes = e;
    d.swizzle_bytes = w;
    if (o01 - o00 == 1)
        d.mn_major = false;
    else if (o10 - o00 == 1)
        d.mn_major = true;
    else
        return ckt_fail(err, CKT_EINVAL,
                        "wgmma descriptor: neither K nor the rows are contiguous at (%lld, %lld) "
                        "(steps %lld and %lld elements): a core-matrix row is "
                        "16 contiguous bytes along K (K-major) or along M/N (M/N-major)",
                        (long long)row0, (long long)k0, (long long)(o01 - o00),
                        (long long)(o10 - o00));
    if (d.mn_major && fp8)
        return ckt_fail(err, CKT_EINVAL,
                        "wgmma descriptor: the %s operand is M/N-major (the rows contiguous at "
                        "(%lld, %lld)): the 8-bit wgmma forms read K-major operands only (no "
                        "transpose)",
                        ckt_dtype_name(dtype), (long long)row0, (long long)k0);
    d.start = o00 * e;
    if (d.start % 16)
        return ckt_fail(err, CKT_EINVAL,
                        "wgmma descriptor: the operand starts at byte %lld of the tile, not on a "
                        "16-byte boundary",
                        (long long)d.start);
    int64_t a, b;
    const char *lw = "unused", *sw_ = "unused";
    d.lbo = d.sbo = 16;
    if (!d.mn_major) {
        if (rows > 8) {
            if ((s = at(tile, R, row0 + 8, k0, &a, err))) return s;
            d.sbo = (a - o00) * e, sw_ = "8-row groups along M/N";
        }
        if (!w) {
            if ((s = at(tile, R, row0, k0 + t, &b, err))) return s;
            d.lbo = (b - o00) * e, lw = "16-byte K chunks";
        }
    } else {
        int64_t atom = w ? w / e : t;
        if (!w) {
            if ((s = at(tile, R, row0, k0 + 8, &b, err))) return s;
            d.lbo = (b - o00) * e, lw = "8-K groups";
        }
        if (w) {
            if ((s = at(tile, R, row0, k0 + 8, &b, err))) return s;
            d.sbo = (b - o00) * e, sw_ = "8-K groups";
        }
        if (rows > atom) {
            if ((s = at(tile, R, row0 + atom, k0, &a, err))) return s;
            if (w)
                d.lbo = (a - o00) * e, lw = "row atoms along M/N";
            else
                d.sbo = (a - o00) * e, sw_ = "row groups along M/N";
        }
    }
    if ((s = field("leading byte offset", d.lbo, lw, err)) ||
        (s = field("stride byte offset", d.sbo, sw_, err)))
        return s;
    for (int64_t k = 0; k < kin; k++)
        for (int64_t r = 0; r < rows; r++) {
            int64_t o;
            if ((s = at(tile, R, row0 + r, k0 + k, &o, err))) return s;
            int64_t want = (w ? ckt_swizzle_apply(*sw, o) : o) * e,
                    got = ckt_wgmma_desc_address(&d, r, k);
            if (want != got)
                return ckt_fail(
                    err, CKT_EINVAL,
                    "wgmma descriptor: element (row %lld, k %lld) of the %lldx%lld operand at "
                    "(%lld, %lld) is at byte %lld of the tile, but the descriptor "
                    "(start %lld, LBO %lld, SBO %lld, %s%s) reads byte %lld: the layout is not one "
                    "the hardware reads (%s)",
                    (long long)r, (long long)k, (long long)rows, (long long)kin, (long long)row0,
                    (long long)k0, (long long)want, (long long)d.start, (long long)d.lbo,
                    (long long)d.sbo, w ? "" : "no swizzle",
                    w == 32    ? "32B swizzle"
                    : w == 64  ? "64B swizzle"
                    : w == 128 ? "128B swizzle"
                               : "",
                    (long long)got, canon(&d));
        }
    *out = d;
    return CKT_OK;
}

ckt_status ckt_wgmma_desc_encode(const ckt_wgmma_desc *d, int64_t base, uint64_t *out,
                                 ckt_error *err)
{
    if (!d || !out) return ckt_fail(err, CKT_EINVAL, "wgmma descriptor: NULL argument");
    int64_t align = d->swizzle_bytes ? 8 * (int64_t)d->swizzle_bytes : 16;
    if (base < 0 || base % align)
        return ckt_fail(err, CKT_EINVAL,
                        "wgmma descriptor: a tile at shared-memory byte %lld is not on a %lld-byte "
                        "boundary (the hardware swizzles absolute addresses)",
                        (long long)base, (long long)align);
    int64_t a = base + d->start;
    if (a >= (int64_t)1 << 18)
        return ckt_fail(
            err, CKT_EINVAL,
            "wgmma descriptor: start address %lld is beyond the 18-bit shared-memory window",
            (long long)a);
    uint64_t mode = d->swizzle_bytes == 128  ? 1
                    : d->swizzle_bytes == 64 ? 2
                    : d->swizzle_bytes == 32 ? 3
                                             : 0;
    *out = ((uint64_t)(a >> 4) & 0x3FFF) | (((uint64_t)(d->lbo >> 4) & 0x3FFF) << 16) |
           (((uint64_t)(d->sbo >> 4) & 0x3FFF) << 32) | (mode << 62);
    return CKT_OK;
}

void ckt_wgmma_desc_decode(uint64_t bits, ckt_wgmma_desc *out)
{
    if (!out) return;
    static const int width[4] = {0, 128, 64, 32};
    out->start = (int64_t)(bits & 0x3FFF) << 4;
    out->lbo = (int64_t)((bits >> 16) & 0x3FFF) << 4;
    out->sbo = (int64_t)((bits >> 32) & 0x3FFF) << 4;
    out->swizzle_bytes = width[bits >> 62];
}
