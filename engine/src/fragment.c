/* Matrix-instruction operand fragments as distributions. Each is written three ways, from the
 * lane tables of AMD's MFMA instructions (the CDNA ISA guides) and the PTX ISA's mma.sync
 * fragments: a TV layout over the row-major operand tile (the ground truth: the instruction's lane
 * layout in mma.c), a CK encoding (one P: the lane) and an IREE nested layout (both here).
 * test_distribution_fragment.c checks every lane and register of all three against the tables. */
#include <string.h>

#include "ckt/distribution.h"
#include "ckt/fragment.h"
#include "ckt/mma.h"

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

/* An instruction's three operand fragments: the tile, the lanes, the values per lane and the TV
 * layout are the matrix instruction's (mma.c, checked by test_mma.c); the encodings and nested
 * layouts of A, B and C are written here. */
static const struct {
    const char *name;
    const char *mma; /* the instruction in ckt/mma.h */
    enc_spec enc[3];
    nested_spec nested[3];
} fragments[] = {
    /* v_mfma_f32_32x32x8f16: A[l%32][4*(l/32)+r], B[4*(l/32)+r][l%32],
       D[8*(r/4)+4*(l/32)+r%4][l%32] */
    {"mfma_f32_32x32x8f16",
     "mfma_f32_32x32x8f16",
     {{{1, 2}, {{32}, {2, 4}}, 2, {2, 1}, {0, 0}, 1, {2}, {1}},
      {{2, 1}, {{2, 4}, {32}}, 2, {1, 2}, {0, 0}, 1, {1}, {1}},
      {{3, 1}, {{4, 2, 4}, {32}}, 2, {1, 2}, {1, 0}, 2, {1, 1}, {0, 2}}},
     {{{1, 1}, {1, 1}, {32, 2}, {1, 4}, {1, 32}},
      {{1, 1}, {1, 1}, {2, 32}, {4, 1}, {32, 1}},
      {{4, 1}, {1, 1}, {2, 32}, {4, 1}, {32, 1}}}},
    /* v_mfma_f32_16x16x16f16: A[l%16][4*(l/16)+r], B[4*(l/16)+r][l%16], D[4*(l/16)+r][l%16] */
    {"mfma_f32_16x16x16f16",
     "mfma_f32_16x16x16f16",
     {{{1, 2}, {{16}, {4, 4}}, 2, {2, 1}, {0, 0}, 1, {2}, {1}},
      {{2, 1}, {{4, 4}, {16}}, 2, {1, 2}, {0, 0}, 1, {1}, {1}},
      {{2, 1}, {{4, 4}, {16}}, 2, {1, 2}, {0, 0}, 1, {1}, {1}}},
     {{{1, 1}, {1, 1}, {16, 4}, {1, 4}, {1, 16}},
      {{1, 1}, {1, 1}, {4, 16}, {4, 1}, {16, 1}},
      {{1, 1}, {1, 1}, {4, 16}, {4, 1}, {16, 1}}}},
    /* mma.sync m16n8k16 (g = l>>2, t = l%4): A row g+8*((i>>1)&1), col 2t+(i&1)+8*(i>>2);
     * B k = 2t+(i&1)+8*(i>>1), n = g; C row g+8*(i>>1), col 2t+(i&1) */
    {"mma_m16n8k16",
     "mma_m16n8k16_f16",
     {{{2, 3}, {{2, 8}, {2, 4, 2}}, 2, {1, 2}, {1, 1}, 3, {2, 1, 2}, {0, 0, 2}},
      {{3, 1}, {{2, 4, 2}, {8}}, 2, {2, 1}, {0, 1}, 2, {1, 1}, {0, 2}},
      {{2, 2}, {{2, 8}, {4, 2}}, 2, {1, 2}, {1, 0}, 2, {1, 2}, {0, 1}}},
     {{{1, 2}, {2, 1}, {8, 4}, {1, 2}, {4, 1}},
      {{2, 1}, {1, 1}, {4, 8}, {2, 1}, {1, 4}},
      {{2, 1}, {1, 1}, {8, 4}, {1, 2}, {4, 1}}}},
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

/* The row of instruction `name` (or of its f16 twin); -1: none. */
static int instruction(const char *name)
{
    for (size_t i = 0; i < NFRAG; i++)
        if (strcmp(fragments[i].name, canonical(name)) == 0) return (int)i;
    return -1;
}

/* Fragment `operand` ('A', 'B' or 'C') of `name`: 3 x its row + the operand (0, 1, 2); -1: none. */
static int find(const char *name, char operand)
{
    int i = instruction(name);
    return i < 0 || operand < 'A' || operand > 'C' ? -1 : 3 * i + (operand - 'A');
}

/* The matrix instruction of fragment i (find's number); its record always exists. */
static const ckt_mma *mma_of(int i)
{
    const ckt_mma *m = NULL;
    ckt_mma_get(fragments[i / 3].mma, &m, NULL);
    return m;
}

ckt_status ckt_fragment_get(const char *name, char operand, ckt_fragment *out, ckt_error *err)
{
    if (!name || !out) return ckt_fail(err, CKT_EINVAL, "fragment: NULL argument");
    if (operand >= 'a' && operand <= 'z') operand = (char)(operand - 'a' + 'A');
    if (operand == 'D') operand = 'C';
    if (instruction(name) < 0)
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
    /* A is m x k, B k x n, C m x n */
    const ckt_mma *m = mma_of(i);
    int op = i % 3;
    f.rows = op == 1 ? m->k : m->m;
    f.cols = op == 0 ? m->k : m->n;
    f.lanes = m->lanes;
    f.values = op == 0 ? m->a_values : op == 1 ? m->b_values : m->c_values;
    ckt_status st = ckt_layout_parse(op == 0 ? m->a_tv : op == 1 ? m->b_tv : m->c_tv, &f.tv, err);
    if (st) return st;
    *out = f;
    return CKT_OK;
}

/* Fragment f's number (find's), f and out checked; -1 with err set when there is none. */
static int lookup(const ckt_fragment *f, const void *out, const char *fn, ckt_error *err)
{
    if (!f) return ckt_fail(err, CKT_EINVAL, "%s: NULL argument", fn), -1;
    int i = find(f->name, f->operand);
    if (i < 0)
        return ckt_fail(err, CKT_EINVAL, "%s: '%s' operand '%c' is not a fragment ckt knows", fn,
                        f->name, f->operand),
               -1;
    if (!out) return ckt_fail(err, CKT_EINVAL, "%s: NULL argument", fn), -1;
    return i;
}

static void encoding_desc(const enc_spec *s, ckt_encoding_desc *d)
{
    memset(d, 0, sizeof *d);
    d->nx = 2;
    for (int x = 0; x < 2; x++) {
        d->nh[x] = s->nh[x];
        for (int k = 0; k < s->nh[x]; k++) d->hs[x][k] = s->hs[x][k];
    }
    d->np = 1;
    d->np_comp[0] = s->np;
    for (int j = 0; j < s->np; j++) {
        d->p_major[0][j] = s->pm[j];
        d->p_minor[0][j] = s->pn[j];
    }
    d->ny = s->ny;
    for (int y = 0; y < s->ny; y++) {
        d->y_major[y] = s->ym[y];
        d->y_minor[y] = s->yn[y];
    }
}

/* subgroup_size: the instruction's lanes */
static void nested_desc(const nested_spec *s, int64_t subgroup_size, ckt_nested *n)
{
    memset(n, 0, sizeof *n);
    n->rank = 2;
    for (int d = 0; d < 2; d++) {
        n->subgroup_tile[d] = 1;
        n->batch_tile[d] = s->batch[d];
        n->outer_tile[d] = s->outer[d];
        n->thread_tile[d] = s->thread[d];
        n->element_tile[d] = s->element[d];
        n->thread_strides[d] = s->thread_strides[d];
    }
    n->subgroup_size = subgroup_size;
}

ckt_status ckt_fragment_encoding(const ckt_fragment *f, ckt_encoding *out, ckt_error *err)
{
    int i = lookup(f, out, "fragment encoding", err);
    if (i < 0) return CKT_EINVAL;
    ckt_encoding_desc d;
    encoding_desc(&fragments[i / 3].enc[i % 3], &d);
    return ckt_encoding_make(&d, out, err);
}

ckt_status ckt_fragment_nested(const ckt_fragment *f, ckt_nested *out, ckt_error *err)
{
    int i = lookup(f, out, "fragment nested", err);
    if (i < 0) return CKT_EINVAL;
    ckt_nested n;
    nested_desc(&fragments[i / 3].nested[i % 3], mma_of(i)->lanes, &n);
    return ckt_nested_make(&n, out, err);
}
