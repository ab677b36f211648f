/* Streams, events and graphs (ckt/stream.h): the backend-independent part. A stream counts the
 * work enqueued on it (seq) and what a synchronization has seen complete (done_seq); a buffer
 * remembers, per stream, the sequence number of its last use; so a free can tell whether work
 * that uses the buffer may still be in flight, and if so the memory waits as a "zombie" behind
 * an event on each such stream until the events complete (device.c: ckt_runtime_reap). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

struct ckt_graph {
    ckt_device *dev;
    void *impl;
    ckt_buffer **bufs; /* retained */
    int nbufs, cap_bufs;
    uint64_t *bins; /* pinned modules */
    int nbins, cap_bins;
    int launches;
    bool oom; /* a buffer or kernel it uses could not be kept: end_capture refuses the graph */
};

ckt_stream *ckt_device_stream(ckt_device *dev) { return dev ? &dev->default_stream : NULL; }
ckt_stream *ckt_stream_or_default(ckt_device *dev, ckt_stream *s)
{
    return s ? s : &dev->default_stream;
}
ckt_device *ckt_stream_device(const ckt_stream *s) { return s ? s->dev : NULL; }
void *ckt_stream_native(const ckt_stream *s)
{
    return s && s->dev->backend != CKT_BACKEND_CPU ? s->impl : NULL;
}
bool ckt_stream_capturing(const ckt_stream *s) { return s && s->capturing; }

static ckt_status add_stream(ckt_device *dev, void *impl, bool owned, ckt_stream **out,
                             ckt_error *err)
{
    ckt_stream *s = calloc(1, sizeof *s);
    if (!s) {
        if (owned) dev->ops->stream_destroy(dev, impl);
        return ckt_fail(err, CKT_ENOMEM, "stream: out of memory");
    }
    s->dev = dev;
    s->impl = impl;
    s->owned = owned;
    s->id = ckt_runtime_stream_id();
    ckt_device_retain(dev);
    pthread_mutex_lock(&dev->lock);
    s->next = dev->streams;
    if (dev->streams) dev->streams->prev = s;
    dev->streams = s;
    pthread_mutex_unlock(&dev->lock);
    *out = s;
    return CKT_OK;
}

static ckt_status create(ckt_device *dev, bool capture, ckt_stream **out, ckt_error *err)
{
    if (!dev) return ckt_fail(err, CKT_EINVAL, "stream: device is NULL");
    if (!out) return ckt_fail(err, CKT_EINVAL, "stream: out is NULL");
    void *impl = NULL;
    ckt_status st = dev->ops->stream_create(dev, capture, &impl, err);
    return st ? st : add_stream(dev, impl, true, out, err);
}

ckt_status ckt_stream_create(ckt_device *dev, ckt_stream **out, ckt_error *err)
{
    return create(dev, false, out, err);
}

ckt_status ckt_stream_wrap(ckt_device *dev, void *native, ckt_stream **out, ckt_error *err)
{
    if (!dev) return ckt_fail(err, CKT_EINVAL, "stream: device is NULL");
    if (!out) return ckt_fail(err, CKT_EINVAL, "stream: out is NULL");
    if (dev->backend == CKT_BACKEND_CPU)
        return ckt_fail(err, CKT_EUNSUPPORTED,
                        "stream: the cpu device has no native streams to wrap (use "
                        "ckt_stream_create)");
    return add_stream(dev, native, false, out, err);
}

/* an error of the stream's asynchronous work, named by the launches it may come from */
static ckt_status async_error(ckt_stream *s, ckt_error *err)
{
    char pre[256];
    if (s->dev->backend == CKT_BACKEND_CPU) /* its errors name their launch exactly */
        return err ? err->status : CKT_ERUNTIME;
    if (s->since_sync)
        snprintf(pre, sizeof pre,
                 "stream %llu: asynchronous work failed (%llu launch%s since the last "
                 "synchronization, the last of kernel '%s', launch #%llu): ",
                 (unsigned long long)s->id, (unsigned long long)s->since_sync,
                 s->since_sync == 1 ? "" : "es", s->last_kernel, (unsigned long long)s->launches);
    else
        snprintf(pre, sizeof pre, "stream %llu: ", (unsigned long long)s->id);
    return ckt_fail_prefix(err, pre);
}

static ckt_status not_capturing(const ckt_stream *s, const char *what, ckt_error *err)
{
    return s->capturing ? ckt_fail(err, CKT_EINVAL,
                                   "%s: the stream is capturing a graph (only launches are "
                                   "captured; end the capture first)",
                                   what)
                        : CKT_OK;
}

ckt_status ckt_stream_synchronize(ckt_stream *s, ckt_error *err)
{
    if (!s) return ckt_fail(err, CKT_EINVAL, "synchronize: stream is NULL");
    ckt_status st = not_capturing(s, "synchronize", err);
    if (st) return st;
    ckt_device *dev = s->dev;
    pthread_mutex_lock(&dev->lock);
    uint64_t seen = s->seq;
    pthread_mutex_unlock(&dev->lock);
    st = dev->ops->stream_sync(dev, s->impl, err);
    pthread_mutex_lock(&dev->lock);
    if (!st && s->done_seq < seen) s->done_seq = seen;
    if (st) async_error(s, err);
    s->since_sync = 0;
    pthread_mutex_unlock(&dev->lock);
    ckt_runtime_reap(dev, false);
    return st;
}

static void graph_abandon(ckt_graph *g);

ckt_status ckt_stream_destroy(ckt_stream *s, ckt_error *err)
{
    if (!s || s->is_default) return CKT_OK;
    ckt_device *dev = s->dev;
    ckt_status st = CKT_OK;
    if (s->capturing) { /* a capture left open: ended and dropped */
        void *g = NULL;
        ckt_error ignored;
        if (dev->ops->capture_end(dev, s->impl, &g, &ignored) == CKT_OK && g)
            dev->ops->graph_destroy(dev, g);
        s->capturing = false;
        graph_abandon(s->graph);
        s->graph = NULL;
    }
    st = ckt_stream_synchronize(s, err);
    pthread_mutex_lock(&dev->lock);
    if (s->prev)
        s->prev->next = s->next;
    else
        dev->streams = s->next;
    if (s->next) s->next->prev = s->prev;
    pthread_mutex_unlock(&dev->lock);
    if (s->owned) dev->ops->stream_destroy(dev, s->impl);
    free(s);
    ckt_device_close(dev);
    return st;
}

ckt_status ckt_stream_wait(ckt_stream *s, const ckt_event *e, ckt_error *err)
{
    if (!s || !e) return ckt_fail(err, CKT_EINVAL, "wait: %s is NULL", s ? "event" : "stream");
    if (e->dev != s->dev)
        return ckt_fail(
            err, CKT_EINVAL,
            "wait: the event was recorded on another device (%s) than the stream's (%s)",
            e->dev->name, s->dev->name);
    ckt_status st = not_capturing(s, "wait", err);
    if (st) return st;
    pthread_mutex_lock(&s->dev->lock);
    st = s->dev->ops->stream_wait(s->dev, s->impl, e->impl, err);
    if (!st) s->seq++;
    pthread_mutex_unlock(&s->dev->lock);
    return st;
}

/* Every stream of the device: the first pending error (of any stream) is returned, named by
 * the stream and its launches; the other streams' errors are reported at their own turn. */
ckt_status ckt_device_synchronize(ckt_device *dev, ckt_error *err)
{
    if (!dev) return ckt_fail(err, CKT_EINVAL, "synchronize: device is NULL");
    /* the buffers retired before this call that wait for every stream (used on more streams than
     * a buffer remembers): set aside, and once every stream has passed, freed by the reap below */
    ckt_zombie *every = NULL;
    pthread_mutex_lock(&dev->lock);
    for (ckt_zombie **p = &dev->zombies; *p;) {
        ckt_zombie *z = *p;
        if (z->all_streams) {
            *p = z->next;
            z->next = every;
            every = z;
        } else
            p = &z->next;
    }
    pthread_mutex_unlock(&dev->lock);
    ckt_status st = ckt_stream_synchronize(&dev->default_stream, err);
    for (ckt_stream *s = dev->streams; !st && s; s = s->next)
        if (!s->capturing) st = ckt_stream_synchronize(s, err);
    if (!st) st = dev->ops->sync(dev, err);
    pthread_mutex_lock(&dev->lock);
    while (every) {
        ckt_zombie *z = every;
        every = z->next;
        if (!st) z->all_streams = false; /* passed: its events (if any) have completed */
        z->next = dev->zombies;
        dev->zombies = z;
    }
    pthread_mutex_unlock(&dev->lock);
    if (!st) ckt_runtime_reap(dev, false);
    return st;
}

/* ---- events ---- */

ckt_status ckt_stream_record(ckt_stream *s, ckt_event **out, ckt_error *err)
{
    if (!s || !out) return ckt_fail(err, CKT_EINVAL, "record: %s is NULL", s ? "out" : "stream");
    ckt_status st = not_capturing(s, "record", err);
    if (st) return st;
    ckt_event *e = calloc(1, sizeof *e);
    if (!e) return ckt_fail(err, CKT_ENOMEM, "record: out of memory");
    ckt_device *dev = s->dev;
    pthread_mutex_lock(&dev->lock);
    st = dev->ops->event_record(dev, s->impl, &e->impl, err);
    if (!st) e->seq = ++s->seq;
    pthread_mutex_unlock(&dev->lock);
    if (st) {
        free(e);
        return st;
    }
    e->dev = dev;
    e->stream = s->id;
    ckt_device_retain(dev);
    *out = e;
    return CKT_OK;
}

/* what completing e tells about its stream */
static void passed(ckt_event *e)
{
    pthread_mutex_lock(&e->dev->lock);
    ckt_stream *s = ckt_runtime_find_stream_locked(e->dev, e->stream);
    if (s && s->done_seq < e->seq) s->done_seq = e->seq;
    pthread_mutex_unlock(&e->dev->lock);
}

ckt_status ckt_event_synchronize(ckt_event *e, ckt_error *err)
{
    if (!e) return ckt_fail(err, CKT_EINVAL, "synchronize: event is NULL");
    ckt_status st = e->dev->ops->event_sync(e->dev, e->impl, err);
    if (st) {
        pthread_mutex_lock(&e->dev->lock);
        ckt_stream *s = ckt_runtime_find_stream_locked(e->dev, e->stream);
        if (s) async_error(s, err), s->since_sync = 0;
        pthread_mutex_unlock(&e->dev->lock);
        return st;
    }
    passed(e);
    ckt_runtime_reap(e->dev, false);
    return CKT_OK;
}

ckt_status ckt_event_query(ckt_event *e, bool *done, ckt_error *err)
{
    if (!e || !done) return ckt_fail(err, CKT_EINVAL, "query: %s is NULL", e ? "done" : "event");
    int r = e->dev->ops->event_done(e->dev, e->impl);
    if (r < 0)
        return ckt_fail(err, CKT_ERUNTIME,
                        "query: the event's stream failed (synchronize it for the error)");
    *done = r == 1;
    if (*done) passed(e);
    return CKT_OK;
}

ckt_status ckt_event_elapsed(ckt_event *a, ckt_event *b, double *ms, ckt_error *err)
{
    if (!a || !b || !ms)
        return ckt_fail(err, CKT_EINVAL, "elapsed: %s is NULL", !a ? "start" : !b ? "end" : "ms");
    if (a->dev != b->dev)
        return ckt_fail(err, CKT_EINVAL, "elapsed: the events belong to different devices");
    ckt_status st = ckt_event_synchronize(b, err);
    if (!st) st = ckt_event_synchronize(a, err);
    return st ? st : a->dev->ops->event_elapsed(a->dev, a->impl, b->impl, ms, err);
}

void ckt_event_free(ckt_event *e)
{
    if (!e) return;
    e->dev->ops->event_destroy(e->dev, e->impl);
    ckt_device_close(e->dev);
    free(e);
}

/* ---- buffers in flight ---- */

void ckt_stream_note_use(ckt_stream *s, ckt_buffer *b)
{
    uint64_t seq = s->seq + 1; /* the work about to be enqueued */
    for (int i = 0; i < b->nuse; i++)
        if (b->use[i].stream == s->id) {
            b->use[i].seq = seq;
            return;
        }
    if (b->nuse < CKT_BUFFER_USES) {
        b->use[b->nuse].stream = s->id;
        b->use[b->nuse++].seq = seq;
    } else
        b->use_overflow = true;
    if (s->graph) { /* a graph being captured keeps its buffers */
        ckt_graph *g = s->graph;
        for (int i = 0; i < g->nbufs; i++)
            if (g->bufs[i] == b) return;
        if (g->nbufs == g->cap_bufs) {
            int cap = g->cap_bufs ? 2 * g->cap_bufs : 8;
            ckt_buffer **nb = realloc(g->bufs, (size_t)cap * sizeof *nb);
            if (!nb) {
                g->oom = true; /* the graph cannot keep it: end_capture refuses the graph */
                return;
            }
            g->bufs = nb;
            g->cap_bufs = cap;
        }
        b->refs++;
        g->bufs[g->nbufs++] = b;
    }
}

/* ---- launches and graphs ---- */

static ckt_status pin(ckt_graph *g, ckt_device *dev, uint64_t bin)
{
    for (int i = 0; i < g->nbins; i++)
        if (g->bins[i] == bin) return CKT_OK;
    if (g->nbins == g->cap_bins) {
        int cap = g->cap_bins ? 2 * g->cap_bins : 8;
        uint64_t *nb = realloc(g->bins, (size_t)cap * sizeof *nb);
        if (!nb) return CKT_ENOMEM;
        g->bins = nb;
        g->cap_bins = cap;
    }
    g->bins[g->nbins++] = bin;
    ckt_runtime_pin_module(dev, bin, +1, true); /* dev->lock held: ckt_stream_launch */
    return CKT_OK;
}

static ckt_status stream_launch(ckt_stream *s, const ckt_binary *bin, void *module, void *fn,
                                const ckt_launch_params *p, const char *kernel, ckt_error *err)
{
    ckt_device *dev = s->dev;
    ckt_launch_request r = {module, fn, p, kernel, s->launches + 1, s->id};
    /* dev->lock is held by the caller (ckt_stream_enqueue), with the buffers' uses noted */
    ckt_status st = dev->ops->launch(dev, s->impl, &r, err);
    if (st) return st;
    s->seq++;
    s->launches++;
    s->since_sync++;
    size_t len = strnlen(kernel, sizeof s->last_kernel - 1);
    memcpy(s->last_kernel, kernel, len);
    s->last_kernel[len] = 0;
    if (s->graph) {
        s->graph->launches++;
        if (pin(s->graph, dev, ckt_binary_id(bin))) s->graph->oom = true;
    }
    return CKT_OK;
}

/* A checked launch enqueued on s: the grid against the device's limits, the loaded kernel, the
 * buffers' uses noted (their frees wait for it) under the device lock. */
ckt_status ckt_stream_enqueue(ckt_stream *s, const ckt_binary *bin, const ckt_launch_params *p,
                              ckt_buffer *const *bufs, int nbufs, ckt_error *err)
{
    ckt_device *dev = s->dev;
    ckt_status st = ckt_device_check_geometry(dev, p, err);
    void *module, *fn;
    if (st || (st = ckt_runtime_module_for(dev, bin, &module, &fn, err))) return st;
    pthread_mutex_lock(&dev->lock);
    for (int i = 0; i < nbufs; i++) ckt_stream_note_use(s, bufs[i]);
    st = stream_launch(s, bin, module, fn, p, ckt_binary_kernel_name(bin), err);
    pthread_mutex_unlock(&dev->lock);
    return st;
}

ckt_status ckt_stream_begin_capture(ckt_stream *s, ckt_error *err)
{
    if (!s) return ckt_fail(err, CKT_EINVAL, "capture: stream is NULL");
    if (s->is_default || !s->owned)
        return ckt_fail(err, CKT_EINVAL,
                        "capture: a graph is captured on a stream of ckt's own (ckt_stream_create "
                        "/ dev:stream()), not the default or a wrapped stream");
    if (s->capturing) return ckt_fail(err, CKT_EINVAL, "capture: the stream is already capturing");
    ckt_graph *g = calloc(1, sizeof *g);
    if (!g) return ckt_fail(err, CKT_ENOMEM, "capture: out of memory");
    ckt_status st = s->dev->ops->capture_begin(s->dev, s->impl, err);
    if (st) {
        free(g);
        return st;
    }
    g->dev = s->dev;
    pthread_mutex_lock(&s->dev->lock);
    s->graph = g;
    s->capturing = true;
    pthread_mutex_unlock(&s->dev->lock);
    return CKT_OK;
}

static void graph_abandon(ckt_graph *g)
{
    if (!g) return;
    for (int i = 0; i < g->nbins; i++) ckt_runtime_pin_module(g->dev, g->bins[i], -1, false);
    for (int i = 0; i < g->nbufs; i++) ckt_buffer_release(g->bufs[i]);
    free(g->bufs);
    free(g->bins);
    free(g);
}

ckt_status ckt_stream_end_capture(ckt_stream *s, ckt_graph **out, ckt_error *err)
{
    if (!s || !out) return ckt_fail(err, CKT_EINVAL, "capture: %s is NULL", s ? "out" : "stream");
    if (!s->capturing) return ckt_fail(err, CKT_EINVAL, "capture: the stream is not capturing");
    ckt_device *dev = s->dev;
    pthread_mutex_lock(&dev->lock);
    ckt_graph *g = s->graph;
    s->graph = NULL;
    s->capturing = false;
    pthread_mutex_unlock(&dev->lock);
    ckt_status st = dev->ops->capture_end(dev, s->impl, &g->impl, err);
    if (!st && g->oom)
        st = ckt_fail(err, CKT_ENOMEM,
                      "capture: out of memory keeping the graph's buffers and kernels");
    if (st) {
        if (g->impl) dev->ops->graph_destroy(dev, g->impl);
        graph_abandon(g);
        return st;
    }
    ckt_device_retain(dev);
    *out = g;
    return CKT_OK;
}

ckt_status ckt_graph_launch(ckt_graph *g, ckt_stream *s, ckt_error *err)
{
    if (!g) return ckt_fail(err, CKT_EINVAL, "graph launch: graph is NULL");
    s = ckt_stream_or_default(g->dev, s);
    if (s->dev != g->dev)
        return ckt_fail(err, CKT_EINVAL,
                        "graph launch: the stream belongs to another device (%s) than the graph "
                        "(%s)",
                        s->dev->name, g->dev->name);
    ckt_status st = not_capturing(s, "graph launch", err);
    if (st) return st;
    ckt_device *dev = g->dev;
    pthread_mutex_lock(&dev->lock);
    for (int i = 0; i < g->nbufs; i++) ckt_stream_note_use(s, g->bufs[i]);
    st = dev->ops->graph_launch(dev, g->impl, s->impl, err);
    if (!st) {
        s->seq++;
        s->since_sync += (uint64_t)g->launches;
        s->launches += (uint64_t)g->launches;
        snprintf(s->last_kernel, sizeof s->last_kernel, "(a graph of %d launches)", g->launches);
    }
    pthread_mutex_unlock(&dev->lock);
    return st;
}

int ckt_graph_launch_count(const ckt_graph *g) { return g ? g->launches : 0; }

void ckt_graph_free(ckt_graph *g)
{
    if (!g) return;
    ckt_device *dev = g->dev;
    dev->ops->graph_destroy(dev, g->impl);
    graph_abandon(g);
    ckt_device_close(dev);
}
