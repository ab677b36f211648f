/* The CPU target: the host C compiler ($CC, else cc) builds the kernel's C source into a
 * shared object (cc -O2 -std=c17 -shared -fPIC). Run through fork/exec with an argument
 * vector: no shell, so nothing in the options or paths is ever interpreted. Under a compile
 * deadline (ckt_compile_set_deadline) the compiler leads a process group of its own and the
 * whole group (driver, cc1, as, ld) is killed when the deadline passes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jit_internal.h"
#include "strbuf.h"

static const char *host_cc(void)
{
    const char *cc = getenv("CC");
    return cc && *cc ? cc : "cc";
}

/* cc as the shell would find it: itself when it names a path, else the first executable of
 * that name along $PATH; its symbolic links resolved. 0 when found. */
static int find_program(const char *cc, char *out)
{
    char path[PATH_MAX];
    if (strchr(cc, '/')) return realpath(cc, out) && access(out, X_OK) == 0 ? 0 : -1;
    const char *dirs = getenv("PATH");
    for (const char *d = dirs && *dirs ? dirs : "/usr/local/bin:/usr/bin:/bin"; *d;) {
        size_t n = strcspn(d, ":");
        snprintf(path, sizeof path, "%.*s/%s", (int)n, n ? d : ".", cc);
        if (access(path, X_OK) == 0 && realpath(path, out)) return 0;
        d += n + (d[n] == ':');
    }
    return -1;
}

/* The compiler's identity for the cache key: the program $CC / cc resolves to, its size and its
 * modification time. Cheap (a stat, no process: a cache hit in a fresh process must not wait for
 * `cc --version`) and it changes whenever the compiler binary does (a new version, another
 * compiler behind the same name). */
static ckt_status cpu_identity(char *out, size_t cap, ckt_error *err)
{
    const char *cc = host_cc();
    char real[PATH_MAX];
    struct stat st;
    if (find_program(cc, real) != 0 || stat(real, &st) != 0)
        return ckt_fail(err, CKT_ERUNTIME,
                        "compile: the host C compiler '%s' was not found (install gcc or clang, "
                        "or set CC)",
                        cc);
    snprintf(out, cap, "cc %.60s = %.120s (%lld bytes, modified %lld.%09ld)", cc, real,
             (long long)st.st_size, (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    return CKT_OK;
}

extern char **environ;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { RUN_KILLED = -2 };

/* Run the compiler (no shell) with TMPDIR=dir, so that the temporary files of a compiler killed
 * midway are in dir, which the caller removes; stdout and stderr into *out. deadline > 0: the
 * child leads a process group, killed whole (SIGKILL) when the deadline passes. Returns the exit
 * status, -1 when it could not run, RUN_KILLED when it was killed at the deadline. */
static int run_compiler(char *const argv[], const char *dir, double deadline, char **out)
{
    *out = NULL;
    size_t nenv = 0;
    while (environ && environ[nenv]) nenv++;
    char **envp = malloc((nenv + 2) * sizeof *envp);
    char *tmpdir = malloc(strlen(dir) + 8);
    if (!envp || !tmpdir) {
        free(envp);
        free(tmpdir);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], "TMPDIR=", 7) != 0) envp[k++] = environ[i];
    sprintf(tmpdir, "TMPDIR=%s", dir);
    envp[k++] = tmpdir;
    envp[k] = NULL;
    int pipefd[2];
    /* close-on-exec: compiles on other threads fork too (see ckt_jit_run) */
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        free(envp);
        free(tmpdir);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        if (deadline > 0) setpgid(0, 0);
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        execvpe(argv[0], argv, envp);
        _exit(127);
    }
    close(pipefd[1]);
    free(envp);
    free(tmpdir);
    if (pid < 0) {
        close(pipefd[0]);
        return -1;
    }
    if (deadline > 0) setpgid(pid, pid); /* also here: the group exists before any kill */
    ckt_sb output = {0};
    int killed = 0;
    for (;;) {
        int wait_ms = -1;
        if (deadline > 0) {
            double left = deadline - now_s();
            if (left <= 0) {
                kill(-pid, SIGKILL);
                killed = 1;
                break;
            }
            wait_ms = left * 1000 + 1 > INT_MAX ? INT_MAX : (int)(left * 1000) + 1;
        }
        struct pollfd pfd = {pipefd[0], POLLIN, 0};
        int r = poll(&pfd, 1, wait_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) continue; /* the deadline check above */
        long n = ckt_sb_read_fd(&output, pipefd[0]);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
    }
    close(pipefd[0]);
    char *buf = ckt_sb_take(&output);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    *out = buf;
    if (killed) return RUN_KILLED;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* dir and the files in it (the compiler's temporaries included; no subdirectories) */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4400];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

static ckt_status cpu_compile(const ckt_compile_request *req, unsigned flags,
                              const ckt_target_record *t, ckt_binary *b, ckt_error *err)
{
    (void)t;     /* the host compiler builds every CPU target alike */
    (void)flags; /* CKT_COMPILE_LIGHT: the C compiler's -O level is the same for every kernel */
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
    double deadline = ckt_compile_deadline();
    if (!st) {
        int rc = run_compiler(argv, dir, deadline, &b->log);
        if (rc == RUN_KILLED)
            st = ckt_fail(err, CKT_ELIMIT,
                          "compile: the time limit ran out while the host C compiler built '%s' "
                          "(the compiler was stopped)",
                          req->kernel_name);
        else if (rc == 127)
            st = ckt_fail(
                err, CKT_ERUNTIME,
                "compile: the host C compiler '%s' was not found (install gcc or clang, or set CC)",
                cc);
        else if (rc != 0)
            st = ckt_fail(err, CKT_ECOMPILE, "compile: cpu compile failed for '%s':\n%s",
                          req->kernel_name, b->log ? b->log : "(no output)");
    }
    if (!st) st = ckt_jit_read_file(so, &b->code, &b->code_size, err);
    remove_dir(dir);
    if (st) return st;
    snprintf(b->compiler, sizeof b->compiler, "host C compiler (%s)", cc);
    b->res.shared_bytes = 0;
    const char *disasm[] = {"objdump", "-d"};
    ckt_binary_set_disasm(b, ".so", 2, disasm);
    return CKT_OK;
}

const ckt_jit_backend ckt_jit_backend_cpu = {cpu_compile, cpu_identity};
