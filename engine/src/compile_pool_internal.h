/* The compile pool for the engine's own users (not installed): a task that is not a compile --
 * the autotuner's compile loop -- run on the same threads. */
#ifndef CKT_COMPILE_POOL_INTERNAL_H
#define CKT_COMPILE_POOL_INTERNAL_H

#include "ckt/compile_pool.h"

/* Run fn(arg) on the pool (NULL: the shared one) as a job: ckt_compile_done polls it,
 * ckt_compile_job_free cancels it while queued or waits for it while it runs (it has no result to
 * wait for). fn must not wait for other jobs of the same pool (its threads may all be such
 * tasks). */
ckt_status ckt_compile_task_start(ckt_compile_pool *pool, void (*fn)(void *), void *arg,
                                  ckt_compile_job **out, ckt_error *err);

#endif
