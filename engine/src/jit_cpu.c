/* The CPU target: the host C compiler ($CC, else cc) builds the kernel's C source into a
 * shared object (cc -O2 -std=c17 -shared -fPIC). Run through fork/exec with an argument
 * vector: no shell, so nothing in the options or paths is ever interpreted. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jit_internal.h"

static const char *host_cc(void)
{
    const char *cc = getenv("CC");
    return cc && *cc ? cc : "cc";
}

static ckt_status cpu_identity(char *out, size_t cap, ckt_error *err)
{
    /* `cc --version` costs a process start: ask once per compiler name */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char cached_cc[256], cached_version[256];
    const char *cc = host_cc();
    pthread_mutex_lock(&lock);
    if (strcmp(cached_cc, cc) != 0) {
        char *argv[] = {(char *)cc, "--version", NULL}, *text = NULL;
        int rc = ckt_jit_run(argv, NULL, &text);
        if (rc != 0) {
            pthread_mutex_unlock(&lock);
            free(text);
            return ckt_fail(err, rc == 127 ? CKT_ERUNTIME : CKT_ECOMPILE,
                            "compile: the host C compiler '%s' %s", cc,
                            rc == 127 ? "was not found (install gcc or clang, or set CC)"
                                      : "does not answer --version");
        }
        size_t n = text ? strcspn(text, "\n") : 0;
        snprintf(cached_version, sizeof cached_version, "%.*s", (int)(n < 200 ? n : 200),
                 text ? text : "");
        snprintf(cached_cc, sizeof cached_cc, "%s", cc);
        free(text);
    }
    snprintf(out, cap, "cc %s: %s", cached_cc, cached_version);
    pthread_mutex_unlock(&lock);
    return CKT_OK;
}

static ckt_status cpu_compile(const ckt_compile_request *req, const ckt_target_record *t,
                              ckt_binary *b, ckt_error *err)
{
    (void)t; /* the host compiler builds every CPU target alike */
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/ckt-cpu-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return ckt_fail(err, CKT_EIO, "compile: cannot create a temporary directory %s: %s", dir,
                        strerror(errno));
    char src[4200], so[4200];
    snprintf(src, sizeof src, "%s/%s.c", dir, req->kernel_name);
    snprintf(so, sizeof so, "%s/%s.so", dir, req->kernel_name);
    ckt_status st = ckt_jit_write_file(src, req->source, strlen(req->source), err);
    const char *cc = host_cc();
    char *argv[48];
    int k = 0;
    argv[k++] = (char *)cc;
    argv[k++] = "-O2";
    argv[k++] = "-std=c17";
    argv[k++] = "-shared";
    argv[k++] = "-fPIC";
    for (int i = 0; i < req->noptions; i++) argv[k++] = (char *)req->options[i]; /* at most 32 */
    argv[k++] = "-o";
    argv[k++] = so;
    argv[k++] = src;
    argv[k++] = "-lm";
    argv[k] = NULL;
    if (!st) {
        int rc = ckt_jit_run(argv, NULL, &b->log);
        if (rc == 127)
            st = ckt_fail(
                err, CKT_ERUNTIME,
                "compile: the host C compiler '%s' was not found (install gcc or clang, or set CC)",
                cc);
        else if (rc != 0)
            st = ckt_fail(err, CKT_ECOMPILE, "compile: cpu compile failed for '%s':\n%s",
                          req->kernel_name, b->log ? b->log : "(no output)");
    }
    if (!st) st = ckt_jit_read_file(so, &b->code, &b->code_size, err);
    unlink(src);
    unlink(so);
    rmdir(dir);
    if (st) return st;
    snprintf(b->compiler, sizeof b->compiler, "host C compiler (%s)", cc);
    b->res.shared_bytes = 0;
    const char *disasm[] = {"objdump", "-d"};
    ckt_binary_set_disasm(b, ".so", 2, disasm);
    return CKT_OK;
}

const ckt_jit_backend ckt_jit_backend_cpu = {cpu_compile, cpu_identity};
