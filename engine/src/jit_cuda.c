/* NVRTC, loaded at run time (libnvrtc.so.13/.12, also from /usr/local/cuda/lib64). Produces a
 * cubin for sm_80 / sm_90; ptxas' verbose report in the program log gives the resources. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dynlib.h"
#include "jit_internal.h"

static ckt_rtc N;

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
    return ckt_rtc_bind(
        &N, lib, "nvrtc", "CUBIN", "NVRTC", " (too old?)",
        "NVRTC not found (libnvrtc.so.13/.12, also in /usr/local/cuda/lib64); install the CUDA "
        "toolkit, or use the cpu target (e.g. cpu:sm_90) to emulate",
        err);
}

/* The kernel's resources: the cubin's (registers, static shared memory, stack frame: they
 * cannot be missing from the code), with the spills from ptxas' report of this entry in the log
 * (tests/unit/test_jit_resources.c checks the two agree). Where the log has no report for this
 * entry, the spills are unknown (-1) unless the frame is 0. */
static void resources_of(ckt_binary *b, const char *arch)
{
    ckt_resources from_code, from_log;
    ckt_error e;
    int code_ok =
        ckt_cubin_resources(b->code, b->code_size, b->kernel_name, arch, &from_code, &e) == CKT_OK;
    int log_ok = b->log && ckt_ptxas_log_resources(b->log, b->kernel_name, &from_log, &e) == CKT_OK;
    if (code_ok) {
        b->res = from_code;
        if (log_ok) {
            b->res.spill_stores = from_log.spill_stores;
            b->res.spill_loads = from_log.spill_loads;
        }
    } else if (log_ok)
        b->res = from_log;
}

static ckt_status cuda_compile(const ckt_compile_request *req, unsigned flags,
                               const ckt_target_record *t, ckt_binary *b, ckt_error *err)
{
    const char *arch = t->arch;
    if (!t->compiler_known)
        return ckt_fail(
            err, CKT_EUNSUPPORTED,
            "compile: target '%s' is not supported (sm_80, sm_86, sm_89, sm_90, sm_90a)", arch);
    ckt_status st = ckt_rtc_load(load_locked, err);
    if (st) return st;
    char archopt[32];
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    const char *opts[40] = {archopt, "--std=c++17", "-default-device", "--ptxas-options=-v"};
    int n = 4;
    /* a kernel that moves data: NVRTC 12.8's cheaper optimization level (the library transposes
     * 86 -> 68 and 128 -> 87 ms here, docs/jit.md); a GEMM is left alone (sm_90a's compiled 3x
     * slower with it), and so are the row kernels (layernorm spilled) */
    int major = 0, minor = 0; /* NVRTC's version (0.0: it does not say) */
    if (!N.version || N.version(&major, &minor) != 0) major = minor = 0;
    int version = 100 * major + minor;
    bool light = (flags & CKT_COMPILE_LIGHT) && version >= 1208;
    if (light) opts[n++] = "--Ofast-compile=min";
    /* NVRTC 12.9+ keeps its own cache of PTX and cubins in the driver's compute cache (where a
     * driver is installed), keyed by the source and options: with ckt's cache off a compile is
     * meant to compile, so NVRTC's is off too. (Left on, the GPU host answered repeated sources in
     * 16-34 ms and NVRTC's --time rows read 0 ms for ptxas: docs/jit.md.) */
    bool no_cache = (flags & CKT_COMPILE_NO_CACHE) && version >= 1209;
    if (no_cache) opts[n++] = "--no-cache";
    /* NVRTC 12.4+ can leave out the runtime API's declarations (textures, device-side launches,
     * cudaError_t...), which the generated source never uses: the front end 18 -> 12 ms a
     * kernel here (docs/jit.md) */
    if (version >= 1204) opts[n++] = "--minimal";
    for (int i = 0; i < req->noptions && n < 40; i++) opts[n++] = req->options[i];
    int rc = ckt_rtc_compile(&N, req->source, req->kernel_name, opts, n, b);
    if (rc == CKT_RTC_NO_PROGRAM)
        return ckt_fail(err, CKT_ERUNTIME, "compile: nvrtcCreateProgram failed");
    char errors[CKT_ERROR_MSG_CAP];
    if (rc != 0 || !b->code)
        return ckt_fail(err, CKT_ECOMPILE, "compile: NVRTC failed for %s:\n%s", arch,
                        ckt_rtc_failure(b->log, errors, sizeof errors));
    snprintf(b->compiler, sizeof b->compiler, "NVRTC %d.%d (%s)%s%s", major, minor, N.name,
             light ? ", --Ofast-compile=min" : "", no_cache ? ", --no-cache" : "");
    resources_of(b, arch);
    const char *disasm[] = {access("/usr/local/cuda/bin/cuobjdump", X_OK) == 0
                                ? "/usr/local/cuda/bin/cuobjdump"
                                : "cuobjdump",
                            "-sass"};
    ckt_binary_set_disasm(b, ".cubin", 2, disasm);
    return CKT_OK;
}

/* What goes into the compile cache key: the library and its version. */
static ckt_status cuda_identity(char *out, size_t cap, ckt_error *err)
{
    return ckt_rtc_identity(load_locked, &N, "NVRTC", out, cap, err);
}

const ckt_jit_backend ckt_jit_backend_cuda = {cuda_compile, cuda_identity};
