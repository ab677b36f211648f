/* The HIP runtime through the module API, loaded at run time (libamdhip64.so.5 on Debian's
 * ROCm 5.x, .so.6 on newer ROCm). The library can be present without a GPU (it also holds
 * hipRTC): then opening the device fails with a message naming the cpu target. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynlib.h"
#include "runtime_gpu.h"

typedef int hipError_t;
typedef void *hipModule_t, *hipFunction_t, *hipEvent_t, *hipStream_t;

static struct {
    void *lib;
    const char *libname;
    hipError_t (*init)(unsigned);
    hipError_t (*device_count)(int *);
    hipError_t (*set_device)(int);
    hipError_t (*device_name)(char *, int, int);
    hipError_t (*properties)(void *, int);
    hipError_t (*malloc)(void **, size_t);
    hipError_t (*free)(void *);
    hipError_t (*module_load)(hipModule_t *, const void *);
    hipError_t (*module_unload)(hipModule_t);
    hipError_t (*get_function)(hipFunction_t *, hipModule_t, const char *);
    const char *(*error_string)(hipError_t);
    ckt_gpu_api api; /* streams, events, graphs, copies and launches */
} H;

typedef struct {
    ckt_gpu_device gpu; /* first: the shared half's view */
} hip_dev;

static const char *hip_err(hipError_t r)
{
    const char *s = H.error_string ? H.error_string(r) : NULL;
    return s ? s : "unknown HIP error";
}

static ckt_status fail(ckt_error *err, const char *what, hipError_t r)
{
    return ckt_fail(err, CKT_ERUNTIME, "hip: %s failed: %s (%d)", what, hip_err(r), r);
}

/* device 0 only: the thread's current device */
static int make_current(ckt_device *dev)
{
    (void)dev;
    return H.set_device(0);
}

static ckt_status load_runtime(ckt_error *err)
{
    if (H.lib) return CKT_OK;
    void *lib = ckt_dynlib_open(ckt_dynlib_hip_names, NULL, &H.libname);
    if (!lib)
        return ckt_fail(err, CKT_ERUNTIME,
                        "HIP runtime libamdhip64.so.5/.6 not found (no ROCm here?); use --target "
                        "cpu:gfx90a to emulate");
    ckt_gpu_api *a = &H.api;
    const ckt_dynsym syms[] = {
        {(void **)&H.init, "hipInit", NULL, false},
        {(void **)&H.device_count, "hipGetDeviceCount", NULL, false},
        {(void **)&H.set_device, "hipSetDevice", NULL, false},
        {(void **)&H.device_name, "hipDeviceGetName", NULL, false},
        {(void **)&H.properties, "hipGetDevicePropertiesR0600", "hipGetDeviceProperties", false},
        {(void **)&H.malloc, "hipMalloc", NULL, false},
        {(void **)&H.free, "hipFree", NULL, false},
        {(void **)&H.module_load, "hipModuleLoadData", NULL, false},
        {(void **)&H.module_unload, "hipModuleUnload", NULL, false},
        {(void **)&H.get_function, "hipModuleGetFunction", NULL, false},
        {(void **)&H.error_string, "hipGetErrorString", NULL, false},
        {(void **)&a->launch, "hipModuleLaunchKernel", NULL, false},
        {(void **)&a->h2d, "hipMemcpyHtoDAsync", NULL, false},
        {(void **)&a->d2h, "hipMemcpyDtoHAsync", NULL, false},
        {(void **)&a->d2d, "hipMemcpyDtoDAsync", NULL, false},
        {(void **)&a->memset8, "hipMemsetD8Async", NULL, false},
        {(void **)&a->sync, "hipDeviceSynchronize", NULL, false},
        {(void **)&a->stream_create, "hipStreamCreateWithFlags", NULL, false},
        {(void **)&a->stream_destroy, "hipStreamDestroy", NULL, false},
        {(void **)&a->stream_sync, "hipStreamSynchronize", NULL, false},
        {(void **)&a->stream_wait, "hipStreamWaitEvent", NULL, false},
        {(void **)&a->event_create, "hipEventCreateWithFlags", NULL, false},
        {(void **)&a->event_record, "hipEventRecord", NULL, false},
        {(void **)&a->event_sync, "hipEventSynchronize", NULL, false},
        {(void **)&a->event_query, "hipEventQuery", NULL, false},
        {(void **)&a->event_elapsed, "hipEventElapsedTime", NULL, false},
        {(void **)&a->event_destroy, "hipEventDestroy", NULL, false},
        {(void **)&a->capture_begin, "hipStreamBeginCapture", NULL, false},
        {(void **)&a->capture_end, "hipStreamEndCapture", NULL, false},
        {(void **)&a->graph_instantiate, "hipGraphInstantiateWithFlags", NULL, false},
        {(void **)&a->graph_launch, "hipGraphLaunch", NULL, false},
        {(void **)&a->graph_exec_destroy, "hipGraphExecDestroy", NULL, false},
        {(void **)&a->graph_destroy, "hipGraphDestroy", NULL, false},
    };
    const char *missing = ckt_dynlib_bind(lib, syms, sizeof syms / sizeof *syms);
    if (missing) return ckt_fail(err, CKT_ERUNTIME, "HIP runtime %s lacks %s", H.libname, missing);
    a->name = "hip";
    a->error_string = (const char *(*)(int))H.error_string;
    a->make_current = make_current;
    a->allow_shared = NULL; /* CDNA's 64 KiB of LDS need no opt-in */
    H.lib = lib;
    return CKT_OK;
}

/* The architecture ("gfx90a") from the device properties. hipDeviceProp_t's layout differs
 * between ROCm releases, so rather than trust an offset, look for the gcnArchName string
 * ("gfx90a:sramecc+:xnack-") in a generously sized buffer. */
static void arch_name(int dev, char *out, size_t cap)
{
    snprintf(out, cap, "gfx");
    unsigned char props[16384]; /* larger than any hipDeviceProp_t so far */
    memset(props, 0, sizeof props);
    if (H.properties(props, dev)) return;
    for (size_t i = 0; i + 8 < sizeof props; i++) {
        if (memcmp(props + i, "gfx", 3) || (i && props[i - 1])) continue;
        size_t n = 3;
        while (i + n < sizeof props && ((props[i + n] >= '0' && props[i + n] <= '9') ||
                                        (props[i + n] >= 'a' && props[i + n] <= 'z')))
            n++;
        if (n > 3 && n < cap) {
            memcpy(out, props + i, n);
            out[n] = 0;
            return;
        }
    }
}

static ckt_status hip_open(ckt_device *dev, ckt_error *err)
{
    ckt_status st = load_runtime(err);
    if (st) return st;
    hipError_t r = H.init(0);
    int count = 0;
    if (!r) r = H.device_count(&count);
    if (r || count < 1)
        return ckt_fail(
            err, CKT_ERUNTIME,
            "hip: the HIP runtime (%s) found no AMD GPU%s%s; use --target cpu:gfx90a to emulate",
            H.libname, r ? ": " : "", r ? hip_err(r) : "");
    if ((r = H.set_device(0))) return fail(err, "hipSetDevice(0)", r);
    hip_dev *hd = calloc(1, sizeof *hd);
    if (!hd) return ckt_fail(err, CKT_ENOMEM, "hip: out of memory");
    hd->gpu.api = &H.api;
    dev->impl = hd;
    char name[200] = "AMD GPU";
    H.device_name(name, sizeof name, 0);
    arch_name(0, dev->target, sizeof dev->target);
    snprintf(dev->name, sizeof dev->name, "%s (%s)", name, dev->target);
    /* hardware limits of CDNA GPUs (hipDeviceGetAttribute's enum was renumbered in ROCm 6) */
    dev->max_block[0] = dev->max_block[1] = dev->max_block[2] = 1024;
    dev->max_threads_per_block = 1024;
    dev->max_grid[0] = dev->max_grid[1] = dev->max_grid[2] = INT32_MAX;
    dev->max_shared_bytes = 64 * 1024;
    return CKT_OK;
}

static void hip_close(ckt_device *dev) { free(dev->impl); }

static ckt_status hip_alloc(ckt_device *dev, size_t n, void **ptr, ckt_error *err)
{
    (void)dev;
    hipError_t r = H.malloc(ptr, n);
    if (r)
        return ckt_fail(err, r == 2 ? CKT_ENOMEM : CKT_ERUNTIME,
                        "alloc: hipMalloc of %zu bytes failed: %s", n, hip_err(r));
    return CKT_OK;
}

static void hip_free(ckt_device *dev, void *ptr)
{
    (void)dev;
    H.free(ptr);
}

static ckt_status hip_load(ckt_device *dev, const ckt_binary *bin, void **module, void **fn,
                           ckt_error *err)
{
    ckt_gpu_module *hm = calloc(1, sizeof *hm);
    if (!hm) return ckt_fail(err, CKT_ENOMEM, "launch: out of memory");
    size_t n;
    const uint8_t *code = ckt_binary_code(bin, &n);
    snprintf(hm->name, sizeof hm->name, "%s", ckt_binary_kernel_name(bin));
    if (ckt_code_object_kernel_args(code, n, hm->name, hm->sizes, 64, &hm->n, NULL) != CKT_OK)
        hm->n = -1;
    hipModule_t m;
    hipError_t r = H.module_load(&m, code);
    if (r) {
        free(hm);
        return ckt_fail(err, CKT_ERUNTIME,
                        "launch: hipModuleLoadData failed for a %s code object on %s: %s",
                        ckt_binary_target(bin), dev->name, hip_err(r));
    }
    hipFunction_t f;
    if ((r = H.get_function(&f, m, ckt_binary_kernel_name(bin)))) {
        H.module_unload(m);
        free(hm);
        return ckt_fail(err, CKT_EINVAL,
                        "launch: the code object has no kernel '%s' (extern \"C\"?): %s",
                        ckt_binary_kernel_name(bin), hip_err(r));
    }
    hm->handle = m;
    *module = hm;
    *fn = f;
    return CKT_OK;
}

static void hip_unload(ckt_device *dev, void *module)
{
    (void)dev;
    ckt_gpu_module *hm = module;
    H.module_unload(hm->handle);
    free(hm);
}

const ckt_backend_ops ckt_runtime_hip_ops = {.open = hip_open,
                                             .close = hip_close,
                                             .alloc = hip_alloc,
                                             .free = hip_free,
                                             .load = hip_load,
                                             .unload = hip_unload,
                                             CKT_GPU_OPS};
