/* The blockwise GEMM with Hopper's warpgroup MMA (see ckt/wgmma.h and ckt/gemm.h): no register
 * fragments of A and B — every instruction reads its operands from the LDS tiles through
 * shared-memory descriptors, computed here from the tiles' ckt layouts for every warpgroup,
 * repeat and K step, so that a layout the hardware cannot read is refused when the kernel is
 * built. The C register tensor and its partition are the ones of the other instructions (the
 * traits' waves are warpgroups of 128 threads). */
#include <stdio.h>
#include <string.h>

#include "ckt/gemm.h"
#include "ckt/wgmma.h"
#include "gemm_internal.h"

static bool same_shape(const ckt_wgmma_desc *a, const ckt_wgmma_desc *b)
{
    return a->lbo == b->lbo && a->sbo == b->sbo && a->swizzle_bytes == b->swizzle_bytes &&
           a->mn_major == b->mn_major;
}

ckt_status ckt_wgmma_operand_plan(const ckt_layout *tile, const ckt_swizzle *sw, ckt_dtype dtype,
                                  int64_t rows, int64_t reps, int64_t groups, int64_t ksteps,
                                  char which, ckt_wgmma_operand *out, ckt_error *err)
{
    if (!tile || !out) return ckt_fail(err, CKT_EINVAL, "wgmma: NULL argument");
    if (reps < 1 || reps > 16 || ksteps < 1 || ksteps > 16 || groups < 1 || groups > 16)
        return ckt_fail(
            err, CKT_EINVAL,
            "wgmma: operand %c: %lld repeats, %lld K steps, %lld warpgroups (each 1..16)", which,
            (long long)reps, (long long)ksteps, (long long)groups);
    memset(out, 0, sizeof *out);
    const int64_t kin = 32 / ((int64_t)ckt_dtype_size(dtype) ? (int64_t)ckt_dtype_size(dtype) : 1);
    out->rows = rows, out->reps = reps, out->groups = groups, out->ksteps = ksteps;
    out->align = ckt_wgmma_tile_alignment(sw, dtype);
    for (int64_t g = 0; g < groups; g++)
        for (int64_t r = 0; r < reps; r++)
            for (int64_t kk = 0; kk < ksteps; kk++) {
                ckt_wgmma_desc d;
                ckt_status s = ckt_wgmma_desc_make(tile, sw, dtype, rows, (g * reps + r) * rows,
                                                   kk * kin, &d, err);
                if (s) {
                    char pre[96];
                    snprintf(
                        pre, sizeof pre,
                        "operand %c, instruction tile (warpgroup %lld, repeat %lld, K step %lld): ",
                        which, (long long)g, (long long)r, (long long)kk);
                    return ckt_fail_prefix(err, pre);
                }
                if (g == 0 && r == 0 && kk == 0)
                    out->d = d;
                else if (!same_shape(&d, &out->d))
                    return ckt_fail(err, CKT_EINVAL,
                                    "wgmma: operand %c: instruction tile (warpgroup %lld, repeat "
                                    "%lld, K step %lld) needs LBO %lld, SBO %lld, %s; the first "
                                    "needs LBO %lld, SBO %lld, %s (one blockwise GEMM keeps one "
                                    "descriptor shape)",
                                    which, (long long)g, (long long)r, (long long)kk,
                                    (long long)d.lbo, (long long)d.sbo,
                                    d.mn_major ? "M/N-major" : "K-major", (long long)out->d.lbo,
                                    (long long)out->d.sbo,
                                    out->d.mn_major ? "M/N-major" : "K-major");
                if (g == 0)
                    out->start[r][kk] = d.start;
                else if (g == 1 && r == 0 && kk == 0)
                    out->group_step = d.start - out->start[0][0];
                if (g > 0 && d.start != out->start[r][kk] + g * out->group_step)
                    return ckt_fail(err, CKT_EINVAL,
                                    "wgmma: operand %c: the warpgroups' tiles are not evenly "
                                    "spaced in LDS (warpgroup %lld)",
                                    which, (long long)g);
            }
    return CKT_OK;
}

/* The hardware swizzles absolute shared-memory addresses: the tile and each stage must start on
 * the swizzle pattern's boundary for the ckt layout to be what the hardware reads. */
static ckt_status aligned(const ckt_ktensor *t, const ckt_wgmma_operand *p, char which,
                          ckt_error *err)
{
    int64_t esz = (int64_t)ckt_dtype_size(t->dtype);
    if (t->lds_offset % p->align)
        return ckt_fail(err, CKT_EINVAL,
                        "blockwise_gemm: the LDS tile of %c starts at byte %lld, not on the "
                        "%lld-byte boundary its %dB swizzle needs (the hardware "
                        "swizzles absolute addresses; the builder places LDS tensors under this "
                        "swizzle on it, so this tile is a view that moved off it)",
                        which, (long long)t->lds_offset, (long long)p->align, p->d.swizzle_bytes);
    if (t->stages > 1 && (t->stage_elems * esz) % p->align)
        return ckt_fail(err, CKT_EINVAL,
                        "blockwise_gemm: the stages of %c are %lld bytes apart, not a multiple of "
                        "the %lld bytes its swizzle needs",
                        which, (long long)(t->stage_elems * esz), (long long)p->align);
    return CKT_OK;
}

/* A from registers (wgmma's RS form): the accumulator of an earlier wgmma over the M x K tile, in
 * its own distribution (m64nKk16, one instruction a warpgroup), rounded to A's dtype. K step kk's
 * A fragment of a thread is then its values 8 kk .. 8 kk + 7, in order (the m64nNk16 accumulator
 * and the m64k16 A fragment put the same elements on the same lanes): checked element by element
 * against that distribution, so any other register tile is refused. */
static ckt_status register_a(ckt_kernel *k, const ckt_ktensor *ta, int64_t mpb, int64_t kpa,
                             const ckt_gemm_traits *t, ckt_error *err)
{
    if (t->m_per_wave != 1)
        return ckt_fail(err, CKT_EINVAL,
                        "blockwise_gemm: a register A on wgmma takes one instruction row a "
                        "warpgroup (m_per_wave 1, got %lld)",
                        (long long)t->m_per_wave);
    char name[64];
    snprintf(name, sizeof name, "wgmma_m64n%lldk16_%s", (long long)kpa, ckt_dtype_name(ta->dtype));
    ckt_gemm_traits acc;
    ckt_gemm_geom g;
    ckt_dist want;
    ckt_error ignored;
    if (ckt_gemm_traits_make(name, 1, 1, 16, &acc, &ignored) ||
        ckt_gemm_geometry(&acc, mpb, kpa, 16, ckt_kernel_block(k), &g, &ignored) ||
        ckt_gemm_dist(&acc, &g, 'C', &want, &ignored))
        return ckt_fail(err, CKT_EINVAL,
                        "blockwise_gemm: a register A of %lld x %lld on wgmma must be the "
                        "accumulator of %s (K = 64, 128 or 256), which this tile has none of",
                        (long long)mpb, (long long)kpa, name);
    const ckt_dist *d = ta->dist >= 0 ? ckt_kernel_dist(k, ta->dist) : NULL;
    if (!d || d->threads != want.threads || d->nvalues != want.nvalues)
        return ckt_fail(err, CKT_EINVAL,
                        "blockwise_gemm: a register A on wgmma must be in %s's accumulator "
                        "distribution (%lld values a thread)",
                        name, (long long)want.nvalues);
    for (int64_t th = 0; th < d->threads; th++)
        for (int64_t v = 0; v < d->nvalues; v++) {
            int64_t a[CKT_K_MAX_RANK], b[CKT_K_MAX_RANK];
            ckt_dist_coord(d, th, v, a);
            ckt_dist_coord(&want, th, v, b);
            if (a[0] != b[0] || a[1] != b[1])
                return ckt_fail(err, CKT_EINVAL,
                                "blockwise_gemm: a register A on wgmma must be in %s's "
                                "accumulator distribution: thread %lld value %lld holds (%lld, "
                                "%lld), the instruction's A fragment needs (%lld, %lld)",
                                name, (long long)th, (long long)v, (long long)a[0], (long long)a[1],
                                (long long)b[0], (long long)b[1]);
        }
    return CKT_OK;
}

ckt_status ckt_kernel_blockwise_wgmma(ckt_kernel *k, int a_lds, int b_lds, int c_reg,
                                      const ckt_gemm_traits *t, ckt_error *err)
{
    return ckt_kernel_blockwise_wgmma_async(k, a_lds, b_lds, c_reg, t, 0, CKT_EXPR_NONE, err);
}

ckt_status ckt_kernel_blockwise_wgmma_async(ckt_kernel *k, int a_lds, int b_lds, int c_reg,
                                            const ckt_gemm_traits *t, int64_t pending,
                                            ckt_expr_id zero, ckt_error *err)
{
    if (!k || !t || !t->instr) return ckt_fail(err, CKT_EINVAL, "blockwise_gemm: NULL argument");
    const ckt_mma *m = t->instr;
    if (!ckt_mma_is_wgmma(m))
        return ckt_fail(
            err, CKT_EINVAL,
            "blockwise_gemm: pending: %s runs synchronously; only wgmma leaves MMAs in flight",
            m->name);
    int64_t mpb = 0, npb = 0, kpa = 0;
    ckt_status s;
    if ((s = ckt_gemm_operands(k, a_lds, b_lds, m, &mpb, &npb, &kpa, err))) return s;
    const ckt_ktensor *ta = ckt_kernel_tensor(k, a_lds), *tb = ckt_kernel_tensor(k, b_lds);
    ckt_gemm_geom g;
    if ((s = ckt_gemm_geometry(t, mpb, npb, kpa, ckt_kernel_block(k), &g, err))) return s;
    if (g.pack != 1)
        return ckt_fail(err, CKT_EINVAL,
                        "blockwise_gemm: %s takes k_pack %lld (one K step of %lld per instruction)",
                        m->name, (long long)m->k_chunk, (long long)m->k);
    if ((s = ckt_gemm_check_c(k, t, mpb, npb, c_reg, err))) return s;
    ckt_wgmma_operand pa, pb;
    const ckt_swizzle *swa = ta->swizzled ? &ta->sw : NULL, *swb = tb->swizzled ? &tb->sw : NULL;
    int64_t ks = kpa / m->k;
    if (ta->mem == CKT_MEM_REG) { /* the RS form: B alone through descriptors */
        if (m->k != 16)
            return ckt_fail(err, CKT_EINVAL,
                            "blockwise_gemm: %s takes A from LDS only (a register A: the 16-bit "
                            "forms)",
                            m->name);
        if ((s = register_a(k, ta, mpb, kpa, t, err))) return s;
        if ((s = ckt_wgmma_operand_plan(&tb->layout, swb, tb->dtype, m->n, t->n_per_wave, g.waves_n,
                                        ks, 'B', &pb, err)))
            return ckt_fail_prefix(err, "blockwise_gemm: ");
        if ((s = aligned(tb, &pb, 'B', err))) return s;
        int64_t rep[3] = {1, t->n_per_wave, ks};
        return ckt_kernel_wgmma_async(k, c_reg, a_lds, b_lds, ckt_gemm_mma_index(m), rep, pending,
                                      zero, err);
    }
    if ((s = ckt_wgmma_operand_plan(&ta->layout, swa, ta->dtype, m->m, t->m_per_wave, g.waves_m, ks,
                                    'A', &pa, err)) ||
        (s = ckt_wgmma_operand_plan(&tb->layout, swb, tb->dtype, m->n, t->n_per_wave, g.waves_n, ks,
                                    'B', &pb, err)))
        return ckt_fail_prefix(err, "blockwise_gemm: ");
    if ((s = aligned(ta, &pa, 'A', err)) || (s = aligned(tb, &pb, 'B', err))) return s;
    int64_t rep[3] = {t->m_per_wave, t->n_per_wave, ks};
    return ckt_kernel_wgmma_async(k, c_reg, a_lds, b_lds, ckt_gemm_mma_index(m), rep, pending, zero,
                                  err);
}
