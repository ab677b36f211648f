/* Devices and buffers: the backend-independent part below streams and launches. A device is
 * reference counted (buffers, streams, events and graphs each hold a reference); a buffer freed
 * while enqueued work still uses it is retired: its memory waits, behind an event on each stream
 * that used it, until that work is done (ckt_runtime_reap). The loaded kernels are cached per
 * device; one that a graph replays is pinned. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/runtime.h"
#include "ckt/stream.h"
#include "runtime_internal.h"

uint64_t ckt_runtime_stream_id(void)
{
    static atomic_uint_fast64_t counter = 0;
    return (uint64_t)atomic_fetch_add(&counter, 1) + 1;
}

static void init_default_stream(ckt_device *dev)
{
    memset(&dev->default_stream, 0, sizeof dev->default_stream);
    dev->default_stream.dev = dev;
    dev->default_stream.id = ckt_runtime_stream_id();
    dev->default_stream.is_default = true;
}

/* The stream of this device with this id (NULL: destroyed, so synchronized). dev->lock held. */
ckt_stream *ckt_runtime_find_stream_locked(ckt_device *dev, uint64_t id)
{
    if (dev->default_stream.id == id) return &dev->default_stream;
    for (ckt_stream *s = dev->streams; s; s = s->next)
        if (s->id == id) return s;
    return NULL;
}

ckt_status ckt_backend_for(const char *name, ckt_backend *out, ckt_error *err)
{
    if (!out) return ckt_fail(err, CKT_EINVAL, "device: out is NULL");
    if (!name || !*name)
        return ckt_fail(err, CKT_EINVAL,
                        "device: backend name is empty (cpu, cuda, hip or a target)");
    ckt_target_record t;
    ckt_error ignored;
    if (!strcmp(name, "cuda"))
        *out = CKT_BACKEND_CUDA;
    else if (!strcmp(name, "hip"))
        *out = CKT_BACKEND_HIP;
    else if (ckt_target_parse(name, &t, &ignored) == CKT_OK)
        *out = t.runtime;
    else
        return ckt_fail(err, CKT_EUNSUPPORTED,
                        "device: unknown backend '%.64s' (cpu, cuda, hip, or a target: cpu:<gpu>, "
                        "sm_90, gfx90a)",
                        name);
    return CKT_OK;
}

static const ckt_backend_ops *ops_for(ckt_backend b)
{
    return b == CKT_BACKEND_CPU    ? &ckt_runtime_cpu_ops
           : b == CKT_BACKEND_CUDA ? &ckt_runtime_cuda_ops
                                   : &ckt_runtime_hip_ops;
}

ckt_status ckt_device_open(ckt_context *ctx, const char *name, ckt_device **out, ckt_error *err)
{
    (void)ctx; /* the backends' libraries are process-wide: loaded once, never unloaded */
    if (!out) return ckt_fail(err, CKT_EINVAL, "device: out is NULL");
    ckt_backend b;
    ckt_status st = ckt_backend_for(name, &b, err);
    if (st) return st;
    ckt_device *dev = calloc(1, sizeof *dev);
    if (!dev) return ckt_fail(err, CKT_ENOMEM, "device: out of memory");
    dev->backend = b;
    dev->ops = ops_for(b);
    dev->refs = 1;
    pthread_mutex_init(&dev->lock, NULL);
    init_default_stream(dev);
    if ((st = dev->ops->open(dev, err))) {
        pthread_mutex_destroy(&dev->lock);
        free(dev);
        return st;
    }
    *out = dev;
    return CKT_OK;
}

void ckt_device_retain(ckt_device *dev)
{
    if (!dev) return;
    pthread_mutex_lock(&dev->lock);
    dev->refs++;
    pthread_mutex_unlock(&dev->lock);
}

static void release(ckt_device *dev)
{
    pthread_mutex_lock(&dev->lock);
    int left = --dev->refs;
    pthread_mutex_unlock(&dev->lock);
    if (left > 0) return;
    /* no buffer, stream, event or graph is left (each holds a reference): what remains in flight
     * is retired buffers' memory and modules, both released after the device's work */
    dev->ops->sync(dev, NULL);
    ckt_runtime_reap(dev, true);
    for (int i = 0; i < CKT_MODULE_CACHE; i++)
        if (dev->modules[i].module) dev->ops->unload(dev, dev->modules[i].module);
    dev->ops->close(dev);
    pthread_mutex_destroy(&dev->lock);
    free(dev);
}

void ckt_device_close(ckt_device *dev)
{
    if (dev) release(dev);
}

ckt_backend ckt_device_backend(const ckt_device *dev)
{
    return dev ? dev->backend : CKT_BACKEND_CPU;
}
const char *ckt_device_name(const ckt_device *dev) { return dev ? dev->name : NULL; }
const char *ckt_device_target(const ckt_device *dev) { return dev ? dev->target : NULL; }

/* ---- buffers ---- */

ckt_status ckt_buffer_alloc(ckt_device *dev, size_t bytes, ckt_buffer **out, ckt_error *err)
{
    if (!dev) return ckt_fail(err, CKT_EINVAL, "alloc: device is NULL");
    if (!out) return ckt_fail(err, CKT_EINVAL, "alloc: out is NULL");
    if (bytes == 0) return ckt_fail(err, CKT_EINVAL, "alloc: size is 0 bytes (must be positive)");
    if (bytes > (size_t)1 << 46)
        return ckt_fail(err, CKT_EINVAL, "alloc: size %zu bytes is beyond any device (64 TiB)",
                        bytes);
    ckt_runtime_reap(dev, false);
    ckt_buffer *b = calloc(1, sizeof *b);
    if (!b) return ckt_fail(err, CKT_ENOMEM, "alloc: out of host memory");
    ckt_status st = dev->ops->alloc(dev, bytes, &b->ptr, err);
    if (st) {
        free(b);
        return st;
    }
    b->dev = dev;
    b->size = bytes;
    b->refs = 1;
    pthread_mutex_lock(&dev->lock);
    dev->refs++;
    b->next = dev->buffers;
    if (dev->buffers) dev->buffers->prev = b;
    dev->buffers = b;
    pthread_mutex_unlock(&dev->lock);
    *out = b;
    return CKT_OK;
}

void ckt_buffer_retain(ckt_buffer *b) { b->refs++; /* dev->lock held by the caller */ }

/* A reference gone; the last: the memory goes now or, when work in flight uses it, once that
 * work is done (ckt_stream_retire_locked), and the buffer's device reference goes now. */
static void drop(ckt_buffer *b, bool unlink)
{
    ckt_device *dev = b->dev;
    pthread_mutex_lock(&dev->lock);
    if (unlink) {
        if (b->prev)
            b->prev->next = b->next;
        else
            dev->buffers = b->next;
        if (b->next) b->next->prev = b->prev;
        b->prev = b->next = NULL;
        b->closed = true;
    }
    bool last = --b->refs == 0;
    if (last) ckt_runtime_retire_locked(b);
    pthread_mutex_unlock(&dev->lock);
    if (last) release(dev);
}

void ckt_buffer_release(ckt_buffer *b) { drop(b, false); }

void ckt_buffer_free(ckt_buffer *b)
{
    if (!b) return;
    ckt_runtime_reap(b->dev, false);
    drop(b, true);
}

void *ckt_buffer_ptr(const ckt_buffer *b) { return b ? b->ptr : NULL; }
size_t ckt_buffer_size(const ckt_buffer *b) { return b ? b->size : 0; }
ckt_device *ckt_buffer_device(const ckt_buffer *b) { return b ? b->dev : NULL; }

/* The loaded kernel for a binary: from the device's cache, else loaded (evicting the least
 * recently used one that no graph pins; work in flight may still run it, so the device's work
 * is waited for before it is unloaded). */
ckt_status ckt_runtime_module_for(ckt_device *dev, const ckt_binary *bin, void **module, void **fn,
                                  ckt_error *err)
{
    uint64_t id = ckt_binary_id(bin);
    pthread_mutex_lock(&dev->lock);
    int victim = -1;
    for (int i = 0; i < CKT_MODULE_CACHE; i++) {
        if (dev->modules[i].module && dev->modules[i].bin_id == id) {
            dev->modules[i].last_use = ++dev->clock;
            *module = dev->modules[i].module;
            *fn = dev->modules[i].fn;
            pthread_mutex_unlock(&dev->lock);
            return CKT_OK;
        }
        if (!dev->modules[i].pins &&
            (victim < 0 || dev->modules[i].last_use < dev->modules[victim].last_use))
            victim = i;
    }
    pthread_mutex_unlock(&dev->lock);
    if (victim < 0)
        return ckt_fail(err, CKT_ELIMIT,
                        "launch: every one of the %d loaded kernels is used by a live graph; free "
                        "a graph first",
                        CKT_MODULE_CACHE);
    ckt_status st = dev->ops->load(dev, bin, module, fn, err);
    if (st) return st;
    pthread_mutex_lock(&dev->lock);
    void *old = dev->modules[victim].module;
    dev->modules[victim].bin_id = id;
    dev->modules[victim].module = *module;
    dev->modules[victim].fn = *fn;
    dev->modules[victim].last_use = ++dev->clock;
    pthread_mutex_unlock(&dev->lock);
    if (old) {
        dev->ops->sync(dev, NULL);
        dev->ops->unload(dev, old);
    }
    return CKT_OK;
}

void ckt_runtime_pin_module(ckt_device *dev, uint64_t bin_id, int delta, bool locked)
{
    if (!locked) pthread_mutex_lock(&dev->lock);
    for (int i = 0; i < CKT_MODULE_CACHE; i++)
        if (dev->modules[i].module && dev->modules[i].bin_id == bin_id)
            dev->modules[i].pins += delta;
    if (!locked) pthread_mutex_unlock(&dev->lock);
}

void ckt_runtime_retire_locked(ckt_buffer *b)
{
    ckt_device *dev = b->dev;
    ckt_zombie *z = calloc(1, sizeof *z);
    if (!z) { /* cannot wait for it: wait for everything now (rare, and never wrong) */
        dev->ops->sync(dev, NULL);
        dev->ops->free(dev, b->ptr);
        free(b);
        return;
    }
    z->buf = b;
    z->all_streams = b->use_overflow;
    for (int i = 0; i < b->nuse && !z->all_streams; i++) {
        ckt_stream *s = ckt_runtime_find_stream_locked(dev, b->use[i].stream);
        if (!s || b->use[i].seq <= s->done_seq) continue; /* passed */
        if (s->capturing || dev->ops->event_record(dev, s->impl, &z->ev[z->nev], NULL) != CKT_OK) {
            z->all_streams = true;
            break;
        }
        z->nev++;
    }
    if (!z->all_streams && z->nev == 0) { /* nothing in flight uses it */
        dev->ops->free(dev, b->ptr);
        free(b);
        free(z);
        return;
    }
    z->next = dev->zombies;
    dev->zombies = z;
}

static void bury(ckt_device *dev, ckt_zombie *z)
{
    for (int i = 0; i < z->nev; i++) dev->ops->event_destroy(dev, z->ev[i]);
    dev->ops->free(dev, z->buf->ptr);
    free(z->buf);
    free(z);
}

void ckt_runtime_reap(ckt_device *dev, bool all)
{
    pthread_mutex_lock(&dev->lock);
    if (!dev->zombies) {
        pthread_mutex_unlock(&dev->lock);
        return;
    }
    ckt_zombie *ready = NULL, **p = &dev->zombies;
    while (*p) {
        ckt_zombie *z = *p;
        bool done = all || !z->all_streams; /* all_streams: only a device synchronization */
        for (int i = 0; done && !all && i < z->nev; i++)
            done = dev->ops->event_done(dev, z->ev[i]) != 0; /* failed work runs no more */
        if (done) {
            *p = z->next;
            z->next = ready;
            ready = z;
        } else
            p = &z->next;
    }
    pthread_mutex_unlock(&dev->lock);
    while (ready) {
        ckt_zombie *z = ready;
        ready = z->next;
        bury(dev, z);
    }
}

static ckt_status check_dims(const char *what, const int64_t v[3], const int64_t lim[3],
                             ckt_error *err)
{
    static const char axis[3] = {'x', 'y', 'z'};
    for (int i = 0; i < 3; i++) {
        if (v[i] < 1)
            return ckt_fail(err, CKT_EINVAL, "launch: %s.%c is %lld (must be >= 1)", what, axis[i],
                            (long long)v[i]);
        if (v[i] > lim[i])
            return ckt_fail(err, CKT_EINVAL, "launch: %s.%c = %lld exceeds the device limit %lld",
                            what, axis[i], (long long)v[i], (long long)lim[i]);
    }
    return CKT_OK;
}

/* The launch's geometry against the device's limits. */
ckt_status ckt_device_check_geometry(const ckt_device *dev, const ckt_launch_params *p,
                                     ckt_error *err)
{
    ckt_status st = check_dims("grid", p->grid, dev->max_grid, err);
    if (!st) st = check_dims("block", p->block, dev->max_block, err);
    if (st) return st;
    int64_t threads = p->block[0] * p->block[1] * p->block[2]; /* each <= 1024 after check_dims */
    if (threads > dev->max_threads_per_block)
        return ckt_fail(err, CKT_EINVAL,
                        "launch: block of %lld threads exceeds the device limit %lld",
                        (long long)threads, (long long)dev->max_threads_per_block);
    if (p->dyn_shared_bytes < 0 || p->dyn_shared_bytes > dev->max_shared_bytes)
        return ckt_fail(err, CKT_EINVAL, "launch: dyn_shared_bytes %lld is outside [0, %lld]",
                        (long long)p->dyn_shared_bytes, (long long)dev->max_shared_bytes);
    if (p->deadline > 0 && ckt_runtime_now() >= p->deadline)
        return ckt_fail(err, CKT_ELIMIT, "launch: the time limit ran out before the launch");
    return CKT_OK;
}
