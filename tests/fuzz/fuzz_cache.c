/* The compile cache's entry reader on arbitrary files. An entry file for a key holds either the
 * fuzz bytes as they are, or a valid entry (written by ckt_cache_put) damaged at positions the
 * input chooses: flipped bytes, truncation, appended bytes. The only acceptable outcomes:
 *  - a hit, and then the file is byte for byte the entry ckt_cache_put writes for that key and
 *    payload (nothing else is ever loaded as a kernel), and a damaged template never hits;
 *  - a miss, and then the damaged file is gone (the next compile rewrites it).
 * Never a crash, an out-of-bounds read (ASan) or a leak. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckt/cache.h"
#include "fuzz_common.h"

static char dir[64], refdir[64];
static ckt_cache *cache, *ref;
static char key[CKT_CACHE_KEY_LEN + 1], path[4200];
static uint8_t *tmpl;   /* a valid entry for `key` */
static size_t tmpl_size;
static const char payload[] = "\177ELF pretend code object for the fuzz target";

static uint8_t *read_file(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    uint8_t *buf = malloc(1 << 16);
    *n = buf ? fread(buf, 1, 1 << 16, f) : 0;
    fclose(f);
    return buf;
}

static void write_file(const char *p, const uint8_t *data, size_t n)
{
    FILE *f = fopen(p, "wb");
    if (!f) abort();
    if (n && fwrite(data, 1, n, f) != n) abort();
    fclose(f);
}

static void remove_dir(const char *d, ckt_cache *c)
{
    char p[4200];
    ckt_cache_entry_path(c, key, p, sizeof p);
    unlink(p);
    ckt_cache_remove_stale(c, 0);
    rmdir(d);
}

static void teardown(void)
{
    remove_dir(dir, cache);
    remove_dir(refdir, ref);
    ckt_cache_close(cache);
    ckt_cache_close(ref);
    free(tmpl);
}

static void setup(void)
{
    ckt_error err;
    if (cache) return;
    strcpy(dir, "/tmp/ckt-fuzz-cache-XXXXXX");
    strcpy(refdir, "/tmp/ckt-fuzz-cache-ref-XXXXXX");
    if (!mkdtemp(dir) || !mkdtemp(refdir)) abort();
    if (ckt_cache_open(dir, &cache, &err) || ckt_cache_open(refdir, &ref, &err)) abort();
    if (!ckt_cache_enabled(cache) || !ckt_cache_enabled(ref)) abort();
    const char *parts[] = {"fuzz", "cpu"};
    ckt_cache_key(parts, NULL, 2, key);
    ckt_cache_entry_path(cache, key, path, sizeof path);
    if (!ckt_cache_put(cache, key, payload, sizeof payload)) abort();
    tmpl = read_file(path, &tmpl_size);
    if (!tmpl) abort();
    unlink(path);
    atexit(teardown);
}

/* the file ckt_cache_put writes for (key, data) */
static int is_canonical(const uint8_t *file, size_t n, const uint8_t *data, size_t size)
{
    char p[4200];
    ckt_cache_entry_path(ref, key, p, sizeof p);
    if (!ckt_cache_put(ref, key, data, size)) abort();
    size_t m;
    uint8_t *want = read_file(p, &m);
    int same = want && m == n && memcmp(want, file, n) == 0;
    free(want);
    unlink(p);
    return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    fuzz_input in = {data, size};
    uint8_t *file;
    size_t n;
    int damaged = 0, raw = fz_u8(&in) & 1;
    if (raw) { /* the raw bytes */
        n = in.n;
        file = malloc(n + 1);
        if (!file) return 0;
        memcpy(file, in.p, n);
    } else { /* the template, damaged */
        n = tmpl_size;
        file = malloc(tmpl_size + 256);
        if (!file) return 0;
        memcpy(file, tmpl, tmpl_size);
        int flips = fz_u8(&in) % 4;
        for (int i = 0; i < flips; i++) {
            size_t at = ((size_t)fz_u8(&in) << 8 | fz_u8(&in)) % tmpl_size;
            uint8_t x = fz_u8(&in);
            file[at] ^= x;
        }
        uint8_t cut = fz_u8(&in);
        if (cut % 3 == 1) n = ((size_t)fz_u8(&in) << 8 | fz_u8(&in)) % tmpl_size;
        if (cut % 3 == 2) {
            size_t extra = 1 + fz_u8(&in) % 255;
            memset(file + n, fz_u8(&in), extra);
            n += extra;
        }
        damaged = n != tmpl_size || memcmp(file, tmpl, n) != 0; /* two flips may cancel */
    }
    write_file(path, file, n);
    uint8_t *got = NULL;
    size_t got_size = 0;
    if (ckt_cache_get(cache, key, &got, &got_size)) {
        FUZZ_CHECK(!damaged);
        if (raw) FUZZ_CHECK(is_canonical(file, n, got, got_size)); /* (the template is put's own output) */
        else FUZZ_CHECK(got_size == sizeof payload && memcmp(got, payload, got_size) == 0);
        free(got);
        unlink(path);
    } else {
        struct stat st;
        FUZZ_CHECK(stat(path, &st) != 0); /* the damaged entry was removed */
    }
    free(file);
    return 0;
}
