/* ckt — JIT compilation of device source: hipRTC (AMD gfx90a/gfx908), NVRTC (NVIDIA sm_80/sm_90)
 * and the host C compiler (the CPU target). GPU compilers are found at run time (dlopen): a build
 * needs no GPU SDK, and a missing library is a clear error naming it and the alternative.
 * Compile-only works without a GPU. */
#ifndef CKT_JIT_H
#define CKT_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "ckt/context.h"
#include "ckt/error.h"
#include "ckt/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_compile_request {
    const char *target;         /* "gfx90a", "gfx908", "sm_80", "sm_90", "cpu" */
    const char *source;         /* HIP C++, CUDA C++ or C */
    const char *kernel_name;    /* the entry point */
    const char *const *options; /* extra compiler options (may be NULL) */
    int noptions;
} ckt_compile_request;
/* (The request's layout is frozen: callers initialize it positionally. Flags go to ckt_compile.) */

typedef enum {
    CKT_COMPILE_ONLY = 1,     /* the result is for inspection; ckt_launch refuses it */
    CKT_COMPILE_NO_CACHE = 2, /* neither read nor write the context's compile cache */
    /* for an untrusted caller: options only from a closed list of optimisation switches, and
     * no preprocessor line but conditionals, macros and <math.h> <stdint.h> <string.h> */
    CKT_COMPILE_SANDBOXED = 4,
    /* a kernel that moves data: no matrix instructions, no block reductions (ckt_kernel_compile
     * sets it): the compiler may give up optimizations that only large kernels repay, for compile
     * time (NVRTC 12.8+: --Ofast-compile=min). Part of the cache key. */
    CKT_COMPILE_LIGHT = 8
} ckt_compile_flags;

/* The CPU target ABI. For a kernel K the C source defines
 *   void K(void *const *args, const ckt_cpu_launch *launch);   -- runs ONE block, all its threads
 *   const unsigned long long K__lds_bytes = <bytes>;            -- LDS per block (optional: 0)
 *   const int K__nparams = 4;                                    -- the parameters (optional; when
 * present, const int K__param_kinds[4] = {0, 0, 1, 3};                   -- launches are checked
 * against them) K__param_kinds[i] is the ckt_param_kind of parameter i (ckt/param.h: CKT_PARAM_PTR
 * 0, I32 1, I64 2, F32 3; an ABI, these values do not change); with no parameters the array holds
 * one -1. args[i] points at the value of parameter i (as cuLaunchKernel's kernelParams). The
 * runtime gives each worker thread an LDS buffer of K__lds_bytes aligned to CKT_CPU_LDS_ALIGN.
 * This is the struct's one definition: the build splices the CKT_CPU_LAUNCH_DEFINED block below
 * into the C dialect's prelude (kernels/prelude/c.h, cmake/ckt_embed.cmake), so generated kernels
 * read the struct the runtime fills (tests/unit/test_cpu_launch_abi.c checks the two layouts). */
#ifndef CKT_CPU_LAUNCH_DEFINED
#define CKT_CPU_LAUNCH_DEFINED
typedef struct ckt_cpu_launch {
    int64_t grid[3], block[3], block_id[3];
    void *lds;
    int *fault; /* a window outside its tensor sets it to the window's number + 1 (may be NULL) */
    /* non-zero once the launch is to stop (its deadline passed): generated kernels read it at
     * every iteration of their loops and leave the block (may be NULL; appended, so kernels
     * written against the shorter struct still run) */
    const volatile int *stop;
    /* a kernel in clusters of blocks (K__cluster > 1) stores here, at its linear block index, a
     * hash of the boxes its multicast copies shared with its cluster, which the runtime compares
     * across each cluster after the launch (may be NULL: not checked; appended like stop) */
    unsigned long long *cluster_sig;
} ckt_cpu_launch;
#endif
#define CKT_CPU_LDS_ALIGN 64

/* Resource usage (-1 where unknown). AMD: the code object's AMDGPU metadata note. NVIDIA: the
 * cubin (registers: EIATTR_REGCOUNT, stack frame: EIATTR_FRAME_SIZE, static shared memory: the
 * .nv.shared.<kernel> section) and the spills from ptxas' report of this kernel's entry in the
 * log. Dynamic shared memory is not here: ckt_binary_dynamic_shared_bytes. */
typedef struct ckt_resources {
    int64_t vgprs, sgprs, agprs, vgpr_spills, sgpr_spills; /* AMD; -1 where unknown */
    int64_t registers, spill_stores, spill_loads;          /* NVIDIA */
    int64_t shared_bytes;  /* static LDS (group segment) / static shared memory */
    int64_t scratch_bytes; /* private segment / local memory (stack frame) per thread */
} ckt_resources;

typedef struct ckt_binary ckt_binary;

/* Compile (or load from the context's disk cache). ctx may be NULL: no cache. flags: 0 or
 * ckt_compile_flags. */
ckt_status ckt_compile(ckt_context *ctx, const ckt_compile_request *req, unsigned flags,
                       ckt_binary **out, ckt_error *err);
/* The same for a parsed target (ckt_target_parse), which the pipeline passes on; req->target
 * is not read (may be NULL). ckt_compile parses req->target once and calls it. */
ckt_status ckt_compile_record(ckt_context *ctx, const ckt_target_record *target,
                              const ckt_compile_request *req, unsigned flags, ckt_binary **out,
                              ckt_error *err);
/* The calling thread's compile deadline, in CLOCK_MONOTONIC seconds (0: none; returns the previous
 * one). While it is set, a compile on this thread that is not a cache hit ends with CKT_ELIMIT
 * when the deadline passes: one that would start after it is refused, the host C compiler (cpu
 * targets; a process group of its own) is killed at it, and an NVRTC / hipRTC compile, which runs
 * inside the process and cannot be interrupted, runs on a thread of its own and is abandoned at
 * it (it finishes in the background and its result is dropped; while
 * CKT_COMPILE_MAX_ABANDONED of them are still running, further ones are refused at once). A
 * sandboxed Lua state sets it for each run with a time limit (bindings/lua/ckt_lua.h). */
double ckt_compile_set_deadline(double deadline);
double ckt_compile_deadline(void);
/* How many abandoned in-process compiles are still running (a host may wait for 0 before it
 * exits: a compiler library torn down under a running compile can crash the exit). */
int ckt_compile_abandoned(void);
#define CKT_COMPILE_MAX_ABANDONED 2
/* Binaries are reference counted: ckt_binary_free drops one reference (the last frees it). */
void ckt_binary_free(ckt_binary *b);
void ckt_binary_retain(ckt_binary *b);
const char *ckt_binary_target(const ckt_binary *b);
const ckt_target_record *ckt_binary_target_record(const ckt_binary *b); /* the parsed target */
const uint8_t *ckt_binary_code(const ckt_binary *b,
                               size_t *size); /* code object / cubin / shared object */
const ckt_resources *ckt_binary_resources(const ckt_binary *b);
/* Dynamic shared memory / LDS, what the source declares extern and the launch requests: the size
 * ckt's emitter writes beside its declaration; -1 for a hand-written extern declaration (its size
 * is the launch's); 0 when the source declares none (and on the CPU). */
int64_t ckt_binary_dynamic_shared_bytes(const ckt_binary *b);
/* Static + dynamic shared memory, or -1 when either is unknown. */
int64_t ckt_binary_total_shared_bytes(const ckt_binary *b);
const char *ckt_binary_log(const ckt_binary *b);
const char *
ckt_binary_disassembly(const ckt_binary *b); /* NULL when no disassembler is installed */
const char *
ckt_binary_disassembly_note(const ckt_binary *b); /* why the disassembly is NULL ("" otherwise) */
double ckt_binary_compile_ms(const ckt_binary *b);
const char *ckt_binary_compiler(const ckt_binary *b); /* e.g. "hipRTC (libamdhip64.so.5)" */
const char *ckt_binary_kernel_name(const ckt_binary *b);
int ckt_binary_from_cache(const ckt_binary *b); /* 1: loaded from the disk cache, no compiler ran */
/* What the compile cache did, and why: "hit", "hit: the installed cache <dir>"; "miss: <reason>"
 * (the parts of the key that differ from the closest entry cached for this kernel name and
 * target -- the ckt version, the compiler, the options, the source -- or "nothing cached for
 * kernel ..." or a damaged entry); "off: <reason>" (cache = false, the context's option, an
 * unusable directory). docs/jit.md. */
const char *ckt_binary_cache_status(const ckt_binary *b);
int ckt_binary_compile_only(const ckt_binary *b); /* compiled with CKT_COMPILE_ONLY */

/* The AMDGPU metadata of an HSA code object (ELF note NT_AMDGPU_METADATA, msgpack). Bounds-checked.
 */
ckt_status ckt_code_object_resources(const uint8_t *elf, size_t size, ckt_resources *out,
                                     ckt_error *err);
/* The resources of `kernel` in a cubin (registers, static shared memory, the stack frame; spills
 * are not in the cubin: -1, or 0 when the stack frame is 0). arch: "sm_80" ... (sm_90 and newer
 * reserve 1 KiB of the .nv.shared section). */
ckt_status ckt_cubin_resources(const uint8_t *elf, size_t size, const char *kernel,
                               const char *arch, ckt_resources *out, ckt_error *err);
/* ptxas' verbose report (--ptxas-options=-v, NVRTC's log) for the entry function `kernel`:
 * registers, static shared memory, stack frame, spill stores and loads. Only the lines of that
 * entry are read (a log can report several entries and their callees); CKT_EINVAL when the log
 * does not report the entry. */
ckt_status ckt_ptxas_log_resources(const char *log, const char *kernel, ckt_resources *out,
                                   ckt_error *err);
/* The explicit arguments of `kernel` in that metadata (.args without the hidden_* ones): their
 * sizes in bytes, in order, into sizes[0..*count). The HIP runtime checks launches against them. */
ckt_status ckt_code_object_kernel_args(const uint8_t *elf, size_t size, const char *kernel,
                                       int64_t *sizes, int cap, int *count, ckt_error *err);
/* The same for a cubin (the .nv.info.<kernel> parameter records, EIATTR_KPARAM_INFO and _V2);
 * the CUDA runtime checks launches. CKT_EUNSUPPORTED: records of a form it does not know. */
ckt_status ckt_cubin_kernel_args(const uint8_t *elf, size_t size, const char *kernel,
                                 int64_t *sizes, int cap, int *count, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
