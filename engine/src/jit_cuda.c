/* NVRTC, loaded at run time (libnvrtc.so.13/.12, also from /usr/local/cuda/lib64). Produces a
 * cubin for sm_80 / sm_90; ptxas' verbose report in the program log gives the resources. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dynlib.h"
#include "jit_internal.h"

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

static struct {
    void *lib;
    const char *name;
    nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                          const char *const *);
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*log_size)(nvrtcProgram, size_t *);
    nvrtcResult (*log)(nvrtcProgram, char *);
    nvrtcResult (*cubin_size)(nvrtcProgram, size_t *);
    nvrtcResult (*cubin)(nvrtcProgram, char *);
    nvrtcResult (*destroy)(nvrtcProgram *);
    nvrtcResult (*version)(int *, int *);
} N;

static ckt_status load_locked(ckt_error *err)
{
    if (N.lib) return CKT_OK;
    static const char *const names[] = {"libnvrtc.so",
                                        "libnvrtc.so.13",
                                        "libnvrtc.so.12",
                                        "/usr/local/cuda/lib64/libnvrtc.so",
                                        "/usr/local/cuda/lib64/libnvrtc.so.13",
                                        "/usr/local/cuda/lib64/libnvrtc.so.12",
                                        NULL};
    void *lib = ckt_dynlib_open(names, NULL, &N.name);
    if (!lib)
        return ckt_fail(
            err, CKT_ERUNTIME,
            "NVRTC not found (libnvrtc.so.13/.12, also in /usr/local/cuda/lib64); install the CUDA "
            "toolkit, or use the cpu target (e.g. cpu:sm_90) to emulate");
    const ckt_dynsym syms[] = {
        {(void **)&N.create, "nvrtcCreateProgram", NULL, false},
        {(void **)&N.compile, "nvrtcCompileProgram", NULL, false},
        {(void **)&N.log_size, "nvrtcGetProgramLogSize", NULL, false},
        {(void **)&N.log, "nvrtcGetProgramLog", NULL, false},
        {(void **)&N.cubin_size, "nvrtcGetCUBINSize", NULL, false},
        {(void **)&N.cubin, "nvrtcGetCUBIN", NULL, false},
        {(void **)&N.destroy, "nvrtcDestroyProgram", NULL, false},
        {(void **)&N.version, "nvrtcVersion", NULL, true},
    };
    if (ckt_dynlib_bind(lib, syms, sizeof syms / sizeof *syms))
        return ckt_fail(err, CKT_ERUNTIME, "NVRTC in %s lacks the nvrtc* entry points (too old?)",
                        N.name);
    N.lib = lib;
    return CKT_OK;
}

/* once per process, also when compiles run on several threads (ckt/autotune.h) */
static ckt_status load(ckt_error *err)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    ckt_status s = load_locked(err);
    pthread_mutex_unlock(&lock);
    return s;
}

/* "ptxas info    : Used 24 registers, used 0 barriers, 4096 bytes smem, ..." and
 * "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" */
static void parse_ptxas(const char *log, ckt_resources *r)
{
    const char *p;
    if ((p = strstr(log, "Used ")) &&
        sscanf(p, "Used %lld registers", (long long *)&r->registers) != 1)
        r->registers = -1;
    if ((p = strstr(log, " bytes smem"))) {
        const char *q = p;
        while (q > log && q[-1] >= '0' && q[-1] <= '9') q--;
        r->shared_bytes = strtoll(q, NULL, 10);
    } else if (strstr(log, "Used ")) {
        r->shared_bytes = 0;
    }
    if ((p = strstr(log, "bytes spill stores"))) {
        const char *q = p - 1;
        while (q > log && q[-1] >= '0' && q[-1] <= '9') q--;
        r->spill_stores = strtoll(q, NULL, 10);
    }
    if ((p = strstr(log, "bytes spill loads"))) {
        const char *q = p - 1;
        while (q > log && q[-1] >= '0' && q[-1] <= '9') q--;
        r->spill_loads = strtoll(q, NULL, 10);
    }
    if ((p = strstr(log, "bytes stack frame"))) {
        const char *q = p - 1;
        while (q > log && q[-1] >= '0' && q[-1] <= '9') q--;
        r->scratch_bytes = strtoll(q, NULL, 10);
    }
}

ckt_status ckt_jit_cuda(const ckt_compile_request *req, const ckt_target_record *t, ckt_binary *b,
                        ckt_error *err)
{
    const char *arch = t->arch;
    if (!t->compiler_known)
        return ckt_fail(
            err, CKT_EUNSUPPORTED,
            "compile: target '%s' is not supported (sm_80, sm_86, sm_89, sm_90, sm_90a)", arch);
    ckt_status st = load(err);
    if (st) return st;
    nvrtcProgram prog;
    if (N.create(&prog, req->source, req->kernel_name, 0, NULL, NULL) != 0)
        return ckt_fail(err, CKT_ERUNTIME, "compile: nvrtcCreateProgram failed");
    char archopt[32];
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    const char *opts[40] = {archopt, "--std=c++17", "-default-device", "--ptxas-options=-v"};
    int n = 4;
    for (int i = 0; i < req->noptions && n < 40; i++) opts[n++] = req->options[i];
    int rc = N.compile(prog, n, opts);
    size_t ls = 0;
    if (N.log_size(prog, &ls) == 0 && ls > 1 && (b->log = malloc(ls + 1))) {
        N.log(prog, b->log);
        b->log[ls] = 0;
    }
    size_t cs = 0;
    if (rc == 0 && N.cubin_size(prog, &cs) == 0 && cs > 0 && (b->code = malloc(cs))) {
        N.cubin(prog, (char *)b->code);
        b->code_size = cs;
    }
    N.destroy(&prog);
    if (rc != 0 || !b->code)
        return ckt_fail(err, CKT_ECOMPILE, "compile: NVRTC failed for %s:\n%s", arch,
                        b->log ? b->log : "(no log)");
    snprintf(b->compiler, sizeof b->compiler, "NVRTC (%s)", N.name);
    if (b->log) parse_ptxas(b->log, &b->res);
    snprintf(b->disasm_cmd[0], sizeof b->disasm_cmd[0], "%s",
             access("/usr/local/cuda/bin/cuobjdump", X_OK) == 0 ? "/usr/local/cuda/bin/cuobjdump"
                                                                : "cuobjdump");
    snprintf(b->disasm_cmd[1], sizeof b->disasm_cmd[1], "-sass");
    b->disasm_suffix = ".cubin";
    return CKT_OK;
}

/* What goes into the compile cache key: the library and its version. */
ckt_status ckt_jit_cuda_identity(char *out, size_t cap, ckt_error *err)
{
    ckt_status st = load(err);
    if (st) return st;
    int major = -1, minor = -1;
    if (N.version) N.version(&major, &minor);
    snprintf(out, cap, "NVRTC %s %d.%d", N.name, major, minor);
    return CKT_OK;
}
