/* Shared by the runtime backends (not installed). device.c owns the device object, the
 * live-buffer registry (pointer arguments are checked against it), the module cache and all
 * argument checking; stream.c owns streams, events, graphs and the deferred frees; a backend
 * only moves bytes, enqueues and waits. */
#ifndef CKT_RUNTIME_INTERNAL_H
#define CKT_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "ckt/runtime.h"
#include "ckt/stream.h"

typedef enum { CKT_COPY_H2D, CKT_COPY_D2H, CKT_COPY_D2D } ckt_copy_kind;

/* What a backend needs to enqueue one launch: the loaded function, the checked parameters and
 * what names the launch in errors ("launch #12 of kernel 'gemm_f16' on stream 3", made by
 * ckt_launch_label only when needed: formatting it every launch would cost more than the rest). */
typedef struct ckt_launch_request {
    void *module, *fn;
    const ckt_launch_params *p;
    const char *kernel;
    uint64_t number, stream;
} ckt_launch_request;

static inline void ckt_launch_label(const ckt_launch_request *r, char *buf, size_t cap)
{
    snprintf(buf, cap, "launch #%llu of kernel '%.64s' on stream %llu",
             (unsigned long long)r->number, r->kernel, (unsigned long long)r->stream);
}

/* A backend's stream, event and graph objects are opaque pointers (a CUstream, ...). A stream
 * pointer NULL is the default stream. Every enqueueing op returns once the work is queued. */
typedef struct ckt_backend_ops {
    ckt_status (*open)(ckt_device *dev, ckt_error *err); /* fills impl, name, target, limits */
    void (*close)(ckt_device *dev);
    ckt_status (*alloc)(ckt_device *dev, size_t bytes, void **ptr, ckt_error *err);
    void (*free)(ckt_device *dev, void *ptr);
    /* load the binary's kernel: *module is released by unload, *fn lives as long as it */
    ckt_status (*load)(ckt_device *dev, const ckt_binary *bin, void **module, void **fn,
                       ckt_error *err);
    void (*unload)(ckt_device *dev, void *module);
    ckt_status (*launch)(ckt_device *dev, void *stream, const ckt_launch_request *r,
                         ckt_error *err);
    /* h2d copies are staged (src reusable on return); d2h returns when the bytes have landed */
    ckt_status (*copy)(ckt_device *dev, void *stream, ckt_copy_kind kind, void *dst,
                       const void *src, size_t n, ckt_error *err);
    ckt_status (*memset)(ckt_device *dev, void *stream, void *dst, uint8_t byte, size_t n,
                         ckt_error *err);
    ckt_status (*sync)(ckt_device *dev, ckt_error *err); /* every stream */
    ckt_status (*stream_create)(ckt_device *dev, bool capture, void **s, ckt_error *err);
    void (*stream_destroy)(ckt_device *dev, void *s);
    ckt_status (*stream_sync)(ckt_device *dev, void *s, ckt_error *err);
    ckt_status (*stream_wait)(ckt_device *dev, void *s, void *ev, ckt_error *err);
    ckt_status (*event_record)(ckt_device *dev, void *s, void **ev, ckt_error *err); /* new */
    ckt_status (*event_sync)(ckt_device *dev, void *ev, ckt_error *err);
    int (*event_done)(ckt_device *dev, void *ev); /* 1 done, 0 not yet, -1 failed */
    ckt_status (*event_elapsed)(ckt_device *dev, void *a, void *b, double *ms, ckt_error *err);
    void (*event_destroy)(ckt_device *dev, void *ev);
    ckt_status (*capture_begin)(ckt_device *dev, void *s, ckt_error *err);
    ckt_status (*capture_end)(ckt_device *dev, void *s, void **graph, ckt_error *err);
    ckt_status (*graph_launch)(ckt_device *dev, void *graph, void *s, ckt_error *err);
    void (*graph_destroy)(ckt_device *dev, void *graph);
} ckt_backend_ops;

#define CKT_MODULE_CACHE 64
#define CKT_BUFFER_USES 4 /* streams a buffer remembers its last use on; more: every stream */

struct ckt_buffer {
    ckt_device *dev;
    void *ptr;
    size_t size;
    int refs;    /* the owner's (until ckt_buffer_free) + each graph's that uses it */
    bool closed; /* freed by its owner: no longer a launch argument */
    /* the last enqueued use on each stream (stream id, its sequence number): a free waits for them
     */
    struct {
        uint64_t stream, seq;
    } use[CKT_BUFFER_USES];
    int nuse;
    bool use_overflow;
    ckt_buffer *prev, *next; /* the device's live buffers */
};

struct ckt_stream {
    ckt_device *dev;
    void *impl;             /* the backend's stream (NULL: the default stream) */
    uint64_t id;            /* unique in the process */
    uint64_t seq, done_seq; /* work enqueued; work known complete (at the last synchronization) */
    uint64_t launches;      /* numbers launches in error messages */
    uint64_t since_sync;    /* launches since the last synchronization */
    char last_kernel[64];   /* the last one's kernel */
    bool owned, is_default, capturing;
    struct ckt_graph *graph; /* being captured */
    ckt_stream *prev, *next; /* the device's streams */
};

struct ckt_event {
    ckt_device *dev;
    void *impl;
    uint64_t stream, seq; /* where it was recorded */
};

/* a buffer waiting for the streams that use it before its memory is freed */
typedef struct ckt_zombie {
    ckt_buffer *buf;
    void *ev[CKT_BUFFER_USES + 1];
    int nev;
    bool all_streams; /* wait for a device synchronization instead */
    struct ckt_zombie *next;
} ckt_zombie;

struct ckt_device {
    ckt_backend backend;
    const ckt_backend_ops *ops;
    void *impl;
    int refs;
    pthread_mutex_t lock; /* refs, the buffer and stream lists, the module cache, the zombies */
    char name[256];
    char target[32];
    int64_t max_block[3], max_threads_per_block, max_grid[3], max_shared_bytes;
    ckt_buffer *buffers;
    ckt_stream default_stream;
    ckt_stream *streams; /* created and wrapped ones */
    ckt_zombie *zombies;
    struct {
        uint64_t bin_id;
        void *module, *fn;
        uint64_t last_use;
        int pins; /* graphs that replay it: never evicted */
    } modules[CKT_MODULE_CACHE];
    uint64_t clock;
};

extern const ckt_backend_ops ckt_runtime_cpu_ops, ckt_runtime_cuda_ops, ckt_runtime_hip_ops;

/* runtime_gpu.c: a launch's signature against the argument sizes the code object declares */
ckt_status ckt_runtime_check_arg_sizes(const char *kernel, const int64_t *sizes, int n,
                                       const ckt_launch_params *p, ckt_error *err);

/* CLOCK_MONOTONIC in seconds (the clock of ckt_launch_params.deadline) */
static inline double ckt_runtime_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the binary's unique id (module cache key) */
uint64_t ckt_binary_id(const ckt_binary *b);

/* device.c, for stream.c and launch.c: unique stream ids; the stream of a device with an id
 * (NULL: destroyed, so synchronized; dev->lock held); the loaded kernel of a binary (from the
 * device's cache, else loaded); a buffer's memory freed now or retired until the streams that use
 * it have passed that use (dev->lock held); the retired buffers whose work is done freed (all:
 * every one, after a synchronization). */
uint64_t ckt_runtime_stream_id(void);
ckt_stream *ckt_runtime_find_stream_locked(ckt_device *dev, uint64_t id);
ckt_status ckt_runtime_module_for(ckt_device *dev, const ckt_binary *bin, void **module, void **fn,
                                  ckt_error *err);
void ckt_runtime_retire_locked(ckt_buffer *b);
/* device.c: a launch's grid, block and shared memory against the device's limits (and a
 * deadline already past) */
ckt_status ckt_device_check_geometry(const ckt_device *dev, const ckt_launch_params *p,
                                     ckt_error *err);
void ckt_runtime_reap(ckt_device *dev, bool all);

/* stream.c, for launch.c and executable.c */
/* Note that b is used by the next piece of work on s (before s->seq is advanced by it). */
void ckt_stream_note_use(ckt_stream *s, ckt_buffer *b);
/* The stream work goes to: s, or the device's default stream when s is NULL. */
ckt_stream *ckt_stream_or_default(ckt_device *dev, ckt_stream *s);
/* A checked launch enqueued on s with the buffers it uses (their frees wait for it). */
ckt_status ckt_stream_enqueue(ckt_stream *s, const ckt_binary *bin, const ckt_launch_params *p,
                              ckt_buffer *const *bufs, int nbufs, ckt_error *err);

/* launch.c, for executable.c: the binary suits the device (once per executable and device);
 * a launch function run between two events on s and waited for. */
ckt_status ckt_runtime_check_binary(ckt_device *dev, const ckt_binary *bin,
                                    const ckt_target_record *t, ckt_error *err);
ckt_status ckt_runtime_timed(ckt_stream *s, double *ms, ckt_status (*enqueue)(void *), void *ctx,
                             ckt_error *err);

/* device.c, for stream.c: a graph's pin on a loaded kernel; a graph's reference to a buffer */
void ckt_runtime_pin_module(ckt_device *dev, uint64_t bin_id, int delta, bool locked);
void ckt_buffer_release(ckt_buffer *b); /* drops a reference (a graph's) */
void ckt_buffer_retain(ckt_buffer *b);

#endif
