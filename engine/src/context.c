#include "ckt/context.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/cache.h"

struct ckt_context {
    char default_target[64];
    char cache_dir[4096];
    int disable_cache;
    /* the compile cache, opened on first use (most scripts never compile) */
    pthread_mutex_t cache_lock;
    int cache_opened;
    ckt_cache *cache;
};

ckt_status ckt_context_create(const ckt_context_options *opts, ckt_context **out, ckt_error *err)
{
    if (!out) return ckt_fail(err, CKT_EINVAL, "context_create: out is NULL");
    ckt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return ckt_fail(err, CKT_ENOMEM, "context_create: out of memory");
    strcpy(ctx->default_target, "cpu");
    pthread_mutex_init(&ctx->cache_lock, NULL);
    if (opts) {
        if (opts->default_target) {
            ckt_status s = ckt_context_set_default_target(ctx, opts->default_target, err);
            if (s) {
                ckt_context_destroy(ctx);
                return s;
            }
        }
        if (opts->cache_dir) {
            size_t n = strlen(opts->cache_dir);
            if (n >= sizeof ctx->cache_dir) {
                ckt_context_destroy(ctx);
                return ckt_fail(err, CKT_EINVAL,
                                "context_create: cache_dir is longer than %zu bytes",
                                sizeof ctx->cache_dir - 1);
            }
            memcpy(ctx->cache_dir, opts->cache_dir, n + 1);
        }
        ctx->disable_cache = opts->disable_cache;
    }
    *out = ctx;
    return CKT_OK;
}

void ckt_context_destroy(ckt_context *ctx)
{
    if (!ctx) return;
    ckt_cache_close(ctx->cache);
    pthread_mutex_destroy(&ctx->cache_lock);
    free(ctx);
}

ckt_cache *ckt_context_cache(ckt_context *ctx)
{
    if (!ctx || ctx->disable_cache) return NULL;
    pthread_mutex_lock(&ctx->cache_lock);
    if (!ctx->cache_opened) {
        ctx->cache_opened = 1;
        if (ckt_cache_open(ctx->cache_dir[0] ? ctx->cache_dir : NULL, &ctx->cache, NULL) != CKT_OK)
            ctx->cache = NULL;
    }
    pthread_mutex_unlock(&ctx->cache_lock);
    return ctx->cache;
}

const char *ckt_context_default_target(const ckt_context *ctx)
{
    return ctx ? ctx->default_target : "cpu";
}

ckt_status ckt_context_set_default_target(ckt_context *ctx, const char *target, ckt_error *err)
{
    if (!ctx) return ckt_fail(err, CKT_EINVAL, "set_default_target: context is NULL");
    if (!target || !*target)
        return ckt_fail(err, CKT_EINVAL, "set_default_target: target name is empty");
    size_t n = strlen(target);
    if (n >= sizeof ctx->default_target)
        return ckt_fail(err, CKT_EINVAL, "set_default_target: target name '%.32s...' is too long",
                        target);
    memcpy(ctx->default_target, target, n + 1);
    return CKT_OK;
}
