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
    void *so;
    int fd; /* the memory file the object was loaded from (-1: none), open as long as the module */
    cpu_kernel fn;
    unsigned long long lds_bytes;
    const int *param_kinds; /* K__param_kinds, K__nparams: when the source declares them */
    int nparams;
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
    double deadline; /* 0: none */
    atomic_llong next_block;
    atomic_int timed_out; /* a worker saw the deadline pass: the others stop too */
    int fault;            /* set by the kernel (CKT_FAULT, atomically): a window left its tensor */
} cpu_pool;

/* How often a worker looks at the clock: every block would cost a system call per block of a
 * small kernel; 64 keeps the overshoot to 64 blocks per worker. */
#define DEADLINE_EVERY 64

static void run_blocks(cpu_pool *p, void **lds, size_t *lds_cap)
{
    if (p->lds_bytes > *lds_cap) {
        free(*lds);
        size_t cap = (p->lds_bytes + CKT_CPU_LDS_ALIGN - 1) / CKT_CPU_LDS_ALIGN * CKT_CPU_LDS_ALIGN;
        *lds = aligned_alloc(CKT_CPU_LDS_ALIGN, cap);
        *lds_cap = *lds ? cap : 0;
        if (!*lds) return; /* the other workers run the blocks; if none can, the launch says so */
    }
    ckt_cpu_launch l;
    memcpy(l.grid, p->grid, sizeof l.grid);
    memcpy(l.block, p->block, sizeof l.block);
    l.lds = p->lds_bytes ? *lds : NULL;
    l.fault = &p->fault;
    for (long long done = 0;; done++) {
        if (p->deadline > 0 && done % DEADLINE_EVERY == DEADLINE_EVERY - 1 &&
            ckt_runtime_now() >= p->deadline)
            atomic_store(&p->timed_out, 1);
        if (atomic_load(&p->timed_out)) break;
        long long b = atomic_fetch_add(&p->next_block, 1);
        if (b >= p->nblocks) break;
        l.block_id[0] = b % p->grid[0];
        l.block_id[1] = (b / p->grid[0]) % p->grid[1];
        l.block_id[2] = b / (p->grid[0] * p->grid[1]);
        p->fn(p->args, &l);
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
    pthread_cond_init(&p->done, NULL);
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
    dev->impl = p;
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

static void cpu_close(ckt_device *dev)
{
    cpu_pool *p = dev->impl;
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

static ckt_status cpu_copy(ckt_device *dev, void *dst, const void *src, size_t n, ckt_error *err)
{
    (void)dev, (void)err;
    memmove(dst, src, n);
    return CKT_OK;
}

static ckt_status cpu_memset(ckt_device *dev, void *dst, uint8_t byte, size_t n, ckt_error *err)
{
    (void)dev, (void)err;
    memset(dst, byte, n);
    return CKT_OK;
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

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static ckt_status cpu_launch(ckt_device *dev, void *module, void *fn, const ckt_launch_params *lp,
                             double *ms, ckt_error *err)
{
    (void)fn;
    cpu_pool *p = dev->impl;
    cpu_module *m = module;
    ckt_status st = check_declared(m, lp, err);
    if (st) return st;
    double t0 = now_ms();
    pthread_mutex_lock(&p->launch_mu);
    pthread_mutex_lock(&p->mu);
    p->fn = m->fn;
    p->args = lp->args;
    memcpy(p->grid, lp->grid, sizeof p->grid);
    memcpy(p->block, lp->block, sizeof p->block);
    p->nblocks = lp->grid[0] * lp->grid[1] * lp->grid[2]; /* < 2^63: dims checked by the caller */
    p->lds_bytes = (size_t)m->lds_bytes + (size_t)lp->dyn_shared_bytes;
    p->deadline = lp->deadline;
    atomic_store(&p->timed_out, 0);
    __atomic_store_n(&p->fault, 0, __ATOMIC_RELAXED);
    atomic_store(&p->next_block, 0);
    p->busy = p->nthreads;
    p->generation++;
    pthread_cond_broadcast(&p->start);
    while (p->busy > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    *ms = now_ms() - t0;
    int all_ran = atomic_load(&p->next_block) >= p->nblocks, timed_out = atomic_load(&p->timed_out);
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
        return ckt_fail(err, CKT_EINVAL, "launch: mbarrier %d of set %d: %s", f % 64, f % 4096 / 64,
                        why[kind]);
    }
    if (fault)
        return ckt_fail(err, CKT_EINVAL,
                        "launch: window %d left its tensor in some block (its origin plus its "
                        "lengths reach outside the shape: "
                        "a grid larger than the tiles, or an origin out of range); those accesses "
                        "were skipped, nothing outside the buffers "
                        "and LDS was touched",
                        fault - 1);
    if (timed_out)
        return ckt_fail(err, CKT_ELIMIT,
                        "launch: stopped after about %lld of %lld blocks: the time limit ran out",
                        started < nblocks ? started : nblocks, nblocks);
    if (!all_ran)
        return ckt_fail(err, CKT_ENOMEM, "launch: no worker could allocate %zu bytes of LDS",
                        lds_bytes);
    return CKT_OK;
}

static ckt_status cpu_sync(ckt_device *dev, ckt_error *err)
{
    (void)dev, (void)err;
    return CKT_OK;
}

const ckt_backend_ops ckt_runtime_cpu_ops = {cpu_open, cpu_close,  cpu_alloc,  cpu_free,
                                             cpu_copy, cpu_copy,   cpu_copy,   cpu_memset,
                                             cpu_load, cpu_unload, cpu_launch, cpu_sync};
