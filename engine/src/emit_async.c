/* Asynchronous copies global -> LDS (CKT_OP_COPY_ASYNC), their commits and waits. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "emit_walk.h"

/* The widest vector both sides of a copy allow (the same distribution, so the same runs). */
static int64_t copy_width(em *e, em_access *src, em_access *dst, int64_t want, char *why,
                          size_t cap)
{
    why[0] = 0;
    for (int64_t s = want ? want : 16 / src->esz; s > 1; s /= 2) {
        char w[256];
        const char *b = ckt_em_vector_blocker(e, src, s, w, sizeof w);
        if (!b) b = ckt_em_vector_blocker(e, dst, s, w, sizeof w);
        if (!b) return s;
        if (!why[0]) snprintf(why, cap, "%lld-wide vectors impossible: %s", (long long)s, b);
        if (want) return 0;
    }
    for (int64_t v = 0; v < src->d->nvalues; v++) {
        src->group[v] = dst->group[v] = v;
        src->order[v] = dst->order[v] = 0;
    }
    return 1;
}

/* The vectors of one thread's asynchronous copy (see emit_copy_async); `inside`: the window is
 * known inside the source, no masks. */
static void copy_vectors(em *e, const em_access *src, const em_access *dst, int64_t bytes,
                         bool split, bool add, const int64_t *fc, bool inside)
{
    ckt_expr_pool *ex = e->ex;
    char zero[48];
    ckt_em_literal(dst->t->dtype, 0.0f, zero, sizeof zero);
    for (int64_t v = 0, g = 0; v < src->d->nvalues; v++) {
        if (src->group[v] != v) continue;
        ckt_expr_id so = ckt_em_group_offset(e, src, v, 0),
                    mask = inside ? ckt_expr_int(ex, 1)
                                  : ckt_em_in_bounds(e, src, v, bytes / src->esz);
        ckt_expr_id dof = split ? ckt_expr_int(ex, 0)
                                : ckt_em_swizzled(e, dst->t, ckt_em_group_offset(e, dst, v, 0));
        int64_t always;
        bool masked = !(ckt_expr_is_const(ex, mask, &always) && always);
        char *ss = ckt_em_estr(e, so, NULL), *ds = ckt_em_estr(e, dof, NULL),
             *ms = masked ? ckt_em_estr(e, mask, NULL) : NULL;
        if (!ss || !ds || (masked && !ms)) {
            free(ss);
            free(ds);
            free(ms);
            e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
            return;
        }
        if (split) {
            char at[96];
            if (add)
                snprintf(at, sizeof at, "ckt_cb + %lldu * ckt_ct, %lld", (long long)dst->esz,
                         (long long)(fc[g] * dst->esz));
            else
                snprintf(at, sizeof at, "ckt_cb + %lldu * (ckt_ct ^ %lldu), 0", (long long)dst->esz,
                         (long long)fc[g]);
            if (masked && e->dl->masked_reads_nothing)
                ckt_em_line(e, "CKT_CP_ASYNC_AT(%lld, %s, %s + (%s), %s);", (long long)bytes, at,
                            src->t->name, ss, ms);
            else if (masked)
                ckt_em_line(e, "CKT_CP_ASYNC_AT(%lld, %s, (%s) ? %s + (%s) : %s, %s);",
                            (long long)bytes, at, ms, src->t->name, ss, src->t->name, ms);
            else
                ckt_em_line(e, "CKT_CP_ASYNC_AT(%lld, %s, %s + (%s), 1);", (long long)bytes, at,
                            src->t->name, ss);
        } else if (bytes >= 4 && masked && e->dl->masked_reads_nothing)
            ckt_em_line(e, "CKT_CP_ASYNC(%lld, %s + (%s), %s + (%s), %s);", (long long)bytes,
                        dst->t->name, ds, src->t->name, ss, ms);
        else if (bytes >= 4 && masked) /* the emulations read through the address: a valid one */
            ckt_em_line(e, "CKT_CP_ASYNC(%lld, %s + (%s), (%s) ? %s + (%s) : %s, %s);",
                        (long long)bytes, dst->t->name, ds, ms, src->t->name, ss, src->t->name, ms);
        else if (bytes >= 4)
            ckt_em_line(e, "CKT_CP_ASYNC(%lld, %s + (%s), %s + (%s), 1);", (long long)bytes,
                        dst->t->name, ds, src->t->name, ss);
        else if (masked)
            ckt_em_line(e, "%s[%s] = (%s) ? %s[%s] : %s;", dst->t->name, ds, ms, src->t->name, ss,
                        zero);
        else
            ckt_em_line(e, "%s[%s] = %s[%s];", dst->t->name, ds, src->t->name, ss);
        free(ss);
        free(ds);
        free(ms);
        g++;
    }
}

/* LDS window = global window, each thread its elements of the distribution: CKT_CP_ASYNC is
 * cp.async (16 bytes: .cg, zero-filled past a padded edge) in the CUDA prelude, a load and a
 * store through registers in the HIP prelude, a copy queued until its wait in the C prelude;
 * 2-byte elements go one by one (synchronously, in every dialect). */
void ckt_em_copy_async(em *e, const ckt_kop *op)
{
    em_access src, dst;
    memset(&src, 0, sizeof src);
    memset(&dst, 0, sizeof dst);
    if (ckt_em_access_init(e, &src, op->inputs[0], op->dist, op->vector_dim, "i") ||
        ckt_em_access_init(e, &dst, op->w, op->dist, op->vector_dim, "j")) {
        e->st = e->err->status;
        return;
    }
    ckt_expr_pool *ex = e->ex;
    char why[300];
    int64_t spv = copy_width(e, &src, &dst, op->spv > 1 ? op->spv : 0, why, sizeof why);
    if (!spv) {
        e->st = ckt_fail(e->err, CKT_EINVAL, "copy_async: scalar_per_vector %lld is impossible: %s",
                         (long long)op->spv, why);
        return;
    }
    int64_t bytes = spv * src.esz;
    char sdesc[400], ddesc[400], lens[96] = "";
    ckt_em_describe_tensor(e, src.t, sdesc, sizeof sdesc);
    ckt_em_describe_tensor(e, dst.t, ddesc, sizeof ddesc);
    for (int d = 0, n = 0; d < src.rank && n < (int)sizeof lens; d++)
        n += snprintf(lens + n, sizeof lens - (size_t)n, "%s%lld", d ? "x" : "",
                      (long long)src.w->lengths[d]);
    ckt_em_thread_open(e);
    if (op->line)
        ckt_em_line(e, "/* line %d: asynchronous copy from %s to %s, window %s */", op->line, sdesc,
                    ddesc, lens);
    else
        ckt_em_line(e, "/* asynchronous copy from %s to %s, window %s */", sdesc, ddesc, lens);
    ckt_em_line(e, "/*   threads: %s; %lld-byte copies%s%s */", src.d->desc,
                (long long)(bytes >= 4 ? bytes : src.esz), why[0] ? "; " : "", why);
    if (src.d->threads < e->block)
        ckt_em_line(e, "if (tid < %lld) {", (long long)src.d->threads);
    else
        ckt_em_line(e, "{");
    e->ind++;
    ckt_em_declare_coords(e, &src, "i");
    /* CUDA: the LDS side as one per-thread shared address plus an immediate per vector */
    int64_t vals[CKT_K_MAX_VALUES], fc[CKT_K_MAX_VALUES];
    int nv = 0;
    for (int64_t v = 0; v < src.d->nvalues; v++)
        if (src.group[v] == v) vals[nv++] = v;
    ckt_expr_id u0;
    bool add = false, split = e->dl->lds_immediates && bytes >= 4 &&
                              ckt_em_split_offsets(e, &dst, nv, vals, &u0, fc, &add);
    if (split) {
        if (!ckt_em_thread_address(e, &dst, u0, "ckt_ct", "ckt_cb")) return;
    } else
        ckt_em_declare_coords(e, &dst, "j");
    /* HIP, a padded source: a block whose window lies wholly inside the tensor (all but the edge
     * blocks and the K tail) copies without the per-vector masks and selects. CUDA has no such
     * second form: there a masked copy costs a predicate (the address unselected), and the
     * second form cost a third of the sm_90 GEMM's compile time for no speed (docs/gemm.md) */
    ckt_expr_id within = ckt_expr_int(ex, 0);
    int64_t never;
    if (e->dl->interior_unmasked && src.t->mem == CKT_MEM_GLOBAL && src.t->padded)
        within = ckt_em_window_within(e, &src);
    bool interior = !(ckt_expr_is_const(ex, within, &never) && !never);
    if (interior) {
        char *ws = ckt_em_estr(e, within, NULL);
        if (!ws) {
            e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
            return;
        }
        ckt_em_line(e, "if (%s) { /* the window lies inside %s: no masks */", ws, src.t->name);
        free(ws);
        e->ind++;
        copy_vectors(e, &src, &dst, bytes, split, add, fc, true);
        e->ind--;
        ckt_em_line(e, "} else {");
        e->ind++;
    }
    copy_vectors(e, &src, &dst, bytes, split, add, fc, false);
    if (interior) {
        e->ind--;
        ckt_em_line(e, "}");
    }
    e->ind--;
    ckt_em_line(e, "}");
}

void ckt_em_commit(em *e)
{
    ckt_em_thread_close(e); /* a block-level statement (the C dialect counts groups per block) */
    ckt_em_line(
        e, "CKT_CP_COMMIT(); /* the asynchronous copies since the last commit form one group */");
}

/* the LDS the threads wrote (their copies landed, or their own stores) made visible to what
 * reads it through the async proxy (the dialect's hook: wgmma on CUDA; nothing elsewhere) */
void ckt_em_async_visible(em *e)
{
    if (e->dl->async_waited) {
        ckt_emit_out o = ckt_em_out(e);
        e->dl->async_waited(&o, e->k);
    }
}

void ckt_em_wait(em *e, const ckt_kop *op)
{
    ckt_em_thread_close(e);
    ckt_em_line(
        e, "CKT_CP_WAIT(%lld); /* at most %lld groups of asynchronous copies still in flight */",
        (long long)op->spv, (long long)op->spv);
    ckt_em_async_visible(e);
    if (op->b != CKT_EXPR_NONE) ckt_em_barrier(e, "wait: every thread's copies have landed");
}
