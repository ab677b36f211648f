/* Hopper's warpgroup MMA (CKT_OP_WGMMA) in the CUDA and C dialects. The descriptors come from
 * the LDS tiles' layouts (ckt_wgmma_operand_plan): their fixed part (LBO, SBO, swizzle) is a
 * constant, the start address is the tile's shared-memory address (plus the stage) plus a constant
 * per warpgroup, repeat and K step. CUDA issues wgmma.fence, one wgmma.mma_async per instruction
 * tile and K step (inline PTX, the accumulators in registers), commit_group and wait_group 0. The
 * C dialect builds the same descriptors with offsets into the block's LDS as addresses and runs
 * ckt_emu_wgmma (kernels/prelude/c.h) warpgroup by warpgroup, which reads A and B through them:
 * a wrong descriptor reads wrong elements on the CPU target too. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ckt/wgmma.h"
#include "emit_internal.h"

/* The descriptor bits other than the start address. */
static unsigned long long fixed_bits(const ckt_wgmma_desc *d)
{
    unsigned long long mode = d->swizzle_bytes == 128  ? 1
                              : d->swizzle_bytes == 64 ? 2
                              : d->swizzle_bytes == 32 ? 3
                                                       : 0;
    return (((unsigned long long)(d->lbo >> 4) & 0x3FFF) << 16) |
           (((unsigned long long)(d->sbo >> 4) & 0x3FFF) << 32) | (mode << 62);
}

static void describe(const ckt_wgmma_operand *p, const ckt_ktensor *t, char which, char *buf,
                     size_t cap)
{
    snprintf(buf, cap, "%c (%s): %s, %s, LBO %lld, SBO %lld bytes; warpgroups %lld bytes apart",
             which, t->name, p->d.mn_major ? "M/N-major" : "K-major",
             p->d.swizzle_bytes == 0    ? "no swizzle"
             : p->d.swizzle_bytes == 32 ? "32B swizzle"
             : p->d.swizzle_bytes == 64 ? "64B swizzle"
                                        : "128B swizzle",
             (long long)p->d.lbo, (long long)p->d.sbo, (long long)p->group_step);
}

/* const ckt_u32 name[reps * ksteps] = {...}: start offsets of warpgroup 0's tiles, [repeat][K step]
 */
static void start_table(ckt_emit_out *o, const char *name, const ckt_wgmma_operand *p)
{
    char buf[1400];
    size_t n = (size_t)snprintf(buf, sizeof buf, "const ckt_u32 %s[%lld] = {", name,
                                (long long)(p->reps * p->ksteps));
    for (int64_t r = 0; r < p->reps; r++)
        for (int64_t k = 0; k < p->ksteps && n < sizeof buf; k++)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld", r || k ? ", " : "",
                                  (long long)p->start[r][k]);
    if (n < sizeof buf) snprintf(buf + n, sizeof buf - n, "}; /* [repeat][K step] */");
    ckt_emit_put(o, "%s", buf);
}

/* the byte offset of the tile (its stage) from the LDS base, as an expression */
static void tile_offset(const ckt_ktensor *t, ckt_expr_pool *ex, char *buf, size_t cap)
{
    int64_t esz = (int64_t)ckt_dtype_size(t->dtype);
    if (!t->stage_view) {
        snprintf(buf, cap, "%lld", (long long)t->lds_offset);
        return;
    }
    char st[400];
    ckt_expr_print(ex, t->stage_base, st, sizeof st, NULL);
    snprintf(buf, cap, "%lld + (ckt_u32)(%s) * %lld", (long long)t->lds_offset, st, (long long)esz);
}

/* the zeroing condition's C text: "1" always, NULL never */
static const char *zero_condition(ckt_expr_pool *ex, ckt_expr_id e, char *buf, size_t cap)
{
    int64_t v = 0;
    if (e == CKT_EXPR_NONE) return NULL;
    if (ckt_expr_is_const(ex, e, &v)) return v ? "1" : NULL;
    ckt_expr_print(ex, e, buf, cap, NULL);
    return buf;
}

static void fence_operands(ckt_emit_out *o, const char *acc, long long n)
{
    ckt_emit_put(o, "#pragma unroll");
    ckt_emit_put(
        o,
        "for (int ckt_v = 0; ckt_v < %lld; ++ckt_v) asm volatile(\"\" : \"+f\"(%s[ckt_v]) :: "
        "\"memory\"); /* the accumulators stay in place around the asynchronous MMAs */",
        n, acc);
}

/* ---- CUDA: wgmma.fence, one wgmma.mma_async per instruction tile and K step (inline PTX, the
 * accumulators in registers), commit_group and wait_group */

static void cuda_open(ckt_emit_out *o, const ckt_wgmma_site *x, long long warpgroups)
{
    (void)warpgroups;
    ckt_emit_put(o, "const int ckt_wg = tid / 128;");
    ckt_emit_put(o, "const ckt_u32 ckt_lds_base = ckt_smem_addr(ckt_lds);");
    /* the swizzle is applied to absolute addresses: the kernel declares its LDS 1024-byte
     * aligned (emit.c); no run-time check here, a branch between asynchronous MMAs makes ptxas
     * serialize them */
    if (!x->a_reg)
        ckt_emit_put(o,
                     "const ckt_u32 ckt_sa = ckt_lds_base + %s + (ckt_u32)(ckt_wg / %lld) * %lldu;",
                     x->offa, x->wn, x->step_a);
    ckt_emit_put(o, "const ckt_u32 ckt_sb = ckt_lds_base + %s + (ckt_u32)(ckt_wg %% %lld) * %lldu;",
                 x->offb, x->wn, x->step_b);
    fence_operands(o, x->c->name, (long long)x->c->nvalues);
    ckt_emit_put(o, "asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");");
}

/* the scale-d input: 0 (D = A B, the accumulators ignored) on the first K step of a zeroing
 * blockwise_gemm (where its condition holds), else 1 (D += A B) */
static const char *scale_d(const ckt_wgmma_site *x, char *buf, size_t cap)
{
    if (!x->zero) return "1";
    if (!strcmp(x->zero, "1")) return "(int)(ckt_kk != 0)";
    snprintf(buf, cap, "(int)(ckt_kk != 0 || !(%s))", x->zero);
    return buf;
}

/* the output operands: accumulators base+0 .. base+n-1, eight a line */
static void put_accumulators(ckt_emit_out *o, const ckt_wgmma_site *x, long long n,
                             const char *base)
{
    for (long long i = 0; i < n; i += 8) {
        char line[600];
        size_t q = 0;
        for (long long j = i; j < i + 8 && j < n; j++)
            q += (size_t)snprintf(line + q, sizeof line - q, "%s\"+f\"(%s[%s%lld])",
                                  j > i ? ", " : "", x->c->name, base, j);
        ckt_emit_put(o, "             %s%s", i == 0 ? ": " : ", ", line);
    }
}

/* A's operand text from operand i: a descriptor, or the RS form's four words of registers */
static void a_operand(const ckt_wgmma_site *x, long long i, char *buf, size_t cap)
{
    if (x->a_reg)
        snprintf(buf, cap, "{%%%lld, %%%lld, %%%lld, %%%lld}", i, i + 1, i + 2, i + 3);
    else
        snprintf(buf, cap, "%%%lld", i);
}

/* One wgmma as PTX text: accumulators %cb.., A (a descriptor operand, or the RS form's four
 * words), B's descriptor operand %b, the scale-d predicate, then the form's immediates (the 8-bit
 * forms: K-major operands, no transpose immediates; the RS form: B's only). */
static void wgmma_text(const ckt_wgmma_site *x, long long cb, const char *a, long long b, char pred,
                       char *out, size_t cap)
{
    char regs[1200], tail[32] = "";
    size_t n = 0;
    for (long long i = 0; i < x->cv && n < sizeof regs; i++)
        n += (size_t)snprintf(regs + n, sizeof regs - n, "%s%%%lld", i ? ", " : "", cb + i);
    if (x->a_reg)
        snprintf(tail, sizeof tail, ", %d", x->trb);
    else if (x->m->k != 32)
        snprintf(tail, sizeof tail, ", %d, %d", x->tra, x->trb);
    snprintf(out, cap, "%s {%s}, %s, %%%lld, %c, 1, 1%s;", x->m->isa, regs, a, b, pred, tail);
}

static void cuda_issue(ckt_emit_out *o, const ckt_wgmma_site *x)
{
    long long CV = x->cv;
    char a[96], text[1400], sd[480];
    if (x->a_reg) { /* the RS form: K step ckt_kk's 8 values of A, packed in pairs */
        for (int r = 0; r < 4; r++)
            ckt_emit_put(o,
                         "const ckt_u32 ckt_ra%d = (ckt_u32)%s[8 * ckt_kk + %d] | "
                         "((ckt_u32)%s[8 * ckt_kk + %d] << 16);",
                         r, x->a_reg->name, 2 * r, x->a_reg->name, 2 * r + 1);
    }
    a_operand(x, CV, a, sizeof a);
    long long b = x->a_reg ? CV + 4 : CV + 1;
    wgmma_text(x, 0, a, b, 'p', text, sizeof text);
    ckt_emit_put(o, "asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%lld, 0; \"", b + 1);
    ckt_emit_put(o, "             \"%s }\"", text);
    put_accumulators(o, x, CV, "ckt_cb + ");
    if (x->a_reg)
        ckt_emit_put(o,
                     "             : \"r\"(ckt_ra0), \"r\"(ckt_ra1), \"r\"(ckt_ra2), "
                     "\"r\"(ckt_ra3), \"l\"(ckt_db), \"r\"(%s));",
                     scale_d(x, sd, sizeof sd));
    else
        ckt_emit_put(o, "             : \"l\"(ckt_da), \"l\"(ckt_db), \"r\"(%s));",
                     scale_d(x, sd, sizeof sd));
}

/* The operands of one statement holding every wgmma of a blockwise_gemm: the accumulators once
 * (inline assembly's operands cost NVVM and ptxas per statement: four statements of 130 operands
 * a 64-wide K slice of the default sm_90a GEMM), a descriptor of A per (K step, tile row) and of B
 * per (K step, tile column), and the first step's scale-d. At most this many, else a statement a
 * step (no shipped configuration has more). */
enum { WGMMA_ONE_STATEMENT_OPERANDS = 200 };

/* the scale-d of the first K step as an integer operand: 0 where the zero condition holds */
static void first_scale(const ckt_wgmma_site *x, char *buf, size_t cap)
{
    if (!x->zero)
        snprintf(buf, cap, "1");
    else if (!strcmp(x->zero, "1"))
        snprintf(buf, cap, "0");
    else
        snprintf(buf, cap, "(int)!(%s)", x->zero);
}

static bool cuda_issue_all(ckt_emit_out *o, const ckt_wgmma_site *x, long long mx, long long ks)
{
    /* A's operands a K step and tile row: a descriptor, or (the RS form) four words of registers */
    long long per_a = x->a_reg ? 4 : 1;
    long long nx = x->nx, cv = x->cv, acc = mx * nx * cv, na = ks * mx * per_a, nb = ks * nx;
    long long nops = acc + na + nb + 1;
    if ((x->a_reg && mx != 1) || nops > WGMMA_ONE_STATEMENT_OPERANDS) return false;
    ckt_emit_put(o, "/* every K step of every instruction tile in one statement: the accumulators "
                    "are its operands once */");
    for (long long kk = 0; kk < ks; kk++) {
        for (long long mi = 0; mi < mx; mi++) {
            if (!x->a_reg) {
                ckt_emit_put(o,
                             "const unsigned long long ckt_da%lld = ckt_fa | (((ckt_sa + "
                             "ckt_wa[%lld]) >> 4) & 0x3FFF);",
                             kk * mx + mi, mi * ks + kk);
                continue;
            }
            for (int r = 0; r < 4; r++) /* K step kk's 8 values of A, packed in pairs */
                ckt_emit_put(o,
                             "const ckt_u32 ckt_ra%lld = (ckt_u32)%s[%lld] | ((ckt_u32)%s[%lld] "
                             "<< 16);",
                             4 * kk + r, x->a_reg->name, 8 * kk + 2 * r, x->a_reg->name,
                             8 * kk + 2 * r + 1);
        }
        for (long long ni = 0; ni < nx; ni++)
            ckt_emit_put(o,
                         "const unsigned long long ckt_db%lld = ckt_fb | (((ckt_sb + "
                         "ckt_wb[%lld]) >> 4) & 0x3FFF);",
                         kk * nx + ni, ni * ks + kk);
    }
    ckt_emit_put(o,
                 "asm volatile(\"{ .reg .pred p, q; setp.ne.b32 p, %%%lld, 0; setp.eq.b32 q, 0, "
                 "0; \"",
                 nops - 1);
    for (long long kk = 0; kk < ks; kk++)
        for (long long mi = 0; mi < mx; mi++)
            for (long long ni = 0; ni < nx; ni++) {
                char a[96], text[1400];
                a_operand(x, acc + (kk * mx + mi) * per_a, a, sizeof a);
                /* (accumulators in the C value order of ckt/gemm.h) */
                wgmma_text(x, (mi * nx + ni) * cv, a, acc + na + kk * nx + ni, kk ? 'q' : 'p', text,
                           sizeof text);
                ckt_emit_put(o, "             \"%s \"", text);
            }
    ckt_emit_put(o, "             \"}\"");
    put_accumulators(o, x, acc, "");
    /* A's operands (K step, tile row), then B's descriptors (K step, tile column) */
    for (long long i = 0; i < na + nb; i += 8) {
        char line[400];
        size_t q = 0;
        for (long long j = i; j < i + 8 && j < na + nb; j++)
            q += (size_t)snprintf(line + q, sizeof line - q, "%s\"%c\"(ckt_%s%lld)",
                                  j > i ? ", " : "", j < na && x->a_reg ? 'r' : 'l',
                                  j < na ? (x->a_reg ? "ra" : "da") : "db", j < na ? j : j - na);
        ckt_emit_put(o, "             %s%s", i == 0 ? ": " : ", ", line);
    }
    char sd[480];
    first_scale(x, sd, sizeof sd);
    ckt_emit_put(o, "             , \"r\"(%s));", sd);
    return true;
}

static void cuda_close(ckt_emit_out *o, const ckt_wgmma_site *x)
{
    long long pending = (long long)x->op->spv;
    ckt_emit_put(o, "asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");");
    ckt_emit_put(o,
                 "asm volatile(\"wgmma.wait_group.sync.aligned %lld;\" ::: \"memory\"); /* %s */",
                 pending,
                 pending ? "the newest groups stay in flight (their LDS and accumulators untouched "
                           "until a later wait)"
                         : "done");
    fence_operands(o, x->c->name, (long long)x->c->nvalues);
}

/* wgmma.wait_group alone (ckt_kernel_wgmma_wait) */
static void cuda_wait(ckt_emit_out *o, const ckt_wgmma_site *x)
{
    ckt_emit_put(
        o,
        "asm volatile(\"wgmma.wait_group.sync.aligned %lld;\" ::: \"memory\"); /* at most %lld "
        "groups of MMAs in flight */",
        (long long)x->op->spv, (long long)x->op->spv);
    fence_operands(o, x->c->name, (long long)x->c->nvalues);
}

const ckt_wgmma_ops ckt_wgmma_cuda = {true,           cuda_open,  cuda_issue,
                                      cuda_issue_all, cuda_close, cuda_wait};

/* ---- C: the same descriptors with offsets into the block's LDS as addresses; ckt_emu_wgmma
 * (kernels/prelude/c.h) runs warpgroup by warpgroup */

static void c_open(ckt_emit_out *o, const ckt_wgmma_site *x, long long warpgroups)
{
    ckt_emit_put(o, "/* emulated warpgroup by warpgroup: shared-memory addresses are offsets into "
                    "ckt_lds */");
    ckt_emit_open_loop(o, false, "ckt_wg", warpgroups);
    if (!x->a_reg)
        ckt_emit_put(o, "const ckt_u32 ckt_sa = %s + (ckt_u32)(ckt_wg / %lld) * %lldu;", x->offa,
                     x->wn, x->step_a);
    ckt_emit_put(o, "const ckt_u32 ckt_sb = %s + (ckt_u32)(ckt_wg %% %lld) * %lldu;", x->offb,
                 x->wn, x->step_b);
}

static void c_issue(ckt_emit_out *o, const ckt_wgmma_site *x)
{
    if (x->zero) { /* scale-d 0 on the first K step: the instruction tile's accumulators from 0 */
        bool always = !strcmp(x->zero, "1");
        ckt_emit_put(
            o,
            "if (ckt_kk == 0%s%s%s) ckt_emu_wgmma_zero(&%s[ckt_wg * 128][0], %lld, ckt_cb, %lld);",
            always ? "" : " && (", always ? "" : x->zero, always ? "" : ")", x->c->name,
            (long long)x->c->nvalues, x->cv);
    }
    if (x->a_reg) {
        ckt_emit_put(o,
                     "ckt_emu_wgmma_ra(ckt_lds, %lldu, &%s[ckt_wg * 128][0], %lld, 8 * ckt_kk, "
                     "ckt_db, %lld, %d, %d, &%s[ckt_wg * 128][0], %lld, ckt_cb);",
                     (long long)ckt_kernel_lds_bytes(x->k), x->a_reg->name,
                     (long long)x->a_reg->nvalues, (long long)x->m->n, x->trb, x->m->a == CKT_BF16,
                     x->c->name, (long long)x->c->nvalues);
        return;
    }
    if (x->m->k == 32) { /* the 8-bit forms: the operands' format, 1 e5m2 and 0 e4m3 */
        ckt_emit_put(o,
                     "ckt_emu_wgmma8(ckt_lds, %lldu, ckt_da, ckt_db, %lld, %d, %d, &%s[ckt_wg * "
                     "128][0], %lld, ckt_cb);",
                     (long long)ckt_kernel_lds_bytes(x->k), (long long)x->m->n, x->m->a == CKT_E5M2,
                     x->m->b == CKT_E5M2, x->c->name, (long long)x->c->nvalues);
        return;
    }
    ckt_emit_put(o,
                 "ckt_emu_wgmma(ckt_lds, %lldu, ckt_da, ckt_db, %lld, %d, %d, %d, &%s[ckt_wg * "
                 "128][0], %lld, ckt_cb);",
                 (long long)ckt_kernel_lds_bytes(x->k), (long long)x->m->n, x->tra, x->trb,
                 x->m->a == CKT_BF16, x->c->name, (long long)x->c->nvalues);
}

static void c_close(ckt_emit_out *o, const ckt_wgmma_site *x)
{
    (void)x;
    ckt_emit_close(o); /* the loop over the warpgroups */
}

/* the emulated MMAs completed when issued */
static void c_wait(ckt_emit_out *o, const ckt_wgmma_site *x)
{
    ckt_emit_put(o, "/* wgmma.wait_group %lld: the emulated MMAs completed when issued */",
                 (long long)x->op->spv);
}

const ckt_wgmma_ops ckt_wgmma_c = {false, c_open, c_issue, NULL, c_close, c_wait};

/* ---- the op */

ckt_status ckt_emit_wgmma(ckt_sb *s, int ind, const ckt_dialect *dl, const ckt_kernel *k,
                          ckt_expr_pool *ex, const ckt_kop *op, const ckt_target_record *target,
                          ckt_error *err)
{
    if (op->ninputs == 0) {
        if (!dl->wgmma || !target->modelled || !target->hw.wgmma)
            return ckt_fail(err, CKT_EUNSUPPORTED, "wgmma wait: target '%s' has no wgmma (sm_90a)",
                            target->name);
        ckt_emit_out w = {s, ind};
        ckt_wgmma_site x = {.k = k, .op = op, .c = ckt_kernel_tensor(k, op->r)};
        dl->wgmma->wait(&w, &x);
        return CKT_OK;
    }
    const ckt_mma *m = ckt_mma_at(op->mma);
    if (!m || !ckt_mma_is_wgmma(m))
        return ckt_fail(err, CKT_EINVAL, "blockwise_gemm: instruction %d is not a warpgroup MMA",
                        op->mma);
    if (!dl->wgmma)
        return ckt_fail(
            err, CKT_EUNSUPPORTED,
            "blockwise_gemm: %s is an NVIDIA sm_90a instruction; the %s dialect has none", m->name,
            dl->name);
    ckt_status st = ckt_mma_check_target(m, target, err);
    if (st) return st;
    const ckt_ktensor *ta = ckt_kernel_tensor(k, op->inputs[0]),
                      *tb = ckt_kernel_tensor(k, op->inputs[1]), *c = ckt_kernel_tensor(k, op->r);
    long long MX = (long long)op->mma_rep[0], NX = (long long)op->mma_rep[1],
              KS = (long long)op->mma_rep[2], CV = (long long)m->c_values;
    const bool reg_a = ta->mem == CKT_MEM_REG; /* the RS form (kernel_wgmma.c checked its places) */
    ckt_layout r0;
    if ((st = ckt_layout_mode(&tb->layout, 0, &r0, err))) return st;
    long long WN = (long long)(ckt_layout_size(&r0) / (NX * m->n)),
              block = (long long)ckt_kernel_block(k);
    long long WM = block / 128 / (WN ? WN : 1);
    if (!reg_a) {
        if ((st = ckt_layout_mode(&ta->layout, 0, &r0, err))) return st;
        WM = (long long)(ckt_layout_size(&r0) / (MX * m->m));
    }
    if (WM * WN * 128 != block)
        return ckt_fail(
            err, CKT_EINVAL,
            "blockwise_gemm: %lld x %lld warpgroups do not fill the block of %lld threads", WM, WN,
            block);
    ckt_wgmma_operand pa, pb;
    memset(&pa, 0, sizeof pa);
    if ((!reg_a && (st = ckt_wgmma_operand_plan(&ta->layout, ta->swizzled ? &ta->sw : NULL,
                                                ta->dtype, m->m, MX, WM, KS, 'A', &pa, err))) ||
        (st = ckt_wgmma_operand_plan(&tb->layout, tb->swizzled ? &tb->sw : NULL, tb->dtype, m->n,
                                     NX, WN, KS, 'B', &pb, err)))
        return ckt_fail_prefix(err, "blockwise_gemm: ");
    ckt_emit_out o = {s, ind};
    char da[300], db[300], offa[500] = "0", offb[500], zc[400];
    if (reg_a)
        snprintf(da, sizeof da,
                 "A (%s): from registers, the accumulator fragment of an earlier wgmma (K step "
                 "kk: values 8 kk .. 8 kk + 7)",
                 ta->name);
    else {
        describe(&pa, ta, 'A', da, sizeof da);
        tile_offset(ta, ex, offa, sizeof offa);
    }
    describe(&pb, tb, 'B', db, sizeof db);
    tile_offset(tb, ex, offb, sizeof offb);
    ckt_emit_put(&o,
                 "{ /* blockwise_gemm: %s += %s x %s by %s, %lld x %lld warpgroups of %lld x %lld "
                 "instruction tiles, %lld K steps of %lld",
                 c->name, ta->name, tb->name, m->isa, WM, WN, MX, NX, KS, (long long)m->k);
    ckt_emit_put(&o, "   * descriptors from the LDS layouts: %s", da);
    ckt_emit_put(&o, "   *                                   %s */", db);
    o.ind++;
    ckt_emit_put(
        &o,
        "const unsigned long long ckt_fa = 0x%016llxull, ckt_fb = 0x%016llxull; /* LBO, SBO, "
        "swizzle mode */",
        fixed_bits(&pa.d), fixed_bits(&pb.d));
    if (!reg_a) start_table(&o, "ckt_wa", &pa);
    start_table(&o, "ckt_wb", &pb);
    const ckt_wgmma_ops *w = dl->wgmma;
    ckt_wgmma_site x = {k,
                        op,
                        m,
                        c,
                        offa,
                        offb,
                        WN,
                        (long long)pa.group_step,
                        (long long)pb.group_step,
                        NX,
                        CV,
                        pa.d.mn_major,
                        pb.d.mn_major,
                        reg_a ? ta : NULL,
                        zero_condition(ex, op->zero, zc, sizeof zc)};
    w->open(&o, &x, WM * WN);
    if (w->issue_all && w->issue_all(&o, &x, MX, KS)) {
        w->close(&o, &x);
        ckt_emit_close(&o);
        return CKT_OK;
    }
    ckt_emit_open_loop(&o, w->unroll, "ckt_kk", KS);
    ckt_emit_open_loop(&o, w->unroll, "ckt_mi", MX);
    ckt_emit_open_loop(&o, w->unroll, "ckt_ni", NX);
    if (!reg_a)
        ckt_emit_put(&o,
                     "const unsigned long long ckt_da = ckt_fa | (((ckt_sa + ckt_wa[ckt_mi * %lld "
                     "+ ckt_kk]) >> 4) & 0x3FFF);",
                     KS);
    ckt_emit_put(
        &o,
        "const unsigned long long ckt_db = ckt_fb | (((ckt_sb + ckt_wb[ckt_ni * %lld + ckt_kk]) >> "
        "4) & 0x3FFF);",
        KS);
    ckt_emit_put(
        &o, "const int ckt_cb = (ckt_mi * %lld + ckt_ni) * %lld; /* C value order of ckt/gemm.h */",
        NX, CV);
    w->issue(&o, &x);
    for (int i = 0; i < 3; i++) ckt_emit_close(&o);
    w->close(&o, &x);
    ckt_emit_close(&o);
    return CKT_OK;
}
