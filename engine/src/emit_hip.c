/* The HIP dialect (hipRTC, AMD GPUs): threadIdx / blockIdx, __syncthreads, __shared__ LDS,
 * ext_vector loads (one global_load_dwordx4 / ds_read_b128 per 16 bytes: see prelude hip.h). */
#include <stdio.h>

#include "emit_gpu.h"

void ckt_emit_gpu_open(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes, bool dynamic_lds)
{
    ckt_sb_printf(s, "extern \"C\" __global__ void __launch_bounds__(%lld) %s(",
                  (long long)(ckt_kernel_block(k) + ckt_kernel_producer_threads(k)),
                  ckt_kernel_name(k));
    int n = 0;
    for (int i = 0; i < ckt_kernel_nparams(k); i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (p->specialized) continue;
        if (p->kind == CKT_PARAM_PTR)
            ckt_sb_printf(s, "%s%s%s *__restrict__ %s", n++ ? ", " : "",
                          p->is_const ? "const " : "", ckt_emit_ctype(p->dtype), p->name);
        else if (p->kind == CKT_PARAM_TMAP) /* by value, addressed by the bulk copies */
            ckt_sb_printf(s, "%sconst __grid_constant__ ckt_tmap %s", n++ ? ", " : "", p->name);
        else
            ckt_sb_printf(s, "%sconst %s %s", n++ ? ", " : "", ckt_emit_param_ctype(p->kind),
                          p->name);
    }
    ckt_sb_printf(s, ")\n{\n");
    ckt_sb_printf(s, "    const int tid = (int)threadIdx.x;\n");
    ckt_sb_printf(
        s, "    const ckt_i64 bid_x = blockIdx.x, bid_y = blockIdx.y, bid_z = blockIdx.z;\n");
    ckt_sb_printf(
        s, "    const ckt_i64 nblk_x = gridDim.x, nblk_y = gridDim.y, nblk_z = gridDim.z;\n");
    ckt_sb_printf(s, "    (void)tid; (void)bid_x; (void)bid_y; (void)bid_z; (void)nblk_x; "
                     "(void)nblk_y; (void)nblk_z;\n");
    if (dynamic_lds)
        ckt_sb_printf(s,
                      "    extern __shared__ CKT_ALIGN16 unsigned char ckt_lds[]; /* %lld bytes, "
                      "requested at launch: above the static limit */\n",
                      (long long)lds_bytes);
    else if (lds_bytes > 0)
        ckt_sb_printf(s, "    __shared__ CKT_ALIGN16 unsigned char ckt_lds[%lld];\n",
                      (long long)lds_bytes);
}

void ckt_emit_gpu_close(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes)
{
    (void)s;
    (void)k;
    (void)lds_bytes;
}

const ckt_dialect ckt_dialect_hip = {
    CKT_DIALECT_HIP,   "hip", "hip.h", false, "__syncthreads();", ckt_emit_gpu_open,
    ckt_emit_gpu_close};
