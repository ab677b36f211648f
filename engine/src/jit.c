/* JIT dispatch, the compiled binary object, and the CPU backend (the host C compiler). */
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

#include "ckt/jit.h"
#include "jit_internal.h"

double ckt_jit_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

ckt_binary *ckt_binary_new(const char *target)
{
    ckt_binary *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    snprintf(b->target, sizeof b->target, "%s", target);
    static _Atomic uint64_t next_id = 1;
    b->id = next_id++;
    ckt_resources none = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    b->res = none;
    return b;
}

void ckt_binary_free(ckt_binary *b)
{
    if (!b) return;
    free(b->code);
    free(b->log);
    free(b->disasm);
    free(b);
}

const char *ckt_binary_target(const ckt_binary *b) { return b ? b->target : NULL; }
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
    ckt_binary *m = (ckt_binary *)b; /* a lazily computed cache inside an otherwise immutable result */
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

/* Run argv (no shell), capture stdout+stderr into *out (malloc'd). Returns the exit status or -1. */
int ckt_jit_run(char *const argv[], const char *stdin_file, char **out)
{
    int pipefd[2];
    if (pipe(pipefd) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) { close(pipefd[0]); close(pipefd[1]); return -1; }
    if (pid == 0) {
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        close(pipefd[1]);
        if (stdin_file) {
            int fd = open(stdin_file, O_RDONLY);
            if (fd >= 0) { dup2(fd, 0); close(fd); }
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
            if (!nb) { free(buf); buf = NULL; } else { buf = nb; cap *= 2; }
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
    if (out) *out = buf; else free(buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static ckt_status write_file(const char *path, const void *data, size_t n, ckt_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) return ckt_fail(err, CKT_EIO, "jit: cannot write %s: %s", path, strerror(errno));
    size_t w = fwrite(data, 1, n, f);
    if (fclose(f) != 0 || w != n) return ckt_fail(err, CKT_EIO, "jit: cannot write %s", path);
    return CKT_OK;
}

static ckt_status read_file(const char *path, uint8_t **data, size_t *n, ckt_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return ckt_fail(err, CKT_EIO, "jit: cannot read %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = sz > 0 ? malloc((size_t)sz) : NULL;
    if (!b || fread(b, 1, (size_t)sz, f) != (size_t)sz) {
        free(b);
        fclose(f);
        return ckt_fail(err, CKT_EIO, "jit: cannot read %s", path);
    }
    fclose(f);
    *data = b;
    *n = (size_t)sz;
    return CKT_OK;
}

/* Write `data` to a temporary file, run a disassembler on it, keep its output. */
void ckt_jit_disassemble(ckt_binary *b, const char *const *argv_prefix, int nprefix, const char *suffix)
{
    char path[] = "/tmp/ckt-disasm-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return;
    close(fd);
    char file[64];
    snprintf(file, sizeof file, "%s%s", path, suffix);
    if (rename(path, file) != 0 || write_file(file, b->code, b->code_size, NULL) != CKT_OK) { unlink(path); unlink(file); return; }
    char *argv[16];
    int k = 0;
    for (int i = 0; i < nprefix && k < 14; i++) argv[k++] = (char *)argv_prefix[i];
    argv[k++] = file;
    argv[k] = NULL;
    char *out = NULL;
    if (ckt_jit_run(argv, NULL, &out) == 0) b->disasm = out;
    else free(out);
    unlink(file);
}

/* The CPU target: cc -O2 -shared -fPIC into a shared object. */
static ckt_status compile_cpu(const ckt_compile_request *req, ckt_binary *b, ckt_error *err)
{
    char dir[] = "/tmp/ckt-cpu-XXXXXX";
    if (!mkdtemp(dir)) return ckt_fail(err, CKT_EIO, "jit: cannot create a temporary directory: %s", strerror(errno));
    char src[128], so[128];
    snprintf(src, sizeof src, "%s/kernel.c", dir);
    snprintf(so, sizeof so, "%s/kernel.so", dir);
    ckt_status st = write_file(src, req->source, strlen(req->source), err);
    const char *cc = getenv("CC");
    if (!cc || !*cc) cc = "cc";
    char *argv[32];
    int k = 0;
    argv[k++] = (char *)cc;
    argv[k++] = "-O2";
    argv[k++] = "-std=c17";
    argv[k++] = "-shared";
    argv[k++] = "-fPIC";
    for (int i = 0; i < req->noptions && k < 28; i++) argv[k++] = (char *)req->options[i];
    argv[k++] = "-o";
    argv[k++] = so;
    argv[k++] = src;
    argv[k] = NULL;
    if (!st) {
        int rc = ckt_jit_run(argv, NULL, &b->log);
        if (rc != 0) st = ckt_fail(err, rc < 0 || rc == 127 ? CKT_ERUNTIME : CKT_ECOMPILE, rc == 127 ? "jit: the host C compiler '%s' was not found" : "jit: cpu compile failed:\n%s",
                                   rc == 127 ? cc : (b->log ? b->log : ""));
    }
    if (!st) st = read_file(so, &b->code, &b->code_size, err);
    unlink(src);
    unlink(so);
    rmdir(dir);
    if (!st) {
        snprintf(b->compiler, sizeof b->compiler, "host C compiler (%s)", cc);
        b->res.shared_bytes = 0;
    }
    return st;
}

ckt_status ckt_compile(ckt_context *ctx, const ckt_compile_request *req, ckt_binary **out, ckt_error *err)
{
    return ckt_compile_ex(ctx, req, 0, out, err);
}

ckt_status ckt_compile_ex(ckt_context *ctx, const ckt_compile_request *req, unsigned flags, ckt_binary **out, ckt_error *err)
{
    (void)ctx;
    if (!req || !out) return ckt_fail(err, CKT_EINVAL, "compile: NULL argument");
    if (!req->target || !*req->target) return ckt_fail(err, CKT_EINVAL, "compile: target is empty");
    if (!req->source || !*req->source) return ckt_fail(err, CKT_EINVAL, "compile: source is empty");
    if (!req->kernel_name || !*req->kernel_name) return ckt_fail(err, CKT_EINVAL, "compile: kernel_name is empty");
    if (req->noptions < 0 || (req->noptions > 0 && !req->options)) return ckt_fail(err, CKT_EINVAL, "compile: bad options");
    ckt_binary *b = ckt_binary_new(req->target);
    if (!b) return ckt_fail(err, CKT_ENOMEM, "compile: out of memory");
    double t0 = ckt_jit_now_ms();
    ckt_status st;
    const char *t = req->target;
    if (!strcmp(t, "cpu") || !strncmp(t, "cpu:", 4)) st = compile_cpu(req, b, err);
    else if (!strncmp(t, "gfx", 3)) st = ckt_jit_hip(req, b, err);
    else if (!strncmp(t, "sm_", 3)) st = ckt_jit_cuda(req, b, err);
    else st = ckt_fail(err, CKT_EUNSUPPORTED, "compile: unknown target '%s' (gfx90a, gfx908, sm_80, sm_90, cpu, cpu:<gpu>)", t);
    b->ms = ckt_jit_now_ms() - t0;
    if (st) { ckt_binary_free(b); return st; }
    snprintf(b->kernel_name, sizeof b->kernel_name, "%s", req->kernel_name);
    b->compile_only = (flags & CKT_COMPILE_ONLY) != 0;
    *out = b;
    return CKT_OK;
}
