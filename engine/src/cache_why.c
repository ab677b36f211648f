/* Why a compile missed the cache (cache_why.h). The key is a hash: it cannot say which of its
 * parts changed. So beside the entries, a small text file per (target, kernel name) keeps the
 * parts of the last few entries written for it, each part's hash and a readable form; a miss is
 * compared against the closest of them. The file is a diagnosis, never trusted for anything
 * else: a line that does not parse is skipped, a lost update (two writers at once) only makes a
 * later reason vaguer. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache_why.h"

enum { MAX_RECORDS = 8, NPARTS = 4, READABLE = 160, MAX_FILE = 16384 };
static const char *const part_names[NPARTS] = {"the ckt version differs", "the compiler differs",
                                               "the compiler options differ", "the source differs"};

/* One record: the parts' hashes (16 hex digits each) and readable forms (no tabs, no newlines). */
typedef struct record {
    char hash[NPARTS][17];
    char text[NPARTS][READABLE];
} record;

static void hex16(const void *data, size_t n, char out[17])
{
    char full[65];
    ckt_sha256_hex(data, n, full);
    memcpy(out, full, 16);
    out[16] = 0;
}

/* s, made one line of at most READABLE - 1 bytes */
static void readable(const char *s, char out[READABLE])
{
    size_t n = 0;
    for (; s && *s && n + 1 < READABLE; s++)
        out[n++] = (*s == '\t' || *s == '\n' || *s == '\r') ? ' ' : *s;
    out[n] = 0;
}

static void make_record(const ckt_cache_parts *p, record *r)
{
    char opts[1024] = "";
    size_t used = 0;
    for (int i = 0; i < p->noptions && used + 2 < sizeof opts; i++)
        used +=
            (size_t)snprintf(opts + used, sizeof opts - used, "%s%s", i ? " " : "", p->options[i]);
    if (used >= sizeof opts) used = sizeof opts - 1;
    const char *src = p->source ? p->source : "";
    const char *vals[NPARTS] = {p->version, p->compiler, opts, src};
    size_t lens[NPARTS] = {strlen(p->version), strlen(p->compiler), used, strlen(src)};
    for (int i = 0; i < NPARTS; i++) hex16(vals[i], lens[i], r->hash[i]);
    readable(p->version, r->text[0]);
    readable(p->compiler, r->text[1]);
    readable(p->noptions ? opts : "(none)", r->text[2]);
    snprintf(r->text[3], READABLE, "sha256 %s..., %zu bytes", r->hash[3], lens[3]);
}

/* the file of (target, kernel name) in dir */
static void why_path(const char *dir, const ckt_cache_parts *p, char *out, size_t cap)
{
    const char *parts[3] = {"ckt-cache-why-1", p->target, p->kernel_name};
    char key[CKT_CACHE_KEY_LEN + 1];
    ckt_cache_key(parts, NULL, 3, key);
    snprintf(out, cap, "%s/%.64s.why", dir, key);
}

/* A line: "v1", then per part its hash, then per part its readable form, tab-separated. */
static int parse_line(char *line, record *r)
{
    char *f[1 + 2 * NPARTS], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(line, "\t", &save); t && n < 1 + 2 * NPARTS;
         t = strtok_r(NULL, "\t", &save))
        f[n++] = t;
    if (n != 1 + 2 * NPARTS || strcmp(f[0], "v1")) return 0;
    for (int i = 0; i < NPARTS; i++) {
        if (strlen(f[1 + i]) != 16 || strspn(f[1 + i], "0123456789abcdef") != 16) return 0;
        memcpy(r->hash[i], f[1 + i], 17);
        readable(f[1 + NPARTS + i], r->text[i]);
    }
    return 1;
}

/* The records of a file (at most MAX_RECORDS; a missing or unreadable file has none). */
static int read_records(const char *path, record *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat st;
    char *buf = NULL;
    ssize_t got = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= MAX_FILE &&
        (buf = malloc((size_t)st.st_size + 1)))
        got = read(fd, buf, (size_t)st.st_size);
    close(fd);
    if (got < 0) {
        free(buf);
        return 0;
    }
    buf[got] = 0;
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line && n < MAX_RECORDS;
         line = strtok_r(NULL, "\n", &save))
        n += parse_line(line, &out[n]);
    free(buf);
    return n;
}

static int same(const record *a, const record *b)
{
    for (int i = 0; i < NPARTS; i++)
        if (strcmp(a->hash[i], b->hash[i])) return 0;
    return 1;
}

void ckt_cache_why_record(ckt_cache *c, const ckt_cache_parts *p)
{
    if (!ckt_cache_enabled(c) || !p) return;
    char path[4400], tmp[4500];
    why_path(ckt_cache_dir(c), p, path, sizeof path);
    record *r = calloc(MAX_RECORDS + 1, sizeof *r);
    if (!r) return;
    make_record(p, &r[0]);
    int n = read_records(path, r + 1), keep = 1;
    for (int i = 1; i <= n && keep < MAX_RECORDS; i++) /* newest first, no duplicates */
        if (!same(&r[i], &r[0])) r[keep++] = r[i];
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    /* ".tmp-": the cache removes these when a writer died before its rename */
    snprintf(tmp, sizeof tmp, "%s/.tmp-why-%ld-%lx-%lx", ckt_cache_dir(c), (long)getpid(),
             (unsigned long)t.tv_nsec, (unsigned long)(uintptr_t)r);
    FILE *f = fopen(tmp, "wx");
    if (f) {
        for (int i = 0; i < keep; i++) {
            fputs("v1", f);
            for (int k = 0; k < NPARTS; k++) fprintf(f, "\t%s", r[i].hash[k]);
            for (int k = 0; k < NPARTS; k++)
                fprintf(f, "\t%s", r[i].text[k][0] ? r[i].text[k] : "-");
            fputc('\n', f);
        }
        if (fclose(f) != 0 || rename(tmp, path) != 0) unlink(tmp);
    }
    free(r);
}

/* "the compiler options differ (cached: '-O3'; now: '-O2')" for each part a differs in */
static void describe(const record *now, const record *old, const char *where, char *out, size_t cap)
{
    size_t used = (size_t)snprintf(out, cap, "miss: ");
    int first = 1;
    for (int i = 0; i < NPARTS && used < cap; i++) {
        if (!strcmp(now->hash[i], old->hash[i])) continue;
        used +=
            (size_t)snprintf(out + used, cap - used, "%s%s (%s: '%s'; now: '%s')",
                             first ? "" : "; ", part_names[i], where, old->text[i], now->text[i]);
        first = 0;
    }
}

void ckt_cache_why_miss(const ckt_cache *c, const ckt_cache_parts *p, const char *lookup_why,
                        char *out, size_t cap)
{
    if (!out || !cap) return;
    if (lookup_why && strcmp(lookup_why, "no entry")) { /* a damaged entry: that is why */
        snprintf(out, cap, "miss: %s", lookup_why);
        return;
    }
    record now, *old = calloc(MAX_RECORDS, sizeof *old);
    make_record(p, &now);
    int best = -1, best_diff = NPARTS + 1;
    const char *best_where = "";
    const char *dirs[2] = {ckt_cache_enabled(c) ? ckt_cache_dir(c) : "", ckt_cache_install_dir(c)};
    for (int d = 0; d < 2 && old; d++) {
        if (!dirs[d][0]) continue;
        char path[4400];
        why_path(dirs[d], p, path, sizeof path);
        int n = read_records(path, old);
        for (int i = 0; i < n; i++) {
            int diff = 0;
            for (int k = 0; k < NPARTS; k++) diff += strcmp(now.hash[k], old[i].hash[k]) != 0;
            if (diff < best_diff) {
                best_diff = diff, best = i, best_where = d ? "installed cache" : "cached";
                describe(&now, &old[i], best_where, out, cap);
            }
        }
    }
    if (best < 0)
        snprintf(out, cap, "miss: nothing cached for kernel '%.100s' on target '%.40s'",
                 p->kernel_name, p->target);
    else if (best_diff == 0)
        snprintf(out, cap,
                 "miss: the entry for these inputs is gone (removed, or its write failed)");
    free(old);
}
