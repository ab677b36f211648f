/* The CUDA dialect (NVRTC, NVIDIA GPUs): threadIdx / blockIdx, __syncthreads, __shared__,
 * uint4 loads and stores (one 128-bit access per 16 bytes: see prelude cuda.h); shared-memory
 * addresses as a per-thread base plus immediates (cp.async, ldmatrix), mma.sync, wgmma and bulk
 * tensor copies by inline PTX. */
#include "emit_internal.h"

static bool has_op(const ckt_kernel *k, ckt_kop_kind kind)
{
    for (int i = 0; i < ckt_kernel_nops(k); i++)
        if (ckt_kernel_op(k, i)->kind == kind) return true;
    return false;
}

/* wgmma and bulk copies swizzle absolute addresses: the LDS starts on a 1024-byte boundary */
static void preamble(ckt_sb *s, const ckt_kernel *k)
{
    if (has_op(k, CKT_OP_WGMMA) || ckt_kernel_ntmas(k) > 0)
        ckt_sb_printf(
            s, "#undef CKT_ALIGN16\n#define CKT_ALIGN16 __align__(1024) /* wgmma and bulk copies "
               "swizzle absolute addresses: the LDS starts on a 1024-byte boundary */\n");
}

/* wgmma and bulk stores read LDS through the async proxy: the copies waited for and the threads'
 * stores must become visible to it */
static void async_waited(ckt_emit_out *o, const ckt_kernel *k)
{
    if (has_op(k, CKT_OP_WGMMA) || has_op(k, CKT_OP_TMA_STORE))
        ckt_emit_put(o, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); /* the "
                        "copies become visible to wgmma */");
}

const ckt_dialect ckt_dialect_cuda = {
    .kind = CKT_DIALECT_CUDA,
    .name = "cuda",
    .prelude = "cuda.h",
    .preamble = preamble,
    .frame = &ckt_frame_gpu,
    .no_unroll = "#pragma unroll 1",
    .lds_immediates = true,
    .ldmatrix = true,
    .masked_reads_nothing = true, /* cp.async with src-size 0; no mask-free second form */
    .async_waited = async_waited,
    .mma = ckt_emit_mma_cuda,
    .wgmma = &ckt_wgmma_cuda,
    .bulk = &ckt_bulk_cuda,
};
