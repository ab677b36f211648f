/* A growable string for the engine's text output (the emitter's source, rendered grids and
 * SVG). On allocation failure it stays failed; ckt_sb_finish reports it. */
#ifndef CKT_STRBUF_H
#define CKT_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "ckt/error.h"

typedef struct ckt_sb {
    char *buf;
    size_t len, cap;
    bool oom;
} ckt_sb;

void ckt_sb_printf(ckt_sb *s, const char *fmt, ...) CKT_PRINTF(2, 3);
/* ch written n times */
void ckt_sb_repeat(ckt_sb *s, char ch, size_t n);
/* One read(2) of fd appended to s; read's result. After an allocation failure the bytes are
 * still read (and dropped), so a child writing the other end of a pipe never blocks. */
long ckt_sb_read_fd(ckt_sb *s, int fd);
/* The text (the caller frees it; "" when nothing was written), or NULL after an allocation
 * failure: for output that may be lost without an error (a child's log). */
char *ckt_sb_take(ckt_sb *s);
/* The text (the caller frees it), or NULL and a CKT_ENOMEM "<what>: out of memory" error. */
char *ckt_sb_finish(ckt_sb *s, const char *what, ckt_error *err);

#endif
