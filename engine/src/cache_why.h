/* Why a compile missed the compile cache: the parts of its key kept readable beside the entries,
 * so that a miss can name the part that changed (the compiler's version, the options, the
 * source, the ckt version). Not installed; jit.c uses it. */
#ifndef CKT_CACHE_WHY_H
#define CKT_CACHE_WHY_H

#include <stdbool.h>

#include "ckt/cache.h"

/* The parts of a compile's cache key. */
typedef struct ckt_cache_parts {
    const char *target, *kernel_name; /* which record file */
    const char *version;              /* the entry format and the ckt version */
    const char *compiler;             /* the compiler's identity and version */
    const char *const *options;
    int noptions;
    const char *source;
    bool light; /* CKT_COMPILE_LIGHT */
} ckt_cache_parts;

/* After an entry was written: remember its parts (the newest first, a few per target and kernel
 * name). Never fails: a record that cannot be written only makes a later reason vaguer. */
void ckt_cache_why_record(ckt_cache *c, const ckt_cache_parts *p);
/* After a miss: into out, "miss: " and the reason. lookup_why is what ckt_cache_lookup said (a
 * damaged entry is the reason itself); else the closest record of the cache's directory and the
 * install's cache names the parts that differ, or says nothing was cached for this kernel name
 * and target. */
void ckt_cache_why_miss(const ckt_cache *c, const ckt_cache_parts *p, const char *lookup_why,
                        char *out, size_t cap);

#endif
