/* ckt device prelude — HIP dialect (hipRTC, AMD GPUs). No headers. Vectors are clang
 * ext_vector types so a 16-byte access is one global_load_dwordx4 / ds_read_b128. */
#ifndef HIP_INCLUDE_HIP_HIP_RUNTIME_H
/* Compiled without hipRTC's runtime header (ckt runs hipRTC's comgr pipeline itself for sources
 * built on this prelude: parsing that header is ~80 ms of every compile, see docs/jit.md). What
 * the generated code uses, defined as that header defines it, so the code object is the same.
 * Under hipRTC (or hipcc) the header is there and these are skipped. */
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
extern "C" __device__ __attribute__((const)) unsigned long __ockl_get_local_id(unsigned);
extern "C" __device__ __attribute__((const)) unsigned long __ockl_get_group_id(unsigned);
extern "C" __device__ __attribute__((const)) unsigned long __ockl_get_num_groups(unsigned);
extern "C" __device__ void __atomic_work_item_fence(unsigned, int, int);
#define CKT_HIP_ID3(T, f)                                                                         \
    struct T {                                                                                    \
        struct X { __device__ operator unsigned() const { return (unsigned)f(0); } } x;           \
        struct Y { __device__ operator unsigned() const { return (unsigned)f(1); } } y;           \
        struct Z { __device__ operator unsigned() const { return (unsigned)f(2); } } z;           \
    }
CKT_HIP_ID3(ckt_hip_thread_idx, __ockl_get_local_id);
CKT_HIP_ID3(ckt_hip_block_idx, __ockl_get_group_id);
CKT_HIP_ID3(ckt_hip_grid_dim, __ockl_get_num_groups);
static constexpr ckt_hip_thread_idx threadIdx{};
static constexpr ckt_hip_block_idx blockIdx{};
static constexpr ckt_hip_grid_dim gridDim{};
/* the header's __syncthreads: a work-group barrier between LDS release / acquire fences */
static __device__ inline __attribute__((convergent)) void __syncthreads()
{
    __atomic_work_item_fence(1u /* local memory */, 3 /* release */, 1 /* work group */);
    __builtin_amdgcn_s_barrier();
    __atomic_work_item_fence(1u, 2 /* acquire */, 1);
}
#endif
/* ckt_embed: gpu.h */
typedef unsigned int ckt_u32x4 __attribute__((ext_vector_type(4)));
typedef unsigned int ckt_u32x2 __attribute__((ext_vector_type(2)));

#define CKT_FN static __device__ inline __attribute__((always_inline))
/* a window left its tensor: the access is skipped (the host checks the common cases first) */
#define CKT_FAULT(n) ((void)(n))
#define CKT_INF (__builtin_inff())
#define CKT_NAN (__builtin_nanf(""))
#define CKT_ALIGN16 __attribute__((aligned(16)))

CKT_FN ckt_u32 ckt_f32_bits(float f) { return __builtin_bit_cast(ckt_u32, f); }
CKT_FN float ckt_bits_f32(ckt_u32 u) { return __builtin_bit_cast(float, u); }
#define CKT_RAW16 ckt_u32x4 raw
#define CKT_RAW8 ckt_u32x2 raw
#define CKT_RAW4 ckt_u32 raw
#define CKT_LD16(v, p) ((v).raw = *(const ckt_u32x4 *)(p))
#define CKT_LD8(v, p) ((v).raw = *(const ckt_u32x2 *)(p))
#define CKT_LD4(v, p) ((v).raw = *(const ckt_u32 *)(p))
#define CKT_ST16(p, v) (*(ckt_u32x4 *)(p) = (v).raw)
#define CKT_ST8(p, v) (*(ckt_u32x2 *)(p) = (v).raw)
#define CKT_ST4(p, v) (*(ckt_u32 *)(p) = (v).raw)
#define ckt_expf __builtin_expf
#define ckt_exp2f __builtin_exp2f
#define ckt_logf __builtin_logf
#define ckt_sqrtf __builtin_sqrtf
#define fminf __builtin_fminf
#define fmaxf __builtin_fmaxf
#define fabsf __builtin_fabsf
/* f16 through the hardware (_Float16: v_cvt_f32_f16 / v_cvt_f16_f32, round to nearest even);
 * gfx90a has no bf16 conversion instruction, so bf16 keeps the exact integer code. */
#define CKT_HW_F16 1
/* a lane's value from lane (lane ^ m) of its wave, by ds_bpermute (what the runtime header's
 * __shfl_xor does): the butterfly step of b:block_reduce{threads = n} */
CKT_FN float ckt_shfl_xor(float x, int m)
{
    int lane = (int)__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
    return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane ^ m) << 2, __builtin_bit_cast(int, x)));
}
CKT_FN float ckt_f16_to_f32(ckt_u16 h) { return (float)__builtin_bit_cast(_Float16, h); }
CKT_FN ckt_u16 ckt_f32_to_f16(float f) { return __builtin_bit_cast(ckt_u16, (_Float16)f); }
