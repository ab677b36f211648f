/* hipRTC, loaded at run time. Debian 12's ROCm 5.2 keeps the hiprtc* symbols in libamdhip64.so.5;
 * newer ROCm moves them to libhiprtc.so. That hipRTC crashes inside comgr for architectures it
 * does not know (gfx940/gfx942/gfx1100): those are refused up front unless a probe compile in a
 * forked child succeeds. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jit_internal.h"

typedef int hiprtcResult;
typedef struct _hiprtcProgram *hiprtcProgram;

static struct {
    void *lib;
    const char *name;
    hiprtcResult (*create)(hiprtcProgram *, const char *, const char *, int, const char **, const char **);
    hiprtcResult (*compile)(hiprtcProgram, int, const char **);
    hiprtcResult (*log_size)(hiprtcProgram, size_t *);
    hiprtcResult (*log)(hiprtcProgram, char *);
    hiprtcResult (*code_size)(hiprtcProgram, size_t *);
    hiprtcResult (*code)(hiprtcProgram, char *);
    hiprtcResult (*destroy)(hiprtcProgram *);
    hiprtcResult (*version)(int *, int *); /* optional */
} H;

static ckt_status load(ckt_error *err)
{
    if (H.lib) return CKT_OK;
    static const char *const names[] = {"libhiprtc.so", "libhiprtc.so.6", "libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so", NULL};
    for (const char *const *n = names; *n && !H.lib; n++) {
        void *lib = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
        if (lib && dlsym(lib, "hiprtcCreateProgram")) { H.lib = lib; H.name = *n; }
        else if (lib) dlclose(lib);
    }
    if (!H.lib)
        return ckt_fail(err, CKT_ERUNTIME, "hipRTC not found (tried libhiprtc.so, libamdhip64.so.5/.6; Debian: apt-get install libamdhip64-5); use the cpu target (e.g. cpu:gfx90a) to emulate");
    *(void **)&H.create = dlsym(H.lib, "hiprtcCreateProgram");
    *(void **)&H.compile = dlsym(H.lib, "hiprtcCompileProgram");
    *(void **)&H.log_size = dlsym(H.lib, "hiprtcGetProgramLogSize");
    *(void **)&H.log = dlsym(H.lib, "hiprtcGetProgramLog");
    *(void **)&H.code_size = dlsym(H.lib, "hiprtcGetCodeSize");
    *(void **)&H.code = dlsym(H.lib, "hiprtcGetCode");
    *(void **)&H.destroy = dlsym(H.lib, "hiprtcDestroyProgram");
    *(void **)&H.version = dlsym(H.lib, "hiprtcVersion");
    if (!H.create || !H.compile || !H.log_size || !H.log || !H.code_size || !H.code || !H.destroy) {
        dlclose(H.lib);
        H.lib = NULL;
        return ckt_fail(err, CKT_ERUNTIME, "hipRTC in %s lacks the hiprtc* entry points", H.name);
    }
    return CKT_OK;
}

static int compile_into(const char *arch, const char *src, const char *name, const char *const *extra, int nextra, ckt_binary *b)
{
    hiprtcProgram prog;
    if (H.create(&prog, src, name, 0, NULL, NULL) != 0) return -1;
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--offload-arch=%s", arch);
    const char *opts[40] = {archopt, "-O3"};
    int n = 2;
    for (int i = 0; i < nextra && n < 40; i++) opts[n++] = extra[i];
    int rc = H.compile(prog, n, opts);
    size_t ls = 0;
    /* an empty log may be reported as size 0 or 1 */
    if (b && H.log_size(prog, &ls) == 0 && ls > 1 && (b->log = malloc(ls + 1))) {
        H.log(prog, b->log);
        b->log[ls] = 0;
    }
    size_t cs = 0;
    if (rc == 0 && b && H.code_size(prog, &cs) == 0 && cs > 0 && (b->code = malloc(cs))) {
        H.code(prog, (char *)b->code);
        b->code_size = cs;
    }
    H.destroy(&prog);
    return rc;
}

/* A tiny compile in a forked child: a crash inside comgr kills the child, not us. */
static int probe(const char *arch)
{
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        int fd = open("/dev/null", 1);
        if (fd >= 0) { dup2(fd, 2); dup2(fd, 1); }
        _exit(compile_into(arch, "extern \"C\" __global__ void probe(int *p) { p[threadIdx.x] = 1; }", "probe.hip", NULL, 0, NULL) == 0 ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

ckt_status ckt_jit_hip(const ckt_compile_request *req, ckt_binary *b, ckt_error *err)
{
    ckt_status st = load(err);
    if (st) return st;
    const char *arch = req->target;
    static const char *const known[] = {"gfx908", "gfx90a", NULL};
    int ok = 0;
    for (const char *const *k = known; *k; k++) ok |= !strcmp(*k, arch);
    for (const char *p = arch; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == ':' || *p == '-' || *p == '+'))
            return ckt_fail(err, CKT_EINVAL, "compile: target '%s' is not an architecture name", arch);
    if (!ok && !probe(arch))
        return ckt_fail(err, CKT_EUNSUPPORTED, "compile: the installed hipRTC (%s) cannot compile for %s (a probe compile failed or crashed); supported here: gfx908, gfx90a", H.name, arch);
    if (compile_into(arch, req->source, req->kernel_name, req->options, req->noptions, b) != 0 || !b->code)
        return ckt_fail(err, CKT_ECOMPILE, "compile: hipRTC failed for %s:\n%s", arch, b->log ? b->log : "(no log)");
    snprintf(b->compiler, sizeof b->compiler, "hipRTC (%s)", H.name);
    ckt_error e2;
    if (ckt_code_object_resources(b->code, b->code_size, &b->res, &e2) != CKT_OK) {
        /* resources are informative; keep the code object */
    }
    char mcpu[64];
    snprintf(mcpu, sizeof mcpu, "--mcpu=%s", arch);
    snprintf(b->disasm_cmd[0], sizeof b->disasm_cmd[0], "llvm-objdump-14");
    snprintf(b->disasm_cmd[1], sizeof b->disasm_cmd[1], "-d");
    snprintf(b->disasm_cmd[2], sizeof b->disasm_cmd[2], "%s", mcpu);
    b->disasm_suffix = ".co";
    return CKT_OK;
}

/* What goes into the compile cache key: the library and its version. */
ckt_status ckt_jit_hip_identity(char *out, size_t cap, ckt_error *err)
{
    ckt_status st = load(err);
    if (st) return st;
    int major = -1, minor = -1;
    if (H.version) H.version(&major, &minor);
    snprintf(out, cap, "hipRTC %s %d.%d", H.name, major, minor);
    return CKT_OK;
}
