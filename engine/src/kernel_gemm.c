/* The CK wrapper's blockwise GEMM in the kernel builder (see ckt/gemm.h): every distribution is
 * derived from the matrix instruction's lane layouts (ckt/mma.h) by placing the instruction tile
 * in the block tile (waves and repeats) and, along K, by CK's KPack permutation. The GEMM itself
 * is a composition of the builder's pieces: a K-step loop of fragment loads from LDS (the
 * emitter's vectorized, swizzle-aware accesses) and one matrix-instruction op. */
#include <stdio.h>
#include <string.h>

#include "ckt/gemm.h"
#include "ckt/wgmma.h"
#include "gemm_internal.h"

/* K steps of a tile up to which blockwise_gemm unrolls (and pipelines) them; beyond, a loop */
#define GEMM_UNROLL_STEPS 8

/* One blockwise_gemm: its operands, distributions and instruction repeats. */
typedef struct gemm_site {
    ckt_kernel *k;
    int a_lds, b_lds, c_reg;
    int ad, bd;  /* the A and B fragment distributions */
    int la, lb;  /* ldmatrix row-address distributions (-1: none) */
    char fa, fb; /* their forms: 'A' / 'B', or 'a' / 'b' (transposed, ldmatrix.trans) */
    int mi;      /* the instruction's index */
    int64_t alen[2], blen[2], rep[3];
    bool a_reg; /* A is a register tile (the thread's own values), not LDS */
} gemm_site;

/* The ldmatrix form of an operand's LDS tile: 'A' / 'B' where K is the contiguous dim, 'a' / 'b'
 * (transposed) where the rows (M / N) are. */
static char ldmatrix_form(ckt_kernel *k, int lds, char operand)
{
    const ckt_ktensor *t = ckt_kernel_tensor(k, lds);
    ckt_layout rows;
    ckt_error err;
    int64_t str[CKT_TUPLE_NODES];
    bool row_contiguous = !ckt_layout_mode(&t->layout, 0, &rows, &err) &&
                          ckt_tuple_flatten(&rows.stride, str, CKT_TUPLE_NODES) > 0 && str[0] == 1;
    return row_contiguous ? (char)(operand - 'A' + 'a') : operand;
}

/* The A and B fragments of the K step at element `k0` of the tile into new registers. */
static ckt_status gemm_fragments(const gemm_site *x, ckt_expr_id k0, int *ra, int *rb,
                                 ckt_error *err)
{
    ckt_expr_id origin[2] = {ckt_expr_int(ckt_kernel_exprs(x->k), 0), k0};
    int wa, wb;
    ckt_status s;
    if (x->a_reg) { /* A's fragment relabelled from the thread's own registers (a constant step) */
        int64_t at[3] = {0, 0, 0};
        if (!ckt_expr_is_const(ckt_kernel_exprs(x->k), k0, &at[1]))
            return ckt_fail(err, CKT_EINVAL,
                            "blockwise_gemm: a register A needs K steps written "
                            "out (a constant step)");
        if ((s = ckt_kernel_regather(x->k, x->a_lds, x->ad, at, ra, err))) return s;
    } else if ((s = ckt_kernel_window_make(x->k, x->a_lds, 2, x->alen, origin, &wa, err)) ||
               (s = ckt_kernel_load(x->k, wa, x->ad, 1, 0, 0.0f, ra, err)) ||
               (x->la >= 0 && (s = ckt_kernel_fragment_load(x->k, *ra, x->mi, x->fa, x->la, err))))
        return s;
    if ((s = ckt_kernel_window_make(x->k, x->b_lds, 2, x->blen, origin, &wb, err)) ||
        (s = ckt_kernel_load(x->k, wb, x->bd, 1, 0, 0.0f, rb, err)) ||
        (x->lb >= 0 && (s = ckt_kernel_fragment_load(x->k, *rb, x->mi, x->fb, x->lb, err))))

        return s;
    return CKT_OK;
}

ckt_status ckt_kernel_blockwise_gemm_zero(ckt_kernel *k, int a_lds, int b_lds, int c_reg,
                                          const ckt_gemm_traits *t, ckt_error *err)
{
    if (!k) return ckt_fail(err, CKT_EINVAL, "blockwise_gemm: NULL argument");
    return ckt_kernel_blockwise_gemm_zero_if(k, a_lds, b_lds, c_reg, t,
                                             ckt_expr_int(ckt_kernel_exprs(k), 1), err);
}

ckt_status ckt_kernel_blockwise_gemm_zero_if(ckt_kernel *k, int a_lds, int b_lds, int c_reg,
                                             const ckt_gemm_traits *t, ckt_expr_id cond,
                                             ckt_error *err)
{
    if (!k || !t || !t->instr) return ckt_fail(err, CKT_EINVAL, "blockwise_gemm: NULL argument");
    if (ckt_mma_is_wgmma(t->instr))
        return ckt_kernel_blockwise_wgmma_async(k, a_lds, b_lds, c_reg, t, 0, cond, err);
    ckt_status s;
    int64_t always = 0;
    if (ckt_expr_is_const(ckt_kernel_exprs(k), cond, &always) && always)
        s = ckt_kernel_clear(k, c_reg, 0.0f, err);
    else if (!(s = ckt_kernel_if(k, cond, err)) && !(s = ckt_kernel_clear(k, c_reg, 0.0f, err)))
        s = ckt_kernel_end(k, err);
    return s ? s : ckt_kernel_blockwise_gemm(k, a_lds, b_lds, c_reg, t, err);
}

ckt_status ckt_kernel_blockwise_gemm(ckt_kernel *k, int a_lds, int b_lds, int c_reg,
                                     const ckt_gemm_traits *t, ckt_error *err)
{
    if (!k || !t || !t->instr) return ckt_fail(err, CKT_EINVAL, "blockwise_gemm: NULL argument");
    if (ckt_mma_is_wgmma(t->instr))
        return ckt_kernel_blockwise_wgmma(k, a_lds, b_lds, c_reg, t,
                                          err); /* operands through descriptors */
    const ckt_mma *m = t->instr;
    int64_t mpb = 0, npb = 0, kpa = 0; /* set by ckt_gemm_operands; gcc -O3 cannot tell */
    ckt_status s;
    if ((s = ckt_gemm_operands(k, a_lds, b_lds, m, &mpb, &npb, &kpa, err))) return s;
    ckt_gemm_geom g;
    if ((s = ckt_gemm_geometry(t, mpb, npb, kpa, ckt_kernel_block(k), &g, err))) return s;
    int ad, bd;
    ckt_dist d;
    if ((s = ckt_gemm_check_c(k, t, mpb, npb, c_reg, err))) return s;
    if ((s = ckt_gemm_dist(t, &g, 'A', &d, err)) || (s = ckt_kernel_add_dist(k, &d, &ad, err)))
        return s;
    if ((s = ckt_gemm_dist(t, &g, 'B', &d, err)) || (s = ckt_kernel_add_dist(k, &d, &bd, err)))
        return s;
    int64_t steps = kpa / g.k_step;
    gemm_site site = {
        k,
        a_lds,
        b_lds,
        c_reg,
        ad,
        bd,
        -1,
        -1,
        ckt_kernel_tensor(k, a_lds)->mem == CKT_MEM_REG ? 'A' : ldmatrix_form(k, a_lds, 'A'),
        ldmatrix_form(k, b_lds, 'B'),
        ckt_gemm_mma_index(m),
        {mpb, g.k_step},
        {npb, g.k_step},
        {t->m_per_wave, t->n_per_wave, g.pack},
        ckt_kernel_tensor(k, a_lds)->mem == CKT_MEM_REG};
    /* NVIDIA: ldmatrix where the LDS layout gives 16-byte K rows, ldmatrix.trans where it gives
     * 16-byte M / N rows (the emitter checks the whole layout and decides) */
    if (m->ldmatrix && g.pack == 1) {
        if (!site.a_reg && ((s = ckt_gemm_ldmatrix_dist(t, &g, site.fa, &d, err)) ||
                            (s = ckt_kernel_add_dist(k, &d, &site.la, err))))
            return s;
        if ((s = ckt_gemm_ldmatrix_dist(t, &g, site.fb, &d, err)) ||
            (s = ckt_kernel_add_dist(k, &d, &site.lb, err)))
            return s;
    }
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    if (site.a_reg && steps > GEMM_UNROLL_STEPS)
        return ckt_fail(err, CKT_EINVAL,
                        "blockwise_gemm: a register A of %lld K steps (at most %d: they are "
                        "written out)",
                        (long long)steps, GEMM_UNROLL_STEPS);
    if ((m->ldmatrix || site.a_reg) && steps <= GEMM_UNROLL_STEPS) {
        /* software pipeline over the K steps of the tile: the fragments of step s + 1 are loaded
         * before the instructions of step s, so the loads' latency hides behind the math. NVIDIA
         * only: its loads and instructions are inline assembly, which the compiler keeps in
         * order; AMD's compiler schedules the MFMA builtins and LDS loads of a loop itself */
        int ra[GEMM_UNROLL_STEPS], rb[GEMM_UNROLL_STEPS];
        if ((s = gemm_fragments(&site, ckt_expr_int(ex, 0), &ra[0], &rb[0], err))) return s;
        for (int64_t i = 0; i < steps; i++) {
            if (i + 1 < steps && (s = gemm_fragments(&site, ckt_expr_int(ex, (i + 1) * g.k_step),
                                                     &ra[i + 1], &rb[i + 1], err)))
                return s;
            if ((s = ckt_kernel_mma(k, c_reg, ra[i], rb[i], site.mi, site.rep, err))) return s;
        }
        return CKT_OK;
    }
    ckt_expr_id ks;
    int ra, rb;
    if ((s = ckt_kernel_loop(k, ckt_expr_int(ex, steps), &ks, err)) ||
        (s = gemm_fragments(&site, ckt_expr_mulc(ex, ks, g.k_step), &ra, &rb, err)) ||
        (s = ckt_kernel_mma(k, c_reg, ra, rb, site.mi, site.rep, err)) ||
        (s = ckt_kernel_end(k, err)))
        return s;
    return CKT_OK;
}
