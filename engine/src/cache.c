/* The on-disk compile cache (see ckt/cache.h for the guarantees). The cache is an
 * optimisation: every failure here degrades to "not cached" with a note, never an error. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckt/cache.h"

#define MAGIC "CKTCACHE"
#define HEADER_SIZE (8 + 4 + 4 + CKT_CACHE_KEY_LEN + 8 + 32)
#define MAX_PAYLOAD ((uint64_t)1 << 31)
#define STALE_TEMP_S 3600.0

struct ckt_cache {
    char dir[4096];
    char install_dir[4096]; /* read-only entries written at install time ("" none) */
    char note[512];
    int enabled;
    ckt_cache_stats stats;
    pthread_mutex_t lock; /* stats and note: compiles on several threads share one cache */
};

static void note(ckt_cache *c, const char *fmt, const char *a, const char *b)
{
    pthread_mutex_lock(&c->lock);
    snprintf(c->note, sizeof c->note, fmt, a, b);
    pthread_mutex_unlock(&c->lock);
}

static void count(ckt_cache *c, int64_t *field, int64_t by)
{
    pthread_mutex_lock(&c->lock);
    *field += by;
    pthread_mutex_unlock(&c->lock);
}

/* mkdir -p */
static int make_dirs(const char *path)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp) return -1;
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
    struct stat st;
    return stat(tmp, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static void resolve_dir(const char *dir, char *out, size_t cap)
{
    const char *e;
    if (dir && *dir)
        snprintf(out, cap, "%s", dir);
    else if ((e = getenv("CKT_CACHE_DIR")) && *e)
        snprintf(out, cap, "%s", e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e)
        snprintf(out, cap, "%s/ckt", e);
    else if ((e = getenv("HOME")) && *e)
        snprintf(out, cap, "%s/.cache/ckt", e);
    else
        out[0] = 0;
}

/* The install's cache: $CKT_INSTALL_CACHE_DIR when set (empty: none), else the directory
 * `ckt-lua --precompile` filled at install time (CMake's CKT_PRECOMPILE_TARGETS). Read only, and
 * after the writable directory, so a user's own entries win. */
static void resolve_install_dir(const char *dir, char *out, size_t cap)
{
    const char *e = getenv("CKT_INSTALL_CACHE_DIR");
#ifdef CKT_INSTALL_CACHE_DIR
    if (!e) e = CKT_INSTALL_CACHE_DIR;
#endif
    out[0] = 0;
    if (e && *e && strlen(e) < cap - 200 && strcmp(e, dir)) snprintf(out, cap, "%s", e);
}

static int temp_file(const ckt_cache *c, const char *key, char *path, size_t cap)
{
    static unsigned counter;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    snprintf(path, cap, "%s/.tmp-%.16s-%ld-%lx-%u", c->dir, key, (long)getpid(),
             (unsigned long)t.tv_nsec, __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
}

ckt_status ckt_cache_open(const char *dir, ckt_cache **out, ckt_error *err)
{
    if (!out) return ckt_fail(err, CKT_EINVAL, "cache_open: out is NULL");
    ckt_cache *c = calloc(1, sizeof *c);
    if (!c) return ckt_fail(err, CKT_ENOMEM, "cache_open: out of memory");
    pthread_mutex_init(&c->lock, NULL);
    resolve_dir(dir, c->dir, sizeof c->dir);
    resolve_install_dir(c->dir, c->install_dir, sizeof c->install_dir);
    *out = c;
    if (!c->dir[0]) {
        note(c, "compile cache off: no directory (set CKT_CACHE_DIR or HOME)%s%s", "", "");
        return CKT_OK;
    }
    if (strlen(c->dir) > sizeof c->dir - 200) {
        note(c, "compile cache off: directory name %.64s... is too long%s", c->dir, "");
        return CKT_OK;
    }
    if (make_dirs(c->dir) != 0) {
        note(c, "compile cache off: cannot create %.300s: %s", c->dir, strerror(errno));
        return CKT_OK;
    }
    /* probe writability by writing: access(W_OK) says yes to root on a read-only mount */
    char probe[4096];
    int fd = temp_file(c, "probe", probe, sizeof probe);
    if (fd < 0) {
        note(c, "compile cache off: %.300s is not writable: %s", c->dir, strerror(errno));
        return CKT_OK;
    }
    close(fd);
    unlink(probe);
    c->enabled = 1;
    ckt_cache_remove_stale(c, STALE_TEMP_S);
    return CKT_OK;
}

void ckt_cache_close(ckt_cache *c)
{
    if (!c) return;
    pthread_mutex_destroy(&c->lock);
    free(c);
}
int ckt_cache_enabled(const ckt_cache *c) { return c && c->enabled; }
const char *ckt_cache_dir(const ckt_cache *c) { return c ? c->dir : ""; }
const char *ckt_cache_install_dir(const ckt_cache *c) { return c ? c->install_dir : ""; }
const char *ckt_cache_note(const ckt_cache *c) { return c ? c->note : "compile cache off"; }
ckt_cache_stats ckt_cache_get_stats(const ckt_cache *c)
{
    ckt_cache_stats z = {0, 0, 0, 0, 0, 0};
    if (!c) return z;
    pthread_mutex_lock((pthread_mutex_t *)&c->lock);
    z = c->stats;
    pthread_mutex_unlock((pthread_mutex_t *)&c->lock);
    return z;
}

void ckt_cache_key(const char *const *parts, const size_t *lens, int n,
                   char out[CKT_CACHE_KEY_LEN + 1])
{
    ckt_sha256 s;
    uint8_t d[32];
    ckt_sha256_init(&s);
    for (int i = 0; i < n; i++) {
        uint64_t len = parts[i] ? (lens ? lens[i] : strlen(parts[i])) : 0;
        uint8_t le[8];
        for (int j = 0; j < 8; j++) le[j] = (uint8_t)(len >> (8 * j));
        ckt_sha256_update(&s, le, 8);
        if (len) ckt_sha256_update(&s, parts[i], (size_t)len);
    }
    ckt_sha256_final(&s, d);
    for (int i = 0; i < 32; i++) {
        out[2 * i] = "0123456789abcdef"[d[i] >> 4];
        out[2 * i + 1] = "0123456789abcdef"[d[i] & 15];
    }
    out[64] = 0;
}

static int valid_key(const char *key)
{
    if (!key) return 0;
    for (int i = 0; i < CKT_CACHE_KEY_LEN; i++)
        if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f'))) return 0;
    return key[CKT_CACHE_KEY_LEN] == 0;
}

void ckt_cache_entry_path(const ckt_cache *c, const char *key, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%.64s.ckt", c ? c->dir : "", key ? key : "");
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void checksum(const void *data, size_t n, uint8_t out[32])
{
    ckt_sha256 s;
    ckt_sha256_init(&s);
    ckt_sha256_update(&s, data, n);
    ckt_sha256_final(&s, out);
}

/* Read a whole regular file of at most `limit` bytes. O_NONBLOCK: opening a FIFO put where an
 * entry should be would otherwise wait for a writer forever; fstat then refuses it. */
static uint8_t *slurp(const char *path, size_t limit, size_t *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return NULL;
    struct stat st;
    uint8_t *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= limit &&
        (buf = malloc((size_t)st.st_size + 1))) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        *n = got;
    }
    close(fd);
    return buf;
}

/* Read the entry at path: 1 and the payload on success; 0 on a miss, with *why (NULL: no entry)
 * the damage found in an entry, which is then removed when `remove` is set. */
static int read_entry(const char *path, const char *key, int remove, uint8_t **data, size_t *size,
                      const char **why)
{
    size_t n = 0;
    uint8_t *buf = slurp(path, HEADER_SIZE + MAX_PAYLOAD, &n);
    *why = NULL;
    if (!buf) return 0;
    uint8_t sum[32];
    uint64_t len = n >= HEADER_SIZE ? get_u64(buf + 80) : 0;
    if (n < HEADER_SIZE)
        *why = "truncated header";
    else if (memcmp(buf, MAGIC, 8))
        *why = "bad magic";
    else if (get_u32(buf + 8) != CKT_CACHE_FORMAT_VERSION)
        *why = "another format version";
    else if (get_u32(buf + 12) != HEADER_SIZE)
        *why = "bad header size";
    else if (memcmp(buf + 16, key, CKT_CACHE_KEY_LEN))
        *why = "key mismatch";
    else if (len != n - HEADER_SIZE)
        *why = "payload length mismatch (truncated?)";
    else if (checksum(buf + HEADER_SIZE, (size_t)len, sum), memcmp(sum, buf + 88, 32))
        *why = "checksum mismatch";
    if (*why) {
        if (remove) unlink(path); /* so the next compile rewrites it */
        free(buf);
        return 0;
    }
    memmove(buf, buf + HEADER_SIZE, (size_t)len);
    *data = buf;
    *size = (size_t)len;
    return 1;
}

int ckt_cache_lookup(ckt_cache *c, const char *key, uint8_t **data, size_t *size, char *why,
                     size_t cap)
{
    if (why && cap) snprintf(why, cap, "no entry");
    if (!c || !valid_key(key) || !data || !size) {
        if (why && cap) snprintf(why, cap, "%s", c ? "bad arguments" : "no cache");
        return 0;
    }
    if (!c->enabled && !c->install_dir[0]) {
        if (why && cap) snprintf(why, cap, "%s", c->note);
        return 0;
    }
    char path[4200];
    const char *damage = NULL;
    for (int where = 1; where <= 2; where++) {
        const char *dir = where == 1 ? (c->enabled ? c->dir : "") : c->install_dir;
        if (!dir[0]) continue;
        snprintf(path, sizeof path, "%s/%.64s.ckt", dir, key);
        const char *bad;
        if (read_entry(path, key, where == 1, data, size, &bad)) {
            count(c, &c->stats.hits, 1);
            return where;
        }
        if (bad && where == 1) {
            count(c, &c->stats.corrupt, 1);
            note(c, "compile cache: removed a damaged entry (%s): %.300s", bad, path);
        }
        if (bad && !damage) {
            damage = bad;
            if (why && cap)
                snprintf(why, cap, "a damaged entry (%s)%s: %.300s", bad,
                         where == 1 ? " was removed" : " in the installed cache", path);
        }
    }
    count(c, &c->stats.misses, 1);
    return 0;
}

int ckt_cache_get(ckt_cache *c, const char *key, uint8_t **data, size_t *size)
{
    return ckt_cache_lookup(c, key, data, size, NULL, 0) != 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        b += w, n -= (size_t)w;
    }
    return 0;
}

int ckt_cache_put(ckt_cache *c, const char *key, const void *data, size_t size)
{
    if (!c || !c->enabled || !valid_key(key) || (!data && size) || size > MAX_PAYLOAD) return 0;
    uint8_t h[HEADER_SIZE];
    memcpy(h, MAGIC, 8);
    put_u32(h + 8, CKT_CACHE_FORMAT_VERSION);
    put_u32(h + 12, HEADER_SIZE);
    memcpy(h + 16, key, CKT_CACHE_KEY_LEN);
    put_u64(h + 80, size);
    checksum(data, size, h + 88);
    char tmp[4200], path[4200];
    int fd = temp_file(c, key, tmp, sizeof tmp);
    if (fd < 0) {
        count(c, &c->stats.write_failures, 1);
        note(c, "compile cache: cannot write in %.300s: %s", c->dir, strerror(errno));
        return 0;
    }
    int bad = write_all(fd, h, sizeof h) || write_all(fd, data, size) || fsync(fd);
    int e = errno;
    bad |= close(fd) != 0;
    ckt_cache_entry_path(c, key, path, sizeof path);
    if (bad || rename(tmp, path) != 0) {
        if (!bad) e = errno;
        unlink(tmp);
        count(c, &c->stats.write_failures, 1);
        note(c, "compile cache: writing %.300s failed: %s", path, strerror(e));
        return 0;
    }
    count(c, &c->stats.writes, 1);
    return 1;
}

int ckt_cache_remove_stale(ckt_cache *c, double max_age_s)
{
    if (!c || !c->enabled) return 0;
    DIR *d = opendir(c->dir);
    if (!d) return 0;
    int removed = 0;
    time_t now = time(NULL);
    struct dirent *e;
    char path[4400];
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, ".tmp-", 5)) continue;
        snprintf(path, sizeof path, "%s/%s", c->dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            difftime(now, st.st_mtime) >= max_age_s && unlink(path) == 0)
            removed++;
    }
    closedir(d);
    count(c, &c->stats.stale_removed, removed);
    return removed;
}
