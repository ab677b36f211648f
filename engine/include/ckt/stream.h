/* ckt — streams, events and graphs: launches and copies that are enqueued and return.
 *
 * A stream is an ordered queue of work on one device. Work on one stream runs in the order it
 * was enqueued; work on different streams may overlap unless ordered by ckt_stream_wait. Every
 * device has a default stream (ckt_device_stream: the legacy default stream of CUDA / HIP, so
 * the synchronous buffer copies of ckt/runtime.h are ordered after it), and ckt_stream_create
 * makes more. The cpu runtime runs each stream's work on a host thread of its own, in order,
 * through the device's block pool: the same semantics, really asynchronous.
 *
 * Errors. What can be checked before work is enqueued (arguments, sizes, bounds) is refused by
 * the call that enqueues it. An error of the work itself (a GPU fault, the cpu runtime's
 * emulation faults, a time limit) is returned by the next synchronization of its stream
 * (ckt_stream_synchronize, ckt_event_synchronize of a later event, a download on the stream,
 * ckt_device_synchronize for every stream), with a message naming the launch.
 *
 * Lifetimes. Buffers used by enqueued work stay allocated until the stream passes that work,
 * even when ckt_buffer_free comes first (the free is deferred, never a use after free). A graph
 * keeps the buffers its launches use. Destroying a stream synchronizes it first. Host memory
 * given to an asynchronous upload may be reused as soon as the call returns (it is staged, as
 * CUDA does for pageable memory); an asynchronous download returns when its bytes are in host
 * memory (also as CUDA does for pageable memory), ordered after the stream's earlier work. */
#ifndef CKT_STREAM_H
#define CKT_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ckt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ckt_device;
struct ckt_buffer;
typedef struct ckt_stream ckt_stream;
typedef struct ckt_event ckt_event;
typedef struct ckt_graph ckt_graph;

/* The device's default stream (owned by the device; never destroyed by the caller). */
ckt_stream *ckt_device_stream(struct ckt_device *dev);
/* A new stream on dev (it holds a reference to dev). */
ckt_status ckt_stream_create(struct ckt_device *dev, ckt_stream **out, ckt_error *err);
/* An application's own stream (a CUstream / hipStream_t) on a GPU device, borrowed: ckt
 * launches on it and never destroys it. NULL is the legacy default stream. cpu: refused. */
ckt_status ckt_stream_wrap(struct ckt_device *dev, void *native, ckt_stream **out, ckt_error *err);
/* Synchronize, then release (a wrapped stream's handle is left to its owner). Returns the
 * stream's pending error, if any: destroyed either way. NULL and the default stream: no-op. */
ckt_status ckt_stream_destroy(ckt_stream *s, ckt_error *err);
/* Wait for everything enqueued on s; the first error of that work, naming its launch. */
ckt_status ckt_stream_synchronize(ckt_stream *s, ckt_error *err);
struct ckt_device *ckt_stream_device(const ckt_stream *s);
/* The native handle (CUstream / hipStream_t; NULL for a default stream and on cpu), for
 * handing the stream to another library in the same process. */
void *ckt_stream_native(const ckt_stream *s);
/* Later work on s waits until e has completed (e may come from another stream of the device). */
ckt_status ckt_stream_wait(ckt_stream *s, const ckt_event *e, ckt_error *err);

/* An event at the current end of s: completes when the stream passes it. */
ckt_status ckt_stream_record(ckt_stream *s, ckt_event **out, ckt_error *err);
ckt_status ckt_event_synchronize(ckt_event *e, ckt_error *err);
/* *done: whether the event has completed (never waits). */
ckt_status ckt_event_query(ckt_event *e, bool *done, ckt_error *err);
/* Milliseconds from start to end (both of one device; waits for end). */
ckt_status ckt_event_elapsed(ckt_event *start, ckt_event *end, double *ms, ckt_error *err);
void ckt_event_free(ckt_event *e);

/* Graphs: the launches enqueued on s between begin and end, captured instead of run, replayed
 * by ckt_graph_launch (on any stream of the device) with the arguments they had. Only launches
 * may be captured: synchronizing s, recording on it or copying on it in between is refused. A
 * graph keeps its buffers and kernels alive. */
ckt_status ckt_stream_begin_capture(ckt_stream *s, ckt_error *err);
ckt_status ckt_stream_end_capture(ckt_stream *s, ckt_graph **out, ckt_error *err);
bool ckt_stream_capturing(const ckt_stream *s);
ckt_status ckt_graph_launch(ckt_graph *g, ckt_stream *s, ckt_error *err);
int ckt_graph_launch_count(const ckt_graph *g); /* launches it replays */
void ckt_graph_free(ckt_graph *g);

/* Asynchronous copies on s (NULL: the default stream), ranges checked as the synchronous ones. */
ckt_status ckt_buffer_upload_async(struct ckt_buffer *dst, size_t offset, const void *src,
                                   size_t bytes, ckt_stream *s, ckt_error *err);
ckt_status ckt_buffer_download_async(const struct ckt_buffer *src, size_t offset, void *dst,
                                     size_t bytes, ckt_stream *s, ckt_error *err);
ckt_status ckt_buffer_copy_async(struct ckt_buffer *dst, size_t dst_offset,
                                 const struct ckt_buffer *src, size_t src_offset, size_t bytes,
                                 ckt_stream *s, ckt_error *err);
ckt_status ckt_buffer_memset_async(struct ckt_buffer *dst, size_t offset, uint8_t byte,
                                   size_t bytes, ckt_stream *s, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
