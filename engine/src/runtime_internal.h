/* Shared by the runtime backends (not installed). runtime.c owns the device object, the
 * live-buffer registry (pointer arguments are checked against it), the module cache and
 * all argument checking; a backend only moves bytes and launches. */
#ifndef CKT_RUNTIME_INTERNAL_H
#define CKT_RUNTIME_INTERNAL_H

#include <pthread.h>

#include "ckt/runtime.h"

typedef struct ckt_backend_ops {
    ckt_status (*open)(ckt_device *dev, ckt_error *err); /* fills impl, name, target, limits */
    void (*close)(ckt_device *dev);
    ckt_status (*alloc)(ckt_device *dev, size_t bytes, void **ptr, ckt_error *err);
    void (*free)(ckt_device *dev, void *ptr);
    ckt_status (*h2d)(ckt_device *dev, void *dst, const void *src, size_t n, ckt_error *err);
    ckt_status (*d2h)(ckt_device *dev, void *dst, const void *src, size_t n, ckt_error *err);
    ckt_status (*d2d)(ckt_device *dev, void *dst, const void *src, size_t n, ckt_error *err);
    ckt_status (*memset)(ckt_device *dev, void *dst, uint8_t byte, size_t n, ckt_error *err);
    /* load the binary's kernel: *module is released by unload, *fn lives as long as it */
    ckt_status (*load)(ckt_device *dev, const ckt_binary *bin, void **module, void **fn,
                       ckt_error *err);
    void (*unload)(ckt_device *dev, void *module);
    ckt_status (*launch)(ckt_device *dev, void *module, void *fn, const ckt_launch_params *p,
                         double *ms, ckt_error *err);
    ckt_status (*sync)(ckt_device *dev, ckt_error *err);
} ckt_backend_ops;

#define CKT_MODULE_CACHE 64

struct ckt_buffer {
    ckt_device *dev;
    void *ptr;
    size_t size;
    ckt_buffer *prev, *next;
};

struct ckt_device {
    ckt_backend backend;
    const ckt_backend_ops *ops;
    void *impl;
    int refs;
    pthread_mutex_t lock; /* refs, the buffer list, the module cache */
    char name[256];
    char target[32];
    int64_t max_block[3], max_threads_per_block, max_grid[3], max_shared_bytes;
    ckt_buffer *buffers;
    struct {
        uint64_t bin_id;
        void *module, *fn;
        uint64_t last_use;
    } modules[CKT_MODULE_CACHE];
    uint64_t clock;
};

extern const ckt_backend_ops ckt_runtime_cpu_ops, ckt_runtime_cuda_ops, ckt_runtime_hip_ops;

/* Check a launch's signature against the argument sizes the code object declares. */
ckt_status ckt_runtime_check_arg_sizes(const char *kernel, const int64_t *sizes, int n,
                                       const ckt_launch_params *p, ckt_error *err);

/* The entry points the CUDA driver and HIP share for a timed launch (cuEvent* / hipEvent*,
 * cuLaunchKernel / hipModuleLaunchKernel): results are int (0: success), events, streams and
 * functions opaque pointers in both. */
typedef struct ckt_gpu_timing {
    int (*event_record)(void *ev, void *stream);
    int (*event_sync)(void *ev);
    int (*event_elapsed)(float *ms, void *start, void *end);
    int (*event_destroy)(void *ev);
    int (*launch)(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                  unsigned bz, unsigned shared_bytes, void *stream, void **args, void **extra);
} ckt_gpu_timing;
/* Launch fn on the default stream between two created events ev[0..1], wait for it and destroy
 * the events. Returns the first failing result (0: none, then *ms is the kernel's time). */
int ckt_runtime_timed_launch(const ckt_gpu_timing *api, void *const ev[2], void *fn,
                             const ckt_launch_params *p, double *ms);

/* CLOCK_MONOTONIC in seconds (the clock of ckt_launch_params.deadline) */
double ckt_runtime_now(void);

/* the binary's unique id (module cache key) */
uint64_t ckt_binary_id(const ckt_binary *b);

#endif
