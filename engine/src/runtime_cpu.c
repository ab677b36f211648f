/* The CPU runtime: host memory as device memory, kernels as shared objects in the CPU ABI
 * (ckt/jit.h), and a pool of worker threads that run the grid's blocks, each exactly once.
 * Workers take block indices from one atomic counter; results are deterministic as long as
 * blocks write disjoint memory (as on a GPU). Each worker owns its LDS buffer. */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "runtime_internal.h"

#define WORKER_STACK ((size_t)16 << 20) /* emulated blocks keep per-thread registers in arrays */
#define MAX_WORKERS 64
/* more declared parameters: not a kernel ckt wrote or a person would */
#define CPU_MAX_PARAMS 256

typedef void (*cpu_kernel)(void *const *args, const ckt_cpu_launch *launch);

typedef struct {
    atomic_int refs; /* the module cache's + each queued launch's */
    void *so;
    int fd; /* the memory file the object was loaded from (-1: none), open as long as the module */
    cpu_kernel fn;
    unsigned long long lds_bytes;
    const int *param_kinds; /* K__param_kinds, K__nparams: when the source declares them */
    int nparams;
    long long cluster; /* K__cluster: blocks a cluster (1: none declared) */
} cpu_module;

typedef struct cpu_pool {
    pthread_t threads[MAX_WORKERS];
    int nthreads;
    pthread_mutex_t mu, launch_mu; /* launch_mu: one launch at a time per device */
    pthread_cond_t start, done;
    uint64_t generation; /* bumped per launch */
    int quit, busy;
    /* the current launch */
    cpu_kernel fn;
    void *const *args;
    int64_t grid[3], block[3], nblocks;
    size_t lds_bytes;
    unsigned long long *cluster_sig; /* one a block where the kernel is in clusters (else NULL) */
    double deadline;                 /* 0: none */
    atomic_llong next_block;
    /* set when the deadline passes (by the launching thread, which waits until then): the workers
     * stop taking blocks, and the running blocks leave their loops (ckt_cpu_launch.stop) */
    int stop;
    atomic_int stopped_inside; /* a block came back with the flag set: it left a loop midway */
    int fault; /* set by the kernel (CKT_FAULT, atomically): a window left its tensor */
    struct cpu_stream *def;     /* the default stream */
    struct cpu_stream *streams; /* all of them (the default first created), under streams_mu */
    pthread_mutex_t streams_mu;
} cpu_pool;

static void run_blocks(cpu_pool *p, void **lds, size_t *lds_cap)
{
    if (p->lds_bytes > *lds_cap) {
        free(*lds);
        size_t cap = (p->lds_bytes + CKT_CPU_LDS_ALIGN - 1) / CKT_CPU_LDS_ALIGN * CKT_CPU_LDS_ALIGN;
        *lds = aligned_alloc(CKT_CPU_LDS_ALIGN, cap);
        *lds_cap = *lds ? cap : 0;
        if (!*lds) return; /* the other workers run the blocks; if none can, the launch says so */
        /* zeroed once: a clipped bulk copy leaves rows past its tensor as they were, whose
         * results the kernel never stores; their values must not depend on this machine's heap
         * (nor, under valgrind, be uninitialized) */
        memset(*lds, 0, cap);
    }
    ckt_cpu_launch l;
    memcpy(l.grid, p->grid, sizeof l.grid);
    memcpy(l.block, p->block, sizeof l.block);
    l.lds = p->lds_bytes ? *lds : NULL;
    l.fault = &p->fault;
    l.stop = &p->stop;
    l.cluster_sig = p->cluster_sig;
    for (;;) {
        if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) break;
        long long b = atomic_fetch_add(&p->next_block, 1);
        if (b >= p->nblocks) break;
        l.block_id[0] = b % p->grid[0];
        l.block_id[1] = (b / p->grid[0]) % p->grid[1];
        l.block_id[2] = b / (p->grid[0] * p->grid[1]);
        p->fn(p->args, &l);
        if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) atomic_store(&p->stopped_inside, 1);
    }
}

static void *worker(void *arg)
{
    cpu_pool *p = arg;
    void *lds = NULL;
    size_t lds_cap = 0;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->generation == seen) pthread_cond_wait(&p->start, &p->mu);
        if (p->quit) break;
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        run_blocks(p, &lds, &lds_cap);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    free(lds);
    return NULL;
}

static struct cpu_stream *stream_new(cpu_pool *p);
static void cpu_close(ckt_device *dev);

static ckt_status cpu_open(ckt_device *dev, ckt_error *err)
{
    cpu_pool *p = calloc(1, sizeof *p);
    if (!p) return ckt_fail(err, CKT_ENOMEM, "device cpu: out of memory");
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("CKT_CPU_THREADS");
    if (env && atoi(env) > 0) n = atoi(env);
    p->nthreads = n < 1 ? 1 : n > MAX_WORKERS ? MAX_WORKERS : (int)n;
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->launch_mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_condattr_t monotonic; /* `done` is waited on until a deadline of that clock */
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&p->done, &monotonic);
    pthread_condattr_destroy(&monotonic);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, WORKER_STACK);
    for (int i = 0; i < p->nthreads; i++) {
        int rc = pthread_create(&p->threads[i], &attr, worker, p);
        if (rc) {
            pthread_mutex_lock(&p->mu);
            p->quit = 1;
            pthread_cond_broadcast(&p->start);
            pthread_mutex_unlock(&p->mu);
            for (int j = 0; j < i; j++) pthread_join(p->threads[j], NULL);
            pthread_attr_destroy(&attr);
            free(p);
            return ckt_fail(err, CKT_ERUNTIME, "device cpu: cannot start worker thread %d: %s", i,
                            strerror(rc));
        }
    }
    pthread_attr_destroy(&attr);
    pthread_mutex_init(&p->streams_mu, NULL);
    dev->impl = p;
    if (!(p->def = stream_new(p))) { /* its thread starts with its first work */
        cpu_close(dev);
        return ckt_fail(err, CKT_ENOMEM, "device cpu: out of memory");
    }
    snprintf(dev->name, sizeof dev->name, "cpu (%d worker threads)", p->nthreads);
    snprintf(dev->target, sizeof dev->target, "cpu");
    /* the limits of the GPUs being emulated */
    for (int i = 0; i < 3; i++) dev->max_block[i] = 1024;
    dev->max_block[2] = 64;
    dev->max_threads_per_block = 1024;
    dev->max_grid[0] = INT32_MAX;
    dev->max_grid[1] = dev->max_grid[2] = 65535;
    dev->max_shared_bytes = 64 << 10;
    return CKT_OK;
}

static void stream_free(struct cpu_stream *q);

static void cpu_close(ckt_device *dev)
{
    cpu_pool *p = dev->impl;
    if (p->def) stream_free(p->def);
    pthread_mutex_destroy(&p->streams_mu);
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->launch_mu);
    pthread_cond_destroy(&p->start);
    pthread_cond_destroy(&p->done);
    free(p);
}

static ckt_status cpu_alloc(ckt_device *dev, size_t n, void **ptr, ckt_error *err)
{
    (void)dev;
    size_t cap = (n + 63) / 64 * 64; /* aligned like device memory, so vector accesses are legal */
    *ptr = aligned_alloc(64, cap);
    if (!*ptr)
        return ckt_fail(err, CKT_ENOMEM,
                        "alloc: cannot allocate %zu bytes of host memory for the cpu device", n);
    return CKT_OK;
}

static void cpu_free(ckt_device *dev, void *ptr)
{
    (void)dev;
    free(ptr);
}

/* dlopen the shared object bytes: from an anonymous memory file when the kernel allows it
 * (nothing on disk, no noexec mount in the way), else from a temporary file. The memory file
 * stays open while the object is loaded: dlopen knows objects by path, and a closed file's
 * descriptor number -- so its /proc/self/fd/N path -- would be reused by the next kernel, which
 * dlopen would then answer with the still-loaded old one. */
static void *open_so(const uint8_t *code, size_t n, int *keep_fd, char *why, size_t whylen)
{
    void *so = NULL;
    int fd;
    *keep_fd = -1;
#ifdef MFD_CLOEXEC
    fd = memfd_create("ckt-kernel", MFD_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, code, n) == (ssize_t)n) {
            char path[64];
            snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
            so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (!so) snprintf(why, whylen, "%s", dlerror());
        }
        if (so) {
            *keep_fd = fd;
            return so;
        }
        close(fd);
    }
#endif
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ckt-kernel-XXXXXX.so", tmp && *tmp ? tmp : "/tmp");
    fd = mkstemps(path, 3);
    if (fd < 0) {
        snprintf(why, whylen, "cannot create %.400s: %s", path, strerror(errno));
        return NULL;
    }
    ssize_t w = write(fd, code, n);
    close(fd);
    if (w == (ssize_t)n) {
        so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!so) snprintf(why, whylen, "%s", dlerror());
    }
    unlink(path);
    return so;
}

static void free_module(cpu_module *m)
{
    if (atomic_fetch_sub(&m->refs, 1) > 1) return;
    dlclose(m->so);
    if (m->fd >= 0) close(m->fd);
    free(m);
}

static ckt_status cpu_load(ckt_device *dev, const ckt_binary *bin, void **module, void **fn,
                           ckt_error *err)
{
    (void)dev;
    size_t n;
    const uint8_t *code = ckt_binary_code(bin, &n);
    const char *name = ckt_binary_kernel_name(bin);
    if (!code || n < 4 ||
        memcmp(code,
               "\x7f"
               "ELF",
               4) != 0)
        return ckt_fail(err, CKT_EINVAL, "launch: the binary for '%s' is not a shared object",
                        name);
    cpu_module *m = calloc(1, sizeof *m);
    if (!m) return ckt_fail(err, CKT_ENOMEM, "launch: out of memory");
    atomic_init(&m->refs, 1);
    char why[512] = "";
    m->so = open_so(code, n, &m->fd, why, sizeof why);
    if (!m->so) {
        free(m);
        return ckt_fail(err, CKT_ERUNTIME, "launch: cannot load the kernel '%s': %s", name, why);
    }
    *(void **)&m->fn = dlsym(m->so, name);
    if (!m->fn) {
        free_module(m);
        return ckt_fail(err, CKT_EINVAL,
                        "launch: the shared object has no function '%s' (cpu kernels are void "
                        "%s(void *const *args, const ckt_cpu_launch *))",
                        name, name);
    }
    char sym[160];
    snprintf(sym, sizeof sym, "%s__lds_bytes", name);
    const unsigned long long *lds = dlsym(m->so, sym);
    m->lds_bytes = lds ? *lds : 0;
    if (m->lds_bytes > (1ull << 30)) {
        free_module(m);
        return ckt_fail(err, CKT_EINVAL, "launch: %s = %llu bytes of LDS is implausible", sym,
                        *lds);
    }
    snprintf(sym, sizeof sym, "%s__cluster", name);
    const long long *cl = dlsym(m->so, sym);
    m->cluster = cl && *cl > 1 ? *cl : 1;
    snprintf(sym, sizeof sym, "%s__nparams", name);
    const int *np = dlsym(m->so, sym);
    snprintf(sym, sizeof sym, "%s__param_kinds", name);
    m->param_kinds = dlsym(m->so, sym);
    if (!np != !m->param_kinds || (np && (*np < 0 || *np > CPU_MAX_PARAMS))) {
        free_module(m);
        return ckt_fail(err, CKT_EINVAL,
                        "launch: kernel '%s' declares %s without %s, or %s is outside [0, %d]",
                        name, np ? "__nparams" : "__param_kinds",
                        np ? "__param_kinds" : "__nparams", "__nparams", CPU_MAX_PARAMS);
    }
    m->nparams = np ? *np : 0;
    for (int i = 0; i < m->nparams; i++)
        if (!ckt_param_size((ckt_param_kind)m->param_kinds[i])) {
            int bad = m->param_kinds[i];
            free_module(m);
            return ckt_fail(
                err, CKT_EINVAL,
                "launch: kernel '%s' declares parameter %d of kind %d, not a ckt_param_kind", name,
                i, bad);
        }
    *module = m;
    *fn = (void *)m->fn;
    return CKT_OK;
}

/* The ABI fixes these values (ckt/jit.h): compiled kernels hold them. */
_Static_assert(CKT_PARAM_PTR == 0 && CKT_PARAM_I32 == 1 && CKT_PARAM_I64 == 2 &&
                   CKT_PARAM_F32 == 3 && CKT_PARAM_TMAP == 4,
               "the CPU ABI's parameter kinds");

/* "ptr,i32,..." of n kinds, for a message. */
static const char *kinds_text(char *buf, size_t cap, const int *kinds, int n)
{
    size_t w = 0;
    buf[0] = 0;
    for (int i = 0; i < n && w < cap; i++)
        w += (size_t)snprintf(buf + w, cap - w, "%s%s", i ? "," : "",
                              ckt_param_kind_name((ckt_param_kind)kinds[i]));
    return buf;
}

/* A kernel that declares its parameters is checked against the caller's signature: a wrong
 * signature would make the kernel read arguments that are not there. */
static ckt_status check_declared(const cpu_module *m, const ckt_launch_params *lp, ckt_error *err)
{
    if (!m->param_kinds) return CKT_OK;
    bool same = lp->signature_count == m->nparams;
    for (int i = 0; same && i < m->nparams; i++)
        same = (int)lp->signature[i].kind == m->param_kinds[i];
    if (same) return CKT_OK;
    int said[CPU_MAX_PARAMS];
    int n = lp->signature_count < CPU_MAX_PARAMS ? lp->signature_count : CPU_MAX_PARAMS;
    for (int i = 0; i < n; i++) said[i] = (int)lp->signature[i].kind;
    char takes[256], passes[256];
    return ckt_fail(err, CKT_EINVAL, "launch: the kernel takes (%s), the launch passes (%s)",
                    kinds_text(takes, sizeof takes, m->param_kinds, m->nparams),
                    kinds_text(passes, sizeof passes, said, n));
}

static void cpu_unload(ckt_device *dev, void *module)
{
    (void)dev;
    free_module(module);
}

static double now_ms(void) { return ckt_runtime_now() * 1e3; }

/* ---- one launch through the block pool (one at a time per device) ---- */

/* Wait (p->mu held) until the workers are done; at the launch's deadline raise the stop flag,
 * which the workers see between blocks and the kernels at their loops' iterations (a single
 * block looping for hours would otherwise hold the launch past any time limit). */
static void wait_workers(cpu_pool *p)
{
    struct timespec until = {0, 0};
    if (p->deadline > 0) {
        until.tv_sec = (time_t)p->deadline;
        until.tv_nsec = (long)((p->deadline - (double)until.tv_sec) * 1e9);
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    }
    while (p->busy > 0) {
        if (p->deadline <= 0 || __atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
            pthread_cond_wait(&p->done, &p->mu);
        } else if (pthread_cond_timedwait(&p->done, &p->mu, &until) == ETIMEDOUT) {
            __atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
        }
    }
}

typedef struct cpu_run {
    cpu_module *m;
    void *const *args;
    int64_t grid[3], block[3], dyn_shared;
    double deadline;
} cpu_run;

static ckt_status run_pool(cpu_pool *p, const cpu_run *r, unsigned long long *sig, ckt_error *err);

/* A cluster's blocks must share the same boxes (each lands them all here, as the cluster's copies
 * would): the first block of a cluster whose hash differs from its cluster's first block's. -1:
 * all agree. */
static long long cluster_mismatch(const unsigned long long *sig, const int64_t grid[3], long long n)
{
    long long nblocks = grid[0] * grid[1] * grid[2];
    for (long long b = 0; b < nblocks; b++)
        if (sig[b] != sig[b - (b % grid[0]) % n]) return b;
    return -1;
}

static ckt_status run_launch(cpu_pool *p, const cpu_run *r, ckt_error *err)
{
    /* (clusters: a hash a block; not checked past 2^24 blocks, a 128 MiB table) */
    long long nb = r->grid[0] * r->grid[1] * r->grid[2];
    unsigned long long *sig =
        r->m->cluster > 1 && nb <= (1ll << 24) ? calloc((size_t)nb, sizeof *sig) : NULL;
    ckt_status st = run_pool(p, r, sig, err);
    long long bad = st == CKT_OK && sig ? cluster_mismatch(sig, r->grid, r->m->cluster) : -1;
    free(sig);
    if (bad >= 0)
        return ckt_fail(err, CKT_EINVAL,
                        "launch: block %lld of a cluster of %lld shared other boxes by its "
                        "multicast copies than block %lld (the boxes a cluster shares must be the "
                        "same in each of its blocks; on a GPU its blocks would hold a mix of them)",
                        bad, r->m->cluster, bad - (bad % r->grid[0]) % r->m->cluster);
    return st;
}

static ckt_status run_pool(cpu_pool *p, const cpu_run *r, unsigned long long *sig, ckt_error *err)
{
    pthread_mutex_lock(&p->launch_mu);
    pthread_mutex_lock(&p->mu);
    p->fn = r->m->fn;
    p->args = r->args;
    memcpy(p->grid, r->grid, sizeof p->grid);
    memcpy(p->block, r->block, sizeof p->block);
    p->nblocks = r->grid[0] * r->grid[1] * r->grid[2]; /* < 2^63: dims checked by the caller */
    p->lds_bytes = (size_t)r->m->lds_bytes + (size_t)r->dyn_shared;
    p->cluster_sig = sig;
    p->deadline = r->deadline;
    /* a deadline already past stops the launch before its first block */
    __atomic_store_n(&p->stop, r->deadline > 0 && ckt_runtime_now() >= r->deadline,
                     __ATOMIC_RELAXED);
    atomic_store(&p->stopped_inside, 0);
    __atomic_store_n(&p->fault, 0, __ATOMIC_RELAXED);
    atomic_store(&p->next_block, 0);
    p->busy = p->nthreads;
    p->generation++;
    pthread_cond_broadcast(&p->start);
    wait_workers(p);
    pthread_mutex_unlock(&p->mu);
    int all_ran = atomic_load(&p->next_block) >= p->nblocks,
        timed_out = __atomic_load_n(&p->stop, __ATOMIC_RELAXED),
        inside = atomic_load(&p->stopped_inside);
    long long started = atomic_load(&p->next_block), nblocks = p->nblocks;
    size_t lds_bytes = p->lds_bytes;
    int fault = __atomic_load_n(&p->fault, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&p->launch_mu);
    if (fault < 0) { /* an mbarrier fault: -(1 + bar + 64 set + 4096 kind), prelude c.h */
        static const char *const why[] = {
            "a wait on it could never complete (its phase lacks arrivals): on a GPU the block "
            "would hang (the CUDA dialect traps)",
            "a bulk copy on it would land in a stage before the block's threads released it "
            "(the producer's wait had not completed): a race on a GPU",
            "a bulk copy arrived on it before its previous phase completed (the stage still "
            "being read): a race on a GPU"};
        int f = -fault - 1, kind = f / 4096 < 3 ? f / 4096 : 0;
        return ckt_fail(err, CKT_EINVAL, "mbarrier %d of set %d: %s", f % 64, f % 4096 / 64,
                        why[kind]);
    }
    if (fault)
        return ckt_fail(err, CKT_EINVAL,
                        "window %d left its tensor in some block (its origin plus its lengths "
                        "reach outside the shape: a grid larger than the tiles, or an origin out "
                        "of range); those accesses were skipped, nothing outside the buffers and "
                        "LDS was touched",
                        fault - 1);
    if (timed_out)
        return ckt_fail(err, CKT_ELIMIT,
                        "launch stopped: the time limit ran out after about %lld of %lld blocks "
                        "had started%s",
                        started < nblocks ? started : nblocks, nblocks,
                        inside ? " (the blocks running then left their loops midway)" : "");
    if (!all_ran)
        return ckt_fail(err, CKT_ENOMEM, "no worker could allocate %zu bytes of LDS", lds_bytes);
    return CKT_OK;
}

/* ---- events: completed by the stream thread that passes them ---- */

typedef struct cpu_event {
    atomic_int refs;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, failed;
    double t_ms;
} cpu_event;

static cpu_event *event_new(void)
{
    cpu_event *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    atomic_init(&e->refs, 1);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    return e;
}

static void event_unref(cpu_event *e)
{
    if (!e || atomic_fetch_sub(&e->refs, 1) > 1) return;
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    free(e);
}

static void event_complete(cpu_event *e, bool failed)
{
    pthread_mutex_lock(&e->mu);
    e->t_ms = now_ms();
    e->failed = failed;
    e->done = true;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

static void event_wait(cpu_event *e)
{
    pthread_mutex_lock(&e->mu);
    while (!e->done) pthread_cond_wait(&e->cv, &e->mu);
    pthread_mutex_unlock(&e->mu);
}

/* ---- streams: a queue of commands run in order by a thread of the stream's own ---- */

typedef enum { CMD_LAUNCH, CMD_COPY, CMD_MEMSET, CMD_RECORD, CMD_WAIT } cmd_kind;

typedef struct cpu_cmd {
    cmd_kind kind;
    struct cpu_cmd *next;
    cpu_run run;     /* CMD_LAUNCH: its module referenced, args into `blob` */
    char label[160]; /* names the launch in its errors */
    void *dst;       /* CMD_COPY / CMD_MEMSET */
    const void *src; /* CMD_COPY (an h2d source is the command's own staged copy) */
    size_t n;
    int byte;
    cpu_event *ev; /* CMD_RECORD, CMD_WAIT (referenced) */
    size_t blob_bytes;
    int nargs;
    _Alignas(64) unsigned char blob[];
} cpu_cmd;

typedef struct cpu_stream {
    cpu_pool *pool;
    pthread_t thread;
    bool started, quit;
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    cpu_cmd *head, *tail;
    bool running;
    bool has_err; /* the first error since the last synchronization; later work is skipped */
    ckt_error err;
    bool capturing;
    cpu_cmd *cap_head, *cap_tail; /* the launches captured */
    struct cpu_stream *next;      /* the pool's streams */
} cpu_stream;

typedef struct {
    cpu_cmd *head;
} cpu_graph;

static void cmd_free(cpu_cmd *c)
{
    if (c->kind == CMD_LAUNCH) free_module(c->run.m);
    if (c->kind == CMD_RECORD || c->kind == CMD_WAIT) event_unref(c->ev);
    free(c);
}

static void cmd_run(cpu_stream *q, cpu_cmd *c)
{
    ckt_error e;
    ckt_status st = CKT_OK;
    switch (c->kind) {
    case CMD_LAUNCH:
        if (q->has_err) return; /* after a failure, as a GPU context's sticky error */
        st = run_launch(q->pool, &c->run, &e);
        if (st) ckt_fail_prefix(&e, ": "), ckt_fail_prefix(&e, c->label);
        break;
    case CMD_COPY:
        if (!q->has_err) memmove(c->dst, c->src, c->n);
        return;
    case CMD_MEMSET:
        if (!q->has_err) memset(c->dst, c->byte, c->n);
        return;
    case CMD_RECORD: event_complete(c->ev, q->has_err); return;
    case CMD_WAIT: event_wait(c->ev); return;
    }
    if (st && !q->has_err) {
        q->err = e;
        q->has_err = true;
    }
}

static void *stream_main(void *arg)
{
    cpu_stream *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->quit) pthread_cond_wait(&q->work, &q->mu);
        if (!q->head) break;
        cpu_cmd *c = q->head;
        q->head = c->next;
        if (!q->head) q->tail = NULL;
        q->running = true;
        pthread_mutex_unlock(&q->mu);
        cmd_run(q, c); /* has_err: only this thread writes it while running */
        cmd_free(c);
        pthread_mutex_lock(&q->mu);
        q->running = false;
        if (!q->head) pthread_cond_broadcast(&q->idle);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

static cpu_stream *stream_new(cpu_pool *p)
{
    cpu_stream *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->pool = p;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->idle, NULL);
    pthread_mutex_lock(&p->streams_mu);
    q->next = p->streams;
    p->streams = q;
    pthread_mutex_unlock(&p->streams_mu);
    return q;
}

/* the backend's stream: s, or the default stream (made when the device opened) */
static cpu_stream *stream_of(ckt_device *dev, void *s)
{
    return s ? s : ((cpu_pool *)dev->impl)->def;
}

/* queue c (the stream's thread started on first use) */
static ckt_status push(cpu_stream *q, cpu_cmd *c, ckt_error *err)
{
    c->next = NULL;
    pthread_mutex_lock(&q->mu);
    if (!q->started) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 256 << 10);
        int rc = pthread_create(&q->thread, &attr, stream_main, q);
        pthread_attr_destroy(&attr);
        if (rc) {
            pthread_mutex_unlock(&q->mu);
            cmd_free(c);
            return ckt_fail(err, CKT_ERUNTIME, "stream: cannot start its thread: %s", strerror(rc));
        }
        q->started = true;
    }
    if (q->tail)
        q->tail->next = c;
    else
        q->head = c;
    q->tail = c;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    return CKT_OK;
}

static ckt_status wait_idle(cpu_stream *q, ckt_error *err)
{
    pthread_mutex_lock(&q->mu);
    while (q->head || q->running) pthread_cond_wait(&q->idle, &q->mu);
    bool failed = q->has_err;
    if (failed && err) *err = q->err;
    q->has_err = false;
    pthread_mutex_unlock(&q->mu);
    return failed ? (err ? err->status : CKT_EINVAL) : CKT_OK;
}

static void stream_free(cpu_stream *q)
{
    wait_idle(q, NULL);
    pthread_mutex_lock(&q->mu);
    q->quit = true;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    if (q->started) pthread_join(q->thread, NULL);
    for (cpu_cmd *c = q->cap_head, *n; c; c = n) n = c->next, cmd_free(c);
    cpu_pool *p = q->pool;
    pthread_mutex_lock(&p->streams_mu);
    for (cpu_stream **pp = &p->streams; *pp; pp = &(*pp)->next)
        if (*pp == q) {
            *pp = q->next;
            break;
        }
    pthread_mutex_unlock(&p->streams_mu);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->idle);
    free(q);
}

static cpu_cmd *cmd_new(cmd_kind kind, size_t blob, ckt_error *err)
{
    cpu_cmd *c = aligned_alloc(64, (sizeof(cpu_cmd) + blob + 63) / 64 * 64);
    if (!c) {
        ckt_fail(err, CKT_ENOMEM, "stream: out of memory queueing work");
        return NULL;
    }
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->blob_bytes = blob;
    return c;
}

/* The launch's argument values copied into the command (the caller's may go right after). */
static cpu_cmd *launch_cmd(cpu_module *m, const ckt_launch_request *r, ckt_error *err)
{
    const ckt_launch_params *lp = r->p;
    size_t bytes = (size_t)lp->arg_count * sizeof(void *);
    for (int i = 0; i < lp->arg_count; i++)
        bytes = (bytes + 63) / 64 * 64 + ckt_param_size(lp->signature[i].kind);
    cpu_cmd *c = cmd_new(CMD_LAUNCH, bytes, err);
    if (!c) return NULL;
    void **argv = (void **)c->blob;
    size_t off = (size_t)lp->arg_count * sizeof(void *);
    for (int i = 0; i < lp->arg_count; i++) {
        off = (off + 63) / 64 * 64;
        size_t n = ckt_param_size(lp->signature[i].kind);
        memcpy(c->blob + off, lp->args[i], n);
        argv[i] = c->blob + off;
        off += n;
    }
    atomic_fetch_add(&m->refs, 1);
    c->run = (cpu_run){m,
                       argv,
                       {lp->grid[0], lp->grid[1], lp->grid[2]},
                       {lp->block[0], lp->block[1], lp->block[2]},
                       lp->dyn_shared_bytes,
                       lp->deadline};
    c->nargs = lp->arg_count;
    ckt_launch_label(r, c->label, sizeof c->label);
    return c;
}

static ckt_status cpu_launch(ckt_device *dev, void *s, const ckt_launch_request *r, ckt_error *err)
{
    cpu_module *m = r->module;
    ckt_status st = check_declared(m, r->p, err);
    if (st) return st;
    cpu_cmd *c = launch_cmd(m, r, err);
    if (!c) return CKT_ENOMEM;
    cpu_stream *q = stream_of(dev, s);
    if (!q) {
        cmd_free(c);
        return ckt_fail(err, CKT_ENOMEM, "stream: out of memory");
    }
    if (q->capturing) { /* kept for the graph, run by its replays */
        if (q->cap_tail)
            q->cap_tail->next = c;
        else
            q->cap_head = c;
        q->cap_tail = c;
        return CKT_OK;
    }
    return push(q, c, err);
}

static ckt_status cpu_copy(ckt_device *dev, void *s, ckt_copy_kind kind, void *dst, const void *src,
                           size_t n, ckt_error *err)
{
    cpu_stream *q = stream_of(dev, s);
    bool staged = kind == CKT_COPY_H2D; /* the caller may reuse its memory at once */
    cpu_cmd *c = q ? cmd_new(CMD_COPY, staged ? n : 0, err) : NULL;
    if (!c) return q ? CKT_ENOMEM : ckt_fail(err, CKT_ENOMEM, "stream: out of memory");
    if (staged) memcpy(c->blob, src, n);
    c->dst = dst;
    c->src = staged ? c->blob : src;
    c->n = n;
    return push(q, c, err);
}

static ckt_status cpu_memset(ckt_device *dev, void *s, void *dst, uint8_t byte, size_t n,
                             ckt_error *err)
{
    cpu_stream *q = stream_of(dev, s);
    cpu_cmd *c = q ? cmd_new(CMD_MEMSET, 0, err) : NULL;
    if (!c) return q ? CKT_ENOMEM : ckt_fail(err, CKT_ENOMEM, "stream: out of memory");
    c->dst = dst;
    c->byte = byte;
    c->n = n;
    return push(q, c, err);
}

static ckt_status cpu_stream_create(ckt_device *dev, bool capture, void **s, ckt_error *err)
{
    (void)capture;
    *s = stream_new(dev->impl);
    return *s ? CKT_OK : ckt_fail(err, CKT_ENOMEM, "stream: out of memory");
}

static void cpu_stream_destroy(ckt_device *dev, void *s)
{
    (void)dev;
    stream_free(s);
}

static ckt_status cpu_stream_sync(ckt_device *dev, void *s, ckt_error *err)
{
    cpu_stream *q = s ? s : ((cpu_pool *)dev->impl)->def;
    return q ? wait_idle(q, err) : CKT_OK;
}

/* every stream; the errors stay with their streams (each reported by its own synchronization) */
static ckt_status cpu_sync(ckt_device *dev, ckt_error *err)
{
    (void)err;
    cpu_pool *p = dev->impl;
    for (;;) { /* streams are not destroyed while their device synchronizes */
        bool busy = false;
        pthread_mutex_lock(&p->streams_mu);
        for (cpu_stream *q = p->streams; q && !busy; q = q->next) {
            pthread_mutex_lock(&q->mu);
            busy = q->head || q->running;
            pthread_mutex_unlock(&q->mu);
        }
        pthread_mutex_unlock(&p->streams_mu);
        if (!busy) return CKT_OK;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

static ckt_status cpu_event_record(ckt_device *dev, void *s, void **ev, ckt_error *err)
{
    cpu_stream *q = stream_of(dev, s);
    cpu_event *e = q ? event_new() : NULL;
    cpu_cmd *c = e ? cmd_new(CMD_RECORD, 0, err) : NULL;
    if (!c) {
        event_unref(e);
        return ckt_fail(err, CKT_ENOMEM, "record: out of memory");
    }
    atomic_fetch_add(&e->refs, 1);
    c->ev = e;
    ckt_status st = push(q, c, err);
    if (st) {
        event_unref(e);
        return st;
    }
    *ev = e;
    return CKT_OK;
}

static ckt_status cpu_event_sync(ckt_device *dev, void *ev, ckt_error *err)
{
    (void)dev, (void)err;
    event_wait(ev);
    cpu_event *e = ev;
    return e->failed ? ckt_fail(err, CKT_ERUNTIME,
                                "the stream's work before the event failed (synchronize the stream "
                                "for the error)")
                     : CKT_OK;
}

static int cpu_event_done(ckt_device *dev, void *ev)
{
    (void)dev;
    cpu_event *e = ev;
    pthread_mutex_lock(&e->mu);
    int r = e->done ? (e->failed ? -1 : 1) : 0;
    pthread_mutex_unlock(&e->mu);
    return r;
}

static ckt_status cpu_event_elapsed(ckt_device *dev, void *a, void *b, double *ms, ckt_error *err)
{
    (void)dev, (void)err;
    *ms = ((cpu_event *)b)->t_ms - ((cpu_event *)a)->t_ms;
    return CKT_OK;
}

static void cpu_event_destroy(ckt_device *dev, void *ev)
{
    (void)dev;
    event_unref(ev);
}

static ckt_status cpu_stream_wait(ckt_device *dev, void *s, void *ev, ckt_error *err)
{
    cpu_stream *q = stream_of(dev, s);
    cpu_cmd *c = q ? cmd_new(CMD_WAIT, 0, err) : NULL;
    if (!c) return ckt_fail(err, CKT_ENOMEM, "wait: out of memory");
    atomic_fetch_add(&((cpu_event *)ev)->refs, 1);
    c->ev = ev;
    return push(q, c, err);
}

static ckt_status cpu_capture_begin(ckt_device *dev, void *s, ckt_error *err)
{
    (void)dev, (void)err;
    ((cpu_stream *)s)->capturing = true;
    return CKT_OK;
}

static ckt_status cpu_capture_end(ckt_device *dev, void *s, void **graph, ckt_error *err)
{
    (void)dev;
    cpu_stream *q = s;
    cpu_graph *g = calloc(1, sizeof *g);
    if (!g) return ckt_fail(err, CKT_ENOMEM, "capture: out of memory");
    g->head = q->cap_head;
    q->cap_head = q->cap_tail = NULL;
    q->capturing = false;
    *graph = g;
    return CKT_OK;
}

/* each captured launch queued again, as a copy (the graph keeps its own) */
static ckt_status cpu_graph_launch(ckt_device *dev, void *graph, void *s, ckt_error *err)
{
    cpu_stream *q = stream_of(dev, s);
    for (const cpu_cmd *c = ((cpu_graph *)graph)->head; c; c = c->next) {
        cpu_cmd *d = cmd_new(CMD_LAUNCH, c->blob_bytes, err);
        if (!d) return CKT_ENOMEM;
        memcpy(d, c, sizeof *d + c->blob_bytes);
        void **argv = (void **)d->blob;
        for (int i = 0; i < c->nargs; i++)
            argv[i] = d->blob + ((const unsigned char *)c->run.args[i] - c->blob);
        d->run.args = argv;
        atomic_fetch_add(&d->run.m->refs, 1);
        ckt_status st = push(q, d, err);
        if (st) return st;
    }
    return CKT_OK;
}

static void cpu_graph_destroy(ckt_device *dev, void *graph)
{
    (void)dev;
    cpu_graph *g = graph;
    if (!g) return;
    for (cpu_cmd *c = g->head, *n; c; c = n) n = c->next, cmd_free(c);
    free(g);
}

const ckt_backend_ops ckt_runtime_cpu_ops = {
    .open = cpu_open,
    .close = cpu_close,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .load = cpu_load,
    .unload = cpu_unload,
    .launch = cpu_launch,
    .copy = cpu_copy,
    .memset = cpu_memset,
    .sync = cpu_sync,
    .stream_create = cpu_stream_create,
    .stream_destroy = cpu_stream_destroy,
    .stream_sync = cpu_stream_sync,
    .stream_wait = cpu_stream_wait,
    .event_record = cpu_event_record,
    .event_sync = cpu_event_sync,
    .event_done = cpu_event_done,
    .event_elapsed = cpu_event_elapsed,
    .event_destroy = cpu_event_destroy,
    .capture_begin = cpu_capture_begin,
    .capture_end = cpu_capture_end,
    .graph_launch = cpu_graph_launch,
    .graph_destroy = cpu_graph_destroy,
};
