/* Matrix instructions as data (see ckt/mma.h). The lane layouts are the tables of AMD's CDNA
 * instruction set reference (MFMA operand layouts) and NVIDIA's PTX ISA (mma.sync fragments),
 * written as TV layouts over the row-major operand tiles; test_mma.c checks every lane and value
 * of each against the vendors' formulas, written out independently in the test. */
#include <stdio.h>
#include <string.h>

#include "ckt/mma.h"

/* v_mfma_f32_32x32x8f16: A[l%32][4*(l/32)+r], B[4*(l/32)+r][l%32], D[8*(r/4)+4*(l/32)+r%4][l%32] */
#define MFMA32_A "((32,2),4):((8,4),1)"
#define MFMA32_B "((32,2),4):((1,128),32)"
#define MFMA32_C "((32,2),(4,4)):((1,128),(32,256))"
/* v_mfma_f32_16x16x16f16: A[l%16][4*(l/16)+r], B[4*(l/16)+r][l%16], D[4*(l/16)+r][l%16] */
#define MFMA16_A "((16,4),4):((16,4),1)"
#define MFMA16_B "((16,4),4):((1,64),16)"
#define MFMA16_C "((16,4),4):((1,64),16)"
/* mma.sync m16n8k16 (g = l>>2, t = l%4): A row g+8*((i>>1)&1), col 2t+(i&1)+8*(i>>2);
 * B k = 2t+(i&1)+8*(i>>1), n = g; C row g+8*(i>>1), col 2t+(i&1) */
#define MMA_A "((4,8),(2,2,2)):((2,16),(1,128,8))"
#define MMA_B "((4,8),(2,2)):((16,1),(8,64))"
#define MMA_C "((4,8),(2,2)):((2,8),(1,64))"

/* Which architectures have an instruction is stated once, in the matrix lists of the hardware
 * models (engine/src/target.c); only the CPU target's emulation-only instructions are marked here.
 */
/* The fields an instruction family shares, m, n, k through the lane layouts (c_tv), for A and B
 * of dtype T and an f32 accumulator: the shape, the lanes, the values per lane of A, B and C,
 * k_chunk and the lane layouts. */
#define MFMA32(T) 32, 32, 8, T, T, CKT_F32, 64, 4, 4, 16, 4, MFMA32_A, MFMA32_B, MFMA32_C
#define MFMA16(T) 16, 16, 16, T, T, CKT_F32, 64, 4, 4, 4, 4, MFMA16_A, MFMA16_B, MFMA16_C
#define MMA16816(T) 16, 8, 16, T, T, CKT_F32, 32, 8, 4, 4, 2, MMA_A, MMA_B, MMA_C

#define ON_HARDWARE false
#define EMULATION_ONLY true

/* wgmma.mma_async m64nNk16 (a warpgroup of 128 threads: warp w = l/32 owns rows 16w..16w+15; in
 * the warp g = (l%32)>>2, t = l%4, as mma.sync's m16n8 C tile repeated N/8 times along N): D value
 * i at row 16w + g + 8*((i>>1)&1), column 8*(i>>2) + 2t + (i&1); A from registers (the RS form):
 * value i at row 16w + g + 8*((i>>1)&1), column 2t + (i&1) + 8*(i>>2). B, and A in the SS form, are
 * read from shared memory through matrix descriptors (ckt/wgmma.h): no lane layout. */
#define WG_A "((4,8,4),(2,2,2)):((2,16,256),(1,128,8))"
#define WG_C64 "((4,8,4),(2,2,8)):((2,64,1024),(1,512,8))"
#define WG_C128 "((4,8,4),(2,2,16)):((2,128,2048),(1,1024,8))"
#define WG_C192 "((4,8,4),(2,2,24)):((2,192,3072),(1,1536,8))"
#define WG_C176 "((4,8,4),(2,2,22)):((2,176,2816),(1,1408,8))"
#define WG_C208 "((4,8,4),(2,2,26)):((2,208,3328),(1,1664,8))"
#define WG_C256 "((4,8,4),(2,2,32)):((2,256,4096),(1,2048,8))"
#define WGMMA(N, T, DT, C)                                                                         \
    {                                                                                              \
        "wgmma_m64n" #N "k16_" #T, "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #T "." #T,    \
            CKT_VENDOR_NVIDIA, ON_HARDWARE, 64, N, 16, DT, DT, CKT_F32, 128, 8, 0, (N) / 2, 16,    \
            WG_A, "", C, "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #T "." #T, "",          \
            "ckt_emu_wgmma", false,                                                                \
            "D(64x" #N " f32) = A(64x16 " #T ") B(16x" #N " " #T                                   \
            ") + D, a warpgroup of 128 threads, A and B from shared memory through matrix "        \
            "descriptors; sm_90a"                                                                  \
    }

/* wgmma.mma_async m64nNk32 with 8-bit float operands (.e4m3, .e5m2; f32 accumulators): the D
 * fragment of the 16-bit forms; K = 32 (32 bytes, as the 16-bit forms' 16); A and B K-major only
 * (the 8-bit forms have no transpose operands); A from registers: value i at row 16w + g +
 * 8*((i>>2)&1), column 4t + (i&3) + 16*(i>>3). */
#define WG8_A "((4,8,4),(4,2,2)):((4,32,512),(1,256,16))"
#define WGMMA8(N, T, DT, C)                                                                        \
    {                                                                                              \
        "wgmma_m64n" #N "k32_" #T, "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32." #T "." #T,    \
            CKT_VENDOR_NVIDIA, ON_HARDWARE, 64, N, 32, DT, DT, CKT_F32, 128, 16, 0, (N) / 2, 32,   \
            WG8_A, "", C, "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32." #T "." #T, "",         \
            "ckt_emu_wgmma8", false,                                                               \
            "D(64x" #N " f32) = A(64x32 " #T ") B(32x" #N " " #T                                   \
            ") + D, a warpgroup of 128 threads, A and B K-major in shared memory through matrix "  \
            "descriptors; sm_90a"                                                                  \
    }

static const ckt_mma table[] = {
    {"mfma_f32_32x32x8f16", "v_mfma_f32_32x32x8f16", CKT_VENDOR_AMD, ON_HARDWARE, MFMA32(CKT_F16),
     "__builtin_amdgcn_mfma_f32_32x32x8f16", "half4", "ckt_emu_mfma_32x32x8", false,
     "D(32x32 f32) = A(32x8 f16) B(8x32 f16) + C, one wave of 64 lanes, 16 accumulators per lane"},
    {"mfma_f32_16x16x16f16", "v_mfma_f32_16x16x16f16", CKT_VENDOR_AMD, ON_HARDWARE, MFMA16(CKT_F16),
     "__builtin_amdgcn_mfma_f32_16x16x16f16", "half4", "ckt_emu_mfma_16x16x16", false,
     "D(16x16 f32) = A(16x16 f16) B(16x16 f16) + C, one wave of 64 lanes, 4 accumulators per lane"},
    {"mfma_f32_32x32x8bf16_1k", "v_mfma_f32_32x32x8bf16_1k", CKT_VENDOR_AMD, ON_HARDWARE,
     MFMA32(CKT_BF16), "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k", "short4", "ckt_emu_mfma_32x32x8",
     false,
     "D(32x32 f32) = A(32x8 bf16) B(8x32 bf16) + C, the lane layouts of the f16 form; gfx90a and "
     "later"},
    {"mfma_f32_16x16x16bf16_1k", "v_mfma_f32_16x16x16bf16_1k", CKT_VENDOR_AMD, ON_HARDWARE,
     MFMA16(CKT_BF16), "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k", "short4",
     "ckt_emu_mfma_16x16x16", false,
     "D(16x16 f32) = A(16x16 bf16) B(16x16 bf16) + C, the lane layouts of the f16 form; gfx90a and "
     "later"},
    {"mma_m16n8k16_f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", CKT_VENDOR_NVIDIA,
     ON_HARDWARE, MMA16816(CKT_F16), "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "",
     "ckt_emu_mma_m16n8k16", true,
     "D(16x8 f32) = A(16x16 f16) B(16x8 f16) + C, one warp of 32 lanes; A in 4 b32 registers, B in "
     "2, C in 4 floats"},
    {"mma_m16n8k16_bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", CKT_VENDOR_NVIDIA,
     ON_HARDWARE, MMA16816(CKT_BF16), "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "",
     "ckt_emu_mma_m16n8k16", true,
     "D(16x8 f32) = A(16x16 bf16) B(16x8 bf16) + C, one warp of 32 lanes; the lane layouts of the "
     "f16 form"},
    /* no hardware has it: f32 operands through the 32x32x8 MFMA lane layouts, on the CPU target
     * only, so that f32 GEMMs run through the same blockwise GEMM there */
    {"emu_f32_32x32x8f32", "emu_f32_32x32x8f32 (CPU emulation only)", CKT_VENDOR_AMD,
     EMULATION_ONLY, MFMA32(CKT_F32), "", "", "ckt_emu_mfma_32x32x8", false,
     "D(32x32 f32) = A(32x8 f32) B(8x32 f32) + C with the lane layouts of v_mfma_f32_32x32x8f16; "
     "the CPU target only (any cpu:<gpu>)"},
    WGMMA(64, f16, CKT_F16, WG_C64),
    WGMMA(128, f16, CKT_F16, WG_C128),
    WGMMA(256, f16, CKT_F16, WG_C256),
    WGMMA(64, bf16, CKT_BF16, WG_C64),
    WGMMA(128, bf16, CKT_BF16, WG_C128),
    WGMMA(256, bf16, CKT_BF16, WG_C256),
    /* n192: a 192-column tile in one instruction a K step (three n64 read A three times) */
    WGMMA(192, f16, CKT_F16, WG_C192),
    WGMMA(192, bf16, CKT_BF16, WG_C192),
    WGMMA(176, f16, CKT_F16, WG_C176),
    WGMMA(176, bf16, CKT_BF16, WG_C176),
    WGMMA(208, f16, CKT_F16, WG_C208),
    WGMMA(208, bf16, CKT_BF16, WG_C208),
    WGMMA8(64, e4m3, CKT_E4M3, WG_C64),
    WGMMA8(128, e4m3, CKT_E4M3, WG_C128),
    WGMMA8(256, e4m3, CKT_E4M3, WG_C256),
    WGMMA8(64, e5m2, CKT_E5M2, WG_C64),
    WGMMA8(128, e5m2, CKT_E5M2, WG_C128),
    WGMMA8(256, e5m2, CKT_E5M2, WG_C256),
};
#define NMMA ((int)(sizeof table / sizeof *table))

int ckt_mma_count(void) { return NMMA; }

const ckt_mma *ckt_mma_at(int i) { return i >= 0 && i < NMMA ? &table[i] : NULL; }

ckt_status ckt_mma_get(const char *name, const ckt_mma **out, ckt_error *err)
{
    if (!name || !out) return ckt_fail(err, CKT_EINVAL, "mma: NULL argument");
    for (int i = 0; i < NMMA; i++)
        if (!strcmp(name, table[i].name) || !strcmp(name, table[i].isa)) {
            *out = &table[i];
            return CKT_OK;
        }
    char known[512];
    size_t n = 0;
    known[0] = 0;
    for (int i = 0; i < NMMA && n < sizeof known; i++)
        n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", table[i].name);
    return ckt_fail(err, CKT_EINVAL, "mma: unknown instruction '%s' (known: %s)", name, known);
}

/* Is `name` one element of the comma-separated list? */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; n && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return true;
        if (!e) break;
        p = e + 1;
    }
    return false;
}

static bool on_record(const ckt_mma *mma, const ckt_target_record *r)
{
    if (mma->emulation_only) return r->emulated;
    return r->modelled && listed(r->matrix, mma->name);
}

bool ckt_mma_on_target(const ckt_mma *mma, const ckt_target_record *target)
{
    return mma && target && on_record(mma, target);
}

const char *ckt_mma_targets(const ckt_mma *mma, char *buf, size_t cap)
{
    if (!buf || cap == 0) return NULL;
    buf[0] = 0;
    if (!mma) return buf;
    if (mma->emulation_only) {
        snprintf(buf, cap, "cpu");
        return buf;
    }
    size_t n = 0;
    const char *arch;
    for (int i = 0; (arch = ckt_target_modelled_at(i)); i++) {
        ckt_target_record r;
        /* an alias of another model (sm_90a is sm_90 with its own features) is listed only for
         * what the model it extends lacks (wgmma) */
        ckt_target_record base;
        if (ckt_target_parse(arch, &r, NULL) != CKT_OK || !on_record(mma, &r) ||
            (strcmp(r.hw.name, arch) && ckt_target_parse(r.hw.name, &base, NULL) == CKT_OK &&
             on_record(mma, &base)))
            continue;
        if (n + (n > 0) + strlen(arch) >= cap) break; /* whole names only */
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "", arch);
    }
    return buf;
}

const ckt_mma *ckt_mma_for_target(const ckt_target_record *target, int i)
{
    for (int j = 0; j < NMMA; j++)
        if (ckt_mma_on_target(&table[j], target) && i-- == 0) return &table[j];
    return NULL;
}

ckt_status ckt_mma_find(const ckt_target_record *target, ckt_dtype a, ckt_dtype b, ckt_dtype c,
                        int64_t m, int64_t n, int64_t k, const ckt_mma **out, ckt_error *err)
{
    if (!target || !out) return ckt_fail(err, CKT_EINVAL, "mma: NULL argument");
    if (m < 0 || n < 0 || k < 0)
        return ckt_fail(err, CKT_EINVAL, "mma: a negative shape (%lld x %lld x %lld)", (long long)m,
                        (long long)n, (long long)k);
    for (int j = 0; j < NMMA; j++) {
        const ckt_mma *x = &table[j];
        if (!ckt_mma_on_target(x, target) || x->a != a || x->b != b || x->c != c) continue;
        if ((m && x->m != m) || (n && x->n != n) || (k && x->k != k)) continue;
        *out = x;
        return CKT_OK;
    }
    const char *an = ckt_dtype_name(a), *bn = ckt_dtype_name(b), *cn = ckt_dtype_name(c);
    return ckt_fail(err, CKT_EUNSUPPORTED,
                    "mma: target '%s' has no matrix instruction with A %s, B %s, C %s and shape "
                    "%lldx%lldx%lld (0: any)",
                    target->name, an ? an : "?", bn ? bn : "?", cn ? cn : "?", (long long)m,
                    (long long)n, (long long)k);
}

static char upper_operand(char operand)
{
    if (operand >= 'a' && operand <= 'z') operand = (char)(operand - 'a' + 'A');
    return operand == 'D' ? 'C' : operand;
}

ckt_status ckt_mma_layout(const ckt_mma *mma, char operand, ckt_layout *out, ckt_error *err)
{
    if (!mma || !out) return ckt_fail(err, CKT_EINVAL, "mma layout: NULL argument");
    switch (upper_operand(operand)) {
    case 'A': return ckt_layout_parse(mma->a_tv, out, err);
    case 'B':
        if (!*mma->b_tv)
            return ckt_fail(err, CKT_EUNSUPPORTED,
                            "mma layout: %s reads B from shared memory through a matrix descriptor "
                            "(ckt/wgmma.h): it has no lane layout",
                            mma->name);
        return ckt_layout_parse(mma->b_tv, out, err);
    case 'C': return ckt_layout_parse(mma->c_tv, out, err);
    default:
        return ckt_fail(err, CKT_EINVAL, "mma layout: operand '%c' is not one of A, B, C (D)",
                        operand);
    }
}

void ckt_mma_operand_shape(const ckt_mma *mma, char operand, int64_t *rows, int64_t *cols)
{
    if (!rows || !cols) return;
    *rows = *cols = 0;
    char o = upper_operand(operand);
    if (!mma || (o != 'A' && o != 'B' && o != 'C')) return;
    *rows = o == 'B' ? mma->k : mma->m;
    *cols = o == 'A' ? mma->k : mma->n;
}

ckt_status ckt_mma_check_target(const ckt_mma *mma, const ckt_target_record *target, ckt_error *err)
{
    if (!mma || !target) return ckt_fail(err, CKT_EINVAL, "mma: NULL argument");
    if (ckt_mma_on_target(mma, target)) return CKT_OK;
    char where[128];
    return ckt_fail(err, CKT_EUNSUPPORTED, "target '%s' (%s) has no %s (%s): it exists on %s",
                    target->name, target->arch, mma->isa, mma->name,
                    ckt_mma_targets(mma, where, sizeof where));
}
