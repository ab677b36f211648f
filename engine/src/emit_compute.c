/* Computation on registers: clear, elementwise maps, folds and block reductions, and the
 * matrix-instruction op (emit_mma.c spells it per dialect). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "emit_walk.h"

void ckt_em_clear(em *e, const ckt_kop *op)
{
    const ckt_ktensor *t = ckt_kernel_tensor(e->k, op->r);
    char r[64], lit[48];
    ckt_em_literal(t->dtype, op->fill, lit, sizeof lit);
    ckt_em_thread_open(e);
    ckt_em_line(e, "/* clear %s */", t->name);
    for (int64_t v = 0; v < t->nvalues; v++)
        ckt_em_line(e, "%s = %s;", ckt_em_reg(e, t, v, r, sizeof r), lit);
}

/* "(<thread part> + c)": the coordinate along dimension r of value v of the calling thread in
 * d's tile (ckt_dist: the thread's digits times their coefficients, plus the value's own) */
static void value_coord(const ckt_dist *d, int r, int64_t v, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "((ckt_i64)%lld", (long long)d->vcoord[v][r]);
    for (int i = 0; i < d->ndigits && n < cap; i++)
        if (d->coef[i][r])
            n += (size_t)snprintf(buf + n, cap - n, " + ((ckt_i64)tid / %lld %% %lld) * %lld",
                                  (long long)d->digit_div[i], (long long)d->digit_mod[i],
                                  (long long)d->coef[i][r]);
    if (n < cap) snprintf(buf + n, cap - n, ")");
}

void ckt_em_map(em *e, const ckt_kop *op)
{
    const ckt_ktensor *out = ckt_kernel_tensor(e->k, op->r);
    ckt_em_thread_open(e);
    char *shown = ckt_em_estr(e, op->b, NULL);
    ckt_em_line(e, "/* %s = map(%s) over %lld values */", out->name, shown ? shown : "?",
                (long long)out->nvalues);
    free(shown);
    char names[CKT_K_MAX_INPUTS][128], coord[CKT_K_MAX_RANK][1024];
    const char *ptrs[CKT_K_MAX_INPUTS + CKT_K_MAX_RANK];
    const ckt_dist *d = op->coords ? ckt_kernel_dist(e->k, out->dist) : NULL;
    for (int64_t v = 0; v < out->nvalues; v++) {
        for (int i = 0; i < op->ninputs; i++) {
            const ckt_ktensor *in = ckt_kernel_tensor(e->k, op->inputs[i]);
            int64_t iv = in->nvalues == 1 ? 0 : v; /* one value per thread: the thread's scalar */
            char r[64];
            /* integer inputs stay integers (an i32 through f32 loses bits above 2^24) */
            if (ckt_em_is_int(in->dtype))
                snprintf(names[i], sizeof names[i], "((ckt_i64)%s)",
                         ckt_em_reg(e, in, iv, r, sizeof r));
            else
                ckt_em_to_f32(in->dtype, ckt_em_reg(e, in, iv, r, sizeof r), names[i],
                              sizeof names[i]);
            ptrs[i] = names[i];
        }
        for (int r = 0; d && r < d->rank; r++) {
            value_coord(d, r, v, coord[r], sizeof coord[r]);
            ptrs[op->ninputs + r] = coord[r];
        }
        char *x = ckt_em_estr(e, op->b, ptrs);
        if (!x) return;
        size_t n = strlen(x) + 64;
        char *y = malloc(n), *z = malloc(n + 64);
        if (y && z) {
            ckt_expr_type ty = ckt_expr_type_of(e->ex, op->b);
            if (ty != CKT_T_F32 &&
                ckt_em_is_int(out->dtype)) { /* integer to integer: no trip through f32 */
                snprintf(y, n, "(ckt_i64)(%s)", x);
                ckt_em_int_to(out->dtype, y, z, n + 64);
            } else {
                if (ty == CKT_T_F32)
                    snprintf(y, n, "%s", x);
                else
                    snprintf(y, n, "(float)(%s)", x);
                ckt_em_from_f32(out->dtype, y, z, n + 64);
            }
            char r[64];
            ckt_em_line(e, "%s = %s;", ckt_em_reg(e, out, v, r, sizeof r), z);
        } else {
            e->s->oom = true;
        }
        free(x);
        free(y);
        free(z);
    }
}

static const char *combine(ckt_reduce_op op, const char *a, const char *b, char *out, size_t cap)
{
    if (op == CKT_REDUCE_SUM)
        snprintf(out, cap, "%s + %s", a, b);
    else
        snprintf(out, cap, "%s(%s, %s)", op == CKT_REDUCE_MAX ? "fmaxf" : "fminf", a, b);
    return out;
}

void ckt_em_fold(em *e, const ckt_kop *op)
{
    const ckt_ktensor *acc = ckt_kernel_tensor(e->k, op->r),
                      *src = ckt_kernel_tensor(e->k, op->inputs[0]);
    ckt_em_thread_open(e);
    ckt_em_line(e, "/* %s = %s over the %lld values of %s */", acc->name,
                op->rop == CKT_REDUCE_SUM   ? "sum"
                : op->rop == CKT_REDUCE_MAX ? "max"
                                            : "min",
                (long long)src->nvalues, src->name);
    char a[64], s[64], af[128], sf[128], c[400], out[600];
    ckt_em_reg(e, acc, 0, a, sizeof a);
    /* threads outside the source's distribution hold no values: their accumulator stays */
    const ckt_dist *d = src->dist >= 0 ? ckt_kernel_dist(e->k, src->dist) : NULL;
    bool idle = d && d->threads < e->block;
    if (idle) {
        ckt_em_line(e, "if (tid < %lld) {", (long long)d->threads);
        e->ind++;
    }
    for (int64_t v = 0; v < src->nvalues; v++) {
        ckt_em_to_f32(acc->dtype, a, af, sizeof af);
        ckt_em_to_f32(src->dtype, ckt_em_reg(e, src, v, s, sizeof s), sf, sizeof sf);
        combine(op->rop, af, sf, c, sizeof c);
        ckt_em_from_f32(acc->dtype, c, out, sizeof out);
        ckt_em_line(e, "%s = %s;", a, out);
    }
    if (idle) {
        e->ind--;
        ckt_em_line(e, "}");
    }
}

/* "((ckt_i64)tid / div % mod) * c + ..." over d's digits, c the digit's row-major offset in the
 * tile (skip >= 0: without that dimension's part); "0" without digits */
static void thread_offset(const ckt_dist *d, const int64_t *st, int skip, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < d->ndigits && n < cap; i++) {
        int64_t c = 0;
        for (int r = 0; r < d->rank; r++)
            if (r != skip) c += d->coef[i][r] * st[r];
        if (!c) continue;
        n += (size_t)snprintf(buf + n, cap - n, "%s((ckt_i64)tid / %lld %% %lld) * %lld",
                              n ? " + " : "", (long long)d->digit_div[i],
                              (long long)d->digit_mod[i], (long long)c);
    }
    if (!n) snprintf(buf, cap, "0");
}

/* a region of the threads that hold values of d (threads the distribution leaves idle hold
 * nothing), opening with its offset variable name = offset */
static void open_holders(em *e, const ckt_dist *d, const char *name, const char *offset)
{
    ckt_em_thread_open(e);
    if (d->threads < e->block)
        ckt_em_line(e, "if (tid < %lld) {", (long long)d->threads);
    else
        ckt_em_line(e, "{");
    e->ind++;
    ckt_em_line(e, "const ckt_i64 %s = %s;", name, offset);
}

/* out[v] = op along dimension `dim` of the source tile (ckt_kernel_reduce_dim): the tile into
 * the scratch (row-major f32), a barrier, then each thread folds each line its values lie on once
 * (in order along the line) and gives the result to every value on it; a barrier frees the
 * scratch. */
static void dim_reduce(em *e, const ckt_kop *op)
{
    const ckt_ktensor *out = ckt_kernel_tensor(e->k, op->r),
                      *src = ckt_kernel_tensor(e->k, op->inputs[0]);
    const ckt_dist *d = ckt_kernel_dist(e->k, src->dist);
    int dim = op->vector_dim, rank = d->rank;
    int64_t st[CKT_K_MAX_RANK];
    st[rank - 1] = 1;
    for (int r = rank - 2; r >= 0; r--) st[r] = st[r + 1] * d->lengths[r + 1];
    char full[1024], line[1024], s[64], o[64], sf[128], c[400], res[600];
    thread_offset(d, st, -1, full, sizeof full);
    thread_offset(d, st, dim, line, sizeof line);
    ckt_em_thread_close(e);
    ckt_em_line(e,
                "/* %s = %s of %s along dim %d (%lld elements a line), every holder of a line "
                "gets it: the tile through LDS scratch at byte %lld */",
                out->name,
                op->rop == CKT_REDUCE_SUM   ? "sum"
                : op->rop == CKT_REDUCE_MAX ? "max"
                                            : "min",
                src->name, dim, (long long)d->lengths[dim],
                (long long)ckt_kernel_reduce_scratch(e->k));
    open_holders(e, d, "ckt_rd", full);
    for (int64_t v = 0; v < src->nvalues; v++) {
        int64_t lin = 0;
        for (int r = 0; r < rank; r++) lin += d->vcoord[v][r] * st[r];
        ckt_em_to_f32(src->dtype, ckt_em_reg(e, src, v, s, sizeof s), sf, sizeof sf);
        ckt_em_line(e, "ckt_red[ckt_rd + %lld] = %s;", (long long)lin, sf);
    }
    e->ind--;
    ckt_em_line(e, "}");
    ckt_em_barrier(e, "reduce along a dimension: the tile written");
    open_holders(e, d, "ckt_rl", line);
    for (int64_t v = 0; v < src->nvalues; v++) {
        int64_t key = 0, first = -1;
        for (int r = 0; r < rank; r++)
            if (r != dim) key += d->vcoord[v][r] * st[r];
        for (int64_t u = 0; u < v && first < 0; u++) {
            int64_t ku = 0;
            for (int r = 0; r < rank; r++)
                if (r != dim) ku += d->vcoord[u][r] * st[r];
            if (ku == key) first = u;
        }
        ckt_em_reg(e, out, v, o, sizeof o);
        if (first >= 0) {
            ckt_em_line(e, "%s = %s;", o, ckt_em_reg(e, out, first, s, sizeof s));
            continue;
        }
        char rhs[96];
        snprintf(rhs, sizeof rhs, "ckt_red[ckt_rl + %lld + ckt_j * %lld]", (long long)key,
                 (long long)st[dim]);
        ckt_em_line(e, "{");
        e->ind++;
        ckt_em_line(e, "float ckt_a = ckt_red[ckt_rl + %lld];", (long long)key);
        ckt_em_line(e, "for (ckt_i64 ckt_j = 1; ckt_j < %lld; ++ckt_j) ckt_a = %s;",
                    (long long)d->lengths[dim], combine(op->rop, "ckt_a", rhs, c, sizeof c));
        ckt_em_from_f32(out->dtype, "ckt_a", res, sizeof res);
        ckt_em_line(e, "%s = %s;", o, res);
        e->ind--;
        ckt_em_line(e, "}");
    }
    e->ind--;
    ckt_em_line(e, "}");
    ckt_em_barrier(e, "reduce along a dimension: scratch free again");
}

static const char *rop_name(ckt_reduce_op op)
{
    return op == CKT_REDUCE_SUM ? "sum" : op == CKT_REDUCE_MAX ? "max" : "min";
}

/* The butterfly over `lanes` (a power of two <= the wave) of the value in `x` (an f32 lvalue per
 * thread; C: an array indexed by tid): each step combines a lane's value with lane ^ s's, so that
 * every lane of a group ends with the same value combined in the same order. The C dialect runs
 * the steps over the block's threads with a copy (ckt_gt) in place of the exchange. */
static void butterfly(em *e, ckt_reduce_op rop, int64_t lanes, bool cpu)
{
    char c[400];
    for (int64_t s = lanes / 2; s >= 1; s /= 2) {
        if (cpu) {
            ckt_em_line(e, "for (int tid = 0; tid < %lld; ++tid) ckt_gt[tid] = ckt_gx[tid];",
                        (long long)e->block);
            char other[64];
            snprintf(other, sizeof other, "ckt_gt[tid ^ %lld]", (long long)s);
            ckt_em_line(e, "for (int tid = 0; tid < %lld; ++tid) ckt_gx[tid] = %s;",
                        (long long)e->block, combine(rop, "ckt_gt[tid]", other, c, sizeof c));
        } else {
            char other[64];
            snprintf(other, sizeof other, "ckt_shfl_xor(ckt_gx, %lld)", (long long)s);
            ckt_em_line(e, "ckt_gx = %s;", combine(rop, "ckt_gx", other, c, sizeof c));
        }
    }
}

/* b:block_reduce(acc, op, {threads = G}) (ckt_kernel_group_reduce): per value, the butterfly
 * within the wave; a group wider than a wave then exchanges the waves' partials through the
 * scratch (lane 0 of each wave writes, a barrier, every thread folds its group's partials in
 * wave order, a barrier frees the scratch). */
static void group_reduce(em *e, const ckt_kop *op)
{
    const ckt_ktensor *acc = ckt_kernel_tensor(e->k, op->r);
    int64_t G = op->group, W = e->target ? e->target->wave_size : 0, B = e->block;
    if (G == 1) return; /* a group of one thread: already reduced */
    if (W <= 0 || B % W) {
        e->st =
            ckt_fail(e->err, CKT_EINVAL,
                     "block_reduce: threads = %lld needs whole waves of a known size (the "
                     "block of %lld threads, waves of %lld lanes on %s)",
                     (long long)G, (long long)B, (long long)W, e->target ? e->target->name : "?");
        return;
    }
    bool cpu = e->dl->frame->thread_loops, wide = G > W;
    int64_t lanes = wide ? W : G, nw = B / W;
    char r[64], rf[128], out[600], c[400];
    ckt_em_thread_close(e);
    ckt_em_line(e, "/* block_reduce(%s, %s) over groups of %lld threads: lane shuffles%s */",
                acc->name, rop_name(op->rop), (long long)G,
                wide ? ", then the waves' partials through LDS scratch" : "");
    for (int64_t v = 0; v < acc->nvalues; v++) {
        ckt_em_reg(e, acc, v, r, sizeof r);
        ckt_em_to_f32(acc->dtype, r, rf, sizeof rf);
        ckt_em_line(e, "{");
        e->ind++;
        if (cpu) {
            ckt_em_line(e, "float ckt_gx[%lld], ckt_gt[%lld];", (long long)B, (long long)B);
            ckt_em_line(e, "for (int tid = 0; tid < %lld; ++tid) ckt_gx[tid] = %s;", (long long)B,
                        rf);
        } else {
            ckt_em_line(e, "float ckt_gx = %s;", rf);
        }
        butterfly(e, op->rop, lanes, cpu);
        const char *x = cpu ? "ckt_gx[tid]" : "ckt_gx";
        if (cpu) ckt_em_line(e, "for (int tid = 0; tid < %lld; ++tid) {", (long long)B);
        if (wide)
            ckt_em_line(e, "%sif (tid %% %lld == 0) ckt_red[%lld + tid / %lld] = %s;",
                        cpu ? "    " : "", (long long)W, (long long)(v * nw), (long long)W, x);
        else {
            ckt_em_from_f32(acc->dtype, x, out, sizeof out);
            ckt_em_line(e, "%s%s = %s;", cpu ? "    " : "", r, out);
        }
        if (cpu) ckt_em_line(e, "}");
        e->ind--;
        ckt_em_line(e, "}");
    }
    if (!wide) return;
    ckt_em_barrier(e, "block_reduce: the waves' partials written");
    ckt_em_thread_open(e);
    for (int64_t v = 0; v < acc->nvalues; v++) {
        char first[96], rhs[128];
        snprintf(first, sizeof first, "ckt_red[%lld + tid / %lld * %lld]", (long long)v * nw,
                 (long long)G, (long long)(G / W));
        ckt_em_line(e, "{");
        e->ind++;
        ckt_em_line(e, "float ckt_a = %s;", first);
        snprintf(rhs, sizeof rhs, "ckt_red[%lld + tid / %lld * %lld + ckt_j]", (long long)v * nw,
                 (long long)G, (long long)(G / W));
        ckt_em_line(e, "for (int ckt_j = 1; ckt_j < %lld; ++ckt_j) ckt_a = %s;", (long long)(G / W),
                    combine(op->rop, "ckt_a", rhs, c, sizeof c));
        ckt_em_from_f32(acc->dtype, "ckt_a", out, sizeof out);
        ckt_em_line(e, "%s = %s;", ckt_em_reg(e, acc, v, r, sizeof r), out);
        e->ind--;
        ckt_em_line(e, "}");
    }
    ckt_em_barrier(e, "block_reduce: scratch free again");
}

void ckt_em_block_reduce(em *e, const ckt_kop *op)
{
    if (op->group) {
        group_reduce(e, op);
        return;
    }
    if (op->ninputs == 1) {
        dim_reduce(e, op);
        return;
    }
    const ckt_ktensor *acc = ckt_kernel_tensor(e->k, op->r);
    int64_t scratch = ckt_kernel_reduce_scratch(e->k), B = e->block, P = 1;
    while (P * 2 <= B) P *= 2;
    char a[64], af[128], c[400], out[600];
    ckt_em_reg(e, acc, 0, a, sizeof a);
    ckt_em_to_f32(acc->dtype, a, af, sizeof af);
    ckt_em_thread_close(e);
    ckt_em_line(e, "/* block_reduce(%s): a tree over LDS scratch at byte %lld */", acc->name,
                (long long)scratch);
    ckt_em_thread_open(e);
    ckt_em_line(e, "ckt_red[tid] = %s;", af);
    ckt_em_barrier(e, "block_reduce: partials written");
    if (P < B) {
        ckt_em_thread_open(e);
        char rhs[64];
        snprintf(rhs, sizeof rhs, "ckt_red[tid + %lld]", (long long)P);
        ckt_em_line(e, "if (tid < %lld) ckt_red[tid] = %s;", (long long)(B - P),
                    combine(op->rop, "ckt_red[tid]", rhs, c, sizeof c));
        ckt_em_barrier(e, "block_reduce: tail folded");
    }
    for (int64_t s = P / 2; s >= 1; s /= 2) {
        char rhs[64];
        snprintf(rhs, sizeof rhs, "ckt_red[tid + %lld]", (long long)s);
        ckt_em_thread_open(e);
        ckt_em_line(e, "if (tid < %lld) ckt_red[tid] = %s;", (long long)s,
                    combine(op->rop, "ckt_red[tid]", rhs, c, sizeof c));
        ckt_em_barrier(e, "block_reduce: tree step");
    }
    ckt_em_thread_open(e);
    ckt_em_from_f32(acc->dtype, "ckt_red[0]", out, sizeof out);
    ckt_em_line(e, "%s = %s;", a, out);
    ckt_em_barrier(e, "block_reduce: scratch free again");
}

/* A matrix instruction exists on the target (cpu:<gpu>: the emulated one); the C dialect runs it
 * between the per-thread regions, where every lane's registers are in memory. */
void ckt_em_gemm(em *e, const ckt_kop *op)
{
    const ckt_mma *m = ckt_mma_at(op->mma);
    if (!m) {
        e->st = ckt_fail(e->err, CKT_EINVAL, "blockwise_gemm: no instruction %d", op->mma);
        return;
    }
    if ((e->st = ckt_mma_check_target(m, e->target, e->err))) return;
    ckt_em_thread_close(e);
    ckt_mma_site x = {m,
                      ckt_kernel_tensor(e->k, op->inputs[0])->name,
                      ckt_kernel_tensor(e->k, op->inputs[1])->name,
                      ckt_kernel_tensor(e->k, op->r)->name,
                      {op->mma_rep[0], op->mma_rep[1], op->mma_rep[2]},
                      e->block,
                      op->line};
    ckt_emit_mma(e->s, e->ind, e->dl, &x);
}
