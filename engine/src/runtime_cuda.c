/* The CUDA runtime through the driver API, loaded at run time (libcuda.so.1 comes with the
 * NVIDIA driver, so a machine without an NVIDIA GPU has none: that is an error naming the
 * library and the cpu target). Device 0, its primary context, made current for every call
 * (the caller's thread may change between calls). Kernel time from a pair of events. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynlib.h"
#include "runtime_internal.h"

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
       FUNC_MAX_DYNAMIC_SHARED = 8
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
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*h2d)(CUdeviceptr, const void *, size_t);
    CUresult (*d2h)(void *, CUdeviceptr, size_t);
    CUresult (*d2d)(CUdeviceptr, CUdeviceptr, size_t);
    CUresult (*memset8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*module_load)(CUmodule *, const void *);
    CUresult (*module_unload)(CUmodule);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*func_set_attribute)(CUfunction, int, int);
    CUresult (*event_create)(CUevent *, unsigned);
    ckt_gpu_timing t; /* events and launches */
    CUresult (*sync)(void);
    CUresult (*error_string)(CUresult, const char **);
} D;

typedef struct {
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
    const ckt_dynsym syms[] = {
        {(void **)&D.init, "cuInit", NULL, false},
        {(void **)&D.device_get, "cuDeviceGet", NULL, false},
        {(void **)&D.device_count, "cuDeviceGetCount", NULL, false},
        {(void **)&D.device_name, "cuDeviceGetName", NULL, false},
        {(void **)&D.attribute, "cuDeviceGetAttribute", NULL, false},
        {(void **)&D.retain, "cuDevicePrimaryCtxRetain", NULL, false},
        {(void **)&D.release, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease", false},
        {(void **)&D.set_current, "cuCtxSetCurrent", NULL, false},
        {(void **)&D.alloc, "cuMemAlloc_v2", NULL, false},
        {(void **)&D.free, "cuMemFree_v2", NULL, false},
        {(void **)&D.h2d, "cuMemcpyHtoD_v2", NULL, false},
        {(void **)&D.d2h, "cuMemcpyDtoH_v2", NULL, false},
        {(void **)&D.d2d, "cuMemcpyDtoD_v2", NULL, false},
        {(void **)&D.memset8, "cuMemsetD8_v2", NULL, false},
        {(void **)&D.module_load, "cuModuleLoadData", NULL, false},
        {(void **)&D.module_unload, "cuModuleUnload", NULL, false},
        {(void **)&D.get_function, "cuModuleGetFunction", NULL, false},
        {(void **)&D.func_set_attribute, "cuFuncSetAttribute", NULL, false},
        {(void **)&D.t.launch, "cuLaunchKernel", NULL, false},
        {(void **)&D.event_create, "cuEventCreate", NULL, false},
        {(void **)&D.t.event_record, "cuEventRecord", NULL, false},
        {(void **)&D.t.event_sync, "cuEventSynchronize", NULL, false},
        {(void **)&D.t.event_elapsed, "cuEventElapsedTime", "cuEventElapsedTime_v2", false},
        {(void **)&D.t.event_destroy, "cuEventDestroy_v2", NULL, false},
        {(void **)&D.sync, "cuCtxSynchronize", NULL, false},
        {(void **)&D.error_string, "cuGetErrorString", NULL, false},
    };
    const char *missing = ckt_dynlib_bind(lib, syms, sizeof syms / sizeof *syms);
    if (missing)
        return ckt_fail(err, CKT_ERUNTIME, "CUDA driver %s lacks %s (driver too old?)", D.libname,
                        missing);
    D.lib = lib;
    return CKT_OK;
}

static ckt_status make_current(ckt_device *dev, ckt_error *err)
{
    cuda_dev *c = dev->impl;
    CUresult r = D.set_current(c->ctx);
    return r ? fail(err, "cuCtxSetCurrent", r) : CKT_OK;
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
    ckt_status st = make_current(dev, err);
    if (st) return st;
    CUdeviceptr p = 0;
    CUresult r = D.alloc(&p, n);
    if (r)
        return ckt_fail(err, r == 2 ? CKT_ENOMEM : CKT_ERUNTIME,
                        "alloc: cuMemAlloc of %zu bytes failed: %s", n, cu_err(r));
    *ptr = (void *)(uintptr_t)p;
    return CKT_OK;
}

static void cu_free(ckt_device *dev, void *ptr)
{
    if (make_current(dev, NULL) == CKT_OK) D.free((CUdeviceptr)(uintptr_t)ptr);
}

static ckt_status cu_h2d(ckt_device *dev, void *dst, const void *src, size_t n, ckt_error *err)
{
    ckt_status st = make_current(dev, err);
    CUresult r = st ? 0 : D.h2d((CUdeviceptr)(uintptr_t)dst, src, n);
    return st ? st : r ? fail(err, "cuMemcpyHtoD", r) : CKT_OK;
}

static ckt_status cu_d2h(ckt_device *dev, void *dst, const void *src, size_t n, ckt_error *err)
{
    ckt_status st = make_current(dev, err);
    CUresult r = st ? 0 : D.d2h(dst, (CUdeviceptr)(uintptr_t)src, n);
    return st ? st : r ? fail(err, "cuMemcpyDtoH", r) : CKT_OK;
}

static ckt_status cu_d2d(ckt_device *dev, void *dst, const void *src, size_t n, ckt_error *err)
{
    ckt_status st = make_current(dev, err);
    CUresult r = st ? 0 : D.d2d((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n);
    if (!st && !r) r = D.sync();
    return st ? st : r ? fail(err, "cuMemcpyDtoD", r) : CKT_OK;
}

static ckt_status cu_memset(ckt_device *dev, void *dst, uint8_t byte, size_t n, ckt_error *err)
{
    ckt_status st = make_current(dev, err);
    CUresult r = st ? 0 : D.memset8((CUdeviceptr)(uintptr_t)dst, byte, n);
    if (!st && !r) r = D.sync();
    return st ? st : r ? fail(err, "cuMemsetD8", r) : CKT_OK;
}

/* a loaded module and the parameter sizes the cubin declares (n < 0: unknown) */
typedef struct {
    CUmodule m;
    char name[128];
    int n;
    int64_t sizes[64];
} cuda_module;

static ckt_status cu_load(ckt_device *dev, const ckt_binary *bin, void **module, void **fn,
                          ckt_error *err)
{
    ckt_status st = make_current(dev, err);
    if (st) return st;
    cuda_module *cm = calloc(1, sizeof *cm);
    if (!cm) return ckt_fail(err, CKT_ENOMEM, "launch: out of memory");
    size_t n;
    const uint8_t *code = ckt_binary_code(bin, &n);
    snprintf(cm->name, sizeof cm->name, "%s", ckt_binary_kernel_name(bin));
    if (ckt_cubin_kernel_args(code, n, cm->name, cm->sizes, 64, &cm->n, NULL) != CKT_OK) cm->n = -1;
    /* a cubin for another architecture fails in cuModuleLoadData with the driver's reason */
    CUresult r = D.module_load(&cm->m, code);
    if (r) {
        free(cm);
        return ckt_fail(err, CKT_ERUNTIME,
                        "launch: cuModuleLoadData failed for a %s cubin on %s: %s",
                        ckt_binary_target(bin), dev->name, cu_err(r));
    }
    CUfunction f;
    if ((r = D.get_function(&f, cm->m, cm->name))) {
        D.module_unload(cm->m);
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
    cuda_module *cm = module;
    if (make_current(dev, NULL) == CKT_OK) D.module_unload(cm->m);
    free(cm);
}

static ckt_status cu_launch(ckt_device *dev, void *module, void *fn, const ckt_launch_params *p,
                            double *ms, ckt_error *err)
{
    const cuda_module *cm = module;
    ckt_status st =
        cm->n >= 0 ? ckt_runtime_check_arg_sizes(cm->name, cm->sizes, cm->n, p, err) : CKT_OK;
    if (!st) st = make_current(dev, err);
    if (st) return st;
    CUresult r;
    if (p->dyn_shared_bytes > 48 * 1024 &&
        (r = D.func_set_attribute(fn, FUNC_MAX_DYNAMIC_SHARED, (int)p->dyn_shared_bytes)))
        return fail(err, "cuFuncSetAttribute(max dynamic shared memory)", r);
    CUevent ev[2] = {0, 0};
    if ((r = D.event_create(&ev[0], 0)) || (r = D.event_create(&ev[1], 0))) {
        if (ev[0]) D.t.event_destroy(ev[0]);
        return fail(err, "cuEventCreate", r);
    }
    if ((r = ckt_runtime_timed_launch(&D.t, ev, fn, p, ms))) return fail(err, "kernel launch", r);
    return CKT_OK;
}

static ckt_status cu_sync(ckt_device *dev, ckt_error *err)
{
    ckt_status st = make_current(dev, err);
    CUresult r = st ? 0 : D.sync();
    return st ? st : r ? fail(err, "cuCtxSynchronize", r) : CKT_OK;
}

const ckt_backend_ops ckt_runtime_cuda_ops = {cu_open, cu_close,  cu_alloc,  cu_free,
                                              cu_h2d,  cu_d2h,    cu_d2d,    cu_memset,
                                              cu_load, cu_unload, cu_launch, cu_sync};
