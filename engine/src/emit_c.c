/* The C dialect (the CPU target): the CPU kernel ABI of ckt/jit.h. One call runs one block;
 * barrier-free regions become loops over the block's threads, registers are arrays indexed by
 * the thread, a barrier is the boundary between two such loops. */
#include "emit_internal.h"

static const char *kind_name(ckt_param_kind k)
{
    return k == CKT_PARAM_I32 ? "i32" : k == CKT_PARAM_I64 ? "i64" : k == CKT_PARAM_F32 ? "f32" : "ptr";
}

static void open_kernel(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes, bool dynamic_lds)
{
    (void)lds_bytes;
    (void)dynamic_lds;
    ckt_sb_printf(s, "void %s(void *const *args, const ckt_cpu_launch *launch)\n{\n", ckt_kernel_name(k));
    int arg = 0;
    for (int i = 0; i < ckt_kernel_nparams(k); i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (p->specialized) continue;
        if (p->kind == CKT_PARAM_PTR) {
            const char *c = p->is_const ? "const " : "";
            ckt_sb_printf(s, "    %s%s *const %s = *(%s%s *const *)args[%d];\n", c, ckt_emit_ctype(p->dtype), p->name, c, ckt_emit_ctype(p->dtype), arg);
        } else {
            const char *t = ckt_emit_param_ctype(p->kind);
            ckt_sb_printf(s, "    const %s %s = *(const %s *)args[%d];\n", t, p->name, t, arg);
        }
        ckt_sb_printf(s, "    (void)%s;\n", p->name);
        arg++;
    }
    ckt_sb_printf(s, "    const ckt_i64 bid_x = launch->block_id[0], bid_y = launch->block_id[1], bid_z = launch->block_id[2];\n");
    ckt_sb_printf(s, "    const ckt_i64 nblk_x = launch->grid[0], nblk_y = launch->grid[1], nblk_z = launch->grid[2];\n");
    ckt_sb_printf(s, "    unsigned char *const ckt_lds = (unsigned char *)launch->lds;\n");
    ckt_sb_printf(s, "    (void)bid_x; (void)bid_y; (void)bid_z; (void)nblk_x; (void)nblk_y; (void)nblk_z; (void)ckt_lds;\n");
}

static void close_kernel(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes)
{
    ckt_sb_printf(s, "const unsigned long long %s__lds_bytes = %lld;\n", ckt_kernel_name(k), (long long)lds_bytes);
    ckt_sb_printf(s, "const char %s__params[] = \"", ckt_kernel_name(k));
    int n = 0;
    for (int i = 0; i < ckt_kernel_nparams(k); i++) {
        const ckt_kparam *p = ckt_kernel_param(k, i);
        if (p->specialized) continue;
        ckt_sb_printf(s, "%s%s", n++ ? "," : "", kind_name(p->kind));
    }
    ckt_sb_printf(s, "\";\n");
}

const ckt_dialect ckt_dialect_c = {CKT_DIALECT_C, "c", "c.h", true, NULL, open_kernel, close_kernel};
