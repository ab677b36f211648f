/* Indented lines of generated source: what the instruction emitters (emit_mma.c, emit_wgmma.c)
 * write with, one line a call at the block's indentation. */
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
