/* The engine's growable string (strbuf.h). */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ckt_sb_printf(ckt_sb *s, const char *fmt, ...)
{
    if (s->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = s->cap - s->len;
        int k = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            s->oom = true;
            return;
        }
        if (s->buf && (size_t)k < room) {
            s->len += (size_t)k;
            return;
        }
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + (size_t)k + 1) cap *= 2;
        char *nb = realloc(s->buf, cap);
        if (!nb) {
            s->oom = true;
            return;
        }
        s->buf = nb;
        s->cap = cap;
    }
}

void ckt_sb_repeat(ckt_sb *s, char ch, size_t n)
{
    char run[64];
    memset(run, ch, sizeof run);
    while (n > 0) {
        size_t k = n < sizeof run ? n : sizeof run;
        ckt_sb_printf(s, "%.*s", (int)k, run);
        n -= k;
    }
}

char *ckt_sb_finish(ckt_sb *s, const char *what, ckt_error *err)
{
    if (s->oom || !s->buf) {
        free(s->buf);
        s->buf = NULL;
        ckt_fail(err, CKT_ENOMEM, "%s: out of memory", what);
        return NULL;
    }
    return s->buf;
}

long ckt_sb_read_fd(ckt_sb *s, int fd)
{
    if (!s->oom && s->cap - s->len < 1025) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        char *nb = realloc(s->buf, cap);
        if (nb) {
            s->buf = nb;
            s->cap = cap;
            s->buf[s->len] = 0; /* a text at every moment, also when nothing more is read */
        } else
            s->oom = true;
    }
    char drop[1024];
    bool keep = !s->oom;
    ssize_t n = read(fd, keep ? s->buf + s->len : drop, keep ? s->cap - s->len - 1 : sizeof drop);
    if (n > 0 && keep) {
        s->len += (size_t)n;
        s->buf[s->len] = 0;
    }
    return (long)n;
}

char *ckt_sb_take(ckt_sb *s)
{
    if (!s->oom && !s->buf) ckt_sb_printf(s, "%s", "");
    if (!s->oom) return s->buf;
    free(s->buf);
    s->buf = NULL;
    return NULL;
}
