/* ckt — the LDS / shared-memory bank model (seed 004; nvidia_gpu.md) and its remedies. */
#ifndef CKT_LDS_H
#define CKT_LDS_H

#include <stdint.h>

#include "ckt/error.h"
#include "ckt/layout.h"
#include "ckt/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_lds_phase_result {
    int nlanes;                  /* active lanes in the phase */
    int8_t lanes[CKT_MAX_LANES];
    int16_t bank[CKT_MAX_LANES]; /* first bank each active lane touches */
    int ways;                    /* the most distinct words any bank serves (0: no active lane) */
} ckt_lds_phase_result;

typedef struct ckt_lds_result {
    int nphases;
    ckt_lds_phase_result phases[CKT_MAX_PHASES];
    int ways;          /* worst phase */
    int cycles;        /* sum of phase costs = the wavefronts the profiler counts */
    int ideal_cycles;  /* phases with an active lane */
} ckt_lds_result;

/* One instruction: addr[l] is lane l's byte address (< 0: inactive lane); nlanes == wave size. */
ckt_status ckt_lds_analyze(const ckt_target *t, const ckt_lds_instr *in, const int64_t *addr, int nlanes, ckt_lds_result *out, ckt_error *err);

/* Where a tile lives in LDS: a layout, optionally swizzled (sw.b == 0 means none). */
typedef struct ckt_lds_tensor {
    ckt_layout layout; /* tile index -> element offset */
    ckt_swizzle sw;
    int64_t sw_offset;
    int elem_bytes;
} ckt_lds_tensor;

/* A whole tile access: thread_map (thread, value) -> tile index of the first element of each
 * vector of `vector` elements (contiguous in memory). Every (wave, value) pair is one instruction. */
typedef struct ckt_lds_tensor_result {
    int instructions;
    int ways, cycles, ideal_cycles; /* totals over instructions (ways: worst) */
    ckt_lds_result first_worst;     /* the phases of the worst instruction */
} ckt_lds_tensor_result;
ckt_status ckt_lds_analyze_tensor(const ckt_target *t, const ckt_lds_tensor *lt, const ckt_layout *thread_map, int64_t vector, int is_write,
                                  ckt_lds_tensor_result *out, ckt_error *err);

/* Remedies. Row padding of a rank-2 (rows, cols) layout by `banks` banks per row. */
ckt_status ckt_lds_pad(const ckt_layout *l, int banks, int bank_bytes, int elem_bytes, ckt_layout *out, ckt_error *err);
/* The XOR preshuffle of seed 004 as a swizzle over a row-major (rows, k_per_block) tile in elements:
 * col' = (row mod (KPerBlock/KPack)) xor col, in units of KPack. */
ckt_status ckt_lds_xor_preshuffle(int64_t k_per_block, int64_t k_pack, ckt_swizzle *out, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
