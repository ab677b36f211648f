/* What the CUDA driver and HIP share (not installed): their stream, event, graph, copy and
 * launch entry points have the same shapes (HIP mirrors the driver API), so one implementation
 * of the backend's enqueueing operations (runtime_gpu.c) serves both, over a table of the
 * library's functions that each backend binds at load time. Results are int (0: success,
 * 600: not ready, in both); streams, events, graphs, functions and device addresses are
 * pointer-sized values in both ABIs. */
#ifndef CKT_RUNTIME_GPU_H
#define CKT_RUNTIME_GPU_H

#include "runtime_internal.h"

typedef struct ckt_gpu_api {
    const char *name; /* "cuda" | "hip", in messages */
    const char *(*error_string)(int r);
    int (*make_current)(ckt_device *dev);
    int (*launch)(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                  unsigned bz, unsigned shared_bytes, void *stream, void **args, void **extra);
    /* dynamic shared memory above the default 48 KiB (NULL: not needed on this backend) */
    int (*allow_shared)(void *fn, int bytes);
    int (*h2d)(void *dst, const void *src, size_t n, void *stream);
    int (*d2h)(void *dst, const void *src, size_t n, void *stream);
    int (*d2d)(void *dst, const void *src, size_t n, void *stream);
    int (*memset8)(void *dst, unsigned char byte, size_t n, void *stream);
    int (*sync)(void);
    int (*stream_create)(void **s, unsigned flags);
    int (*stream_destroy)(void *s);
    int (*stream_sync)(void *s);
    int (*stream_wait)(void *s, void *ev, unsigned flags);
    int (*event_create)(void **ev, unsigned flags);
    int (*event_record)(void *ev, void *s);
    int (*event_sync)(void *ev);
    int (*event_query)(void *ev);
    int (*event_elapsed)(float *ms, void *a, void *b);
    int (*event_destroy)(void *ev);
    int (*capture_begin)(void *s, int mode);
    int (*capture_end)(void *s, void **graph);
    int (*graph_instantiate)(void **exec, void *graph, unsigned long long flags);
    int (*graph_launch)(void *exec, void *s);
    int (*graph_exec_destroy)(void *exec);
    int (*graph_destroy)(void *graph);
} ckt_gpu_api;

/* A loaded module: the library's handle, the kernel's name, the parameter sizes the code
 * object declares (n < 0: unknown) and the dynamic shared memory already allowed. */
typedef struct ckt_gpu_module {
    void *handle;
    char name[128];
    int n;
    int64_t sizes[64];
    int64_t shared_allowed;
} ckt_gpu_module;

/* Each backend's device impl starts with this: its api table. */
typedef struct ckt_gpu_device {
    const ckt_gpu_api *api;
} ckt_gpu_device;

/* The shared enqueueing operations, for the backends' ops tables (CKT_GPU_OPS). */
ckt_status ckt_gpu_launch(ckt_device *dev, void *s, const ckt_launch_request *r, ckt_error *err);
ckt_status ckt_gpu_copy(ckt_device *dev, void *s, ckt_copy_kind kind, void *dst, const void *src,
                        size_t n, ckt_error *err);
ckt_status ckt_gpu_memset(ckt_device *dev, void *s, void *dst, uint8_t byte, size_t n,
                          ckt_error *err);
ckt_status ckt_gpu_sync(ckt_device *dev, ckt_error *err);
ckt_status ckt_gpu_stream_create(ckt_device *dev, bool capture, void **s, ckt_error *err);
void ckt_gpu_stream_destroy(ckt_device *dev, void *s);
ckt_status ckt_gpu_stream_sync(ckt_device *dev, void *s, ckt_error *err);
ckt_status ckt_gpu_stream_wait(ckt_device *dev, void *s, void *ev, ckt_error *err);
ckt_status ckt_gpu_event_record(ckt_device *dev, void *s, void **ev, ckt_error *err);
ckt_status ckt_gpu_event_sync(ckt_device *dev, void *ev, ckt_error *err);
int ckt_gpu_event_done(ckt_device *dev, void *ev);
ckt_status ckt_gpu_event_elapsed(ckt_device *dev, void *a, void *b, double *ms, ckt_error *err);
void ckt_gpu_event_destroy(ckt_device *dev, void *ev);
ckt_status ckt_gpu_capture_begin(ckt_device *dev, void *s, ckt_error *err);
ckt_status ckt_gpu_capture_end(ckt_device *dev, void *s, void **graph, ckt_error *err);
ckt_status ckt_gpu_graph_launch(ckt_device *dev, void *graph, void *s, ckt_error *err);
void ckt_gpu_graph_destroy(ckt_device *dev, void *graph);

#define CKT_GPU_OPS                                                                                \
    .launch = ckt_gpu_launch, .copy = ckt_gpu_copy, .memset = ckt_gpu_memset,                      \
    .sync = ckt_gpu_sync, .stream_create = ckt_gpu_stream_create,                                  \
    .stream_destroy = ckt_gpu_stream_destroy, .stream_sync = ckt_gpu_stream_sync,                  \
    .stream_wait = ckt_gpu_stream_wait, .event_record = ckt_gpu_event_record,                      \
    .event_sync = ckt_gpu_event_sync, .event_done = ckt_gpu_event_done,                            \
    .event_elapsed = ckt_gpu_event_elapsed, .event_destroy = ckt_gpu_event_destroy,                \
    .capture_begin = ckt_gpu_capture_begin, .capture_end = ckt_gpu_capture_end,                    \
    .graph_launch = ckt_gpu_graph_launch, .graph_destroy = ckt_gpu_graph_destroy

#endif
