/* The walk's state (emit_walk.h): lines at the walk's indentation, per-thread regions (the C
 * dialect's thread loops), barriers and the producer warp's region through the dialect's hooks,
 * register names, and value conversions through f32. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "emit_walk.h"

void ckt_em_line(em *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ckt_emit_vput(e->s, e->ind, fmt, ap);
    va_end(ap);
}

/* an expression as a string the caller frees */
char *ckt_em_estr(em *e, ckt_expr_id id, const char *const *inputs)
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

void ckt_em_thread_open(em *e)
{
    if (!e->dl->frame->thread_loops || e->in_tid) return;
    ckt_em_line(e, "for (int tid = 0; tid < %lld; ++tid) {", (long long)e->block);
    e->ind++;
    e->in_tid = true;
}

void ckt_em_thread_close(em *e)
{
    if (!e->in_tid) return;
    e->ind--;
    ckt_em_line(e, "}");
    e->in_tid = false;
}

/* the dialect's writer at the walk's indentation; ckt_em_done() takes the indentation back */
ckt_emit_out ckt_em_out(em *e) { return (ckt_emit_out){e->s, e->ind}; }

void ckt_em_done(em *e, const ckt_emit_out *o) { e->ind = o->ind; }

void ckt_em_barrier(em *e, const char *why)
{
    ckt_em_thread_close(e); /* a block-level statement (C: it ends the thread loop) */
    ckt_emit_out o = ckt_em_out(e);
    e->dl->frame->barrier(&o, e->k, why);
}

/* the producer warp's region: on the GPU the warp launched beside the block's threads, one
 * elected thread of it issuing; on the CPU one pass ahead of the block's threads (its copies land
 * at the waits that need them, checked against the releases it waited for: prelude c.h) */
void ckt_em_producer_open(em *e)
{
    /* the register hand-over is setmaxnreg, an sm_90a instruction (the C dialect has nothing to
     * hand over: its producer runs as one emulated thread) */
    if (ckt_kernel_consumer_registers(e->k) > 0 && !e->dl->frame->thread_loops &&
        (!e->target || !e->target->modelled || !e->target->hw.wgmma)) {
        e->st = ckt_fail(e->err, CKT_EUNSUPPORTED,
                         "producer: a producer warpgroup hands its registers over with setmaxnreg, "
                         "which %s lacks (sm_90a has it)",
                         e->target ? e->target->name : "the target");
        return;
    }
    ckt_em_thread_close(e);
    ckt_emit_out o = ckt_em_out(e);
    e->dl->frame->producer_open(&o, e->k);
    ckt_em_done(e, &o);
    e->scope[e->depth++] = SCOPE_PRODUCER;
}

void ckt_em_producer_close(em *e)
{
    ckt_emit_out o = ckt_em_out(e);
    e->dl->frame->producer_close(&o, e->k);
    ckt_em_done(e, &o);
}

/* inside the producer warp's region? */
bool ckt_em_in_producer(const em *e)
{
    for (int i = 0; i < e->depth; i++)
        if (e->scope[i] == SCOPE_PRODUCER) return true;
    return false;
}

void ckt_em_find_reg_forms(em *e)
{
    e->nforms = 0;
    for (int i = 0; i < ckt_kernel_ntensors(e->k) && !e->st && e->nforms < CKT_EM_MAX_FORMS; i++) {
        const ckt_ktensor *t = ckt_kernel_tensor(e->k, i);
        if (t->mem != CKT_MEM_REG) continue;
        em_reg_form f = {t, ckt_em_pairs_ok(e, i), 0};
        if (!f.pairs) f.width = ckt_em_acc_vector_width(e, i);
        if (f.pairs || f.width) e->forms[e->nforms++] = f;
    }
}

const em_reg_form *ckt_em_reg_form(const em *e, const ckt_ktensor *t)
{
    for (int i = 0; i < e->nforms; i++)
        if (e->forms[i].t == t) return &e->forms[i];
    return NULL;
}

bool ckt_em_paired(const em *e, const ckt_ktensor *t)
{
    const em_reg_form *f = ckt_em_reg_form(e, t);
    return f && f->pairs;
}

int64_t ckt_em_acc_width(const em *e, const ckt_ktensor *t)
{
    const em_reg_form *f = ckt_em_reg_form(e, t);
    return f ? f->width : 0;
}

char *ckt_em_reg(em *e, const ckt_ktensor *t, int64_t v, char *buf, size_t cap)
{
    if (ckt_em_paired(e, t) && !e->st) /* (only ldmatrix and mma.sync touch those, as words) */
        e->st = ckt_fail(
            e->err, CKT_EINVAL,
            "emit (internal): register tensor '%s' is held in pairs but value %lld is accessed "
            "alone",
            t->name, (long long)v);
    int64_t w = ckt_em_acc_width(e, t);
    if (w) /* (an element of an ext_vector is an lvalue) */
        snprintf(buf, cap, "%s[%lld][%lld]", t->name, (long long)(v / w), (long long)(v % w));
    else
        e->dl->frame->reg(buf, cap, t->name, v);
    return buf;
}

/* value conversions through f32 (exact for the float formats) */
void ckt_em_to_f32(ckt_dtype t, const char *x, char *out, size_t cap)
{
    switch (t) {
    case CKT_F16: snprintf(out, cap, "ckt_f16_to_f32(%s)", x); break;
    case CKT_BF16: snprintf(out, cap, "ckt_bf16_to_f32(%s)", x); break;
    case CKT_F32: snprintf(out, cap, "%s", x); break;
    default: snprintf(out, cap, "(float)%s", x); break;
    }
}

void ckt_em_from_f32(ckt_dtype t, const char *x, char *out, size_t cap)
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

bool ckt_em_is_int(ckt_dtype t)
{
    return t == CKT_I32 || t == CKT_I8 || t == CKT_U8 || t == CKT_I64;
}

/* an integer value into integer type t, saturating like ckt.array (300 -> i8 is 127) */
void ckt_em_int_to(ckt_dtype t, const char *x, char *out, size_t cap)
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

void ckt_em_convert(ckt_dtype to, ckt_dtype from, const char *x, char *out, size_t cap)
{
    if (to == from) {
        snprintf(out, cap, "%s", x);
        return;
    }
    if (ckt_em_is_int(from) && ckt_em_is_int(to)) {
        ckt_em_int_to(to, x, out, cap);
        return;
    }
    char mid[512];
    ckt_em_to_f32(from, x, mid, sizeof mid);
    ckt_em_from_f32(to, mid, out, cap);
}

void ckt_em_literal(ckt_dtype t, float v, char *out, size_t cap)
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
