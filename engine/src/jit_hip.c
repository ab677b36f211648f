/* hipRTC, loaded at run time. Debian 12's ROCm 5.2 keeps the hiprtc* symbols in libamdhip64.so.5;
 * newer ROCm moves them to libhiprtc.so. That hipRTC crashes inside comgr for architectures it
 * does not know (gfx940/gfx942/gfx1100): those are refused up front unless a probe compile in a
 * forked child succeeds.
 *
 * hipRTC prepends its runtime header (hiprtc_runtime.h, 360 KB of preprocessed HIP headers) to
 * every program, and parsing it is ~80 of the ~95 ms an empty kernel takes (docs/jit.md). No
 * option turns it off. Sources built on ckt's HIP prelude do not need it (the prelude defines the
 * few things they use, as the header does), so for them ckt runs hipRTC's own comgr pipeline
 * itself, with hipRTC's options, minus that header: the same code object text and metadata.
 * Only where that pipeline is the one checked here (hipRTC 5.x on comgr 2.x); anything else, a
 * failure on that path, or CKT_HIP_COMGR=0 in the environment takes hipRTC. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ckt/emit.h"
#include "dynlib.h"
#include "jit_internal.h"

/* one HIP compile at a time: hipRTC serializes its own compiles (LLVM state), and the direct comgr
 * path must not run beside them */
static pthread_mutex_t hip_lock = PTHREAD_MUTEX_INITIALIZER;

static ckt_rtc H;

static ckt_status load_locked(ckt_error *err)
{
    if (H.lib) return CKT_OK;
    /* hipRTC: its own library (ROCm 6), else inside the HIP runtime (ROCm 5), the one runtime_hip.c
     * opens */
    static const char *const names[] = {"libhiprtc.so", "libhiprtc.so.6", NULL};
    void *lib = ckt_dynlib_open(names, "hiprtcCreateProgram", &H.name);
    if (!lib) lib = ckt_dynlib_open(ckt_dynlib_hip_names, "hiprtcCreateProgram", &H.name);
    return ckt_rtc_bind(
        &H, lib, "hiprtc", "Code", "hipRTC", "",
        "hipRTC not found (tried libhiprtc.so, libamdhip64.so.5/.6; Debian: apt-get install "
        "libamdhip64-5); use the cpu target (e.g. cpu:gfx90a) to emulate",
        err);
}

static int compile_into(const char *arch, const char *src, const char *name,
                        const char *const *extra, int nextra, ckt_binary *b)
{
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--offload-arch=%s", arch);
    const char *opts[40] = {archopt, "-O3"};
    int n = 2;
    for (int i = 0; i < nextra && n < 40; i++) opts[n++] = extra[i];
    return ckt_rtc_compile(&H, src, name, opts, n, b);
}

/* ---- comgr, the library hipRTC compiles with, called directly (see the top of the file) ---- */

typedef struct {
    uint64_t handle;
} cg_data;
typedef struct {
    uint64_t handle;
} cg_set;
typedef struct {
    uint64_t handle;
} cg_info;
enum { CG_SOURCE = 1, CG_LOG = 5, CG_BC = 6, CG_RELOCATABLE = 7, CG_EXECUTABLE = 8 };
enum { CG_LANG_HIP = 4 };
enum {
    CG_COMPILE_SOURCE_TO_BC = 2,
    CG_ADD_DEVICE_LIBRARIES = 3,
    CG_LINK_BC_TO_BC = 4,
    CG_CODEGEN_BC_TO_RELOCATABLE = 6,
    CG_LINK_RELOCATABLE_TO_EXECUTABLE = 9
};

static struct {
    int tried, usable;
    void *lib;
    size_t major, minor;
    int hip_major, hip_minor, hip_patch; /* the HIP release, for hipRTC's version options */
    int (*create_data)(int, cg_data *);
    int (*release_data)(cg_data);
    int (*set_data)(cg_data, size_t, const char *);
    int (*set_data_name)(cg_data, const char *);
    int (*get_data)(cg_data, size_t *, char *);
    int (*create_set)(cg_set *);
    int (*destroy_set)(cg_set);
    int (*set_add)(cg_set, cg_data);
    int (*count)(cg_set, int, size_t *);
    int (*get)(cg_set, int, size_t, cg_data *);
    int (*create_info)(cg_info *);
    int (*destroy_info)(cg_info);
    int (*set_isa)(cg_info, const char *);
    int (*set_language)(cg_info, int);
    int (*set_option_list)(cg_info, const char **, size_t);
    int (*set_logging)(cg_info, bool);
    int (*do_action)(int, cg_info, cg_set, cg_set);
    void (*version)(size_t *, size_t *);
} G;

/* comgr 2.x beside the hipRTC of ROCm <= 5.2 (whose pipeline compile_comgr repeats), unless
 * CKT_HIP_COMGR=0. After load(). */
static int comgr_usable(void)
{
    if (G.tried) return G.usable;
    G.tried = 1;
    const char *env = getenv("CKT_HIP_COMGR");
    if (env && !strcmp(env, "0")) return 0;
    /* hiprtcVersion says 9.0 here; the HIP runtime beside it knows the release
     * (50221153: 5.2.21153). From ROCm 5.3 hipRTC is its own library without that entry point:
     * hipRTC's pipeline then. */
    int (*runtime_version)(int *) = NULL;
    *(void **)&runtime_version = dlsym(H.lib, "hipRuntimeGetVersion");
    int v = -1;
    if (!runtime_version || runtime_version(&v) != 0 || v / 10000000 != 5) return 0;
    G.hip_major = v / 10000000, G.hip_minor = v / 100000 % 100, G.hip_patch = v % 100000;
    void *lib = dlopen("libamd_comgr.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 0;
    struct {
        void *p;
        const char *name;
    } f[] = {
        {&G.create_data, "amd_comgr_create_data"},
        {&G.release_data, "amd_comgr_release_data"},
        {&G.set_data, "amd_comgr_set_data"},
        {&G.set_data_name, "amd_comgr_set_data_name"},
        {&G.get_data, "amd_comgr_get_data"},
        {&G.create_set, "amd_comgr_create_data_set"},
        {&G.destroy_set, "amd_comgr_destroy_data_set"},
        {&G.set_add, "amd_comgr_data_set_add"},
        {&G.count, "amd_comgr_action_data_count"},
        {&G.get, "amd_comgr_action_data_get_data"},
        {&G.create_info, "amd_comgr_create_action_info"},
        {&G.destroy_info, "amd_comgr_destroy_action_info"},
        {&G.set_isa, "amd_comgr_action_info_set_isa_name"},
        {&G.set_language, "amd_comgr_action_info_set_language"},
        {&G.set_option_list, "amd_comgr_action_info_set_option_list"},
        {&G.set_logging, "amd_comgr_action_info_set_logging"},
        {&G.do_action, "amd_comgr_do_action"},
        {&G.version, "amd_comgr_get_version"},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!(*(void **)f[i].p = dlsym(lib, f[i].name))) {
            dlclose(lib);
            return 0;
        }
    G.version(&G.major, &G.minor);
    if (G.major != 2) {
        dlclose(lib);
        return 0;
    }
    G.lib = lib;
    return G.usable = 1;
}

/* Append the LOG entries of set to *log. */
static void comgr_logs(cg_set set, char **log)
{
    size_t n = 0;
    if (G.count(set, CG_LOG, &n)) return;
    for (size_t i = 0; i < n; i++) {
        cg_data d;
        if (G.get(set, CG_LOG, i, &d)) continue;
        size_t sz = 0;
        if (!G.get_data(d, &sz, NULL) && sz > 1) {
            size_t old = *log ? strlen(*log) : 0;
            char *nl = realloc(*log, old + sz + 1);
            if (nl && !G.get_data(d, &sz, nl + old))
                nl[old + sz] = 0;
            else if (nl)
                nl[old] = 0;
            if (nl) *log = nl;
        }
        G.release_data(d);
    }
}

/* A new data set holding one datum (kind, name, bytes); 0 on success. */
static int comgr_set_of(cg_set *set, int kind, const char *name, const char *bytes, size_t size)
{
    cg_data d;
    if (G.create_set(set)) return -1;
    if (G.create_data(kind, &d)) return -1;
    int bad = G.set_data(d, size, bytes) || G.set_data_name(d, name) || G.set_add(*set, d);
    G.release_data(d);
    return bad ? -1 : 0;
}

/* The bytes of the first datum of kind in set (malloc'd); 0 on success. */
static int comgr_take(cg_set set, int kind, char **bytes, size_t *size)
{
    cg_data d;
    if (G.get(set, kind, 0, &d)) return -1;
    size_t sz = 0;
    int bad =
        G.get_data(d, &sz, NULL) || !sz || !(*bytes = malloc(sz)) || G.get_data(d, &sz, *bytes);
    G.release_data(d);
    if (bad) return -1;
    *size = sz;
    return 0;
}

static int comgr_info(cg_info *info, const char *isa, int language, const char **opts, size_t nopts)
{
    if (G.create_info(info)) return -1;
    return (G.set_isa(*info, isa) || (language && G.set_language(*info, language)) ||
            G.set_option_list(*info, opts, nopts) || G.set_logging(*info, true))
               ? -1
               : 0;
}

/* hipRTC 5.x's pipeline (its comgr calls, its options) without `-include hiprtc_runtime.h`:
 * source -> bitcode, + device libraries, link, codegen, link the executable. 0 on success. */
static int compile_comgr(const char *arch, const char *src, const char *const *extra, int nextra,
                         ckt_binary *b)
{
    char isa[96], archopt[64];
    snprintf(isa, sizeof isa, "amdgcn-amd-amdhsa--%s", arch);
    snprintf(archopt, sizeof archopt, "--offload-arch=%s", arch);
    char ver[4][48];
    snprintf(ver[0], sizeof ver[0], "--hip-version=%d.%d.%d", G.hip_major, G.hip_minor,
             G.hip_patch);
    snprintf(ver[1], sizeof ver[1], "-DHIP_VERSION_MAJOR=%d", G.hip_major);
    snprintf(ver[2], sizeof ver[2], "-DHIP_VERSION_MINOR=%d", G.hip_minor);
    snprintf(ver[3], sizeof ver[3], "-DHIP_VERSION_PATCH=%d", G.hip_patch);
    /* hipRTC's options in its order, without "-include hiprtc_runtime.h" (after -D__HIPCC_RTC__) */
    const char *copts[48] = {
        "-O3",  "-mllvm",          "-amdgpu-prelink", "-mcumode",  ver[0],  ver[1], ver[2],
        ver[3], "-D__HIPCC_RTC__", "-std=c++14",      "-nogpuinc", archopt, "-O3"};
    size_t nc = 13;
    for (int i = 0; i < nextra && nc < 48; i++) copts[nc++] = extra[i];
    const char *eopts[] = {"-O3", "-mllvm", "-amdgpu-internalize-symbols", "-mcumode"};
    cg_set in = {0}, bc = {0}, bc2 = {0}, libs = {0}, linked = {0}, exe_in = {0}, reloc = {0},
           exe = {0};
    cg_info i1 = {0}, i2 = {0}, i3 = {0}, i4 = {0};
    char *bits = NULL, *log = NULL;
    size_t nbits = 0;
    int rc = -1;
    if (comgr_set_of(&in, CG_SOURCE, "CompileSource", src, strlen(src)) || G.create_set(&bc) ||
        G.create_set(&libs) || G.create_set(&linked) || G.create_set(&reloc) || G.create_set(&exe))
        goto done;
    if (comgr_info(&i1, isa, CG_LANG_HIP, copts, nc)) goto done;
    int st = G.do_action(CG_COMPILE_SOURCE_TO_BC, i1, in, bc);
    comgr_logs(bc, &log);
    if (st || comgr_take(bc, CG_BC, &bits, &nbits) ||
        comgr_set_of(&bc2, CG_BC, "linked", bits, nbits))
        goto done;
    free(bits), bits = NULL;
    if (comgr_info(&i2, isa, CG_LANG_HIP, NULL, 0)) goto done;
    st = G.do_action(CG_ADD_DEVICE_LIBRARIES, i2, bc2, libs);
    comgr_logs(libs, &log);
    if (st) goto done;
    st = G.do_action(CG_LINK_BC_TO_BC, i2, libs, linked);
    comgr_logs(linked, &log);
    if (st || comgr_take(linked, CG_BC, &bits, &nbits) ||
        comgr_set_of(&exe_in, CG_BC, "LLVMBitcode.bc", bits, nbits))
        goto done;
    free(bits), bits = NULL;
    if (comgr_info(&i3, isa, 0, eopts, sizeof eopts / sizeof eopts[0])) goto done;
    st = G.do_action(CG_CODEGEN_BC_TO_RELOCATABLE, i3, exe_in, reloc);
    comgr_logs(reloc, &log);
    if (st || comgr_info(&i4, isa, 0, NULL, 0)) goto done;
    st = G.do_action(CG_LINK_RELOCATABLE_TO_EXECUTABLE, i4, reloc, exe);
    comgr_logs(exe, &log);
    if (st || comgr_take(exe, CG_EXECUTABLE, &bits, &nbits)) goto done;
    b->code = (uint8_t *)bits, bits = NULL;
    b->code_size = nbits;
    b->log = log, log = NULL;
    rc = 0;
done:
    free(bits);
    free(log);
    cg_set sets[] = {in, bc, bc2, libs, linked, exe_in, reloc, exe};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (sets[i].handle) G.destroy_set(sets[i]);
    cg_info infos[] = {i1, i2, i3, i4};
    for (size_t i = 0; i < sizeof infos / sizeof infos[0]; i++)
        if (infos[i].handle) G.destroy_info(infos[i]);
    return rc;
}

/* A source built on ckt's HIP prelude declares everything it uses itself. */
static int uses_prelude(const char *src)
{
    const char *p = ckt_prelude_text(CKT_DIALECT_HIP);
    return p && *p && strstr(src, p) != NULL;
}

/* A tiny compile in a forked child: a crash inside comgr kills the child, not us. */
static int probe(const char *arch)
{
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        int fd = open("/dev/null", 1);
        if (fd >= 0) {
            dup2(fd, 2);
            dup2(fd, 1);
        }
        _exit(compile_into(arch,
                           "extern \"C\" __global__ void probe(int *p) { p[threadIdx.x] = 1; }",
                           "probe.hip", NULL, 0, NULL) == 0
                  ? 0
                  : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static ckt_status hip_compile(const ckt_compile_request *req, unsigned flags,
                              const ckt_target_record *t, ckt_binary *b, ckt_error *err)
{
    (void)flags; /* CKT_COMPILE_LIGHT: hipRTC has no cheaper level measured here */
    ckt_status st = ckt_rtc_load(load_locked, err);
    if (st) return st;
    const char *arch = t->arch; /* gfx<hex digits>: safe to pass to a probe compile */
    if (!t->compiler_known && !probe(arch))
        return ckt_fail(err, CKT_EUNSUPPORTED,
                        "compile: the installed hipRTC (%s) cannot compile for %s (a probe compile "
                        "failed or crashed); supported here: gfx908, gfx90a",
                        H.name, arch);
    pthread_mutex_lock(&hip_lock);
    int direct = uses_prelude(req->source) && comgr_usable() &&
                 compile_comgr(arch, req->source, req->options, req->noptions, b) == 0;
    if (direct)
        snprintf(b->compiler, sizeof b->compiler,
                 "comgr %zu.%zu (hipRTC's pipeline without its runtime header; %s)", G.major,
                 G.minor, H.name);
    else {
        free(b->log),
            b->log = NULL; /* a failed direct compile leaves nothing behind: hipRTC decides */
        free(b->code), b->code = NULL, b->code_size = 0;
        int rc = compile_into(arch, req->source, req->kernel_name, req->options, req->noptions, b);
        if (rc != 0 || !b->code) {
            pthread_mutex_unlock(&hip_lock);
            char errors[CKT_ERROR_MSG_CAP];
            return ckt_fail(err, CKT_ECOMPILE, "compile: hipRTC failed for %s:\n%s", arch,
                            ckt_rtc_failure(b->log, errors, sizeof errors));
        }
        snprintf(b->compiler, sizeof b->compiler, "hipRTC (%s)", H.name);
    }
    pthread_mutex_unlock(&hip_lock);
    ckt_error e2;
    if (ckt_code_object_resources(b->code, b->code_size, &b->res, &e2) != CKT_OK) {
        /* resources are informative; keep the code object */
    }
    char mcpu[64];
    snprintf(mcpu, sizeof mcpu, "--mcpu=%s", arch);
    const char *disasm[] = {"llvm-objdump-14", "-d", mcpu};
    ckt_binary_set_disasm(b, ".co", 3, disasm);
    return CKT_OK;
}

/* What goes into the compile cache key: the library and its version. */
static ckt_status hip_identity(char *out, size_t cap, ckt_error *err)
{
    ckt_status st = ckt_rtc_identity(load_locked, &H, "hipRTC", out, cap, err);
    if (st) return st;
    pthread_mutex_lock(&hip_lock);
    int direct = comgr_usable();
    pthread_mutex_unlock(&hip_lock);
    if (direct && cap > 0) {
        size_t n = strlen(out); /* out was truncated to cap - 1 characters at most */
        snprintf(out + n, cap - n, ", comgr %zu.%zu direct", G.major, G.minor);
    }
    return CKT_OK;
}

const ckt_jit_backend ckt_jit_backend_hip = {hip_compile, hip_identity};
