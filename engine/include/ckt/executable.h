/* ckt — the kernel pipeline in one call: a built kernel (ckt/kernel_ir.h) becomes an executable
 * for one target (emit, JIT compile through the context's cache, the launch signature and the
 * dynamic LDS size), and an executable launches with typed arguments, checked against the
 * kernel before anything runs. What the Lua k:compile / exe:launch do, for C programs. */
#ifndef CKT_EXECUTABLE_H
#define CKT_EXECUTABLE_H

#include <stdint.h>

#include "ckt/context.h"
#include "ckt/error.h"
#include "ckt/jit.h"
#include "ckt/kernel_ir.h"
#include "ckt/param.h"
#include "ckt/runtime.h"
#include "ckt/stream.h"
#include "ckt/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_kernel_compile_options {
    unsigned flags;             /* ckt_compile_flags: CKT_COMPILE_ONLY, CKT_COMPILE_NO_CACHE */
    const char *const *options; /* extra compiler options (may be NULL) */
    int noptions;
} ckt_kernel_compile_options;

typedef struct ckt_executable ckt_executable;

/* Emit k for target, compile it (through ctx's cache unless CKT_COMPILE_NO_CACHE; ctx NULL: no
 * cache), and keep the signature, the dynamic LDS size and the parsed target. opts may be NULL.
 * k must be finished (ckt_kernel_finish) and outlive the executable: launches check their
 * arguments against it. The kernel is not changed. */
ckt_status ckt_kernel_compile(ckt_context *ctx, const ckt_kernel *k, const char *target,
                              const ckt_kernel_compile_options *opts, ckt_executable **out,
                              ckt_error *err);
/* The same for a parsed target (ckt_target_parse), which the executable keeps. */
ckt_status ckt_kernel_compile_record(ckt_context *ctx, const ckt_kernel *k,
                                     const ckt_target_record *target,
                                     const ckt_kernel_compile_options *opts, ckt_executable **out,
                                     ckt_error *err);
void ckt_exe_free(ckt_executable *e);

const ckt_kernel *ckt_exe_kernel(const ckt_executable *e);
/* The compiled binary (owned by the executable; ckt_binary_retain to keep it longer). */
ckt_binary *ckt_exe_binary(const ckt_executable *e);
const ckt_target_record *ckt_exe_target(const ckt_executable *e);
const char *ckt_exe_source(const ckt_executable *e);
/* LDS bytes each launch requests as dynamic shared memory (CUDA above 48 KiB; else 0). */
int64_t ckt_exe_dynamic_lds_bytes(const ckt_executable *e);
/* The launch arguments in order (the kernel's non-specialized parameters): *count of them. */
const ckt_param *ckt_exe_signature(const ckt_executable *e, int *count);

/* Launch grid[0] x grid[1] x grid[2] blocks of the kernel's block size on dev's default stream
 * (dev NULL: the device of the first buffer argument) with args in signature order, and wait; *ms
 * (may be NULL) as ckt_launch. Checked before anything runs: the argument count and each kind,
 * buffers on the device, scalars that fit, and the kernel's launch conditions at these values
 * (sizes that must divide, ...), every buffer large enough for the largest element the kernel can
 * touch at these sizes and this grid (else an error naming the argument, the bytes needed and
 * given), strides that stay non-negative, a grid within the tiles. A zero-sized problem runs no
 * blocks. deadline (CLOCK_MONOTONIC seconds, 0: none): the CPU runtime stops between blocks
 * once it passes (a sandbox's time limit). */
ckt_status ckt_exe_launch(const ckt_executable *e, ckt_device *dev, const int64_t grid[3],
                          const ckt_arg *args, int nargs, double deadline, double *ms,
                          ckt_error *err);

/* The same checks, then enqueued on s without waiting (ckt/stream.h). s NULL: the default
 * stream of dev, or (dev NULL too) of the first buffer argument's device. The host cost is a
 * few microseconds: a launch with the same integer arguments, buffer sizes, grid and device as
 * the executable's last one reuses its checks, and tensor maps are encoded again only when their
 * tensor's address or sizes change. Errors of the kernel itself come with the stream's next
 * synchronization. */
ckt_status ckt_exe_launch_async(const ckt_executable *e, ckt_stream *s, ckt_device *dev,
                                const int64_t grid[3], const ckt_arg *args, int nargs,
                                ckt_error *err);
/* Both in one: on s (as ckt_exe_launch_async), with a deadline (as ckt_exe_launch); ms NULL:
 * enqueued only; ms given: timed between two events on s and waited for. */
ckt_status ckt_exe_launch_on(const ckt_executable *e, ckt_stream *s, ckt_device *dev,
                             const int64_t grid[3], const ckt_arg *args, int nargs, double deadline,
                             double *ms, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
