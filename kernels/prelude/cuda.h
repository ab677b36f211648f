/* ckt device prelude — CUDA dialect (NVRTC, NVIDIA GPUs). No headers: NVRTC provides the
 * built-in thread ids, vector types (uint4 is one 128-bit access), __syncthreads, __shared__. */
/* ckt_embed: gpu.h */

#define CKT_FN static __device__ __forceinline__
/* a window left its tensor: the access is skipped (the host checks the common cases first) */
#define CKT_FAULT(n) ((void)(n))
#define CKT_INF (__int_as_float(0x7f800000))
#define CKT_NAN (__int_as_float(0x7fc00000))
#define CKT_ALIGN16 __align__(16)

CKT_FN ckt_u32 ckt_f32_bits(float f) { return __float_as_uint(f); }
CKT_FN float ckt_bits_f32(ckt_u32 u) { return __uint_as_float(u); }
#define CKT_RAW16 uint4 raw
#define CKT_RAW8 uint2 raw
#define CKT_RAW4 ckt_u32 raw
#define CKT_LD16(v, p) ((v).raw = *(const uint4 *)(p))
#define CKT_LD8(v, p) ((v).raw = *(const uint2 *)(p))
#define CKT_LD4(v, p) ((v).raw = *(const ckt_u32 *)(p))
#define CKT_ST16(p, v) (*(uint4 *)(p) = (v).raw)
#define CKT_ST8(p, v) (*(uint2 *)(p) = (v).raw)
#define CKT_ST4(p, v) (*(ckt_u32 *)(p) = (v).raw)
/* cp.async (sm_80+): a global -> shared copy that does not pass through registers; src-size 0
 * reads nothing and zero-fills (a masked element past a padded edge). 16 bytes bypass L1 (.cg). */
CKT_FN ckt_u32 ckt_smem_addr(const void *p) { ckt_u32 a; asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p)); return a; }
CKT_FN void ckt_cp_async16(void *d, const void *s, bool p) { asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(ckt_smem_addr(d)), "l"(s), "r"(p ? 16 : 0) : "memory"); }
CKT_FN void ckt_cp_async8(void *d, const void *s, bool p) { asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" :: "r"(ckt_smem_addr(d)), "l"(s), "r"(p ? 8 : 0) : "memory"); }
CKT_FN void ckt_cp_async4(void *d, const void *s, bool p) { asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(ckt_smem_addr(d)), "l"(s), "r"(p ? 4 : 0) : "memory"); }
#define CKT_CP_ASYNC(n, d, s, p) ckt_cp_async##n((d), (s), (p))
/* the same with the destination as a 32-bit shared address and an immediate byte offset */
#define CKT_CP_KIND_16 "cg"
#define CKT_CP_KIND_8 "ca"
#define CKT_CP_KIND_4 "ca"
#define CKT_CP_ASYNC_AT(n, d, imm, s, p) \
    asm volatile("cp.async." CKT_CP_KIND_##n ".shared.global [%0+" #imm "], [%1], " #n ", %2;" :: "r"(d), "l"(s), "r"((p) ? n : 0) : "memory")
#define CKT_CP_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define CKT_CP_WAIT(n) asm volatile("cp.async.wait_group %0;" :: "n"(n) : "memory")
#define ckt_expf expf
/* the hardware's base-2 exponential alone (MUFU.EX2): results below 2^-126 flush to 0. exp2f is
 * ex2.approx without .ftz, which ptxas wraps in a scaling for subnormal results: three more
 * instructions an exponential, 192 a key tile a thread in the attention kernel's softmax */
CKT_FN float ckt_exp2f(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
#define ckt_logf logf
#define ckt_sqrtf sqrtf
/* Hardware conversions (cvt.rn: round to nearest even, the same results as the C dialect's integer
 * code for every non-NaN value; NaNs come out as the canonical quiet NaN). */
#define CKT_HW_F16 1
#define CKT_HW_BF16 1
/* bf16 -> f32 as one instruction the compiler does not see through (like cvt.f32.f16 above): as
 * a plain shift, NVVM converted a row's 32 bf16 values to f32 once and kept them all live, and the
 * 1024-thread layernorm (64 registers a thread) spilled 476 bytes and ran at a third of the f16
 * kernel's speed on an H100; this way each use converts again, as with f16 */
#define CKT_BF16_TO_F32_DEFINED 1
CKT_FN float ckt_bf16_to_f32(ckt_u16 h) { float f; asm("mov.b32 %0, {%2, %1};" : "=f"(f) : "h"(h), "h"((ckt_u16)0)); return f; }
CKT_FN float ckt_f16_to_f32(ckt_u16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
CKT_FN ckt_u16 ckt_f32_to_f16(float f) { ckt_u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
CKT_FN ckt_u16 ckt_f32_to_bf16(float f) { ckt_u16 h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
/* two values as one word of 16-bit values, the first in the low half (the x2 conversions put
 * their first source in the high half); rounding as above */
CKT_FN ckt_u32 ckt_f16x2(float lo, float hi) { ckt_u32 w; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo)); return w; }
CKT_FN ckt_u32 ckt_bf16x2(float lo, float hi) { ckt_u32 w; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo)); return w; }
CKT_FN ckt_u32 ckt_u16x2(ckt_u16 lo, ckt_u16 hi) { return (ckt_u32)lo | ((ckt_u32)hi << 16); }
/* stmatrix (sm_90): the warp stores four 8x8 matrices of 16-bit values; register j of lane l holds
 * row l/4, columns 2(l%4) and 2(l%4)+1 of matrix j, and lane l gives the shared address of row l%8
 * of matrix l/8 (16 contiguous bytes) */
#define CKT_STMATRIX4(a, x, y, z, w) \
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(a), "r"(x), "r"(y), "r"(z), "r"(w) : "memory")

/* a lane's value from lane (lane ^ m) of its warp (every lane of the warp takes part): the
 * butterfly step of b:block_reduce{threads = n} */
CKT_FN float ckt_shfl_xor(float x, int m)
{
    float y;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(y) : "f"(x), "r"(m));
    return y;
}

/* Hopper's tensor memory accelerator (sm_90): a tensor map is a 128-byte, 64-byte aligned
 * kernel parameter (CUtensorMap, encoded by the driver at launch); a bulk tensor copy writes a
 * box of it into shared memory and completes on an mbarrier, whose phase ends when its arrivals
 * are made and the bytes they announced (expect_tx) have landed. */
typedef struct __align__(64) { ckt_u64 opaque[16]; } ckt_tmap;
CKT_FN void ckt_mbar_init(ckt_u32 bar, ckt_u32 arrivals) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(arrivals) : "memory"); }
CKT_FN void ckt_mbar_fence_init(void) { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
CKT_FN void ckt_mbar_expect_tx(ckt_u32 bar, ckt_u32 bytes) { asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory"); }
CKT_FN void ckt_tma_load_2d(ckt_u32 dst, const ckt_tmap *map, int c0, int c1, ckt_u32 bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
CKT_FN void ckt_tma_load_3d(ckt_u32 dst, const ckt_tmap *map, int c0, int c1, int c2, ckt_u32 bar)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                 :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar) : "memory");
}
CKT_FN void ckt_tma_load_4d(ckt_u32 dst, const ckt_tmap *map, int c0, int c1, int c2, int c3, ckt_u32 bar)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                 :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar) : "memory");
}
CKT_FN void ckt_tma_load_5d(ckt_u32 dst, const ckt_tmap *map, int c0, int c1, int c2, int c3, int c4, ckt_u32 bar)
{
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                 :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar) : "memory");
}
/* Thread-block clusters: the block's rank in its cluster; a barrier of all the cluster's threads
 * (release / acquire: what each wrote before it is seen after it); a box part copied into the same
 * LDS offset of every block in `mask` (the cluster's ranks), completing on the mbarrier at the same
 * offset in each; each warp arriving once on an mbarrier in each of the first n blocks (its lanes
 * 0..n-1 one block each, through mapa: the address of the same LDS byte in block `lane`). */
CKT_FN ckt_u32 ckt_cluster_rank(void) { ckt_u32 r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
CKT_FN void ckt_cluster_sync(void) { asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory"); }
CKT_FN void ckt_tma_load_2d_multicast(ckt_u32 dst, const ckt_tmap *map, int c0, int c1, ckt_u32 bar, ckt_u16 mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                 :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}
CKT_FN void ckt_tma_load_3d_multicast(ckt_u32 dst, const ckt_tmap *map, int c0, int c1, int c2, ckt_u32 bar, ckt_u16 mask)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;"
                 :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask) : "memory");
}
CKT_FN void ckt_tma_load_4d_multicast(ckt_u32 dst, const ckt_tmap *map, int c0, int c1, int c2, int c3, ckt_u32 bar, ckt_u16 mask)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4, %5}], [%6], %7;"
                 :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar), "h"(mask) : "memory");
}
CKT_FN void ckt_tma_load_5d_multicast(ckt_u32 dst, const ckt_tmap *map, int c0, int c1, int c2, int c3, int c4, ckt_u32 bar, ckt_u16 mask)
{
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;"
                 :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar), "h"(mask) : "memory");
}
CKT_FN void ckt_mbar_arrive_cluster(ckt_u32 bar, ckt_u32 n)
{
    __syncwarp();
    const ckt_u32 lane = threadIdx.x & 31;
    if (lane < n)
        asm volatile("{ .reg .b32 ra; mapa.shared::cluster.u32 ra, %0, %1; mbarrier.arrive.shared::cluster.b64 _, [ra]; }"
                     :: "r"(bar), "r"(lane) : "memory");
}
/* Bulk tensor stores (LDS -> global through the tensor map; what lies outside the tensor is not
 * written), one bulk async-group each; the issuing thread then waits until the group has read
 * its LDS tile, not for the writes to land (they complete on their own, even after the block
 * has exited). */
CKT_FN void ckt_tma_store_2d(const ckt_tmap *map, int c0, int c1, ckt_u32 src)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 :: "l"(map), "r"(c0), "r"(c1), "r"(src) : "memory");
}
CKT_FN void ckt_tma_store_3d(const ckt_tmap *map, int c0, int c1, int c2, ckt_u32 src)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];"
                 :: "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(src) : "memory");
}
CKT_FN void ckt_tma_store_4d(const ckt_tmap *map, int c0, int c1, int c2, int c3, ckt_u32 src)
{
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];"
                 :: "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src) : "memory");
}
CKT_FN void ckt_tma_store_5d(const ckt_tmap *map, int c0, int c1, int c2, int c3, int c4, ckt_u32 src)
{
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];"
                 :: "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(src) : "memory");
}
CKT_FN void ckt_bulk_commit(void) { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
CKT_FN void ckt_bulk_read_wait(void) { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
/* Wait for the phase of this parity. Each try may suspend the thread in hardware for a
 * system-dependent time until the phase completes. Not with an explicit time hint (CUTLASS's ~10
 * ms): on an H100 that made the 8192^3 GEMM 5% slower (763 against 805 TFLOP/s, the producer's
 * and the consumers' waits both woken late). A phase that never completes (a pipeline whose
 * copies or arrivals do not match its waits) traps after 4 s of waiting instead of hanging the
 * device. */
CKT_FN ckt_u32 ckt_mbar_try_wait(ckt_u32 bar, ckt_u32 parity)
{
    ckt_u32 done;
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    return done;
}
CKT_FN ckt_u64 ckt_globaltimer(void) { ckt_u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
CKT_FN void ckt_mbar_wait(ckt_u32 bar, ckt_u32 parity)
{
    if (ckt_mbar_try_wait(bar, parity)) return;
    const ckt_u64 t0 = ckt_globaltimer();
    while (!ckt_mbar_try_wait(bar, parity))
        if (ckt_globaltimer() - t0 > 4000000000ull) __trap();
}
CKT_FN void ckt_mbar_arrive(ckt_u32 bar) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory"); }
/* Fetch a tensor map into the descriptor cache before its first copy. */
CKT_FN void ckt_tma_prefetch(const ckt_tmap *map) { asm volatile("prefetch.tensormap [%0];" :: "l"(map) : "memory"); }
