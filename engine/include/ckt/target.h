/* ckt — compile targets. A target name ("cpu", "cpu:sm_90", "gfx90a", "sm_90a", ...) is parsed
 * once, here, into a ckt_target_record: the dialect the emitter writes, the compiler that builds
 * it, the runtime that launches it, the GPU architecture it compiles for or emulates, and that
 * architecture's hardware model (wave size, LDS/shared-memory banks and size, matrix
 * instructions, per-instruction lane phases held as data, each table marked documented or
 * assumed). Nothing outside target.c decodes a target string. */
#ifndef CKT_TARGET_H
#define CKT_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKT_MAX_LANES 64
#define CKT_MAX_PHASES 16

typedef enum { CKT_VENDOR_AMD, CKT_VENDOR_NVIDIA } ckt_vendor;
/* The source dialect the emitter writes (ckt/emit.h). */
typedef enum { CKT_DIALECT_C, CKT_DIALECT_HIP, CKT_DIALECT_CUDA } ckt_dialect_kind;
/* The compiler that builds a target's source (ckt/jit.h). */
typedef enum { CKT_COMPILER_HOST_CC, CKT_COMPILER_HIPRTC, CKT_COMPILER_NVRTC } ckt_compiler_kind;
/* The runtime that launches a target's binaries (ckt/runtime.h). */
typedef enum { CKT_BACKEND_CPU, CKT_BACKEND_CUDA, CKT_BACKEND_HIP } ckt_backend;

/* What a bare "cpu" target emulates (stated here only; ckt.target("cpu") shows it). */
#define CKT_CPU_DEFAULT_ARCH "gfx90a"

/* One LDS instruction: its access width and which lanes are served together (a phase). */
typedef struct ckt_lds_instr {
    const char *name; /* "ds_read_b128", "lds128", ... */
    int bytes;        /* 4, 8 or 16 per lane */
    int is_write;
    int nphases;
    int lanes_per_phase;
    int8_t lanes[CKT_MAX_PHASES][CKT_MAX_LANES]; /* lanes of each phase */
    bool documented;                             /* false: an assumption (see docs/sfc_lds.md) */
    bool merge_pairs; /* phases (0,1), (2,3), ... share one wavefront when together conflict-free */
    const char *source;
} ckt_lds_instr;

typedef struct ckt_target {
    char name[16];
    ckt_vendor vendor;
    int wave_size, lds_banks, bank_bytes;
    int64_t lds_bytes;
    const char
        *matrix; /* comma-separated matrix instructions (ckt/mma.h's names where it has them) */
    /* registers, for occupancy: NVIDIA: 32-bit registers of an SM and warps an SM holds; AMD:
     * registers a lane of a SIMD has (VGPRs, with AGPRs when unified_agprs) and waves a SIMD holds
     */
    int reg_file, max_waves;
    bool unified_agprs; /* AMD: AGPRs come out of the same file as the VGPRs (gfx90a and later) */
    /* bulk tensor copies (cp.async.bulk.tensor, the tensor memory accelerator) completing on
     * mbarriers with transaction counts: NVIDIA sm_90 and later */
    bool tma;
    /* warpgroup MMAs (wgmma.mma_async, operands from shared memory): sm_90a */
    bool wgmma;
    /* stmatrix (a warp stores 8x8 matrices of 16-bit values from registers, a lane giving a row's
     * address): NVIDIA sm_90 and later */
    bool stmatrix;
    /* The processors and their resources, for occupancy (ckt_target_occupancy). "SM" is an
     * NVIDIA streaming multiprocessor or an AMD compute unit (CU); each number is for the product
     * named beside it in target.c. */
    int sm_count;              /* SMs / CUs of the product */
    int64_t regs_per_sm;       /* 32-bit registers of an SM / CU (AMD: VGPRs (+AGPRs) x 64 lanes) */
    int regs_per_thread_max;   /* registers one thread may have */
    int reg_granule;           /* a thread's registers are allocated in multiples of it */
    int64_t lds_per_sm;        /* LDS / shared memory bytes of an SM / CU */
    int64_t lds_per_block;     /* LDS / shared memory bytes one block may use (= lds_bytes) */
    int64_t lds_reserved;      /* bytes the hardware keeps for each resident block */
    int threads_per_sm_max;    /* resident threads of an SM / CU */
    int threads_per_block_max; /* threads one block may have */
    int blocks_per_sm_max;     /* resident blocks of an SM / CU */
    int simds;                 /* AMD: SIMDs of a CU, which share out a block's waves; NVIDIA 1 */
    int ninstr;
    ckt_lds_instr instr[12];
} ckt_target;

/* One parsed target. */
typedef struct ckt_target_record {
    char name[24]; /* the target as given: "cpu", "cpu:sm_90", "gfx90a", "sm_90a" */
    char arch[16]; /* the GPU architecture compiled for (GPU targets) or emulated (cpu) */
    ckt_dialect_kind dialect; /* C for the CPU target, HIP for gfx*, CUDA for sm_* */
    ckt_compiler_kind compiler;
    ckt_backend runtime;
    bool emulated; /* the CPU target: arch's kernels run as C on this machine */
    /* hw holds arch's hardware model (sm_90a: sm_90's). false: an architecture name the
     * runtime compiler may know (gfx1100, sm_89) without a model here (no bank model, no LDS
     * capacity check); the CPU target always emulates a modelled architecture. */
    bool modelled;
    /* the compiler is known to take arch (false: hipRTC is probed first, NVRTC refuses) */
    bool compiler_known;
    ckt_target hw;            /* the hardware model (when modelled) */
    int wave_size;            /* lanes of a wave / warp (0: not modelled) */
    int64_t lds_static_bytes; /* LDS a kernel may declare statically; above it the CUDA dialect
                               * declares it dynamic (0: no such limit) */
    int64_t lds_max_bytes;    /* LDS a block may use (0: not modelled) */
    const char *matrix;       /* the matrix instructions the architecture has, comma-separated
                               * ("" when not modelled) */
} ckt_target_record;

/* What bounds the blocks an SM holds at once (ckt_target_occupancy). */
typedef enum {
    CKT_LIMIT_BLOCKS,    /* the blocks an SM holds at most */
    CKT_LIMIT_THREADS,   /* the threads (waves) an SM holds */
    CKT_LIMIT_REGISTERS, /* the register file */
    CKT_LIMIT_LDS        /* LDS / shared memory */
} ckt_limiter;

typedef struct ckt_occupancy {
    int blocks_per_sm; /* blocks of this shape resident on one SM / CU at once (>= 0) */
    /* warps an SM holds (NVIDIA) / waves a SIMD holds (AMD): blocks_per_sm's waves */
    int waves;
    ckt_limiter limiter; /* the resource that bounds blocks_per_sm (the first of equals in the
                          * enum's order) */
} ckt_occupancy;

/* Blocks of `threads` threads, `registers` registers per thread and `lds_bytes` LDS / shared memory
 * per block that one SM / CU of the target's hardware model holds at once, and what bounds them.
 * registers 0 and lds_bytes 0: not a limit. Bad input (NULL, a target without a model, threads
 * < 1, negative registers or LDS, more than a thread or a block may have): CKT_EINVAL naming
 * the argument. A block that cannot be resident at all is not an error when it fits the per-block
 * limits: blocks_per_sm 0. */
ckt_status ckt_target_occupancy(const ckt_target_record *t, int64_t threads, int64_t registers,
                                int64_t lds_bytes, ckt_occupancy *out, ckt_error *err);
const char *ckt_limiter_name(ckt_limiter l); /* "blocks", "threads", "registers", "lds" */

/* Parse a target name: "cpu" (emulating CKT_CPU_DEFAULT_ARCH), "cpu:<modelled gpu>", a modelled
 * GPU (gfx908, gfx90a, gfx942, gfx950, sm_80, sm_90, sm_90a) or another gfx<hex> / sm_<digits>[a]
 * architecture. Unknown names: CKT_EUNSUPPORTED "target: unknown target '...'; known: ...". */
ckt_status ckt_target_parse(const char *name, ckt_target_record *out, ckt_error *err);
/* The hardware model of a modelled target (any name ckt_target_parse takes whose record is
 * modelled: "gfx90a", "cpu:sm_90", "cpu" -> CKT_CPU_DEFAULT_ARCH's model). */
ckt_status ckt_target_get(const char *name, ckt_target *out, ckt_error *err);
/* May a binary compiled for `target` run on a device of architecture `device_arch` ("sm_90" for
 * a compute capability 9.0 device)? An architecture-specific target (sm_90a) runs only on its own
 * capability: elsewhere CKT_EUNSUPPORTED naming both. Other targets: CKT_OK (the driver decides).
 */
ckt_status ckt_target_check_device(const ckt_target_record *target, const char *device_arch,
                                   ckt_error *err);
const char *ckt_target_names(void); /* "gfx908, gfx90a, ..." */
/* The i-th modelled architecture ("gfx908", ..., "sm_90a"); NULL past the end. */
const char *ckt_target_modelled_at(int i);
const char *ckt_dialect_name(ckt_dialect_kind d);   /* "c", "hip", "cuda" */
const char *ckt_compiler_name(ckt_compiler_kind c); /* "cc", "hiprtc", "nvrtc" */
const char *ckt_backend_name(ckt_backend b);        /* "cpu", "cuda", "hip" */
/* An instruction by name, or by width and direction ("read"/"write" with 4/8/16 bytes). */
const ckt_lds_instr *ckt_target_instr(const ckt_target *t, const char *name);
const ckt_lds_instr *ckt_target_instr_for(const ckt_target *t, int bytes, int is_write);

#ifdef __cplusplus
}
#endif
#endif
