/* Matrix-instruction operand fragments as distributions. Each is written three ways, from the
 * lane tables of AMD's MFMA instructions (the CDNA ISA guides) and the PTX ISA's mma.sync
 * fragments: a TV layout over the row-major operand tile (the ground truth), a CK encoding (one P:
 * the lane) and an IREE nested layout. test_distribution_fragment.c checks every lane and register
 * of all three against the tables. */
#include <string.h>

#include "ckt/distribution.h"
#include "ckt/fragment.h"

typedef struct {
    int nh[2];
    int64_t hs[2][3];
    int np; /* components of the lane, most significant first */
    int pm[3], pn[3];
    int ny; /* Ys, the register index with the last fastest */
    int ym[3], yn[3];
} enc_spec;

typedef struct {
    int64_t batch[2], outer[2], thread[2], element[2], thread_strides[2];
} nested_spec;

static const struct {
    const char *name;
    char operand;
    int64_t rows, cols, lanes, values;
    const char *tv;
    enc_spec enc;
    nested_spec nested;
} fragments[] = {
    /* v_mfma_f32_32x32x8f16: A[l%32][4*(l/32)+r], B[4*(l/32)+r][l%32],
       D[8*(r/4)+4*(l/32)+r%4][l%32] */
    {"mfma_f32_32x32x8f16",
     'A',
     32,
     8,
     64,
     4,
     "((32,2),4):((8,4),1)",
     {{1, 2}, {{32}, {2, 4}}, 2, {2, 1}, {0, 0}, 1, {2}, {1}},
     {{1, 1}, {1, 1}, {32, 2}, {1, 4}, {1, 32}}},
    {"mfma_f32_32x32x8f16",
     'B',
     8,
     32,
     64,
     4,
     "((32,2),4):((1,128),32)",
     {{2, 1}, {{2, 4}, {32}}, 2, {1, 2}, {0, 0}, 1, {1}, {1}},
     {{1, 1}, {1, 1}, {2, 32}, {4, 1}, {32, 1}}},
    {"mfma_f32_32x32x8f16",
     'C',
     32,
     32,
     64,
     16,
     "((32,2),(4,4)):((1,128),(32,256))",
     {{3, 1}, {{4, 2, 4}, {32}}, 2, {1, 2}, {1, 0}, 2, {1, 1}, {0, 2}},
     {{4, 1}, {1, 1}, {2, 32}, {4, 1}, {32, 1}}},
    /* v_mfma_f32_16x16x16f16: A[l%16][4*(l/16)+r], B[4*(l/16)+r][l%16], D[4*(l/16)+r][l%16] */
    {"mfma_f32_16x16x16f16",
     'A',
     16,
     16,
     64,
     4,
     "((16,4),4):((16,4),1)",
     {{1, 2}, {{16}, {4, 4}}, 2, {2, 1}, {0, 0}, 1, {2}, {1}},
     {{1, 1}, {1, 1}, {16, 4}, {1, 4}, {1, 16}}},
    {"mfma_f32_16x16x16f16",
     'B',
     16,
     16,
     64,
     4,
     "((16,4),4):((1,64),16)",
     {{2, 1}, {{4, 4}, {16}}, 2, {1, 2}, {0, 0}, 1, {1}, {1}},
     {{1, 1}, {1, 1}, {4, 16}, {4, 1}, {16, 1}}},
    {"mfma_f32_16x16x16f16",
     'C',
     16,
     16,
     64,
     4,
     "((16,4),4):((1,64),16)",
     {{2, 1}, {{4, 4}, {16}}, 2, {1, 2}, {0, 0}, 1, {1}, {1}},
     {{1, 1}, {1, 1}, {4, 16}, {4, 1}, {16, 1}}},
    /* mma.sync m16n8k16 (g = l>>2, t = l%4): A row g+8*((i>>1)&1), col 2t+(i&1)+8*(i>>2);
     * B k = 2t+(i&1)+8*(i>>1), n = g; C row g+8*(i>>1), col 2t+(i&1) */
    {"mma_m16n8k16",
     'A',
     16,
     16,
     32,
     8,
     "((4,8),(2,2,2)):((2,16),(1,128,8))",
     {{2, 3}, {{2, 8}, {2, 4, 2}}, 2, {1, 2}, {1, 1}, 3, {2, 1, 2}, {0, 0, 2}},
     {{1, 2}, {2, 1}, {8, 4}, {1, 2}, {4, 1}}},
    {"mma_m16n8k16",
     'B',
     16,
     8,
     32,
     4,
     "((4,8),(2,2)):((16,1),(8,64))",
     {{3, 1}, {{2, 4, 2}, {8}}, 2, {2, 1}, {0, 1}, 2, {1, 1}, {0, 2}},
     {{2, 1}, {1, 1}, {4, 8}, {2, 1}, {1, 4}}},
    {"mma_m16n8k16",
     'C',
     16,
     8,
     32,
     4,
     "((4,8),(2,2)):((2,8),(1,64))",
     {{2, 2}, {{2, 8}, {4, 2}}, 2, {1, 2}, {1, 0}, 2, {1, 2}, {0, 1}},
     {{2, 1}, {1, 1}, {8, 4}, {1, 2}, {4, 1}}},
};
#define NFRAG (sizeof fragments / sizeof *fragments)

const char *const *ckt_fragment_names(void)
{
    static const char *const names[] = {"mfma_f32_32x32x8f16", "mfma_f32_16x16x16f16",
                                        "mma_m16n8k16", NULL};
    return names;
}

/* the bf16_1k instructions share the f16 lane layouts */
static const char *canonical(const char *name)
{
    if (strcmp(name, "mfma_f32_32x32x8bf16_1k") == 0) return "mfma_f32_32x32x8f16";
    if (strcmp(name, "mfma_f32_16x16x16bf16_1k") == 0) return "mfma_f32_16x16x16f16";
    return name;
}

static int find(const char *name, char operand)
{
    for (size_t i = 0; i < NFRAG; i++)
        if (strcmp(fragments[i].name, canonical(name)) == 0 && fragments[i].operand == operand)
            return (int)i;
    return -1;
}

ckt_status ckt_fragment_get(const char *name, char operand, ckt_fragment *out, ckt_error *err)
{
    if (!name || !out) return ckt_fail(err, CKT_EINVAL, "fragment: NULL argument");
    if (operand >= 'a' && operand <= 'z') operand = (char)(operand - 'a' + 'A');
    if (operand == 'D') operand = 'C';
    bool known = false;
    for (size_t i = 0; i < NFRAG; i++)
        known = known || strcmp(fragments[i].name, canonical(name)) == 0;
    if (!known)
        return ckt_fail(err, CKT_EINVAL,
                        "fragment: unknown instruction '%s' (known: mfma_f32_32x32x8f16, "
                        "mfma_f32_16x16x16f16, their bf16_1k variants, mma_m16n8k16)",
                        name);
    int i = find(name, operand);
    if (i < 0)
        return ckt_fail(err, CKT_EINVAL, "fragment: operand '%c' of %s is not one of A, B, C",
                        operand, name);
    ckt_fragment f;
    memset(&f, 0, sizeof f);
    if (strlen(name) >= sizeof f.name)
        return ckt_fail(err, CKT_EINVAL, "fragment: name '%s' is too long", name);
    strcpy(f.name, name);
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

static int lookup(const ckt_fragment *f, const char *fn, ckt_error *err)
{
    if (!f) return ckt_fail(err, CKT_EINVAL, "%s: NULL argument", fn), -1;
    int i = find(f->name, f->operand);
    if (i < 0)
        ckt_fail(err, CKT_EINVAL, "%s: '%s' operand '%c' is not a fragment ckt knows", fn, f->name,
                 f->operand);
    return i;
}

ckt_status ckt_fragment_encoding(const ckt_fragment *f, ckt_encoding *out, ckt_error *err)
{
    int i = lookup(f, "fragment encoding", err);
    if (i < 0) return CKT_EINVAL;
    if (!out) return ckt_fail(err, CKT_EINVAL, "fragment encoding: NULL argument");
    const enc_spec *s = &fragments[i].enc;
    ckt_encoding_desc d;
    memset(&d, 0, sizeof d);
    d.nx = 2;
    for (int x = 0; x < 2; x++) {
        d.nh[x] = s->nh[x];
        for (int k = 0; k < s->nh[x]; k++) d.hs[x][k] = s->hs[x][k];
    }
    d.np = 1;
    d.np_comp[0] = s->np;
    for (int j = 0; j < s->np; j++) {
        d.p_major[0][j] = s->pm[j];
        d.p_minor[0][j] = s->pn[j];
    }
    d.ny = s->ny;
    for (int y = 0; y < s->ny; y++) {
        d.y_major[y] = s->ym[y];
        d.y_minor[y] = s->yn[y];
    }
    return ckt_encoding_make(&d, out, err);
}

ckt_status ckt_fragment_nested(const ckt_fragment *f, ckt_nested *out, ckt_error *err)
{
    int i = lookup(f, "fragment nested", err);
    if (i < 0) return CKT_EINVAL;
    if (!out) return ckt_fail(err, CKT_EINVAL, "fragment nested: NULL argument");
    const nested_spec *s = &fragments[i].nested;
    ckt_nested n;
    memset(&n, 0, sizeof n);
    n.rank = 2;
    for (int d = 0; d < 2; d++) {
        n.subgroup_tile[d] = 1;
        n.batch_tile[d] = s->batch[d];
        n.outer_tile[d] = s->outer[d];
        n.thread_tile[d] = s->thread[d];
        n.element_tile[d] = s->element[d];
        n.thread_strides[d] = s->thread_strides[d];
    }
    n.subgroup_size = fragments[i].lanes;
    return ckt_nested_make(&n, out, err);
}
