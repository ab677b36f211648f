/* The CUDA runtime through the driver API, loaded at run time (libcuda.so.1 comes with the
 * NVIDIA driver, so a machine without an NVIDIA GPU has none: that is an error naming the
 * library and the cpu target). Device 0, its primary context, made current for every call
 * (the caller's thread may change between calls). Kernel time from a pair of events. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynlib.h"
#include "runtime_gpu.h"

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUevent, *CUstream;
typedef unsigned long long CUdeviceptr;

enum { /* CUdevice_attribute values (stable across CUDA versions) */
       MAX_THREADS_PER_BLOCK = 1,
       MAX_BLOCK_X = 2,
       MAX_GRID_X = 5,
       MAX_SHARED_PER_BLOCK_OPTIN = 97,
       CC_MAJOR = 75,
       CC_MINOR = 76,
       FUNC_MAX_DYNAMIC_SHARED = 8,
       FUNC_PREFERRED_SHARED_CARVEOUT = 9
};

static struct {
    void *lib;
    const char *libname;
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_count)(int *);
    CUresult (*device_name)(char *, int, CUdevice);
    CUresult (*attribute)(int *, int, CUdevice);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*release)(CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*get_current)(CUcontext *);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*module_load)(CUmodule *, const void *);
    CUresult (*module_unload)(CUmodule);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*func_set_attribute)(CUfunction, int, int);
    CUresult (*error_string)(CUresult, const char **);
    ckt_gpu_api api; /* streams, events, graphs, copies and launches */
} D;

typedef struct {
    ckt_gpu_device gpu; /* first: the shared half's view */
    CUdevice dev;
    CUcontext ctx;
} cuda_dev;

static const char *cu_err(CUresult r)
{
    const char *s = NULL;
    if (D.error_string && D.error_string(r, &s) == 0 && s) return s;
    return "unknown CUDA error";
}

static ckt_status fail(ckt_error *err, const char *what, CUresult r)
{
    return ckt_fail(err, CKT_ERUNTIME, "cuda: %s failed: %s (%d)", what, cu_err(r), r);
}

/* The device's context current on this thread: asked first, since another library may have
 * changed it, and only set when it differs (setting costs more than asking, every launch). */
static int make_current(ckt_device *dev)
{
    CUcontext want = ((cuda_dev *)dev->impl)->ctx, cur = NULL;
    return D.get_current(&cur) == 0 && cur == want ? 0 : D.set_current(want);
}
/* a kernel above the static LDS limit: allowed its bytes, and the SM's L1 / LDS split preferring
 * LDS whole (a hint: otherwise two blocks of 113 KiB, which fit the H100's 228 KiB, may get a
 * split that holds one) */
static int allow_shared(void *fn, int bytes)
{
    int r = D.func_set_attribute(fn, FUNC_MAX_DYNAMIC_SHARED, bytes);
    if (r == 0) (void)D.func_set_attribute(fn, FUNC_PREFERRED_SHARED_CARVEOUT, 100);
    return r;
}

static ckt_status load_driver(ckt_error *err)
{
    if (D.lib) return CKT_OK;
    static const char *const names[] = {"libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1",
                                        "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so",
                                        NULL};
    void *lib = ckt_dynlib_open(names, NULL, &D.libname);
    if (!lib)
        return ckt_fail(err, CKT_ERUNTIME,
                        "CUDA driver libcuda.so.1 not found (no NVIDIA GPU here?); use --target "
                        "cpu:sm_90 to emulate");
    ckt_gpu_api *a = &D.api;
    /* the driver's device addresses are 64-bit integers, the table's pointers: one ABI */
    const ckt_dynsym syms[] = {
        {(void **)&D.init, "cuInit", NULL, false},
        {(void **)&D.device_get, "cuDeviceGet", NULL, false},
        {(void **)&D.device_count, "cuDeviceGetCount", NULL, false},
        {(void **)&D.device_name, "cuDeviceGetName", NULL, false},
        {(void **)&D.attribute, "cuDeviceGetAttribute", NULL, false},
        {(void **)&D.retain, "cuDevicePrimaryCtxRetain", NULL, false},
        {(void **)&D.release, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease", false},
        {(void **)&D.set_current, "cuCtxSetCurrent", NULL, false},
        {(void **)&D.get_current, "cuCtxGetCurrent", NULL, false},
        {(void **)&D.alloc, "cuMemAlloc_v2", NULL, false},
        {(void **)&D.free, "cuMemFree_v2", NULL, false},
        {(void **)&D.module_load, "cuModuleLoadData", NULL, false},
        {(void **)&D.module_unload, "cuModuleUnload", NULL, false},
        {(void **)&D.get_function, "cuModuleGetFunction", NULL, false},
        {(void **)&D.func_set_attribute, "cuFuncSetAttribute", NULL, false},
        {(void **)&D.error_string, "cuGetErrorString", NULL, false},
        {(void **)&a->launch, "cuLaunchKernel", NULL, false},
        {(void **)&a->h2d, "cuMemcpyHtoDAsync_v2", NULL, false},
        {(void **)&a->d2h, "cuMemcpyDtoHAsync_v2", NULL, false},
        {(void **)&a->d2d, "cuMemcpyDtoDAsync_v2", NULL, false},
        {(void **)&a->memset8, "cuMemsetD8Async", NULL, false},
        {(void **)&a->sync, "cuCtxSynchronize", NULL, false},
        {(void **)&a->stream_create, "cuStreamCreate", NULL, false},
        {(void **)&a->stream_destroy, "cuStreamDestroy_v2", NULL, false},
        {(void **)&a->stream_sync, "cuStreamSynchronize", NULL, false},
        {(void **)&a->stream_wait, "cuStreamWaitEvent", NULL, false},
        {(void **)&a->event_create, "cuEventCreate", NULL, false},
        {(void **)&a->event_record, "cuEventRecord", NULL, false},
        {(void **)&a->event_sync, "cuEventSynchronize", NULL, false},
        {(void **)&a->event_query, "cuEventQuery", NULL, false},
        {(void **)&a->event_elapsed, "cuEventElapsedTime_v2", "cuEventElapsedTime", false},
        {(void **)&a->event_destroy, "cuEventDestroy_v2", NULL, false},
        {(void **)&a->capture_begin, "cuStreamBeginCapture_v2", "cuStreamBeginCapture", false},
        {(void **)&a->capture_end, "cuStreamEndCapture", NULL, false},
        {(void **)&a->graph_instantiate, "cuGraphInstantiateWithFlags", NULL, false},
        {(void **)&a->graph_launch, "cuGraphLaunch", NULL, false},
        {(void **)&a->graph_exec_destroy, "cuGraphExecDestroy", NULL, false},
        {(void **)&a->graph_destroy, "cuGraphDestroy", NULL, false},
    };
    const char *missing = ckt_dynlib_bind(lib, syms, sizeof syms / sizeof *syms);
    if (missing)
        return ckt_fail(err, CKT_ERUNTIME, "CUDA driver %s lacks %s (driver too old?)", D.libname,
                        missing);
    a->name = "cuda";
    a->error_string = cu_err;
    a->make_current = make_current;
    a->allow_shared = allow_shared;
    D.lib = lib;
    return CKT_OK;
}

static ckt_status cu_open(ckt_device *dev, ckt_error *err)
{
    ckt_status st = load_driver(err);
    if (st) return st;
    CUresult r = D.init(0);
    if (r)
        return ckt_fail(err, CKT_ERUNTIME,
                        "cuda: cuInit failed: %s (%d) — no usable NVIDIA GPU? use --target "
                        "cpu:sm_90 to emulate",
                        cu_err(r), r);
    int count = 0;
    if ((r = D.device_count(&count)) || count < 1)
        return ckt_fail(err, CKT_ERUNTIME,
                        "cuda: no NVIDIA GPU found; use --target cpu:sm_90 to emulate");
    cuda_dev *c = calloc(1, sizeof *c);
    if (!c) return ckt_fail(err, CKT_ENOMEM, "cuda: out of memory");
    c->gpu.api = &D.api;
    if ((r = D.device_get(&c->dev, 0)) || (r = D.retain(&c->ctx, c->dev))) {
        free(c);
        return fail(err, "opening device 0", r);
    }
    dev->impl = c;
    char name[200] = "NVIDIA GPU";
    D.device_name(name, sizeof name, c->dev);
    int major = 0, minor = 0, v = 0;
    D.attribute(&major, CC_MAJOR, c->dev);
    D.attribute(&minor, CC_MINOR, c->dev);
    snprintf(dev->target, sizeof dev->target, "sm_%d%d", major, minor);
    snprintf(dev->name, sizeof dev->name, "%s (%s)", name, dev->target);
    for (int i = 0; i < 3; i++) {
        D.attribute(&v, MAX_BLOCK_X + i, c->dev);
        dev->max_block[i] = v;
        D.attribute(&v, MAX_GRID_X + i, c->dev);
        dev->max_grid[i] = v;
    }
    D.attribute(&v, MAX_THREADS_PER_BLOCK, c->dev);
    dev->max_threads_per_block = v;
    D.attribute(&v, MAX_SHARED_PER_BLOCK_OPTIN, c->dev);
    dev->max_shared_bytes = v;
    return CKT_OK;
}

static void cu_close(ckt_device *dev)
{
    cuda_dev *c = dev->impl;
    D.release(c->dev);
    free(c);
}

static ckt_status cu_alloc(ckt_device *dev, size_t n, void **ptr, ckt_error *err)
{
    CUresult r = make_current(dev);
    if (r) return fail(err, "cuCtxSetCurrent", r);
    CUdeviceptr p = 0;
    if ((r = D.alloc(&p, n)))
        return ckt_fail(err, r == 2 ? CKT_ENOMEM : CKT_ERUNTIME,
                        "alloc: cuMemAlloc of %zu bytes failed: %s", n, cu_err(r));
    *ptr = (void *)(uintptr_t)p;
    return CKT_OK;
}

static void cu_free(ckt_device *dev, void *ptr)
{
    if (!make_current(dev)) D.free((CUdeviceptr)(uintptr_t)ptr);
}

static ckt_status cu_load(ckt_device *dev, const ckt_binary *bin, void **module, void **fn,
                          ckt_error *err)
{
    CUresult r = make_current(dev);
    if (r) return fail(err, "cuCtxSetCurrent", r);
    ckt_gpu_module *cm = calloc(1, sizeof *cm);
    if (!cm) return ckt_fail(err, CKT_ENOMEM, "launch: out of memory");
    size_t n;
    const uint8_t *code = ckt_binary_code(bin, &n);
    snprintf(cm->name, sizeof cm->name, "%s", ckt_binary_kernel_name(bin));
    if (ckt_cubin_kernel_args(code, n, cm->name, cm->sizes, 64, &cm->n, NULL) != CKT_OK) cm->n = -1;
    /* a cubin for another architecture fails in cuModuleLoadData with the driver's reason */
    if ((r = D.module_load((CUmodule *)&cm->handle, code))) {
        free(cm);
        return ckt_fail(err, CKT_ERUNTIME,
                        "launch: cuModuleLoadData failed for a %s cubin on %s: %s",
                        ckt_binary_target(bin), dev->name, cu_err(r));
    }
    CUfunction f;
    if ((r = D.get_function(&f, cm->handle, cm->name))) {
        D.module_unload(cm->handle);
        free(cm);
        return ckt_fail(err, CKT_EINVAL, "launch: the cubin has no kernel '%s' (extern \"C\"?): %s",
                        ckt_binary_kernel_name(bin), cu_err(r));
    }
    *module = cm;
    *fn = f;
    return CKT_OK;
}

static void cu_unload(ckt_device *dev, void *module)
{
    ckt_gpu_module *cm = module;
    if (!make_current(dev)) D.module_unload(cm->handle);
    free(cm);
}

const ckt_backend_ops ckt_runtime_cuda_ops = {.open = cu_open,
                                              .close = cu_close,
                                              .alloc = cu_alloc,
                                              .free = cu_free,
                                              .load = cu_load,
                                              .unload = cu_unload,
                                              CKT_GPU_OPS};
