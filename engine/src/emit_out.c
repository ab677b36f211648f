/* The bottom of the emitter: the shared spellings (element, register and parameter types) and
 * indented lines of generated source, one line a call at the block's indentation. Every other
 * emit*.c file writes with these; this file calls none of them. */
#include <stdarg.h>
#include <stdio.h>

#include "emit_internal.h"

void ckt_emit_vput(ckt_sb *s, int ind, const char *fmt, va_list ap)
{
    char buf[2048];
    vsnprintf(buf, sizeof buf, fmt, ap);
    ckt_sb_printf(s, "%*s%s\n", ind * 4, "", buf);
}

void ckt_emit_put(ckt_emit_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ckt_emit_vput(o->s, o->ind, fmt, ap);
    va_end(ap);
}

void ckt_emit_open_loop(ckt_emit_out *o, bool unroll, const char *v, long long n)
{
    if (unroll) ckt_emit_put(o, "#pragma unroll");
    ckt_emit_put(o, "for (int %s = 0; %s < %lld; ++%s) {", v, v, n, v);
    o->ind++;
}

void ckt_emit_close(ckt_emit_out *o)
{
    o->ind--;
    ckt_emit_put(o, "}");
}

const char *ckt_emit_ctype(ckt_dtype t)
{
    switch (t) {
    case CKT_F32: return "float";
    case CKT_F16:
    case CKT_BF16: return "ckt_u16";
    case CKT_I32: return "ckt_i32";
    case CKT_I8: return "ckt_i8";
    case CKT_U8:
    case CKT_E4M3:
    case CKT_E5M2: return "ckt_u8"; /* the 8-bit floats are held as their bits, like f16 */
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
