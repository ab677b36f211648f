/* ckt — runtimes: devices, buffers and kernel launches for three backends.
 *   "cpu"  : this machine; kernels are shared objects in the CPU ABI (ckt/jit.h), the grid's
 *            blocks run on a pool of host threads (each block exactly once).
 *   "cuda" : the CUDA driver API (libcuda.so.1, dlopen'ed at run time).
 *   "hip"  : the HIP module API (libamdhip64.so.5/.6, dlopen'ed at run time).
 * A missing library is CKT_ERUNTIME naming the library and the alternative (the cpu target).
 *
 * Ownership: a device is reference counted; every live buffer holds a reference, so
 * ckt_device_close may come before the last ckt_buffer_free. Loaded modules are cached per
 * device and released with it. Device pointers are passed as `void *` values (CUdeviceptr /
 * hipDeviceptr_t / host pointer). */
#ifndef CKT_RUNTIME_H
#define CKT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "ckt/context.h"
#include "ckt/error.h"
#include "ckt/jit.h"
#include "ckt/param.h"
#include "ckt/stream.h"
#include "ckt/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_device ckt_device;
typedef struct ckt_buffer ckt_buffer;

/* The backend for a name: "cpu" | "cuda" | "hip", or a target (its record's runtime). */
ckt_status ckt_backend_for(const char *name, ckt_backend *out, ckt_error *err);

/* Open device 0 of a backend (name as in ckt_backend_for). ctx may be NULL. */
ckt_status ckt_device_open(ckt_context *ctx, const char *name, ckt_device **out, ckt_error *err);
void ckt_device_close(ckt_device *dev); /* drops the caller's reference */
void ckt_device_retain(
    ckt_device *dev); /* one more reference (closed by one more ckt_device_close) */
ckt_backend ckt_device_backend(const ckt_device *dev);
const char *ckt_device_name(const ckt_device *dev); /* "cpu (2 worker threads)", the GPU's name */
/* The compile target this device runs natively ("cpu", "sm_90", "gfx90a"). */
const char *ckt_device_target(const ckt_device *dev);
ckt_status ckt_device_synchronize(ckt_device *dev, ckt_error *err); /* every stream */

/* Buffers. bytes > 0. Offsets and lengths are checked against the buffer's size. A buffer freed
 * while enqueued work uses it keeps its memory until that work is done. The synchronous copies
 * below run on the default stream and wait (asynchronous ones: ckt/stream.h). */
ckt_status ckt_buffer_alloc(ckt_device *dev, size_t bytes, ckt_buffer **out, ckt_error *err);
void ckt_buffer_free(ckt_buffer *buf);
void *ckt_buffer_ptr(const ckt_buffer *buf); /* the device address */
size_t ckt_buffer_size(const ckt_buffer *buf);
ckt_device *ckt_buffer_device(const ckt_buffer *buf);
ckt_status ckt_buffer_upload(ckt_buffer *dst, size_t offset, const void *src, size_t bytes,
                             ckt_error *err); /* h2d */
ckt_status ckt_buffer_download(const ckt_buffer *src, size_t offset, void *dst, size_t bytes,
                               ckt_error *err); /* d2h */
ckt_status ckt_buffer_copy(ckt_buffer *dst, size_t dst_offset, const ckt_buffer *src,
                           size_t src_offset, size_t bytes, ckt_error *err); /* d2d, same device */
ckt_status ckt_buffer_memset(ckt_buffer *dst, size_t offset, uint8_t byte, size_t bytes,
                             ckt_error *err);

typedef struct ckt_launch_params {
    int64_t grid[3], block[3]; /* every entry >= 1 and within the device's limits */
    int64_t dyn_shared_bytes;  /* dynamic LDS / shared memory (GPU backends; cpu: must be 0) */
    void *const *args;         /* args[i] points at parameter i's value (cuLaunchKernel style) */
    int arg_count;
    const ckt_param *signature; /* the kernel's parameters; must have arg_count entries */
    int signature_count;
    /* When to give up, in CLOCK_MONOTONIC seconds (0: never): the cpu runtime checks it between
     * blocks and stops the launch with CKT_ELIMIT; GPU backends refuse a launch already past it.
     * A sandboxed Lua state passes the end of its time limit. */
    double deadline;
} ckt_launch_params;

/* Launch a compiled kernel (the binary's kernel name) on the device's default stream and wait
 * for it; *ms (may be NULL) is the kernel time between two events (GPU events; on cpu, the
 * times the stream's thread passed them). Pointer arguments must be non-NULL and
 * point into a live buffer of this device. The binary's target must suit the device
 * (cpu / cpu:<gpu> on cpu; sm_* on cuda; gfx* on hip) and not be compile_only. */
ckt_status ckt_launch(ckt_device *dev, const ckt_binary *bin, const ckt_launch_params *p,
                      double *ms, ckt_error *err);
/* The same checks, then enqueued on s (NULL: the default stream) without waiting
 * (ckt/stream.h: errors of the kernel itself come with the stream's next synchronization). */
ckt_status ckt_launch_async(ckt_device *dev, const ckt_binary *bin, const ckt_launch_params *p,
                            struct ckt_stream *s, ckt_error *err);
/* Both: on s; ms NULL: enqueued only; ms given: timed between two events on s and waited for. */
ckt_status ckt_launch_on(ckt_device *dev, const ckt_binary *bin, const ckt_launch_params *p,
                         struct ckt_stream *s, double *ms, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
