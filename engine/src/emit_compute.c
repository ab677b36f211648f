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

/* Digit i of the thread id, "(tid / div % mod)" ("(tid % mod)" for div 1). The remainder stays
 * even where the block's threads never reach it: it tells NVVM the value's range, without which
 * the layernorm's coordinates became 64-bit and the kernel spilled (32 bytes of scratch on sm_90)
 */
static size_t thread_digit(const ckt_dist *d, int i, char *buf, size_t cap)
{
    int64_t div = d->digit_div[i], mod = d->digit_mod[i];
    if (div == 1) return (size_t)snprintf(buf, cap, "((ckt_i64)tid %% %lld)", (long long)mod);
    return (size_t)snprintf(buf, cap, "((ckt_i64)tid / %lld %% %lld)", (long long)div,
                            (long long)mod);
}

/* sum_i digit_i * c_i over d's digits, c_i = coef[i] . st over the dimensions but `skip`; "0"
 * without digits */
static void digit_sum(const ckt_dist *d, const int64_t *st, int skip, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < d->ndigits && n < cap; i++) {
        int64_t c = 0;
        for (int r = 0; r < d->rank; r++)
            if (r != skip) c += d->coef[i][r] * st[r];
        if (!c) continue;
        if (n) n += (size_t)snprintf(buf + n, cap - n, " + ");
        if (n < cap) n += thread_digit(d, i, buf + n, cap - n);
        if (n < cap && c != 1) n += (size_t)snprintf(buf + n, cap - n, " * %lld", (long long)c);
    }
    if (!n) snprintf(buf, cap, "0");
}

void ckt_em_map(em *e, const ckt_kop *op)
{
    const ckt_ktensor *out = ckt_kernel_tensor(e->k, op->r);
    ckt_em_thread_open(e);
    char *shown = ckt_em_estr(e, op->b, NULL);
    ckt_em_line(e, "/* %s = map(%s) over %lld values */", out->name, shown ? shown : "?",
                (long long)out->nvalues);
    free(shown);
    char names[CKT_K_MAX_INPUTS][128], coord[CKT_K_MAX_RANK][64];
    const char *ptrs[CKT_K_MAX_INPUTS + CKT_K_MAX_RANK];
    const ckt_dist *d = op->coords ? ckt_kernel_dist(e->k, out->dist) : NULL;
    /* the coordinates' thread parts once (a value's coordinate: that plus its own constant) */
    if (d) {
        ckt_em_line(e, "{");
        e->ind++;
        /* (only the dimensions the function reads) */
        for (int i = 0; i < op->ninputs; i++) ptrs[i] = "x";
        for (int r = 0; r < d->rank; r++) {
            snprintf(coord[r], sizeof coord[r], "ckt_mc%d", r);
            ptrs[op->ninputs + r] = coord[r];
        }
        char *probe = ckt_em_estr(e, op->b, ptrs);
        if (!probe) return;
        for (int r = 0; r < d->rank; r++) {
            if (!strstr(probe, coord[r])) continue;
            char part[1024];
            int64_t unit[CKT_K_MAX_RANK] = {0};
            unit[r] = 1; /* dimension r's coordinate alone */
            digit_sum(d, unit, -1, part, sizeof part);
            ckt_em_line(e,
                        "const ckt_i64 ckt_mc%d = %s; /* this thread's coordinate along dim %d */",
                        r, part, r);
        }
        free(probe);
    }
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
            snprintf(coord[r], sizeof coord[r], "(ckt_mc%d + %lld)", r, (long long)d->vcoord[v][r]);
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
    if (d) {
        e->ind--;
        ckt_em_line(e, "}");
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

static const char *rop_name(ckt_reduce_op op)
{
    return op == CKT_REDUCE_SUM   ? "sum"
           : op == CKT_REDUCE_MAX ? "max"
           : op == CKT_REDUCE_MIN ? "min"
                                  : "softmax";
}

void ckt_em_fold(em *e, const ckt_kop *op)
{
    const ckt_ktensor *acc = ckt_kernel_tensor(e->k, op->r),
                      *src = ckt_kernel_tensor(e->k, op->inputs[0]);
    ckt_em_thread_open(e);
    ckt_em_line(e, "/* %s = %s over the %lld values of %s */", acc->name, rop_name(op->rop),
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

/* ---- a reduction along a dimension inside a wave: a butterfly over lanes ---- */

#define CKT_LANE_MAX_MASKS 6
#define CKT_LANE_MAX_LINES 64

typedef struct {
    int nmasks;
    int64_t masks[CKT_LANE_MAX_MASKS];
    int nlines;
    int line_of[CKT_K_MAX_VALUES]; /* value -> the thread's line it lies on */
    int first[CKT_LANE_MAX_LINES]; /* line -> its first value */
} lane_plan;

static bool pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* the row-major offset of value v of thread t in the tile, without dimension `skip`'s part */
static int64_t line_key(const ckt_dist *d, const int64_t *st, int skip, int64_t t, int64_t v,
                        int64_t *along)
{
    int64_t c[CKT_K_MAX_RANK], key = 0;
    ckt_dist_coord(d, t, v, c);
    for (int r = 0; r < d->rank; r++)
        if (r != skip) key += c[r] * st[r];
    *along = c[skip];
    return key;
}

/* The lanes holding each line: the digits of the thread id that move along dim, as XOR masks of
 * lane bits. Then checked thread by thread: the lanes t ^ (any combination of the masks) hold each
 * element of every line of t exactly once between them. False: the line is not a butterfly of
 * one wave's lanes (the LDS path takes it). */
static bool lane_plan_of(const ckt_dist *d, int dim, int64_t block, int wave, lane_plan *lp)
{
    memset(lp, 0, sizeof *lp);
    if (wave <= 0 || d->threads != block || block % wave) return false;
    for (int i = 0; i < d->ndigits; i++) {
        if (!d->coef[i][dim]) continue;
        if (!pow2(d->digit_div[i]) || !pow2(d->digit_mod[i]) ||
            d->digit_div[i] * d->digit_mod[i] > wave)
            return false;
        for (int64_t b = d->digit_div[i]; b < d->digit_div[i] * d->digit_mod[i]; b *= 2) {
            if (lp->nmasks == CKT_LANE_MAX_MASKS) return false;
            lp->masks[lp->nmasks++] = b;
        }
    }
    int64_t st[CKT_K_MAX_RANK], len = d->lengths[dim];
    st[d->rank - 1] = 1;
    for (int r = d->rank - 2; r >= 0; r--) st[r] = st[r + 1] * d->lengths[r + 1];
    /* the thread's lines, in the order of their first values (the same for every thread: the
     * values' coordinates do not depend on the thread) */
    int64_t keys[CKT_LANE_MAX_LINES], along;
    for (int64_t v = 0; v < d->nvalues; v++) {
        int64_t key = line_key(d, st, dim, 0, v, &along);
        int l = 0;
        while (l < lp->nlines && keys[l] != key) l++;
        if (l == lp->nlines) {
            if (l == CKT_LANE_MAX_LINES) return false;
            keys[l] = key;
            lp->first[l] = (int)v;
            lp->nlines++;
        }
        lp->line_of[v] = l;
    }
    int64_t elems = 1;
    for (int r = 0; r < d->rank; r++) elems *= d->lengths[r];
    if (2 * block * lp->nlines > elems) return false; /* the emulation's scratch is the tile's */
    unsigned char *seen = malloc((size_t)len);
    if (!seen) return false;
    bool ok = true;
    for (int64_t t = 0; t < block && ok; t++)
        for (int l = 0; l < lp->nlines && ok; l++) {
            int64_t key = line_key(d, st, dim, t, lp->first[l], &along), held = 0;
            memset(seen, 0, (size_t)len);
            for (int64_t g = 0; g < ((int64_t)1 << lp->nmasks) && ok; g++) {
                int64_t lane = t;
                for (int m = 0; m < lp->nmasks; m++)
                    if (g >> m & 1) lane ^= lp->masks[m];
                for (int64_t u = 0; u < d->nvalues && ok; u++) {
                    if (line_key(d, st, dim, lane, u, &along) != key) continue;
                    ok = along >= 0 && along < len && !seen[along];
                    if (ok) seen[along] = 1, held++;
                }
            }
            ok = ok && held == len;
        }
    free(seen);
    return ok;
}

bool ckt_em_lane_reduce_ok(const ckt_dist *d, int dim, int64_t block, int wave)
{
    lane_plan lp;
    return lane_plan_of(d, dim, block, wave, &lp);
}

/* ckt_p<l> = op over the thread's own values on line l, in value order */
static void lane_partials(em *e, const ckt_ktensor *src, const lane_plan *lp, ckt_reduce_op rop)
{
    char s[64], sf[128], c[400], p[32];
    for (int l = 0; l < lp->nlines; l++) {
        snprintf(p, sizeof p, "ckt_p%d", l);
        for (int64_t v = lp->first[l]; v < src->nvalues; v++) {
            if (lp->line_of[v] != l) continue;
            ckt_em_to_f32(src->dtype, ckt_em_reg(e, src, v, s, sizeof s), sf, sizeof sf);
            if (v == lp->first[l])
                ckt_em_line(e, "float %s = %s;", p, sf);
            else
                ckt_em_line(e, "%s = %s;", p, combine(rop, p, sf, c, sizeof c));
        }
    }
}

static void lane_results(em *e, const ckt_ktensor *out, const lane_plan *lp, const char *fmt)
{
    char o[64], x[64], res[600];
    for (int64_t v = 0; v < out->nvalues; v++) {
        snprintf(x, sizeof x, fmt, lp->line_of[v]);
        ckt_em_from_f32(out->dtype, x, res, sizeof res);
        ckt_em_line(e, "%s = %s;", ckt_em_reg(e, out, v, o, sizeof o), res);
    }
}

/* out[v] = op along dim within the wave: each lane folds its own values on each of its lines,
 * then a butterfly over the lanes holding the line (lane ^ mask, each mask in turn, through the
 * preludes' ckt_shfl_xor: both lanes of a pair compute own op partner, the same value). The C
 * dialect runs the same exchange through LDS scratch (two halves, thread regions between the
 * steps), so the emulation folds in the same order as the GPU. */
static void lane_reduce(em *e, const ckt_kop *op, const lane_plan *lp)
{
    const ckt_ktensor *out = ckt_kernel_tensor(e->k, op->r),
                      *src = ckt_kernel_tensor(e->k, op->inputs[0]);
    char c[400], a[96], b[160];
    int64_t L = lp->nlines, B = e->block;
    ckt_em_thread_close(e);
    char masks[CKT_LANE_MAX_MASKS * 24] = "";
    for (int m = 0, n = 0; m < lp->nmasks; m++)
        n += snprintf(masks + n, sizeof masks - (size_t)n, "%s%lld", m ? ", " : "",
                      (long long)lp->masks[m]);
    ckt_em_line(e,
                "/* %s = %s of %s along dim %d: each lane folds its values on its %lld line(s), "
                "then a butterfly over the lanes holding a line (lane XOR %s) */",
                out->name, rop_name(op->rop), src->name, op->vector_dim, (long long)L,
                lp->nmasks ? masks : "none: a lane holds its lines whole");
    ckt_em_thread_open(e);
    ckt_em_line(e, "{");
    e->ind++;
    lane_partials(e, src, lp, op->rop);
    if (!e->dl->frame->thread_loops) {
        for (int m = 0; m < lp->nmasks; m++)
            for (int l = 0; l < L; l++) {
                snprintf(a, sizeof a, "ckt_p%d", l);
                snprintf(b, sizeof b, "ckt_shfl_xor(%s, %lld)", a, (long long)lp->masks[m]);
                ckt_em_line(e, "%s = %s;", a, combine(op->rop, a, b, c, sizeof c));
            }
        lane_results(e, out, lp, "ckt_p%d");
        e->ind--;
        ckt_em_line(e, "}");
        return;
    }
    int64_t half = B * L;
    for (int l = 0; l < L; l++)
        ckt_em_line(e, "ckt_red[tid * %lld + %d] = ckt_p%d;", (long long)L, l, l);
    e->ind--;
    ckt_em_line(e, "}");
    for (int m = 0; m < lp->nmasks; m++) {
        int64_t from = m % 2 ? half : 0, to = m % 2 ? 0 : half;
        ckt_em_barrier(e, "lane exchange (the emulation of a shuffle)");
        ckt_em_thread_open(e);
        for (int l = 0; l < L; l++) {
            snprintf(a, sizeof a, "ckt_red[%lld + tid * %lld + %d]", (long long)from, (long long)L,
                     l);
            snprintf(b, sizeof b, "ckt_red[%lld + (tid ^ %lld) * %lld + %d]", (long long)from,
                     (long long)lp->masks[m], (long long)L, l);
            ckt_em_line(e, "ckt_red[%lld + tid * %lld + %d] = %s;", (long long)to, (long long)L, l,
                        combine(op->rop, a, b, c, sizeof c));
        }
    }
    ckt_em_barrier(e, "lane exchange done");
    ckt_em_thread_open(e);
    snprintf(a, sizeof a, "ckt_red[%lld + tid * %lld + %%d]",
             (long long)(lp->nmasks % 2 ? half : 0), (long long)L);
    lane_results(e, out, lp, a);
    ckt_em_barrier(e, "reduce along a dimension: scratch free again");
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
    lane_plan lp;
    if (lane_plan_of(d, dim, e->block, e->target ? e->target->wave_size : 0, &lp)) {
        lane_reduce(e, op, &lp);
        return;
    }
    int64_t st[CKT_K_MAX_RANK];
    st[rank - 1] = 1;
    for (int r = rank - 2; r >= 0; r--) st[r] = st[r + 1] * d->lengths[r + 1];
    char full[1024], line[1024], s[64], o[64], sf[128], c[400], res[600];
    digit_sum(d, st, -1, full, sizeof full);
    digit_sum(d, st, dim, line, sizeof line);
    ckt_em_thread_close(e);
    ckt_em_line(e,
                "/* %s = %s of %s along dim %d (%lld elements a line), every holder of a line "
                "gets it: the tile through LDS scratch at byte %lld */",
                out->name, rop_name(op->rop), src->name, dim, (long long)d->lengths[dim],
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

/* A group reduction of G threads has work and can be emitted: its shuffles need whole waves
 * of a known size (the block a multiple of the target's wave); else the error is set */
static bool group_emittable(em *e, int64_t G)
{
    int64_t W = e->target ? e->target->wave_size : 0, B = e->block;
    if (G == 1) return false; /* a group of one thread: already reduced */
    if (W <= 0 || B % W) {
        e->st =
            ckt_fail(e->err, CKT_EINVAL,
                     "block_reduce: threads = %lld needs whole waves of a known size (the "
                     "block of %lld threads, waves of %lld lanes on %s)",
                     (long long)G, (long long)B, (long long)W, e->target ? e->target->name : "?");
        return false;
    }
    return true;
}

/* b:block_reduce(acc, op, {threads = G}) (ckt_kernel_group_reduce): per value, the butterfly
 * over groups of up to 32 lanes; a wider group then exchanges the 32-lane partials through the
 * scratch (lane 0 of each writes, a barrier, a butterfly of the group's partials one a lane, a
 * barrier frees the scratch). The shuffles need whole waves (the block a multiple of the wave).
 * ops[0..n-1]: a run of such reductions over the same groups with nothing between them
 * (ckt_kernel_reduce_run): their partials share the scratch and the two barriers, so that a
 * layernorm's sum and sum of squares cost one exchange, not two. */
static void group_reduce(em *e, const ckt_kop *const *ops, int n)
{
    int64_t G = ops[0]->group, B = e->block;
    if (!group_emittable(e, G)) return;
    /* butterflies over at most 32 lanes (the narrowest wave) on every target: the same order of
     * operations everywhere, and the LDS the kernel declares (ckt_kernel_group_reduce reserves
     * it for groups above 32) is the LDS it uses */
    const int64_t L = 32;
    bool cpu = e->dl->frame->thread_loops, wide = G > L;
    int64_t lanes = wide ? L : G, nw = B / L, slot = 0;
    char r[64], rf[128], out[600];
    ckt_em_thread_close(e);
    for (int i = 0; i < n; i++) {
        const ckt_kop *op = ops[i];
        const ckt_ktensor *acc = ckt_kernel_tensor(e->k, op->r);
        ckt_em_line(
            e, "/* block_reduce(%s, %s) over groups of %lld threads: lane shuffles%s */", acc->name,
            rop_name(op->rop), (long long)G,
            !wide   ? ""
            : i > 0 ? ", its partials beside the previous reduction's"
            : n > 1
                ? ", then the waves' partials of this and the next reductions through LDS scratch"
                : ", then the waves' partials through LDS scratch");
        for (int64_t v = 0; v < acc->nvalues; v++, slot++) {
            ckt_em_reg(e, acc, v, r, sizeof r);
            ckt_em_to_f32(acc->dtype, r, rf, sizeof rf);
            ckt_em_line(e, "{");
            e->ind++;
            if (cpu) {
                ckt_em_line(e, "float ckt_gx[%lld], ckt_gt[%lld];", (long long)B, (long long)B);
                ckt_em_line(e, "for (int tid = 0; tid < %lld; ++tid) ckt_gx[tid] = %s;",
                            (long long)B, rf);
            } else {
                ckt_em_line(e, "float ckt_gx = %s;", rf);
            }
            butterfly(e, op->rop, lanes, cpu);
            const char *x = cpu ? "ckt_gx[tid]" : "ckt_gx";
            if (cpu) ckt_em_line(e, "for (int tid = 0; tid < %lld; ++tid) {", (long long)B);
            if (wide)
                ckt_em_line(e, "%sif (tid %% %lld == 0) ckt_red[%lld + tid / %lld] = %s;",
                            cpu ? "    " : "", (long long)L, (long long)(slot * nw), (long long)L,
                            x);
            else {
                ckt_em_from_f32(acc->dtype, x, out, sizeof out);
                ckt_em_line(e, "%s%s = %s;", cpu ? "    " : "", r, out);
            }
            if (cpu) ckt_em_line(e, "}");
            e->ind--;
            ckt_em_line(e, "}");
        }
    }
    if (!wide) return;
    ckt_em_barrier(e, "block_reduce: the waves' partials written");
    /* the group's waves' partials one a lane (lane l of each run of G / 32 lanes takes partial l,
     * so that every wave finds them all) and a butterfly over those lanes: one LDS read a thread
     * and a value, where every thread reading all G / 32 partials took G / 32 */
    int64_t per = G / L;
    const char *gx = cpu ? "ckt_gx[tid]" : "ckt_gx";
    slot = 0;
    for (int i = 0; i < n; i++) {
        const ckt_kop *op = ops[i];
        const ckt_ktensor *acc = ckt_kernel_tensor(e->k, op->r);
        for (int64_t v = 0; v < acc->nvalues; v++, slot++) {
            ckt_em_line(e, "{");
            e->ind++;
            if (cpu)
                ckt_em_line(e, "float ckt_gx[%lld], ckt_gt[%lld];", (long long)B, (long long)B);
            else
                ckt_em_line(e, "float ckt_gx;");
            char each[64] = "";
            if (cpu)
                snprintf(each, sizeof each, "for (int tid = 0; tid < %lld; ++tid) ", (long long)B);
            ckt_em_line(e, "%s%s = ckt_red[%lld + tid / %lld * %lld + tid %% %lld];", each, gx,
                        (long long)(slot * nw), (long long)G, (long long)per, (long long)per);
            butterfly(e, op->rop, per, cpu);
            ckt_em_from_f32(acc->dtype, gx, out, sizeof out);
            ckt_em_line(e, "%s%s = %s;", each, ckt_em_reg(e, acc, v, r, sizeof r), out);
            e->ind--;
            ckt_em_line(e, "}");
        }
    }
    ckt_em_barrier(e, "block_reduce: scratch free again");
}

/* The (maximum, sum of exp(x - maximum)) pairs `src_m`, `src_s` (expressions of tid) combined
 * over runs of `lanes` lanes: their maximum by a butterfly, each sum rescaled to it (one
 * exponential a lane; an empty pair (-inf, 0) adds 0), a butterfly of the sums. Leaves the
 * maximum in ckt_am and the sum in ckt_gx (C: arrays over the block's threads) inside the
 * scope the caller opened. */
static void lane_softmax(em *e, bool cpu, int64_t lanes, const char *src_m, const char *src_s)
{
    long long B = (long long)e->block;
    const char *gx = cpu ? "ckt_gx[tid]" : "ckt_gx", *wm = cpu ? "ckt_wm[tid]" : "ckt_wm",
               *ws = cpu ? "ckt_ws[tid]" : "ckt_ws", *am = cpu ? "ckt_am[tid]" : "ckt_am",
               *each = cpu ? "for (int tid = 0; tid < %lld; ++tid) {" : "{";
    if (cpu)
        ckt_em_line(e,
                    "float ckt_gx[%lld], ckt_gt[%lld], ckt_wm[%lld], ckt_ws[%lld], ckt_am[%lld];",
                    B, B, B, B, B);
    else
        ckt_em_line(e, "float ckt_gx, ckt_wm, ckt_ws, ckt_am;");
    ckt_em_line(e, each, B);
    ckt_em_line(e, "    %s = %s; %s = %s; %s = %s;", wm, src_m, ws, src_s, gx, wm);
    ckt_em_line(e, "}");
    butterfly(e, CKT_REDUCE_MAX, lanes, cpu);
    ckt_em_line(e, each, B);
    ckt_em_line(e, "    %s = %s; %s = %s == -CKT_INF ? 0.0f : %s * ckt_expf(%s - %s);", am, gx, gx,
                wm, ws, wm, am);
    ckt_em_line(e, "}");
    butterfly(e, CKT_REDUCE_SUM, lanes, cpu);
}

/* b:block_reduce(maxima, "softmax", {threads = G, sum = sums}): each thread's (maximum, sum)
 * pair becomes its group's: lane_softmax over the wave's lanes, then for groups above 32 lanes
 * the waves' pairs through the scratch (lane 0 of each writes, a barrier, lane l of each run of
 * G / 32 lanes reads pair l and lane_softmax combines them, a barrier frees the scratch). The same
 * steps on every target. */
static void group_reduce_softmax(em *e, const ckt_kop *op)
{
    const ckt_ktensor *mx = ckt_kernel_tensor(e->k, op->r), *sm = ckt_kernel_tensor(e->k, op->r2);
    int64_t G = op->group, B = e->block;
    if (!group_emittable(e, G)) return;
    const int64_t L = 32;
    bool cpu = e->dl->frame->thread_loops, wide = G > L;
    int64_t nw = B / L, per = G / L;
    char m[64], s[64], src_m[128], src_s[128];
    const char *each = cpu ? "for (int tid = 0; tid < %lld; ++tid) {" : "{",
               *gx = cpu ? "ckt_gx[tid]" : "ckt_gx", *am = cpu ? "ckt_am[tid]" : "ckt_am";
    ckt_em_thread_close(e);
    ckt_em_line(e,
                "/* block_reduce(%s, softmax, sum %s) over groups of %lld threads: the lanes' "
                "maximum, the sums rescaled to it%s */",
                mx->name, sm->name, (long long)G,
                wide ? "; then the waves' pairs through LDS scratch, the same way" : "");
    for (int64_t v = 0; v < mx->nvalues; v++) {
        ckt_em_reg(e, mx, v, m, sizeof m);
        ckt_em_reg(e, sm, v, s, sizeof s);
        ckt_em_line(e, "{");
        e->ind++;
        lane_softmax(e, cpu, wide ? L : G, m, s);
        ckt_em_line(e, each, (long long)B);
        if (wide)
            ckt_em_line(e,
                        "    if (tid %% %lld == 0) { ckt_red[%lld + tid / %lld] = %s; "
                        "ckt_red[%lld + tid / %lld] = %s; }",
                        (long long)L, (long long)(2 * v * nw), (long long)L, am,
                        (long long)((2 * v + 1) * nw), (long long)L, gx);
        else
            ckt_em_line(e, "    %s = %s; %s = %s;", m, am, s, gx);
        ckt_em_line(e, "}");
        e->ind--;
        ckt_em_line(e, "}");
    }
    if (!wide) return;
    ckt_em_barrier(e, "block_reduce: the waves' pairs written");
    for (int64_t v = 0; v < mx->nvalues; v++) {
        snprintf(src_m, sizeof src_m, "ckt_red[%lld + tid / %lld * %lld + tid %% %lld]",
                 (long long)(2 * v * nw), (long long)G, (long long)per, (long long)per);
        snprintf(src_s, sizeof src_s, "ckt_red[%lld + tid / %lld * %lld + tid %% %lld]",
                 (long long)((2 * v + 1) * nw), (long long)G, (long long)per, (long long)per);
        ckt_em_line(e, "{");
        e->ind++;
        lane_softmax(e, cpu, per, src_m, src_s);
        ckt_em_line(e, each, (long long)B);
        ckt_em_line(e, "    %s = %s; %s = %s;", ckt_em_reg(e, mx, v, m, sizeof m), am,
                    ckt_em_reg(e, sm, v, s, sizeof s), gx);
        ckt_em_line(e, "}");
        e->ind--;
        ckt_em_line(e, "}");
    }
    ckt_em_barrier(e, "block_reduce: scratch free again");
}

/* Ops i, i + 1, ...: a run of two or more group reductions sharing one exchange (the count of ops
 * emitted), else 0 */
int ckt_em_reduce_run(em *e, int i)
{
    int n = ckt_kernel_reduce_run(e->k, i);
    if (n < 2) return 0;
    const ckt_kop *ops[CKT_REDUCE_RUN_MAX];
    for (int j = 0; j < n; j++) ops[j] = ckt_kernel_op(e->k, i + j);
    group_reduce(e, ops, n);
    return n;
}

/* out[v] = src[u]: each value of the result reads the thread's own value on its line
 * (ckt_kernel_broadcast checked that every thread holds it at the same index) */
void ckt_em_broadcast(em *e, const ckt_kop *op)
{
    const ckt_ktensor *out = ckt_kernel_tensor(e->k, op->r),
                      *src = ckt_kernel_tensor(e->k, op->inputs[0]);
    char o[64], s[64];
    ckt_em_thread_open(e);
    if (op->vector_dim >= 0)
        ckt_em_line(e,
                    "/* %s = %s spread along dim %d over the distribution of %s's tile: a thread's "
                    "own values of its lines */",
                    out->name, src->name, op->vector_dim, out->name);
    else
        ckt_em_line(e,
                    "/* %s = %s's elements at (%lld, %lld) in the distribution of %s: a thread's "
                    "own values, relabelled */",
                    out->name, src->name, (long long)op->mma_rep[0], (long long)op->mma_rep[1],
                    out->name);
    for (int64_t v = 0; v < out->nvalues; v++)
        ckt_em_line(e, "%s = %s;", ckt_em_reg(e, out, v, o, sizeof o),
                    ckt_em_reg(e, src, ckt_kernel_broadcast_source(e->k, op, v), s, sizeof s));
}

void ckt_em_block_reduce(em *e, const ckt_kop *op)
{
    if (op->group && op->rop == CKT_REDUCE_SOFTMAX) {
        group_reduce_softmax(e, op);
        return;
    }
    if (op->group) {
        group_reduce(e, &op, 1);
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

/* HIP: an f32 register tensor that matrix instructions accumulate into, all of them with C
 * vectors of the same width that divides its values, is declared as an array of those vectors;
 * every other access reads or writes an element of one (ckt_em_reg) */
int64_t ckt_em_acc_vector_width(const em *e, int t)
{
    const ckt_ktensor *r = ckt_kernel_tensor(e->k, t);
    if (!e->dl->acc_vectors || r->dtype != CKT_F32) return 0;
    int64_t w = 0;
    for (int i = 0; i < ckt_kernel_nops(e->k); i++) {
        const ckt_kop *op = ckt_kernel_op(e->k, i);
        if (op->kind != CKT_OP_GEMM || op->r != t) continue;
        const ckt_mma *m = ckt_mma_at(op->mma);
        if (!m || (w && m->c_values != w)) return 0;
        w = m->c_values;
    }
    return w > 1 && r->nvalues % w == 0 ? w : 0;
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
    const ckt_ktensor *a = ckt_kernel_tensor(e->k, op->inputs[0]),
                      *b = ckt_kernel_tensor(e->k, op->inputs[1]),
                      *c = ckt_kernel_tensor(e->k, op->r);
    ckt_mma_site x = {.mma = m,
                      .a = a->name,
                      .b = b->name,
                      .c = c->name,
                      .a_pairs = ckt_em_paired(e, a),
                      .b_pairs = ckt_em_paired(e, b),
                      .c_vectors = ckt_em_acc_width(e, c) != 0,
                      .rep = {op->mma_rep[0], op->mma_rep[1], op->mma_rep[2]},
                      .block = e->block,
                      .line = op->line};
    ckt_emit_mma(e->s, e->ind, e->dl, &x);
}
