/* What the HIP and CUDA dialects share (their C++ is the same here): the kernel's frame
 * (ckt_frame_gpu: the signature and prologue, the barrier, the producer warp's region, registers
 * as per-thread arrays), which both dialect tables name. */
#include <stdio.h>

#include "emit_internal.h"

static void gpu_open(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes, bool dynamic_lds)
{
    char cluster[48] = "";
    if (ckt_kernel_cluster_size(k) > 1) /* (a compile-time cluster: any launch runs it) */
        snprintf(cluster, sizeof cluster, "__cluster_dims__(%lld, 1, 1) ",
                 (long long)ckt_kernel_cluster_size(k));
    ckt_sb_printf(s, "extern \"C\" __global__ void %s__launch_bounds__(%lld) %s(", cluster,
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

static void gpu_close(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes)
{
    (void)s;
    (void)k;
    (void)lds_bytes;
}

static void barrier(ckt_emit_out *o, const ckt_kernel *k, const char *why)
{
    if (ckt_kernel_producer_threads(k) > 0) /* named barrier 1: the producer warp never joins */
        ckt_emit_put(o, "asm volatile(\"bar.sync 1, %lld;\" ::: \"memory\"); /* %s */",
                     (long long)ckt_kernel_block(k), why);
    else
        ckt_emit_put(o, "__syncthreads(); /* %s */", why);
}

/* the warp (or warpgroup) launched beside the block's threads, one elected thread of it issuing;
 * a warpgroup first gives its registers back (setmaxnreg.dec: every thread of it), and the block's
 * warpgroups take them (setmaxnreg.inc) as their part begins */
static void producer_open(ckt_emit_out *o, const ckt_kernel *k)
{
    int64_t block = ckt_kernel_block(k);
    bool wg = ckt_kernel_consumer_registers(k) > 0;
    ckt_emit_put(
        o, "if (tid >= %lld) { /* the producer %s: bulk copies ahead of the block's threads */",
        (long long)block, wg ? "warpgroup" : "warp");
    o->ind++;
    if (wg)
        ckt_emit_put(o,
                     "asm volatile(\"setmaxnreg.dec.sync.aligned.u32 %d;\"); /* its registers "
                     "to the block's warpgroups */",
                     CKT_PRODUCER_REGISTERS);
    ckt_emit_put(o, "if (tid == %lld) { /* one elected thread issues */", (long long)block);
    o->ind++;
}

static void producer_close(ckt_emit_out *o, const ckt_kernel *k)
{
    bool wg = ckt_kernel_consumer_registers(k) > 0;
    o->ind--;
    ckt_emit_put(o, "}");
    ckt_emit_put(o, "return; /* the producer %s is done: what follows is the block's threads' */",
                 wg ? "warpgroup" : "warp");
    o->ind--;
    ckt_emit_put(o, "}");
    if (wg)
        ckt_emit_put(o,
                     "asm volatile(\"setmaxnreg.inc.sync.aligned.u32 %lld;\"); /* the producer's "
                     "registers: %lld a thread of the block's warpgroups */",
                     (long long)ckt_kernel_consumer_registers(k),
                     (long long)ckt_kernel_consumer_registers(k));
}

static void declare_regs(ckt_emit_out *o, const ckt_ktensor *t, int64_t n, int64_t block)
{
    (void)block;
    ckt_emit_put(o, "%s %s[%lld]; /* registers%s */", ckt_emit_ctype(t->dtype), t->name,
                 (long long)n, n < t->nvalues ? ": one pass's values" : "");
}

static void reg(char *buf, size_t cap, const char *name, int64_t v)
{
    snprintf(buf, cap, "%s[%lld]", name, (long long)v);
}

const ckt_frame_ops ckt_frame_gpu = {
    .open_kernel = gpu_open,
    .close_kernel = gpu_close,
    .barrier = barrier,
    .producer_open = producer_open,
    .producer_close = producer_close,
    .declare_regs = declare_regs,
    .reg = reg,
};
