/* JIT dispatch, the compiled binary object, and the compile cache around the three compilers. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ckt/cache.h"
#include "ckt/ckt.h"
#include "ckt/jit.h"
#include "jit_internal.h"

double ckt_jit_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

ckt_binary *ckt_binary_new(const ckt_target_record *target)
{
    ckt_binary *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->record = *target;
    snprintf(b->target, sizeof b->target, "%s", target->name);
    static _Atomic uint64_t next_id = 1;
    b->id = next_id++;
    b->refs = 1;
    ckt_resources none = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    b->res = none;
    return b;
}

void ckt_binary_retain(ckt_binary *b)
{
    if (b) b->refs++;
}

void ckt_binary_free(ckt_binary *b)
{
    if (!b || --b->refs > 0) return;
    free(b->code);
    free(b->log);
    free(b->disasm);
    free(b);
}

const char *ckt_binary_target(const ckt_binary *b) { return b ? b->target : NULL; }
const ckt_target_record *ckt_binary_target_record(const ckt_binary *b)
{
    return b ? &b->record : NULL;
}
const uint8_t *ckt_binary_code(const ckt_binary *b, size_t *size)
{
    if (size) *size = b ? b->code_size : 0;
    return b ? b->code : NULL;
}
const ckt_resources *ckt_binary_resources(const ckt_binary *b) { return b ? &b->res : NULL; }
const char *ckt_binary_log(const ckt_binary *b) { return b && b->log ? b->log : ""; }
const char *ckt_binary_disassembly(const ckt_binary *b)
{
    if (!b) return NULL;
    ckt_binary *m =
        (ckt_binary *)b; /* a lazily computed cache inside an otherwise immutable result */
    if (!m->disasm_done && m->disasm_cmd[0][0]) {
        const char *argv[3] = {m->disasm_cmd[0], m->disasm_cmd[1], m->disasm_cmd[2]};
        int n = m->disasm_cmd[2][0] ? 3 : m->disasm_cmd[1][0] ? 2 : 1;
        ckt_jit_disassemble(m, argv, n, m->disasm_suffix);
    }
    m->disasm_done = 1;
    return m->disasm;
}
double ckt_binary_compile_ms(const ckt_binary *b) { return b ? b->ms : 0; }
const char *ckt_binary_kernel_name(const ckt_binary *b) { return b ? b->kernel_name : NULL; }
int ckt_binary_from_cache(const ckt_binary *b) { return b ? b->from_cache : 0; }
int ckt_binary_compile_only(const ckt_binary *b) { return b ? b->compile_only : 0; }
uint64_t ckt_binary_id(const ckt_binary *b) { return b ? b->id : 0; }
const char *ckt_binary_compiler(const ckt_binary *b) { return b ? b->compiler : NULL; }
const char *ckt_binary_disassembly_note(const ckt_binary *b)
{
    if (!b) return NULL;
    if (!b->disasm_cmd[0][0]) return "no disassembler for this target";
    return b->disasm_note;
}

/* Run argv (no shell), capture stdout+stderr into *out (malloc'd). Returns the exit status or -1.
 */
int ckt_jit_run(char *const argv[], const char *stdin_file, char **out)
{
    int pipefd[2];
    /* close-on-exec: compiles on other threads fork too, and a child that inherited this pipe's
     * write end would keep the read below waiting until that child exits */
    if (pipe2(pipefd, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        close(pipefd[1]);
        if (stdin_file) {
            int fd = open(stdin_file, O_RDONLY);
            if (fd >= 0) {
                dup2(fd, 0);
                close(fd);
            }
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    close(pipefd[1]);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf && len + 1024 > cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else {
                buf = nb;
                cap *= 2;
            }
        }
        char tmp[1024];
        ssize_t n = read(pipefd[0], buf ? buf + len : tmp, buf ? cap - len - 1 : sizeof tmp);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (buf) len += (size_t)n;
    }
    close(pipefd[0]);
    if (buf) buf[len] = 0;
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

ckt_status ckt_jit_write_file(const char *path, const void *data, size_t n, ckt_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) return ckt_fail(err, CKT_EIO, "jit: cannot write %s: %s", path, strerror(errno));
    size_t w = fwrite(data, 1, n, f);
    if (fclose(f) != 0 || w != n) return ckt_fail(err, CKT_EIO, "jit: cannot write %s", path);
    return CKT_OK;
}

ckt_status ckt_jit_read_file(const char *path, uint8_t **data, size_t *n, ckt_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return ckt_fail(err, CKT_EIO, "jit: cannot read %s: %s", path, strerror(errno));
    long sz = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    uint8_t *b = sz > 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)sz) : NULL;
    if (!b || fread(b, 1, (size_t)sz, f) != (size_t)sz) {
        free(b);
        fclose(f);
        return ckt_fail(err, CKT_EIO, "jit: cannot read %s (empty or unreadable)", path);
    }
    fclose(f);
    *data = b;
    *n = (size_t)sz;
    return CKT_OK;
}

/* Write the code to a temporary file, run a disassembler on it, keep its output. */
void ckt_binary_set_disasm(ckt_binary *b, const char *suffix, int n, const char *const *words)
{
    for (int i = 0; i < n; i++) snprintf(b->disasm_cmd[i], sizeof b->disasm_cmd[i], "%s", words[i]);
    b->disasm_suffix = suffix;
}

void ckt_jit_disassemble(ckt_binary *b, const char *const *argv_prefix, int nprefix,
                         const char *suffix)
{
    const char *tmp = getenv("TMPDIR");
    char file[4096];
    int slen = (int)strlen(suffix);
    snprintf(file, sizeof file, "%s/ckt-disasm-XXXXXX%s", tmp && *tmp ? tmp : "/tmp", suffix);
    int fd = mkstemps(file, slen);
    if (fd < 0) {
        snprintf(b->disasm_note, sizeof b->disasm_note,
                 "no disassembly: cannot create a temporary file");
        return;
    }
    close(fd);
    if (ckt_jit_write_file(file, b->code, b->code_size, NULL) != CKT_OK) {
        unlink(file);
        return;
    }
    char *argv[16];
    int k = 0;
    for (int i = 0; i < nprefix && k < 14; i++) argv[k++] = (char *)argv_prefix[i];
    argv[k++] = file;
    argv[k] = NULL;
    char *out = NULL;
    int rc = ckt_jit_run(argv, NULL, &out);
    if (rc == 0)
        b->disasm = out;
    else {
        if (rc == 127)
            snprintf(b->disasm_note, sizeof b->disasm_note, "no disassembly: %s is not installed",
                     argv[0]);
        else
            snprintf(b->disasm_note, sizeof b->disasm_note,
                     "no disassembly: %s failed (exit %d): %.200s", argv[0], rc, out ? out : "");
        free(out);
    }
    unlink(file);
}

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

static uint8_t *serialize(const ckt_binary *b, size_t *size)
{
    int64_t res[10] = {b->res.vgprs,        b->res.sgprs,       b->res.agprs,
                       b->res.vgpr_spills,  b->res.sgpr_spills, b->res.registers,
                       b->res.spill_stores, b->res.spill_loads, b->res.shared_bytes,
                       b->res.scratch_bytes};
    uint8_t resb[80];
    for (int i = 0; i < 10; i++)
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
            if (len != 80) return 0;
            int64_t r[10];
            for (int k = 0; k < 10; k++) {
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

/* The cache key: everything that can change the output. */
static void cache_key(const ckt_compile_request *req, const ckt_target_record *t,
                      const char *identity, char key[CKT_CACHE_KEY_LEN + 1])
{
    const char *parts[48] = {"ckt-jit-cache-2", ckt_version(),    identity,
                             t->name,           req->kernel_name, req->source};
    int n = 6;
    for (int i = 0; i < req->noptions; i++) parts[n++] = req->options[i];
    ckt_cache_key(parts, NULL, n, key);
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
    ckt_compiler_kind be = t->compiler;
    double t0 = ckt_jit_now_ms();
    ckt_cache *cache = (flags & CKT_COMPILE_NO_CACHE) ? NULL : ckt_context_cache(ctx);
    char key[CKT_CACHE_KEY_LEN + 1] = "";
    if (ckt_cache_enabled(cache)) {
        char identity[256];
        st = be == CKT_COMPILER_HOST_CC  ? ckt_jit_cpu_identity(identity, sizeof identity, err)
             : be == CKT_COMPILER_HIPRTC ? ckt_jit_hip_identity(identity, sizeof identity, err)
                                         : ckt_jit_cuda_identity(identity, sizeof identity, err);
        if (st) return st;
        cache_key(req, t, identity, key);
        uint8_t *payload;
        size_t size;
        if (ckt_cache_get(cache, key, &payload, &size)) {
            ckt_binary *b = ckt_binary_new(t);
            int ok = b && deserialize(payload, size, b);
            free(payload);
            if (ok) {
                b->from_cache = 1;
                b->compile_only = (flags & CKT_COMPILE_ONLY) != 0;
                b->ms = ckt_jit_now_ms() - t0;
                *out = b;
                return CKT_OK;
            }
            ckt_binary_free(b); /* unreadable payload: compile and overwrite it */
        }
    }
    ckt_binary *b = ckt_binary_new(t);
    if (!b) return ckt_fail(err, CKT_ENOMEM, "compile: out of memory");
    snprintf(b->kernel_name, sizeof b->kernel_name, "%s", req->kernel_name);
    st = be == CKT_COMPILER_HOST_CC  ? ckt_jit_cpu(req, b, err)
         : be == CKT_COMPILER_HIPRTC ? ckt_jit_hip(req, t, b, err)
                                     : ckt_jit_cuda(req, t, b, err);
    b->ms = ckt_jit_now_ms() - t0;
    if (st) {
        ckt_binary_free(b);
        return st;
    }
    b->compile_only = (flags & CKT_COMPILE_ONLY) != 0;
    if (key[0]) {
        size_t size;
        uint8_t *payload = serialize(b, &size);
        if (payload) ckt_cache_put(cache, key, payload, size);
        free(payload);
    }
    *out = b;
    return CKT_OK;
}
