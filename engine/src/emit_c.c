/* The C dialect (the CPU target): the CPU kernel ABI of ckt/jit.h. One call runs one block;
 * barrier-free regions become loops over the block's threads, registers are arrays indexed by
 * the thread, a barrier is the boundary between two such loops. */
#include <stdio.h>

#include "emit_internal.h"

static void open_kernel(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes, bool dynamic_lds)
{
    (void)lds_bytes;
    (void)dynamic_lds;
    ckt_sb_printf(s, "void %s(void *const *args, const ckt_cpu_launch *launch)\n{\n",
                  ckt_kernel_name(k));
    int arg = 0;
    for (int i = 0; i < ckt_kernel_nparams(k); i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (p->specialized) continue;
        if (p->kind == CKT_PARAM_PTR) {
            const char *c = p->is_const ? "const " : "";
            ckt_sb_printf(s, "    %s%s *const %s = *(%s%s *const *)args[%d];\n", c,
                          ckt_emit_ctype(p->dtype), p->name, c, ckt_emit_ctype(p->dtype), arg);
        } else if (p->kind == CKT_PARAM_TMAP) {
            ckt_sb_printf(s, "    const ckt_tmap *const %s = (const ckt_tmap *)args[%d];\n",
                          p->name, arg);
        } else {
            const char *t = ckt_emit_param_ctype(p->kind);
            ckt_sb_printf(s, "    const %s %s = *(const %s *)args[%d];\n", t, p->name, t, arg);
        }
        ckt_sb_printf(s, "    (void)%s;\n", p->name);
        arg++;
    }
    ckt_sb_printf(s, "    const ckt_i64 bid_x = launch->block_id[0], bid_y = launch->block_id[1], "
                     "bid_z = launch->block_id[2];\n");
    ckt_sb_printf(s, "    const ckt_i64 nblk_x = launch->grid[0], nblk_y = launch->grid[1], nblk_z "
                     "= launch->grid[2];\n");
    ckt_sb_printf(s, "    unsigned char *const ckt_lds = (unsigned char *)launch->lds;\n");
    ckt_sb_printf(s, "    (void)bid_x; (void)bid_y; (void)bid_z; (void)nblk_x; (void)nblk_y; "
                     "(void)nblk_z; (void)ckt_lds;\n");
}

static void close_kernel(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes)
{
    ckt_sb_printf(s, "const unsigned long long %s__lds_bytes = %lld;\n", ckt_kernel_name(k),
                  (long long)lds_bytes);
    /* the parameters' kinds as ckt_param_kind values (ckt/jit.h), which launches are checked
     * against */
    int n = 0;
    for (int i = 0; i < ckt_kernel_nparams(k); i++) n += !ckt_kernel_param(k, i)->specialized;
    if (ckt_kernel_cluster_size(k) > 1) /* (the runtime checks the clusters' multicast copies) */
        ckt_sb_printf(s, "const long long %s__cluster = %lld;\n", ckt_kernel_name(k),
                      (long long)ckt_kernel_cluster_size(k));
    ckt_sb_printf(s, "const int %s__nparams = %d;\n", ckt_kernel_name(k), n);
    ckt_sb_printf(s, "const int %s__param_kinds[%d] = {", ckt_kernel_name(k), n ? n : 1);
    n = 0;
    for (int i = 0; i < ckt_kernel_nparams(k); i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (p->specialized) continue;
        ckt_sb_printf(s, "%s%d /* %s %s */", n++ ? ", " : "", (int)p->kind,
                      ckt_param_kind_name(p->kind), p->name);
    }
    ckt_sb_printf(s, "%s};\n", n ? "" : "-1 /* none */");
}

/* the thread loops run one after the other: the loop boundary is the barrier */
static void barrier(ckt_emit_out *o, const ckt_kernel *k, const char *why)
{
    (void)k;
    ckt_emit_put(o, "/* barrier (%s): the thread loops run one after the other */", why);
}

/* the producer warp runs one pass ahead of the block's threads: its copies land at the waits
 * that need them, checked against the releases it waited for (prelude c.h) */
static void producer_open(ckt_emit_out *o, const ckt_kernel *k)
{
    (void)k;
    ckt_emit_put(
        o, "{ /* the producer warp, emulated: it runs ahead, its copies land at the waits */");
    o->ind++;
}

static void producer_close(ckt_emit_out *o, const ckt_kernel *k)
{
    (void)k;
    o->ind--;
    ckt_emit_put(o, "}");
}

/* registers are arrays indexed by the thread */
static void declare_regs(ckt_emit_out *o, const ckt_ktensor *t, int64_t n, int64_t block)
{
    ckt_emit_put(o, "%s %s[%lld][%lld]; /* registers: %lld per thread */", ckt_emit_ctype(t->dtype),
                 t->name, (long long)block, (long long)n, (long long)n);
}

static void reg(char *buf, size_t cap, const char *name, int64_t v)
{
    snprintf(buf, cap, "%s[tid][%lld]", name, (long long)v);
}

/* the asynchronous copies in flight, queued until the wait that needs them */
static void async_state(ckt_emit_out *o, bool open)
{
    if (open)
        ckt_emit_put(o, "ckt_cp_queue ckt_cpq = {0, 0, 0, 0}; /* asynchronous copies in flight "
                        "(emulated) */");
    else
        ckt_emit_put(o, "free(ckt_cpq.e); /* copies never waited for never land */");
}

const ckt_frame_ops ckt_frame_c = {
    .open_kernel = open_kernel,
    .close_kernel = close_kernel,
    .thread_loops = true,
    .barrier = barrier,
    .producer_open = producer_open,
    .producer_close = producer_close,
    .declare_regs = declare_regs,
    .reg = reg,
};

const ckt_dialect ckt_dialect_c = {
    .kind = CKT_DIALECT_C,
    .name = "c",
    .prelude = "c.h",
    .frame = &ckt_frame_c,
    .async_state = async_state,
    .mma = ckt_emit_mma_c,
    .wgmma = &ckt_wgmma_c,
    .bulk = &ckt_bulk_c,
};
