/* ckt — the CK wrapper's blockwise GEMM pieces in the kernel builder (the CK wrapper GEMM
 * tutorial): GEMM traits (CK's BlockwisGemmXdlTraits_*), the C register tensor
 * (make_blockwise_gemm_xdl_c_vgpr), the C distribution behind the C local partition
 * (make_blockwise_gemm_xdl_c_local_partition) and blockwise_gemm_xdl itself, all derived from
 * the matrix instruction's description (ckt/mma.h).
 *
 * Geometry (CK's): the block tile is MPerBlock x NPerBlock x KPerBlock; A is an MPerBlock x
 * KPerBlock tile in LDS, B an NPerBlock x KPerBlock tile in LDS (the tutorial's N x K; any static
 * layout, swizzled ones included, so either major is a layout); the block's waves form an
 * MWaves x NWaves grid (wave w = wm * NWaves + wn, lanes fastest: thread = w * lanes + lane),
 * MWaves = MPerBlock / (m_per_wave * instr.m), NWaves = NPerBlock / (n_per_wave * instr.n), and
 * MWaves * NWaves * lanes must be the block size. Each wave owns m_per_wave x n_per_wave
 * instruction tiles of C. K advances in steps of instr.k * (k_pack / instr.k_chunk): a lane reads
 * k_pack contiguous K elements of A and of B per step and issues k_pack / k_chunk instructions
 * (CK's KPack: the K order inside a step is permuted the same way for A and B, which a sum over
 * K does not see).
 *
 * Register value order: C value (mi, ni, r) is v = r + c_values * (ni + n_per_wave * mi); the A
 * fragment of one K step holds (mi, kp, r) at r + a_values * (kp + P * mi), B (ni, kp, r) at
 * r + b_values * (kp + P * ni), with P = k_pack / k_chunk. */
#ifndef CKT_GEMM_H
#define CKT_GEMM_H

#include <stdint.h>

#include "ckt/error.h"
#include "ckt/kernel_ir.h"
#include "ckt/mma.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_gemm_traits {
    const ckt_mma *instr;
    int64_t m_per_wave,
        n_per_wave; /* CK's MXdlPerWave, NXdlPerWave: instructions per wave along M and N */
    int64_t k_pack; /* CK's K1 (KPack): contiguous K elements a lane reads per step */
} ckt_gemm_traits;

/* instr by name (ckt_mma_get); m_per_wave, n_per_wave >= 1; k_pack a multiple of instr.k_chunk
 * (0: instr.k_chunk). */
ckt_status ckt_gemm_traits_make(const char *instr, int64_t m_per_wave, int64_t n_per_wave,
                                int64_t k_pack, ckt_gemm_traits *out, ckt_error *err);
/* CK's presets by name, "32x32Xdl_4x2XdlPerWave_8K1" or
 * "BlockwisGemmXdlTraits_32x32Xdl_4x2XdlPerWave_8K1"
 * (<M>x<N>Xdl_<MX>x<NX>XdlPerWave_<K1>K1): the MFMA of that shape for dtype f16 or bf16 (bf16_1k).
 */
ckt_status ckt_gemm_traits_preset(const char *name, ckt_dtype dtype, ckt_gemm_traits *out,
                                  ckt_error *err);

typedef struct ckt_gemm_geom {
    int64_t mpb, npb, kpb;    /* the block tile */
    int64_t waves_m, waves_n; /* the wave grid */
    int64_t pack;             /* P = k_pack / k_chunk: instructions per K step */
    int64_t k_step;           /* instr.k * P: K elements per step */
    int64_t threads;
} ckt_gemm_geom;

/* Checks that the traits divide the tile and that the waves fill `threads`; kpb 0: any multiple
 * of the K step. Errors name the argument (MPerBlock, NPerBlock, KPerBlock, threads). */
ckt_status ckt_gemm_geometry(const ckt_gemm_traits *t, int64_t mpb, int64_t npb, int64_t kpb,
                             int64_t threads, ckt_gemm_geom *out, ckt_error *err);
/* The TV layout text of the block-level distributions: 'C' over the MPerBlock x NPerBlock tile,
 * 'A' over MPerBlock x k_step (one K step), 'B' over NPerBlock x k_step. */
ckt_status ckt_gemm_tv(const ckt_gemm_traits *t, const ckt_gemm_geom *g, char operand, char *buf,
                       size_t cap, ckt_error *err);
ckt_status ckt_gemm_dist(const ckt_gemm_traits *t, const ckt_gemm_geom *g, char operand,
                         ckt_dist *out, ckt_error *err);

/* NVIDIA (instr.ldmatrix, k_pack == k_chunk): the addresses of the ldmatrix loads of 'A' (x4 per
 * M repeat) or 'B' (x4 per two N repeats when a wave has an even number, else x2 per repeat)
 * over the same windows as ckt_gemm_dist: thread t points at the 8-element K row that lane
 * (t % 32) supplies for matrix (lane / 8); value j + 8 * load is element j of that row. 'a' / 'b':
 * the same fragments from an M- / N-contiguous tile by ldmatrix.trans: the lane points at an
 * 8-element M / N row at one K, and value j + 8 * load is element j along M / N. CKT_EUNSUPPORTED
 * when the instruction or the K pack has no ldmatrix form. */
ckt_status ckt_gemm_ldmatrix_dist(const ckt_gemm_traits *t, const ckt_gemm_geom *g, char operand,
                                  ckt_dist *out, ckt_error *err);

/* Builder: the C register tensor (f32, the C distribution) of an MPerBlock x NPerBlock block tile
 * (make_blockwise_gemm_xdl_c_vgpr); *dist (may be NULL) gets the C distribution's index, which
 * the C local partition uses. */
ckt_status ckt_kernel_gemm_c_vgpr(ckt_kernel *k, const ckt_gemm_traits *t, int64_t mpb, int64_t npb,
                                  int *reg, int *dist, ckt_error *err);
ckt_status ckt_kernel_gemm_c_dist(ckt_kernel *k, const ckt_gemm_traits *t, int64_t mpb, int64_t npb,
                                  int *dist, ckt_error *err);
/* c_reg += A B over one LDS block tile (blockwise_gemm_xdl): a K-step loop whose body loads the
 * A and B fragments from LDS (vectorized where the layouts allow) and issues the instructions. */
ckt_status ckt_kernel_blockwise_gemm(ckt_kernel *k, int a_lds, int b_lds, int c_reg,
                                     const ckt_gemm_traits *t, ckt_error *err);
/* c_reg = A B over the block tile, c_reg's old values ignored: wgmma's first K step with scale-d
 * 0 (no instruction touches the accumulators before it); the other instructions have no such
 * input, so c_reg is cleared first. */
ckt_status ckt_kernel_blockwise_gemm_zero(ckt_kernel *k, int a_lds, int b_lds, int c_reg,
                                          const ckt_gemm_traits *t, ckt_error *err);
/* The same where the kernel expression cond is nonzero, c_reg += A B otherwise: on wgmma the
 * first K step's scale-d, elsewhere a clear under `if (cond)` — so that the first K slice of a
 * loop can start the sum without a peeled iteration. */
ckt_status ckt_kernel_blockwise_gemm_zero_if(ckt_kernel *k, int a_lds, int b_lds, int c_reg,
                                             const ckt_gemm_traits *t, ckt_expr_id cond,
                                             ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
