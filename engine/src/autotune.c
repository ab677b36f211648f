/* Autotuning (ckt/autotune.h): prune by the models, compile on a pool of host threads, measure
 * on the calling thread, remember the winner in the cache directory.
 *
 * What runs on the compile threads is ckt_kernel_compile on distinct, finished kernels. Checked
 * for thread safety (see docs/autotune.md): the emitter reads the kernel and writes into its own
 * copy of the expression pool; the compile cache's writes are atomic renames of unique temporary
 * files and its counters sit behind a mutex; NVRTC compiles distinct programs concurrently (its
 * documented guarantee); hipRTC / comgr compiles are serialized by jit_hip.c's lock (Debian's
 * ROCm 5.2 hipRTC keeps process-wide LLVM state), so HIP candidates compile one at a time and
 * only overlap with emission, cache reads and measurement; the CPU target forks the host C
 * compiler, whose output pipes are close-on-exec so one child never holds another's pipe open.
 * The GPU compilers' libraries are loaded once on this thread before the pool starts. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckt/autotune.h"
#include "ckt/cache.h"
#include "ckt/ckt.h"
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

typedef struct tuner {
    ckt_context *ctx;
    ckt_device *dev;
    const ckt_target_record *rec;
    const ckt_autotune_candidate *c;
    ckt_autotune_result *r;
    const ckt_autotune_options *o;
    int n;
    int *order, norder, next; /* the compile queue (candidates that survived pruning) */
    int stop;                 /* no more compiles start */
    pthread_mutex_t lock;     /* next, stop and every r[i] while the pool runs */
    pthread_cond_t changed;
    ckt_autotune_progress p;
    double t0;
} tuner;

static void verdict(ckt_autotune_result *r, ckt_autotune_state s, const char *fmt, const char *a,
                    const char *b)
{
    r->state = s;
    snprintf(r->reason, sizeof r->reason, fmt, a, b);
}

static void *compile_worker(void *arg)
{
    tuner *t = arg;
    for (;;) {
        pthread_mutex_lock(&t->lock);
        int i = !t->stop && t->next < t->norder ? t->order[t->next++] : -1;
        pthread_mutex_unlock(&t->lock);
        if (i < 0) return NULL;
        ckt_kernel_compile_options co = {t->o->compile_flags, NULL, 0};
        ckt_executable *exe = NULL;
        ckt_error e;
        ckt_error_clear(&e);
        ckt_status s = ckt_kernel_compile_record(t->ctx, t->c[i].kernel, t->rec, &co, &exe, &e);
        pthread_mutex_lock(&t->lock);
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
        }
        pthread_cond_broadcast(&t->changed);
        pthread_mutex_unlock(&t->lock);
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

/* Step 1: the caller's verdicts, the target's LDS, the problem, then the bank model's rating. */
static void prune_before(tuner *t)
{
    double best = 0;
    for (int i = 0; i < t->n; i++) {
        const ckt_autotune_candidate *c = &t->c[i];
        ckt_autotune_result *r = &t->r[i];
        if (c->verdict == CKT_AUTOTUNE_PRUNED || c->verdict == CKT_AUTOTUNE_FAILED) {
            verdict(r, c->verdict, "%.500s%s", c->reason ? c->reason : "by the caller", "");
            continue;
        }
        if (!c->kernel || !ckt_kernel_is_finished(c->kernel)) {
            verdict(r, CKT_AUTOTUNE_FAILED, "%s%s",
                    c->kernel ? "the kernel is not finished" : "no kernel", "");
            continue;
        }
        r->lds_bytes = ckt_kernel_lds_bytes(c->kernel);
        ckt_error e;
        char a[64], b[64];
        if (t->rec->lds_max_bytes > 0 && r->lds_bytes > t->rec->lds_max_bytes) {
            snprintf(a, sizeof a, "%lld", (long long)r->lds_bytes);
            snprintf(b, sizeof b, "%lld bytes of %s", (long long)t->rec->lds_max_bytes,
                     t->rec->arch);
            verdict(r, CKT_AUTOTUNE_PRUNED, "LDS: %s bytes per block, more than the %s", a, b);
        } else if (check_problem(c, t->dev, &e)) {
            verdict(r, CKT_AUTOTUNE_PRUNED, "does not fit the problem: %.480s%s", e.msg, "");
        } else if (c->bank_ideal > 0 && c->bank_cycles > 0) {
            r->bank_factor = (double)c->bank_cycles / (double)c->bank_ideal;
            if (best == 0 || r->bank_factor < best) best = r->bank_factor;
        }
    }
    double slack = t->o->bank_slack == 0 ? DEFAULT_SLACK : t->o->bank_slack;
    for (int i = 0; i < t->n && slack > 0 && best > 0; i++) {
        ckt_autotune_result *r = &t->r[i];
        if (r->state != CKT_AUTOTUNE_PENDING || r->bank_factor <= slack * best * (1 + 1e-9))
            continue;
        char a[96], b[96];
        snprintf(a, sizeof a, "%.2f cycles per conflict-free cycle", r->bank_factor);
        snprintf(b, sizeof b, "%.2f x the best candidate's %.2f", slack, best);
        verdict(r, CKT_AUTOTUNE_PRUNED, "bank model: %s, more than %s", a, b);
    }
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
    if (r->state == CKT_AUTOTUNE_PRUNED) {
        ckt_exe_free(r->exe);
        r->exe = NULL;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Step 4: warmup launches, then the median of the timed ones. A launch that fails fails the
 * candidate; a metric callback that fails stops the search (returned). */
static ckt_status measure(tuner *t, int i, ckt_error *err)
{
    ckt_autotune_result *r = &t->r[i];
    const ckt_autotune_candidate *c = &t->c[i];
    int warmup = t->o->warmup, runs = t->o->runs > 0 ? t->o->runs : 5;
    double times[MAX_RUNS], sorted[MAX_RUNS];
    ckt_error e;
    for (int k = 0; k < warmup + runs; k++) {
        double ms = 0;
        if (ckt_exe_launch(r->exe, t->dev, c->grid, c->args, c->nargs, 0, &ms, &e)) {
            verdict(r, CKT_AUTOTUNE_FAILED, "launch: %.500s%s", e.msg, "");
            ckt_exe_free(r->exe);
            r->exe = NULL;
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
    if (t->p.best < 0 || r->score < t->p.best_score) t->p.best = i, t->p.best_score = r->score;
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

static ckt_status report(tuner *t, ckt_error *err)
{
    if (!t->o->progress) return CKT_OK;
    count(t);
    return t->o->progress(t->o->user, &t->p, err) ? (err ? err->status : CKT_EINVAL) : CKT_OK;
}

static int over_budget(const tuner *t)
{
    return t->o->budget_s > 0 && now_s() - t->t0 > t->o->budget_s;
}

/* Wait for each queued candidate in order; prune and measure it (GPU: as it arrives, while the
 * pool compiles the next ones; CPU: after every compile, which would otherwise share its cores). */
static ckt_status drive(tuner *t, int overlap, ckt_error *err)
{
    ckt_status s = CKT_OK;
    int *ready = calloc((size_t)t->norder + 1, sizeof *ready), nready = 0;
    if (!ready) return ckt_fail(err, CKT_ENOMEM, "autotune: out of memory");
    for (int k = 0; k < t->norder && !s; k++) {
        int i = t->order[k];
        pthread_mutex_lock(&t->lock);
        while (t->r[i].state == CKT_AUTOTUNE_PENDING && !(t->stop && k >= t->next))
            pthread_cond_wait(&t->changed, &t->lock);
        if (over_budget(t)) t->stop = 1;
        ckt_autotune_state st = t->r[i].state;
        pthread_mutex_unlock(&t->lock);
        if (st == CKT_AUTOTUNE_COMPILED) prune_after(t, i);
        if (t->r[i].state == CKT_AUTOTUNE_COMPILED) {
            if (overlap && !over_budget(t))
                s = measure(t, i, err);
            else
                ready[nready++] = i;
        }
        if (!s) s = report(t, err);
        if (s) {
            pthread_mutex_lock(&t->lock);
            t->stop = 1;
            pthread_mutex_unlock(&t->lock);
        }
    }
    for (int k = 0; k < nready && !s; k++) {
        if (over_budget(t)) break;
        s = measure(t, ready[k], err);
        if (!s) s = report(t, err);
    }
    free(ready);
    return s;
}

static int online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
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
    for (int i = 0; !*dev && i < n; i++)
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
    return CKT_OK;
}

static ckt_status run_pool(tuner *t, ckt_error *err)
{
    int nthreads = t->o->threads > 0 ? t->o->threads : online_cores();
    if (nthreads > t->norder) nthreads = t->norder;
    pthread_t *th = calloc((size_t)nthreads + 1, sizeof *th);
    if (!th) return ckt_fail(err, CKT_ENOMEM, "autotune: out of memory");
    int started = 0;
    for (; started < nthreads; started++)
        if (pthread_create(&th[started], NULL, compile_worker, t) != 0) break;
    if (started == 0 && t->norder > 0)
        compile_worker(t); /* no thread: compile here, then measure */
    ckt_status s = drive(t, t->rec->runtime != CKT_BACKEND_CPU, err);
    pthread_mutex_lock(&t->lock);
    t->stop = 1;
    pthread_mutex_unlock(&t->lock);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
    return s;
}

ckt_status ckt_autotune(ckt_context *ctx, ckt_device *dev, const char *target,
                        const ckt_autotune_candidate *cands, int n,
                        const ckt_autotune_options *opts, ckt_autotune_result *results, int *best,
                        ckt_error *err)
{
    static const ckt_autotune_options defaults = {0};
    if (!results || !best)
        return ckt_fail(err, CKT_EINVAL, "autotune: %s is NULL", results ? "best" : "results");
    *best = -1;
    if (n < 1) return ckt_fail(err, CKT_EINVAL, "autotune: %d candidates (need at least one)", n);
    if (!cands) return ckt_fail(err, CKT_EINVAL, "autotune: candidates is NULL");
    for (int i = 0; i < n; i++) {
        ckt_resources none = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
        memset(&results[i], 0, sizeof results[i]);
        results[i].lds_bytes = -1, results[i].compile_ms = -1, results[i].ms = -1,
        results[i].score = -1, results[i].occupancy = -1;
        results[i].res = none;
    }
    if (!opts) opts = &defaults;
    ckt_status s = check_options(opts, err);
    if (s) return s;
    for (int i = 0; i < n; i++)
        if (cands[i].nargs < 0 || cands[i].nargs > CKT_K_MAX_PARAMS ||
            (cands[i].nargs > 0 && !cands[i].args))
            return ckt_fail(err, CKT_EINVAL, "autotune: candidate %d: nargs %d with args %s", i,
                            cands[i].nargs, cands[i].args ? "given" : "NULL");
    ckt_target_record rec;
    if (ckt_target_parse(target ? target : ckt_context_default_target(ctx), &rec, err))
        return ckt_fail_prefix(err, "autotune: ");
    int owned = 0;
    if ((s = open_device(ctx, &rec, cands, n, &dev, &owned, err)) ||
        (s = warm_compiler(&rec, err))) {
        if (owned) ckt_device_close(dev);
        return s;
    }
    tuner t = {ctx,
               dev,
               &rec,
               cands,
               results,
               opts,
               n,
               NULL,
               0,
               0,
               0,
               PTHREAD_MUTEX_INITIALIZER,
               PTHREAD_COND_INITIALIZER,
               {0},
               now_s()};
    t.p.candidates = n, t.p.best = -1;
    prune_before(&t);
    if (!(t.order = calloc((size_t)n, sizeof *t.order)))
        s = ckt_fail(err, CKT_ENOMEM, "autotune: out of memory");
    for (int i = 0; !s && i < n; i++)
        if (results[i].state == CKT_AUTOTUNE_PENDING) t.order[t.norder++] = i;
    if (!s) s = report(&t, err);
    if (!s && t.norder > 0) s = run_pool(&t, err);
    for (int i = 0; i < n; i++) { /* what the budget or a stop left undecided */
        ckt_autotune_result *r = &results[i];
        if (r->state == CKT_AUTOTUNE_PENDING || r->state == CKT_AUTOTUNE_COMPILED) {
            verdict(r, CKT_AUTOTUNE_PRUNED, "%s%s",
                    s ? "the search stopped before it" : "budget_s spent before it was measured",
                    "");
            ckt_exe_free(r->exe);
            r->exe = NULL;
        }
    }
    if (!s) s = report(&t, err);
    *best = t.p.best;
    free(t.order);
    pthread_mutex_destroy(&t.lock);
    pthread_cond_destroy(&t.changed);
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
