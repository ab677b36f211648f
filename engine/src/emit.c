/* The one emitter (see ckt/emit.h): walks the kernel IR once and writes source whose
 * per-thread index arithmetic is the same for every dialect. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "ckt/ckt.h"
#include "ckt/target.h"
#include "embedded.h"
#include "emit_internal.h"

extern const ckt_embedded_file ckt_embedded_preludes[];

static const char *prelude_file(const char *name)
{
    for (const ckt_embedded_file *f = ckt_embedded_preludes; f->name; f++)
        if (!strcmp(f->name, name)) return f->text;
    return "";
}

static const ckt_dialect *dialect_of(ckt_dialect_kind d)
{
    static const ckt_dialect *const by_kind[] = {
        [CKT_DIALECT_C] = &ckt_dialect_c,
        [CKT_DIALECT_HIP] = &ckt_dialect_hip,
        [CKT_DIALECT_CUDA] = &ckt_dialect_cuda,
    };
    return (unsigned)d < sizeof by_kind / sizeof *by_kind ? by_kind[d] : &ckt_dialect_c;
}

const char *ckt_prelude_text(ckt_dialect_kind d) { return prelude_file(dialect_of(d)->prelude); }

const char *ckt_emit_ctype(ckt_dtype t)
{
    switch (t) {
    case CKT_F32: return "float";
    case CKT_F16:
    case CKT_BF16: return "ckt_u16";
    case CKT_I32: return "ckt_i32";
    case CKT_I8: return "ckt_i8";
    case CKT_U8: return "ckt_u8";
    case CKT_I64: return "ckt_i64";
    case CKT_F64: return "double";
    }
    return "void";
}

const char *ckt_emit_param_ctype(ckt_param_kind k)
{
    switch (k) {
    case CKT_PARAM_I32: return "ckt_i32";
    case CKT_PARAM_I64: return "ckt_i64";
    case CKT_PARAM_F32: return "float";
    case CKT_PARAM_TMAP: return "ckt_tmap";
    default: return "void *";
    }
}

void ckt_emit_param_comment(ckt_sb *s, const ckt_kernel *k)
{
    for (int i = 0; i < ckt_kernel_nparams(k); i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (!p->specialized) continue;
        if (p->kind == CKT_PARAM_F32)
            ckt_sb_printf(s, "/* %s = %.9g (specialized at build time) */\n", p->name, p->fvalue);
        else
            ckt_sb_printf(s, "/* %s = %lld (specialized at build time) */\n", p->name,
                          (long long)p->ivalue);
    }
}

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

/* ---------------------------------------------------------------- the walk */

enum { SCOPE_LOOP, SCOPE_UIF, SCOPE_DIF, SCOPE_PRODUCER };

typedef struct em {
    ckt_sb *s;
    const ckt_kernel *k;
    ckt_expr_pool *ex;
    const ckt_dialect *dl;
    int ind;
    bool in_tid;
    int scope[64], depth;
    int64_t block;
    const ckt_target_record *target;
    ckt_error *err;
    ckt_status st;
} em;

static void line(em *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void line(em *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ckt_emit_vput(e->s, e->ind, fmt, ap);
    va_end(ap);
}

/* an expression as a string the caller frees */
static char *estr(em *e, ckt_expr_id id, const char *const *inputs)
{
    int n = ckt_expr_print(e->ex, id, NULL, 0, inputs);
    char *b = malloc((size_t)n + 1);
    if (!b) {
        e->s->oom = true;
        return NULL;
    }
    ckt_expr_print(e->ex, id, b, (size_t)n + 1, inputs);
    return b;
}

static void thread_open(em *e)
{
    if (!e->dl->thread_loops || e->in_tid) return;
    line(e, "for (int tid = 0; tid < %lld; ++tid) {", (long long)e->block);
    e->ind++;
    e->in_tid = true;
}

static void thread_close(em *e)
{
    if (!e->in_tid) return;
    e->ind--;
    line(e, "}");
    e->in_tid = false;
}

/* the dialect's writer at the walk's indentation; done() takes the indentation back */
static ckt_emit_out out(em *e) { return (ckt_emit_out){e->s, e->ind}; }
static void done(em *e, const ckt_emit_out *o) { e->ind = o->ind; }

static void barrier(em *e, const char *why)
{
    thread_close(e); /* a block-level statement (C: it ends the thread loop) */
    ckt_emit_out o = out(e);
    e->dl->barrier(&o, e->k, why);
}

/* the producer warp's region: on the GPU the warp launched beside the block's threads, one
 * elected thread of it issuing; on the CPU one pass ahead of the block's threads (its copies land
 * at the waits that need them, checked against the releases it waited for: prelude c.h) */
static void producer_open(em *e)
{
    thread_close(e);
    ckt_emit_out o = out(e);
    e->dl->producer_open(&o, e->block);
    done(e, &o);
    e->scope[e->depth++] = SCOPE_PRODUCER;
}

static void producer_close(em *e)
{
    ckt_emit_out o = out(e);
    e->dl->producer_close(&o);
    done(e, &o);
}

/* inside the producer warp's region? */
static bool in_producer(const em *e)
{
    for (int i = 0; i < e->depth; i++)
        if (e->scope[i] == SCOPE_PRODUCER) return true;
    return false;
}

static char *reg(em *e, const ckt_ktensor *t, int64_t v, char *buf, size_t cap)
{
    e->dl->reg(buf, cap, t->name, v);
    return buf;
}

/* value conversions through f32 (exact for the float formats) */
static void to_f32(ckt_dtype t, const char *x, char *out, size_t cap)
{
    switch (t) {
    case CKT_F16: snprintf(out, cap, "ckt_f16_to_f32(%s)", x); break;
    case CKT_BF16: snprintf(out, cap, "ckt_bf16_to_f32(%s)", x); break;
    case CKT_F32: snprintf(out, cap, "%s", x); break;
    default: snprintf(out, cap, "(float)%s", x); break;
    }
}

static void from_f32(ckt_dtype t, const char *x, char *out, size_t cap)
{
    switch (t) {
    case CKT_F16: snprintf(out, cap, "ckt_f32_to_f16(%s)", x); break;
    case CKT_BF16: snprintf(out, cap, "ckt_f32_to_bf16(%s)", x); break;
    case CKT_F32: snprintf(out, cap, "%s", x); break;
    /* saturating, as ckt.array stores numbers (a C cast of an out-of-range float is undefined) */
    case CKT_I32: snprintf(out, cap, "ckt_sat_i32(%s)", x); break;
    case CKT_I8: snprintf(out, cap, "ckt_sat_i8(%s)", x); break;
    case CKT_U8: snprintf(out, cap, "ckt_sat_u8(%s)", x); break;
    default: snprintf(out, cap, "(%s)(%s)", ckt_emit_ctype(t), x); break;
    }
}

static bool is_int(ckt_dtype t)
{
    return t == CKT_I32 || t == CKT_I8 || t == CKT_U8 || t == CKT_I64;
}

/* an integer value into integer type t, saturating like ckt.array (300 -> i8 is 127) */
static void int_to(ckt_dtype t, const char *x, char *out, size_t cap)
{
    switch (t) {
    case CKT_I32:
        snprintf(out, cap, "(ckt_i32)ckt_clamp(%s, -2147483647 - 1, 2147483647)", x);
        break;
    case CKT_I8: snprintf(out, cap, "(ckt_i8)ckt_clamp(%s, -128, 127)", x); break;
    case CKT_U8: snprintf(out, cap, "(ckt_u8)ckt_clamp(%s, 0, 255)", x); break;
    default: snprintf(out, cap, "(%s)(%s)", ckt_emit_ctype(t), x); break;
    }
}

static void convert(ckt_dtype to, ckt_dtype from, const char *x, char *out, size_t cap)
{
    if (to == from) {
        snprintf(out, cap, "%s", x);
        return;
    }
    if (is_int(from) && is_int(to)) {
        int_to(to, x, out, cap);
        return;
    }
    char mid[512];
    to_f32(from, x, mid, sizeof mid);
    from_f32(to, mid, out, cap);
}

static void literal(ckt_dtype t, float v, char *out, size_t cap)
{
    switch (t) {
    case CKT_F16: snprintf(out, cap, "0x%04x", ckt_f32_to_f16(v)); break;
    case CKT_BF16: snprintf(out, cap, "0x%04x", ckt_f32_to_bf16(v)); break;
    case CKT_F32:
        if (isnan(v))
            snprintf(out, cap, "CKT_NAN");
        else if (isinf(v))
            snprintf(out, cap, v > 0 ? "CKT_INF" : "(-CKT_INF)");
        else {
            snprintf(out, cap, "%.9g", (double)v);
            if (!strpbrk(out, ".en")) strncat(out, ".0", cap - strlen(out) - 1);
            strncat(out, "f", cap - strlen(out) - 1);
        }
        break;
    default: { /* saturating like ckt.array: a -inf fill of an i8 max-reduction is -128, not 0 */
        double lo = t == CKT_I8 ? INT8_MIN : t == CKT_U8 ? 0 : t == CKT_I32 ? INT32_MIN : -0x1p63;
        double hi = t == CKT_I8    ? INT8_MAX
                    : t == CKT_U8  ? UINT8_MAX
                    : t == CKT_I32 ? INT32_MAX
                                   : 0x1p63 - 1024;
        double d = isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : (double)v;
        snprintf(out, cap, "%lld", (long long)d);
        if (t == CKT_I32 && d == INT32_MIN) snprintf(out, cap, "(-2147483647 - 1)");
        break;
    }
    }
}

/* ---------------------------------------------------------------- accesses */

typedef struct access {
    const ckt_kwindow *w;
    const ckt_ktensor *t;
    const ckt_ktensor *r;
    const ckt_dist *d;
    int rank, vd;
    int64_t esz;
    ckt_expr_id thr[CKT_K_MAX_RANK]; /* thread part of each coordinate */
    ckt_expr_id idx[CKT_K_MAX_RANK]; /* i_d: origin + thread part (a named per-access variable) */
    int64_t group[CKT_K_MAX_VALUES]; /* value -> first value of its vector (-1: not a first) */
    int64_t order[CKT_K_MAX_VALUES]; /* value -> position in its vector */
} access;

static ckt_expr_id thread_part(ckt_expr_pool *ex, const ckt_dist *d, int dim)
{
    ckt_expr_id acc = ckt_expr_int(ex, 0), tid = ckt_expr_tid(ex);
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

/* The coordinate of dim `dim` of value v (plus j along the vector dim). */
static ckt_expr_id coord(em *e, const access *a, int dim, int64_t v)
{
    return ckt_expr_addc(e->ex, a->idx[dim], a->d->vcoord[v][dim]);
}

/* Element offset inside the tensor (LDS: before the swizzle) of a coordinate list. */
static ckt_expr_id offset_of(em *e, const access *a, const ckt_expr_id *c)
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
static ckt_expr_id swizzled(em *e, const ckt_ktensor *t, ckt_expr_id off)
{
    if (t->stage_view) {
        ckt_ktensor plain = *t;
        plain.stage_view = false;
        return ckt_expr_add(e->ex, swizzled(e, &plain, off), t->stage_base);
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

static ckt_expr_id group_offset(em *e, const access *a, int64_t v, int64_t j)
{
    ckt_expr_id c[CKT_K_MAX_RANK];
    for (int d = 0; d < a->rank; d++) c[d] = coord(e, a, d, v);
    if (j) c[a->vd] = ckt_expr_addc(e->ex, c[a->vd], j);
    return offset_of(e, a, c);
}

/* The predicate of a padded global access: every coordinate inside the shape, on both edges
 * (a window at a runtime origin may start below 0). */
static ckt_expr_id in_bounds(em *e, const access *a, int64_t v)
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
    return m;
}

/* The block-uniform predicate of an unmasked access: the whole window inside its tensor
 * (LDS: the static layout; global without pad: the runtime shape). The range analysis folds
 * it to 1 where it can prove it; else the access runs only when it holds, and CKT_FAULT tells
 * the runtime. Without it a window at a runtime origin far out of range reads and writes any
 * address (a sandboxed script crashed its host this way). */
static ckt_expr_id window_within(em *e, const access *a);
static ckt_expr_id window_inside(em *e, const access *a)
{
    if (a->t->mem == CKT_MEM_GLOBAL && a->t->padded) return ckt_expr_int(e->ex, 1);
    return window_within(e, a);
}

/* The whole window inside the tensor's shape (padded or not). */
static ckt_expr_id window_within(em *e, const access *a)
{
    ckt_expr_pool *ex = e->ex;
    ckt_expr_id m = ckt_expr_int(ex, 1);
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

static const char *vector_blocker(em *e, access *a, int64_t s, char *why, size_t cap)
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
                char *sh = estr(e, a->t->shape[vd], NULL);
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
        ckt_expr_id o0 = group_offset(e, a, v, 0);
        int64_t tensor_div = a->t->mem == CKT_MEM_LDS ? (a->t->lds_offset / a->esz) : 0;
        if (ckt_gcd(ckt_expr_divisor(e->ex, o0), tensor_div) % s) {
            char *o = estr(e, o0, NULL);
            snprintf(why, cap,
                     "the offset %s is not known to be a multiple of %lld (a runtime stride: "
                     "specialize it or promise multiple_of)",
                     o ? o : "?", (long long)s);
            free(o);
            return why;
        }
        for (int64_t j = 1; j < s && !lds_runs_contiguous(a->t, vd, s); j++) {
            ckt_expr_id diff = ckt_expr_binary(e->ex, CKT_E_SUB, group_offset(e, a, v, j), o0);
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

static ckt_status plan(em *e, access *a, const ckt_kop *op, int64_t *spv, char *note, size_t cap)
{
    char why[256];
    int64_t maxv = 16 / a->esz;
    note[0] = 0;
    if (op->spv > 0) {
        if (op->spv > 1 && vector_blocker(e, a, op->spv, why, sizeof why))
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
        if (!vector_blocker(e, a, s, why, sizeof why)) {
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

static void describe_tensor(em *e, const ckt_ktensor *t, char *buf, size_t cap)
{
    if (t->mem == CKT_MEM_LDS) {
        char l[160];
        ckt_layout_to_string(&t->layout, l, sizeof l);
        int n = t->swizzled ? snprintf(buf, cap, "LDS %s %s o Sw<%d,%d,%d>", t->name, l, t->sw.b,
                                       t->sw.m, t->sw.s)
                            : snprintf(buf, cap, "LDS %s %s", t->name, l);
        if (t->stages > 1 && n >= 0 && (size_t)n < cap) {
            char *x = t->stage_view ? estr(e, t->stage_base, NULL) : NULL;
            snprintf(buf + n, cap - (size_t)n,
                     t->stage_view ? ", a stage of %lld at element %s" : ", %lld stages",
                     (long long)t->stages, x ? x : "?");
            free(x);
        }
        return;
    }
    size_t n = (size_t)snprintf(buf, cap, "global %s (", t->name);
    for (int d = 0; d < t->rank && n < cap; d++) {
        char *x = estr(e, t->shape[d], NULL);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", d ? "," : "", x ? x : "?");
        free(x);
    }
    if (n < cap) n += (size_t)snprintf(buf + n, cap - n, "):(");
    for (int d = 0; d < t->rank && n < cap; d++) {
        char *x = estr(e, t->stride[d], NULL);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", d ? "," : "", x ? x : "?");
        free(x);
    }
    if (n < cap) snprintf(buf + n, cap - n, ")%s", t->padded ? " padded" : "");
}

/* Opens "if (!inside) { CKT_FAULT } else" before an access whose window the range analysis
 * cannot prove inside its tensor (the statement that follows is the access). false: out of
 * memory. A block-uniform compare per access where it stays; on GPUs CKT_FAULT only skips. */
static bool window_guard(em *e, const access *a, int w)
{
    ckt_expr_id inside = window_inside(e, a);
    int64_t always;
    if (ckt_expr_is_const(e->ex, inside, &always) && always) return true;
    char *gs = estr(e, inside, NULL);
    if (!gs) {
        e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
        return false;
    }
    line(e, "if (!(%s)) {", gs);
    line(e, "    CKT_FAULT(%d); /* window %d is not inside '%s' */", w + 1, w, a->t->name);
    line(e, "} else");
    free(gs);
    return true;
}

/* The two lines of a split access (split_offsets): `off`, the thread's swizzled element offset
 * in tensor a->t, and `base`, the tensor's (stage's) 32-bit shared address. false: out of memory.
 */
static bool thread_address(em *e, const access *a, ckt_expr_id u0, const char *off,
                           const char *base)
{
    const ckt_ktensor *t = a->t;
    char *us = estr(e, u0, NULL), *bs = t->stage_view ? estr(e, t->stage_base, NULL) : NULL;
    if (!us || (t->stage_view && !bs)) {
        free(us);
        free(bs);
        e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
        return false;
    }
    line(e, "const ckt_u32 %s = (ckt_u32)(%s); /* this thread's swizzled offset in %s */", off, us,
         t->name);
    line(e, "const ckt_u32 %s = (ckt_u32)__cvta_generic_to_shared(%s) + %lldu * (ckt_u32)(%s);",
         base, t->name, (long long)a->esz, bs ? bs : "0");
    free(us);
    free(bs);
    return true;
}

/* One ldmatrix (x4 or x2, `trs` ".trans" or "") from the shared address `addr` + `imm` bytes into
 * the 16-bit register values first.. of the access's register tensor. */
static void ldmatrix_load(em *e, const access *a, int nregs, const char *trs, const char *addr,
                          long long imm, int64_t first)
{
    line(e, "ckt_u32 q[4];");
    if (nregs == 4)
        line(e,
             "asm volatile(\"ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%%0,%%1,%%2,%%3}, "
             "[%%4+%lld];\" : \"=r\"(q[0]), \"=r\"(q[1]), \"=r\"(q[2]), \"=r\"(q[3]) : \"r\"(%s));",
             trs, imm, addr);
    else
        line(e,
             "asm volatile(\"ldmatrix.sync.aligned.m8n8.x2%s.shared.b16 {%%0,%%1}, [%%2+%lld];\" : "
             "\"=r\"(q[0]), \"=r\"(q[1]) : \"r\"(%s));",
             trs, imm, addr);
    for (int j = 0; j < nregs; j++) {
        char r0[64], r1[64];
        line(e, "%s = (ckt_u16)q[%d]; %s = (ckt_u16)(q[%d] >> 16);",
             reg(e, a->r, first + 2 * j, r0, sizeof r0), j,
             reg(e, a->r, first + 2 * j + 1, r1, sizeof r1), j);
    }
}

/* A tensor's swizzle applied to a number (what swizzled() emits, without the stage). */
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
static bool split_offsets(em *e, const access *a, int nrep, const int64_t *vals, ckt_expr_id *u0,
                          int64_t *fc, bool *add)
{
    ckt_expr_pool *ex = e->ex;
    access b = *a;
    for (int d = 0; d < 2; d++) {
        int64_t lo, hi; /* a window that never moves: its origin's range is one value */
        ckt_expr_range(ex, a->w->origin[d], &lo, &hi);
        if (lo != hi) return false;
        b.idx[d] = ckt_expr_addc(ex, a->thr[d], lo);
    }
    ckt_expr_id u[CKT_K_MAX_VALUES];
    if (nrep > CKT_K_MAX_VALUES) return false;
    for (int r = 0; r < nrep; r++) u[r] = group_offset(e, &b, vals[r], 0);
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
    *u0 = swizzled(e, &(ckt_ktensor){.swizzled = a->t->swizzled, .sw = a->t->sw}, u[0]);
    for (int r = 0; r < nrep; r++) fc[r] = swizzle_num(a->t, c[r]);
    return true;
}

/* CUDA: the A / B fragments of mma.sync by ldmatrix (x4 for A, x2 for B) when every 8-element K
 * row the lanes point at is 16 contiguous, aligned bytes of LDS; returns false (why in `why`)
 * when the layout does not allow it, and the load stays ordinary element / vector loads. */
static bool emit_ldmatrix(em *e, const ckt_kop *op, char *why, size_t cap)
{
    access a;
    memset(&a, 0, sizeof a);
    a.w = ckt_kernel_window(e->k, op->w);
    a.t = ckt_kernel_tensor(e->k, a.w->tensor);
    a.r = ckt_kernel_tensor(e->k, op->r);
    a.d = ckt_kernel_dist(e->k, (int)op->mma_rep[1]);
    a.rank = 2;
    bool tr = op->mma_rep[0] == 'a' || op->mma_rep[0] == 'b'; /* ldmatrix.trans: rows along M / N */
    a.vd = tr ? 0 : 1;
    a.esz = (int64_t)ckt_dtype_size(a.t->dtype);
    const ckt_mma *m = ckt_mma_at(op->mma);
    if (!m || !a.d || a.t->mem != CKT_MEM_LDS || a.esz != 2) {
        snprintf(why, cap, "not a 16-bit LDS fragment load");
        return false;
    }
    ckt_expr_pool *ex = e->ex;
    for (int d = 0; d < 2; d++) {
        a.thr[d] = thread_part(ex, a.d, d);
        ckt_expr_id full = ckt_expr_add(ex, a.w->origin[d], a.thr[d]);
        int64_t lo, hi;
        ckt_expr_range(ex, full, &lo, &hi);
        char name[24];
        snprintf(name, sizeof name, "i%d", d);
        a.idx[d] = ckt_expr_var(ex, name, lo, hi, ckt_expr_divisor(ex, full));
    }
    char blk[200];
    if (ckt_expr_pool_status(ex, e->err)) {
        e->st = e->err->status;
        return false;
    }
    if (vector_blocker(e, &a, 8, blk, sizeof blk)) {
        snprintf(why, cap, "no ldmatrix: %s", blk);
        return false;
    }
    bool isa = op->mma_rep[0] == 'A' || op->mma_rep[0] == 'a';
    const char *trs = tr ? ".trans" : "";
    /* x4 or x2: the registers one load fills (B by x4 covers two N tiles) */
    int64_t nrep0 = (a.d->nvalues + 7) / 8;
    int nregs = a.r->nvalues / nrep0 / 2 == 4 ? 4 : 2;
    char desc[400];
    describe_tensor(e, a.t, desc, sizeof desc);
    thread_open(e);
    line(e, "/* line %d: ldmatrix.x%d%s: %c fragments of %s from %s (%s) */", op->line, nregs, trs,
         isa ? 'A' : 'B', m->isa, desc, a.d->desc);
    int64_t per = 2 * nregs; /* values a load fills */
    if (!window_guard(e, &a, op->w)) return false;
    line(e, "{");
    e->ind++;
    int nrep = (int)nrep0;
    ckt_expr_id u0;
    int64_t fc[16], vals[16];
    bool add;
    for (int r = 0; r < nrep && r < 16; r++) vals[r] = (int64_t)r * 8;
    if (nrep <= 16 && split_offsets(e, &a, nrep, vals, &u0, fc, &add)) {
        line(e, "/* one offset per thread (hoisted out of loops by the compiler), a constant per "
                "matrix */");
        if (!thread_address(e, &a, u0, "ckt_lt", "ckt_la")) return false;
        if (add) line(e, "const ckt_u32 ckt_lb = ckt_la + %lldu * ckt_lt;", (long long)a.esz);
        for (int rep = 0; rep < nrep; rep++) {
            line(e, "{");
            e->ind++;
            char at[96];
            if (add)
                snprintf(at, sizeof at, "ckt_lb");
            else
                snprintf(at, sizeof at, "ckt_la + %lldu * (ckt_lt ^ %lldu)", (long long)a.esz,
                         (long long)fc[rep]);
            ldmatrix_load(e, &a, nregs, trs, at, add ? (long long)(fc[rep] * a.esz) : 0, rep * per);
            e->ind--;
            line(e, "}");
        }
        e->ind--;
        line(e, "}");
        return true;
    }
    for (int d = 0; d < 2; d++) {
        char *x = estr(e, ckt_expr_add(ex, a.w->origin[d], a.thr[d]), NULL);
        line(e, "const ckt_i64 i%d = %s;", d, x ? x : "0");
        free(x);
    }
    for (int64_t rep = 0; rep * 8 < a.d->nvalues; rep++) {
        ckt_expr_id off = swizzled(e, a.t, group_offset(e, &a, rep * 8, 0));
        char *os = estr(e, off, NULL);
        if (!os) {
            e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
            return false;
        }
        line(e, "{");
        e->ind++;
        line(e, "ckt_u32 sa;");
        line(e,
             "asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %%1; cvt.u32.u64 %%0, t; }\" : \"=r\"(sa) "
             ": \"l\"(%s + (%s)));",
             a.t->name, os);
        ldmatrix_load(e, &a, nregs, trs, "sa", 0, rep * per);
        e->ind--;
        line(e, "}");
        free(os);
    }
    e->ind--;
    line(e, "}");
    return true;
}

/* An access of window `w` through distribution `dist`: its per-thread coordinates are the
 * variables <prefix>0, <prefix>1, ... (origin + thread part) the emitted block declares. */
static ckt_status access_init(em *e, access *a, int w, int dist, int vector_dim, const char *prefix)
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
static void declare_coords(em *e, const access *a, const char *prefix)
{
    for (int d = 0; d < a->rank; d++) {
        char *x = estr(e, ckt_expr_add(e->ex, a->w->origin[d], a->thr[d]), NULL);
        line(e, "const ckt_i64 %s%d = %s;", prefix, d, x ? x : "0");
        free(x);
    }
}

/* Inside a pass loop (it = the pass, 0..passes-1) the index variables move by step[d] per pass:
 * redefine them with the range and divisor that holds for every pass. */
static void pass_index_vars(em *e, access *a, int64_t passes, const int64_t *step)
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
static bool access_prepare(em *e, const ckt_kop *op, access *a, int64_t *spv, char *note,
                           size_t cap)
{
    memset(a, 0, sizeof *a);
    a->r = ckt_kernel_tensor(e->k, op->r);
    /* a store by value index names its own distribution */
    if (access_init(e, a, op->w, op->dist >= 0 ? op->dist : a->r->dist, op->vector_dim, "i")) {
        e->st = e->err->status;
        return false;
    }
    *spv = 1;
    if ((e->st = plan(e, a, op, spv, note, cap))) return false;
    return true;
}

static void access_comments(em *e, const ckt_kop *op, const access *a, int64_t spv,
                            const char *note)
{
    bool load = op->kind == CKT_OP_LOAD;
    char desc[400];
    describe_tensor(e, a->t, desc, sizeof desc);
    char lens[96] = "";
    for (int d = 0, n = 0; d < a->rank && n < (int)sizeof lens; d++)
        n += snprintf(lens + n, sizeof lens - (size_t)n, "%s%lld", d ? "x" : "",
                      (long long)a->w->lengths[d]);
    if (op->line)
        line(e, "/* line %d: %s %s, window %s */", op->line, load ? "load from" : "store to", desc,
             lens);
    else
        line(e, "/* %s %s, window %s */", load ? "load from" : "store to", desc, lens);
    line(e, "/*   threads: %s; %lld-element accesses along dim %d%s%s */", a->d->desc,
         (long long)spv, a->vd, note[0] ? "; " : "", note);
}

/* The statements of a load or store for values 0..nv-1: all of them, or one pass of a pass loop
 * whose counter `it` moves the index variables by step[d] per pass (step NULL: no loop). */
static void access_body(em *e, const ckt_kop *op, access *a, int64_t spv, int64_t nv,
                        const int64_t *step)
{
    bool load = op->kind == CKT_OP_LOAD;
    ckt_expr_pool *ex = e->ex;
    if (!window_guard(e, a, op->w)) return;
    if (a->d->threads < e->block)
        line(e, "if (tid < %lld) {", (long long)a->d->threads);
    else
        line(e, "{");
    e->ind++;
    if (!step) {
        declare_coords(e, a, "i");
    } else {
        for (int d = 0; d < a->rank; d++) {
            char *x = estr(e, ckt_expr_add(ex, a->w->origin[d], a->thr[d]), NULL);
            if (step[d])
                line(e, "const ckt_i64 i%d = %s + it * %lld;", d, x ? x : "0", (long long)step[d]);
            else
                line(e, "const ckt_i64 i%d = %s;", d, x ? x : "0");
            free(x);
        }
    }
    const char *ptr = a->t->name;
    const char *fld = field(a->t->dtype);
    int64_t bytes = spv * a->esz;
    char r[64], cv[600], fill[48];
    literal(a->r->dtype, op->fill, fill, sizeof fill);
    for (int64_t v = 0; v < nv; v++) {
        if (a->group[v] != v) continue;
        ckt_expr_id off = group_offset(e, a, v, 0);
        if (a->t->mem == CKT_MEM_LDS) off = swizzled(e, a->t, off);
        ckt_expr_id mask = in_bounds(e, a, v);
        int64_t always;
        bool masked = !(ckt_expr_is_const(ex, mask, &always) && always);
        char *os = estr(e, off, NULL), *ms = masked ? estr(e, mask, NULL) : NULL;
        if (!os || (masked && !ms)) {
            free(os);
            free(ms);
            e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
            return;
        }
        int64_t members[16];
        for (int64_t u = 0; u < nv; u++)
            if (u == v || (a->group[u] < 0 && spv > 1)) {
                /* members of this vector: values whose run starts at v */
                bool mine = u == v;
                if (!mine) {
                    bool same = true;
                    for (int rr = 0; rr < a->rank; rr++)
                        same = same && a->d->vcoord[u][rr] ==
                                           a->d->vcoord[v][rr] + (rr == a->vd ? a->order[u] : 0);
                    mine = same;
                }
                if (mine) members[a->order[u]] = u;
            }
        if (spv == 1) {
            reg(e, a->r, v, r, sizeof r);
            if (load) {
                if (masked)
                    line(e, "%s = (%s) ? %s[%s] : %s;", r, ms, ptr, os, fill);
                else
                    line(e, "%s = %s[%s];", r, ptr, os);
            } else {
                convert(a->t->dtype, a->r->dtype, r, cv, sizeof cv);
                if (masked)
                    line(e, "if (%s) %s[%s] = %s;", ms, ptr, os, cv);
                else
                    line(e, "%s[%s] = %s;", ptr, os, cv);
            }
        } else {
            if (masked)
                line(e, "if (%s) {", ms);
            else
                line(e, "{");
            e->ind++;
            line(e, "ckt_v%lld v;", (long long)bytes);
            if (load) {
                line(e, "CKT_LD%lld(v, %s + (%s));", (long long)bytes, ptr, os);
                for (int64_t j = 0; j < spv; j++) {
                    char src[64];
                    snprintf(src, sizeof src, "v.%s[%lld]", fld, (long long)j);
                    convert(a->r->dtype, a->t->dtype, src, cv, sizeof cv);
                    line(e, "%s = %s;", reg(e, a->r, members[j], r, sizeof r), cv);
                }
            } else {
                for (int64_t j = 0; j < spv; j++) {
                    convert(a->t->dtype, a->r->dtype, reg(e, a->r, members[j], r, sizeof r), cv,
                            sizeof cv);
                    line(e, "v.%s[%lld] = %s;", fld, (long long)j, cv);
                }
                line(e, "CKT_ST%lld(%s + (%s), v);", (long long)bytes, ptr, os);
            }
            e->ind--;
            if (masked && load) {
                line(e, "} else {");
                e->ind++;
                for (int64_t j = 0; j < spv; j++)
                    line(e, "%s = %s;", reg(e, a->r, members[j], r, sizeof r), fill);
                e->ind--;
            }
            line(e, "}");
        }
        free(os);
        free(ms);
    }
    e->ind--;
    line(e, "}");
}

static void emit_access(em *e, const ckt_kop *op)
{
    char ldm_why[300] = "";
    if (op->kind == CKT_OP_LOAD && op->mma_rep[2] == 1 && e->dl->ldmatrix) {
        if (emit_ldmatrix(e, op, ldm_why, sizeof ldm_why) || e->st) return;
    }
    access a;
    int64_t spv;
    char note[300];
    if (!access_prepare(e, op, &a, &spv, note, sizeof note)) return;
    thread_open(e);
    access_comments(e, op, &a, spv, note);
    if (ldm_why[0]) line(e, "/*   %s */", ldm_why);
    access_body(e, op, &a, spv, a.d->nvalues, NULL);
}

/* ---------------------------------------------------------------- asynchronous copies */

/* The widest vector both sides of a copy allow (the same distribution, so the same runs). */
static int64_t copy_width(em *e, access *src, access *dst, int64_t want, char *why, size_t cap)
{
    why[0] = 0;
    for (int64_t s = want ? want : 16 / src->esz; s > 1; s /= 2) {
        char w[256];
        const char *b = vector_blocker(e, src, s, w, sizeof w);
        if (!b) b = vector_blocker(e, dst, s, w, sizeof w);
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
static void copy_vectors(em *e, const access *src, const access *dst, int64_t bytes, bool split,
                         bool add, const int64_t *fc, bool inside)
{
    ckt_expr_pool *ex = e->ex;
    char zero[48];
    literal(dst->t->dtype, 0.0f, zero, sizeof zero);
    for (int64_t v = 0, g = 0; v < src->d->nvalues; v++) {
        if (src->group[v] != v) continue;
        ckt_expr_id so = group_offset(e, src, v, 0),
                    mask = inside ? ckt_expr_int(ex, 1) : in_bounds(e, src, v);
        ckt_expr_id dof =
            split ? ckt_expr_int(ex, 0) : swizzled(e, dst->t, group_offset(e, dst, v, 0));
        int64_t always;
        bool masked = !(ckt_expr_is_const(ex, mask, &always) && always);
        char *ss = estr(e, so, NULL), *ds = estr(e, dof, NULL),
             *ms = masked ? estr(e, mask, NULL) : NULL;
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
            if (masked)
                line(e, "CKT_CP_ASYNC_AT(%lld, %s, (%s) ? %s + (%s) : %s, %s);", (long long)bytes,
                     at, ms, src->t->name, ss, src->t->name, ms);
            else
                line(e, "CKT_CP_ASYNC_AT(%lld, %s, %s + (%s), 1);", (long long)bytes, at,
                     src->t->name, ss);
        } else if (bytes >= 4 &&
                   masked) /* a masked-off copy reads nothing, but names a valid address anyway */
            line(e, "CKT_CP_ASYNC(%lld, %s + (%s), (%s) ? %s + (%s) : %s, %s);", (long long)bytes,
                 dst->t->name, ds, ms, src->t->name, ss, src->t->name, ms);
        else if (bytes >= 4)
            line(e, "CKT_CP_ASYNC(%lld, %s + (%s), %s + (%s), 1);", (long long)bytes, dst->t->name,
                 ds, src->t->name, ss);
        else if (masked)
            line(e, "%s[%s] = (%s) ? %s[%s] : %s;", dst->t->name, ds, ms, src->t->name, ss, zero);
        else
            line(e, "%s[%s] = %s[%s];", dst->t->name, ds, src->t->name, ss);
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
static void emit_copy_async(em *e, const ckt_kop *op)
{
    access src, dst;
    memset(&src, 0, sizeof src);
    memset(&dst, 0, sizeof dst);
    if (access_init(e, &src, op->inputs[0], op->dist, op->vector_dim, "i") ||
        access_init(e, &dst, op->w, op->dist, op->vector_dim, "j")) {
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
    describe_tensor(e, src.t, sdesc, sizeof sdesc);
    describe_tensor(e, dst.t, ddesc, sizeof ddesc);
    for (int d = 0, n = 0; d < src.rank && n < (int)sizeof lens; d++)
        n += snprintf(lens + n, sizeof lens - (size_t)n, "%s%lld", d ? "x" : "",
                      (long long)src.w->lengths[d]);
    thread_open(e);
    if (op->line)
        line(e, "/* line %d: asynchronous copy from %s to %s, window %s */", op->line, sdesc, ddesc,
             lens);
    else
        line(e, "/* asynchronous copy from %s to %s, window %s */", sdesc, ddesc, lens);
    line(e, "/*   threads: %s; %lld-byte copies%s%s */", src.d->desc,
         (long long)(bytes >= 4 ? bytes : src.esz), why[0] ? "; " : "", why);
    if (src.d->threads < e->block)
        line(e, "if (tid < %lld) {", (long long)src.d->threads);
    else
        line(e, "{");
    e->ind++;
    declare_coords(e, &src, "i");
    /* CUDA: the LDS side as one per-thread shared address plus an immediate per vector */
    int64_t vals[CKT_K_MAX_VALUES], fc[CKT_K_MAX_VALUES];
    int nv = 0;
    for (int64_t v = 0; v < src.d->nvalues; v++)
        if (src.group[v] == v) vals[nv++] = v;
    ckt_expr_id u0;
    bool add, split = e->dl->lds_immediates && bytes >= 4 &&
                      split_offsets(e, &dst, nv, vals, &u0, fc, &add);
    if (split) {
        if (!thread_address(e, &dst, u0, "ckt_ct", "ckt_cb")) return;
    } else
        declare_coords(e, &dst, "j");
    /* GPUs, a padded source: a block whose window lies wholly inside the tensor (all but the
     * edge blocks and the K tail) copies without the per-vector masks */
    ckt_expr_id within = ckt_expr_int(ex, 0);
    int64_t never;
    if (e->dl->interior_unmasked && src.t->mem == CKT_MEM_GLOBAL && src.t->padded)
        within = window_within(e, &src);
    bool interior = !(ckt_expr_is_const(ex, within, &never) && !never);
    if (interior) {
        char *ws = estr(e, within, NULL);
        if (!ws) {
            e->st = ckt_fail(e->err, CKT_ENOMEM, "emit: out of memory");
            return;
        }
        line(e, "if (%s) { /* the window lies inside %s: no masks */", ws, src.t->name);
        free(ws);
        e->ind++;
        copy_vectors(e, &src, &dst, bytes, split, add, fc, true);
        e->ind--;
        line(e, "} else {");
        e->ind++;
    }
    copy_vectors(e, &src, &dst, bytes, split, add, fc, false);
    if (interior) {
        e->ind--;
        line(e, "}");
    }
    e->ind--;
    line(e, "}");
}

static void emit_commit(em *e)
{
    thread_close(e); /* a block-level statement (the C dialect counts groups per block) */
    line(e, "CKT_CP_COMMIT(); /* the asynchronous copies since the last commit form one group */");
}

static void emit_wait(em *e, const ckt_kop *op)
{
    thread_close(e);
    line(e, "CKT_CP_WAIT(%lld); /* at most %lld groups of asynchronous copies still in flight */",
         (long long)op->spv, (long long)op->spv);
    if (e->dl->async_waited) {
        ckt_emit_out o = out(e);
        e->dl->async_waited(&o, e->k);
    }
    if (op->b != CKT_EXPR_NONE) barrier(e, "wait: every thread's copies have landed");
}

/* ---------------------------------------------------------------- pass loops
 * A load into registers followed by a store of those registers, the registers used nowhere else
 * (a copy through registers, a transpose's LDS -> global step), often repeats one sub-block: the
 * values split into `passes` runs of nv / passes values, and run p sits at run 0's coordinates plus
 * p times a fixed step, in both accesses. Unrolled, every pass is straight-line code that only
 * costs compile time (NVRTC's grows with it); emitted as a loop over the passes, one pass's
 * statements are written once, and the registers hold one pass. */

/* Does the access repeat with period nv / passes? Then step[] is the coordinate step per pass. */
static bool periodic(const access *a, int64_t spv, int64_t passes, int64_t *step)
{
    const ckt_dist *d = a->d;
    int64_t per = d->nvalues / passes;
    if (per * passes != d->nvalues || per % spv) return false;
    for (int r = 0; r < a->rank; r++) step[r] = d->vcoord[per][r] - d->vcoord[0][r];
    for (int64_t v = per; v < d->nvalues; v++) {
        int64_t base = v % per, p = v / per;
        if ((a->group[v] == v) != (a->group[base] == base) || a->order[v] != a->order[base])
            return false;
        for (int r = 0; r < a->rank; r++)
            if (d->vcoord[v][r] != d->vcoord[base][r] + p * step[r]) return false;
    }
    /* a vector's members stay in its pass: they are the values next to it along the vector dim */
    for (int64_t v = 0; v < per; v++) {
        if (a->group[v] != v || spv == 1) continue;
        for (int64_t j = 1; j < spv; j++) {
            bool found = false;
            for (int64_t u = 0; u < per && !found; u++) {
                bool same = a->group[u] < 0 && a->order[u] == j;
                for (int r = 0; r < a->rank && same; r++)
                    same = d->vcoord[u][r] == d->vcoord[v][r] + (r == a->vd ? j : 0);
                found = same;
            }
            if (!found) return false;
        }
    }
    return true;
}

static void emit_op(em *e, const ckt_kop *op);

static bool only_user(em *e, int ld, int st, int rt)
{
    for (int i = 0; i < ckt_kernel_nops(e->k); i++) {
        if (i == ld || i == st) continue;
        const ckt_kop *o = ckt_kernel_op(e->k, i);
        if (o->kind != CKT_OP_SET && o->kind != CKT_OP_ADD && o->kind != CKT_OP_LOOP &&
            o->kind != CKT_OP_IF && o->kind != CKT_OP_END && o->kind != CKT_OP_SYNC && o->r == rt)
            return false;
        for (int j = 0; j < o->ninputs; j++)
            if (o->inputs[j] == rt) return false;
    }
    return true;
}

/* Op i (a load into r), then only the origins of other windows, then a store of r: emitted as
 * the origins, then one loop over passes. Returns the number of ops emitted (0: none; emit op i
 * as usual). */
static int emit_pass_loop(em *e, int i)
{
    int nops = ckt_kernel_nops(e->k), j = i + 1;
    const ckt_kop *ld = ckt_kernel_op(e->k, i);
    if (ld->kind != CKT_OP_LOAD || ld->mma_rep[2] == 1)
        return 0; /* matrix-fragment loads have their own path (ldmatrix) */
    while (j < nops && ckt_kernel_op(e->k, j)->kind == CKT_OP_SET &&
           ckt_kernel_op(e->k, j)->w >= 0 && ckt_kernel_op(e->k, j)->w != ld->w)
        j++;
    if (j >= nops) return 0;
    const ckt_kop *st = ckt_kernel_op(e->k, j);
    if (st->kind != CKT_OP_STORE || ld->r != st->r || !only_user(e, i, j, ld->r)) return 0;
    access a, b;
    int64_t sa, sb;
    char na[300], nb[300];
    ckt_error saved;
    if (e->err) saved = *e->err;
    if (!access_prepare(e, ld, &a, &sa, na, sizeof na) ||
        !access_prepare(e, st, &b, &sb, nb, sizeof nb)) {
        e->st = CKT_OK; /* emit_access reports it */
        if (e->err) *e->err = saved;
        return 0;
    }
    if (a.d->nvalues != b.d->nvalues || a.d->threads != b.d->threads) return 0;
    /* Small copies stay straight-line code (their source is short and compiles fast). A pass keeps
     * at least PASS_MIN_ACCESSES vector accesses per op, so that the loop, which is not unrolled,
     * keeps that many independent memory accesses in flight per thread (8 x 16 bytes). */
    enum { LOOP_MIN_ACCESSES = 16, PASS_MIN_ACCESSES = 8 };
    int64_t n = a.d->nvalues, passes = 0, stepa[CKT_K_MAX_RANK], stepb[CKT_K_MAX_RANK],
            smax = sa > sb ? sa : sb;
    if (n / smax < LOOP_MIN_ACCESSES) return 0;
    for (int64_t p = n / smax / PASS_MIN_ACCESSES; p >= 2 && !passes; p--)
        if (n % p == 0 && periodic(&a, sa, p, stepa) && periodic(&b, sb, p, stepb)) passes = p;
    if (!passes) return 0;
    /* the vector plans must still hold with the pass step in the index variables */
    char why[256];
    pass_index_vars(e, &a, passes, stepa);
    pass_index_vars(e, &b, passes, stepb);
    if ((sa > 1 && vector_blocker(e, &a, sa, why, sizeof why)) ||
        (sb > 1 && vector_blocker(e, &b, sb, why, sizeof why)))
        return 0;
    for (int k = i + 1; k < j; k++)
        emit_op(e, ckt_kernel_op(e->k, k)); /* origins the store's window needs */
    thread_open(e);
    access_comments(e, ld, &a, sa, na);
    access_comments(e, st, &b, sb, nb);
    line(e,
         "/*   as %lld passes of %lld values (the same sub-block %lld times: a loop, not unrolled "
         "code) */",
         (long long)passes, (long long)(n / passes), (long long)passes);
    /* GPU compilers would unroll the passes again (NVRTC does: 1.5x the compile time); a pass
     * already has PASS_MIN_ACCESSES accesses in flight. The C dialect's compiler decides itself. */
    if (e->dl->no_unroll) line(e, "%s", e->dl->no_unroll);
    line(e, "for (int it = 0; it < %lld; ++it) {", (long long)passes);
    e->ind++;
    access_body(e, ld, &a, sa, n / passes, stepa);
    if (!e->st) access_body(e, st, &b, sb, n / passes, stepb);
    e->ind--;
    line(e, "}");
    return j - i + 1;
}

/* ---------------------------------------------------------------- compute */

static void emit_clear(em *e, const ckt_kop *op)
{
    const ckt_ktensor *t = ckt_kernel_tensor(e->k, op->r);
    char r[64], lit[48];
    literal(t->dtype, op->fill, lit, sizeof lit);
    thread_open(e);
    line(e, "/* clear %s */", t->name);
    for (int64_t v = 0; v < t->nvalues; v++) line(e, "%s = %s;", reg(e, t, v, r, sizeof r), lit);
}

static void emit_map(em *e, const ckt_kop *op)
{
    const ckt_ktensor *out = ckt_kernel_tensor(e->k, op->r);
    thread_open(e);
    char *shown = estr(e, op->b, NULL);
    line(e, "/* %s = map(%s) over %lld values */", out->name, shown ? shown : "?",
         (long long)out->nvalues);
    free(shown);
    char names[CKT_K_MAX_INPUTS][128];
    const char *ptrs[CKT_K_MAX_INPUTS];
    for (int64_t v = 0; v < out->nvalues; v++) {
        for (int i = 0; i < op->ninputs; i++) {
            const ckt_ktensor *in = ckt_kernel_tensor(e->k, op->inputs[i]);
            char r[64];
            /* integer inputs stay integers (an i32 through f32 loses bits above 2^24) */
            if (is_int(in->dtype))
                snprintf(names[i], sizeof names[i], "((ckt_i64)%s)", reg(e, in, v, r, sizeof r));
            else
                to_f32(in->dtype, reg(e, in, v, r, sizeof r), names[i], sizeof names[i]);
            ptrs[i] = names[i];
        }
        char *x = estr(e, op->b, ptrs);
        if (!x) return;
        size_t n = strlen(x) + 64;
        char *y = malloc(n), *z = malloc(n + 64);
        if (y && z) {
            ckt_expr_type ty = ckt_expr_type_of(e->ex, op->b);
            if (ty != CKT_T_F32 &&
                is_int(out->dtype)) { /* integer to integer: no trip through f32 */
                snprintf(y, n, "(ckt_i64)(%s)", x);
                int_to(out->dtype, y, z, n + 64);
            } else {
                if (ty == CKT_T_F32)
                    snprintf(y, n, "%s", x);
                else
                    snprintf(y, n, "(float)(%s)", x);
                from_f32(out->dtype, y, z, n + 64);
            }
            char r[64];
            line(e, "%s = %s;", reg(e, out, v, r, sizeof r), z);
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

static void emit_fold(em *e, const ckt_kop *op)
{
    const ckt_ktensor *acc = ckt_kernel_tensor(e->k, op->r),
                      *src = ckt_kernel_tensor(e->k, op->inputs[0]);
    thread_open(e);
    line(e, "/* %s = %s over the %lld values of %s */", acc->name,
         op->rop == CKT_REDUCE_SUM   ? "sum"
         : op->rop == CKT_REDUCE_MAX ? "max"
                                     : "min",
         (long long)src->nvalues, src->name);
    char a[64], s[64], af[128], sf[128], c[400], out[600];
    reg(e, acc, 0, a, sizeof a);
    /* threads outside the source's distribution hold no values: their accumulator stays */
    const ckt_dist *d = src->dist >= 0 ? ckt_kernel_dist(e->k, src->dist) : NULL;
    bool idle = d && d->threads < e->block;
    if (idle) {
        line(e, "if (tid < %lld) {", (long long)d->threads);
        e->ind++;
    }
    for (int64_t v = 0; v < src->nvalues; v++) {
        to_f32(acc->dtype, a, af, sizeof af);
        to_f32(src->dtype, reg(e, src, v, s, sizeof s), sf, sizeof sf);
        combine(op->rop, af, sf, c, sizeof c);
        from_f32(acc->dtype, c, out, sizeof out);
        line(e, "%s = %s;", a, out);
    }
    if (idle) {
        e->ind--;
        line(e, "}");
    }
}

static void emit_block_reduce(em *e, const ckt_kop *op)
{
    const ckt_ktensor *acc = ckt_kernel_tensor(e->k, op->r);
    int64_t scratch = ckt_kernel_reduce_scratch(e->k), B = e->block, P = 1;
    while (P * 2 <= B) P *= 2;
    char a[64], af[128], c[400], out[600];
    reg(e, acc, 0, a, sizeof a);
    to_f32(acc->dtype, a, af, sizeof af);
    thread_close(e);
    line(e, "/* block_reduce(%s): a tree over LDS scratch at byte %lld */", acc->name,
         (long long)scratch);
    thread_open(e);
    line(e, "ckt_red[tid] = %s;", af);
    barrier(e, "block_reduce: partials written");
    if (P < B) {
        thread_open(e);
        char rhs[64];
        snprintf(rhs, sizeof rhs, "ckt_red[tid + %lld]", (long long)P);
        line(e, "if (tid < %lld) ckt_red[tid] = %s;", (long long)(B - P),
             combine(op->rop, "ckt_red[tid]", rhs, c, sizeof c));
        barrier(e, "block_reduce: tail folded");
    }
    for (int64_t s = P / 2; s >= 1; s /= 2) {
        char rhs[64];
        snprintf(rhs, sizeof rhs, "ckt_red[tid + %lld]", (long long)s);
        thread_open(e);
        line(e, "if (tid < %lld) ckt_red[tid] = %s;", (long long)s,
             combine(op->rop, "ckt_red[tid]", rhs, c, sizeof c));
        barrier(e, "block_reduce: tree step");
    }
    thread_open(e);
    from_f32(acc->dtype, "ckt_red[0]", out, sizeof out);
    line(e, "%s = %s;", a, out);
    barrier(e, "block_reduce: scratch free again");
}

/* A matrix instruction exists on the target (cpu:<gpu>: the emulated one); the C dialect runs it
 * between the per-thread regions, where every lane's registers are in memory. */
static void emit_gemm(em *e, const ckt_kop *op)
{
    const ckt_mma *m = ckt_mma_at(op->mma);
    if (!m) {
        e->st = ckt_fail(e->err, CKT_EINVAL, "blockwise_gemm: no instruction %d", op->mma);
        return;
    }
    if ((e->st = ckt_mma_check_target(m, e->target, e->err))) return;
    thread_close(e);
    ckt_mma_site x = {m,
                      ckt_kernel_tensor(e->k, op->inputs[0])->name,
                      ckt_kernel_tensor(e->k, op->inputs[1])->name,
                      ckt_kernel_tensor(e->k, op->r)->name,
                      {op->mma_rep[0], op->mma_rep[1], op->mma_rep[2]},
                      e->block,
                      op->line};
    ckt_emit_mma(e->s, e->ind, e->dl, &x);
}

/* ---------------------------------------------------------------- kernel */

static bool has_async(const ckt_kernel *k)
{
    for (int i = 0; i < ckt_kernel_nops(k); i++)
        if (ckt_kernel_op(k, i)->kind == CKT_OP_COPY_ASYNC) return true;
    return false;
}

static void declare(em *e)
{
    char r[64];
    (void)r;
    for (int i = 0; i < ckt_kernel_ntensors(e->k); i++) {
        const ckt_ktensor *t = ckt_kernel_tensor(e->k, i);
        if (t->mem == CKT_MEM_REG) {
            ckt_emit_out o = out(e);
            e->dl->declare_regs(&o, t, e->block);
        } else if (t->mem == CKT_MEM_LDS) {
            char desc[300];
            describe_tensor(e, t, desc, sizeof desc);
            line(e, "%s *const %s = (%s *)(ckt_lds + %lld); /* %s */", ckt_emit_ctype(t->dtype),
                 t->name, ckt_emit_ctype(t->dtype), (long long)t->lds_offset, desc);
        }
    }
    if (ckt_kernel_reduce_scratch(e->k) >= 0)
        line(e, "float *const ckt_red = (float *)(ckt_lds + %lld);",
             (long long)ckt_kernel_reduce_scratch(e->k));
    if (e->dl->async_state && has_async(e->k)) {
        ckt_emit_out o = out(e);
        e->dl->async_state(&o, true);
    }
    /* block-uniform variables: window origins and named variables */
    for (int i = 0; i < ckt_kernel_nops(e->k); i++) {
        const ckt_kop *op = ckt_kernel_op(e->k, i);
        if (op->kind != CKT_OP_SET) continue;
        bool first = true;
        for (int j = 0; j < i && first; j++) {
            const ckt_kop *o = ckt_kernel_op(e->k, j);
            first = !(o->kind == CKT_OP_SET && o->a == op->a);
        }
        if (!first) continue;
        char *x = estr(e, op->a, NULL);
        line(e, "ckt_i64 %s = 0;", x ? x : "?");
        free(x);
    }
}

static bool is_let(em *e, ckt_expr_id v)
{
    const ckt_expr_pool *ex = ckt_kernel_exprs_const(e->k);
    const ckt_expr_node *n = ckt_expr_get(ex, v);
    return n && n->op == CKT_E_VAR && ex->vars[n->i].value != CKT_EXPR_NONE;
}

static void emit_op(em *e, const ckt_kop *op)
{
    char *x, *y;
    switch (op->kind) {
    case CKT_OP_SET:
    case CKT_OP_ADD:
        thread_close(e);
        x = estr(e, op->a, NULL);
        y = estr(e, op->b, NULL);
        if (op->w >= 0 && op->kind == CKT_OP_SET)
            line(e, "%s = %s; /* origin of window %d */", x, y, op->w);
        else if (op->kind == CKT_OP_SET && is_let(e, op->a))
            line(e, "%s = %s; /* a let: computed once, read below */", x, y);
        else
            line(e, "%s %s %s;", x, op->kind == CKT_OP_SET ? "=" : "+=", y);
        free(x);
        free(y);
        break;
    case CKT_OP_LOOP:
        thread_close(e);
        x = estr(e, op->a, NULL);
        y = estr(e, op->b, NULL);
        line(e, "for (ckt_i64 %s = 0; %s < %s; ++%s) {", x, x, y, x);
        free(x);
        free(y);
        e->scope[e->depth++] = SCOPE_LOOP;
        e->ind++;
        break;
    case CKT_OP_IF:
        x = estr(e, op->b, NULL);
        if (op->spv) {
            thread_open(e);
            e->scope[e->depth++] = SCOPE_DIF;
        } else {
            thread_close(e);
            e->scope[e->depth++] = SCOPE_UIF;
        }
        line(e, "if (%s) {", x);
        free(x);
        e->ind++;
        break;
    case CKT_OP_PRODUCER: producer_open(e); break;
    case CKT_OP_END:
        if (e->depth > 0 && e->scope[e->depth - 1] == SCOPE_PRODUCER) {
            e->depth--;
            producer_close(e);
            break;
        }
        if (e->depth > 0 && e->scope[e->depth - 1] != SCOPE_DIF) thread_close(e);
        e->depth--;
        e->ind--;
        line(e, "}");
        break;
    case CKT_OP_SYNC: barrier(e, "sync"); break;
    case CKT_OP_LOAD:
    case CKT_OP_STORE: emit_access(e, op); break;
    case CKT_OP_CLEAR: emit_clear(e, op); break;
    case CKT_OP_MAP: emit_map(e, op); break;
    case CKT_OP_FOLD: emit_fold(e, op); break;
    case CKT_OP_BLOCK_REDUCE: emit_block_reduce(e, op); break;
    case CKT_OP_GEMM: emit_gemm(e, op); break;
    case CKT_OP_COPY_ASYNC: emit_copy_async(e, op); break;
    case CKT_OP_COMMIT: emit_commit(e); break;
    case CKT_OP_WAIT: emit_wait(e, op); break;
    case CKT_OP_WGMMA:
        thread_close(e);
        e->st = ckt_emit_wgmma(e->s, e->ind, e->dl, e->k, e->ex, op, e->target, e->err);
        break;
    case CKT_OP_TMA_COPY:
    case CKT_OP_MBAR_ARRIVE:
    case CKT_OP_MBAR_WAIT:
        thread_close(e);
        e->st = ckt_emit_tma(e->s, e->ind, e->dl, e->k, e->ex, op, e->target, in_producer(e),
                             e->err);
        break;
    }
}

int64_t ckt_emit_dynamic_lds_bytes(const ckt_kernel *k, const ckt_target_record *t)
{
    int64_t limit = t->lds_static_bytes, bytes = ckt_kernel_lds_bytes(k);
    return limit > 0 && bytes > limit ? bytes : 0;
}

ckt_status ckt_emit_named(const ckt_kernel *k, const char *target, char **source,
                          ckt_error *err)
{
    ckt_target_record t;
    ckt_status s = ckt_target_parse(target, &t, err);
    return s ? s : ckt_emit(k, &t, source, err);
}

ckt_status ckt_emit(const ckt_kernel *k, const ckt_target_record *target, char **source,
                    ckt_error *err)
{
    ckt_status s;
    if (!k || !target || !source) return ckt_fail(err, CKT_EINVAL, "emit: NULL argument");
    const ckt_target_record *t = target;
    if (!ckt_kernel_is_finished(k))
        return ckt_fail(
            err, CKT_EINVAL,
            "emit: kernel '%s' is not finished (ckt_kernel_finish: loops and branches closed)",
            ckt_kernel_name(k));
    ckt_dialect_kind dk = t->dialect;
    if (t->modelled && ckt_kernel_lds_bytes(k) > t->lds_max_bytes)
        return ckt_fail(err, CKT_ECAPACITY, "kernel '%s': needs %lld bytes of LDS but %s has %lld",
                        ckt_kernel_name(k), (long long)ckt_kernel_lds_bytes(k), t->hw.name,
                        (long long)t->lds_max_bytes);
    ckt_sb sb = {0};
    em e;
    memset(&e, 0, sizeof e);
    e.s = &sb;
    e.k = k;
    /* the emitter interns the index arithmetic it derives: in a copy, so the kernel stays as built
     */
    ckt_expr_pool pool;
    if ((s = ckt_expr_pool_copy(&pool, ckt_kernel_exprs_const(k), err))) return s;
    e.ex = &pool;
    e.dl = dialect_of(dk);
    e.block = ckt_kernel_block(k);
    e.target = target;
    e.err = err;
    ckt_sb_printf(&sb,
                  "/* generated by ckt %s for %s (%s dialect): kernel %s, %lld threads per block, "
                  "%lld bytes of LDS */\n",
                  ckt_version(), t->name, e.dl->name, ckt_kernel_name(k), (long long)e.block,
                  (long long)ckt_kernel_lds_bytes(k));
    ckt_sb_printf(&sb, "%s\n%s\n", prelude_file(e.dl->prelude), prelude_file("common.h"));
    if (e.dl->preamble) e.dl->preamble(&sb, k);
    ckt_emit_param_comment(&sb, k);
    e.dl->open_kernel(&sb, k, ckt_kernel_lds_bytes(k), ckt_emit_dynamic_lds_bytes(k, t) > 0);
    e.ind = 1;
    declare(&e);
    ckt_emit_mbar_init(&sb, e.ind, e.dl, k);
    for (int i = 0; i < ckt_kernel_nops(k) && !e.st; i++) {
        int done = emit_pass_loop(&e, i);
        if (done)
            i += done - 1;
        else if (!e.st)
            emit_op(&e, ckt_kernel_op(k, i));
    }
    thread_close(&e);
    if (e.dl->async_state && has_async(k)) {
        ckt_emit_out o = out(&e);
        e.dl->async_state(&o, false);
    }
    ckt_emit_mbar_close(&sb, e.ind, e.dl, k);
    e.ind = 0;
    ckt_sb_printf(&sb, "}\n");
    e.dl->close_kernel(&sb, k, ckt_kernel_lds_bytes(k));
    if (!e.st && ckt_expr_pool_status(e.ex, err)) e.st = err->status;
    ckt_expr_pool_free(&pool);
    if (e.st) {
        free(sb.buf);
        return e.st;
    }
    if (!(*source = ckt_sb_finish(&sb, "emit", err))) return err ? err->status : CKT_ENOMEM;
    return CKT_OK;
}
