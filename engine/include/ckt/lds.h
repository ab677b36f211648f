/* ckt — the LDS / shared-memory bank model (AMD's note on LDS bank conflicts and the XOR
 * preshuffle; NVIDIA's CUDA programming guide) and its remedies. */
#ifndef CKT_LDS_H
#define CKT_LDS_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/error.h"
#include "ckt/layout.h"
#include "ckt/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_lds_phase_result {
    int nlanes; /* active lanes in the phase */
    int8_t lanes[CKT_MAX_LANES];
    int16_t bank[CKT_MAX_LANES]; /* first bank each active lane touches */
    int ways;                    /* the most distinct words any bank serves (0: no active lane) */
} ckt_lds_phase_result;

typedef struct ckt_lds_result {
    int nphases;
    ckt_lds_phase_result phases[CKT_MAX_PHASES];
    int ways;         /* worst phase */
    int cycles;       /* sum of phase costs = the wavefronts the profiler counts */
    int ideal_cycles; /* phases with an active lane */
} ckt_lds_result;

/* One instruction: addr[l] is lane l's byte address (< 0: inactive lane); nlanes == wave size. */
ckt_status ckt_lds_analyze(const ckt_target *t, const ckt_lds_instr *in, const int64_t *addr,
                           int nlanes, ckt_lds_result *out, ckt_error *err);

/* Where a tile lives in LDS: a layout, optionally swizzled (sw.b == 0 means none). */
typedef struct ckt_lds_tensor {
    ckt_layout layout; /* tile index -> element offset */
    ckt_swizzle sw;
    int64_t sw_offset;
    int elem_bytes;
} ckt_lds_tensor;

/* A whole tile access: thread_map (thread, value) -> tile index of the first element of each
 * vector of `vector` elements (contiguous in memory). Every (wave, value) pair is one instruction
 * of vector x elem_bytes per lane: 4, 8 or 16 bytes, or 1 or 2 (analysed as the 32-bit access of
 * the word, where lanes of one word share it). */
typedef struct ckt_lds_tensor_result {
    int instructions;
    int ways, cycles, ideal_cycles; /* totals over instructions (ways: worst) */
    ckt_lds_result first_worst;     /* the phases of the worst instruction */
    const char *instr; /* the instruction table used (1- and 2-byte accesses: the 32-bit one) */
    int access_bytes;  /* vector x element bytes per lane */
} ckt_lds_tensor_result;
ckt_status ckt_lds_analyze_tensor(const ckt_target *t, const ckt_lds_tensor *lt,
                                  const ckt_layout *thread_map, int64_t vector, int is_write,
                                  ckt_lds_tensor_result *out, ckt_error *err);

/* Remedies. Row padding of a rank-2 (rows, cols) layout by `banks` banks per row. */
ckt_status ckt_lds_pad(const ckt_layout *l, int banks, int bank_bytes, int elem_bytes,
                       ckt_layout *out, ckt_error *err);
/* The XOR preshuffle of AMD's note on LDS bank conflicts as a swizzle over a row-major (rows,
 * k_per_block) tile in elements: col' = (row mod (KPerBlock/KPack)) xor col, in units of KPack. */
ckt_status ckt_lds_xor_preshuffle(int64_t k_per_block, int64_t k_pack, ckt_swizzle *out,
                                  ckt_error *err);

/* The search of ckt.lds.find_swizzle: swizzles Sw<B,M,S> (no LDS cost unless the swizzle's
 * 2^(M+B) block does not divide the tile) and row paddings (LDS cost) for a write pattern and
 * a read pattern over one tile. */
typedef struct ckt_lds_pattern {
    ckt_layout thread_map; /* (thread, value) -> tile index, as in ckt_lds_analyze_tensor */
    int64_t vector;        /* elements per lane and instruction */
} ckt_lds_pattern;

typedef struct ckt_lds_search_opts {
    int b_min, b_max, m_min, m_max, s_min,
        s_max;             /* swizzle ranges (inclusive); S >= B is implied */
    int max_padding_banks; /* paddings 1..max, tried after the swizzles */
} ckt_lds_search_opts;
void ckt_lds_search_defaults(
    ckt_lds_search_opts *o); /* B 1..4, M 0..5, S 1..8, padding 0..8 banks */

typedef struct ckt_lds_choice {
    ckt_lds_tensor
        tensor; /* the chosen placement: padded layout and/or swizzle (sw.b == 0: none) */
    int padding_banks;
    int64_t lds_bytes,
        lds_extra_bytes; /* footprint of the choice, and what it costs beyond the plain layout */
    bool conflict_free;  /* every instruction of both patterns runs in its ideal cycles */
    bool has_write, has_read;
    ckt_lds_tensor_result write, read;
    int candidates; /* placements analysed */
} ckt_lds_choice;

/* write or read may be NULL (not both). Order of preference: fewest cycles (write + read), then
 * least LDS, then the first found (no change, then swizzles by B, M, S ascending, then paddings).
 * Stops at the first conflict-free choice of least LDS cost. */
ckt_status ckt_lds_find_swizzle(const ckt_target *t, const ckt_layout *layout, int elem_bytes,
                                const ckt_lds_pattern *write, const ckt_lds_pattern *read,
                                const ckt_lds_search_opts *opts, ckt_lds_choice *out,
                                ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
