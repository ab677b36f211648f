#include "ckt/context.h"

#include <stdlib.h>
#include <string.h>

struct ckt_context {
    char default_target[64];
    char cache_dir[4096];
    int disable_cache;
};

ckt_status ckt_context_create(const ckt_context_options *opts, ckt_context **out, ckt_error *err)
{
    if (!out) return ckt_fail(err, CKT_EINVAL, "context_create: out is NULL");
    ckt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return ckt_fail(err, CKT_ENOMEM, "context_create: out of memory");
    strcpy(ctx->default_target, "cpu");
    if (opts) {
        if (opts->default_target) {
            ckt_status s = ckt_context_set_default_target(ctx, opts->default_target, err);
            if (s) { free(ctx); return s; }
        }
        if (opts->cache_dir) {
            size_t n = strlen(opts->cache_dir);
            if (n >= sizeof ctx->cache_dir) { free(ctx); return ckt_fail(err, CKT_EINVAL, "context_create: cache_dir is longer than %zu bytes", sizeof ctx->cache_dir - 1); }
            memcpy(ctx->cache_dir, opts->cache_dir, n + 1);
        }
        ctx->disable_cache = opts->disable_cache;
    }
    *out = ctx;
    return CKT_OK;
}

void ckt_context_destroy(ckt_context *ctx) { free(ctx); }

const char *ckt_context_default_target(const ckt_context *ctx) { return ctx ? ctx->default_target : "cpu"; }

ckt_status ckt_context_set_default_target(ckt_context *ctx, const char *target, ckt_error *err)
{
    if (!ctx) return ckt_fail(err, CKT_EINVAL, "set_default_target: context is NULL");
    if (!target || !*target) return ckt_fail(err, CKT_EINVAL, "set_default_target: target name is empty");
    size_t n = strlen(target);
    if (n >= sizeof ctx->default_target) return ckt_fail(err, CKT_EINVAL, "set_default_target: target name '%.32s...' is too long", target);
    memcpy(ctx->default_target, target, n + 1);
    return CKT_OK;
}
