/* Autotuning (ckt/autotune.h): prune by the models, compile on the compile pool
 * (ckt/compile_pool.h: the shared one, which ckt.compile_all and k:compile_async use too),
 * measure on the calling thread, remember the winner in the cache directory.
 *
 * What runs on the compile threads is ckt_kernel_compile on distinct, finished kernels. Checked
 * for thread safety (see docs/autotune.md): the emitter reads the kernel and writes into its own
 * copy of the expression pool; the compile cache's writes are atomic renames of unique temporary
 * files and its counters sit behind a mutex; NVRTC compiles distinct programs concurrently (its
 * documented guarantee); hipRTC / comgr compiles are serialized by jit_hip.c's lock (Debian's
 * ROCm 5.2 hipRTC keeps process-wide LLVM state), so HIP candidates compile one at a time and
 * only overlap with emission, cache reads and measurement; the CPU target forks the host C
 * compiler, whose output pipes are close-on-exec so one child never holds another's pipe open.
 * The GPU compilers' libraries are loaded once on this thread before the pool starts.
 *
 * On the pool, the search runs as tasks (compile_pool_internal.h), at most `threads` at once:
 * a task compiles queued candidates while the search lets it (not warming up, not paused, not
 * stopped, the deadline not in the way) and then ends; it never waits, so the tasks of a search
 * never hold a shared thread idle, and the driver starts another whenever work is queued and
 * one of its slots is free. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckt/autotune.h"
#include "ckt/cache.h"
#include "ckt/ckt.h"
#include "compile_pool_internal.h"
#include "dynlib.h"
#include "jit_internal.h"

#define MAX_RUNS 1000
#define DEFAULT_SLACK 2.0

const char *ckt_autotune_state_name(ckt_autotune_state s)
{
    switch (s) {
    case CKT_AUTOTUNE_PENDING: return "pending";
    case CKT_AUTOTUNE_PRUNED: return "pruned";
    case CKT_AUTOTUNE_FAILED: return "failed";
    case CKT_AUTOTUNE_COMPILED: return "compiled";
    case CKT_AUTOTUNE_MEASURED: return "measured";
    }
    return "?";
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- the register model (occupancy) ---- */

/* Warps an SM (NVIDIA) / waves a SIMD (AMD) holds of blocks of `block` threads with `registers`
 * registers a thread: the engine's occupancy model (ckt_target_occupancy); -1 when unknown. */
int ckt_autotune_occupancy(const ckt_target_record *t, int64_t registers, int64_t block)
{
    ckt_occupancy o;
    if (!t || registers <= 0 || ckt_target_occupancy(t, block, registers, 0, &o, NULL)) return -1;
    return o.waves;
}

static int64_t registers_of(const ckt_target_record *t, const ckt_resources *r)
{
    if (t->hw.vendor == CKT_VENDOR_NVIDIA) return r->registers;
    if (r->vgprs < 0) return -1;
    return r->vgprs + (t->hw.unified_agprs && r->agprs > 0 ? r->agprs : 0);
}

static int64_t spills_of(const ckt_resources *r)
{
    int64_t s = 0;
    const int64_t v[] = {r->spill_stores, r->spill_loads, r->vgpr_spills, r->sgpr_spills};
    for (int i = 0; i < 4; i++) s += v[i] > 0 ? v[i] : 0;
    return s;
}

/* ---- the search ---- */

struct tuner;
/* One of the search's places on the pool: a task started there, running until it ends. */
typedef struct slot {
    struct tuner *t;
    ckt_compile_job *job; /* freed by the driver once the task has ended */
    int running;          /* behind the tuner's lock: started and not ended */
} slot;

/* One search. The calling thread (the driver) takes candidates from the source, rates them,
 * queues the survivors, measures, and hands decided candidates back; the pool compiles. */
typedef struct tuner {
    ckt_context *ctx;
    ckt_device *dev;
    const ckt_target_record *rec;
    const ckt_autotune_source *src;
    ckt_autotune_candidate *c; /* n; filled as they are taken */
    ckt_autotune_result *r;
    const ckt_autotune_options *o;
    int n, window, nthreads, overlap;
    double slack;
    ckt_compile_pool *pool; /* NULL: none could start; the driver compiles */
    slot *slots;            /* nthreads */
    /* shared with the pool: behind lock */
    pthread_mutex_t lock;
    pthread_cond_t changed;   /* a compile ended or the pool stopped (the driver waits on it) */
    int *queue, qhead, qtail; /* candidates waiting for a compile thread */
    int active;               /* compiles running */
    int ready;                /* compiled, not yet taken for measuring */
    int warming;              /* no compile starts: the first window is still being rated */
    int pause;                /* no compile starts: measuring on the CPU target */
    int stop;                 /* no compile starts any more */
    double bank_best;         /* the lowest bank rating so far (0: none) */
    double compile_s;         /* wall-clock seconds of the compiles so far */
    int ncompiles;
    /* the driver's own */
    int taken; /* candidates [0, taken) were taken from the source */
    int held;  /* taken and not handed back */
    int lo;    /* below lo: every candidate handed back, or the best */
    unsigned char *released;
    int *todo; /* scratch: candidates to hand back / to measure */
    ckt_autotune_progress p;
    double t0, deadline, last_report;
} tuner;

static void verdict(ckt_autotune_result *r, ckt_autotune_state s, const char *fmt, const char *a,
                    const char *b)
{
    r->state = s;
    snprintf(r->reason, sizeof r->reason, fmt, a, b);
}

static int over_budget(const tuner *t) { return t->deadline > 0 && now_s() >= t->deadline; }

/* The bank model's rating of candidate i against the best so far (lock held, or before the
 * pool can see i): pruned when it is more than `slack` times worse. */
static int bank_prune(tuner *t, int i)
{
    ckt_autotune_result *r = &t->r[i];
    double best = t->bank_best;
    if (r->state != CKT_AUTOTUNE_PENDING && r->state != CKT_AUTOTUNE_COMPILED) return 0;
    if (t->slack <= 0 || best <= 0 || r->bank_factor <= t->slack * best * (1 + 1e-9)) return 0;
    char a[96], b[96];
    snprintf(a, sizeof a, "%.2f cycles per conflict-free cycle", r->bank_factor);
    snprintf(b, sizeof b, "%.2f x the best candidate's %.2f", t->slack, best);
    verdict(r, CKT_AUTOTUNE_PRUNED, "bank model: %s, more than %s", a, b);
    return 1;
}

/* A compile started now would end after the deadline (by the mean compile so far). */
static int compile_would_overrun(const tuner *t)
{
    if (t->deadline <= 0) return 0;
    double mean = t->ncompiles > 0 ? t->compile_s / t->ncompiles : 0;
    return now_s() + mean >= t->deadline;
}

/* Take the next queued candidate and compile it (lock held; released while compiling). */
static void compile_one(tuner *t)
{
    int i = t->queue[t->qhead++];
    if (bank_prune(t, i)) {
        pthread_cond_broadcast(&t->changed);
        return;
    }
    t->active++;
    pthread_mutex_unlock(&t->lock);
    ckt_kernel_compile_options co = {t->o->compile_flags, NULL, 0};
    ckt_executable *exe = NULL;
    ckt_error e;
    ckt_error_clear(&e);
    double s0 = now_s();
    ckt_status s = ckt_kernel_compile_record(t->ctx, t->c[i].kernel, t->rec, &co, &exe, &e);
    double dt = now_s() - s0;
    pthread_mutex_lock(&t->lock);
    t->active--;
    t->compile_s += dt, t->ncompiles++;
    ckt_autotune_result *r = &t->r[i];
    if (s)
        verdict(r, CKT_AUTOTUNE_FAILED, "compile: %.490s%s", e.msg, "");
    else {
        const ckt_binary *b = ckt_exe_binary(exe);
        r->state = CKT_AUTOTUNE_COMPILED;
        r->exe = exe;
        r->compile_ms = ckt_binary_compile_ms(b);
        r->from_cache = ckt_binary_from_cache(b);
        r->res = *ckt_binary_resources(b);
        t->ready++;
    }
    pthread_cond_broadcast(&t->changed);
}

/* May a compile start now (lock held)? Past the deadline, or when one would end after it, the
 * pool stops. */
static int compile_may_start(tuner *t)
{
    if (t->stop || t->warming || t->pause || t->qhead == t->qtail) return 0;
    if (compile_would_overrun(t)) {
        t->stop = 1;
        pthread_cond_broadcast(&t->changed);
        return 0;
    }
    return 1;
}

/* A task on the pool: compile what is queued while the search lets it, then end. */
static void compile_task(void *arg)
{
    slot *sl = arg;
    tuner *t = sl->t;
    pthread_mutex_lock(&t->lock);
    while (compile_may_start(t)) compile_one(t);
    sl->running = 0;
    pthread_cond_broadcast(&t->changed);
    pthread_mutex_unlock(&t->lock);
}

/* Work is queued that a free slot could start (lock held): the driver must not wait then. */
static int slot_wanted(const tuner *t)
{
    if (!t->pool || t->stop || t->warming || t->pause || t->qhead == t->qtail) return 0;
    for (int k = 0; k < t->nthreads; k++)
        if (!t->slots[k].running) return 1;
    return 0;
}

/* The driver: free the jobs of ended tasks, and start a task in each free slot while compiles
 * are queued and may start. */
static void pump(tuner *t)
{
    for (int k = 0; t->pool && k < t->nthreads; k++) {
        slot *sl = &t->slots[k];
        pthread_mutex_lock(&t->lock);
        int ended = !sl->running, start = ended && slot_wanted(t);
        if (start) sl->running = 1;
        pthread_mutex_unlock(&t->lock);
        if (ended && sl->job) { /* its task is past the tuner: this wait is brief */
            ckt_compile_job_free(sl->job);
            sl->job = NULL;
        }
        if (start && ckt_compile_task_start(t->pool, compile_task, sl, &sl->job, NULL)) {
            pthread_mutex_lock(&t->lock);
            sl->running = 0; /* no memory for a job: the driver compiles from now on */
            t->pool = NULL;
            pthread_mutex_unlock(&t->lock);
        }
    }
}

/* The problem against the kernel before anything compiles: the arguments' kinds, the launch
 * conditions at these sizes (tiles that must divide) and the bounds at this grid. */
static ckt_status check_problem(const ckt_autotune_candidate *c, ckt_device *dev, ckt_error *err)
{
    const ckt_kernel *k = c->kernel;
    int64_t values[CKT_K_MAX_PARAMS] = {0};
    uint64_t bytes[CKT_K_MAX_PARAMS];
    int a = 0;
    for (int i = 0; i < CKT_K_MAX_PARAMS; i++) bytes[i] = UINT64_MAX;
    for (int i = 0; i < ckt_kernel_nparams(k); i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (p->derived) continue;
        if (p->specialized) {
            values[i] = p->ivalue;
            continue;
        }
        if (a >= c->nargs)
            return ckt_fail(err, CKT_EINVAL,
                            "problem: argument '%s' is missing (kernel '%s' takes more than %d)",
                            p->name, ckt_kernel_name(k), c->nargs);
        const ckt_arg *x = &c->args[a++];
        if (x->kind != p->kind)
            return ckt_fail(err, CKT_EINVAL, "problem: argument '%s' must be %s, got %s", p->name,
                            ckt_param_kind_name(p->kind), ckt_param_kind_name(x->kind));
        if (p->kind == CKT_PARAM_PTR) {
            if (!x->v.buffer)
                return ckt_fail(err, CKT_EINVAL, "problem: argument '%s' is a NULL buffer",
                                p->name);
            if (ckt_buffer_device(x->v.buffer) != dev)
                return ckt_fail(err, CKT_EINVAL,
                                "problem: argument '%s' is a buffer of another device", p->name);
            bytes[i] = (uint64_t)ckt_buffer_size(x->v.buffer);
        }
        values[i] = p->kind == CKT_PARAM_I32 ? x->v.i32 : p->kind == CKT_PARAM_I64 ? x->v.i64 : 0;
    }
    if (a != c->nargs)
        return ckt_fail(err, CKT_EINVAL, "problem: %d arguments for kernel '%s', which takes %d",
                        c->nargs, ckt_kernel_name(k), a);
    bool empty = false;
    ckt_status s = ckt_kernel_check_launch(k, values, err);
    if (!s) s = ckt_kernel_check_bounds(k, values, c->grid, bytes, &empty, err);
    return s;
}

/* Step 1 for candidate i (before the pool sees it): the caller's verdict, the target's LDS, the
 * problem; then its bank rating. */
static void rate(tuner *t, int i)
{
    const ckt_autotune_candidate *c = &t->c[i];
    ckt_autotune_result *r = &t->r[i];
    if (c->verdict == CKT_AUTOTUNE_PRUNED || c->verdict == CKT_AUTOTUNE_FAILED) {
        verdict(r, c->verdict, "%.500s%s", c->reason ? c->reason : "by the caller", "");
        return;
    }
    if (!c->kernel || !ckt_kernel_is_finished(c->kernel)) {
        verdict(r, CKT_AUTOTUNE_FAILED, "%s%s",
                c->kernel ? "the kernel is not finished" : "no kernel", "");
        return;
    }
    r->lds_bytes = ckt_kernel_lds_bytes(c->kernel);
    ckt_error e;
    char a[64], b[64];
    if (t->rec->lds_max_bytes > 0 && r->lds_bytes > t->rec->lds_max_bytes) {
        snprintf(a, sizeof a, "%lld", (long long)r->lds_bytes);
        snprintf(b, sizeof b, "%lld bytes of %s", (long long)t->rec->lds_max_bytes, t->rec->arch);
        verdict(r, CKT_AUTOTUNE_PRUNED, "LDS: %s bytes per block, more than the %s", a, b);
    } else if (check_problem(c, t->dev, &e)) {
        verdict(r, CKT_AUTOTUNE_PRUNED, "does not fit the problem: %.480s%s", e.msg, "");
    } else if (c->bank_ideal > 0 && c->bank_cycles > 0) {
        r->bank_factor = (double)c->bank_cycles / (double)c->bank_ideal;
    }
}

/* Take candidate `taken` from the source, rate it and queue it for a compile. */
static ckt_status take(tuner *t, ckt_error *err)
{
    int i = t->taken;
    ckt_autotune_candidate *c = &t->c[i];
    memset(c, 0, sizeof *c);
    c->verdict = CKT_AUTOTUNE_PENDING;
    ckt_error e;
    ckt_error_clear(&e);
    if (t->src->next(t->src->user, i, c, &e)) {
        if (err) *err = e;
        return e.status ? e.status : CKT_EINVAL;
    }
    t->taken = i + 1, t->held++;
    if (c->nargs < 0 || c->nargs > CKT_K_MAX_PARAMS || (c->nargs > 0 && !c->args))
        return ckt_fail(err, CKT_EINVAL, "autotune: candidate %d: nargs %d with args %s", i,
                        c->nargs, c->args ? "given" : "NULL");
    rate(t, i);
    pthread_mutex_lock(&t->lock);
    ckt_autotune_result *r = &t->r[i];
    if (r->state == CKT_AUTOTUNE_PENDING && r->bank_factor > 0 &&
        (t->bank_best <= 0 || r->bank_factor < t->bank_best))
        t->bank_best = r->bank_factor;
    if (r->state == CKT_AUTOTUNE_PENDING && !bank_prune(t, i)) t->queue[t->qtail++] = i;
    pthread_mutex_unlock(&t->lock);
    return CKT_OK;
}

/* Step 3: spills and occupancy, from the compiled code's resources. */
static void prune_after(tuner *t, int i)
{
    ckt_autotune_result *r = &t->r[i];
    int64_t regs = registers_of(t->rec, &r->res);
    r->occupancy = ckt_autotune_occupancy(t->rec, regs, ckt_kernel_block(t->c[i].kernel));
    char a[96], b[96];
    int64_t spills = spills_of(&r->res);
    if (!t->o->allow_spills && spills > 0) {
        snprintf(a, sizeof a, "%lld", (long long)spills);
        verdict(r, CKT_AUTOTUNE_PRUNED, "spills: %s bytes/registers spilled%s", a, "");
    } else if (t->o->min_occupancy > 0 && r->occupancy >= 0 && r->occupancy < t->o->min_occupancy) {
        snprintf(a, sizeof a, "%lld registers per thread allow %d %s", (long long)regs,
                 r->occupancy,
                 t->rec->hw.vendor == CKT_VENDOR_NVIDIA ? "warps per SM" : "waves per SIMD");
        snprintf(b, sizeof b, "%d", t->o->min_occupancy);
        verdict(r, CKT_AUTOTUNE_PRUNED, "occupancy: %s, fewer than min_occupancy %s", a, b);
    }
}

static void hand_back(tuner *t, int i)
{
    if (t->released[i]) return;
    ckt_exe_free(t->r[i].exe);
    t->r[i].exe = NULL;
    t->released[i] = 1, t->held--;
    if (t->src->release) t->src->release(t->src->user, i);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void out_of_budget(ckt_autotune_result *r, int how, const char *when)
{
    verdict(r, CKT_AUTOTUNE_PRUNED, "budget_s spent %s%s", when, "");
    r->out_of_budget = how;
}

/* Step 4 for a compiled candidate (taken off the ready count): rated again by the bank model
 * and after compiling, then warmup launches and the median of the timed ones, each with the
 * deadline. A launch that fails fails the candidate; a metric callback that fails stops the
 * search (returned). */
static ckt_status measure(tuner *t, int i, ckt_error *err)
{
    ckt_autotune_result *r = &t->r[i];
    const ckt_autotune_candidate *c = &t->c[i];
    pthread_mutex_lock(&t->lock);
    bank_prune(t, i);
    pthread_mutex_unlock(&t->lock);
    if (r->state == CKT_AUTOTUNE_COMPILED) prune_after(t, i);
    if (r->state != CKT_AUTOTUNE_COMPILED) return CKT_OK; /* handed back by the next sweep */
    int warmup = t->o->warmup, runs = t->o->runs > 0 ? t->o->runs : 5;
    double times[MAX_RUNS], sorted[MAX_RUNS];
    ckt_error e;
    for (int k = 0; k < warmup + runs; k++) {
        double ms = 0;
        if (over_budget(t)) {
            out_of_budget(r, 2, k ? "while it was measured" : "before it was measured");
            return CKT_OK;
        }
        if (ckt_exe_launch(r->exe, t->dev, c->grid, c->args, c->nargs, t->deadline, &ms, &e)) {
            if (over_budget(t))
                out_of_budget(r, 2, "while it was measured");
            else
                verdict(r, CKT_AUTOTUNE_FAILED, "launch: %.500s%s", e.msg, "");
            return CKT_OK;
        }
        if (k >= warmup) times[k - warmup] = ms;
    }
    memcpy(sorted, times, sizeof(double) * (size_t)runs);
    qsort(sorted, (size_t)runs, sizeof *sorted, cmp_double);
    r->ms = runs % 2 ? sorted[runs / 2] : 0.5 * (sorted[runs / 2 - 1] + sorted[runs / 2]);
    r->score = r->ms;
    r->state = CKT_AUTOTUNE_MEASURED;
    if (t->o->metric && t->o->metric(t->o->user, i, r->ms, times, runs, &r->score, err))
        return err ? err->status : CKT_EINVAL;
    if (r->score != r->score)
        return ckt_fail(err, CKT_EINVAL, "autotune: the score of candidate %d is NaN", i);
    if (t->p.best < 0 || r->score < t->p.best_score) {
        int old = t->p.best;
        t->p.best = i, t->p.best_score = r->score;
        if (old >= 0) hand_back(t, old);
    }
    return CKT_OK;
}

static void count(tuner *t)
{
    ckt_autotune_progress *p = &t->p;
    p->compiled = p->measured = p->pruned = p->failed = 0;
    pthread_mutex_lock(&t->lock);
    for (int i = 0; i < t->n; i++) {
        ckt_autotune_state s = t->r[i].state;
        p->compiled += t->r[i].compile_ms >= 0;
        p->measured += s == CKT_AUTOTUNE_MEASURED;
        p->pruned += s == CKT_AUTOTUNE_PRUNED;
        p->failed += s == CKT_AUTOTUNE_FAILED;
    }
    pthread_mutex_unlock(&t->lock);
}

/* The progress callback: after a measurement, else at most every 0.1 s (counting is O(n)). */
static ckt_status report(tuner *t, int now, ckt_error *err)
{
    if (!t->o->progress) return CKT_OK;
    double s = now_s();
    if (!now && s - t->last_report < 0.1) return CKT_OK;
    t->last_report = s;
    count(t);
    return t->o->progress(t->o->user, &t->p, err) ? (err ? err->status : CKT_EINVAL) : CKT_OK;
}

/* Decided candidates (lock held): listed in t->todo to be handed back once the lock is
 * released. Returns how many. */
static int decided(tuner *t)
{
    int k = 0;
    while (t->lo < t->taken && (t->released[t->lo] || t->lo == t->p.best)) t->lo++;
    for (int i = t->lo; i < t->taken; i++) {
        ckt_autotune_state s = t->r[i].state;
        if (!t->released[i] && i != t->p.best &&
            (s == CKT_AUTOTUNE_PRUNED || s == CKT_AUTOTUNE_FAILED || s == CKT_AUTOTUNE_MEASURED))
            t->todo[k++] = i;
    }
    return k;
}

static void wait_changed(tuner *t)
{
    if (t->deadline <= 0) {
        pthread_cond_wait(&t->changed, &t->lock);
        return;
    }
    struct timespec ts;
    double d = t->deadline + 1e-3;
    ts.tv_sec = (time_t)d;
    ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&t->changed, &t->lock, &ts);
}

enum { ACT_NONE, ACT_TAKE, ACT_MEASURE, ACT_COMPILE, ACT_DONE };

/* The calling thread's loop: hand back what is decided; measure what is compiled (GPU: as it
 * arrives, overlapping the pool; CPU: in waves of `threads`, with the pool paused); take more
 * candidates while fewer than `window` are undecided; else wait for the pool. Ends when every
 * candidate is decided, or at the deadline. */
static ckt_status drive(tuner *t, ckt_error *err)
{
    ckt_status s = CKT_OK;
    while (!s) {
        if (over_budget(t)) break;
        pump(t);
        pthread_mutex_lock(&t->lock);
        int threaded = t->pool != NULL; /* else the driver compiles too */
        int nback = decided(t), act = ACT_NONE, nmeasure = 0;
        int queued = t->qtail - t->qhead;
        int can_take = !t->stop && t->taken < t->n && t->held - nback < t->window;
        if (t->warming &&
            (!can_take || (t->deadline > 0 && now_s() - t->t0 > 0.25 * (t->deadline - t->t0))))
            t->warming = 0;
        int measure_now =
            t->ready > 0 && (t->overlap || t->ready >= t->nthreads ||
                             (t->active == 0 && (queued == 0 || t->stop || !threaded)));
        if (measure_now) {
            act = ACT_MEASURE;
            if (!t->overlap) { /* the pool pauses; the compiles running end first */
                t->pause = 1;
                while (t->active > 0) pthread_cond_wait(&t->changed, &t->lock);
            }
            for (int i = t->lo; i < t->taken; i++)
                if (t->r[i].state == CKT_AUTOTUNE_COMPILED) t->todo[nback + nmeasure++] = i;
            t->ready -= nmeasure;
        } else if (can_take) {
            act = ACT_TAKE;
        } else if (!threaded && compile_may_start(t)) {
            act = ACT_COMPILE;
            compile_one(t);
        } else if (t->ready == 0 && t->active == 0 && (queued == 0 || t->stop) && nback == 0) {
            act = ACT_DONE;
        } else if (nback == 0 && !slot_wanted(t)) {
            wait_changed(t);
        }
        pthread_mutex_unlock(&t->lock);
        for (int k = 0; k < nback; k++) hand_back(t, t->todo[k]);
        if (act == ACT_DONE) break;
        if (act == ACT_TAKE) s = take(t, err);
        for (int k = 0; k < nmeasure && !s; k++) {
            int i = t->todo[nback + k];
            if (over_budget(t)) break; /* left compiled: pruned by the budget below */
            s = measure(t, i, err);
            if (!s) s = report(t, 1, err);
        }
        if (act == ACT_MEASURE && !t->overlap) {
            pthread_mutex_lock(&t->lock);
            t->pause = 0;
            pthread_mutex_unlock(&t->lock);
        }
        if (!s) s = report(t, 0, err);
    }
    return s;
}

/* Load the target's compiler library on this thread, once, before the pool shares it. */
static ckt_status warm_compiler(const ckt_target_record *rec, ckt_error *err)
{
    char id[256];
    ckt_status s = ckt_jit_backend_for(rec->compiler)->identity(id, sizeof id, err);
    return s ? ckt_fail_prefix(err, "autotune: ") : CKT_OK;
}

static ckt_status open_device(ckt_context *ctx, const ckt_target_record *rec,
                              const ckt_autotune_candidate *c, int n, ckt_device **dev, int *owned,
                              ckt_error *err)
{
    *owned = 0;
    for (int i = 0; c && !*dev && i < n; i++)
        for (int a = 0; a < c[i].nargs && c[i].args && !*dev; a++)
            if (c[i].args[a].kind == CKT_PARAM_PTR && c[i].args[a].v.buffer)
                *dev = ckt_buffer_device(c[i].args[a].v.buffer);
    if (!*dev) {
        ckt_error e;
        if (ckt_device_open(ctx, ckt_backend_name(rec->runtime), dev, &e))
            return ckt_fail(err, CKT_ERUNTIME,
                            "autotune: target '%s' runs on a %s device and this machine has none "
                            "(%.600s); tune for the CPU target (cpu:%s) instead",
                            rec->name, ckt_backend_name(rec->runtime), e.msg, rec->arch);
        *owned = 1;
    }
    if (ckt_device_backend(*dev) != rec->runtime)
        return ckt_fail(err, CKT_EINVAL, "autotune: target '%s' runs on a %s device, not on %s",
                        rec->name, ckt_backend_name(rec->runtime), ckt_device_name(*dev));
    return CKT_OK;
}

static ckt_status check_options(const ckt_autotune_options *o, ckt_error *err)
{
    if (o->threads < 0 || o->threads > 256)
        return ckt_fail(err, CKT_EINVAL,
                        "autotune: threads %d must be in [0, 256] (0: the online cores)",
                        o->threads);
    if (o->warmup < 0 || o->warmup > MAX_RUNS)
        return ckt_fail(err, CKT_EINVAL, "autotune: warmup %d must be in [0, %d]", o->warmup,
                        MAX_RUNS);
    if (o->runs < 0 || o->runs > MAX_RUNS)
        return ckt_fail(err, CKT_EINVAL, "autotune: runs %d must be in [0, %d]", o->runs, MAX_RUNS);
    if (!(o->budget_s >= 0) || o->budget_s > 1e7)
        return ckt_fail(err, CKT_EINVAL, "autotune: budget_s %g must be a number of seconds >= 0",
                        o->budget_s);
    if (o->bank_slack != o->bank_slack || (o->bank_slack > 0 && o->bank_slack < 1))
        return ckt_fail(
            err, CKT_EINVAL,
            "autotune: bank_slack %g must be >= 1 (0: the default 2, < 0: no bank pruning)",
            o->bank_slack);
    if (o->min_occupancy < 0)
        return ckt_fail(err, CKT_EINVAL, "autotune: min_occupancy %d must be >= 0",
                        o->min_occupancy);
    if (o->window < 0 || o->window > (1 << 20))
        return ckt_fail(err, CKT_EINVAL, "autotune: window %d must be in [0, %d] (0: the default)",
                        o->window, 1 << 20);
    return CKT_OK;
}

/* The pool the search compiles on: the shared one, at most `threads` of its threads at once (0:
 * all of them); asked for more threads than it has, a pool of that many for this search. */
static void choose_pool(tuner *t, int threads, ckt_compile_pool **own)
{
    *own = NULL;
    int shared = ckt_compile_pool_threads(NULL);
    t->pool = ckt_compile_pool_shared();
    if (threads > shared && ckt_compile_pool_create(threads, own, NULL) == CKT_OK) t->pool = *own;
    t->nthreads = threads > 0 ? threads : shared > 0 ? shared : 1;
}

static ckt_status run_pool(tuner *t, ckt_error *err)
{
    t->slots = calloc((size_t)t->nthreads, sizeof *t->slots);
    if (!t->slots) return ckt_fail(err, CKT_ENOMEM, "autotune: out of memory");
    for (int k = 0; k < t->nthreads; k++) t->slots[k].t = t;
    ckt_status s = drive(t, err);
    pthread_mutex_lock(&t->lock);
    t->stop = 1;
    pthread_mutex_unlock(&t->lock);
    /* a queued task is cancelled; a running one ends after the compile it is in */
    for (int k = 0; k < t->nthreads; k++) ckt_compile_job_free(t->slots[k].job);
    free(t->slots);
    t->slots = NULL;
    return s;
}

static void init_results(ckt_autotune_result *results, int n)
{
    for (int i = 0; i < n; i++) {
        ckt_resources none = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
        memset(&results[i], 0, sizeof results[i]);
        results[i].lds_bytes = -1, results[i].compile_ms = -1, results[i].ms = -1,
        results[i].score = -1, results[i].occupancy = -1;
        results[i].res = none;
    }
}

/* The search over a source, on an open device. */
static ckt_status tune(ckt_context *ctx, ckt_device *dev, const ckt_target_record *rec,
                       const ckt_autotune_source *src, int n, const ckt_autotune_options *o,
                       ckt_autotune_result *results, int *best, ckt_error *err)
{
    tuner t;
    memset(&t, 0, sizeof t);
    t.ctx = ctx, t.dev = dev, t.rec = rec, t.src = src, t.r = results, t.o = o, t.n = n;
    t.t0 = now_s();
    t.deadline = o->budget_s > 0 ? t.t0 + o->budget_s : 0;
    t.overlap = rec->runtime != CKT_BACKEND_CPU;
    t.slack = o->bank_slack == 0 ? DEFAULT_SLACK : o->bank_slack;
    ckt_compile_pool *own;
    choose_pool(&t, o->threads, &own);
    if (t.nthreads > n) t.nthreads = n;
    t.window = o->window > 0          ? o->window
               : 8 * t.nthreads < 32  ? 32
               : 8 * t.nthreads > 256 ? 256
                                      : 8 * t.nthreads;
    t.warming = 1;
    t.p.candidates = n, t.p.best = -1;
    t.c = calloc((size_t)n, sizeof *t.c);
    t.queue = calloc((size_t)n, sizeof *t.queue);
    t.todo = calloc((size_t)n, sizeof *t.todo);
    t.released = calloc((size_t)n, 1);
    ckt_status s = CKT_OK;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&t.lock, NULL);
    pthread_cond_init(&t.changed, &ca);
    pthread_condattr_destroy(&ca);
    if (!t.c || !t.queue || !t.todo || !t.released)
        s = ckt_fail(err, CKT_ENOMEM, "autotune: out of memory");
    if (!s) s = report(&t, 1, err);
    if (!s) s = run_pool(&t, err);
    /* what the budget or a stop left undecided */
    for (int i = 0; i < n; i++) {
        ckt_autotune_result *r = &results[i];
        if (r->state != CKT_AUTOTUNE_PENDING && r->state != CKT_AUTOTUNE_COMPILED) continue;
        if (s)
            verdict(r, CKT_AUTOTUNE_PRUNED, "%s%s", "the search stopped before it", "");
        else if (i >= t.taken)
            out_of_budget(r, 1, "before it was reached");
        else
            out_of_budget(r, 2,
                          r->state == CKT_AUTOTUNE_PENDING ? "before it was compiled"
                                                           : "before it was measured");
    }
    for (int i = 0; t.released && i < t.taken; i++)
        if (i != t.p.best) hand_back(&t, i);
    if (!s) s = report(&t, 1, err);
    *best = t.p.best;
    free(t.c);
    free(t.queue);
    free(t.todo);
    free(t.released);
    pthread_mutex_destroy(&t.lock);
    pthread_cond_destroy(&t.changed);
    ckt_compile_pool_free(own);
    return s;
}

/* Arguments and the target, then the device; *owned: opened here. */
static ckt_status begin(ckt_context *ctx, ckt_device **dev, const char *target,
                        const ckt_autotune_candidate *cands, int n,
                        const ckt_autotune_options **opts, ckt_autotune_result *results, int *best,
                        ckt_target_record *rec, int *owned, ckt_error *err)
{
    static const ckt_autotune_options defaults = {0};
    *owned = 0;
    if (!results || !best)
        return ckt_fail(err, CKT_EINVAL, "autotune: %s is NULL", results ? "best" : "results");
    *best = -1;
    if (n < 1) return ckt_fail(err, CKT_EINVAL, "autotune: %d candidates (need at least one)", n);
    init_results(results, n);
    if (!*opts) *opts = &defaults;
    ckt_status s = check_options(*opts, err);
    if (s) return s;
    if (ckt_target_parse(target ? target : ckt_context_default_target(ctx), rec, err))
        return ckt_fail_prefix(err, "autotune: ");
    if ((s = open_device(ctx, rec, cands, n, dev, owned, err)) || (s = warm_compiler(rec, err))) {
        if (*owned) ckt_device_close(*dev);
        *owned = 0;
    }
    return s;
}

static int array_next(void *user, int i, ckt_autotune_candidate *c, ckt_error *err)
{
    (void)err;
    *c = ((const ckt_autotune_candidate *)user)[i];
    return 0;
}

ckt_status ckt_autotune(ckt_context *ctx, ckt_device *dev, const char *target,
                        const ckt_autotune_candidate *cands, int n,
                        const ckt_autotune_options *opts, ckt_autotune_result *results, int *best,
                        ckt_error *err)
{
    if (results && best && n >= 1 && !cands)
        return *best = -1, ckt_fail(err, CKT_EINVAL, "autotune: candidates is NULL");
    for (int i = 0; cands && results && best && i < n; i++)
        if (cands[i].nargs < 0 || cands[i].nargs > CKT_K_MAX_PARAMS ||
            (cands[i].nargs > 0 && !cands[i].args))
            return *best = -1,
                   ckt_fail(err, CKT_EINVAL, "autotune: candidate %d: nargs %d with args %s", i,
                            cands[i].nargs, cands[i].args ? "given" : "NULL");
    ckt_target_record rec;
    int owned;
    ckt_status s = begin(ctx, &dev, target, cands, n, &opts, results, best, &rec, &owned, err);
    if (s) return s;
    ckt_autotune_source src = {array_next, NULL, (void *)cands};
    s = tune(ctx, dev, &rec, &src, n, opts, results, best, err);
    if (owned) ckt_device_close(dev);
    return s;
}

ckt_status ckt_autotune_stream(ckt_context *ctx, ckt_device *dev, const char *target,
                               const ckt_autotune_source *src, int n,
                               const ckt_autotune_options *opts, ckt_autotune_result *results,
                               int *best, ckt_error *err)
{
    if (results && best && n >= 1 && (!src || !src->next))
        return *best = -1, ckt_fail(err, CKT_EINVAL, "autotune: the source %s",
                                    src ? "has no next function" : "is NULL");
    ckt_target_record rec;
    int owned;
    ckt_status s = begin(ctx, &dev, target, NULL, n, &opts, results, best, &rec, &owned, err);
    if (s) return s;
    s = tune(ctx, dev, &rec, src, n, opts, results, best, err);
    if (owned) ckt_device_close(dev);
    return s;
}

void ckt_autotune_results_free(ckt_autotune_result *results, int n)
{
    for (int i = 0; results && i < n; i++) {
        ckt_exe_free(results[i].exe);
        results[i].exe = NULL;
    }
}

/* ---- the remembered choice ---- */

typedef int (*version_fn)(int *);

/* The GPU driver's version (cuDriverGetVersion / hipDriverGetVersion); the CPU target: its
 * compiler's identity, which is what changes its code. */
static void driver_version(ckt_device *dev, char *out, size_t cap)
{
    static const char *const cuda_names[] = {"libcuda.so.1", "libcuda.so", NULL};
    const char *opened = NULL, *sym = NULL;
    void *lib = NULL;
    snprintf(out, cap, "unknown");
    if (!dev) return;
    if (ckt_device_backend(dev) == CKT_BACKEND_CPU) {
        ckt_error e;
        if (ckt_jit_backend_cpu.identity(out, cap, &e)) snprintf(out, cap, "unknown");
        return;
    }
    if (ckt_device_backend(dev) == CKT_BACKEND_CUDA)
        lib = ckt_dynlib_open(cuda_names, sym = "cuDriverGetVersion", &opened);
    else
        lib = ckt_dynlib_open(ckt_dynlib_hip_names, sym = "hipDriverGetVersion", &opened);
    version_fn f = NULL;
    ckt_dynsym syms[] = {{(void **)&f, sym, NULL, false}};
    int v = 0;
    if (lib && !ckt_dynlib_bind(lib, syms, 1) && f && f(&v) == 0)
        snprintf(out, cap, "%s %d", opened, v);
}

ckt_status ckt_autotune_key(const char *const *parts, int nparts, ckt_device *dev, char key[65],
                            ckt_error *err)
{
    if (!key) return ckt_fail(err, CKT_EINVAL, "autotune_key: key is NULL");
    if (nparts < 0 || nparts > 16 || (nparts > 0 && !parts))
        return ckt_fail(err, CKT_EINVAL, "autotune_key: nparts %d must be in [0, 16] with parts",
                        nparts);
    const char *all[20] = {"ckt-autotune-1", ckt_version(),
                           dev ? ckt_device_name(dev) : "no device", NULL};
    char driver[256];
    driver_version(dev, driver, sizeof driver);
    all[3] = driver;
    for (int i = 0; i < nparts; i++) all[4 + i] = parts[i] ? parts[i] : "";
    ckt_cache_key(all, NULL, 4 + nparts, key);
    return CKT_OK;
}

ckt_recall ckt_autotune_recall(ckt_context *ctx, const char *key, char **payload, size_t *size,
                               char *note, size_t cap)
{
    if (note && cap) note[0] = 0;
    ckt_cache *c = ckt_context_cache(ctx);
    if (!payload || !size || !ckt_cache_enabled(c)) return CKT_RECALL_MISS;
    int64_t corrupt = ckt_cache_get_stats(c).corrupt;
    uint8_t *data = NULL;
    size_t n = 0;
    if (!ckt_cache_get(c, key, &data, &n)) {
        if (ckt_cache_get_stats(c).corrupt == corrupt) return CKT_RECALL_MISS;
        if (note && cap) snprintf(note, cap, "%s", ckt_cache_note(c));
        return CKT_RECALL_CORRUPT;
    }
    char *text = realloc(data, n + 1);
    if (!text) {
        free(data);
        return CKT_RECALL_MISS;
    }
    text[n] = 0;
    *payload = text;
    *size = n;
    return CKT_RECALL_HIT;
}

int ckt_autotune_remember(ckt_context *ctx, const char *key, const void *payload, size_t size)
{
    return ckt_cache_put(ckt_context_cache(ctx), key, payload, size);
}
