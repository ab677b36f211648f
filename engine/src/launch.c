/* Launches and copies (ckt/runtime.h): the backend-independent part above streams (stream.c) and
 * devices (device.c). Everything a caller can get wrong is checked here (sizes, offsets, dims,
 * argument count/kinds, pointers that do not belong to a live buffer of the device), so a backend
 * only sees valid requests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckt/runtime.h"
#include "ckt/stream.h"
#include "runtime_internal.h"

static ckt_status check_range(const char *fn, const char *which, const ckt_buffer *b, size_t off,
                              size_t n, ckt_error *err)
{
    if (!b) return ckt_fail(err, CKT_EINVAL, "%s: %s buffer is NULL", fn, which);
    if (off > b->size || n > b->size - off)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: %zu bytes at offset %zu do not fit the %s buffer of %zu bytes", fn, n,
                        off, which, b->size);
    return CKT_OK;
}

/* s (NULL: the default) may take work for dev; a capturing stream takes launches only */
static ckt_status check_stream(const char *fn, ckt_device *dev, ckt_stream *s, ckt_error *err)
{
    if (s && s->dev != dev)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: the stream belongs to another device (%s) than the %s (%s)", fn,
                        s->dev->name, strcmp(fn, "launch") ? "buffer" : "launch", dev->name);
    if (s && s->capturing && strcmp(fn, "launch"))
        return ckt_fail(err, CKT_EINVAL,
                        "%s: the stream is capturing a graph (only launches are captured)", fn);
    return CKT_OK;
}

/* One copy or fill enqueued on s, the buffers' uses noted (a free waits for them). */
static ckt_status enqueue_copy(const char *fn, ckt_stream *s, ckt_copy_kind kind, ckt_buffer *db,
                               void *dst, const ckt_buffer *sb, const void *src, size_t n, int fill,
                               ckt_error *err)
{
    ckt_device *dev = (db ? db : sb)->dev;
    ckt_status st = check_stream(fn, dev, s, err);
    if (st || !n) return st;
    s = ckt_stream_or_default(dev, s);
    pthread_mutex_lock(&dev->lock);
    if (db) ckt_stream_note_use(s, db);
    if (sb) ckt_stream_note_use(s, (ckt_buffer *)sb);
    st = fill >= 0 ? dev->ops->memset(dev, s->impl, dst, (uint8_t)fill, n, err)
                   : dev->ops->copy(dev, s->impl, kind, dst, src, n, err);
    if (!st) s->seq++;
    pthread_mutex_unlock(&dev->lock);
    if (st) return ckt_fail_prefix(err, kind == CKT_COPY_D2H ? "download: " : "");
    return CKT_OK;
}

ckt_status ckt_buffer_upload_async(ckt_buffer *dst, size_t off, const void *src, size_t n,
                                   ckt_stream *s, ckt_error *err)
{
    ckt_status st = check_range("upload", "destination", dst, off, n, err);
    if (st) return st;
    if (!src && n) return ckt_fail(err, CKT_EINVAL, "upload: host source is NULL");
    return enqueue_copy("upload", s, CKT_COPY_H2D, dst, (char *)dst->ptr + off, NULL, src, n, -1,
                        err);
}

ckt_status ckt_buffer_download_async(const ckt_buffer *src, size_t off, void *dst, size_t n,
                                     ckt_stream *s, ckt_error *err)
{
    ckt_status st = check_range("download", "source", src, off, n, err);
    if (st) return st;
    if (!dst && n) return ckt_fail(err, CKT_EINVAL, "download: host destination is NULL");
    /* lands before the call returns (pageable memory): a synchronization point of the stream */
    st = enqueue_copy("download", s, CKT_COPY_D2H, NULL, dst, src, (const char *)src->ptr + off, n,
                      -1, err);
    return st ? st : ckt_stream_synchronize(ckt_stream_or_default(src->dev, s), err);
}

ckt_status ckt_buffer_copy_async(ckt_buffer *dst, size_t doff, const ckt_buffer *src, size_t soff,
                                 size_t n, ckt_stream *s, ckt_error *err)
{
    ckt_status st = check_range("copy", "destination", dst, doff, n, err);
    if (!st) st = check_range("copy", "source", src, soff, n, err);
    if (st) return st;
    if (dst->dev != src->dev)
        return ckt_fail(err, CKT_EINVAL, "copy: the buffers belong to different devices");
    return enqueue_copy("copy", s, CKT_COPY_D2D, dst, (char *)dst->ptr + doff, src,
                        (const char *)src->ptr + soff, n, -1, err);
}

ckt_status ckt_buffer_memset_async(ckt_buffer *dst, size_t off, uint8_t byte, size_t n,
                                   ckt_stream *s, ckt_error *err)
{
    ckt_status st = check_range("memset", "destination", dst, off, n, err);
    if (st) return st;
    return enqueue_copy("memset", s, CKT_COPY_D2D, dst, (char *)dst->ptr + off, NULL, NULL, n, byte,
                        err);
}

/* The synchronous copies wait for the whole device first (every stream: so they see the results
 * of work enqueued anywhere, and errors of earlier work surface here, named), then copy on the
 * default stream and wait for it. */
static ckt_status sync_copy(ckt_buffer *db, const ckt_buffer *sb, size_t doff, size_t soff,
                            const void *src, void *dst, size_t n, int fill, ckt_error *err)
{
    ckt_device *dev = db ? db->dev : sb ? sb->dev : NULL;
    ckt_status st = dev ? ckt_device_synchronize(dev, err) : CKT_OK; /* NULL: refused below */
    if (st) return st;
    if (fill >= 0)
        st = ckt_buffer_memset_async(db, doff, (uint8_t)fill, n, NULL, err);
    else if (db && sb)
        st = ckt_buffer_copy_async(db, doff, sb, soff, n, NULL, err);
    else if (db || !sb)
        st = ckt_buffer_upload_async(db, doff, src, n, NULL, err);
    else
        return ckt_buffer_download_async(sb, soff, dst, n, NULL, err); /* waits itself */
    return st ? st : ckt_stream_synchronize(&dev->default_stream, err);
}

ckt_status ckt_buffer_upload(ckt_buffer *dst, size_t off, const void *src, size_t n, ckt_error *err)
{
    return sync_copy(dst, NULL, off, 0, src, NULL, n, -1, err);
}

ckt_status ckt_buffer_download(const ckt_buffer *src, size_t off, void *dst, size_t n,
                               ckt_error *err)
{
    if (!src) return ckt_fail(err, CKT_EINVAL, "download: source buffer is NULL");
    return sync_copy(NULL, src, 0, off, NULL, dst, n, -1, err);
}

ckt_status ckt_buffer_copy(ckt_buffer *dst, size_t doff, const ckt_buffer *src, size_t soff,
                           size_t n, ckt_error *err)
{
    if (!dst || !src)
        return ckt_fail(err, CKT_EINVAL, "copy: %s buffer is NULL", dst ? "source" : "destination");
    return sync_copy(dst, src, doff, soff, NULL, NULL, n, -1, err);
}

ckt_status ckt_buffer_memset(ckt_buffer *dst, size_t off, uint8_t byte, size_t n, ckt_error *err)
{
    return sync_copy(dst, NULL, off, 0, NULL, NULL, n, byte, err);
}

/* ---- launches ---- */

static const char *param_kind_name(ckt_param_kind k)
{
    return k == CKT_PARAM_PTR   ? "pointer"
           : k == CKT_PARAM_I32 ? "i32"
           : k == CKT_PARAM_I64 ? "i64"
                                : "f32";
}

/* ... and bufs[*nbufs] the live buffers the pointer arguments point into. */
static ckt_status check_args(ckt_device *dev, const ckt_launch_params *p, ckt_buffer **bufs,
                             int *nbufs, ckt_error *err)
{
    *nbufs = 0;
    if (p->arg_count < 0)
        return ckt_fail(err, CKT_EINVAL, "launch: arg_count %d is negative", p->arg_count);
    if (p->arg_count > 0 && !p->args)
        return ckt_fail(err, CKT_EINVAL, "launch: args is NULL with arg_count %d", p->arg_count);
    if (!p->signature && p->signature_count)
        return ckt_fail(err, CKT_EINVAL, "launch: signature is NULL");
    if (p->arg_count != p->signature_count)
        return ckt_fail(err, CKT_EINVAL, "launch: the kernel takes %d arguments, got %d",
                        p->signature_count, p->arg_count);
    for (int i = 0; i < p->arg_count; i++) {
        const ckt_param *s = &p->signature[i];
        const char *nm = s->name ? s->name : "?";
        if (!ckt_param_size(s->kind))
            return ckt_fail(err, CKT_EINVAL, "launch: parameter %d '%s' has an unknown kind %d", i,
                            nm, (int)s->kind);
        /* a launch copies each value (enqueued, the caller's may go at once): a tensor map is
         * 128 bytes the executable's launch makes itself, never a caller's value here */
        if (s->kind == CKT_PARAM_TMAP)
            return ckt_fail(err, CKT_EINVAL,
                            "launch: parameter %d '%s' is a tensor map, which only an executable's "
                            "launch derives (a raw launch takes ptr, i32, i64 and f32 values)",
                            i, nm);
        if (!p->args[i])
            return ckt_fail(err, CKT_EINVAL,
                            "launch: argument %d '%s' (%s) is a NULL pointer to its value", i, nm,
                            param_kind_name(s->kind));
        if (s->kind != CKT_PARAM_PTR) continue;
        char *ptr;
        memcpy(&ptr, p->args[i], sizeof ptr);
        if (!ptr)
            return ckt_fail(err, CKT_EINVAL, "launch: argument %d '%s' is a NULL device pointer", i,
                            nm);
        ckt_buffer *found = NULL;
        pthread_mutex_lock(&dev->lock);
        for (ckt_buffer *b = dev->buffers; b && !found; b = b->next)
            if (ptr >= (char *)b->ptr && ptr < (char *)b->ptr + b->size) found = b;
        pthread_mutex_unlock(&dev->lock);
        if (found) bufs[(*nbufs)++] = found;
        if (!found)
            return ckt_fail(
                err, CKT_EINVAL,
                "launch: argument %d '%s' (%p) is not inside a live buffer of this %s device", i,
                nm, (void *)ptr, ckt_backend_name(dev->backend));
    }
    return CKT_OK;
}

/* What does not depend on the argument values: the binary suits the device. */
ckt_status ckt_runtime_check_binary(ckt_device *dev, const ckt_binary *bin,
                                    const ckt_target_record *t, ckt_error *err)
{
    if (ckt_binary_compile_only(bin))
        return ckt_fail(err, CKT_EINVAL,
                        "launch: '%s' for %s was compiled compile-only; compile it again to run it",
                        ckt_binary_kernel_name(bin), t->name);
    if (t->runtime != dev->backend)
        return ckt_fail(err, CKT_EINVAL, "launch: a binary for %s cannot run on the %s device (%s)",
                        t->name, ckt_backend_name(dev->backend), dev->name);
    return dev->backend == CKT_BACKEND_CUDA ? ckt_target_check_device(t, dev->target, err) : CKT_OK;
}

/* Enqueue between two events on s, wait for the stream (its errors named), and measure. */
ckt_status ckt_runtime_timed(ckt_stream *s, double *ms, ckt_status (*enqueue)(void *), void *ctx,
                             ckt_error *err)
{
    ckt_event *a = NULL, *b = NULL;
    ckt_status st = ckt_stream_record(s, &a, err);
    if (!st) st = enqueue(ctx);
    if (!st) st = ckt_stream_record(s, &b, err);
    if (!st) st = ckt_stream_synchronize(s, err);
    if (!st) st = s->dev->ops->event_elapsed(s->dev, a->impl, b->impl, ms, err);
    ckt_event_free(a);
    ckt_event_free(b);
    return st;
}

typedef struct {
    ckt_stream *s;
    const ckt_binary *bin;
    const ckt_launch_params *p;
    ckt_buffer **bufs;
    int nbufs;
    ckt_error *err;
} raw_launch;

static ckt_status raw_enqueue(void *ctx)
{
    raw_launch *r = ctx;
    return ckt_stream_enqueue(r->s, r->bin, r->p, r->bufs, r->nbufs, r->err);
}

/* ckt_launch and ckt_launch_async: everything checked, then enqueued (and waited for). */
static ckt_status launch(ckt_device *dev, const ckt_binary *bin, const ckt_launch_params *p,
                         ckt_stream *s, double *ms, ckt_error *err)
{
    if (!dev) return ckt_fail(err, CKT_EINVAL, "launch: device is NULL");
    if (!bin) return ckt_fail(err, CKT_EINVAL, "launch: binary is NULL");
    if (!p) return ckt_fail(err, CKT_EINVAL, "launch: parameters are NULL");
    ckt_target_record t;
    ckt_status st = ckt_target_parse(ckt_binary_target(bin), &t, err);
    if (!st) st = ckt_runtime_check_binary(dev, bin, &t, err);
    if (!st) st = check_stream("launch", dev, s, err);
    if (!st && ms && s && s->capturing)
        st = ckt_fail(err, CKT_EINVAL, "launch: a timed launch waits, which a capture cannot");
    if (st) return st;
    ckt_buffer *bufs[256];
    int nbufs = 0;
    if (p->arg_count > 256) return ckt_fail(err, CKT_EINVAL, "launch: more than 256 arguments");
    if ((st = check_args(dev, p, bufs, &nbufs, err))) return st;
    raw_launch r = {ckt_stream_or_default(dev, s), bin, p, bufs, nbufs, err};
    return ms ? ckt_runtime_timed(r.s, ms, raw_enqueue, &r, err) : raw_enqueue(&r);
}

ckt_status ckt_launch(ckt_device *dev, const ckt_binary *bin, const ckt_launch_params *p,
                      double *ms, ckt_error *err)
{
    double dummy;
    return launch(dev, bin, p, NULL, ms ? ms : &dummy, err);
}

ckt_status ckt_launch_on(ckt_device *dev, const ckt_binary *bin, const ckt_launch_params *p,
                         ckt_stream *s, double *ms, ckt_error *err)
{
    return launch(dev, bin, p, s, ms, err);
}

ckt_status ckt_launch_async(ckt_device *dev, const ckt_binary *bin, const ckt_launch_params *p,
                            ckt_stream *s, ckt_error *err)
{
    return launch(dev, bin, p, s, NULL, err);
}
