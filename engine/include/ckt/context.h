/* ckt — the engine context: owns the compile cache and the loaded GPU runtimes
 * (the only mutable state in the engine). Everything else is a value. */
#ifndef CKT_CONTEXT_H
#define CKT_CONTEXT_H

#include "ckt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_context ckt_context;

typedef struct ckt_context_options {
    const char *cache_dir; /* NULL: $CKT_CACHE_DIR, else $XDG_CACHE_HOME/ckt, else ~/.cache/ckt */
    int disable_cache;     /* nonzero: never read or write the disk cache */
    const char *default_target; /* NULL: "cpu" */
} ckt_context_options;

ckt_status ckt_context_create(const ckt_context_options *opts /* may be NULL */, ckt_context **out,
                              ckt_error *err);
void ckt_context_destroy(ckt_context *ctx);
const char *ckt_context_default_target(const ckt_context *ctx);
ckt_status ckt_context_set_default_target(ckt_context *ctx, const char *target, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
