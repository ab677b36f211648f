/* JIT dispatch: a request to its compiler (ckt_jit_backend, one per compiler kind), through the
 * context's compile cache. The binary object itself is binary.c's. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache_why.h"
#include "ckt/cache.h"
#include "ckt/ckt.h"
#include "ckt/jit.h"
#include "jit_internal.h"

/* ---- the binary as a cache payload: "CKTB", a field count, then (u64 length, bytes) per field
 * ---- */

enum {
    F_TARGET,
    F_COMPILER,
    F_KERNEL,
    F_RES,
    F_CODE,
    F_LOG,
    F_DIS0,
    F_DIS1,
    F_DIS2,
    F_DISSUFFIX,
    F_COUNT
};

enum { NRES = 10 }; /* the int64 fields of ckt_resources, in order */

static uint8_t *serialize(const ckt_binary *b, size_t *size)
{
    int64_t res[NRES] = {b->res.vgprs,        b->res.sgprs,       b->res.agprs,
                         b->res.vgpr_spills,  b->res.sgpr_spills, b->res.registers,
                         b->res.spill_stores, b->res.spill_loads, b->res.shared_bytes,
                         b->res.scratch_bytes};
    uint8_t resb[8 * NRES];
    for (int i = 0; i < NRES; i++)
        for (int j = 0; j < 8; j++) resb[8 * i + j] = (uint8_t)((uint64_t)res[i] >> (8 * j));
    const void *f[F_COUNT] = {b->target,        b->compiler,
                              b->kernel_name,   resb,
                              b->code,          b->log ? b->log : "",
                              b->disasm_cmd[0], b->disasm_cmd[1],
                              b->disasm_cmd[2], b->disasm_suffix ? b->disasm_suffix : ""};
    size_t len[F_COUNT], total = 8;
    for (int i = 0; i < F_COUNT; i++) {
        len[i] = i == F_RES ? sizeof resb : i == F_CODE ? b->code_size : strlen(f[i]);
        total += 8 + len[i];
    }
    uint8_t *out = malloc(total), *p = out;
    if (!out) return NULL;
    memcpy(p, "CKTB", 4);
    p[4] = F_COUNT, p[5] = p[6] = p[7] = 0;
    p += 8;
    for (int i = 0; i < F_COUNT; i++) {
        for (int j = 0; j < 8; j++) p[j] = (uint8_t)((uint64_t)len[i] >> (8 * j));
        memcpy(p + 8, f[i], len[i]);
        p += 8 + len[i];
    }
    *size = total;
    return out;
}

/* The inverse; 0 on anything malformed (the checksum makes that unlikely, not impossible). */
static int deserialize(const uint8_t *p, size_t n, ckt_binary *b)
{
    if (n < 8 || memcmp(p, "CKTB", 4) || p[4] != F_COUNT) return 0;
    const uint8_t *end = p + n;
    p += 8;
    for (int i = 0; i < F_COUNT; i++) {
        if (end - p < 8) return 0;
        uint64_t len = 0;
        for (int j = 7; j >= 0; j--) len = len << 8 | p[j];
        p += 8;
        if (len > (uint64_t)(end - p)) return 0;
        char *dst = NULL;
        size_t cap = 0;
        switch (i) {
        case F_TARGET: dst = b->target, cap = sizeof b->target; break;
        case F_COMPILER: dst = b->compiler, cap = sizeof b->compiler; break;
        case F_KERNEL: dst = b->kernel_name, cap = sizeof b->kernel_name; break;
        case F_DIS0:
        case F_DIS1:
        case F_DIS2: dst = b->disasm_cmd[i - F_DIS0], cap = sizeof b->disasm_cmd[0]; break;
        case F_RES: {
            if (len != 8 * NRES) return 0;
            int64_t r[NRES];
            for (int k = 0; k < NRES; k++) {
                uint64_t v = 0;
                for (int j = 7; j >= 0; j--) v = v << 8 | p[8 * k + j];
                r[k] = (int64_t)v;
            }
            ckt_resources res = {r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9]};
            b->res = res;
            break;
        }
        case F_CODE:
            if (!len || !(b->code = malloc((size_t)len))) return 0;
            memcpy(b->code, p, (size_t)len);
            b->code_size = (size_t)len;
            break;
        case F_LOG:
            if (!(b->log = malloc((size_t)len + 1))) return 0;
            memcpy(b->log, p, (size_t)len);
            b->log[len] = 0;
            break;
        case F_DISSUFFIX:
            b->disasm_suffix = len == 3 && !memcmp(p, ".co", 3)      ? ".co"
                               : len == 3 && !memcmp(p, ".so", 3)    ? ".so"
                               : len == 6 && !memcmp(p, ".cubin", 6) ? ".cubin"
                                                                     : ".bin";
            break;
        }
        if (dst) {
            if (len >= cap) return 0;
            memcpy(dst, p, (size_t)len);
            dst[len] = 0;
        }
        p += len;
    }
    return p == end;
}

const ckt_jit_backend *ckt_jit_backend_for(ckt_compiler_kind c)
{
    static const ckt_jit_backend *const by_kind[] = {
        [CKT_COMPILER_HOST_CC] = &ckt_jit_backend_cpu,
        [CKT_COMPILER_HIPRTC] = &ckt_jit_backend_hip,
        [CKT_COMPILER_NVRTC] = &ckt_jit_backend_cuda,
    };
    return (unsigned)c < sizeof by_kind / sizeof *by_kind ? by_kind[c] : &ckt_jit_backend_cpu;
}

static ckt_status check_request(const ckt_compile_request *req, ckt_binary **out,
                                const ckt_target_record *t, ckt_error *err)
{
    if (!req) return ckt_fail(err, CKT_EINVAL, "compile: request is NULL");
    if (!out) return ckt_fail(err, CKT_EINVAL, "compile: out is NULL");
    if (!t) return ckt_fail(err, CKT_EINVAL, "compile: target is NULL");
    if (!req->source || !*req->source) return ckt_fail(err, CKT_EINVAL, "compile: source is empty");
    if (!req->kernel_name || !*req->kernel_name)
        return ckt_fail(err, CKT_EINVAL, "compile: kernel_name is empty");
    if (strlen(req->kernel_name) >= sizeof((ckt_binary *)0)->kernel_name)
        return ckt_fail(err, CKT_EINVAL, "compile: kernel_name is longer than 127 characters");
    for (const char *p = req->kernel_name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_'))
            return ckt_fail(err, CKT_EINVAL, "compile: kernel_name '%.64s' is not a C identifier",
                            req->kernel_name);
    if (req->noptions < 0 || req->noptions > 32)
        return ckt_fail(err, CKT_EINVAL, "compile: noptions %d is outside [0, 32]", req->noptions);
    if (req->noptions > 0 && !req->options)
        return ckt_fail(err, CKT_EINVAL, "compile: options is NULL with noptions %d",
                        req->noptions);
    for (int i = 0; i < req->noptions; i++)
        if (!req->options[i]) return ckt_fail(err, CKT_EINVAL, "compile: option %d is NULL", i);
    return CKT_OK;
}

/* Dynamic shared memory / LDS as the source declares it: the size ckt's emitter writes beside
 * its `extern __shared__ ... ckt_lds[]; / * N bytes, requested at launch` (emit_gpu.c); -1 for
 * another extern __shared__ declaration (its size is the launch's); 0 with none, and on the CPU
 * (whose LDS is the kernel's K__lds_bytes, allocated by the runtime). */
static int64_t dynamic_lds_of(const char *src, const ckt_target_record *t)
{
    if (t->compiler == CKT_COMPILER_HOST_CC) return 0;
    const char *p = strstr(src, "extern __shared__");
    if (!p) return 0;
    const char *mark = strstr(p, "ckt_lds[]; /* ");
    const char *eol = strchr(p, '\n');
    if (!mark || (eol && mark > eol)) return -1;
    char *end;
    long long n = strtoll(mark + 14, &end, 10);
    return end != mark + 14 && !strncmp(end, " bytes, requested at launch", 27) && n >= 0 ? n : -1;
}

/* The version part of the key: the entry format (ckt-jit-cache-3 since the NVRTC resources come
 * from the cubin) and the ckt version. */
static void key_version(char *out, size_t cap)
{
    snprintf(out, cap, "ckt-jit-cache-3 ckt %s", ckt_version());
}

/* The cache key: everything that can change the output. */
static void cache_key(const ckt_cache_parts *p, char key[CKT_CACHE_KEY_LEN + 1])
{
    const char *parts[48] = {p->version, p->compiler, p->target, p->kernel_name, p->source};
    int n = 5;
    for (int i = 0; i < p->noptions; i++) parts[n++] = p->options[i];
    if (p->light) parts[n++] = "(CKT_COMPILE_LIGHT)";
    ckt_cache_key(parts, NULL, n, key);
}

/* ---- deadlines (ckt_compile_set_deadline) ---- */

static _Thread_local double compile_deadline;
static atomic_int abandoned; /* in-process compiles left running past their deadline */

double ckt_compile_set_deadline(double deadline)
{
    double old = compile_deadline;
    compile_deadline = deadline > 0 ? deadline : 0;
    return old;
}
double ckt_compile_deadline(void) { return compile_deadline; }
int ckt_compile_abandoned(void) { return atomic_load(&abandoned); }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* An NVRTC / hipRTC compile on a thread of its own, with copies of everything it reads: the
 * caller waits until the deadline and then leaves; whoever of the two comes last frees the job. */
typedef struct rtc_job {
    const ckt_jit_backend *be;
    ckt_compile_request req;
    unsigned flags;
    char *target, *source, *name, *opts[32];
    ckt_target_record t;
    ckt_binary *b;
    ckt_error err;
    ckt_status st;
    int done, left; /* the compile finished / the caller stopped waiting */
    pthread_mutex_t lock;
    pthread_cond_t cond;
} rtc_job;

static void job_free(rtc_job *j)
{
    free(j->target);
    free(j->source);
    free(j->name);
    for (int i = 0; i < j->req.noptions; i++) free(j->opts[i]);
    pthread_mutex_destroy(&j->lock);
    pthread_cond_destroy(&j->cond);
    free(j);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void *rtc_worker(void *arg)
{
    rtc_job *j = arg;
    j->st = j->be->compile(&j->req, j->flags, &j->t, j->b, &j->err);
    pthread_mutex_lock(&j->lock);
    j->done = 1;
    int left = j->left;
    pthread_cond_signal(&j->cond);
    pthread_mutex_unlock(&j->lock);
    if (left) { /* nobody waits: drop the result */
        ckt_binary_free(j->b);
        job_free(j);
        atomic_fetch_sub(&abandoned, 1);
    }
    return NULL;
}

/* *bp passes to the thread when the caller stops waiting (*bp is NULL then) */
static ckt_status compile_until(const ckt_jit_backend *be, const ckt_compile_request *req,
                                unsigned flags, const ckt_target_record *t, ckt_binary **bp,
                                double deadline, ckt_error *err)
{
    if (now_s() >= deadline)
        return ckt_fail(err, CKT_ELIMIT,
                        "compile: the time limit ran out before the compile of '%s' started",
                        req->kernel_name);
    /* the host C compiler is a child process: jit_cpu.c kills it at the deadline */
    if (t->compiler == CKT_COMPILER_HOST_CC) return be->compile(req, flags, t, *bp, err);
    if (atomic_load(&abandoned) >= CKT_COMPILE_MAX_ABANDONED)
        return ckt_fail(err, CKT_ELIMIT,
                        "compile: %d compiles stopped at earlier time limits are still running in "
                        "the background; '%s' is not started (try again when they are done)",
                        CKT_COMPILE_MAX_ABANDONED, req->kernel_name);
    rtc_job *j = calloc(1, sizeof *j);
    if (!j) return ckt_fail(err, CKT_ENOMEM, "compile: out of memory");
    j->be = be;
    j->t = *t;
    j->b = *bp;
    j->target = dup_or_null(req->target);
    j->source = dup_or_null(req->source);
    j->name = dup_or_null(req->kernel_name);
    int ok = j->source && j->name && (j->target || !req->target);
    for (int i = 0; i < req->noptions; i++) ok &= (j->opts[i] = strdup(req->options[i])) != NULL;
    j->req = (ckt_compile_request){j->target, j->source, j->name, (const char *const *)j->opts,
                                   req->noptions};
    j->flags = flags;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_t th;
    pthread_attr_t ta;
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    if (!ok || pthread_create(&th, &ta, rtc_worker, j) != 0) {
        pthread_attr_destroy(&ta);
        job_free(j);
        return ckt_fail(err, ok ? CKT_ERUNTIME : CKT_ENOMEM,
                        "compile: cannot start the compile thread for '%s'", req->kernel_name);
    }
    pthread_attr_destroy(&ta);
    struct timespec until;
    until.tv_sec = (time_t)deadline;
    until.tv_nsec = (long)((deadline - (double)until.tv_sec) * 1e9);
    pthread_mutex_lock(&j->lock);
    while (!j->done)
        if (pthread_cond_timedwait(&j->cond, &j->lock, &until) == ETIMEDOUT) break;
    if (!j->done) {
        j->left = 1;
        *bp = NULL;
        atomic_fetch_add(&abandoned, 1);
        pthread_mutex_unlock(&j->lock);
        return ckt_fail(err, CKT_ELIMIT,
                        "compile: the time limit ran out while %s compiled '%s' (the compile is "
                        "abandoned and finishes in the background)",
                        t->compiler == CKT_COMPILER_NVRTC ? "NVRTC" : "hipRTC", req->kernel_name);
    }
    pthread_mutex_unlock(&j->lock);
    ckt_status st = j->st;
    if (st && err) *err = j->err; /* err may be NULL: ckt_fail's convention */
    job_free(j);
    return st;
}

ckt_status ckt_compile(ckt_context *ctx, const ckt_compile_request *req, unsigned flags,
                       ckt_binary **out, ckt_error *err)
{
    ckt_target_record t;
    if (!req) return ckt_fail(err, CKT_EINVAL, "compile: request is NULL");
    if (!req->target || !*req->target) return ckt_fail(err, CKT_EINVAL, "compile: target is empty");
    if (strlen(req->target) >= sizeof((ckt_binary *)0)->target)
        return ckt_fail(err, CKT_EINVAL, "compile: target '%.40s...' is too long", req->target);
    if (ckt_target_parse(req->target, &t, err)) return ckt_fail_prefix(err, "compile: ");
    return ckt_compile_record(ctx, &t, req, flags, out, err);
}

ckt_status ckt_compile_record(ckt_context *ctx, const ckt_target_record *t,
                              const ckt_compile_request *req, unsigned flags, ckt_binary **out,
                              ckt_error *err)
{
    ckt_status st = check_request(req, out, t, err);
    if (!st && (flags & CKT_COMPILE_SANDBOXED)) st = ckt_jit_check_sandboxed(req, t, err);
    if (st) return st;
    const ckt_jit_backend *be = ckt_jit_backend_for(t->compiler);
    double t0 = ckt_jit_now_ms();
    ckt_cache *cache = (flags & CKT_COMPILE_NO_CACHE) ? NULL : ckt_context_cache(ctx);
    char key[CKT_CACHE_KEY_LEN + 1] = "", identity[256], version[96], status[512];
    ckt_cache_parts parts = {
        t->name,      req->kernel_name, version,     identity,
        req->options, req->noptions,    req->source, (flags & CKT_COMPILE_LIGHT) != 0};
    key_version(version, sizeof version);
    if (flags & CKT_COMPILE_NO_CACHE)
        snprintf(status, sizeof status, "off: not read or written (cache = false)");
    else if (!cache)
        snprintf(status, sizeof status, "off: %s",
                 ctx ? "the context turns the compile cache off" : "no context");
    else if (!ckt_cache_enabled(cache) && !ckt_cache_install_dir(cache)[0])
        snprintf(status, sizeof status, "off: %.400s", ckt_cache_note(cache));
    else {
        st = be->identity(identity, sizeof identity, err);
        if (st) return st;
        cache_key(&parts, key);
        uint8_t *payload;
        size_t size;
        char why[400];
        int where = ckt_cache_lookup(cache, key, &payload, &size, why, sizeof why);
        if (where) {
            ckt_binary *b = ckt_binary_new(t);
            int ok = b && deserialize(payload, size, b);
            free(payload);
            if (ok) {
                b->from_cache = 1;
                b->dynamic_shared = dynamic_lds_of(req->source, t);
                b->compile_only = (flags & CKT_COMPILE_ONLY) != 0;
                snprintf(b->cache_status, sizeof b->cache_status, "hit%s%.400s",
                         where == 2 ? ": the installed cache " : "",
                         where == 2 ? ckt_cache_install_dir(cache) : "");
                b->ms = ckt_jit_now_ms() - t0;
                *out = b;
                return CKT_OK;
            }
            ckt_binary_free(b); /* unreadable payload: compile and overwrite it */
            snprintf(status, sizeof status, "miss: the entry's payload could not be read");
        } else
            ckt_cache_why_miss(cache, &parts, why, status, sizeof status);
        if (!ckt_cache_enabled(cache)) /* read the install's cache only: nothing is written */
            snprintf(status + strlen(status), sizeof status - strlen(status),
                     " (not written: %.200s)", ckt_cache_note(cache));
    }
    ckt_binary *b = ckt_binary_new(t);
    if (!b) return ckt_fail(err, CKT_ENOMEM, "compile: out of memory");
    snprintf(b->kernel_name, sizeof b->kernel_name, "%s", req->kernel_name);
    double deadline = compile_deadline;
    st = deadline > 0 ? compile_until(be, req, flags, t, &b, deadline, err)
                      : be->compile(req, flags, t, b, err);
    if (st) {
        ckt_binary_free(b); /* NULL where an abandoned compile's thread owns it */
        return st;
    }
    b->ms = ckt_jit_now_ms() - t0;
    b->compile_only = (flags & CKT_COMPILE_ONLY) != 0;
    b->dynamic_shared = dynamic_lds_of(req->source, t);
    snprintf(b->cache_status, sizeof b->cache_status, "%s", status);
    if (key[0] && ckt_cache_enabled(cache)) {
        size_t size;
        uint8_t *payload = serialize(b, &size);
        if (payload && ckt_cache_put(cache, key, payload, size))
            ckt_cache_why_record(cache, &parts);
        free(payload);
    }
    *out = b;
    return CKT_OK;
}
