/* Loads and stores of a distribution's values (CKT_OP_LOAD, CKT_OP_STORE): coordinates and
 * offsets through the window and the layout (and swizzle), the widest legal vector, bounds masks,
 * CUDA's ldmatrix for matrix-instruction operands. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "emit_walk.h"

static const char *field(ckt_dtype t)
{
    switch (t) {
    case CKT_F32: return "f32";
    case CKT_F16:
    case CKT_BF16: return "u16";
    case CKT_I32: return "i32";
    case CKT_I8: return "i8";
    case CKT_U8: return "u8";
    default: return "b";
    }
}

/* The coordinate along `dim` that distribution d gives the thread `tid` (an expression). */
static ckt_expr_id thread_part_of(ckt_expr_pool *ex, const ckt_dist *d, int dim, ckt_expr_id tid)
{
    ckt_expr_id acc = ckt_expr_int(ex, 0);
    for (int i = 0; i < d->ndigits; i++) {
        if (!d->coef[i][dim]) continue;
        ckt_expr_id digit = ckt_expr_binary(ex, CKT_E_DIV, tid, ckt_expr_int(ex, d->digit_div[i]));
        /* threads >= d->threads are masked off, so the top digit needs no remainder */
        int64_t top = (d->threads - 1) / d->digit_div[i];
        if (top >= d->digit_mod[i])
            digit = ckt_expr_binary(ex, CKT_E_MOD, digit, ckt_expr_int(ex, d->digit_mod[i]));
        acc = ckt_expr_add(ex, acc, ckt_expr_mulc(ex, digit, d->coef[i][dim]));
    }
    return acc;
}

static ckt_expr_id thread_part(ckt_expr_pool *ex, const ckt_dist *d, int dim)
{
    return thread_part_of(ex, d, dim, ckt_expr_tid(ex));
}

/* The coordinate of dim `dim` of value v (plus j along the vector dim). */
static ckt_expr_id coord(em *e, const em_access *a, int dim, int64_t v)
{
    return ckt_expr_addc(e->ex, a->idx[dim], a->d->vcoord[v][dim]);
}

/* Element offset inside the tensor (LDS: before the swizzle) of a coordinate list. */
static ckt_expr_id offset_of(em *e, const em_access *a, const ckt_expr_id *c)
{
    ckt_expr_pool *ex = e->ex;
    ckt_expr_id off = ckt_expr_int(ex, 0);
    if (a->t->mem == CKT_MEM_GLOBAL) {
        for (int d = 0; d < a->rank; d++)
            off = ckt_expr_add(ex, off, ckt_expr_mul(ex, c[d], a->t->stride[d]));
        return off;
    }
    for (int d = 0; d < a->rank; d++) {
        ckt_layout m;
        ckt_error err;
        if (ckt_layout_mode(&a->t->layout, d, &m, &err)) return CKT_EXPR_NONE;
        int64_t shp[CKT_TUPLE_NODES], str[CKT_TUPLE_NODES];
        int n = ckt_tuple_flatten(&m.shape, shp, CKT_TUPLE_NODES);
        ckt_tuple_flatten(&m.stride, str, CKT_TUPLE_NODES);
        int64_t div = 1;
        for (int i = 0; i < n; i++) {
            ckt_expr_id digit = ckt_expr_binary(ex, CKT_E_DIV, c[d], ckt_expr_int(ex, div));
            if (i < n - 1) digit = ckt_expr_binary(ex, CKT_E_MOD, digit, ckt_expr_int(ex, shp[i]));
            off = ckt_expr_add(ex, off, ckt_expr_mulc(ex, digit, str[i]));
            div *= shp[i];
        }
    }
    return off;
}

/* The element offset from an LDS tensor's pointer of a layout offset: the swizzle, then the
 * stage of a stage view (stages are whole multiples of 128 bytes apart, after the swizzle). */
ckt_expr_id ckt_em_swizzled(em *e, const ckt_ktensor *t, ckt_expr_id off)
{
    if (t->stage_view) {
        ckt_ktensor plain = *t;
        plain.stage_view = false;
        return ckt_expr_add(e->ex, ckt_em_swizzled(e, &plain, off), t->stage_base);
    }
    if (!t->swizzled) return off;
    ckt_expr_pool *ex = e->ex;
    ckt_swizzle sw = t->sw;
    int64_t mask = (((int64_t)1 << sw.b) - 1) << (sw.m + (sw.s > 0 ? sw.s : 0));
    ckt_expr_id bits = ckt_expr_binary(ex, CKT_E_AND, off, ckt_expr_int(ex, mask));
    bits = ckt_expr_binary(ex, sw.s >= 0 ? CKT_E_SHR : CKT_E_SHL, bits,
                           ckt_expr_int(ex, sw.s >= 0 ? sw.s : -sw.s));
    return ckt_expr_binary(ex, CKT_E_XOR, off, bits);
}

ckt_expr_id ckt_em_group_offset(em *e, const em_access *a, int64_t v, int64_t j)
{
    ckt_expr_id c[CKT_K_MAX_RANK];
    for (int d = 0; d < a->rank; d++) c[d] = coord(e, a, d, v);
    if (j) c[a->vd] = ckt_expr_addc(e->ex, c[a->vd], j);
    return offset_of(e, a, c);
}

/* The predicate of a padded global access: every coordinate inside the shape, on both edges
 * (a window at a runtime origin may start below 0). */
ckt_expr_id ckt_em_in_bounds(em *e, const em_access *a, int64_t v, int64_t width)
{
    ckt_expr_pool *ex = e->ex;
    ckt_expr_id m = ckt_expr_int(ex, 1);
    if (a->t->mem != CKT_MEM_GLOBAL || !a->t->padded) return m;
    for (int d = 0; d < a->rank; d++) {
        ckt_expr_id c = coord(e, a, d, v);
        m = ckt_expr_binary(ex, CKT_E_LAND, m,
                            ckt_expr_binary(ex, CKT_E_LE, ckt_expr_int(ex, 0), c));
        m = ckt_expr_binary(ex, CKT_E_LAND, m, ckt_expr_binary(ex, CKT_E_LT, c, a->t->shape[d]));
    }
    if (a->t->limited) { /* the vector's elements inside [0, limit) */
        ckt_expr_id o = ckt_em_group_offset(e, a, v, 0);
        m = ckt_expr_binary(ex, CKT_E_LAND, m,
                            ckt_expr_binary(ex, CKT_E_LE, ckt_expr_int(ex, 0), o));
        m = ckt_expr_binary(ex, CKT_E_LAND, m,
                            ckt_expr_binary(ex, CKT_E_LE,
                                            ckt_expr_addc(ex, o, width < 1 ? 1 : width),
                                            a->t->limit));
    }
    return m;
}

/* The block-uniform predicate of an unmasked access: the whole window inside its tensor
 * (LDS: the static layout; global without pad: the runtime shape). The range analysis folds
 * it to 1 where it can prove it; else the access runs only when it holds, and CKT_FAULT tells
 * the runtime. Without it a window at a runtime origin far out of range reads and writes any
 * address (a sandboxed script crashed its host this way). */
static ckt_expr_id window_inside(em *e, const em_access *a)
{
    if (a->t->mem == CKT_MEM_GLOBAL && a->t->padded) return ckt_expr_int(e->ex, 1);
    return ckt_em_window_within(e, a);
}

/* The whole window inside the tensor's shape (padded or not). */
ckt_expr_id ckt_em_window_within(em *e, const em_access *a)
{
    ckt_expr_pool *ex = e->ex;
    ckt_expr_id m = ckt_expr_int(ex, 1);
    if (a->t->mem == CKT_MEM_GLOBAL && a->t->limited) {
        /* and its element offsets inside [0, limit): with strides >= 0 the lowest is the
         * origin's, the highest the far corner's (else: never unmasked) */
        ckt_expr_id lo = ckt_expr_int(ex, 0), hi = ckt_expr_int(ex, 0);
        for (int d = 0; d < a->rank; d++) {
            int64_t sl, sh;
            ckt_expr_range(ex, a->t->stride[d], &sl, &sh);
            if (sl < 0) return ckt_expr_int(ex, 0);
            lo = ckt_expr_add(ex, lo, ckt_expr_mul(ex, a->w->origin[d], a->t->stride[d]));
            hi = ckt_expr_add(ex, hi,
                              ckt_expr_mul(ex,
                                           ckt_expr_addc(ex, a->w->origin[d], a->w->lengths[d] - 1),
                                           a->t->stride[d]));
        }
        m = ckt_expr_binary(ex, CKT_E_LAND, ckt_expr_binary(ex, CKT_E_LE, ckt_expr_int(ex, 0), lo),
                            ckt_expr_binary(ex, CKT_E_LT, hi, a->t->limit));
    }
    for (int d = 0; d < a->rank; d++) {
        ckt_expr_id shape;
        if (a->t->mem == CKT_MEM_GLOBAL) {
            shape = a->t->shape[d];
        } else {
            ckt_layout mode;
            ckt_error err;
            if (ckt_layout_mode(&a->t->layout, d, &mode, &err)) return CKT_EXPR_NONE;
            shape = ckt_expr_int(ex, ckt_layout_size(&mode));
        }
        ckt_expr_id o = a->w->origin[d];
        m = ckt_expr_binary(ex, CKT_E_LAND, m,
                            ckt_expr_binary(ex, CKT_E_LE, ckt_expr_int(ex, 0), o));
        m = ckt_expr_binary(
            ex, CKT_E_LAND, m,
            ckt_expr_binary(ex, CKT_E_LE, ckt_expr_addc(ex, o, a->w->lengths[d]), shape));
    }
    return m;
}

/* Can the access move `s` elements per vector? NULL when yes, else why not. */
/* Does mode `vd` of an LDS tensor's static layout map every run of s coordinates starting at a
 * multiple of s to s consecutive offsets? Then a group starting at such a coordinate (checked by
 * the caller) is contiguous even where the symbolic offsets do not simplify (a hierarchical mode,
 * e.g. the 64-row atoms of a 128B-swizzled M-contiguous tile). */
static bool lds_runs_contiguous(const ckt_ktensor *t, int vd, int64_t s)
{
    ckt_layout m;
    ckt_error ignored;
    if (t->mem != CKT_MEM_LDS || ckt_layout_mode(&t->layout, vd, &m, &ignored)) return false;
    int64_t n = ckt_layout_size(&m);
    for (int64_t c = 0; c + s <= n; c += s) {
        int64_t o0, o;
        if (ckt_layout_eval(&m, c, &o0, &ignored)) return false;
        for (int64_t j = 1; j < s; j++)
            if (ckt_layout_eval(&m, c + j, &o, &ignored) || o != o0 + j) return false;
    }
    return n % s == 0;
}

const char *ckt_em_vector_blocker(em *e, em_access *a, int64_t s, char *why, size_t cap)
{
    const ckt_dist *d = a->d;
    int vd = a->vd;
    if (s * a->esz > 16) {
        snprintf(why, cap, "%lld x %lld bytes exceed a 16-byte access", (long long)s,
                 (long long)a->esz);
        return why;
    }
    if (s * a->esz < 4) {
        snprintf(why, cap, "%lld x %lld bytes is narrower than a 4-byte access", (long long)s,
                 (long long)a->esz);
        return why;
    }
    /* runs of s values along the vector dim, starting at multiples of s */
    bool taken[CKT_K_MAX_VALUES] = {false};
    for (int64_t v = 0; v < d->nvalues; v++) {
        if (taken[v]) continue;
        if (d->vcoord[v][vd] % s) {
            snprintf(why, cap,
                     "value %lld of the distribution starts at %lld along dim %d, not a multiple "
                     "of %lld",
                     (long long)v, (long long)d->vcoord[v][vd], vd, (long long)s);
            return why;
        }
        a->group[v] = v;
        a->order[v] = 0;
        taken[v] = true;
        for (int64_t j = 1; j < s; j++) {
            int64_t found = -1;
            for (int64_t u = 0; u < d->nvalues && found < 0; u++) {
                if (taken[u]) continue;
                bool same = true;
                for (int r = 0; r < a->rank; r++)
                    same = same && d->vcoord[u][r] == d->vcoord[v][r] + (r == vd ? j : 0);
                if (same) found = u;
            }
            if (found < 0) {
                snprintf(why, cap,
                         "the distribution gives no thread %lld consecutive elements along dim %d",
                         (long long)s, vd);
                return why;
            }
            taken[found] = true;
            a->group[found] = -1;
            a->order[found] = j;
        }
    }
    if (ckt_expr_divisor(e->ex, a->idx[vd]) % s) {
        snprintf(why, cap,
                 "the window origin plus the thread offset along dim %d is not known to be a "
                 "multiple of %lld",
                 vd, (long long)s);
        return why;
    }
    if (a->t->mem == CKT_MEM_GLOBAL) {
        const ckt_kparam *p = ckt_kernel_param(e->k, a->t->param);
        if (p->align < s * a->esz) {
            snprintf(why, cap, "pointer '%s' is only promised %lld-byte alignment", p->name,
                     (long long)p->align);
            return why;
        }
        if (a->t->padded) {
            int64_t lo, hi, slo, shi;
            ckt_expr_range(e->ex, a->idx[vd], &lo, &hi);
            ckt_expr_range(e->ex, a->t->shape[vd], &slo, &shi);
            if (!(hi != INT64_MAX && hi + d->lengths[vd] <= slo) &&
                ckt_expr_divisor(e->ex, a->t->shape[vd]) % s) {
                char *sh = ckt_em_estr(e, a->t->shape[vd], NULL);
                snprintf(why, cap,
                         "dim %d of '%s' is padded and its extent %s is not known to be a multiple "
                         "of %lld",
                         vd, a->t->name, sh ? sh : "?", (long long)s);
                free(sh);
                return why;
            }
        }
    } else if (a->t->swizzled && ((int64_t)1 << a->t->sw.m) < s) {
        snprintf(why, cap, "the swizzle Sw<%d,%d,%d> keeps only %lld contiguous elements",
                 a->t->sw.b, a->t->sw.m, a->t->sw.s, (long long)1 << a->t->sw.m);
        return why;
    }
    /* contiguous in memory and aligned: offsets of j = 0..s-1 differ by exactly j */
    for (int64_t v = 0; v < d->nvalues; v++) {
        if (a->group[v] != v) continue;
        ckt_expr_id o0 = ckt_em_group_offset(e, a, v, 0);
        int64_t tensor_div = a->t->mem == CKT_MEM_LDS ? (a->t->lds_offset / a->esz) : 0;
        if (ckt_gcd(ckt_expr_divisor(e->ex, o0), tensor_div) % s) {
            char *o = ckt_em_estr(e, o0, NULL);
            snprintf(why, cap,
                     "the offset %s is not known to be a multiple of %lld (a runtime stride: "
                     "specialize it or promise multiple_of)",
                     o ? o : "?", (long long)s);
            free(o);
            return why;
        }
        for (int64_t j = 1; j < s && !lds_runs_contiguous(a->t, vd, s); j++) {
            ckt_expr_id diff =
                ckt_expr_binary(e->ex, CKT_E_SUB, ckt_em_group_offset(e, a, v, j), o0);
            int64_t c;
            if (!ckt_expr_is_const(e->ex, diff, &c) || c != j) {
                snprintf(why, cap,
                         "elements along dim %d are not contiguous in '%s' (stride is not 1)", vd,
                         a->t->name);
                return why;
            }
        }
    }
    return NULL;
}

static ckt_status plan(em *e, em_access *a, const ckt_kop *op, int64_t *spv, char *note, size_t cap)
{
    char why[256];
    int64_t maxv = 16 / a->esz;
    note[0] = 0;
    if (op->spv > 0) {
        if (op->spv > 1 && ckt_em_vector_blocker(e, a, op->spv, why, sizeof why))
            return ckt_fail(e->err, CKT_EINVAL, "%s: scalar_per_vector %lld is impossible: %s",
                            op->kind == CKT_OP_LOAD ? "load" : "store", (long long)op->spv, why);
        *spv = op->spv;
        if (op->spv == 1)
            for (int64_t v = 0; v < a->d->nvalues; v++) {
                a->group[v] = v;
                a->order[v] = 0;
            }
        return CKT_OK;
    }
    for (int64_t s = maxv; s > 1; s /= 2) {
        if (!ckt_em_vector_blocker(e, a, s, why, sizeof why)) {
            *spv = s;
            return CKT_OK;
        }
        if (s == maxv) snprintf(note, cap, "%lld-wide vectors impossible: %s", (long long)s, why);
    }
    for (int64_t v = 0; v < a->d->nvalues; v++) {
        a->group[v] = v;
        a->order[v] = 0;
    }
    *spv = 1;
    return CKT_OK;
}

void ckt_em_describe_tensor(em *e, const ckt_ktensor *t, char *buf, size_t cap)
{
    if (t->mem == CKT_MEM_LDS) {
        char l[160];
        ckt_layout_to_string(&t->layout, l, sizeof l);
        int n = t->swizzled ? snprintf(buf, cap, "LDS %s %s o Sw<%d,%d,%d>", t->name, l, t->sw.b,
                                       t->sw.m, t->sw.s)
                            : snprintf(buf, cap, "LDS %s %s", t->name, l);
        if (t->stages > 1 && n >= 0 && (size_t)n < cap) {
            char *x = t->stage_view ? ckt_em_estr(e, t->stage_base, NULL) : NULL;
            snprintf(buf + n, cap - (size_t)n,
                     t->stage_view ? ", a stage of %lld at element %s" : ", %lld stages",
                     (long long)t->stages, x ? x : "?");
            free(x);
        }
        return;
    }
    size_t n = (size_t)snprintf(buf, cap, "global %s (", t->name);
    for (int d = 0; d < t->rank && n < cap; d++) {
        char *x = ckt_em_estr(e, t->shape[d], NULL);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", d ? "," : "", x ? x : "?");
        free(x);
    }
    if (n < cap) n += (size_t)snprintf(buf + n, cap - n, "):(");
    for (int d = 0; d < t->rank && n < cap; d++) {
        char *x = ckt_em_estr(e, t->stride[d], NULL);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", d ? "," : "", x ? x : "?");
        free(x);
    }
    if (n < cap) snprintf(buf + n, cap - n, ")%s", t->padded ? " padded" : "");
}

/* Opens "if (!inside) { CKT_FAULT } else" before an access whose window the range analysis
 * cannot prove inside its tensor (the statement that follows is the access). false: out of
 * memory. A block-uniform compare per access where it stays; on GPUs CKT_FAULT only skips. */
static bool window_guard(em *e, const em_access *a, int w)
{
    ckt_expr_id inside = window_inside(e, a);
    int64_t always;
    if (ckt_expr_is_const(e->ex, inside, &always) && always) return true;
    char *gs = ckt_em_estr(e, inside, NULL);
    if (!gs) {
        e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
        return false;
    }
    ckt_em_line(e, "if (!(%s)) {", gs);
    ckt_em_line(e, "    CKT_FAULT(%d); /* window %d is not inside '%s' */", w + 1, w, a->t->name);
    ckt_em_line(e, "} else");
    free(gs);
    return true;
}

/* The two lines of a split access (split_offsets): `off`, the thread's swizzled element offset
 * in tensor a->t, and `base`, the tensor's (stage's) 32-bit shared address. false: out of memory.
 */
bool ckt_em_thread_address(em *e, const em_access *a, ckt_expr_id u0, const char *off,
                           const char *base)
{
    const ckt_ktensor *t = a->t;
    char *us = ckt_em_estr(e, u0, NULL),
         *bs = t->stage_view ? ckt_em_estr(e, t->stage_base, NULL) : NULL;
    if (!us || (t->stage_view && !bs)) {
        free(us);
        free(bs);
        e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
        return false;
    }
    ckt_em_line(e, "const ckt_u32 %s = (ckt_u32)(%s); /* this thread's swizzled offset in %s */",
                off, us, t->name);
    ckt_em_line(e,
                "const ckt_u32 %s = (ckt_u32)__cvta_generic_to_shared(%s) + %lldu * (ckt_u32)(%s);",
                base, t->name, (long long)a->esz, bs ? bs : "0");
    free(us);
    free(bs);
    return true;
}

/* One ldmatrix (x4 or x2, `trs` ".trans" or "") from the shared address `addr` + `imm` bytes into
 * the 16-bit register values first.. of the access's register tensor. */
static void ldmatrix_load(em *e, const em_access *a, int nregs, const char *trs, const char *addr,
                          long long imm, int64_t first)
{
    ckt_em_line(e, "ckt_u32 q[4];");
    if (nregs == 4)
        ckt_em_line(
            e,
            "asm volatile(\"ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%%0,%%1,%%2,%%3}, "
            "[%%4+%lld];\" : \"=r\"(q[0]), \"=r\"(q[1]), \"=r\"(q[2]), \"=r\"(q[3]) : \"r\"(%s));",
            trs, imm, addr);
    else
        ckt_em_line(
            e,
            "asm volatile(\"ldmatrix.sync.aligned.m8n8.x2%s.shared.b16 {%%0,%%1}, [%%2+%lld];\" : "
            "\"=r\"(q[0]), \"=r\"(q[1]) : \"r\"(%s));",
            trs, imm, addr);
    for (int j = 0; j < nregs; j++) {
        char r0[64], r1[64];
        if (ckt_em_paired(e, a->r)) /* (first is even: a load fills whole words) */
            ckt_em_line(e, "%s[%lld] = q[%d];", a->r->name, (long long)(first / 2 + j), j);
        else
            ckt_em_line(e, "%s = (ckt_u16)q[%d]; %s = (ckt_u16)(q[%d] >> 16);",
                        ckt_em_reg(e, a->r, first + 2 * j, r0, sizeof r0), j,
                        ckt_em_reg(e, a->r, first + 2 * j + 1, r1, sizeof r1), j);
    }
}

/* A tensor's swizzle applied to a number (what ckt_em_swizzled() emits, without the stage). */
static int64_t swizzle_num(const ckt_ktensor *t, int64_t x)
{
    return t->swizzled ? ckt_swizzle_apply(t->sw, x) : x;
}

/* The LDS offsets of an access's vectors (ldmatrix: its matrices; a copy: its 16-byte vectors,
 * first values `vals`) as one per-thread register and constants. A
 * thread's offset of matrix r is u_r = u_0 + c_r; where c_r has no bit that u_0 ever has (every
 * thread checked), u_r = u_0 ^ c_r, and the swizzle, linear over XOR, gives f(u_r) = f(u_0) ^
 * f(c_r); where f(u_0) and f(c_r) share no bit either, that is f(u_0) + f(c_r), an immediate in
 * the instruction. f(u_0) depends on the thread only, so the compiler computes it once, outside
 * the K loop. Needs constant window origins (blockwise_gemm's unrolled K steps); false when any
 * condition fails (the caller then spells each address out). */
bool ckt_em_split_offsets(em *e, const em_access *a, int nrep, const int64_t *vals, ckt_expr_id *u0,
                          int64_t *fc, bool *add)
{
    ckt_expr_pool *ex = e->ex;
    em_access b = *a;
    for (int d = 0; d < a->rank; d++) {
        int64_t lo, hi; /* a window that never moves: its origin's range is one value */
        ckt_expr_range(ex, a->w->origin[d], &lo, &hi);
        if (lo != hi) return false;
        b.idx[d] = ckt_expr_addc(ex, a->thr[d], lo);
    }
    ckt_expr_id u[CKT_K_MAX_VALUES];
    if (nrep > CKT_K_MAX_VALUES) return false;
    for (int r = 0; r < nrep; r++) u[r] = ckt_em_group_offset(e, &b, vals[r], 0);
    if (ckt_expr_pool_status(ex, NULL)) return false;
    int64_t c[CKT_K_MAX_VALUES];
    *add = true;
    for (int64_t tid = 0; tid < e->block; tid++) {
        ckt_expr_env env = {.tid = tid};
        int64_t v0, vr;
        if (ckt_expr_eval_int(ex, u[0], &env, &v0, NULL)) return false;
        for (int r = 0; r < nrep; r++) {
            if (ckt_expr_eval_int(ex, u[r], &env, &vr, NULL)) return false;
            if (tid == 0) c[r] = vr - v0;
            if (vr - v0 != c[r] || (v0 & c[r]) || c[r] < 0) return false;
            if (swizzle_num(a->t, v0) & swizzle_num(a->t, c[r])) *add = false;
        }
    }
    *u0 = ckt_em_swizzled(e, &(ckt_ktensor){.swizzled = a->t->swizzled, .sw = a->t->sw}, u[0]);
    for (int r = 0; r < nrep; r++) fc[r] = swizzle_num(a->t, c[r]);
    return true;
}

/* ldmatrix's addresses when the window's origin is a nonzero constant (a K step past the first of
 * an unrolled blockwise_gemm): one thread offset z for every K step (the origin left out, so the
 * compiler keeps one register, not one per step) and per matrix r the constant c_r = u_r - z.
 * Under a swizzle, f(z + c_r) = f(z) ^ f(c_r) (no shared bits, f linear over XOR): the bits of
 * f(c_r) that f(z) may have (lo) are XORed into the byte address, the others (hi) added as the
 * immediate. The XOR on the address (base + esz f(z)) is exact when the base is aligned past the
 * XORed bits: the tensor's LDS offset and stage stride are checked, and every thread's every
 * address is compared with the swizzle of its offset. false: the caller takes the other ways. */
static bool split_folded(em *e, const em_access *a, int nrep, const int64_t *vals, ckt_expr_id *z0,
                         int64_t *lo, int64_t *hi)
{
    ckt_expr_pool *ex = e->ex;
    em_access b = *a, o = *a;
    bool moved = false;
    for (int d = 0; d < 2; d++) {
        int64_t l, h;
        ckt_expr_range(ex, a->w->origin[d], &l, &h);
        if (l != h) return false;
        moved |= l != 0;
        b.idx[d] = a->thr[d];
        o.idx[d] = ckt_expr_addc(ex, a->thr[d], l);
    }
    if (!moved || nrep > 16 || !a->t->swizzled) return false;
    ckt_expr_id z = ckt_em_group_offset(e, &b, vals[0], 0), u[16];
    for (int r = 0; r < nrep; r++) u[r] = ckt_em_group_offset(e, &o, vals[r], 0);
    if (ckt_expr_pool_status(ex, NULL)) return false;
    int64_t c[16], zbits = 0;
    for (int64_t tid = 0; tid < e->block; tid++) {
        ckt_expr_env env = {.tid = tid};
        int64_t zt, ur;
        if (ckt_expr_eval_int(ex, z, &env, &zt, NULL) || zt < 0) return false;
        zbits |= swizzle_num(a->t, zt);
        for (int r = 0; r < nrep; r++) {
            if (ckt_expr_eval_int(ex, u[r], &env, &ur, NULL)) return false;
            if (tid == 0) c[r] = ur - zt;
            if (ur - zt != c[r] || c[r] < 0 || (zt & c[r])) return false;
        }
    }
    int64_t top = 0;
    for (int r = 0; r < nrep; r++) {
        int64_t f = swizzle_num(a->t, c[r]);
        lo[r] = f & zbits;
        hi[r] = f & ~zbits;
        if (lo[r] * a->esz > top) top = lo[r] * a->esz;
    }
    int64_t P = 1;
    while (P <= top) P *= 2;
    if (P > 1024 || a->t->lds_offset % P ||
        ((a->t->stages > 1 || a->t->stage_view) && (a->t->stage_elems * a->esz) % P))
        return false;
    for (int64_t tid = 0; tid < e->block; tid++) { /* the addresses, as the hardware forms them */
        ckt_expr_env env = {.tid = tid};
        int64_t zt, ur;
        if (ckt_expr_eval_int(ex, z, &env, &zt, NULL)) return false;
        for (int r = 0; r < nrep; r++) {
            if (ckt_expr_eval_int(ex, u[r], &env, &ur, NULL)) return false;
            if ((((swizzle_num(a->t, zt) * a->esz) ^ (lo[r] * a->esz)) + hi[r] * a->esz) !=
                swizzle_num(a->t, ur) * a->esz)
                return false;
        }
    }
    *z0 = ckt_em_swizzled(e, &(ckt_ktensor){.swizzled = a->t->swizzled, .sw = a->t->sw}, z);
    return !ckt_expr_pool_status(ex, NULL);
}

/* CUDA: whether the fragment load `op` can be ldmatrix (x4 for A, x2 for B): every 8-element K
 * row the lanes point at is 16 contiguous, aligned bytes of LDS. Fills `a` (its coordinates as
 * variables of the pool); false with the reason in `why` (or e->st set). */
static bool ldmatrix_plan(em *e, const ckt_kop *op, em_access *a, char *why, size_t cap)
{
    memset(a, 0, sizeof *a);
    a->w = ckt_kernel_window(e->k, op->w);
    a->t = ckt_kernel_tensor(e->k, a->w->tensor);
    a->r = ckt_kernel_tensor(e->k, op->r);
    a->d = ckt_kernel_dist(e->k, (int)op->mma_rep[1]);
    a->rank = 2;
    bool tr = op->mma_rep[0] == 'a' || op->mma_rep[0] == 'b'; /* ldmatrix.trans: rows along M / N */
    a->vd = tr ? 0 : 1;
    a->esz = (int64_t)ckt_dtype_size(a->t->dtype);
    const ckt_mma *m = ckt_mma_at(op->mma);
    if (!m || !a->d || a->t->mem != CKT_MEM_LDS || a->esz != 2) {
        snprintf(why, cap, "not a 16-bit LDS fragment load");
        return false;
    }
    ckt_expr_pool *ex = e->ex;
    for (int d = 0; d < 2; d++) {
        a->thr[d] = thread_part(ex, a->d, d);
        ckt_expr_id full = ckt_expr_add(ex, a->w->origin[d], a->thr[d]);
        int64_t lo, hi;
        ckt_expr_range(ex, full, &lo, &hi);
        char name[24];
        snprintf(name, sizeof name, "i%d", d);
        a->idx[d] = ckt_expr_var(ex, name, lo, hi, ckt_expr_divisor(ex, full));
    }
    char blk[200];
    if (ckt_expr_pool_status(ex, e->err)) {
        e->st = e->err->status;
        return false;
    }
    if (ckt_em_vector_blocker(e, a, 8, blk, sizeof blk)) {
        snprintf(why, cap, "no ldmatrix: %s", blk);
        return false;
    }
    return true;
}

/* The register tensors whose 16-bit values the CUDA dialect holds in pairs, one 32-bit word two
 * values (the lower index in the low half): those that only ldmatrix writes and only mma.sync reads
 * as its A or B. ldmatrix's words then go into the array and out to the instruction as they are,
 * where one value a register cost NVVM a split and a merge of every word (7-10% of the sm_90
 * GEMM's and attention's compile). Any other access of such a tensor is an internal error
 * (ckt_em_reg), so the analysis errs towards "not paired". */
static bool window_of(const ckt_kernel *k, int w, int t)
{
    return w >= 0 && w < ckt_kernel_nwindows(k) && ckt_kernel_window(k, w)->tensor == t;
}

/* an input: a tensor or a window, by the op's kind (both read here) */
static bool refers(const ckt_kernel *k, int idx, int t) { return idx == t || window_of(k, idx, t); }

bool ckt_em_pairs_ok(em *e, int t)
{
    const ckt_kernel *k = e->k;
    const ckt_ktensor *r = ckt_kernel_tensor(k, t);
    if (!e->dl->ldmatrix || ckt_dtype_size(r->dtype) != 2 || r->nvalues % 2) return false;
    bool used = false;
    for (int i = 0; i < ckt_kernel_nops(k); i++) {
        const ckt_kop *op = ckt_kernel_op(k, i);
        if (op->kind == CKT_OP_GEMM && (op->inputs[0] == t || op->inputs[1] == t) && op->r != t) {
            used = true;
            continue;
        }
        if (op->kind == CKT_OP_LOAD && op->r == t && op->mma_rep[2] == 1 &&
            !window_of(k, op->w, t)) {
            em_access a;
            char why[300];
            if (ldmatrix_plan(e, op, &a, why, sizeof why)) continue;
            return false;
        }
        bool ref = op->r == t || op->r2 == t || window_of(k, op->w, t);
        for (int j = 0; j < op->ninputs && j < CKT_K_MAX_INPUTS && !ref; j++)
            ref = refers(k, op->inputs[j], t);
        if (ref) return false;
    }
    return used;
}

static bool emit_ldmatrix(em *e, const ckt_kop *op, char *why, size_t cap)
{
    em_access a;
    if (!ldmatrix_plan(e, op, &a, why, cap)) return false;
    ckt_expr_pool *ex = e->ex;
    const ckt_mma *m = ckt_mma_at(op->mma);
    bool tr = op->mma_rep[0] == 'a' || op->mma_rep[0] == 'b';
    bool isa = op->mma_rep[0] == 'A' || op->mma_rep[0] == 'a';
    const char *trs = tr ? ".trans" : "";
    /* x4 or x2: the registers one load fills (B by x4 covers two N tiles) */
    int64_t nrep0 = (a.d->nvalues + 7) / 8;
    int nregs = a.r->nvalues / nrep0 / 2 == 4 ? 4 : 2;
    char desc[400];
    ckt_em_describe_tensor(e, a.t, desc, sizeof desc);
    ckt_em_thread_open(e);
    ckt_em_line(e, "/* line %d: ldmatrix.x%d%s: %c fragments of %s from %s (%s) */", op->line,
                nregs, trs, isa ? 'A' : 'B', m->isa, desc, a.d->desc);
    int64_t per = 2 * nregs; /* values a load fills */
    if (!window_guard(e, &a, op->w)) return false;
    ckt_em_line(e, "{");
    e->ind++;
    int nrep = (int)nrep0;
    ckt_expr_id u0;
    int64_t fc[16], vals[16];
    bool add;
    for (int r = 0; r < nrep && r < 16; r++) vals[r] = (int64_t)r * 8;
    int64_t lo[16], hi[16];
    if (nrep <= 16 && split_folded(e, &a, nrep, vals, &u0, lo, hi)) {
        ckt_em_line(e, "/* one offset per thread for every K step (the step's columns XORed into "
                       "the address, an immediate per matrix) */");
        if (!ckt_em_thread_address(e, &a, u0, "ckt_lt", "ckt_la")) return false;
        ckt_em_line(e, "const ckt_u32 ckt_lb = ckt_la + %lldu * ckt_lt;", (long long)a.esz);
        for (int rep = 0; rep < nrep; rep++) {
            ckt_em_line(e, "{");
            e->ind++;
            char at[96];
            snprintf(at, sizeof at, lo[rep] ? "(ckt_lb ^ %lldu)" : "ckt_lb",
                     (long long)(lo[rep] * a.esz));
            ldmatrix_load(e, &a, nregs, trs, at, (long long)(hi[rep] * a.esz), rep * per);
            e->ind--;
            ckt_em_line(e, "}");
        }
        e->ind--;
        ckt_em_line(e, "}");
        return true;
    }
    if (nrep <= 16 && ckt_em_split_offsets(e, &a, nrep, vals, &u0, fc, &add)) {
        ckt_em_line(
            e, "/* one offset per thread (hoisted out of loops by the compiler), a constant per "
               "matrix */");
        if (!ckt_em_thread_address(e, &a, u0, "ckt_lt", "ckt_la")) return false;
        if (add)
            ckt_em_line(e, "const ckt_u32 ckt_lb = ckt_la + %lldu * ckt_lt;", (long long)a.esz);
        for (int rep = 0; rep < nrep; rep++) {
            ckt_em_line(e, "{");
            e->ind++;
            char at[96];
            if (add)
                snprintf(at, sizeof at, "ckt_lb");
            else
                snprintf(at, sizeof at, "ckt_la + %lldu * (ckt_lt ^ %lldu)", (long long)a.esz,
                         (long long)fc[rep]);
            ldmatrix_load(e, &a, nregs, trs, at, add ? (long long)(fc[rep] * a.esz) : 0, rep * per);
            e->ind--;
            ckt_em_line(e, "}");
        }
        e->ind--;
        ckt_em_line(e, "}");
        return true;
    }
    for (int d = 0; d < 2; d++) {
        char *x = ckt_em_estr(e, ckt_expr_add(ex, a.w->origin[d], a.thr[d]), NULL);
        ckt_em_line(e, "const ckt_i64 i%d = %s;", d, x ? x : "0");
        free(x);
    }
    for (int64_t rep = 0; rep * 8 < a.d->nvalues; rep++) {
        ckt_expr_id off = ckt_em_swizzled(e, a.t, ckt_em_group_offset(e, &a, rep * 8, 0));
        char *os = ckt_em_estr(e, off, NULL);
        if (!os) {
            e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
            return false;
        }
        ckt_em_line(e, "{");
        e->ind++;
        ckt_em_line(e, "ckt_u32 sa;");
        ckt_em_line(
            e,
            "asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %%1; cvt.u32.u64 %%0, t; }\" : \"=r\"(sa) "
            ": \"l\"(%s + (%s)));",
            a.t->name, os);
        ldmatrix_load(e, &a, nregs, trs, "sa", 0, rep * per);
        e->ind--;
        ckt_em_line(e, "}");
        free(os);
    }
    e->ind--;
    ckt_em_line(e, "}");
    return true;
}

/* A load's or store's tensors, distribution and index variables (false: e->st set). */
static bool access_setup(em *e, const ckt_kop *op, em_access *a)
{
    memset(a, 0, sizeof *a);
    a->r = ckt_kernel_tensor(e->k, op->r);
    /* a store by value index names its own distribution */
    if (ckt_em_access_init(e, a, op->w, op->dist >= 0 ? op->dist : a->r->dist, op->vector_dim,
                           "i")) {
        e->st = e->err->status;
        return false;
    }
    return true;
}

/* ---- stmatrix: 16-bit values stored to LDS as 8x8 matrices (CUDA, sm_90 and later) */

enum { STM_MAX_GROUPS = CKT_K_MAX_VALUES / 8 };

/* A store by stmatrix.x4: each thread's values 8q..8q+7 are the rows' pairs of four 8x8 matrices
 * (pair j of matrix j); lane l gives the address of row l%8 of matrix l/8, which is
 * `row` (its swizzled element offset for q = 0) added to or XORed with k[q]. */
typedef struct stm_plan {
    ckt_expr_id row;
    int64_t k[STM_MAX_GROUPS];
    bool xor_k[STM_MAX_GROUPS];
    int ngroups;
} stm_plan;

/* Whether the enclosing branches keep whole warps together (stmatrix is a warp's instruction) */
static bool warps_whole(const em *e)
{
    if (ckt_em_in_producer(e)) return false;
    for (int i = 0; i < e->depth; i++)
        if (e->scope[i] == SCOPE_DIF && !ckt_expr_group_uniform(e->ex, e->cond[i], 32))
            return false;
    return true;
}

/* The swizzled element offsets off[t * nvalues + v] of every thread's every value, computed from
 * the layout's modes (not the emitted expressions, which the plan checks against these). b: the
 * access with its index variables replaced by the constant origin plus the thread part. NULL
 * (e->st set on a failed allocation) when the origin is not constant or a value lies outside the
 * tile. */
static int64_t *value_offsets(em *e, const em_access *a, em_access *b)
{
    ckt_expr_pool *ex = e->ex;
    const ckt_dist *d = a->d;
    int64_t nv = d->nvalues, nt = d->threads, origin[CKT_K_MAX_RANK], *mode[CKT_K_MAX_RANK] = {0},
            size[CKT_K_MAX_RANK];
    *b = *a;
    for (int k = 0; k < a->rank; k++) {
        int64_t hi;
        ckt_expr_range(ex, a->w->origin[k], &origin[k], &hi);
        if (origin[k] != hi) return NULL;
        b->idx[k] = ckt_expr_addc(ex, a->thr[k], origin[k]);
    }
    int64_t *off = malloc(sizeof *off * (size_t)(nt * nv));
    bool ok = off != NULL;
    for (int k = 0; ok && k < a->rank; k++) { /* each mode's offsets, a table */
        ckt_layout m;
        ckt_error ignored;
        ok = !ckt_layout_mode(&a->t->layout, k, &m, &ignored);
        size[k] = ok ? ckt_layout_size(&m) : 0;
        ok = ok && size[k] > 0 && size[k] <= (1 << 20) &&
             (mode[k] = malloc(sizeof **mode * (size_t)size[k]));
        for (int64_t x = 0; ok && x < size[k]; x++)
            ok = !ckt_layout_eval(&m, x, &mode[k][x], &ignored);
    }
    for (int64_t t = 0; ok && t < nt; t++)
        for (int64_t v = 0; ok && v < nv; v++) {
            int64_t o = 0, c[CKT_K_MAX_RANK];
            ckt_dist_coord(d, t, v, c);
            for (int k = 0; ok && k < a->rank; k++) {
                int64_t x = origin[k] + c[k];
                ok = x >= 0 && x < size[k];
                if (ok) o += mode[k][x];
            }
            off[t * nv + v] = swizzle_num(a->t, o);
        }
    for (int k = 0; k < a->rank; k++) free(mode[k]);
    if (!ok) {
        if (!off) e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
        free(off);
        return NULL;
    }
    return off;
}

/* The values' layout is stmatrix's: the pair (8q+2j, 8q+2j+1) of lane l is row l/4, columns
 * 2(l%4) and 2(l%4)+1 of a matrix whose rows are 16 aligned, contiguous bytes. */
static bool stm_fragments(const int64_t *off, int64_t nt, int64_t nv)
{
    for (int64_t t = 0; t < nt; t++) {
        int64_t l = t % 32, src = t - l + 4 * (l / 4);
        for (int64_t v = 0; v < nv; v += 2) {
            int64_t x = off[t * nv + v], row = off[src * nv + v];
            if (off[t * nv + v + 1] != x + 1 || row % 8 || x != row + 2 * (l % 4)) return false;
        }
    }
    return true;
}

/* The offset lane t gives for group q: row t%8 of matrix (t%32)/8, held by lane 4(t%8)'s pair. */
static int64_t stm_row(const int64_t *off, int64_t nv, int64_t t, int q)
{
    int64_t l = t % 32;
    return off[(t - l + 4 * (l % 8)) * nv + 8 * q + 2 * (l / 8)];
}

/* The row offset of group 0 as an expression: the coordinates of value 2(l/8) of thread
 * 32(t/32) + 4(t%8), the matrix's value chosen by the lane's bits (the four matrices' first values
 * must lie on a parallelogram: matrix 3 = matrix 1 + matrix 2 - matrix 0). */
static ckt_expr_id stm_row_expr(em *e, const em_access *a)
{
    ckt_expr_pool *ex = e->ex;
    const ckt_dist *d = a->d;
    ckt_expr_id tid = ckt_expr_tid(ex);
    ckt_expr_id lane8 = ckt_expr_binary(ex, CKT_E_MOD, tid, ckt_expr_int(ex, 8));
    ckt_expr_id src = ckt_expr_add(
        ex, ckt_expr_mulc(ex, ckt_expr_binary(ex, CKT_E_DIV, tid, ckt_expr_int(ex, 32)), 32),
        ckt_expr_mulc(ex, lane8, 4));
    ckt_expr_id m =
        ckt_expr_binary(ex, CKT_E_MOD, ckt_expr_binary(ex, CKT_E_DIV, tid, ckt_expr_int(ex, 8)),
                        ckt_expr_int(ex, 4));
    ckt_expr_id m1 = ckt_expr_binary(ex, CKT_E_MOD, m, ckt_expr_int(ex, 2));
    ckt_expr_id m2 = ckt_expr_binary(ex, CKT_E_DIV, m, ckt_expr_int(ex, 2));
    ckt_expr_id c[CKT_K_MAX_RANK];
    for (int dim = 0; dim < a->rank; dim++) {
        int64_t v0 = d->vcoord[0][dim], d1 = d->vcoord[2][dim] - v0, d2 = d->vcoord[4][dim] - v0;
        if (d->vcoord[6][dim] - v0 != d1 + d2) return CKT_EXPR_NONE;
        int64_t lo, hi;
        ckt_expr_range(ex, a->w->origin[dim], &lo, &hi);
        ckt_expr_id x = ckt_expr_addc(ex, thread_part_of(ex, d, dim, src), lo + v0);
        x = ckt_expr_add(ex, x, ckt_expr_mulc(ex, m1, d1));
        c[dim] = ckt_expr_add(ex, x, ckt_expr_mulc(ex, m2, d2));
    }
    return ckt_em_swizzled(e, a->t, offset_of(e, a, c));
}

/* CUDA on sm_90+: whether the store `op` can be stmatrix.x4 (see stm_plan); every condition is
 * checked on every thread's every value. false with the reason in `why` (or e->st set). */
static bool stmatrix_plan(em *e, const ckt_kop *op, em_access *a, stm_plan *p, char *why,
                          size_t cap)
{
    if (!access_setup(e, op, a)) return false;
    const ckt_dist *d = a->d;
    int64_t nv = d->nvalues, nt = d->threads;
    if (a->t->stage_view || a->t->stages > 1 || a->t->lds_offset % 16 || nv % 8 || nt % 32 ||
        nv / 8 > STM_MAX_GROUPS || op->spv > 0)
        return false;
    em_access b;
    int64_t *off = value_offsets(e, a, &b);
    if (!off) return false;
    /* (a reason is given only for what looks like fragments: runs of two values) */
    if (off[1] != off[0] + 1 || off[2] == off[1] + 1) {
        free(off);
        return false;
    }
    if (!warps_whole(e)) {
        free(off);
        snprintf(why, cap, "no stmatrix: a branch may split a warp");
        return false;
    }
    bool ok = stm_fragments(off, nt, nv);
    p->row = ok ? stm_row_expr(e, &b) : CKT_EXPR_NONE;
    ok = ok && p->row != CKT_EXPR_NONE && !ckt_expr_pool_status(e->ex, NULL);
    p->ngroups = (int)(nv / 8);
    for (int q = 0; ok && q < p->ngroups; q++) {
        int64_t r0 = stm_row(off, nv, 0, q) - stm_row(off, nv, 0, 0);
        int64_t x0 = stm_row(off, nv, 0, q) ^ stm_row(off, nv, 0, 0);
        bool add = true, xr = true;
        for (int64_t t = 0; t < nt && (add || xr); t++) {
            int64_t z = stm_row(off, nv, t, 0), r = stm_row(off, nv, t, q), g;
            if (q == 0 &&
                (ckt_expr_eval_int(e->ex, p->row, &(ckt_expr_env){.tid = t}, &g, NULL) || g != z))
                add = xr = false;
            add = add && r - z == r0;
            xr = xr && (r ^ z) == x0;
        }
        ok = add || xr;
        p->xor_k[q] = !add;
        p->k[q] = add ? r0 : x0;
    }
    free(off);
    if (!ok) snprintf(why, cap, "no stmatrix: the values are not 8x8 matrices of rows in LDS");
    return ok;
}

/* A pair of values as one word of 16-bit values (the first in the low half). */
static void pack_pair(em *e, const em_access *a, int64_t v, char *out, size_t cap)
{
    char r0[64], r1[64];
    ckt_em_reg(e, a->r, v, r0, sizeof r0);
    ckt_em_reg(e, a->r, v + 1, r1, sizeof r1);
    if (a->r->dtype == CKT_F32 && (a->t->dtype == CKT_F16 || a->t->dtype == CKT_BF16)) {
        snprintf(out, cap, "ckt_%sx2(%s, %s)", a->t->dtype == CKT_F16 ? "f16" : "bf16", r0, r1);
        return;
    }
    char c0[300], c1[300];
    ckt_em_convert(a->t->dtype, a->r->dtype, r0, c0, sizeof c0);
    ckt_em_convert(a->t->dtype, a->r->dtype, r1, c1, sizeof c1);
    snprintf(out, cap, "ckt_u16x2(%s, %s)", c0, c1);
}

static bool emit_stmatrix(em *e, const ckt_kop *op, char *why, size_t cap)
{
    em_access a;
    stm_plan p;
    if (!stmatrix_plan(e, op, &a, &p, why, cap)) return false;
    char desc[400];
    ckt_em_describe_tensor(e, a.t, desc, sizeof desc);
    char *rs = ckt_em_estr(e, p.row, NULL);
    if (!rs) {
        e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
        return false;
    }
    ckt_em_thread_open(e);
    ckt_em_line(e,
                "/* line %d: stmatrix.x4: store to %s from %s; a thread's values 8q..8q+7 are "
                "the rows' pairs of four 8x8 matrices */",
                op->line, desc, a.d->desc);
    if (!window_guard(e, &a, op->w)) {
        free(rs);
        return false;
    }
    if (a.d->threads < e->block)
        ckt_em_line(e, "if (tid < %lld) {", (long long)a.d->threads);
    else
        ckt_em_line(e, "{");
    e->ind++;
    ckt_em_line(e, "const ckt_u32 ckt_sr = (ckt_u32)(%s); /* row %s of matrix %s of group 0 */", rs,
                "tid % 8", "tid % 32 / 8");
    free(rs);
    ckt_em_line(e, "const ckt_u32 ckt_sa = (ckt_u32)__cvta_generic_to_shared(%s);", a.t->name);
    for (int q = 0; q < p.ngroups; q++) {
        char w[4][700], at[96];
        for (int j = 0; j < 4; j++) pack_pair(e, &a, 8 * q + 2 * j, w[j], sizeof w[j]);
        snprintf(at, sizeof at,
                 p.k[q] == 0  ? "ckt_sr"
                 : p.xor_k[q] ? "(ckt_sr ^ %lldu)"
                              : "(ckt_sr + %lldu)",
                 (long long)p.k[q]);
        ckt_em_line(e, "CKT_STMATRIX4(ckt_sa + %lldu * %s, %s, %s, %s, %s);", (long long)a.esz, at,
                    w[0], w[1], w[2], w[3]);
    }
    e->ind--;
    ckt_em_line(e, "}");
    return true;
}

/* An access of window `w` through distribution `dist`: its per-thread coordinates are the
 * variables <prefix>0, <prefix>1, ... (origin + thread part) the emitted block declares. */
ckt_status ckt_em_access_init(em *e, em_access *a, int w, int dist, int vector_dim,
                              const char *prefix)
{
    ckt_expr_pool *ex = e->ex;
    a->w = ckt_kernel_window(e->k, w);
    a->t = ckt_kernel_tensor(e->k, a->w->tensor);
    a->d = ckt_kernel_dist(e->k, dist);
    a->rank = a->w->rank;
    a->vd = vector_dim < 0 ? a->rank - 1 : vector_dim;
    a->esz = (int64_t)ckt_dtype_size(a->t->dtype);
    for (int d = 0; d < a->rank; d++) {
        a->thr[d] = thread_part(ex, a->d, d);
        ckt_expr_id full = ckt_expr_add(ex, a->w->origin[d], a->thr[d]);
        int64_t lo, hi;
        ckt_expr_range(ex, full, &lo, &hi);
        char name[24];
        snprintf(name, sizeof name, "%s%d", prefix, d);
        a->idx[d] = ckt_expr_var(ex, name, lo, hi, ckt_expr_divisor(ex, full));
    }
    return ckt_expr_pool_status(ex, e->err);
}

/* const ckt_i64 <prefix>d = origin + thread part; for every dim */
void ckt_em_declare_coords(em *e, const em_access *a, const char *prefix)
{
    for (int d = 0; d < a->rank; d++) {
        char *x = ckt_em_estr(e, ckt_expr_add(e->ex, a->w->origin[d], a->thr[d]), NULL);
        ckt_em_line(e, "const ckt_i64 %s%d = %s;", prefix, d, x ? x : "0");
        free(x);
    }
}

/* Inside a pass loop (it = the pass, 0..passes-1) the index variables move by step[d] per pass:
 * redefine them with the range and divisor that holds for every pass. */
void ckt_em_pass_index_vars(em *e, em_access *a, int64_t passes, const int64_t *step)
{
    ckt_expr_pool *ex = e->ex;
    for (int d = 0; d < a->rank; d++) {
        ckt_expr_id full = ckt_expr_add(ex, a->w->origin[d], a->thr[d]);
        int64_t lo, hi, div = ckt_expr_divisor(ex, full), span = (passes - 1) * step[d];
        ckt_expr_range(ex, full, &lo, &hi);
        if (span > 0 && hi != INT64_MAX) hi += span;
        if (span < 0 && lo != INT64_MIN) lo += span;
        if (step[d]) div = ckt_gcd(div, step[d] < 0 ? -step[d] : step[d]);
        char name[24];
        snprintf(name, sizeof name, "i%d", d);
        a->idx[d] = ckt_expr_var(ex, name, lo, hi, div);
    }
}

/* Set up a load or store: its tensors, distribution, index variables and vector plan. */
bool ckt_em_access_prepare(em *e, const ckt_kop *op, em_access *a, int64_t *spv, char *note,
                           size_t cap)
{
    if (!access_setup(e, op, a)) return false;
    *spv = 1;
    if ((e->st = plan(e, a, op, spv, note, cap))) return false;
    return true;
}

void ckt_em_access_comments(em *e, const ckt_kop *op, const em_access *a, int64_t spv,
                            const char *note)
{
    bool load = op->kind == CKT_OP_LOAD;
    char desc[400];
    ckt_em_describe_tensor(e, a->t, desc, sizeof desc);
    char lens[96] = "";
    for (int d = 0, n = 0; d < a->rank && n < (int)sizeof lens; d++)
        n += snprintf(lens + n, sizeof lens - (size_t)n, "%s%lld", d ? "x" : "",
                      (long long)a->w->lengths[d]);
    if (op->line)
        ckt_em_line(e, "/* line %d: %s %s, window %s */", op->line, load ? "load from" : "store to",
                    desc, lens);
    else
        ckt_em_line(e, "/* %s %s, window %s */", load ? "load from" : "store to", desc, lens);
    ckt_em_line(e, "/*   threads: %s; %lld-element accesses along dim %d%s%s */", a->d->desc,
                (long long)spv, a->vd, note[0] ? "; " : "", note);
}

/* a vector of a pass loop's copy moved whole: loaded into (or stored from) slot s of ckt_fw; a
 * masked load fills the slot's values instead */
static void forward_vector(em *e, bool load, const char *ptr, const char *off, const char *mask,
                           int64_t bytes, const char *fld, int64_t spv, const char *fill, int64_t s)
{
    char guard[600] = "";
    if (mask) snprintf(guard, sizeof guard, "if (%s) ", mask);
    if (load)
        ckt_em_line(e, "%sCKT_LD%lld(ckt_fw[%lld], %s + (%s));", guard, (long long)bytes,
                    (long long)s, ptr, off);
    else
        ckt_em_line(e, "%sCKT_ST%lld(%s + (%s), ckt_fw[%lld]);", guard, (long long)bytes, ptr, off,
                    (long long)s);
    if (load && mask)
        ckt_em_line(e,
                    "else for (int ckt_q = 0; ckt_q < %lld; ++ckt_q) ckt_fw[%lld].%s[ckt_q] = %s;",
                    (long long)spv, (long long)s, fld, fill);
}

void ckt_em_vector_members(const em_access *a, int64_t v, int64_t spv, int64_t nv, int64_t *members)
{
    for (int64_t u = 0; u < nv; u++)
        if (u == v || (a->group[u] < 0 && spv > 1)) {
            /* members of this vector: values whose run starts at v */
            bool mine = true;
            for (int rr = 0; rr < a->rank && mine && u != v; rr++)
                mine = a->d->vcoord[u][rr] == a->d->vcoord[v][rr] + (rr == a->vd ? a->order[u] : 0);
            if (mine) members[a->order[u]] = u;
        }
}

/* The statements of a load or store for values 0..nv-1: all of them, or one pass of a pass loop
 * whose counter `it` moves the index variables by step[d] per pass (step NULL: no loop). */
void ckt_em_access_body(em *e, const ckt_kop *op, em_access *a, int64_t spv, int64_t nv,
                        const int64_t *step)
{
    bool load = op->kind == CKT_OP_LOAD;
    ckt_expr_pool *ex = e->ex;
    if (!window_guard(e, a, op->w)) return;
    if (a->d->threads < e->block)
        ckt_em_line(e, "if (tid < %lld) {", (long long)a->d->threads);
    else
        ckt_em_line(e, "{");
    e->ind++;
    if (!step) {
        ckt_em_declare_coords(e, a, "i");
    } else {
        for (int d = 0; d < a->rank; d++) {
            char *x = ckt_em_estr(e, ckt_expr_add(ex, a->w->origin[d], a->thr[d]), NULL);
            if (step[d])
                ckt_em_line(e, "const ckt_i64 i%d = %s + it * %lld;", d, x ? x : "0",
                            (long long)step[d]);
            else
                ckt_em_line(e, "const ckt_i64 i%d = %s;", d, x ? x : "0");
            free(x);
        }
    }
    const char *ptr = a->t->name;
    const char *fld = field(a->t->dtype);
    int64_t bytes = spv * a->esz;
    char r[64], cv[600], fill[48];
    ckt_em_literal(a->r->dtype, op->fill, fill, sizeof fill);
    /* an LDS tile under a swizzle at a constant origin (an accumulator tile stored for the bulk
     * stores): one per-thread offset f(u0) and a constant a vector, XORed or added
     * (ckt_em_split_offsets), instead of the swizzle spelled out for every vector */
    int64_t firsts[CKT_K_MAX_VALUES], fc[CKT_K_MAX_VALUES];
    int nfirst = 0;
    bool split = false, add = false;
    ckt_expr_id u0 = CKT_EXPR_NONE;
    if (!step && a->t->mem == CKT_MEM_LDS && a->t->swizzled && !a->t->stage_view &&
        a->t->stages <= 1) {
        for (int64_t v = 0; v < nv; v++)
            if (a->group[v] == v) firsts[nfirst++] = v;
        split = nfirst > 1 && ckt_em_split_offsets(e, a, nfirst, firsts, &u0, fc, &add);
    }
    if (split) {
        char *us = ckt_em_estr(e, u0, NULL);
        if (!us) {
            e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
            return;
        }
        ckt_em_line(e, "const ckt_i64 ckt_sw0 = %s; /* this thread's swizzled offset in %s */", us,
                    ptr);
        free(us);
    }
    for (int64_t v = 0, k = 0; v < nv; v++) {
        if (a->group[v] != v) continue;
        ckt_expr_id off = CKT_EXPR_NONE;
        if (!split) {
            off = ckt_em_group_offset(e, a, v, 0);
            if (a->t->mem == CKT_MEM_LDS) off = ckt_em_swizzled(e, a->t, off);
        }
        ckt_expr_id mask = ckt_em_in_bounds(e, a, v, spv);
        int64_t always;
        bool masked = !(ckt_expr_is_const(ex, mask, &always) && always);
        char *os = NULL, *ms = masked ? ckt_em_estr(e, mask, NULL) : NULL;
        if (split) {
            os = malloc(64);
            if (os) snprintf(os, 64, add ? "ckt_sw0 + %lld" : "ckt_sw0 ^ %lld", (long long)fc[k]);
            k++;
        } else {
            os = ckt_em_estr(e, off, NULL);
        }
        if (!os || (masked && !ms)) {
            free(os);
            free(ms);
            e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
            return;
        }
        int64_t members[16];
        ckt_em_vector_members(a, v, spv, nv, members);
        if (spv > 1 && e->fw_slot) {
            forward_vector(e, load, ptr, os, masked ? ms : NULL, bytes, fld, spv, fill,
                           e->fw_slot[members[0]]);
        } else if (spv == 1) {
            ckt_em_reg(e, a->r, v, r, sizeof r);
            if (load) {
                if (masked)
                    ckt_em_line(e, "%s = (%s) ? %s[%s] : %s;", r, ms, ptr, os, fill);
                else
                    ckt_em_line(e, "%s = %s[%s];", r, ptr, os);
            } else {
                ckt_em_convert(a->t->dtype, a->r->dtype, r, cv, sizeof cv);
                if (masked)
                    ckt_em_line(e, "if (%s) %s[%s] = %s;", ms, ptr, os, cv);
                else
                    ckt_em_line(e, "%s[%s] = %s;", ptr, os, cv);
            }
        } else {
            /* a masked bf16 load filled with 0 zeroes the vector, not its values: values merged
             * from two branches are 16-bit phis, which ptxas unpacks one a register (a bf16 half
             * has no instruction reading it in place, an f16 one has), and the 1024-thread
             * layernorm then spilled at 64 registers */
            bool whole =
                load && masked && a->t->dtype == CKT_BF16 && op->fill == 0.0f && bytes % 4 == 0;
            if (masked && !whole)
                ckt_em_line(e, "if (%s) {", ms);
            else
                ckt_em_line(e, "{");
            e->ind++;
            ckt_em_line(e, "ckt_v%lld v;", (long long)bytes);
            if (whole)
                ckt_em_line(
                    e,
                    "if (%s) CKT_LD%lld(v, %s + (%s)); else for (int ckt_q = 0; ckt_q < %lld; "
                    "++ckt_q) v.i32[ckt_q] = 0;",
                    ms, (long long)bytes, ptr, os, (long long)(bytes / 4));
            if (load) {
                if (!whole) ckt_em_line(e, "CKT_LD%lld(v, %s + (%s));", (long long)bytes, ptr, os);
                for (int64_t j = 0; j < spv; j++) {
                    char src[64];
                    snprintf(src, sizeof src, "v.%s[%lld]", fld, (long long)j);
                    ckt_em_convert(a->r->dtype, a->t->dtype, src, cv, sizeof cv);
                    ckt_em_line(e, "%s = %s;", ckt_em_reg(e, a->r, members[j], r, sizeof r), cv);
                }
            } else {
                for (int64_t j = 0; j < spv; j++) {
                    ckt_em_convert(a->t->dtype, a->r->dtype,
                                   ckt_em_reg(e, a->r, members[j], r, sizeof r), cv, sizeof cv);
                    ckt_em_line(e, "v.%s[%lld] = %s;", fld, (long long)j, cv);
                }
                ckt_em_line(e, "CKT_ST%lld(%s + (%s), v);", (long long)bytes, ptr, os);
            }
            e->ind--;
            if (masked && load && !whole) {
                ckt_em_line(e, "} else {");
                e->ind++;
                for (int64_t j = 0; j < spv; j++)
                    ckt_em_line(e, "%s = %s;", ckt_em_reg(e, a->r, members[j], r, sizeof r), fill);
                e->ind--;
            }
            ckt_em_line(e, "}");
        }
        free(os);
        free(ms);
    }
    e->ind--;
    ckt_em_line(e, "}");
}

/* a store of 16-bit values into LDS on a target with stmatrix */
static bool stmatrix_target(const em *e, const ckt_kop *op)
{
    const ckt_ktensor *t = ckt_kernel_tensor(e->k, ckt_kernel_window(e->k, op->w)->tensor);
    return e->dl->ldmatrix && e->target && e->target->modelled && e->target->hw.stmatrix &&
           t->mem == CKT_MEM_LDS && ckt_dtype_size(t->dtype) == 2;
}

void ckt_em_access_op(em *e, const ckt_kop *op)
{
    char ldm_why[300] = "";
    if (op->kind == CKT_OP_LOAD && op->mma_rep[2] == 1 && e->dl->ldmatrix) {
        if (emit_ldmatrix(e, op, ldm_why, sizeof ldm_why) || e->st) return;
    }
    if (op->kind == CKT_OP_STORE && stmatrix_target(e, op)) {
        if (emit_stmatrix(e, op, ldm_why, sizeof ldm_why) || e->st) return;
    }
    em_access a;
    int64_t spv;
    char note[300];
    if (!ckt_em_access_prepare(e, op, &a, &spv, note, sizeof note)) return;
    ckt_em_thread_open(e);
    ckt_em_access_comments(e, op, &a, spv, note);
    if (ldm_why[0]) ckt_em_line(e, "/*   %s */", ldm_why);
    ckt_em_access_body(e, op, &a, spv, a.d->nvalues, NULL);
}
