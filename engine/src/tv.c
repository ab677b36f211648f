/* The common view of distributions: TV layouts (thread, value) -> offset in the row-major
 * tile; matrix-instruction fragments; comparing and drawing distributions. */
#include <stdlib.h>
#include <string.h>

#include "ckt/checked.h"
#include "ckt/distribution.h"

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static ckt_status tv_modes(const ckt_layout *tv, ckt_layout *t, ckt_layout *v, const char *what, ckt_error *err)
{
    if (ckt_layout_rank(tv) != 2) return ckt_fail(err, CKT_EINVAL, "same_distribution: %s is not a (thread, value) layout (rank %d, need 2)", what, ckt_layout_rank(tv));
    ckt_layout_mode(tv, 0, t, err);
    ckt_layout_mode(tv, 1, v, err);
    return CKT_OK;
}

ckt_status ckt_same_distribution(const ckt_layout *a, const ckt_layout *b, bool strict, bool *same, ckt_error *err)
{
    ckt_layout at, av, bt, bv;
    ckt_status st;
    if ((st = tv_modes(a, &at, &av, "the first argument", err)) || (st = tv_modes(b, &bt, &bv, "the second argument", err))) return st;
    int64_t nt = ckt_layout_size(&at), nv = ckt_layout_size(&av);
    if (nt != ckt_layout_size(&bt) || nv != ckt_layout_size(&bv)) { *same = false; return CKT_OK; }
    if (nv > (1 << 20) || nt > CKT_WORK_LIMIT / nv)
        return ckt_fail(err, CKT_ECAPACITY, "same_distribution: %lld threads x %lld values is more than the analysis limit %lld", (long long)nt, (long long)nv, (long long)CKT_WORK_LIMIT);
    int64_t *x = malloc(sizeof(int64_t) * (size_t)nv), *y = malloc(sizeof(int64_t) * (size_t)nv);
    if (!x || !y) { free(x); free(y); return ckt_fail(err, CKT_ENOMEM, "same_distribution: out of memory"); }
    bool eq = true;
    int64_t tv2[2];
    ckt_tuple c;
    for (int64_t t = 0; t < nt && eq; t++) {
        for (int64_t v = 0; v < nv; v++) {
            tv2[0] = t;
            tv2[1] = v;
            ckt_tuple_flat(&c, 2, tv2, err);
            ckt_layout_eval_coord(a, &c, &x[v], err);
            ckt_layout_eval_coord(b, &c, &y[v], err);
        }
        if (!strict) {
            qsort(x, (size_t)nv, sizeof *x, cmp64);
            qsort(y, (size_t)nv, sizeof *y, cmp64);
        }
        eq = memcmp(x, y, sizeof(int64_t) * (size_t)nv) == 0;
    }
    free(x);
    free(y);
    *same = eq;
    return CKT_OK;
}

ckt_status ckt_tv_owners(const ckt_layout *tv, int64_t cells, int64_t *owner_thread, int64_t *owner_value, ckt_error *err)
{
    ckt_layout t, v;
    ckt_status st = tv_modes(tv, &t, &v, "the layout", err);
    if (st) return st;
    for (int64_t i = 0; i < cells; i++) owner_thread[i] = owner_value[i] = -1;
    int64_t nt = ckt_layout_size(&t), nv = ckt_layout_size(&v);
    if (nt > CKT_WORK_LIMIT / nv)
        return ckt_fail(err, CKT_ECAPACITY, "tv layout: %lld threads x %lld values is more than the analysis limit %lld", (long long)nt, (long long)nv, (long long)CKT_WORK_LIMIT);
    for (int64_t th = 0; th < nt; th++)
        for (int64_t va = 0; va < nv; va++) {
            int64_t off, a, b;
            ckt_layout_eval(&t, th, &a, err);
            ckt_layout_eval(&v, va, &b, err);
            off = a + b;
            if (off < 0 || off >= cells)
                return ckt_fail(err, CKT_EINVAL, "tv layout: thread %lld value %lld maps to offset %lld, outside the %lld-cell tile", (long long)th, (long long)va, (long long)off, (long long)cells);
            if (owner_thread[off] < 0) { owner_thread[off] = th; owner_value[off] = va; }
        }
    return CKT_OK;
}

/* Lane tables from shared/reference/amd_gpu.md and nvidia_gpu.md, written as TV layouts over the
 * row-major operand tile (offset = row * cols + col). */
static const struct {
    const char *name;
    char operand;
    int64_t rows, cols, lanes, values;
    const char *tv;
} fragments[] = {
    /* v_mfma_f32_32x32x8f16: A[l%32][4*(l/32)+r], B[4*(l/32)+r][l%32], D[8*(r/4)+4*(l/32)+r%4][l%32] */
    {"mfma_f32_32x32x8f16", 'A', 32, 8, 64, 4, "((32,2),4):((8,4),1)"},
    {"mfma_f32_32x32x8f16", 'B', 8, 32, 64, 4, "((32,2),4):((1,128),32)"},
    {"mfma_f32_32x32x8f16", 'C', 32, 32, 64, 16, "((32,2),(4,4)):((1,128),(32,256))"},
    /* v_mfma_f32_16x16x16f16: A[l%16][4*(l/16)+r], B[4*(l/16)+r][l%16], D[4*(l/16)+r][l%16] */
    {"mfma_f32_16x16x16f16", 'A', 16, 16, 64, 4, "((16,4),4):((16,4),1)"},
    {"mfma_f32_16x16x16f16", 'B', 16, 16, 64, 4, "((16,4),4):((1,64),16)"},
    {"mfma_f32_16x16x16f16", 'C', 16, 16, 64, 4, "((16,4),4):((1,64),16)"},
    /* mma.sync m16n8k16 (g = l>>2, t = l%4): A row g+8*((i>>1)&1), col 2t+(i&1)+8*(i>>2);
     * B k = 2t+(i&1)+8*(i>>1), n = g; C row g+8*(i>>1), col 2t+(i&1) */
    {"mma_m16n8k16", 'A', 16, 16, 32, 8, "((4,8),(2,2,2)):((2,16),(1,128,8))"},
    {"mma_m16n8k16", 'B', 16, 8, 32, 4, "((4,8),(2,2)):((16,1),(8,64))"},
    {"mma_m16n8k16", 'C', 16, 8, 32, 4, "((4,8),(2,2)):((2,8),(1,64))"},
};

ckt_status ckt_fragment_get(const char *name, char operand, ckt_fragment *out, ckt_error *err)
{
    if (!name) return ckt_fail(err, CKT_EINVAL, "fragment: name is NULL");
    /* the bf16_1k instructions share the f16 lane layouts */
    const char *canon = name;
    if (strcmp(name, "mfma_f32_32x32x8bf16_1k") == 0) canon = "mfma_f32_32x32x8f16";
    if (strcmp(name, "mfma_f32_16x16x16bf16_1k") == 0) canon = "mfma_f32_16x16x16f16";
    if (operand >= 'a' && operand <= 'z') operand = (char)(operand - 'a' + 'A');
    if (operand == 'D') operand = 'C';
    bool known = false;
    for (size_t i = 0; i < sizeof fragments / sizeof *fragments; i++) {
        if (strcmp(fragments[i].name, canon) != 0) continue;
        known = true;
        if (fragments[i].operand != operand) continue;
        ckt_fragment f;
        memset(&f, 0, sizeof f);
        strncpy(f.name, name, sizeof f.name - 1);
        f.operand = operand;
        f.rows = fragments[i].rows;
        f.cols = fragments[i].cols;
        f.lanes = fragments[i].lanes;
        f.values = fragments[i].values;
        ckt_status st = ckt_layout_parse(fragments[i].tv, &f.tv, err);
        if (st) return st;
        *out = f;
        return CKT_OK;
    }
    if (known) return ckt_fail(err, CKT_EINVAL, "fragment: operand '%c' of %s is not one of A, B, C", operand, name);
    return ckt_fail(err, CKT_EINVAL, "fragment: unknown instruction '%s' (known: mfma_f32_32x32x8f16, mfma_f32_16x16x16f16, their bf16_1k variants, mma_m16n8k16)", name);
}
