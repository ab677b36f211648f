/* ckt — Hopper's tensor memory accelerator (TMA): the tensor map of a bulk tensor copy
 * (cp.async.bulk.tensor) of a global tile into a swizzled LDS tile, computed from the global
 * tensor's ckt layout and the LDS tile's layout and swizzle.
 *
 * The driver encodes a tensor map with cuTensorMapEncodeTiled (CUDA driver API, "Tensor Map
 * Object Management"): the element type, the rank, per dimension (innermost first) the global
 * size, the global strides in bytes of every dimension but the innermost (multiples of 16, below
 * 2^40), the box (the tile copied, at most 256 per dimension, its innermost extent a multiple of
 * 16 bytes), element strides (1 here), no interleave, the swizzle (none, 32B, 64B, 128B: the box's
 * innermost extent at most that many bytes), L2 promotion and the out-of-bounds fill (zeros). The
 * copy writes the box into shared memory row by row (innermost dimension contiguous), the rows
 * permuted by the swizzle: Sw<B,4,3> on byte addresses, i.e. ckt.swizzle(B, 4 - log2(element
 * bytes), 3) on element offsets, as for wgmma's descriptors (ckt/wgmma.h). ckt_tma_plan checks
 * that the LDS tile's ckt layout is exactly that, element by element, so the tile a TMA copy
 * fills is the tile the layout algebra, the bank model and wgmma's descriptors describe. */
#ifndef CKT_TMA_H
#define CKT_TMA_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/dtype.h"
#include "ckt/error.h"
#include "ckt/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKT_TMA_MAX_RANK 5

typedef struct ckt_tma_map {
    int rank;
    int data_type; /* CUtensorMapDataType: 6 FLOAT16, 9 BFLOAT16, 7 FLOAT32, ... */
    uint64_t global_dim[CKT_TMA_MAX_RANK];        /* innermost first */
    uint64_t global_stride[CKT_TMA_MAX_RANK - 1]; /* bytes, of dimensions 1..rank-1 */
    uint32_t box_dim[CKT_TMA_MAX_RANK];           /* innermost first */
    uint32_t element_stride[CKT_TMA_MAX_RANK];
    int swizzle;           /* CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B */
    int swizzle_bytes;     /* 0, 32, 64, 128 */
    int l2_promotion;      /* CUtensorMapL2promotion: 2 = 128B */
    int64_t box_bytes;     /* bytes one copy writes (the mbarrier's transaction count) */
    int inner;             /* the ckt mode that is the innermost (stride-1) dimension */
    int64_t lds_alignment; /* the byte boundary the LDS tile must start on */
} ckt_tma_map;

/* The tensor map of copies of `tile` boxes of a global tensor: `global` is the global tensor's
 * layout in elements with its sizes at launch (rank 1..5, one mode of stride 1, the innermost),
 * `lds` the LDS tile's layout over the box (same rank, mode i of the box = mode i of the global
 * tensor), `sw` its swizzle on element offsets (NULL: none). Refusals (CKT_EINVAL) name the rule.
 */
ckt_status ckt_tma_plan(const ckt_layout *global, ckt_dtype dtype, const ckt_layout *lds,
                        const ckt_swizzle *sw, ckt_tma_map *out, ckt_error *err);
/* The same; dims (NULL: the contiguous mode, then the others by increasing stride) the map's
 * dimensions innermost first as modes of the tensor, the first of stride 1 (a kernel fixes the
 * order its copies give coordinates in, whatever the strides at launch); check_tile false skips
 * the element-by-element check that the LDS tile is the box row by row (it depends on the tile
 * and on which global mode is innermost, not on the sizes: a launch checks it once per innermost
 * mode and skips it afterwards). */
ckt_status ckt_tma_plan_ex(const ckt_layout *global, ckt_dtype dtype, const ckt_layout *lds,
                           const ckt_swizzle *sw, const int *dims, bool check_tile,
                           ckt_tma_map *out, ckt_error *err);

/* Encode the map for a tensor at `global_address` into the 128-byte, 64-byte aligned `out`
 * (a CUtensorMap) through the CUDA driver's cuTensorMapEncodeTiled, loaded at run time.
 * CKT_EUNSUPPORTED when there is no driver (no GPU); CKT_ERUNTIME with the driver's error. */
ckt_status ckt_tma_encode(const ckt_tma_map *m, const void *global_address, void *out,
                          ckt_error *err);

/* Does one bulk tensor copy of a rank-2 box (box[i] elements along mode i of the global tensor,
 * mode `inner` contiguous there) write exactly the LDS tile that the rank-2 `lds` layout (swizzle
 * sw, NULL: none) holds at coordinates origin .. origin + box - 1, in an LDS tensor starting at
 * byte `base`, with further copies at `repeat` bytes from it (its stages; 0: none)? The copy
 * writes the box row by row (the inner mode fastest) from the address of the tile's first
 * element, permuted by its swizzle on absolute addresses, which starts on a boundary of
 * 8 x the swizzle span (128 bytes without one). *swizzle_bytes: the copy's swizzle (0, 32, 64,
 * 128). Refusals (CKT_EINVAL) name the rule and the first element that lands elsewhere. */
ckt_status ckt_tma_check_tile(const ckt_layout *lds, const ckt_swizzle *sw, ckt_dtype dtype,
                              int64_t base, int64_t repeat, const int64_t origin[2],
                              const int64_t box[2], int inner, int *swizzle_bytes, ckt_error *err);

/* The CPU target's tensor map (kernels/prelude/c.h's ckt_tmap): what its emulation of a bulk
 * tensor copy reads, in the 128 bytes of a tensor-map argument. */
typedef struct ckt_tma_cpu_map {
    const void *base;
    int32_t rank, elem_bytes;
    uint64_t dim[CKT_TMA_MAX_RANK];        /* innermost first */
    uint64_t stride[CKT_TMA_MAX_RANK - 1]; /* bytes, of dimensions 1..rank-1 */
    uint32_t box[CKT_TMA_MAX_RANK];
    int32_t swizzle_bytes;
} ckt_tma_cpu_map;

/* Fill the 128 bytes at out (64-byte aligned) with m for a tensor at global_address, for the CPU
 * target's emulation (what ckt_tma_encode does for the GPU). */
ckt_status ckt_tma_cpu_encode(const ckt_tma_map *m, ckt_dtype dtype, const void *global_address,
                              void *out, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
