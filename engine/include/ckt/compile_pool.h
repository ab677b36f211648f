/* ckt — compiles in the background: a pool of host threads that runs compiles (ckt_compile, or a
 * built kernel's ckt_kernel_compile) and a handle per compile to collect its result later.
 *
 *   ckt_compile_job *jobs[32];
 *   for (int i = 0; i < 32; i++) ckt_compile_start(NULL, ctx, &reqs[i], 0, &jobs[i], &err);
 *   for (int i = 0; i < 32; i++) { ckt_compile_wait(jobs[i], &bins[i], &err);
 * ckt_compile_job_free(jobs[i]); }
 *
 * A NULL pool is the process's shared pool: one thread per online core ($CKT_COMPILE_THREADS
 * overrides, 1..256), started on first use. The context, and the kernel of a kernel compile, must
 * live until the job is waited for or freed; everything else is copied at the start. HIP compiles
 * still run one at a time (jit_hip.c); NVRTC and the host C compiler run side by side. */
#ifndef CKT_COMPILE_POOL_H
#define CKT_COMPILE_POOL_H

#include "ckt/context.h"
#include "ckt/error.h"
#include "ckt/executable.h"
#include "ckt/jit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_compile_pool ckt_compile_pool;
typedef struct ckt_compile_job ckt_compile_job;

/* A pool of `threads` threads (1..256; 0: one per online core). */
ckt_status ckt_compile_pool_create(int threads, ckt_compile_pool **out, ckt_error *err);
/* Compiles still queued are cancelled (their wait says so), running ones finish first; jobs
 * stay valid until freed. NULL: nothing. The shared pool is never freed. */
void ckt_compile_pool_free(ckt_compile_pool *pool);
int ckt_compile_pool_threads(const ckt_compile_pool *pool); /* NULL: the shared pool's */
/* The shared pool (NULL only when no thread could be started). */
ckt_compile_pool *ckt_compile_pool_shared(void);

/* Start ckt_compile(ctx, req, flags) on the pool; *out: the job. The request is copied (and
 * checked as ckt_compile checks it, so a bad request fails here, not at the wait). */
ckt_status ckt_compile_start(ckt_compile_pool *pool, ckt_context *ctx,
                             const ckt_compile_request *req, unsigned flags, ckt_compile_job **out,
                             ckt_error *err);
/* Start ckt_kernel_compile(ctx, k, target, opts) on the pool (target and options are copied). */
ckt_status ckt_compile_kernel_start(ckt_compile_pool *pool, ckt_context *ctx, const ckt_kernel *k,
                                    const char *target, const ckt_kernel_compile_options *opts,
                                    ckt_compile_job **out, ckt_error *err);
/* Wait for the job and take its result (the caller owns it), or its error. Once per job: a
 * second wait, or the other kind's wait, is CKT_EINVAL. */
ckt_status ckt_compile_wait(ckt_compile_job *job, ckt_binary **out, ckt_error *err);
ckt_status ckt_compile_wait_executable(ckt_compile_job *job, ckt_executable **out, ckt_error *err);
int ckt_compile_done(const ckt_compile_job *job); /* 1: finished (wait will not block) */
/* Free a job: a queued one is cancelled, a running one is waited for; a result not taken is
 * freed. NULL: nothing. */
void ckt_compile_job_free(ckt_compile_job *job);

#ifdef __cplusplus
}
#endif
#endif
