/* The kernel builder from arbitrary bytes: the input is a program of builder calls on the
 * kernel IR (ckt/kernel_ir.h) and its expressions (ckt/expr.h) — parameters with odd names,
 * global / LDS / register tensors of random ranks, shapes, strides and swizzles, distributions
 * from random thread layouts, TV layouts and raked patterns, windows, moves, loops and branches
 * (unbalanced too), barriers, loads, stores, maps, folds and block reductions, mbarriers, bulk
 * tensor copies (whole, clipped, multicast) and clusters with random (also invalid) indices — then
 * the emitter for the three dialects (and the CPU target's Hopper emulation) and launch checks with random
 * parameter values. Any error status is fine; a crash, a sanitizer report, a leak or a hang is
 * not. Sizes are bounded so one input stays fast. */
#include <math.h>
#include <stdlib.h>

#include "ckt/ckt.h"
#include "ckt/emit.h"
#include "ckt/expr.h"
#include "ckt/kernel_ir.h"
#include "ckt/layout.h"
#include "fuzz_common.h"

#define MAX_STEPS 64
#define MAX_EXPRS 64

typedef struct {
    fuzz_input in;
    ckt_kernel *k;
    ckt_expr_pool *ex;
    ckt_expr_id e[MAX_EXPRS];
    int ne;
    int dist[16];
    int ndist;
} fz;

static void ok_or_msg(ckt_status s, const ckt_error *err)
{
    if (s != CKT_OK) FUZZ_CHECK(err->msg[0] != 0);
}

static void push_expr(fz *f, ckt_expr_id id)
{
    if (id == CKT_EXPR_NONE) return;
    if (f->ne < MAX_EXPRS) f->e[f->ne++] = id;
    else f->e[fz_u8(&f->in) % MAX_EXPRS] = id;
}

/* Mostly one of the expressions built so far; sometimes none, or an id that does not exist. */
static ckt_expr_id pick_expr(fz *f)
{
    uint8_t b = fz_u8(&f->in);
    if (b >= 250) return b == 255 ? CKT_EXPR_NONE : b == 254 ? (ckt_expr_id)0x7fffffff : (ckt_expr_id)(f->ex->n + (b - 250));
    if (!f->ne) return ckt_expr_int(f->ex, b & 7);
    return f->e[b % f->ne];
}

/* Mostly an index below n (or n itself, one past the end); sometimes a negative or huge one. */
static int pick_index(fz *f, int n)
{
    uint8_t b = fz_u8(&f->in);
    if (b >= 248) return b == 255 ? -1 : b == 254 ? 0x7fffffff : (int)(int8_t)b;
    return n > 0 ? b % (n + 1) : b % 2;
}

static int64_t small_len(fz *f)
{
    uint8_t b = fz_u8(&f->in);
    if (b >= 240) return fz_int(&f->in); /* anything, also negative or 2^63-ish */
    static const int64_t common[] = {1, 2, 4, 8, 16, 32, 64, 3, 5, 6, 12, 128, 256, 0, 24, 48};
    return common[b % 16];
}

static const char *pick_name(fz *f)
{
    static const char *const names[] = {"a", "b", "x", "n", "m", "scale", "out", "in", "A", "B_", "_c", "len", "tid", "r0", "w1_0",
                                        "k0", "v2", "x9", "int", "for", "ckt_x", "__z", "", "9lives", "has space", "dash-name",
                                        "abcdefghijklmnopqrstuvwxyz01234", "abcdefghijklmnopqrstuvwxyz0123", "\xff\xfe", "bid_x",
                                        "p", "q"};
    uint8_t b = fz_u8(&f->in);
    if (b == 255) return NULL;
    return names[b % (sizeof names / sizeof names[0])];
}

static ckt_dtype pick_dtype(fz *f) { return (ckt_dtype)(fz_u8(&f->in) % (CKT_DTYPE_COUNT + 2)); }

/* A layout: flat of a random rank, or parsed from a short string of the input. */
static ckt_status make_layout(fz *f, int want_rank, ckt_layout *out, ckt_error *err)
{
    uint8_t how = fz_u8(&f->in);
    if (how & 1) {
        char s[33];
        size_t n = fz_u8(&f->in) % 32;
        for (size_t i = 0; i < n; i++) {
            static const char alpha[] = "0123456789(),:_12481632";
            s[i] = alpha[fz_u8(&f->in) % (sizeof alpha - 1)];
        }
        s[n] = 0;
        return ckt_layout_parse(s, out, err);
    }
    int rank = want_rank > 0 && !(how & 2) ? want_rank : 1 + fz_u8(&f->in) % 5;
    int64_t shape[8], stride[8];
    for (int i = 0; i < rank; i++) {
        shape[i] = small_len(f);
        stride[i] = (how & 4) ? fz_int(&f->in) : small_len(f);
    }
    return ckt_layout_flat(out, rank, shape, stride, err);
}

static void add_dist(fz *f, const ckt_dist *d)
{
    ckt_error err;
    err.msg[0] = 0;
    int idx;
    ckt_status s = ckt_kernel_add_dist(f->k, d, &idx, &err);
    ok_or_msg(s, &err);
    if (!s && f->ndist < 16) f->dist[f->ndist++] = idx;
}

static int pick_dist(fz *f)
{
    uint8_t b = fz_u8(&f->in);
    if (b >= 250) return b == 255 ? -1 : 1 << 20;
    if (!f->ndist) return b % 2 ? 0 : -1;
    return f->dist[b % f->ndist];
}

static void step(fz *f, uint8_t opcode)
{
    ckt_error err;
    err.msg[0] = 0;
    ckt_status s = CKT_OK;
    ckt_kernel *k = f->k;
    ckt_expr_pool *ex = f->ex;
    int idx;
    switch (opcode % 31) {
    case 0: { /* pointer parameter */
        const char *name = pick_name(f);
        ckt_dtype dt = pick_dtype(f);
        bool c = fz_u8(&f->in) & 1;
        int64_t align = fz_u8(&f->in) & 1 ? fz_int(&f->in) : 0;
        s = ckt_kernel_param_ptr(k, name, dt, c, align, &idx, &err);
        break;
    }
    case 1: { /* scalar parameter, maybe specialized */
        const char *name = pick_name(f);
        ckt_param_kind kind = (ckt_param_kind)(fz_u8(&f->in) % 5);
        bool spec = fz_u8(&f->in) & 1;
        int64_t iv = fz_int(&f->in);
        double fv = (double)fz_int(&f->in) / 3.0;
        if (fz_u8(&f->in) == 7) fv = NAN;
        int64_t div = fz_int(&f->in);
        s = ckt_kernel_param_scalar(k, name, kind, spec, iv, fv, div, &idx, &err);
        if (!s) push_expr(f, ckt_kernel_param(k, idx)->expr);
        break;
    }
    case 2: { /* leaves */
        uint8_t w = fz_u8(&f->in);
        ckt_expr_id id;
        switch (w % 6) {
        case 0: id = ckt_expr_int(ex, fz_int(&f->in)); break;
        case 1: id = ckt_expr_float(ex, (float)fz_int(&f->in) * 0.25f); break;
        case 2: id = ckt_expr_tid(ex); break;
        case 3: id = ckt_expr_bid(ex, (int)(int8_t)fz_u8(&f->in) % 4); break;
        case 4: id = ckt_expr_nblocks(ex, (int)(int8_t)fz_u8(&f->in) % 4); break;
        default: id = ckt_expr_input(ex, fz_u8(&f->in) % 10); break;
        }
        push_expr(f, id);
        break;
    }
    case 3: case 4: case 5: { /* binary operators (any operator code, also unary ones) */
        ckt_expr_op op = (ckt_expr_op)(CKT_E_ADD + fz_u8(&f->in) % (CKT_E_TOINT - CKT_E_ADD + 2));
        ckt_expr_id a = pick_expr(f), b = pick_expr(f);
        push_expr(f, ckt_expr_binary(ex, op, a, b));
        break;
    }
    case 6: { /* unary operators */
        static const ckt_expr_op ops[] = {CKT_E_NEG, CKT_E_NOT, CKT_E_EXP, CKT_E_EXP2, CKT_E_LOG, CKT_E_SQRT, CKT_E_ABS, CKT_E_TOFLOAT, CKT_E_TOINT, CKT_E_ADD, CKT_E_ROUND};
        ckt_expr_op op = ops[fz_u8(&f->in) % (sizeof ops / sizeof ops[0])];
        push_expr(f, ckt_expr_unary(ex, op, pick_expr(f)));
        break;
    }
    case 7: {
        ckt_expr_id c = pick_expr(f), a = pick_expr(f), b = pick_expr(f);
        push_expr(f, ckt_expr_select(ex, c, a, b));
        break;
    }
    case 8:
        push_expr(f, ckt_expr_round(ex, pick_expr(f), (int)(fz_u8(&f->in) % (CKT_DTYPE_COUNT + 2)) - 1));
        break;
    case 9: { /* global tensor */
        int param = pick_index(f, ckt_kernel_nparams(k));
        ckt_dtype dt = pick_dtype(f);
        const ckt_kparam *p = ckt_kernel_param(k, param);
        if (p && (fz_u8(&f->in) & 3)) dt = p->dtype;
        int rank = fz_u8(&f->in) % 6;
        ckt_expr_id shape[CKT_K_MAX_RANK], stride[CKT_K_MAX_RANK];
        for (int d = 0; d < CKT_K_MAX_RANK; d++) {
            uint8_t b = fz_u8(&f->in);
            shape[d] = b & 1 ? pick_expr(f) : ckt_expr_int(ex, small_len(f));
            stride[d] = b & 2 ? pick_expr(f) : ckt_expr_int(ex, small_len(f));
        }
        s = ckt_kernel_global(k, param, dt, rank, shape, stride, fz_u8(&f->in) & 1, &idx, &err);
        break;
    }
    case 10: { /* LDS tensor, maybe swizzled */
        ckt_layout l;
        s = make_layout(f, 0, &l, &err);
        if (s) break;
        ckt_swizzle sw = {(int)(int8_t)fz_u8(&f->in) % 8, (int)(int8_t)fz_u8(&f->in) % 8, (int)(int8_t)fz_u8(&f->in) % 8};
        s = ckt_kernel_lds(k, pick_dtype(f), &l, fz_u8(&f->in) & 1 ? &sw : NULL, &idx, &err);
        break;
    }
    case 11: /* registers */
        s = ckt_kernel_registers(k, pick_dtype(f), pick_dist(f), fz_int(&f->in), &idx, &err);
        break;
    case 12: { /* distribution from a thread layout */
        ckt_layout tl;
        int rank = (int)(fz_u8(&f->in) % 6);
        s = make_layout(f, rank, &tl, &err);
        if (s) break;
        int64_t lengths[CKT_K_MAX_RANK];
        for (int d = 0; d < CKT_K_MAX_RANK; d++) lengths[d] = small_len(f);
        int order[CKT_K_MAX_RANK] = {0, 1, 2, 3};
        uint8_t perm = fz_u8(&f->in);
        for (int d = 0; d < CKT_K_MAX_RANK; d++) order[d] = perm & 0x80 ? (int)((perm >> (2 * d)) & 3) : (d + perm) % (rank > 0 ? rank : 1);
        int vd = (int)(int8_t)fz_u8(&f->in) % 5;
        int64_t spv = small_len(f);
        ckt_dist d;
        s = ckt_dist_from_thread_layout(&tl, rank, lengths, vd, spv, fz_u8(&f->in) & 1 ? order : NULL, &d, &err);
        if (!s) add_dist(f, &d);
        break;
    }
    case 13: { /* distribution from a TV layout */
        ckt_layout tv;
        s = make_layout(f, 2, &tv, &err);
        if (s) break;
        int rank = (int)(fz_u8(&f->in) % 6);
        int64_t lengths[CKT_K_MAX_RANK];
        for (int d = 0; d < CKT_K_MAX_RANK; d++) lengths[d] = small_len(f);
        ckt_dist d;
        s = ckt_dist_from_tv(&tv, rank, lengths, &d, &err);
        if (!s) add_dist(f, &d);
        break;
    }
    case 14: { /* raked 1-D */
        int64_t t = small_len(f), p = small_len(f), r = small_len(f);
        ckt_dist d;
        s = ckt_dist_raked_1d(t, p, r, &d, &err);
        if (!s) add_dist(f, &d);
        break;
    }
    case 15: { /* window */
        int t = pick_index(f, ckt_kernel_ntensors(k));
        int rank = (int)(fz_u8(&f->in) % 6);
        int64_t lengths[CKT_K_MAX_RANK];
        ckt_expr_id origin[CKT_K_MAX_RANK];
        for (int d = 0; d < CKT_K_MAX_RANK; d++) {
            lengths[d] = small_len(f);
            origin[d] = fz_u8(&f->in) & 1 ? pick_expr(f) : ckt_expr_int(ex, small_len(f));
        }
        s = ckt_kernel_window_make(k, t, rank, lengths, origin, &idx, &err);
        break;
    }
    case 16: { /* move */
        int w = pick_index(f, ckt_kernel_nwindows(k));
        ckt_expr_id st[CKT_K_MAX_RANK];
        for (int d = 0; d < CKT_K_MAX_RANK; d++) st[d] = fz_u8(&f->in) & 1 ? pick_expr(f) : ckt_expr_int(ex, small_len(f));
        s = ckt_kernel_move(k, w, st, &err);
        break;
    }
    case 17: { /* loop (bit 1 of the same byte: rolled) */
        ckt_expr_id v;
        int sel = fz_u8(&f->in);
        s = ckt_kernel_loop_rolled(k, sel & 1 ? pick_expr(f) : ckt_expr_int(ex, small_len(f)), (sel & 2) != 0, &v, &err);
        if (!s) push_expr(f, v);
        break;
    }
    case 18: s = ckt_kernel_if(k, pick_expr(f), &err); break;
    case 19: case 20: s = ckt_kernel_end(k, &err); break;
    case 21: s = ckt_kernel_sync(k, &err); break;
    case 22: { /* load */
        int w = pick_index(f, ckt_kernel_nwindows(k));
        int d = pick_dist(f);
        int vd = (int)(int8_t)fz_u8(&f->in) % 6;
        int64_t spv = fz_u8(&f->in) & 1 ? small_len(f) : 0;
        s = ckt_kernel_load(k, w, d, vd, spv, (float)fz_int(&f->in), &idx, &err);
        break;
    }
    case 23: { /* store */
        int w = pick_index(f, ckt_kernel_nwindows(k));
        int r = pick_index(f, ckt_kernel_ntensors(k));
        int vd = (int)(int8_t)fz_u8(&f->in) % 6;
        int64_t spv = fz_u8(&f->in) & 1 ? small_len(f) : 0;
        s = ckt_kernel_store(k, w, r, vd, spv, &err);
        break;
    }
    case 24: s = ckt_kernel_clear(k, pick_index(f, ckt_kernel_ntensors(k)), fz_u8(&f->in) == 3 ? NAN : (float)fz_int(&f->in), &err); break;
    case 25: { /* map */
        int n = (int)(fz_u8(&f->in) % 11) - 1;
        int inputs[16];
        for (int i = 0; i < 16; i++) inputs[i] = pick_index(f, ckt_kernel_ntensors(k));
        s = ckt_kernel_map(k, n, inputs, pick_expr(f), pick_dtype(f), &idx, &err);
        break;
    }
    case 26: {
        int acc = pick_index(f, ckt_kernel_ntensors(k)), src = pick_index(f, ckt_kernel_ntensors(k));
        s = ckt_kernel_fold(k, acc, src, (ckt_reduce_op)(fz_u8(&f->in) % 4), &err);
        break;
    }
    case 27: s = ckt_kernel_block_reduce(k, pick_index(f, ckt_kernel_ntensors(k)), (ckt_reduce_op)(fz_u8(&f->in) % 4), &err); break;
    case 28: {
        ckt_expr_id v;
        s = ckt_kernel_var(k, pick_name(f), pick_expr(f), &v, &err);
        if (!s) push_expr(f, v);
        break;
    }
    case 29: {
        ckt_expr_id v;
        s = ckt_kernel_let(k, fz_u8(&f->in) % 4 ? pick_name(f) : NULL, pick_expr(f), &v, &err);
        if (!s) push_expr(f, v);
        break;
    }
    default: { /* (one opcode, a second byte choosing: so the other opcodes keep their meaning) */
        uint8_t which = fz_u8(&f->in) % 8;
        switch (which) {
        case 1: {
            int set;
            s = ckt_kernel_mbarriers(k, fz_int(&f->in), fz_int(&f->in), &set, &err);
            break;
        }
        case 2: case 3: case 4: { /* bulk copies: whole, clipped, multicast */
            int dst = pick_index(f, ckt_kernel_nwindows(k)), src = pick_index(f, ckt_kernel_nwindows(k));
            int set = pick_index(f, ckt_kernel_nmbars(k));
            ckt_expr_id bar = pick_expr(f);
            s = (which == 2 ? ckt_kernel_tma_copy : which == 3 ? ckt_kernel_tma_copy_clipped : ckt_kernel_tma_copy_multicast)(k, dst, src, set, bar, &err);
            break;
        }
        case 5: s = ckt_kernel_mbar_wait(k, pick_index(f, ckt_kernel_nmbars(k)), pick_expr(f), pick_expr(f), &err); break;
        case 6: s = ckt_kernel_cluster(k, fz_int(&f->in), &err); break;
        default: ckt_kernel_set_line(k, (int)fz_int(&f->in)); break;
        }
        break;
    }
    }
    ok_or_msg(s, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f;
    memset(&f, 0, sizeof f);
    f.in.p = data;
    f.in.n = size;
    ckt_error err;
    err.msg[0] = 0;
    static const char *const knames[] = {"k", "copy", "reduce_rows", "ckt_bad", "__bad", "", "1x", "kernel with space",
                                         "abcdefghijklmnopqrstuvwxyz0123456789", "K"};
    const char *name = knames[fz_u8(&f.in) % 10];
    uint8_t bsel = fz_u8(&f.in);
    static const int64_t blocks[] = {64, 256, 1, 32, 128, 1024, 0, -1, 1025, INT64_MAX, INT64_MIN, 96, 512, 7, 2, 4};
    int64_t block = bsel < 240 ? blocks[bsel % 16] : fz_int(&f.in);
    ckt_status s = ckt_kernel_create(name, block, &f.k, &err);
    if (s) {
        FUZZ_CHECK(err.msg[0] != 0);
        return 0;
    }
    f.ex = ckt_kernel_exprs(f.k);
    for (int i = 0; i < MAX_STEPS && f.in.n; i++) step(&f, fz_u8(&f.in));
    /* sometimes close what is open, so the emitter gets more finished kernels */
    if (fz_u8(&f.in) & 1)
        for (int i = 0; i < 40; i++)
            if (ckt_kernel_end(f.k, &err)) break;
    static const char *const targets[] = {"cpu", "gfx90a", "sm_90", "cpu:sm_90a"};
    (void)ckt_kernel_finish(f.k, &err); /* refused with loops open: then emitting is refused too */
    for (int t = 0; t < 4; t++) {
        char *src = NULL;
        err.msg[0] = 0;
        s = ckt_emit_named(f.k, targets[t], &src, &err);
        if (s) FUZZ_CHECK(err.msg[0] != 0);
        else FUZZ_CHECK(src != NULL);
        free(src);
    }
    int64_t values[CKT_K_MAX_PARAMS];
    for (int i = 0; i < CKT_K_MAX_PARAMS; i++) values[i] = fz_int(&f.in);
    err.msg[0] = 0;
    s = ckt_kernel_check_launch(f.k, values, &err);
    if (s) FUZZ_CHECK(err.msg[0] != 0);
    s = ckt_kernel_check_launch(f.k, NULL, &err);
    if (s) FUZZ_CHECK(err.msg[0] != 0);
    ckt_param sig[CKT_K_MAX_PARAMS];
    FUZZ_CHECK(ckt_kernel_signature(f.k, sig, CKT_K_MAX_PARAMS) <= ckt_kernel_nparams(f.k));
    ckt_kernel_destroy(f.k);
    return 0;
}
