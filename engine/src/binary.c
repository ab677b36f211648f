/* The compiled binary object and what the compilers share: timing, running a tool, files, the
 * disassembly on first request. The compilers (jit_cpu.c, jit_hip.c, jit_cuda.c) and the dispatch
 * (jit.c) build on it; it calls none of them. */
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
#include "strbuf.h"

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
int64_t ckt_binary_dynamic_shared_bytes(const ckt_binary *b) { return b ? b->dynamic_shared : -1; }
int64_t ckt_binary_total_shared_bytes(const ckt_binary *b)
{
    if (!b || b->res.shared_bytes < 0 || b->dynamic_shared < 0) return -1;
    return b->res.shared_bytes + b->dynamic_shared;
}
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
const char *ckt_binary_cache_status(const ckt_binary *b)
{
    return !b                   ? "off: no binary"
           : b->cache_status[0] ? b->cache_status
                                : "off: not compiled by ckt_compile";
}
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
    ckt_sb output = {0};
    for (;;) {
        long n = ckt_sb_read_fd(&output, pipefd[0]);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
    }
    close(pipefd[0]);
    char *buf = ckt_sb_take(&output);
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
