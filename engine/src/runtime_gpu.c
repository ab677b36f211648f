/* The enqueueing half of the CUDA and HIP backends (runtime_gpu.h): launches, copies, streams,
 * events and graphs through the library's table of entry points. Every call first makes the
 * device's context current (the caller's thread may change between calls). */
#include <stdio.h>
#include <stdlib.h>

#include "runtime_gpu.h"

enum { NOT_READY = 600, STREAM_NON_BLOCKING = 1, CAPTURE_THREAD_LOCAL = 1 };

static const ckt_gpu_api *api_of(const ckt_device *dev)
{
    return ((const ckt_gpu_device *)dev->impl)->api;
}

static ckt_status fail(const ckt_device *dev, ckt_error *err, const char *what, int r)
{
    const ckt_gpu_api *a = api_of(dev);
    const char *s = a->error_string ? a->error_string(r) : NULL;
    return ckt_fail(err, CKT_ERUNTIME, "%s: %s failed: %s (%d)", a->name, what,
                    s ? s : "unknown error", r);
}

/* r, or the failure to make the device current */
static int current(const ckt_device *dev) { return api_of(dev)->make_current((ckt_device *)dev); }

/* A launch's signature against the argument sizes the code object declares. */
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

ckt_status ckt_gpu_launch(ckt_device *dev, void *s, const ckt_launch_request *r, ckt_error *err)
{
    const ckt_gpu_api *a = api_of(dev);
    ckt_gpu_module *m = r->module;
    const ckt_launch_params *p = r->p;
    ckt_status st =
        m->n >= 0 ? ckt_runtime_check_arg_sizes(m->name, m->sizes, m->n, p, err) : CKT_OK;
    if (st) return st;
    int rc = current(dev);
    if (!rc && a->allow_shared && p->dyn_shared_bytes > 48 * 1024 &&
        p->dyn_shared_bytes > m->shared_allowed) { /* once per module and size */
        if ((rc = a->allow_shared(r->fn, (int)p->dyn_shared_bytes)))
            return fail(dev, err, "allowing the kernel's dynamic shared memory", rc);
        m->shared_allowed = p->dyn_shared_bytes;
    }
    if (!rc)
        rc = a->launch(r->fn, (unsigned)p->grid[0], (unsigned)p->grid[1], (unsigned)p->grid[2],
                       (unsigned)p->block[0], (unsigned)p->block[1], (unsigned)p->block[2],
                       (unsigned)p->dyn_shared_bytes, s, (void **)p->args, NULL);
    if (rc) {
        char label[160];
        ckt_launch_label(r, label, sizeof label);
        fail(dev, err, "kernel launch", rc);
        return ckt_fail_prefix(err, ": "), ckt_fail_prefix(err, label);
    }
    return CKT_OK;
}

ckt_status ckt_gpu_copy(ckt_device *dev, void *s, ckt_copy_kind kind, void *dst, const void *src,
                        size_t n, ckt_error *err)
{
    const ckt_gpu_api *a = api_of(dev);
    int rc = current(dev);
    if (!rc)
        rc = kind == CKT_COPY_H2D   ? a->h2d(dst, src, n, s)
             : kind == CKT_COPY_D2H ? a->d2h(dst, src, n, s)
                                    : a->d2d(dst, src, n, s);
    static const char *const what[] = {"host-to-device copy", "device-to-host copy",
                                       "device-to-device copy"};
    return rc ? fail(dev, err, what[kind], rc) : CKT_OK;
}

ckt_status ckt_gpu_memset(ckt_device *dev, void *s, void *dst, uint8_t byte, size_t n,
                          ckt_error *err)
{
    int rc = current(dev);
    if (!rc) rc = api_of(dev)->memset8(dst, byte, n, s);
    return rc ? fail(dev, err, "memset", rc) : CKT_OK;
}

ckt_status ckt_gpu_sync(ckt_device *dev, ckt_error *err)
{
    int rc = current(dev);
    if (!rc) rc = api_of(dev)->sync();
    return rc ? fail(dev, err, "device synchronization", rc) : CKT_OK;
}

/* Streams that do not synchronize with the legacy default stream: work of other libraries there
 * does not serialize with them, and a capture is not broken by a synchronous copy elsewhere
 * (ckt's own synchronous copies wait for the whole device instead). */
ckt_status ckt_gpu_stream_create(ckt_device *dev, bool capture, void **s, ckt_error *err)
{
    (void)capture;
    int rc = current(dev);
    if (!rc) rc = api_of(dev)->stream_create(s, STREAM_NON_BLOCKING);
    return rc ? fail(dev, err, "stream creation", rc) : CKT_OK;
}

void ckt_gpu_stream_destroy(ckt_device *dev, void *s)
{
    if (!current(dev)) api_of(dev)->stream_destroy(s);
}

ckt_status ckt_gpu_stream_sync(ckt_device *dev, void *s, ckt_error *err)
{
    int rc = current(dev);
    if (!rc) rc = api_of(dev)->stream_sync(s);
    return rc ? fail(dev, err, "stream synchronization", rc) : CKT_OK;
}

ckt_status ckt_gpu_stream_wait(ckt_device *dev, void *s, void *ev, ckt_error *err)
{
    int rc = current(dev);
    if (!rc) rc = api_of(dev)->stream_wait(s, ev, 0);
    return rc ? fail(dev, err, "waiting for an event", rc) : CKT_OK;
}

ckt_status ckt_gpu_event_record(ckt_device *dev, void *s, void **ev, ckt_error *err)
{
    const ckt_gpu_api *a = api_of(dev);
    int rc = current(dev);
    if (!rc) rc = a->event_create(ev, 0);
    if (rc) return fail(dev, err, "event creation", rc);
    if ((rc = a->event_record(*ev, s))) {
        a->event_destroy(*ev);
        return fail(dev, err, "event record", rc);
    }
    return CKT_OK;
}

ckt_status ckt_gpu_event_sync(ckt_device *dev, void *ev, ckt_error *err)
{
    int rc = current(dev);
    if (!rc) rc = api_of(dev)->event_sync(ev);
    return rc ? fail(dev, err, "event synchronization", rc) : CKT_OK;
}

int ckt_gpu_event_done(ckt_device *dev, void *ev)
{
    int rc = current(dev);
    if (!rc) rc = api_of(dev)->event_query(ev);
    return rc == 0 ? 1 : rc == NOT_READY ? 0 : -1;
}

ckt_status ckt_gpu_event_elapsed(ckt_device *dev, void *a, void *b, double *ms, ckt_error *err)
{
    float t = 0;
    int rc = current(dev);
    if (!rc) rc = api_of(dev)->event_elapsed(&t, a, b);
    if (rc) return fail(dev, err, "event timing", rc);
    *ms = t;
    return CKT_OK;
}

void ckt_gpu_event_destroy(ckt_device *dev, void *ev)
{
    if (!current(dev)) api_of(dev)->event_destroy(ev);
}

typedef struct {
    void *graph, *exec;
} gpu_graph;

ckt_status ckt_gpu_capture_begin(ckt_device *dev, void *s, ckt_error *err)
{
    int rc = current(dev);
    if (!rc) rc = api_of(dev)->capture_begin(s, CAPTURE_THREAD_LOCAL);
    return rc ? fail(dev, err, "beginning a stream capture", rc) : CKT_OK;
}

ckt_status ckt_gpu_capture_end(ckt_device *dev, void *s, void **graph, ckt_error *err)
{
    const ckt_gpu_api *a = api_of(dev);
    gpu_graph *g = calloc(1, sizeof *g);
    if (!g) return ckt_fail(err, CKT_ENOMEM, "capture: out of memory");
    int rc = current(dev);
    if (!rc) rc = a->capture_end(s, &g->graph);
    if (rc) {
        free(g);
        return fail(dev, err, "ending a stream capture", rc);
    }
    if ((rc = a->graph_instantiate(&g->exec, g->graph, 0))) {
        a->graph_destroy(g->graph);
        free(g);
        return fail(dev, err, "graph instantiation", rc);
    }
    *graph = g;
    return CKT_OK;
}

ckt_status ckt_gpu_graph_launch(ckt_device *dev, void *graph, void *s, ckt_error *err)
{
    int rc = current(dev);
    if (!rc) rc = api_of(dev)->graph_launch(((gpu_graph *)graph)->exec, s);
    return rc ? fail(dev, err, "graph launch", rc) : CKT_OK;
}

void ckt_gpu_graph_destroy(ckt_device *dev, void *graph)
{
    gpu_graph *g = graph;
    if (!g) return;
    if (!current(dev)) {
        api_of(dev)->graph_exec_destroy(g->exec);
        api_of(dev)->graph_destroy(g->graph);
    }
    free(g);
}
