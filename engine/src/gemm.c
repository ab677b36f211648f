/* The CK wrapper's blockwise GEMM geometry (see ckt/gemm.h), shared by both blockwise GEMMs
 * (kernel_gemm.c: MFMA and mma.sync; kernel_wgmma.c: wgmma): traits, the placement of the
 * instruction tile in the block tile (waves and repeats, CK's KPack permutation along K), the A, B
 * and C distributions derived from the instruction's lane layouts, the C register tensor, and the
 * checks of a GEMM's operands. */
#include <stdio.h>
#include <string.h>

#include "ckt/gemm.h"
#include "gemm_internal.h"

ckt_status ckt_gemm_traits_make(const char *instr, int64_t m_per_wave, int64_t n_per_wave,
                                int64_t k_pack, ckt_gemm_traits *out, ckt_error *err)
{
    if (!instr || !out) return ckt_fail(err, CKT_EINVAL, "gemm_traits: NULL argument");
    const ckt_mma *m;
    ckt_status s = ckt_mma_get(instr, &m, err);
    if (s) return ckt_fail_prefix(err, "gemm_traits: instr: ");
    if (m_per_wave < 1 || m_per_wave > 16)
        return ckt_fail(err, CKT_EINVAL, "gemm_traits: m_per_wave %lld outside 1..16",
                        (long long)m_per_wave);
    if (n_per_wave < 1 || n_per_wave > 16)
        return ckt_fail(err, CKT_EINVAL, "gemm_traits: n_per_wave %lld outside 1..16",
                        (long long)n_per_wave);
    if (k_pack == 0) k_pack = m->k_chunk;
    if (k_pack < 0 || k_pack % m->k_chunk || k_pack / m->k_chunk > 8)
        return ckt_fail(err, CKT_EINVAL,
                        "gemm_traits: k_pack %lld must be a multiple of %lld (the K run a lane "
                        "holds in %s), at most %lld",
                        (long long)k_pack, (long long)m->k_chunk, m->name,
                        (long long)(8 * m->k_chunk));
    *out = (ckt_gemm_traits){m, m_per_wave, n_per_wave, k_pack};
    return CKT_OK;
}

ckt_status ckt_gemm_traits_preset(const char *name, ckt_dtype dtype, ckt_gemm_traits *out,
                                  ckt_error *err)
{
    if (!name || !out) return ckt_fail(err, CKT_EINVAL, "gemm_traits: NULL argument");
    const char *p = name;
    if (!strncmp(p, "BlockwisGemmXdlTraits_", 22)) p += 22;
    long long xm, xn, mx, nx, k1;
    char tail[8];
    if (sscanf(p, "%lldx%lldXdl_%lldx%lldXdlPerWave_%lldK%1[1]", &xm, &xn, &mx, &nx, &k1, tail) !=
        6)
        return ckt_fail(err, CKT_EINVAL,
                        "gemm_traits: '%s' is not a CK preset name like 32x32Xdl_4x2XdlPerWave_8K1",
                        name);
    const char *instr = NULL;
    if (xm == 32 && xn == 32)
        instr = dtype == CKT_F16    ? "mfma_f32_32x32x8f16"
                : dtype == CKT_BF16 ? "mfma_f32_32x32x8bf16_1k"
                                    : NULL;
    else if (xm == 16 && xn == 16)
        instr = dtype == CKT_F16    ? "mfma_f32_16x16x16f16"
                : dtype == CKT_BF16 ? "mfma_f32_16x16x16bf16_1k"
                                    : NULL;
    else
        return ckt_fail(err, CKT_EINVAL,
                        "gemm_traits: preset '%s': no MFMA of %lldx%lld (32x32 or 16x16)", name, xm,
                        xn);
    if (!instr)
        return ckt_fail(err, CKT_EINVAL,
                        "gemm_traits: preset '%s': dtype %s has no MFMA (f16 or bf16)", name,
                        ckt_dtype_name(dtype) ? ckt_dtype_name(dtype) : "?");
    return ckt_gemm_traits_make(instr, mx, nx, k1, out, err);
}

ckt_status ckt_gemm_geometry(const ckt_gemm_traits *t, int64_t mpb, int64_t npb, int64_t kpb,
                             int64_t threads, ckt_gemm_geom *out, ckt_error *err)
{
    if (!t || !t->instr || !out) return ckt_fail(err, CKT_EINVAL, "gemm: NULL traits");
    const ckt_mma *m = t->instr;
    ckt_gemm_geom g;
    memset(&g, 0, sizeof g);
    g.pack = t->k_pack / m->k_chunk;
    g.k_step = m->k * g.pack;
    int64_t wm = t->m_per_wave * m->m, wn = t->n_per_wave * m->n;
    if (mpb < 1 || mpb % wm)
        return ckt_fail(
            err, CKT_EINVAL,
            "gemm: MPerBlock %lld is not a positive multiple of m_per_wave x %s's M = %lld x %lld",
            (long long)mpb, m->name, (long long)t->m_per_wave, (long long)m->m);
    if (npb < 1 || npb % wn)
        return ckt_fail(
            err, CKT_EINVAL,
            "gemm: NPerBlock %lld is not a positive multiple of n_per_wave x %s's N = %lld x %lld",
            (long long)npb, m->name, (long long)t->n_per_wave, (long long)m->n);
    if (kpb < 0 || (kpb > 0 && kpb % g.k_step))
        return ckt_fail(err, CKT_EINVAL,
                        "gemm: KPerBlock %lld is not a multiple of the K step %lld (%s's K %lld x "
                        "k_pack %lld / %lld)",
                        (long long)kpb, (long long)g.k_step, m->name, (long long)m->k,
                        (long long)t->k_pack, (long long)m->k_chunk);
    g.mpb = mpb;
    g.npb = npb;
    g.kpb = kpb;
    g.waves_m = mpb / wm;
    g.waves_n = npb / wn;
    g.threads = g.waves_m * g.waves_n * m->lanes;
    if (g.threads != threads)
        return ckt_fail(err, CKT_EINVAL,
                        "gemm: threads: the block has %lld threads but the traits need MWaves x "
                        "NWaves x lanes = %lld x %lld x %lld = %lld",
                        (long long)threads, (long long)g.waves_m, (long long)g.waves_n,
                        (long long)m->lanes, (long long)g.threads);
    *out = g;
    return CKT_OK;
}

/* One mode of the instruction's lane layout moved into the block-level tile. The instruction
 * tile is rows x cols row-major; its K axis is the columns of A (kdim 1) or the rows of B (kdim 0),
 * C has none (kdim -1). A K stride that is a multiple of the chunk is a step between chunks: KPack
 * spreads the chunks P apart. Returns the new stride, or -1 when the mode mixes rows and columns.
 */
static int64_t place(int64_t shape, int64_t s, int64_t cols_i, int kdim, int64_t chunk,
                     int64_t pack, int64_t row_stride)
{
    int64_t r = s / cols_i, c = s % cols_i;
    if (r && c) return -1;
    if (!r && (shape - 1) * c >= cols_i) return -1;
    int64_t kk = kdim == 1 ? c : kdim == 0 ? r : -1, other = kdim == 1 ? r : c;
    if (kk > 0) {
        if (kk % chunk == 0)
            kk *= pack;
        else if ((shape - 1) * kk >= chunk)
            return -1;
    }
    if (kdim < 0) return r * row_stride + c; /* C: rows m, columns n */
    return other * row_stride +
           (kk > 0 ? kk : 0); /* A: rows m; B: rows n (CK's N x K tile); columns K */
}

static size_t append(char *buf, size_t cap, size_t n, const char *fmt, long long a)
{
    if (n < cap) n += (size_t)snprintf(buf + n, cap - n, fmt, a);
    return n;
}

ckt_status ckt_gemm_tv(const ckt_gemm_traits *t, const ckt_gemm_geom *g, char operand, char *buf,
                       size_t cap, ckt_error *err)
{
    if (!t || !t->instr || !g || !buf || cap < 2)
        return ckt_fail(err, CKT_EINVAL, "gemm: NULL argument");
    const ckt_mma *m = t->instr;
    char op = operand >= 'a' ? (char)(operand - 'a' + 'A') : operand;
    if (op == 'D') op = 'C';
    ckt_layout tv;
    ckt_status s = ckt_mma_layout(m, op, &tv, err);
    if (s) return s;
    int64_t rows_i, cols_i, row_stride; /* B: the instruction's tile is K x N, the block's N x K */
    ckt_mma_operand_shape(m, op, &rows_i, &cols_i);
    int kdim = op == 'A' ? 1 : op == 'B' ? 0 : -1;
    /* extra modes: waves (thread), K pack and repeats (value); stride of a wave / repeat step */
    int64_t tw[2][2], vx[2][2];
    if (op == 'A') {
        row_stride = g->k_step;
        tw[0][0] = g->waves_n, tw[0][1] = 0, tw[1][0] = g->waves_m,
        tw[1][1] = t->m_per_wave * m->m * row_stride;
        vx[0][0] = g->pack, vx[0][1] = m->k_chunk, vx[1][0] = t->m_per_wave,
        vx[1][1] = m->m * row_stride;
    } else if (op == 'B') {
        row_stride = g->k_step; /* the B tile is N x K: rows n */
        tw[0][0] = g->waves_n, tw[0][1] = t->n_per_wave * m->n * row_stride, tw[1][0] = g->waves_m,
        tw[1][1] = 0;
        vx[0][0] = g->pack, vx[0][1] = m->k_chunk, vx[1][0] = t->n_per_wave,
        vx[1][1] = m->n * row_stride;
    } else {
        row_stride = g->npb;
        tw[0][0] = g->waves_n, tw[0][1] = t->n_per_wave * m->n, tw[1][0] = g->waves_m,
        tw[1][1] = t->m_per_wave * m->m * row_stride;
        vx[0][0] = t->n_per_wave, vx[0][1] = m->n, vx[1][0] = t->m_per_wave,
        vx[1][1] = m->m * row_stride;
    }
    char shp[2][256], str[2][256];
    for (int mode = 0; mode < 2; mode++) {
        ckt_layout md;
        if ((s = ckt_layout_mode(&tv, mode, &md, err))) return s;
        int64_t sh[CKT_TUPLE_NODES], st[CKT_TUPLE_NODES];
        int n = ckt_tuple_flatten(&md.shape, sh, CKT_TUPLE_NODES);
        ckt_tuple_flatten(&md.stride, st, CKT_TUPLE_NODES);
        size_t a = 0, b = 0;
        for (int i = 0; i < n; i++) {
            int64_t ns = place(sh[i], st[i], cols_i, kdim, m->k_chunk, g->pack, row_stride);
            if (ns < 0)
                return ckt_fail(err, CKT_EINVAL,
                                "gemm: the %c lane layout of %s has a mode (%lld:%lld) that mixes "
                                "rows and columns",
                                op, m->name, (long long)sh[i], (long long)st[i]);
            a = append(shp[mode], sizeof shp[mode], a, i ? ",%lld" : "(%lld", sh[i]);
            b = append(str[mode], sizeof str[mode], b, i ? ",%lld" : "(%lld", ns);
        }
        int64_t(*x)[2] = mode == 0 ? tw : vx;
        for (int j = 0; j < 2; j++) {
            a = append(shp[mode], sizeof shp[mode], a, ",%lld", x[j][0]);
            b = append(str[mode], sizeof str[mode], b, ",%lld", x[j][1]);
        }
        if (a < sizeof shp[mode] - 1) strcat(shp[mode], ")");
        if (b < sizeof str[mode] - 1) strcat(str[mode], ")");
    }
    int n = snprintf(buf, cap, "(%s,%s):(%s,%s)", shp[0], shp[1], str[0], str[1]);
    if (n < 0 || (size_t)n >= cap)
        return ckt_fail(err, CKT_ECAPACITY, "gemm: layout text longer than %zu characters", cap);
    return CKT_OK;
}

ckt_status ckt_gemm_dist(const ckt_gemm_traits *t, const ckt_gemm_geom *g, char operand,
                         ckt_dist *out, ckt_error *err)
{
    char text[600];
    ckt_status s = ckt_gemm_tv(t, g, operand, text, sizeof text, err);
    if (s) return s;
    ckt_layout tv;
    if ((s = ckt_layout_parse(text, &tv, err))) return s;
    char op = operand >= 'a' ? (char)(operand - 'a' + 'A') : operand;
    int64_t lengths[2] = {op == 'B' ? g->npb : g->mpb, op == 'A' || op == 'B' ? g->k_step : g->npb};
    if ((s = ckt_dist_from_tv(&tv, 2, lengths, out, err))) return s;
    snprintf(out->desc, sizeof out->desc, "%s %c fragments, %lldx%lld waves", t->instr->name,
             op == 'D' ? 'C' : op, (long long)g->waves_m, (long long)g->waves_n);
    return CKT_OK;
}

ckt_status ckt_gemm_ldmatrix_dist(const ckt_gemm_traits *t, const ckt_gemm_geom *g, char operand,
                                  ckt_dist *out, ckt_error *err)
{
    if (!t || !t->instr || !g || !out) return ckt_fail(err, CKT_EINVAL, "gemm: NULL argument");
    const ckt_mma *m = t->instr;
    if (!m->ldmatrix || g->pack != 1 || m->k != 16 || m->lanes != 32)
        return ckt_fail(err, CKT_EUNSUPPORTED,
                        "gemm: %s with k_pack %lld has no ldmatrix form (needs k_pack %lld)",
                        m->name, (long long)t->k_pack, (long long)m->k_chunk);
    long long ks = (long long)g->k_step, nw = (long long)g->waves_n, mw = (long long)g->waves_m;
    long long mpw = (long long)t->m_per_wave, npw = (long long)t->n_per_wave, tm = (long long)m->m,
              tn = (long long)m->n;
    /* offsets in the (rows x k_step) window: row * ks + k; K-major rows hold 8 K values a lane
     * row, transposed ('a', 'b') ones 8 M / N values at one K */
    bool tr = operand == 'a' || operand == 'b',
         x4 = operand == 'A' || operand == 'a' || npw % 2 == 0;
    long long kr = tr ? 1 : ks,
              along = tr ? ks : 1; /* a lane's row step; the step along its 8 values */
    char text[300];
    int64_t lengths[2] = {operand == 'A' || operand == 'a' ? g->mpb : g->npb, g->k_step};
    if (operand == 'A' ||
        operand == 'a') /* x4: matrix 1 and 3 rows + 8 (M), matrices 2 and 3 K + 8 */
        snprintf(text, sizeof text,
                 "((8,2,2,%lld,%lld),(8,%lld)):((%lld,%lld,8,0,%lld),(%lld,%lld))", nw, mw, mpw, kr,
                 8 * ks, mpw * tm * ks, along, tm * ks);
    else if ((operand == 'B' || operand == 'b') &&
             x4) /* x4, two N tiles a load: matrices 1, 3 K + 8, 2, 3 the next N tile */
        snprintf(text, sizeof text,
                 "((8,2,2,%lld,%lld),(8,%lld)):((%lld,8,%lld,%lld,0),(%lld,%lld))", nw, mw, npw / 2,
                 kr, tn * ks, npw * tn * ks, along, 2 * tn * ks);
    else if (operand == 'B' ||
             operand == 'b') /* x2: lane l < 16 -> matrix l / 8 (K + 8 for matrix 1) */
        snprintf(text, sizeof text, "((8,2,2,%lld,%lld),(8,%lld)):((%lld,8,0,%lld,0),(%lld,%lld))",
                 nw, mw, npw, kr, npw * tn * ks, along, tn * ks);
    else
        return ckt_fail(err, CKT_EINVAL,
                        "gemm: ldmatrix loads operand A or B (a or b transposed), not '%c'",
                        operand);
    ckt_layout tv;
    ckt_status s;
    if ((s = ckt_layout_parse(text, &tv, err)) || (s = ckt_dist_from_tv(&tv, 2, lengths, out, err)))
        return s;
    snprintf(out->desc, sizeof out->desc, "ldmatrix.x%d%s row addresses of %s %c", x4 ? 4 : 2,
             tr ? ".trans" : "", m->name, tr ? operand - 'a' + 'A' : operand);
    return CKT_OK;
}

ckt_status ckt_kernel_gemm_c_dist(ckt_kernel *k, const ckt_gemm_traits *t, int64_t mpb, int64_t npb,
                                  int *dist, ckt_error *err)
{
    if (!k || !dist) return ckt_fail(err, CKT_EINVAL, "gemm: NULL argument");
    ckt_gemm_geom g;
    ckt_dist d;
    ckt_status s;
    if ((s = ckt_gemm_geometry(t, mpb, npb, 0, ckt_kernel_block(k), &g, err)) ||
        (s = ckt_gemm_dist(t, &g, 'C', &d, err)))
        return s;
    return ckt_kernel_add_dist(k, &d, dist, err);
}

ckt_status ckt_gemm_check_c(ckt_kernel *k, const ckt_gemm_traits *t, int64_t mpb, int64_t npb,
                            int c_reg, ckt_error *err)
{
    int cd;
    ckt_status s;
    if ((s = ckt_kernel_gemm_c_dist(k, t, mpb, npb, &cd, err))) return s;
    const ckt_ktensor *c = ckt_kernel_tensor(k, c_reg);
    if (!c || c->mem != CKT_MEM_REG || c->dist != cd)
        return ckt_fail(err, CKT_EINVAL,
                        "blockwise_gemm: c_reg is not the C register tensor of these traits and a "
                        "%lldx%lld block tile (make it with make_blockwise_gemm_xdl_c_vgpr)",
                        (long long)mpb, (long long)npb);
    return CKT_OK;
}

ckt_status ckt_kernel_gemm_c_vgpr(ckt_kernel *k, const ckt_gemm_traits *t, int64_t mpb, int64_t npb,
                                  int *reg, int *dist, ckt_error *err)
{
    int di;
    ckt_status s;
    if (!reg) return ckt_fail(err, CKT_EINVAL, "gemm: NULL argument");
    if ((s = ckt_kernel_gemm_c_dist(k, t, mpb, npb, &di, err)) ||
        (s = ckt_kernel_registers(k, t->instr->c, di, 0, reg, err)))
        return s;
    if (dist) *dist = di;
    return CKT_OK;
}

/* Rows and columns of a rank-2 LDS tensor. */
static ckt_status lds_tile(ckt_kernel *k, int tensor, const char *what, int64_t *rows,
                           int64_t *cols, ckt_error *err)
{
    const ckt_ktensor *t = ckt_kernel_tensor(k, tensor);
    if (t && t->mem == CKT_MEM_REG && what[0] == 'a') { /* A from registers (kernel_gemm.c) */
        const ckt_dist *d = t->dist >= 0 ? ckt_kernel_dist(k, t->dist) : NULL;
        if (!d || d->rank != 2)
            return ckt_fail(err, CKT_EINVAL,
                            "blockwise_gemm: a register A must be a distributed M x K tile");
        *rows = d->lengths[0];
        *cols = d->lengths[1];
        return CKT_OK;
    }
    if (!t || t->mem != CKT_MEM_LDS)
        return ckt_fail(err, CKT_EINVAL, "blockwise_gemm: %s must be an LDS tensor", what);
    if (t->rank != 2)
        return ckt_fail(err, CKT_EINVAL, "blockwise_gemm: %s has rank %d, a GEMM tile has 2", what,
                        t->rank);
    ckt_layout m;
    ckt_status s;
    if ((s = ckt_layout_mode(&t->layout, 0, &m, err))) return s;
    *rows = ckt_layout_size(&m);
    if ((s = ckt_layout_mode(&t->layout, 1, &m, err))) return s;
    *cols = ckt_layout_size(&m);
    return CKT_OK;
}

ckt_status ckt_gemm_operands(ckt_kernel *k, int a_lds, int b_lds, const ckt_mma *m, int64_t *mpb,
                             int64_t *npb, int64_t *kpb, ckt_error *err)
{
    int64_t kb = 0;
    ckt_status s;
    if ((s = lds_tile(k, a_lds, "a_lds (MPerBlock x KPerBlock)", mpb, kpb, err)) ||
        (s = lds_tile(k, b_lds, "b_lds (NPerBlock x KPerBlock)", npb, &kb, err)))
        return s;
    if (*kpb != kb)
        return ckt_fail(
            err, CKT_EINVAL,
            "blockwise_gemm: b_lds has K = %lld but a_lds has K = %lld (B is the N x K tile)",
            (long long)kb, (long long)*kpb);
    ckt_dtype adt = ckt_kernel_tensor(k, a_lds)->dtype, bdt = ckt_kernel_tensor(k, b_lds)->dtype;
    if (adt != m->a)
        return ckt_fail(err, CKT_EINVAL, "blockwise_gemm: a_lds is %s but %s takes A in %s",
                        ckt_dtype_name(adt), m->name, ckt_dtype_name(m->a));
    if (bdt != m->b)
        return ckt_fail(err, CKT_EINVAL, "blockwise_gemm: b_lds is %s but %s takes B in %s",
                        ckt_dtype_name(bdt), m->name, ckt_dtype_name(m->b));
    return CKT_OK;
}

int ckt_gemm_mma_index(const ckt_mma *m)
{
    for (int i = 0; ckt_mma_at(i); i++)
        if (ckt_mma_at(i) == m) return i;
    return -1;
}
