/* Hopper's bulk tensor copies (CKT_OP_TMA_COPY), stores (CKT_OP_TMA_STORE) and mbarriers
 * (CKT_OP_MBAR_WAIT and their initialization) in the CUDA and C dialects (ckt_bulk_cuda,
 * ckt_bulk_c: the dialects' hooks). CUDA: thread 0 initializes every mbarrier on entry; a copy is
 * thread 0's mbarrier.arrive.expect_tx with the box's bytes and its cp.async.bulk.tensor through
 * the tensor-map parameter; a wait spins on mbarrier.try_wait.parity (suspending in hardware
 * between tries; it traps after 4 s, so that a pipeline that can never complete fails the launch
 * instead of hanging it). C: the same copies queued with their mbarrier and landed, through the CPU
 * tensor map (kernels/prelude/c.h), by the wait that needs them; a wait whose phase cannot complete
 * reports a fault. */
#include <stdio.h>
#include <string.h>

#include "emit_internal.h"

bool ckt_emit_has_tma(const ckt_dialect *dl, const ckt_target_record *t)
{
    return dl->bulk && t->modelled && t->hw.tma;
}

static ckt_status need_tma(const ckt_dialect *dl, const ckt_target_record *t, const char *what,
                           ckt_error *err)
{
    if (!ckt_emit_has_tma(dl, t))
        return ckt_fail(err, CKT_EUNSUPPORTED,
                        "%s: target '%s' has no bulk tensor copies or mbarriers (the tensor memory "
                        "accelerator: sm_90, sm_90a, cpu:sm_90, cpu:sm_90a)",
                        what, t->name);
    return CKT_OK;
}

/* the byte offset in LDS of mbarrier `bar` of set `set`, as an expression */
static void mbar_offset(const ckt_kernel *k, ckt_expr_pool *ex, int set, ckt_expr_id bar, char *buf,
                        size_t cap)
{
    char b[200];
    ckt_expr_print(ex, bar, b, sizeof b, NULL);
    snprintf(buf, cap, "%lld + 8 * (ckt_u32)(%s)", (long long)ckt_kernel_mbar(k, set)->lds_offset,
             b);
}

/* ---- the C dialect: the copies queued with their mbarrier, landed by the wait that needs them */

static void c_init(ckt_emit_out *o, const ckt_kernel *k)
{
    for (int i = 0; i < ckt_kernel_nmbars(k); i++) {
        const ckt_kmbar *m = ckt_kernel_mbar(k, i);
        ckt_emit_put(o, "ckt_mbar_state ckt_mbar%d[%lld]; /* mbarriers, emulated */", i,
                     (long long)m->count);
        ckt_emit_put(o, "ckt_mbar_init(ckt_mbar%d, %lld, %lld);", i, (long long)m->count,
                     (long long)m->arrivals);
    }
    ckt_emit_put(o, "ckt_tma_queue ckt_tmaq = {0, 0, 0}; /* bulk copies in flight */");
    if (ckt_kernel_cluster_size(k) > 1)
        ckt_emit_put(o, "unsigned long long ckt_csig = 14695981039346656037ull; /* the boxes "
                        "shared with the cluster, hashed: its blocks must share the same */");
}

static void c_close(ckt_emit_out *o, const ckt_kernel *k)
{
    if (ckt_kernel_nmbars(k) == 0) return;
    ckt_emit_put(o, "free(ckt_tmaq.e); /* copies never waited for never land */");
    if (ckt_kernel_cluster_size(k) > 1)
        ckt_emit_put(o, "if (launch->cluster_sig) launch->cluster_sig[bid_x + nblk_x * (bid_y + "
                        "nblk_y * bid_z)] = ckt_csig; /* compared across the cluster after the "
                        "launch */");
}

/* the copy's origin as a list of rank coordinates: "(long long)(c0), (long long)(c1), ..." */
static void origin_list(const ckt_bulk_site *x, const char *cast, char *buf, size_t cap)
{
    buf[0] = 0;
    for (int d = 0; d < x->rank; d++) {
        size_t n = strlen(buf);
        snprintf(buf + n, cap - n, "%s%s(%s)", d ? ", " : "", cast, x->coord[d]);
    }
}

/* (a multicast box: this block alone, all its parts landing here, as the cluster's copies
 * would land them) */
static void c_copy(ckt_emit_out *o, const ckt_bulk_site *x)
{
    char at[1200];
    origin_list(x, "(long long)", at, sizeof at);
    ckt_emit_put(o,
                 "ckt_tma_push(&ckt_tmaq, ckt_mbar%d, %d, (long long)(%s), (long long)(%s), %s, "
                 "(const long long[5]){%s}, %lld, ckt_lds, %lldu, launch);%s",
                 x->set, x->set, x->index, x->dst, x->map, at, x->parts,
                 (long long)ckt_kernel_lds_bytes(x->k),
                 x->parts > 1 ? " /* the cluster's parts of the box, all landing here */" : "");
    if (x->parts > 1)
        ckt_emit_put(o,
                     "ckt_csig = ckt_sig_mix(ckt_csig, (const long long[8]){%d, (long long)(%s), "
                     "(long long)(%s), %s}, %d + 3);",
                     x->set, x->index, x->dst, at, x->rank);
}

static void c_store(ckt_emit_out *o, const ckt_bulk_site *x, bool wait)
{
    (void)wait; /* (done at once) */
    char at[1200];
    origin_list(x, "(long long)", at, sizeof at);
    ckt_emit_put(o,
                 "ckt_tma_store(%s, (const long long[5]){%s}, ckt_lds, (long long)(%s), %lldu); "
                 "/* from LDS as it is now: the block's threads have run up to here */",
                 x->map, at, x->dst, (long long)ckt_kernel_lds_bytes(x->k));
}

static void c_store_wait(ckt_emit_out *o)
{
    ckt_emit_put(o, "/* the bulk stores have read their LDS tiles (done as they were issued) */");
}

static void c_wait(ckt_emit_out *o, const ckt_bulk_site *x)
{
    if (x->producer)
        ckt_emit_put(o,
                     "ckt_mbar_guard(&ckt_tmaq, ckt_mbar%d, (long long)(%s), (int)(%s)); /* the "
                     "producer runs ahead: the copies it issues next land only once this phase "
                     "has completed */",
                     x->set, x->index, x->phase);
    else
        ckt_emit_put(
            o,
            "ckt_mbar_wait(&ckt_tmaq, ckt_mbar%d, %d, (long long)(%s), (int)(%s), ckt_lds, "
            "%lldu, launch); /* the phase of this parity has completed */",
            x->set, x->set, x->index, x->phase, (long long)ckt_kernel_lds_bytes(x->k));
}

static void c_arrive(ckt_emit_out *o, const ckt_bulk_site *x)
{
    ckt_emit_put(o, "ckt_mbar_arrive(&ckt_tmaq, ckt_mbar%d, (long long)(%s), %lld); /* %s */",
                 x->set, x->index, x->arrivals,
                 x->parts > 1 ? "each warp of each block of the cluster arrives (the other "
                                "blocks' arrivals emulated as this block's)"
                              : "every thread of the block arrives");
}

static void c_named(ckt_emit_out *o, const ckt_bulk_site *x, bool arrive)
{
    ckt_emit_put(o,
                 "/* named barrier %s (%s, %lld threads): it orders when warps run; the threads "
                 "run one after another here */",
                 x->index, arrive ? "arrive" : "sync", x->box_bytes);
}

const ckt_bulk_ops ckt_bulk_c = {c_init,       c_close, c_copy,   c_store,
                                 c_store_wait, c_wait,  c_arrive, c_named};

/* ---- CUDA: thread 0 initializes; copies and waits through the prelude's PTX */

static void cuda_init(ckt_emit_out *o, const ckt_kernel *k)
{
    ckt_emit_put(o, "if (tid == 0) {");
    o->ind++;
    for (int i = 0; i < ckt_kernel_nmbars(k); i++) {
        const ckt_kmbar *m = ckt_kernel_mbar(k, i);
        ckt_emit_put(o, "/* mbarrier set %d: %lld at LDS byte %lld, %lld arrivals a phase */", i,
                     (long long)m->count, (long long)m->lds_offset, (long long)m->arrivals);
        ckt_emit_put(
            o,
            "for (int ckt_i = 0; ckt_i < %lld; ++ckt_i) ckt_mbar_init(ckt_smem_addr(ckt_lds) "
            "+ %lld + 8 * ckt_i, %lld);",
            (long long)m->count, (long long)m->lds_offset, (long long)m->arrivals);
    }
    ckt_emit_put(o, "ckt_mbar_fence_init(); /* visible to the bulk copies (the async proxy) */");
    for (int i = 0; i < ckt_kernel_ntmas(k); i++)
        ckt_emit_put(o, "ckt_tma_prefetch(&%s); /* the tensor map, before its first copy */",
                     ckt_kernel_param(k, ckt_kernel_tma(k, i)->param)->name);
    o->ind--;
    ckt_emit_put(o, "}");
    if (ckt_kernel_cluster_size(k) > 1)
        ckt_emit_put(o, "ckt_cluster_sync(); /* every block of the cluster sees the initialized "
                        "mbarriers before any copies into it or arrives on them */");
    else
        ckt_emit_put(o, "__syncthreads(); /* every thread sees the initialized mbarriers */");
}

static void cuda_copy(ckt_emit_out *o, const ckt_bulk_site *x)
{
    /* on the producer warp the issuing thread is elected already */
    ckt_emit_put(o, x->producer ? "{" : "if (tid == 0) {");
    o->ind++;
    ckt_emit_put(o, "const ckt_u32 ckt_bar = ckt_smem_addr(ckt_lds) + %s;", x->bar);
    char at[1200];
    if (x->parts > 1) {
        /* the box's part r (rank r) into every block of the cluster at the same LDS offset */
        ckt_emit_put(o,
                     "ckt_mbar_expect_tx(ckt_bar, %lld); /* the whole box: %lld blocks copy a "
                     "part each into all of them */",
                     x->box_bytes * x->parts, x->parts);
        ckt_emit_put(o, "const ckt_u32 ckt_rank = ckt_cluster_rank();");
        char c1[260];
        snprintf(c1, sizeof c1, "(%s) + (int)ckt_rank * %lld", x->coord[1], x->part_rows);
        ckt_bulk_site y = *x;
        y.coord[1] = c1;
        origin_list(&y, "(int)", at, sizeof at);
        ckt_emit_put(o,
                     "ckt_tma_load_%dd_multicast(ckt_smem_addr(ckt_lds) + %s + ckt_rank * %lldu, "
                     "&%s, %s, ckt_bar, %#llx);",
                     x->rank, x->dst, x->box_bytes, x->map, at, (1ull << x->parts) - 1);
    } else {
        if (x->rows)
            ckt_emit_put(o,
                         "ckt_mbar_expect_tx(ckt_bar, (ckt_u32)(%s) * %lldu); /* the rows the "
                         "launch clipped the box to, %lld bytes each */",
                         x->rows, x->box_bytes / x->part_rows, x->box_bytes / x->part_rows);
        else
            ckt_emit_put(o, "ckt_mbar_expect_tx(ckt_bar, %lld);", x->box_bytes);
        origin_list(x, "(int)", at, sizeof at);
        ckt_emit_put(o, "ckt_tma_load_%dd(ckt_smem_addr(ckt_lds) + %s, &%s, %s, ckt_bar);", x->rank,
                     x->dst, x->map, at);
    }
    o->ind--;
    ckt_emit_put(o, "}");
}

/* thread 0 issues the store as a bulk async-group of its own; with wait, it then waits until the
 * store has read its LDS tile (not for the global writes: those go on after the block has moved
 * on, or exited) */
static void cuda_store(ckt_emit_out *o, const ckt_bulk_site *x, bool wait)
{
    ckt_emit_put(o, "if (tid == 0) {");
    o->ind++;
    char at[1200];
    origin_list(x, "(int)", at, sizeof at);
    ckt_emit_put(o, "ckt_tma_store_%dd(&%s, %s, ckt_smem_addr(ckt_lds) + %s);", x->rank, x->map, at,
                 x->dst);
    ckt_emit_put(o, "ckt_bulk_commit();");
    if (wait)
        ckt_emit_put(o, "ckt_bulk_read_wait(); /* its LDS tile read: free after a barrier */");
    o->ind--;
    ckt_emit_put(o, "}");
}

static void cuda_store_wait(ckt_emit_out *o)
{
    ckt_emit_put(o, "if (tid == 0) ckt_bulk_read_wait(); /* the bulk stores have read their LDS "
                    "tiles: free after a barrier */");
}

/* the block's LDS must outlive the reads of stores not waited for */
static void cuda_close(ckt_emit_out *o, const ckt_kernel *k)
{
    for (int i = 0; i < ckt_kernel_nops(k); i++) {
        const ckt_kop *op = ckt_kernel_op(k, i);
        if (op->kind == CKT_OP_TMA_STORE && !op->spv) {
            cuda_store_wait(o);
            return;
        }
    }
}

static void cuda_wait(ckt_emit_out *o, const ckt_bulk_site *x)
{
    ckt_emit_put(o,
                 "ckt_mbar_wait(ckt_smem_addr(ckt_lds) + %s, (ckt_u32)(%s)); /* the phase of "
                 "this parity has completed: its arrivals made, its copies landed */",
                 x->bar, x->phase);
}

static void cuda_arrive(ckt_emit_out *o, const ckt_bulk_site *x)
{
    if (x->parts > 1) {
        ckt_emit_put(o,
                     "ckt_mbar_arrive_cluster(ckt_smem_addr(ckt_lds) + %s, %lldu); /* each warp "
                     "arrives in every block of the cluster: the stage is released in all */",
                     x->bar, x->parts);
        return;
    }
    ckt_emit_put(o,
                 "ckt_mbar_arrive(ckt_smem_addr(ckt_lds) + %s); /* every thread of the block "
                 "arrives: the stage is released */",
                 x->bar);
}

static void cuda_named(ckt_emit_out *o, const ckt_bulk_site *x, bool arrive)
{
    ckt_emit_put(o,
                 "asm volatile(\"bar.%s %%0, %lld;\" :: \"r\"((ckt_u32)(%s)) : \"memory\"); /* "
                 "named barrier: %s */",
                 arrive ? "arrive" : "sync", x->box_bytes, x->index,
                 arrive ? "these warps count themselves and go on" : "wait for its threads");
}

const ckt_bulk_ops ckt_bulk_cuda = {cuda_init,       cuda_close, cuda_copy,   cuda_store,
                                    cuda_store_wait, cuda_wait,  cuda_arrive, cuda_named};

/* ---- the walk's entry points */

void ckt_emit_mbar_init(ckt_sb *s, int ind, const ckt_dialect *dl, const ckt_kernel *k)
{
    ckt_emit_out o = {s, ind};
    if (ckt_kernel_nmbars(k) > 0 && dl->bulk) dl->bulk->init(&o, k);
}

/* (also without mbarriers: a kernel's bulk stores may need their reads waited for) */
void ckt_emit_mbar_close(ckt_sb *s, int ind, const ckt_dialect *dl, const ckt_kernel *k)
{
    ckt_emit_out o = {s, ind};
    if (dl->bulk && dl->bulk->close) dl->bulk->close(&o, k);
}

/* the tile's byte offset from the LDS base: its constant origin through the layout and swizzle,
 * plus the stage */
static void tile_bytes(const ckt_kernel *k, ckt_expr_pool *ex, const ckt_kwindow *w, char *buf,
                       size_t cap, ckt_error *err, ckt_status *st)
{
    const ckt_ktensor *t = ckt_kernel_tensor(k, w->tensor);
    int64_t o[2], off = 0, shape0;
    ckt_layout m;
    ckt_expr_is_const(ex, w->init[0], &o[0]);
    ckt_expr_is_const(ex, w->init[1], &o[1]);
    *st = ckt_layout_mode(&t->layout, 0, &m, err);
    if (*st) return;
    shape0 = ckt_layout_size(&m);
    if ((*st = ckt_layout_eval(&t->layout, o[0] + shape0 * o[1], &off, err))) return;
    if (t->swizzled) off = ckt_swizzle_apply(t->sw, off);
    int64_t esz = (int64_t)ckt_dtype_size(t->dtype);
    if (!t->stage_view) {
        snprintf(buf, cap, "%lld", (long long)(t->lds_offset + off * esz));
        return;
    }
    char sb[300];
    ckt_expr_print(ex, t->stage_base, sb, sizeof sb, NULL);
    snprintf(buf, cap, "%lld + (ckt_u32)(%s) * %lld", (long long)(t->lds_offset + off * esz), sb,
             (long long)esz);
}

/* CKT_OP_TMA_COPY (global window inputs[0] -> LDS window w, on mbarrier a of set inputs[1]) and
 * CKT_OP_TMA_STORE (LDS window w -> global window inputs[0]) */
static ckt_status tma_box(ckt_emit_out o, const ckt_bulk_ops *ops, const ckt_kernel *k,
                          ckt_expr_pool *ex, const ckt_kop *op, bool producer, ckt_error *err)
{
    ckt_status st = CKT_OK;
    bool store = op->kind == CKT_OP_TMA_STORE;
    const ckt_ktma *m = ckt_kernel_tma(k, op->r);
    const ckt_kwindow *gw = ckt_kernel_window(k, op->inputs[0]), *lw = ckt_kernel_window(k, op->w);
    const ckt_ktensor *g = ckt_kernel_tensor(k, m->tensor), *l = ckt_kernel_tensor(k, lw->tensor);
    char lbytes[400], bar[300] = "", c[5][200], b[200] = "", at[1100] = "", box[64] = "",
                      rows[600] = "";
    /* the blocks of the cluster that copy a part of the box each (1: the box is the block's own) */
    const int64_t parts = !store && op->spv > 1 ? op->spv : 1;
    tile_bytes(k, ex, lw, lbytes, sizeof lbytes, err, &st);
    if (st) return st;
    if (!store) {
        mbar_offset(k, ex, op->inputs[1], op->a, bar, sizeof bar);
        ckt_expr_print(ex, op->a, b, sizeof b, NULL);
        if (m->rows != CKT_EXPR_NONE &&
            ckt_expr_print(ex, m->rows, rows, sizeof rows, NULL) >= (int)sizeof rows)
            return ckt_fail(err, CKT_ECAPACITY,
                            "tma_copy: the clipped box's rows, min(box, the extent of '%s'), "
                            "print longer than %zu characters",
                            ckt_kernel_param(k, g->param)->name, sizeof rows - 1);
    }
    for (int d = 0; d < m->rank; d++) {
        ckt_expr_print(ex, gw->origin[m->dims[d]], c[d], sizeof c[d], NULL);
        size_t n = strlen(at), nb = strlen(box);
        snprintf(at + n, sizeof at - n, "%s%s", d ? ", " : "", c[d]);
        snprintf(box + nb, sizeof box - nb, "%s%lld", d ? " x " : "",
                 (long long)(m->box[d] * (d == 1 ? parts : 1)));
    }
    const char *sw = m->swizzle_bytes == 0    ? "no swizzle"
                     : m->swizzle_bytes == 32 ? "32B swizzle"
                     : m->swizzle_bytes == 64 ? "64B swizzle"
                                              : "128B swizzle";
    if (store)
        ckt_emit_put(&o,
                     "/* bulk tensor store: %s (%s) -> the %s box of %s at (%s) (innermost "
                     "first), %lld bytes; what lies outside the tensor is not written */",
                     l->name, sw, box, ckt_kernel_param(k, g->param)->name, at,
                     (long long)m->box_bytes);
    else
        ckt_emit_put(&o,
                     "/* bulk tensor copy: the %s box of %s at (%s) (innermost first) -> "
                     "%s (%s), %lld bytes on mbarrier %d[%s]%s */",
                     box, ckt_kernel_param(k, g->param)->name, at, l->name, sw,
                     (long long)(m->box_bytes * parts), op->inputs[1], bar,
                     parts > 1 ? "; shared by the cluster, each block copying its part into all"
                     : rows[0] ? "; clipped at the tensor's end along dim 2 (the rows past it "
                                 "keep what they held)"
                               : "");
    ckt_bulk_site x = {k,
                       store ? 0 : op->inputs[1],
                       b,
                       bar,
                       NULL,
                       lbytes,
                       ckt_kernel_param(k, m->param)->name,
                       {c[0], c[1], c[2], c[3], c[4]},
                       m->rank,
                       (long long)m->box_bytes,
                       producer,
                       parts,
                       (long long)m->box[1],
                       0,
                       rows[0] ? rows : NULL};
    if (store)
        ops->store(&o, &x, op->spv != 0);
    else
        ops->copy(&o, &x);
    return CKT_OK;
}

/* CKT_OP_MBAR_WAIT and CKT_OP_MBAR_ARRIVE: mbarrier `a` of set inputs[0] (wait: parity b) */
static ckt_status mbar_op(ckt_emit_out o, const ckt_bulk_ops *ops, const ckt_kernel *k,
                          ckt_expr_pool *ex, const ckt_kop *op, bool producer)
{
    char bar[300], ph[200] = "", b[200];
    mbar_offset(k, ex, op->inputs[0], op->a, bar, sizeof bar);
    ckt_expr_print(ex, op->a, b, sizeof b, NULL);
    bool wait = op->kind == CKT_OP_MBAR_WAIT;
    if (wait) ckt_expr_print(ex, op->b, ph, sizeof ph, NULL);
    /* (an arrival in the cluster: its blocks; the arrivals made are the set's, as checked) */
    ckt_bulk_site x = {k,        op->inputs[0],
                       b,        bar,
                       ph,       NULL,
                       NULL,     {NULL},
                       0,        0,
                       producer, op->spv ? ckt_kernel_cluster_size(k) : 1,
                       0,        ckt_kernel_mbar(k, op->inputs[0])->arrivals,
                       NULL};
    (wait ? ops->wait : ops->arrive)(&o, &x);
    return CKT_OK;
}

ckt_status ckt_emit_tma(ckt_sb *s, int ind, const ckt_dialect *dl, const ckt_kernel *k,
                        ckt_expr_pool *ex, const ckt_kop *op, const ckt_target_record *target,
                        bool producer, ckt_error *err)
{
    static const char *const what[] = {"tma_copy",      "mbarrier_wait", "mbarrier_arrive",
                                       "named_barrier", "tma_store",     "tma_store_wait"};
    int i = op->kind == CKT_OP_TMA_COPY         ? 0
            : op->kind == CKT_OP_MBAR_WAIT      ? 1
            : op->kind == CKT_OP_MBAR_ARRIVE    ? 2
            : op->kind == CKT_OP_TMA_STORE      ? 4
            : op->kind == CKT_OP_TMA_STORE_WAIT ? 5
                                                : 3;
    ckt_status st = need_tma(dl, target, what[i], err);
    if (st) return st;
    ckt_emit_out o = {s, ind};
    switch (op->kind) {
    case CKT_OP_TMA_COPY:
    case CKT_OP_TMA_STORE: return tma_box(o, dl->bulk, k, ex, op, producer, err);
    case CKT_OP_TMA_STORE_WAIT: dl->bulk->store_wait(&o); return CKT_OK;
    case CKT_OP_MBAR_WAIT:
    case CKT_OP_MBAR_ARRIVE: return mbar_op(o, dl->bulk, k, ex, op, producer);
    case CKT_OP_NAMED_BARRIER: {
        char id[200];
        int64_t arrive = 0;
        ckt_expr_print(ex, op->a, id, sizeof id, NULL);
        ckt_expr_is_const(ex, op->b, &arrive);
        ckt_bulk_site x = {k,     0, id, NULL, NULL, NULL, NULL, {NULL}, 0, (long long)op->spv,
                           false, 0, 0,  0,    NULL};
        dl->bulk->named(&o, &x, arrive != 0);
        return CKT_OK;
    }
    default: return ckt_fail(err, CKT_EINVAL, "emit: operation %d is no bulk copy or mbarrier", i);
    }
}
