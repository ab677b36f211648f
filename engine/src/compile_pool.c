/* Compiles in the background (ckt/compile_pool.h): a FIFO of jobs served by a fixed set of
 * threads. One mutex guards the queue and every job's state; one condition wakes the workers,
 * another the waiters. A pool is reference counted: its owner and each job not yet freed hold a
 * reference, so a job outlives the pool's free and the pool outlives its jobs' bookkeeping. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckt/compile_pool.h"
#include "compile_pool_internal.h"

enum { QUEUED, RUNNING, DONE };
enum { KIND_BINARY, KIND_KERNEL, KIND_TASK };

struct ckt_compile_job {
    ckt_compile_pool *pool;
    ckt_compile_job *next; /* in the queue */
    int kind, state, taken, cancelled;
    ckt_context *ctx;
    unsigned flags;
    /* copies of the request */
    char *target, *source, *name, *opts[32];
    int nopts;
    const ckt_kernel *k;
    void (*fn)(void *); /* a task */
    void *arg;
    /* the result */
    ckt_status st;
    ckt_error err;
    ckt_binary *bin;
    ckt_executable *exe;
};

struct ckt_compile_pool {
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    ckt_compile_job *head, *tail;
    pthread_t *threads;
    int nthreads, stop, refs;
};

static void pool_unref_locked(ckt_compile_pool *p, int *destroy) { *destroy = --p->refs == 0; }

static void pool_destroy(ckt_compile_pool *p)
{
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p->threads);
    free(p);
}

static void run(ckt_compile_job *j)
{
    ckt_error err;
    ckt_status st;
    ckt_binary *bin = NULL;
    ckt_executable *exe = NULL;
    if (j->kind == KIND_TASK) {
        j->fn(j->arg);
        st = CKT_OK;
    } else if (j->kind == KIND_BINARY) {
        ckt_compile_request req = {j->target, j->source, j->name, (const char *const *)j->opts,
                                   j->nopts};
        st = ckt_compile(j->ctx, &req, j->flags, &bin, &err);
    } else {
        ckt_kernel_compile_options o = {j->flags, (const char *const *)j->opts, j->nopts};
        st = ckt_kernel_compile(j->ctx, j->k, j->target, &o, &exe, &err);
    }
    ckt_compile_pool *p = j->pool;
    pthread_mutex_lock(&p->lock);
    j->st = st;
    if (st) j->err = err;
    j->bin = bin;
    j->exe = exe;
    j->state = DONE;
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->lock);
}

static void *worker(void *arg)
{
    ckt_compile_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->head && !p->stop) pthread_cond_wait(&p->work, &p->lock);
        if (!p->head) break; /* stopping, nothing queued */
        ckt_compile_job *j = p->head;
        p->head = j->next;
        if (!p->head) p->tail = NULL;
        j->next = NULL;
        j->state = RUNNING;
        pthread_mutex_unlock(&p->lock);
        run(j);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static int online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

ckt_status ckt_compile_pool_create(int threads, ckt_compile_pool **out, ckt_error *err)
{
    if (!out) return ckt_fail(err, CKT_EINVAL, "compile pool: out is NULL");
    *out = NULL;
    if (threads < 0 || threads > 256)
        return ckt_fail(err, CKT_EINVAL,
                        "compile pool: %d threads (1..256, or 0 for one per online core)", threads);
    int n = threads ? threads : online_cores();
    ckt_compile_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->threads = calloc((size_t)n, sizeof *p->threads))) {
        free(p);
        return ckt_fail(err, CKT_ENOMEM, "compile pool: out of memory");
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    p->refs = 1;
    for (; p->nthreads < n; p->nthreads++)
        if (pthread_create(&p->threads[p->nthreads], NULL, worker, p) != 0) break;
    if (p->nthreads == 0) {
        pool_destroy(p);
        return ckt_fail(err, CKT_ERUNTIME, "compile pool: no thread could be started");
    }
    *out = p;
    return CKT_OK;
}

static void pool_shutdown(ckt_compile_pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    for (ckt_compile_job *j = p->head; j; j = j->next) { /* cancelled: the wait says so */
        j->state = DONE;
        j->cancelled = 1;
        j->st = ckt_fail(&j->err, CKT_EINVAL,
                         "compile: cancelled (its pool was freed before the compile started)");
    }
    p->head = p->tail = NULL;
    pthread_cond_broadcast(&p->work);
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    pthread_mutex_lock(&p->lock);
    int destroy;
    pool_unref_locked(p, &destroy);
    pthread_mutex_unlock(&p->lock);
    if (destroy) pool_destroy(p);
}

void ckt_compile_pool_free(ckt_compile_pool *p)
{
    if (!p || p == ckt_compile_pool_shared()) return;
    pool_shutdown(p);
}

static ckt_compile_pool *shared_pool;
static void make_shared(void)
{
    const char *env = getenv("CKT_COMPILE_THREADS");
    int n = env && *env ? atoi(env) : 0;
    if (n < 0 || n > 256) n = 0;
    if (ckt_compile_pool_create(n, &shared_pool, NULL) != CKT_OK) shared_pool = NULL;
}

/* The shared pool's threads run the library's code: they end before it is unloaded (a Lua
 * state's lua_close unloads ckt.so; a thread left waiting inside it crashes the exit) and at
 * exit, after finishing a compile they are running. */
__attribute__((destructor)) static void shared_pool_shutdown(void)
{
    ckt_compile_pool *p = shared_pool;
    shared_pool = NULL;
    if (p) pool_shutdown(p);
}

ckt_compile_pool *ckt_compile_pool_shared(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_shared);
    return shared_pool;
}

int ckt_compile_pool_threads(const ckt_compile_pool *p)
{
    if (!p) p = ckt_compile_pool_shared();
    return p ? p->nthreads : 0;
}

static void job_release(ckt_compile_job *j)
{
    free(j->target);
    free(j->source);
    free(j->name);
    for (int i = 0; i < j->nopts; i++) free(j->opts[i]);
    free(j);
}

/* a new job with copies of target and options; NULL on no memory */
static ckt_compile_job *job_new(const char *target, const char *const *opts, int nopts)
{
    ckt_compile_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->nopts = nopts;
    int ok = !target || (j->target = strdup(target));
    for (int i = 0; i < nopts; i++) ok = ok && (j->opts[i] = strdup(opts[i]));
    if (!ok) {
        job_release(j);
        return NULL;
    }
    return j;
}

static ckt_status enqueue(ckt_compile_pool *p, ckt_compile_job *j, ckt_compile_job **out,
                          ckt_error *err)
{
    pthread_mutex_lock(&p->lock);
    if (p->stop) {
        pthread_mutex_unlock(&p->lock);
        job_release(j);
        return ckt_fail(err, CKT_EINVAL, "compile: the pool is being freed");
    }
    j->pool = p;
    j->state = QUEUED;
    p->refs++;
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    *out = j;
    return CKT_OK;
}

static ckt_compile_pool *pool_or_shared(ckt_compile_pool *pool, ckt_error *err)
{
    if (!pool && !(pool = ckt_compile_pool_shared()))
        ckt_fail(err, CKT_ERUNTIME, "compile: the shared compile pool could not start a thread");
    return pool;
}

static ckt_status check_options(const char *fn, const char *const *opts, int nopts, ckt_error *err)
{
    if (nopts < 0 || nopts > 32)
        return ckt_fail(err, CKT_EINVAL, "%s: noptions %d is outside [0, 32]", fn, nopts);
    if (nopts > 0 && !opts)
        return ckt_fail(err, CKT_EINVAL, "%s: options is NULL with noptions %d", fn, nopts);
    for (int i = 0; i < nopts; i++)
        if (!opts[i]) return ckt_fail(err, CKT_EINVAL, "%s: option %d is NULL", fn, i);
    return CKT_OK;
}

ckt_status ckt_compile_start(ckt_compile_pool *pool, ckt_context *ctx,
                             const ckt_compile_request *req, unsigned flags, ckt_compile_job **out,
                             ckt_error *err)
{
    static const char fn[] = "compile_start";
    if (!out) return ckt_fail(err, CKT_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (!req) return ckt_fail(err, CKT_EINVAL, "%s: request is NULL", fn);
    if (!req->target || !*req->target) return ckt_fail(err, CKT_EINVAL, "%s: target is empty", fn);
    if (!req->source || !*req->source) return ckt_fail(err, CKT_EINVAL, "%s: source is empty", fn);
    if (!req->kernel_name || !*req->kernel_name)
        return ckt_fail(err, CKT_EINVAL, "%s: kernel_name is empty", fn);
    ckt_target_record t;
    if (ckt_target_parse(req->target, &t, err)) return ckt_fail_prefix(err, "compile_start: ");
    ckt_status st = check_options(fn, req->options, req->noptions, err);
    if (st) return st;
    if (!(pool = pool_or_shared(pool, err))) return CKT_ERUNTIME;
    ckt_compile_job *j = job_new(req->target, req->options, req->noptions);
    if (!j || !(j->source = strdup(req->source)) || !(j->name = strdup(req->kernel_name))) {
        if (j) job_release(j);
        return ckt_fail(err, CKT_ENOMEM, "%s: out of memory", fn);
    }
    j->kind = KIND_BINARY;
    j->ctx = ctx;
    j->flags = flags;
    return enqueue(pool, j, out, err);
}

ckt_status ckt_compile_kernel_start(ckt_compile_pool *pool, ckt_context *ctx, const ckt_kernel *k,
                                    const char *target, const ckt_kernel_compile_options *opts,
                                    ckt_compile_job **out, ckt_error *err)
{
    static const char fn[] = "compile_kernel_start";
    if (!out) return ckt_fail(err, CKT_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (!k) return ckt_fail(err, CKT_EINVAL, "%s: kernel is NULL", fn);
    if (!target || !*target) return ckt_fail(err, CKT_EINVAL, "%s: target is empty", fn);
    ckt_target_record t;
    if (ckt_target_parse(target, &t, err)) return ckt_fail_prefix(err, "compile_kernel_start: ");
    ckt_status st = opts ? check_options(fn, opts->options, opts->noptions, err) : CKT_OK;
    if (st) return st;
    if (!(pool = pool_or_shared(pool, err))) return CKT_ERUNTIME;
    ckt_compile_job *j = job_new(target, opts ? opts->options : NULL, opts ? opts->noptions : 0);
    if (!j) return ckt_fail(err, CKT_ENOMEM, "%s: out of memory", fn);
    j->kind = KIND_KERNEL;
    j->ctx = ctx;
    j->k = k;
    j->flags = opts ? opts->flags : 0;
    return enqueue(pool, j, out, err);
}

ckt_status ckt_compile_task_start(ckt_compile_pool *pool, void (*fn)(void *), void *arg,
                                  ckt_compile_job **out, ckt_error *err)
{
    if (!out || !fn)
        return ckt_fail(err, CKT_EINVAL, "compile_task_start: %s is NULL", out ? "fn" : "out");
    *out = NULL;
    if (!(pool = pool_or_shared(pool, err))) return CKT_ERUNTIME;
    ckt_compile_job *j = job_new(NULL, NULL, 0);
    if (!j) return ckt_fail(err, CKT_ENOMEM, "compile_task_start: out of memory");
    j->kind = KIND_TASK;
    j->fn = fn;
    j->arg = arg;
    return enqueue(pool, j, out, err);
}

/* wait for j (of kind) and take its result into *bin / *exe */
static ckt_status wait_for(ckt_compile_job *j, int kind, ckt_binary **bin, ckt_executable **exe,
                           ckt_error *err)
{
    const char *fn = kind == KIND_BINARY ? "compile_wait" : "compile_wait_executable";
    if (!j) return ckt_fail(err, CKT_EINVAL, "%s: job is NULL", fn);
    if (!(kind == KIND_BINARY ? (void *)bin : (void *)exe))
        return ckt_fail(err, CKT_EINVAL, "%s: out is NULL", fn);
    if (j->kind == KIND_TASK)
        return ckt_fail(err, CKT_EINVAL, "%s: the job is a task of the engine (free it)", fn);
    if (j->kind != kind)
        return ckt_fail(err, CKT_EINVAL, "%s: the job compiles a %s (use %s)", fn,
                        j->kind == KIND_BINARY ? "source: its result is a binary"
                                               : "kernel: its result is an executable",
                        j->kind == KIND_BINARY ? "ckt_compile_wait"
                                               : "ckt_compile_wait_executable");
    ckt_compile_pool *p = j->pool;
    pthread_mutex_lock(&p->lock);
    if (j->taken) {
        pthread_mutex_unlock(&p->lock);
        return ckt_fail(err, CKT_EINVAL, "%s: this job's result was already taken (one wait a job)",
                        fn);
    }
    while (j->state != DONE) pthread_cond_wait(&p->done, &p->lock);
    j->taken = 1;
    ckt_status st = j->st;
    if (st) {
        if (err) *err = j->err;
    } else if (kind == KIND_BINARY)
        *bin = j->bin, j->bin = NULL;
    else
        *exe = j->exe, j->exe = NULL;
    pthread_mutex_unlock(&p->lock);
    return st;
}

ckt_status ckt_compile_wait(ckt_compile_job *job, ckt_binary **out, ckt_error *err)
{
    if (out) *out = NULL;
    return wait_for(job, KIND_BINARY, out, NULL, err);
}

ckt_status ckt_compile_wait_executable(ckt_compile_job *job, ckt_executable **out, ckt_error *err)
{
    if (out) *out = NULL;
    return wait_for(job, KIND_KERNEL, NULL, out, err);
}

int ckt_compile_done(const ckt_compile_job *job)
{
    if (!job) return 0;
    ckt_compile_pool *p = job->pool;
    pthread_mutex_lock(&p->lock);
    int done = job->state == DONE;
    pthread_mutex_unlock(&p->lock);
    return done;
}

void ckt_compile_job_free(ckt_compile_job *j)
{
    if (!j) return;
    ckt_compile_pool *p = j->pool;
    pthread_mutex_lock(&p->lock);
    if (j->state == QUEUED) { /* not started: take it out of the queue */
        ckt_compile_job **pp = &p->head, *prev = NULL;
        while (*pp && *pp != j) prev = *pp, pp = &(*pp)->next;
        if (*pp) *pp = j->next;
        if (p->tail == j) p->tail = prev;
        j->state = DONE;
    }
    while (j->state != DONE) pthread_cond_wait(&p->done, &p->lock);
    int destroy;
    pool_unref_locked(p, &destroy);
    pthread_mutex_unlock(&p->lock);
    if (destroy) pool_destroy(p);
    ckt_binary_free(j->bin);
    ckt_exe_free(j->exe);
    job_release(j);
}
