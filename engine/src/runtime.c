/* Devices, buffers and launches: the backend-independent part. Everything a caller can get
 * wrong is checked here (sizes, offsets, dims, argument count/kinds, pointers that do not
 * belong to a live buffer of the device), so a backend only sees valid requests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckt/runtime.h"
#include "runtime_internal.h"

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

ckt_status ckt_device_synchronize(ckt_device *dev, ckt_error *err)
{
    if (!dev) return ckt_fail(err, CKT_EINVAL, "synchronize: device is NULL");
    return dev->ops->sync(dev, err);
}

/* ---- buffers ---- */

ckt_status ckt_buffer_alloc(ckt_device *dev, size_t bytes, ckt_buffer **out, ckt_error *err)
{
    if (!dev) return ckt_fail(err, CKT_EINVAL, "alloc: device is NULL");
    if (!out) return ckt_fail(err, CKT_EINVAL, "alloc: out is NULL");
    if (bytes == 0) return ckt_fail(err, CKT_EINVAL, "alloc: size is 0 bytes (must be positive)");
    if (bytes > (size_t)1 << 46)
        return ckt_fail(err, CKT_EINVAL, "alloc: size %zu bytes is beyond any device (64 TiB)",
                        bytes);
    ckt_buffer *b = calloc(1, sizeof *b);
    if (!b) return ckt_fail(err, CKT_ENOMEM, "alloc: out of host memory");
    ckt_status st = dev->ops->alloc(dev, bytes, &b->ptr, err);
    if (st) {
        free(b);
        return st;
    }
    b->dev = dev;
    b->size = bytes;
    pthread_mutex_lock(&dev->lock);
    dev->refs++;
    b->next = dev->buffers;
    if (dev->buffers) dev->buffers->prev = b;
    dev->buffers = b;
    pthread_mutex_unlock(&dev->lock);
    *out = b;
    return CKT_OK;
}

void ckt_buffer_free(ckt_buffer *b)
{
    if (!b) return;
    ckt_device *dev = b->dev;
    pthread_mutex_lock(&dev->lock);
    if (b->prev)
        b->prev->next = b->next;
    else
        dev->buffers = b->next;
    if (b->next) b->next->prev = b->prev;
    pthread_mutex_unlock(&dev->lock);
    dev->ops->free(dev, b->ptr);
    free(b);
    release(dev);
}

void *ckt_buffer_ptr(const ckt_buffer *b) { return b ? b->ptr : NULL; }
size_t ckt_buffer_size(const ckt_buffer *b) { return b ? b->size : 0; }
ckt_device *ckt_buffer_device(const ckt_buffer *b) { return b ? b->dev : NULL; }

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

ckt_status ckt_buffer_upload(ckt_buffer *dst, size_t off, const void *src, size_t n, ckt_error *err)
{
    ckt_status st = check_range("upload", "destination", dst, off, n, err);
    if (st) return st;
    if (!src && n) return ckt_fail(err, CKT_EINVAL, "upload: host source is NULL");
    return n ? dst->dev->ops->h2d(dst->dev, (char *)dst->ptr + off, src, n, err) : CKT_OK;
}

ckt_status ckt_buffer_download(const ckt_buffer *src, size_t off, void *dst, size_t n,
                               ckt_error *err)
{
    ckt_status st = check_range("download", "source", src, off, n, err);
    if (st) return st;
    if (!dst && n) return ckt_fail(err, CKT_EINVAL, "download: host destination is NULL");
    return n ? src->dev->ops->d2h(src->dev, dst, (const char *)src->ptr + off, n, err) : CKT_OK;
}

ckt_status ckt_buffer_copy(ckt_buffer *dst, size_t doff, const ckt_buffer *src, size_t soff,
                           size_t n, ckt_error *err)
{
    ckt_status st = check_range("copy", "destination", dst, doff, n, err);
    if (!st) st = check_range("copy", "source", src, soff, n, err);
    if (st) return st;
    if (dst->dev != src->dev)
        return ckt_fail(err, CKT_EINVAL, "copy: the buffers belong to different devices");
    return n ? dst->dev->ops->d2d(dst->dev, (char *)dst->ptr + doff, (const char *)src->ptr + soff,
                                  n, err)
             : CKT_OK;
}

ckt_status ckt_buffer_memset(ckt_buffer *dst, size_t off, uint8_t byte, size_t n, ckt_error *err)
{
    ckt_status st = check_range("memset", "destination", dst, off, n, err);
    if (st) return st;
    return n ? dst->dev->ops->memset(dst->dev, (char *)dst->ptr + off, byte, n, err) : CKT_OK;
}

/* ---- launches ---- */

static const char *param_kind_name(ckt_param_kind k)
{
    return k == CKT_PARAM_PTR   ? "pointer"
           : k == CKT_PARAM_I32 ? "i32"
           : k == CKT_PARAM_I64 ? "i64"
                                : "f32";
}

static int target_fits(const ckt_device *dev, const char *t)
{
    ckt_target_record r;
    ckt_error ignored;
    return ckt_target_parse(t, &r, &ignored) == CKT_OK && r.runtime == dev->backend;
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

static ckt_status check_args(ckt_device *dev, const ckt_launch_params *p, ckt_error *err)
{
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
        int found = 0;
        pthread_mutex_lock(&dev->lock);
        for (ckt_buffer *b = dev->buffers; b && !found; b = b->next)
            found = ptr >= (char *)b->ptr && ptr < (char *)b->ptr + b->size;
        pthread_mutex_unlock(&dev->lock);
        if (!found)
            return ckt_fail(
                err, CKT_EINVAL,
                "launch: argument %d '%s' (%p) is not inside a live buffer of this %s device", i,
                nm, (void *)ptr, ckt_backend_name(dev->backend));
    }
    return CKT_OK;
}

ckt_status ckt_runtime_check_arg_sizes(const char *kernel, const int64_t *sizes, int n,
                                       const ckt_launch_params *p, ckt_error *err)
{
    int same = n == p->signature_count;
    for (int i = 0; same && i < n; i++)
        same = sizes[i] == (int64_t)ckt_param_size(p->signature[i].kind);
    if (same) return CKT_OK;
    char want[256] = "", got[256] = "";
    for (int i = 0, w = 0; i < n && w < 200; i++)
        w +=
            snprintf(want + w, sizeof want - (size_t)w, i ? ", %lld" : "%lld", (long long)sizes[i]);
    for (int i = 0, w = 0; i < p->signature_count && w < 200; i++)
        w += snprintf(got + w, sizeof got - (size_t)w, i ? ", %zu" : "%zu",
                      ckt_param_size(p->signature[i].kind));
    return ckt_fail(
        err, CKT_EINVAL,
        "launch: kernel '%s' takes %d arguments of (%s) bytes, the launch passes %d of (%s) bytes",
        kernel, n, want, p->signature_count, got);
}

/* The loaded kernel for a binary: from the device's cache, else loaded (evicting the least recently
 * used). */
static ckt_status module_for(ckt_device *dev, const ckt_binary *bin, void **module, void **fn,
                             ckt_error *err)
{
    uint64_t id = ckt_binary_id(bin);
    pthread_mutex_lock(&dev->lock);
    int victim = 0;
    for (int i = 0; i < CKT_MODULE_CACHE; i++) {
        if (dev->modules[i].module && dev->modules[i].bin_id == id) {
            dev->modules[i].last_use = ++dev->clock;
            *module = dev->modules[i].module;
            *fn = dev->modules[i].fn;
            pthread_mutex_unlock(&dev->lock);
            return CKT_OK;
        }
        if (dev->modules[i].last_use < dev->modules[victim].last_use) victim = i;
    }
    pthread_mutex_unlock(&dev->lock);
    ckt_status st = dev->ops->load(dev, bin, module, fn, err);
    if (st) return st;
    pthread_mutex_lock(&dev->lock);
    if (dev->modules[victim].module) dev->ops->unload(dev, dev->modules[victim].module);
    dev->modules[victim].bin_id = id;
    dev->modules[victim].module = *module;
    dev->modules[victim].fn = *fn;
    dev->modules[victim].last_use = ++dev->clock;
    pthread_mutex_unlock(&dev->lock);
    return CKT_OK;
}

int ckt_runtime_timed_launch(const ckt_gpu_timing *api, void *const ev[2], void *fn,
                             const ckt_launch_params *p, double *ms)
{
    int r = api->event_record(ev[0], NULL);
    if (!r)
        r = api->launch(fn, (unsigned)p->grid[0], (unsigned)p->grid[1], (unsigned)p->grid[2],
                        (unsigned)p->block[0], (unsigned)p->block[1], (unsigned)p->block[2],
                        (unsigned)p->dyn_shared_bytes, NULL, (void **)p->args, NULL);
    if (!r) r = api->event_record(ev[1], NULL);
    if (!r) r = api->event_sync(ev[1]);
    float t = 0;
    if (!r) r = api->event_elapsed(&t, ev[0], ev[1]);
    api->event_destroy(ev[0]);
    api->event_destroy(ev[1]);
    if (!r) *ms = t;
    return r;
}

double ckt_runtime_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

ckt_status ckt_launch(ckt_device *dev, const ckt_binary *bin, const ckt_launch_params *p,
                      double *ms, ckt_error *err)
{
    if (!dev) return ckt_fail(err, CKT_EINVAL, "launch: device is NULL");
    if (!bin) return ckt_fail(err, CKT_EINVAL, "launch: binary is NULL");
    if (!p) return ckt_fail(err, CKT_EINVAL, "launch: parameters are NULL");
    const char *t = ckt_binary_target(bin);
    if (ckt_binary_compile_only(bin))
        return ckt_fail(err, CKT_EINVAL,
                        "launch: '%s' for %s was compiled compile-only; compile it again to run it",
                        ckt_binary_kernel_name(bin), t);
    if (!target_fits(dev, t))
        return ckt_fail(err, CKT_EINVAL, "launch: a binary for %s cannot run on the %s device (%s)",
                        t, ckt_backend_name(dev->backend), dev->name);
    ckt_status st =
        dev->backend == CKT_BACKEND_CUDA ? ckt_target_check_device(t, dev->target, err) : CKT_OK;
    if (!st) st = check_dims("grid", p->grid, dev->max_grid, err);
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
    if ((st = check_args(dev, p, err))) return st;
    if (p->deadline > 0 && ckt_runtime_now() >= p->deadline)
        return ckt_fail(err, CKT_ELIMIT, "launch: the time limit ran out before the launch");
    void *module, *fn;
    if ((st = module_for(dev, bin, &module, &fn, err))) return st;
    double dummy;
    return dev->ops->launch(dev, module, fn, p, ms ? ms : &dummy, err);
}
