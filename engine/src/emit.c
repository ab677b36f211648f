/* The one emitter (see ckt/emit.h): walks the kernel IR once and writes source whose
 * per-thread index arithmetic is the same for every dialect. This file: the preludes, the op walk
 * (with the pass loops that fuse a load and its store) and the kernel; it calls down into the
 * pieces, emit_compute.c, emit_async.c, emit_access.c and emit_walk.c (emit_walk.h), which build
 * on the shared spellings and line writer of emit_out.c and never call back up. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "ckt/ckt.h"
#include "ckt/target.h"
#include "embedded.h"
#include "emit_walk.h"

extern const ckt_embedded_file ckt_embedded_preludes[];

static const char *prelude_file(const char *name)
{
    for (const ckt_embedded_file *f = ckt_embedded_preludes; f->name; f++)
        if (!strcmp(f->name, name)) return f->text;
    return "";
}

static const ckt_dialect *dialect_of(ckt_dialect_kind d)
{
    static const ckt_dialect *const by_kind[] = {
        [CKT_DIALECT_C] = &ckt_dialect_c,
        [CKT_DIALECT_HIP] = &ckt_dialect_hip,
        [CKT_DIALECT_CUDA] = &ckt_dialect_cuda,
    };
    return (unsigned)d < sizeof by_kind / sizeof *by_kind ? by_kind[d] : &ckt_dialect_c;
}

const char *ckt_prelude_text(ckt_dialect_kind d) { return prelude_file(dialect_of(d)->prelude); }

/* ---------------------------------------------------------------- pass loops
 * A load into registers followed by a store of those registers, the registers used nowhere else
 * (a copy through registers, a transpose's LDS -> global step), often repeats one sub-block: the
 * values split into `passes` runs of nv / passes values, and run p sits at run 0's coordinates plus
 * p times a fixed step, in both accesses. Unrolled, every pass is straight-line code that only
 * costs compile time (NVRTC's grows with it); emitted as a loop over the passes, one pass's
 * statements are written once, and the registers hold one pass. */

/* Does the access repeat with period nv / passes? Then step[] is the coordinate step per pass. */
static bool periodic(const em_access *a, int64_t spv, int64_t passes, int64_t *step)
{
    const ckt_dist *d = a->d;
    int64_t per = d->nvalues / passes;
    if (per * passes != d->nvalues || per % spv) return false;
    for (int r = 0; r < a->rank; r++) step[r] = d->vcoord[per][r] - d->vcoord[0][r];
    for (int64_t v = per; v < d->nvalues; v++) {
        int64_t base = v % per, p = v / per;
        if ((a->group[v] == v) != (a->group[base] == base) || a->order[v] != a->order[base])
            return false;
        for (int r = 0; r < a->rank; r++)
            if (d->vcoord[v][r] != d->vcoord[base][r] + p * step[r]) return false;
    }
    /* a vector's members stay in its pass: they are the values next to it along the vector dim */
    for (int64_t v = 0; v < per; v++) {
        if (a->group[v] != v || spv == 1) continue;
        for (int64_t j = 1; j < spv; j++) {
            bool found = false;
            for (int64_t u = 0; u < per && !found; u++) {
                bool same = a->group[u] < 0 && a->order[u] == j;
                for (int r = 0; r < a->rank && same; r++)
                    same = d->vcoord[u][r] == d->vcoord[v][r] + (r == a->vd ? j : 0);
                found = same;
            }
            if (!found) return false;
        }
    }
    return true;
}

static void emit_op(em *e, const ckt_kop *op);

/* A copy through registers whose store vectors are the load's vectors, value for value, and
 * neither side converts: each vector can move whole (NVVM otherwise takes every vector apart into
 * its values and puts it together again: the f16 transpose's first half, 12% of its NVRTC time).
 * Fills slot[value] (the load vector's index in ckt_fw, -1 for values that do not start one) and
 * returns the number of vectors, or 0 when they cannot move whole. */
static int64_t forward_plan(const em_access *a, const em_access *b, int64_t spv, int64_t nv,
                            int64_t *slot)
{
    if (spv < 2 || spv > 16 || a->t->dtype != a->r->dtype || b->t->dtype != b->r->dtype) return 0;
    int64_t n = 0, first[CKT_K_MAX_VALUES], la[16], lb[16];
    for (int64_t v = 0; v < nv; v++) slot[v] = first[v] = -1;
    for (int64_t v = 0; v < nv; v++)
        if (a->group[v] == v) {
            ckt_em_vector_members(a, v, spv, nv, la);
            first[la[0]] = v;
            slot[la[0]] = n++;
        }
    for (int64_t v = 0; v < nv; v++)
        if (b->group[v] == v) {
            ckt_em_vector_members(b, v, spv, nv, lb);
            if (first[lb[0]] < 0) return 0;
            ckt_em_vector_members(a, first[lb[0]], spv, nv, la);
            for (int64_t j = 0; j < spv; j++)
                if (la[j] != lb[j]) return 0;
        }
    return n;
}

static bool only_user(em *e, int ld, int st, int rt)
{
    for (int i = 0; i < ckt_kernel_nops(e->k); i++) {
        if (i == ld || i == st) continue;
        const ckt_kop *o = ckt_kernel_op(e->k, i);
        if (o->kind != CKT_OP_SET && o->kind != CKT_OP_ADD && o->kind != CKT_OP_LOOP &&
            o->kind != CKT_OP_IF && o->kind != CKT_OP_END && o->kind != CKT_OP_SYNC &&
            (o->r == rt || o->r2 == rt))
            return false;
        for (int j = 0; j < o->ninputs; j++)
            if (o->inputs[j] == rt) return false;
    }
    return true;
}

/* A copy through registers as a loop over passes: the load (op i), the origins between (ops
 * i+1 .. j-1), the store (op j), their accesses, vectors and pass steps, and the vectors that move
 * whole (nfw of them, slot: forward_plan) */
typedef struct pass_plan {
    int j;
    em_access a, b;
    int64_t sa, sb, passes, n, stepa[CKT_K_MAX_RANK], stepb[CKT_K_MAX_RANK];
    char na[300], nb[300];
    int64_t nfw, slot[CKT_K_MAX_VALUES];
} pass_plan;

/* Op i (a load into r), then only the origins of other windows, then a store of r, the register
 * tile used by nothing else: true and the plan where it can be a loop over passes */
static bool plan_passes(em *e, int i, pass_plan *p)
{
    int nops = ckt_kernel_nops(e->k), j = i + 1;
    const ckt_kop *ld = ckt_kernel_op(e->k, i);
    if (ld->kind != CKT_OP_LOAD || ld->mma_rep[2] == 1)
        return false; /* matrix-fragment loads have their own path (ldmatrix) */
    while (j < nops && ckt_kernel_op(e->k, j)->kind == CKT_OP_SET &&
           ckt_kernel_op(e->k, j)->w >= 0 && ckt_kernel_op(e->k, j)->w != ld->w)
        j++;
    if (j >= nops) return false;
    const ckt_kop *st = ckt_kernel_op(e->k, j);
    if (st->kind != CKT_OP_STORE || ld->r != st->r || !only_user(e, i, j, ld->r)) return false;
    em_access *a = &p->a, *b = &p->b;
    ckt_error saved;
    if (e->err) saved = *e->err;
    if (!ckt_em_access_prepare(e, ld, a, &p->sa, p->na, sizeof p->na) ||
        !ckt_em_access_prepare(e, st, b, &p->sb, p->nb, sizeof p->nb)) {
        e->st = CKT_OK; /* emit_access reports it */
        if (e->err) *e->err = saved;
        return false;
    }
    if (a->d->nvalues != b->d->nvalues || a->d->threads != b->d->threads) return false;
    /* Small copies stay straight-line code (their source is short and compiles fast). A pass keeps
     * at least PASS_MIN_ACCESSES vector accesses per op, so that the loop, which is not unrolled,
     * keeps that many independent memory accesses in flight per thread (8 x 16 bytes). */
    enum { LOOP_MIN_ACCESSES = 16, PASS_MIN_ACCESSES = 8 };
    int64_t n = a->d->nvalues, smax = p->sa > p->sb ? p->sa : p->sb;
    p->passes = 0;
    for (int64_t q = n / smax / PASS_MIN_ACCESSES; q >= 2 && !p->passes; q--)
        if (n / smax >= LOOP_MIN_ACCESSES && n % q == 0 && periodic(a, p->sa, q, p->stepa) &&
            periodic(b, p->sb, q, p->stepb))
            p->passes = q;
    if (p->passes) {
        /* the vector plans must still hold with the pass step in the index variables */
        char why[256];
        ckt_em_pass_index_vars(e, a, p->passes, p->stepa);
        ckt_em_pass_index_vars(e, b, p->passes, p->stepb);
        if ((p->sa > 1 && ckt_em_vector_blocker(e, a, p->sa, why, sizeof why)) ||
            (p->sb > 1 && ckt_em_vector_blocker(e, b, p->sb, why, sizeof why)))
            p->passes = 0;
    }
    if (!p->passes) p->passes = 1; /* straight-line code: a plan only where vectors move whole */
    p->j = j;
    p->n = n;
    p->nfw = p->sa == p->sb ? forward_plan(a, b, p->sa, n / p->passes, p->slot) : 0;
    return p->passes > 1 || p->nfw > 0;
}

/* A pass of the copy (the whole copy in straight-line code: no steps), its vectors moving whole
 * where they can */
static void forwarded_copy(em *e, pass_plan *p, const ckt_kop *ld, const ckt_kop *st,
                           const int64_t *stepa, const int64_t *stepb)
{
    if (p->nfw) {
        ckt_em_line(e, "ckt_v%lld ckt_fw[%lld]; /* the %s vectors, stored as loaded */",
                    (long long)(p->sa * p->a.esz), (long long)p->nfw, stepa ? "pass's" : "copy's");
        e->fw_slot = p->slot;
    }
    ckt_em_access_body(e, ld, &p->a, p->sa, p->n / p->passes, stepa);
    if (!e->st) ckt_em_access_body(e, st, &p->b, p->sb, p->n / p->passes, stepb);
    e->fw_slot = NULL;
}

/* The copy of plan_passes emitted as the origins, then one loop over passes. Returns the number
 * of ops emitted (0: none; emit op i as usual). */
static int emit_pass_loop(em *e, int i)
{
    pass_plan p;
    if (!plan_passes(e, i, &p)) return 0;
    const ckt_kop *ld = ckt_kernel_op(e->k, i), *st = ckt_kernel_op(e->k, p.j);
    for (int k = i + 1; k < p.j; k++)
        emit_op(e, ckt_kernel_op(e->k, k)); /* origins the store's window needs */
    ckt_em_thread_open(e);
    ckt_em_access_comments(e, ld, &p.a, p.sa, p.na);
    ckt_em_access_comments(e, st, &p.b, p.sb, p.nb);
    if (p.passes == 1) { /* straight-line: only the vectors moving whole */
        ckt_em_line(e, "{");
        e->ind++;
        forwarded_copy(e, &p, ld, st, NULL, NULL);
        e->ind--;
        ckt_em_line(e, "}");
        return p.j - i + 1;
    }
    ckt_em_line(
        e,
        "/*   as %lld passes of %lld values (the same sub-block %lld times: a loop, not unrolled "
        "code) */",
        (long long)p.passes, (long long)(p.n / p.passes), (long long)p.passes);
    /* GPU compilers would unroll the passes again (NVRTC does: 1.5x the compile time); a pass
     * already has PASS_MIN_ACCESSES accesses in flight. The C dialect's compiler decides itself. */
    if (e->dl->no_unroll) ckt_em_line(e, "%s", e->dl->no_unroll);
    ckt_em_line(e, "for (int it = 0; it < %lld; ++it) {", (long long)p.passes);
    e->ind++;
    forwarded_copy(e, &p, ld, st, p.stepa, p.stepb);
    e->ind--;
    ckt_em_line(e, "}");
    return p.j - i + 1;
}

/* The values a thread's register tile is declared with: a tile that only a copy through
 * registers uses holds one pass of it (its values moving as whole vectors: none, it is not
 * declared; else the values one pass uses, each pass reusing them); any other tile all its own */
static int64_t declared_values(em *e, int reg)
{
    const ckt_ktensor *t = ckt_kernel_tensor(e->k, reg);
    pass_plan p;
    for (int i = 0; i < ckt_kernel_nops(e->k); i++) {
        const ckt_kop *op = ckt_kernel_op(e->k, i);
        if (op->kind != CKT_OP_LOAD || op->r != reg) continue;
        if (!plan_passes(e, i, &p)) return t->nvalues;
        return p.nfw > 0 ? 0 : p.n / p.passes;
    }
    return t->nvalues;
}

/* ---------------------------------------------------------------- kernel */

static bool has_op(const ckt_kernel *k, ckt_kop_kind kind)
{
    for (int i = 0; i < ckt_kernel_nops(k); i++)
        if (ckt_kernel_op(k, i)->kind == kind) return true;
    return false;
}

static bool has_async(const ckt_kernel *k) { return has_op(k, CKT_OP_COPY_ASYNC); }

/* The C dialect's loops look at the launch's stop flag every iteration and leave the block when
 * it is set (a deadline passed: a loop of 2^62 iterations in one block would otherwise outlive
 * any time limit, the runtime checking it only between blocks). One load per iteration of a
 * block-level loop, whose body is whole thread loops: not measurable. */
static bool stoppable(const em *e) { return e->dl->kind == CKT_DIALECT_C; }

static void declare(em *e)
{
    char r[64];
    (void)r;
    for (int i = 0; i < ckt_kernel_ntensors(e->k); i++) {
        const ckt_ktensor *t = ckt_kernel_tensor(e->k, i);
        if (t->mem == CKT_MEM_REG && ckt_em_paired(e, t)) {
            ckt_em_line(e,
                        "ckt_u32 %s[%lld]; /* registers: %lld 16-bit values in pairs, the lower "
                        "index in the low half (ldmatrix writes them, mma.sync reads them) */",
                        t->name, (long long)(t->nvalues / 2), (long long)t->nvalues);
        } else if (t->mem == CKT_MEM_REG && ckt_em_acc_width(e, t)) {
            long long w = (long long)ckt_em_acc_width(e, t);
            ckt_em_line(e, "typedef float ckt_f32x%lld_%s __attribute__((ext_vector_type(%lld)));",
                        w, t->name, w);
            ckt_em_line(e,
                        "ckt_f32x%lld_%s %s[%lld]; /* registers: %lld f32 accumulators as %lld "
                        "vectors of the matrix instruction's %lld C values */",
                        w, t->name, t->name, (long long)t->nvalues / w, (long long)t->nvalues,
                        (long long)t->nvalues / w, w);
        } else if (t->mem == CKT_MEM_REG) {
            int64_t n = declared_values(e, i);
            ckt_emit_out o = ckt_em_out(e);
            if (n > 0) e->dl->frame->declare_regs(&o, t, n, e->block);
        } else if (t->mem == CKT_MEM_LDS) {
            char desc[300];
            ckt_em_describe_tensor(e, t, desc, sizeof desc);
            ckt_em_line(e, "%s *const %s = (%s *)(ckt_lds + %lld); /* %s */",
                        ckt_emit_ctype(t->dtype), t->name, ckt_emit_ctype(t->dtype),
                        (long long)t->lds_offset, desc);
        }
    }
    if (ckt_kernel_reduce_scratch(e->k) >= 0)
        ckt_em_line(e, "float *const ckt_red = (float *)(ckt_lds + %lld);",
                    (long long)ckt_kernel_reduce_scratch(e->k));
    if (e->dl->async_state && has_async(e->k)) {
        ckt_emit_out o = ckt_em_out(e);
        e->dl->async_state(&o, true);
    }
    /* block-uniform variables: window origins and named variables */
    for (int i = 0; i < ckt_kernel_nops(e->k); i++) {
        const ckt_kop *op = ckt_kernel_op(e->k, i);
        if (op->kind != CKT_OP_SET) continue;
        bool first = true;
        for (int j = 0; j < i && first; j++) {
            const ckt_kop *o = ckt_kernel_op(e->k, j);
            first = !(o->kind == CKT_OP_SET && o->a == op->a);
        }
        if (!first) continue;
        char *x = ckt_em_estr(e, op->a, NULL);
        ckt_em_line(e, "ckt_i64 %s = 0;", x ? x : "?");
        free(x);
    }
}

static bool is_let(em *e, ckt_expr_id v)
{
    const ckt_expr_pool *ex = ckt_kernel_exprs_const(e->k);
    const ckt_expr_node *n = ckt_expr_get(ex, v);
    return n && n->op == CKT_E_VAR && ex->vars[n->i].value != CKT_EXPR_NONE;
}

/* b:sync: a barrier of the block; where wgmma reads LDS (the async proxy), the threads' own LDS
 * stores before it are made visible to it first (an accumulator tile stored for a wgmma operand) */
static void sync_block(em *e)
{
    ckt_em_thread_close(e);
    ckt_em_async_visible(e);
    ckt_em_barrier(e, "sync");
}

/* CKT_OP_ATOMIC_ADD: the block's global writes made visible device-wide, one add, its result in
 * every thread's copy of the variable, then later reads ordered after it. The C dialect's blocks
 * run on threads of their own, its threads one after another. */
static void emit_atomic(em *e, const ckt_kop *op)
{
    const ckt_ktensor *t = ckt_kernel_tensor(e->k, op->inputs[0]);
    char *v = ckt_em_estr(e, op->a, NULL), *i = ckt_em_estr(e, op->b, NULL),
         *n = ckt_em_estr(e, t->shape[0], NULL);
    ckt_em_thread_close(e);
    ckt_em_line(e, "/* atomic add of %lld to %s[%s] (clamped into its %s elements) */",
                (long long)op->spv, t->name, i, n);
    if (e->dl->frame->thread_loops) {
        ckt_em_line(e, "__atomic_thread_fence(__ATOMIC_SEQ_CST);");
        ckt_em_line(e,
                    "%s = %s > 0 ? __atomic_fetch_add(&%s[ckt_clampidx(%s, %s)], %lld, "
                    "__ATOMIC_SEQ_CST) : 0;",
                    v, n, t->name, i, n, (long long)op->spv);
        ckt_em_line(e, "__atomic_thread_fence(__ATOMIC_SEQ_CST);");
    } else {
        ckt_em_line(e, "{");
        e->ind++;
        ckt_em_line(e, "__shared__ ckt_i32 ckt_atomic_old;");
        ckt_em_line(e, "__threadfence(); /* this thread's global writes, device-wide */");
        ckt_em_barrier(e, "every thread's writes fenced before the add");
        ckt_em_line(e,
                    "if (tid == 0) ckt_atomic_old = %s > 0 ? atomicAdd(&%s[ckt_clampidx(%s, %s)], "
                    "%lld) : 0;",
                    n, t->name, i, n, (long long)op->spv);
        ckt_em_barrier(e, "the old value for every thread");
        ckt_em_line(e, "%s = ckt_atomic_old;", v);
        ckt_em_line(e, "__threadfence(); /* later reads after the add */");
        e->ind--;
        ckt_em_line(e, "}");
    }
    free(v);
    free(i);
    free(n);
}

static void emit_op(em *e, const ckt_kop *op)
{
    char *x, *y;
    switch (op->kind) {
    case CKT_OP_SET:
    case CKT_OP_ADD:
        ckt_em_thread_close(e);
        x = ckt_em_estr(e, op->a, NULL);
        y = ckt_em_estr(e, op->b, NULL);
        if (op->w >= 0 && op->kind == CKT_OP_SET)
            ckt_em_line(e, "%s = %s; /* origin of window %d */", x, y, op->w);
        else if (op->kind == CKT_OP_SET && is_let(e, op->a))
            ckt_em_line(e, "%s = %s; /* a let: computed once, read below */", x, y);
        else
            ckt_em_line(e, "%s %s %s;", x, op->kind == CKT_OP_SET ? "=" : "+=", y);
        free(x);
        free(y);
        break;
    case CKT_OP_LOOP:
        ckt_em_thread_close(e);
        x = ckt_em_estr(e, op->a, NULL);
        y = ckt_em_estr(e, op->b, NULL);
        if (op->spv && e->dl->no_unroll) ckt_em_line(e, "%s", e->dl->no_unroll);
        ckt_em_line(e, "for (ckt_i64 %s = 0; %s < %s; ++%s) {", x, x, y, x);
        free(x);
        free(y);
        e->scope[e->depth++] = SCOPE_LOOP;
        e->ind++;
        if (stoppable(e)) ckt_em_line(e, "if (CKT_STOPPED()) goto ckt_stop;");
        break;
    case CKT_OP_IF:
        x = ckt_em_estr(e, op->b, NULL);
        e->cond[e->depth] = op->b;
        if (op->spv) {
            ckt_em_thread_open(e);
            e->scope[e->depth++] = SCOPE_DIF;
        } else {
            ckt_em_thread_close(e);
            e->scope[e->depth++] = SCOPE_UIF;
        }
        ckt_em_line(e, "if (%s) {", x);
        free(x);
        e->ind++;
        break;
    case CKT_OP_PRODUCER: ckt_em_producer_open(e); break;
    case CKT_OP_END:
        if (e->depth > 0 && e->scope[e->depth - 1] == SCOPE_PRODUCER) {
            e->depth--;
            ckt_em_producer_close(e);
            break;
        }
        if (e->depth > 0 && e->scope[e->depth - 1] != SCOPE_DIF) ckt_em_thread_close(e);
        e->depth--;
        e->ind--;
        ckt_em_line(e, "}");
        break;
    case CKT_OP_SYNC: sync_block(e); break;
    case CKT_OP_LOAD:
    case CKT_OP_STORE: ckt_em_access_op(e, op); break;
    case CKT_OP_CLEAR: ckt_em_clear(e, op); break;
    case CKT_OP_MAP: ckt_em_map(e, op); break;
    case CKT_OP_FOLD: ckt_em_fold(e, op); break;
    case CKT_OP_BROADCAST: ckt_em_broadcast(e, op); break;
    case CKT_OP_ATOMIC_ADD: emit_atomic(e, op); break;
    case CKT_OP_BLOCK_REDUCE: ckt_em_block_reduce(e, op); break;
    case CKT_OP_GEMM: ckt_em_gemm(e, op); break;
    case CKT_OP_COPY_ASYNC: ckt_em_copy_async(e, op); break;
    case CKT_OP_COMMIT: ckt_em_commit(e); break;
    case CKT_OP_WAIT: ckt_em_wait(e, op); break;
    case CKT_OP_WGMMA:
        ckt_em_thread_close(e);
        e->st = ckt_emit_wgmma(e->s, e->ind, e->dl, e->k, e->ex, op, e->target, e->err);
        break;
    case CKT_OP_NAMED_BARRIER: /* (per thread: no thread loop closed) */
        e->st = ckt_emit_tma(e->s, e->ind, e->dl, e->k, e->ex, op, e->target, false, e->err);
        break;
    case CKT_OP_TMA_COPY:
    case CKT_OP_TMA_STORE:
    case CKT_OP_TMA_STORE_WAIT:
    case CKT_OP_MBAR_ARRIVE:
    case CKT_OP_MBAR_WAIT:
        ckt_em_thread_close(e);
        e->st = ckt_emit_tma(e->s, e->ind, e->dl, e->k, e->ex, op, e->target, ckt_em_in_producer(e),
                             e->err);
        break;
    }
}

/* The LDS the kernel takes on target t: the kernel's, less the block reductions' scratch at its
 * end where every reduction is, on t, lane exchanges that need none (a GPU dialect; the C
 * dialect runs even those through the scratch). An attention kernel's row reductions reserved a
 * score tile of f32 scratch they never touched on the GPU: 32 KiB of sm_90a's 64 x 128 tile. */
int64_t ckt_emit_lds_bytes(const ckt_kernel *k, const ckt_target_record *t)
{
    if (!k) return 0;
    int64_t all = ckt_kernel_lds_bytes(k), scratch = ckt_kernel_reduce_scratch(k);
    if (!t || scratch < 0 || dialect_of(t->dialect)->frame->thread_loops) return all;
    for (int i = 0; i < ckt_kernel_nops(k); i++) {
        const ckt_kop *op = ckt_kernel_op(k, i);
        if (op->kind != CKT_OP_BLOCK_REDUCE) continue;
        if (op->group) {
            if (op->group > 32) return all; /* the waves' partials */
            continue;
        }
        if (op->ninputs != 1) return all; /* the tree */
        const ckt_ktensor *src = ckt_kernel_tensor(k, op->inputs[0]);
        if (!ckt_em_lane_reduce_ok(ckt_kernel_dist(k, src->dist), op->vector_dim,
                                   ckt_kernel_block(k), t->wave_size))
            return all;
    }
    return scratch;
}

int64_t ckt_emit_dynamic_lds_bytes(const ckt_kernel *k, const ckt_target_record *t)
{
    if (!k || !t) return 0;
    int64_t limit = t->lds_static_bytes, bytes = ckt_emit_lds_bytes(k, t);
    return limit > 0 && bytes > limit ? bytes : 0;
}

ckt_status ckt_emit_named(const ckt_kernel *k, const char *target, char **source, ckt_error *err)
{
    ckt_target_record t;
    ckt_status s = ckt_target_parse(target, &t, err);
    return s ? s : ckt_emit(k, &t, source, err);
}

ckt_status ckt_emit(const ckt_kernel *k, const ckt_target_record *target, char **source,
                    ckt_error *err)
{
    ckt_status s;
    if (!k || !target || !source) return ckt_fail(err, CKT_EINVAL, "emit: NULL argument");
    const ckt_target_record *t = target;
    if (!ckt_kernel_is_finished(k))
        return ckt_fail(
            err, CKT_EINVAL,
            "emit: kernel '%s' is not finished (ckt_kernel_finish: loops and branches closed)",
            ckt_kernel_name(k));
    ckt_dialect_kind dk = t->dialect;
    const int64_t lds = ckt_emit_lds_bytes(k, t);
    if (t->modelled && lds > t->lds_max_bytes)
        return ckt_fail(err, CKT_ECAPACITY, "kernel '%s': needs %lld bytes of LDS but %s has %lld",
                        ckt_kernel_name(k), (long long)lds, t->hw.name,
                        (long long)t->lds_max_bytes);
    if (ckt_kernel_cluster_size(k) > 1 && !ckt_emit_has_tma(dialect_of(dk), t))
        return ckt_fail(err, CKT_EUNSUPPORTED,
                        "kernel '%s': clusters of blocks: target '%s' has none (sm_90, sm_90a, "
                        "cpu:sm_90, cpu:sm_90a)",
                        ckt_kernel_name(k), t->name);
    ckt_sb sb = {0};
    em e;
    memset(&e, 0, sizeof e);
    e.s = &sb;
    e.k = k;
    /* the emitter interns the index arithmetic it derives: in a copy, so the kernel stays as built
     */
    ckt_expr_pool pool;
    if ((s = ckt_expr_pool_copy(&pool, ckt_kernel_exprs_const(k), err))) return s;
    e.ex = &pool;
    e.dl = dialect_of(dk);
    e.block = ckt_kernel_block(k);
    e.target = target;
    e.err = err;
    ckt_sb_printf(&sb,
                  "/* generated by ckt %s for %s (%s dialect): kernel %s, %lld threads per block, "
                  "%lld bytes of LDS */\n",
                  ckt_version(), t->name, e.dl->name, ckt_kernel_name(k), (long long)e.block,
                  (long long)lds);
    ckt_sb_printf(&sb, "%s\n%s\n", prelude_file(e.dl->prelude), prelude_file("common.h"));
    if (e.dl->preamble) e.dl->preamble(&sb, k);
    ckt_emit_param_comment(&sb, k);
    e.dl->frame->open_kernel(&sb, k, lds, ckt_emit_dynamic_lds_bytes(k, t) > 0);
    e.ind = 1;
    ckt_em_find_reg_forms(&e);
    declare(&e);
    ckt_emit_mbar_init(&sb, e.ind, e.dl, k);
    for (int i = 0; i < ckt_kernel_nops(k) && !e.st; i++) {
        int done = emit_pass_loop(&e, i);
        if (!done && !e.st) done = ckt_em_reduce_run(&e, i);
        if (done)
            i += done - 1;
        else if (!e.st)
            emit_op(&e, ckt_kernel_op(k, i));
    }
    ckt_em_thread_close(&e);
    if (stoppable(&e) && has_op(k, CKT_OP_LOOP))
        ckt_em_line(&e, "ckt_stop:; /* a stopped launch leaves its loops here */");
    if (e.dl->async_state && has_async(k)) {
        ckt_emit_out o = ckt_em_out(&e);
        e.dl->async_state(&o, false);
    }
    ckt_emit_mbar_close(&sb, e.ind, e.dl, k);
    e.ind = 0;
    ckt_sb_printf(&sb, "}\n");
    e.dl->frame->close_kernel(&sb, k, lds);
    if (!e.st && ckt_expr_pool_status(e.ex, err)) e.st = err->status;
    ckt_expr_pool_free(&pool);
    if (e.st) {
        free(sb.buf);
        return e.st;
    }
    if (!(*source = ckt_sb_finish(&sb, "emit", err))) return err ? err->status : CKT_ENOMEM;
    return CKT_OK;
}
