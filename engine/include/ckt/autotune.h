/* ckt — autotuning: the fastest of N candidate kernels (ckt/kernel_ir.h) for one problem on one
 * device, found with as few compiles and runs as the models allow.
 *
 *   1. before compiling (serial, cheap): the caller's verdict (a user filter, a build that
 *      failed), then the checks of the target and the problem: LDS bytes against the target's
 *      limit, the kernel's launch conditions and bounds at the problem's sizes and grid (tiles
 *      that do not divide), and the bank model's rating (the candidate's LDS cycles per ideal
 *      cycle against the best candidate's: above `bank_slack` times it, pruned);
 *   2. compiling the survivors on the compile pool (ckt/compile_pool.h: the shared pool that
 *      ckt.compile_all and k:compile_async use; ckt_kernel_compile through the context's
 *      compile cache);
 *   3. after compiling: spills, and registers that cap occupancy below `min_occupancy`;
 *   4. measuring the rest on the device, one at a time, on the calling thread: `warmup`
 *      launches, then the median of `runs` timed ones. On a GPU this overlaps the compiles of
 *      later candidates; on the CPU target compiles and measurements alternate in waves (a
 *      wave of `threads` compiles, then their measurements with the pool paused: they would
 *      share the cores the kernels run on).
 *
 * Candidates stream: the engine takes them in order (ckt_autotune_stream: the caller builds
 * each when asked, on the calling thread) and keeps at most `window` of them undecided at once;
 * a decided one is handed back (release) and its executable freed unless it is the best so far.
 * So memory follows the candidates in flight, not the space. The bank model rates a candidate
 * against the best rating seen so far; the first window is rated before anything compiles, and
 * a candidate is rated again when a compile thread takes it and before it is measured.
 *
 * budget_s bounds the whole search: no candidate is taken, no compile started and no
 * measurement begun after it (launches get it as their deadline); compiles already running
 * finish (they cannot be interrupted). What it leaves is pruned with out_of_budget set, and the
 * best measured so far is still the result.
 *
 * A remembered choice (ckt_autotune_recall / ckt_autotune_remember) is an entry of the context's
 * compile cache directory, written with the cache's atomic, checksummed writes (ckt/cache.h). */
#ifndef CKT_AUTOTUNE_H
#define CKT_AUTOTUNE_H

#include <stddef.h>
#include <stdint.h>

#include "ckt/context.h"
#include "ckt/error.h"
#include "ckt/executable.h"
#include "ckt/kernel_ir.h"
#include "ckt/param.h"
#include "ckt/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CKT_AUTOTUNE_PENDING, /* not decided (only while running) */
    CKT_AUTOTUNE_PRUNED, /* rejected by a model, the problem, the caller or the budget: never run */
    CKT_AUTOTUNE_FAILED, /* the build, the compile or a launch failed */
    CKT_AUTOTUNE_COMPILED, /* compiled, not measured (only while running) */
    CKT_AUTOTUNE_MEASURED
} ckt_autotune_state;
const char *ckt_autotune_state_name(ckt_autotune_state s); /* "pending", "pruned", "failed", ... */

typedef struct ckt_autotune_candidate {
    const ckt_kernel *kernel; /* finished; may be NULL when `verdict` is set */
    int64_t grid[3];          /* the launch grid for the problem (every extent >= 1) */
    const ckt_arg *args;      /* the problem, in the kernel's signature order */
    int nargs;
    /* predicted costs the caller knows from the kernel's plan: the bank model's cycles for one
     * block's LDS accesses and their conflict-free ideal (0, 0: unknown, not rated) */
    int64_t bank_cycles, bank_ideal;
    /* the caller's verdict: CKT_AUTOTUNE_PENDING (none), _PRUNED (a user filter) or _FAILED (its
     * build raised), with the reason */
    ckt_autotune_state verdict;
    const char *reason;
} ckt_autotune_candidate;

typedef struct ckt_autotune_result {
    ckt_autotune_state state;
    char reason[512];   /* why pruned / failed ("" when measured) */
    int64_t lds_bytes;  /* the kernel's LDS per block (-1: no kernel) */
    double bank_factor; /* bank cycles / ideal cycles (0: not rated) */
    ckt_resources res;  /* after compiling (-1 where unknown) */
    int occupancy; /* warps per SM (NVIDIA) / waves per SIMD (AMD) the registers allow; -1: unknown
                    */
    double compile_ms; /* -1: not compiled */
    int from_cache;    /* the compile was a compile-cache hit */
    double ms;         /* median of the timed runs (-1: not measured) */
    double score;      /* what was minimised: ms, or the metric callback's value */
    /* the winner's executable (results[best].exe): owned here; take it (and set NULL) to keep
     * it. The others' are freed as soon as they are decided. */
    ckt_executable *exe;
    /* pruned by the budget: 1 not reached (never taken from the source), 2 taken but not
     * compiled or measured in time; 0 otherwise */
    int out_of_budget;
} ckt_autotune_result;

typedef struct ckt_autotune_progress {
    int candidates, compiled, measured, pruned, failed;
    int best; /* -1: none yet */
    double best_score;
} ckt_autotune_progress;

typedef struct ckt_autotune_options {
    int threads;      /* compiles at once on the shared compile pool; 0: all its threads (one per
                       * core); more than it has: a pool of that many threads for this search */
    int warmup, runs; /* untimed launches first (0: none), then timed ones (0: 5) */
    double budget_s;  /* wall-clock budget of the whole search; 0: none. See above */
    /* prune when cycles/ideal exceeds bank_slack x the best candidate's; 0: 2.0; < 0: never */
    double bank_slack;
    int min_occupancy;      /* prune a compiled candidate whose registers allow fewer warps per SM
                             * (NVIDIA) / waves per SIMD (AMD); 0: no limit */
    int allow_spills;       /* 0: prune a compiled candidate that spills registers */
    unsigned compile_flags; /* ckt_compile_flags (CKT_COMPILE_NO_CACHE) */
    /* The score of a measured candidate (lower is better); NULL: the median ms. Returns nonzero
     * to stop the search with *err filled. Called on the calling thread. */
    int (*metric)(void *user, int i, double median_ms, const double *times, int ntimes,
                  double *score, ckt_error *err);
    /* Called on the calling thread after each state change; nonzero stops the search (*err). */
    int (*progress)(void *user, const ckt_autotune_progress *p, ckt_error *err);
    void *user;
    /* candidates taken and not yet decided at most (their kernels alive); 0: 8 x threads,
     * within [32, 256] */
    int window;
} ckt_autotune_options;

/* Tune: results[0..n) gets one record per candidate, *best the index of the lowest score (-1
 * when nothing was measured: not an error; the records say why). dev may be NULL: device 0 of
 * the target's runtime is opened; a GPU target on a machine without that GPU is CKT_ERUNTIME
 * before anything compiles. Errors (bad arguments, a callback's stop) return nonzero; the
 * results filled so far stay valid and must be freed. */
ckt_status ckt_autotune(ckt_context *ctx, ckt_device *dev, const char *target,
                        const ckt_autotune_candidate *cands, int n,
                        const ckt_autotune_options *opts, ckt_autotune_result *results, int *best,
                        ckt_error *err);
/* The candidates on demand: next(user, i, &c, err) fills candidate i (i = 0, 1, ..., n - 1 in
 * order; c is zeroed with verdict CKT_AUTOTUNE_PENDING first) on the calling thread, nonzero to
 * stop the search with *err; its kernel and arguments must stay valid until release(user, i),
 * which comes for every candidate taken except the winner (release may be NULL). */
typedef struct ckt_autotune_source {
    int (*next)(void *user, int i, ckt_autotune_candidate *c, ckt_error *err);
    void (*release)(void *user, int i);
    void *user;
} ckt_autotune_source;
/* ckt_autotune over a source of n candidates (dev NULL: device 0 of the target's runtime). */
ckt_status ckt_autotune_stream(ckt_context *ctx, ckt_device *dev, const char *target,
                               const ckt_autotune_source *src, int n,
                               const ckt_autotune_options *opts, ckt_autotune_result *results,
                               int *best, ckt_error *err);
/* Free the executables still held by results. */
void ckt_autotune_results_free(ckt_autotune_result *results, int n);

/* Warps per SM (NVIDIA) / waves per SIMD (AMD) that `registers` per thread (AMD: VGPRs + AGPRs)
 * allow for blocks of `block` threads on target; -1 when the target has no register model. */
int ckt_autotune_occupancy(const ckt_target_record *t, int64_t registers, int64_t block);

/* ---- the remembered choice ---- */

/* The record's key: the parts the caller names (kernel family, config-space hash, problem
 * signature, target), the device's name and driver version, and the ckt version. */
ckt_status ckt_autotune_key(const char *const *parts, int nparts, ckt_device *dev, char key[65],
                            ckt_error *err);
typedef enum { CKT_RECALL_MISS, CKT_RECALL_HIT, CKT_RECALL_CORRUPT } ckt_recall;
/* Look the key up in the context's cache directory. HIT: *payload (malloc'd, NUL-terminated)
 * and *size. CORRUPT: a damaged entry was found, removed, and `note` says why. MISS otherwise
 * (including no cache). */
ckt_recall ckt_autotune_recall(ckt_context *ctx, const char *key, char **payload, size_t *size,
                               char *note, size_t cap);
/* Store payload under key (atomic, checksummed); 1 when stored. */
int ckt_autotune_remember(ckt_context *ctx, const char *key, const void *payload, size_t size);

#ifdef __cplusplus
}
#endif
#endif
