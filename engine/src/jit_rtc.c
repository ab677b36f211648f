/* NVRTC and hipRTC, the one API they share (jit_internal.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dynlib.h"
#include "jit_internal.h"

ckt_status ckt_rtc_load(ckt_status (*load_locked)(ckt_error *), ckt_error *err)
{
    /* one lock for both libraries: each loads once, so they never wait on each other for long */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    ckt_status s = load_locked(err);
    pthread_mutex_unlock(&lock);
    return s;
}

/* NULL when all the required entry points are there (then r->lib = lib), else the first missing
 * name (lib is closed). */
static const char *bind_entry_points(ckt_rtc *r, void *lib, const char *prefix, const char *code)
{
    /* the names differ only in the prefix and in what the code is called (CUBIN, Code) */
    char names[8][64];
    snprintf(names[0], sizeof names[0], "%sCreateProgram", prefix);
    snprintf(names[1], sizeof names[1], "%sCompileProgram", prefix);
    snprintf(names[2], sizeof names[2], "%sGetProgramLogSize", prefix);
    snprintf(names[3], sizeof names[3], "%sGetProgramLog", prefix);
    snprintf(names[4], sizeof names[4], "%sGet%sSize", prefix, code);
    snprintf(names[5], sizeof names[5], "%sGet%s", prefix, code);
    snprintf(names[6], sizeof names[6], "%sDestroyProgram", prefix);
    snprintf(names[7], sizeof names[7], "%sVersion", prefix);
    void **slots[8] = {(void **)&r->create,  (void **)&r->compile,   (void **)&r->log_size,
                       (void **)&r->log,     (void **)&r->code_size, (void **)&r->code,
                       (void **)&r->destroy, (void **)&r->version};
    ckt_dynsym syms[8];
    for (int i = 0; i < 8; i++) syms[i] = (ckt_dynsym){slots[i], names[i], NULL, i == 7};
    const char *missing = ckt_dynlib_bind(lib, syms, 8);
    if (!missing) r->lib = lib;
    return missing;
}

ckt_status ckt_rtc_bind(ckt_rtc *r, void *lib, const char *prefix, const char *code,
                        const char *what, const char *hint, const char *not_found, ckt_error *err)
{
    if (!lib) return ckt_fail(err, CKT_ERUNTIME, "%s", not_found);
    if (bind_entry_points(r, lib, prefix, code))
        return ckt_fail(err, CKT_ERUNTIME, "%s in %s lacks the %s* entry points%s", what, r->name,
                        prefix, hint);
    return CKT_OK;
}

ckt_status ckt_rtc_identity(ckt_status (*load_locked)(ckt_error *), const ckt_rtc *r,
                            const char *what, char *out, size_t cap, ckt_error *err)
{
    ckt_status st = ckt_rtc_load(load_locked, err);
    if (st) return st;
    int major = -1, minor = -1;
    if (r->version) r->version(&major, &minor);
    snprintf(out, cap, "%s %s %d.%d", what, r->name, major, minor);
    return CKT_OK;
}

int ckt_rtc_compile(const ckt_rtc *r, const char *src, const char *name, const char *const *opts,
                    int nopts, ckt_binary *b)
{
    ckt_rtc_program prog;
    if (r->create(&prog, src, name, 0, NULL, NULL) != 0) return CKT_RTC_NO_PROGRAM;
    int rc = r->compile(prog, nopts, opts);
    size_t ls = 0;
    /* an empty log may be reported as size 0 or 1 */
    if (b && r->log_size(prog, &ls) == 0 && ls > 1 && (b->log = malloc(ls + 1))) {
        r->log(prog, b->log);
        b->log[ls] = 0;
    }
    size_t cs = 0;
    if (rc == 0 && b && r->code_size(prog, &cs) == 0 && cs > 0 && (b->code = malloc(cs))) {
        r->code(prog, (char *)b->code);
        b->code_size = cs;
    }
    r->destroy(&prog);
    return rc;
}

/* does the n-character line l mention w (any case)? */
static bool line_mentions(const char *l, size_t n, const char *w)
{
    size_t k = strlen(w);
    for (size_t i = 0; i + k <= n; i++)
        if (!strncasecmp(l + i, w, k)) return true;
    return false;
}

const char *ckt_rtc_failure(const char *log, char *buf, size_t cap)
{
    if (!log) return "(no log)";
    size_t n = 0;
    for (const char *l = log; *l;) {
        const char *end = strchr(l, '\n');
        size_t len = end ? (size_t)(end - l) : strlen(l);
        if ((line_mentions(l, len, "error") || line_mentions(l, len, "fatal")) &&
            n + len + 2 < cap) {
            memcpy(buf + n, l, len);
            n += len;
            buf[n++] = '\n';
        }
        l += len + (end != NULL);
    }
    if (n == 0) return log;
    buf[n] = '\0';
    return buf;
}
