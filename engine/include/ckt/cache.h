/* ckt — the on-disk compile cache. Entries are files <dir>/<key>.ckt holding a header
 * (magic, format version, key, payload length, SHA-256 of the payload) and the payload.
 * Writes are atomic (a unique temporary file in the same directory, fsync, rename), so
 * concurrent processes are safe and a kill -9 mid-write leaves at most a temporary file,
 * which later opens remove once stale. A corrupt, truncated or wrong-version entry is
 * detected, removed and counts as a miss. An unusable directory (missing and not
 * creatable, read-only) disables caching with a note: never an error. */
#ifndef CKT_CACHE_H
#define CKT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ckt/context.h"
#include "ckt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKT_CACHE_FORMAT_VERSION 1
#define CKT_CACHE_KEY_LEN 64 /* hex SHA-256 */

typedef struct ckt_cache ckt_cache;

typedef struct ckt_cache_stats {
    int64_t hits, misses, corrupt, writes, write_failures, stale_removed;
} ckt_cache_stats;

/* dir NULL: $CKT_CACHE_DIR, else $XDG_CACHE_HOME/ckt, else $HOME/.cache/ckt. Fails only on
 * NULL out or no memory; an unusable directory gives a disabled cache with a note. */
ckt_status ckt_cache_open(const char *dir, ckt_cache **out, ckt_error *err);
void ckt_cache_close(ckt_cache *c);
int ckt_cache_enabled(const ckt_cache *c);
const char *ckt_cache_dir(const ckt_cache *c);  /* the resolved directory ("" when none) */
const char *ckt_cache_note(const ckt_cache *c); /* why caching is off or degraded; "" when fine */
/* The install's read-only cache, looked in after dir: $CKT_INSTALL_CACHE_DIR when set (empty:
 * none), else <libdir>/ckt/cache of the installed build ("" when none). */
const char *ckt_cache_install_dir(const ckt_cache *c);
ckt_cache_stats ckt_cache_get_stats(const ckt_cache *c);

/* The key of a list of parts (length-prefixed, so ("ab","c") != ("a","bc")): 64 hex digits + NUL.
 */
void ckt_cache_key(const char *const *parts, const size_t *lens, int n,
                   char out[CKT_CACHE_KEY_LEN + 1]);

/* 1 and a malloc'd copy of the payload on a hit; 0 on a miss (including a corrupt entry,
 * which is removed). key must be 64 lowercase hex digits. */
int ckt_cache_get(ckt_cache *c, const char *key, uint8_t **data, size_t *size);
/* The same, saying where: 1 a hit in the cache's directory, 2 in the install's cache (damaged
 * entries there are skipped, not removed); 0 a miss, and `why` (may be NULL) says "no entry",
 * "a damaged entry (checksum mismatch) was removed: <path>" or why the cache is off. */
int ckt_cache_lookup(ckt_cache *c, const char *key, uint8_t **data, size_t *size, char *why,
                     size_t cap);
/* 1 when stored; 0 when not (caching off, disk full: a note says why). */
int ckt_cache_put(ckt_cache *c, const char *key, const void *data, size_t size);
/* Remove temporary files older than max_age_s seconds (writers that died); returns how many. */
int ckt_cache_remove_stale(ckt_cache *c, double max_age_s);
/* The file an entry lives in (for tests and tools). */
void ckt_cache_entry_path(const ckt_cache *c, const char *key, char *out, size_t cap);

/* The context's cache: opened on first use from the context options; NULL when disabled
 * by the options (disable_cache) or ctx is NULL. */
ckt_cache *ckt_context_cache(ckt_context *ctx);

/* SHA-256 (FIPS 180-4). */
typedef struct ckt_sha256 {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t fill;
} ckt_sha256;
void ckt_sha256_init(ckt_sha256 *s);
void ckt_sha256_update(ckt_sha256 *s, const void *data, size_t n);
void ckt_sha256_final(ckt_sha256 *s, uint8_t out[32]);
void ckt_sha256_hex(const void *data, size_t n, char out[65]);

#ifdef __cplusplus
}
#endif
#endif
