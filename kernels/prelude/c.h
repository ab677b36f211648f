/* ckt device prelude — C dialect (the CPU target). One call runs one block: the emitter
 * wraps each barrier-free region in a loop over the block's threads and keeps per-thread
 * registers in arrays. Vector accesses are memcpy's of 4/8/16 bytes (the host compiler turns
 * them into plain loads); f16/bf16 values are held as their bits and converted exactly
 * (round to nearest even) like the GPU preludes do. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int8_t ckt_i8;
typedef uint8_t ckt_u8;
typedef uint16_t ckt_u16;
typedef int32_t ckt_i32;
typedef uint32_t ckt_u32;
typedef int64_t ckt_i64;
typedef uint64_t ckt_u64;

/* ckt_embed: ../../engine/include/ckt/jit.h CKT_CPU_LAUNCH_DEFINED */

#define CKT_FN static inline
/* a window left its tensor: the access is skipped and the runtime reports the launch failed */
#define CKT_FAULT(n) do { if (launch->fault) __atomic_store_n(launch->fault, (n), __ATOMIC_RELAXED); } while (0)
/* the launch is to stop (its deadline passed: a sandbox's time limit): read at every iteration of
 * the kernel's loops, which then leave the block (the runtime reports the launch stopped) */
#define CKT_STOPPED() (launch->stop && __builtin_expect(*launch->stop != 0, 0))
#define CKT_INF (__builtin_inff())
#define CKT_NAN (__builtin_nanf(""))

CKT_FN ckt_u32 ckt_f32_bits(float f) { ckt_u32 u; memcpy(&u, &f, 4); return u; }
CKT_FN float ckt_bits_f32(ckt_u32 u) { float f; memcpy(&f, &u, 4); return f; }
#define CKT_RAW16 ckt_u32 raw[4]
#define CKT_RAW8 ckt_u32 raw[2]
#define CKT_RAW4 ckt_u32 raw
#define ckt_expf expf
#define ckt_exp2f exp2f
#define ckt_logf logf
#define ckt_sqrtf sqrtf
#define CKT_LD16(v, p) memcpy((v).b, (p), 16)
#define CKT_LD8(v, p) memcpy((v).b, (p), 8)
#define CKT_LD4(v, p) memcpy((v).b, (p), 4)
#define CKT_ST16(p, v) memcpy((p), (v).b, 16)
#define CKT_ST8(p, v) memcpy((p), (v).b, 8)
#define CKT_ST4(p, v) memcpy((p), (v).b, 4)

/* Matrix instructions, emulated lane by lane for the CPU target. Lane l's registers arrive as
 * f32 in a[l][i], b[l][i], c[l][i]; the operand tiles are formed with the vendors' lane formulas
 * (AMD's CDNA instruction set reference for MFMA, NVIDIA's PTX ISA for mma.sync), written here
 * independently of ckt's instruction descriptions: the builder places values in registers by
 * the descriptions' lane layouts, so a wrong layout there gives wrong results here. Products of
 * f16 / bf16 values are exact in f32; the sum runs in K order. */
CKT_FN void ckt_emu_mfma_32x32x8(float a[64][4], float b[64][4], float c[64][16])
{
    float A[32][8], B[8][32];
    for (int l = 0; l < 64; ++l)
        for (int r = 0; r < 4; ++r) {
            A[l % 32][4 * (l / 32) + r] = a[l][r];
            B[4 * (l / 32) + r][l % 32] = b[l][r];
        }
    for (int l = 0; l < 64; ++l)
        for (int r = 0; r < 16; ++r) {
            int m = 8 * (r / 4) + 4 * (l / 32) + r % 4, n = l % 32;
            float acc = c[l][r];
            for (int k = 0; k < 8; ++k) acc += A[m][k] * B[k][n];
            c[l][r] = acc;
        }
}

CKT_FN void ckt_emu_mfma_16x16x16(float a[64][4], float b[64][4], float c[64][4])
{
    float A[16][16], B[16][16];
    for (int l = 0; l < 64; ++l)
        for (int r = 0; r < 4; ++r) {
            A[l % 16][4 * (l / 16) + r] = a[l][r];
            B[4 * (l / 16) + r][l % 16] = b[l][r];
        }
    for (int l = 0; l < 64; ++l)
        for (int r = 0; r < 4; ++r) {
            int m = 4 * (l / 16) + r, n = l % 16;
            float acc = c[l][r];
            for (int k = 0; k < 16; ++k) acc += A[m][k] * B[k][n];
            c[l][r] = acc;
        }
}

CKT_FN void ckt_emu_mma_m16n8k16(float a[32][8], float b[32][4], float c[32][4])
{
    float A[16][16], B[16][8];
    for (int l = 0; l < 32; ++l) {
        int g = l >> 2, t = l % 4;
        for (int i = 0; i < 8; ++i) A[g + 8 * ((i >> 1) & 1)][2 * t + (i & 1) + 8 * (i >> 2)] = a[l][i];
        for (int i = 0; i < 4; ++i) B[2 * t + (i & 1) + 8 * (i >> 1)][g] = b[l][i];
    }
    for (int l = 0; l < 32; ++l)
        for (int i = 0; i < 4; ++i) {
            int m = (l >> 2) + 8 * (i >> 1), n = 2 * (l % 4) + (i & 1);
            float acc = c[l][i];
            for (int k = 0; k < 16; ++k) acc += A[m][k] * B[k][n];
            c[l][i] = acc;
        }
}

/* Asynchronous copies (cp.async on the GPU), emulated: a copy is queued with the group it will be
 * committed in and lands only at the CKT_CP_WAIT that retires that group, so a kernel that reads
 * its LDS before waiting for it reads what was there before, on the CPU as on the GPU (here
 * deterministically). Commits and waits are block-level statements of the C dialect. */
typedef struct { void *d; const void *s; int n, p; long long g; } ckt_cp_entry;
typedef struct { ckt_cp_entry *e; long long n, cap, group; } ckt_cp_queue;
CKT_FN void ckt_cp_land(const ckt_cp_entry *c)
{
    if (c->p) memcpy(c->d, c->s, (size_t)c->n);
    else memset(c->d, 0, (size_t)c->n);
}
CKT_FN void ckt_cp_push(ckt_cp_queue *q, int n, void *d, const void *s, int p)
{
    ckt_cp_entry c = {d, s, n, p, q->group};
    if (q->n == q->cap) {
        long long cap = q->cap ? 2 * q->cap : 1024;
        ckt_cp_entry *e = (ckt_cp_entry *)realloc(q->e, (size_t)cap * sizeof *e);
        if (!e) { ckt_cp_land(&c); return; } /* out of memory: the copy lands at once */
        q->e = e;
        q->cap = cap;
    }
    q->e[q->n++] = c;
}
CKT_FN void ckt_cp_wait(ckt_cp_queue *q, long long pending)
{
    long long keep = 0;
    for (long long i = 0; i < q->n; i++) {
        if (q->e[i].g < q->group - pending) ckt_cp_land(&q->e[i]);
        else q->e[keep++] = q->e[i];
    }
    q->n = keep;
}
#define CKT_CP_ASYNC(n, d, s, p) ckt_cp_push(&ckt_cpq, (n), (d), (s), (p))
#define CKT_CP_COMMIT() (ckt_cpq.group++)
#define CKT_CP_WAIT(n) ckt_cp_wait(&ckt_cpq, (n))

/* wgmma.mma_async m64nNk16 (f16/bf16 in, f32 accumulators) for one warpgroup, reading A (64 x 16)
 * and B (N x 16, the N x K tile) from the block's LDS through their matrix descriptors, decoded as
 * NVIDIA's PTX ISA describes them (start address, LBO, SBO, swizzle mode; the canonical K-major
 * and M/N-major layouts, then the swizzle of the absolute address), written here independently of
 * the engine's ckt_wgmma_desc_address. The accumulators of thread l of the warpgroup are
 * acc[l * stride + base + i]; value i sits at row 16*(l/32) + (l%32)/4 + 8*((i/2)%2), column
 * 8*(i/4) + 2*(l%4) + i%2 (the PTX ISA's D fragment). An address outside the LDS reads NaN. */
CKT_FN float ckt_f16_to_f32(ckt_u16 h); /* common.h, which follows this prelude */
CKT_FN float ckt_bf16_to_f32(ckt_u16 h);
CKT_FN long ckt_emu_wgmma_addr(ckt_u64 desc, int mn_major, long r, long k)
{
    long start = (long)(desc & 0x3FFF) << 4, lbo = (long)((desc >> 16) & 0x3FFF) << 4, sbo = (long)((desc >> 32) & 0x3FFF) << 4;
    int mode = (int)(desc >> 62);
    long w = mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 0, off; /* 16-bit elements: 8 per 16 bytes */
    if (!mn_major) off = w ? (r % 8) * w + (r / 8) * sbo + k * 2 : (r % 8) * 16 + (r / 8) * sbo + (k % 8) * 2 + (k / 8) * lbo;
    else if (w) off = (r % (w / 2)) * 2 + (r / (w / 2)) * lbo + (k % 8) * w + (k / 8) * sbo;
    else off = (r % 8) * 2 + (r / 8) * sbo + (k % 8) * 16 + (k / 8) * lbo;
    long a = start + off;
    return w ? a ^ (((a >> 7) & (w / 16 - 1)) << 4) : a;
}

CKT_FN float ckt_emu_wgmma_elem(const unsigned char *lds, unsigned long lds_bytes, ckt_u64 desc, int mn_major, int bf16, long r, long k)
{
    long a = ckt_emu_wgmma_addr(desc, mn_major, r, k);
    if (a < 0 || (unsigned long)a + 2 > lds_bytes) return CKT_NAN;
    ckt_u16 v;
    memcpy(&v, lds + a, 2);
    return bf16 ? ckt_bf16_to_f32(v) : ckt_f16_to_f32(v);
}

/* acc += A . B of one K step, A (64 x 16) given, B (n x 16) read through its descriptor: each
 * lane's D fragment value i is the K-ordered sum of its row of A and column of B */
CKT_FN void ckt_emu_wgmma_product(const float (*A)[16], const unsigned char *lds, unsigned long lds_bytes, ckt_u64 db, int n, int trans_b, int bf16,
                                  float *acc, long stride, long base)
{
    float B[256][16];
    for (long r = 0; r < n; ++r)
        for (long k = 0; k < 16; ++k) B[r][k] = ckt_emu_wgmma_elem(lds, lds_bytes, db, trans_b, bf16, r, k);
    for (long l = 0; l < 128; ++l)
        for (long i = 0; i < n / 2; ++i) {
            long row = 16 * (l / 32) + (l % 32) / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (l % 4) + i % 2;
            float s = 0.0f;
            for (long k = 0; k < 16; ++k) s += A[row][k] * B[col][k];
            acc[l * stride + base + i] += s;
        }
}

/* wgmma's scale-d = 0: the instruction tile's cv accumulators of each of the 128 lanes start from 0 */
CKT_FN void ckt_emu_wgmma_zero(float *acc, long stride, long base, long cv)
{
    for (long l = 0; l < 128; ++l)
        for (long i = 0; i < cv; ++i) acc[l * stride + base + i] = 0.0f;
}

CKT_FN void ckt_emu_wgmma(const unsigned char *lds, unsigned long lds_bytes, ckt_u64 da, ckt_u64 db, int n, int trans_a, int trans_b, int bf16, float *acc,
                          long stride, long base)
{
    float A[64][16];
    for (long r = 0; r < 64; ++r)
        for (long k = 0; k < 16; ++k) A[r][k] = ckt_emu_wgmma_elem(lds, lds_bytes, da, trans_a, bf16, r, k);
    ckt_emu_wgmma_product((const float (*)[16])A, lds, lds_bytes, db, n, trans_b, bf16, acc, stride, base);
}

/* The RS form (A from registers): a[l * astride + abase + j], j = 0..7, are lane l's A fragment
 * of the K step, the PTX ISA's m64k16 A fragment (row 16*(l/32) + (l%32)/4 + 8*((j/2)%2), column
 * 8*(j/4) + 2*(l%4) + j%2: the D fragment's places); B as ckt_emu_wgmma reads it. */
CKT_FN void ckt_emu_wgmma_ra(const unsigned char *lds, unsigned long lds_bytes, const ckt_u16 *a, long astride, long abase, ckt_u64 db, int n,
                             int trans_b, int bf16, float *acc, long stride, long base)
{
    float A[64][16];
    for (long l = 0; l < 128; ++l)
        for (long j = 0; j < 8; ++j) {
            ckt_u16 h = a[l * astride + abase + j];
            A[16 * (l / 32) + (l % 32) / 4 + 8 * ((j / 2) % 2)][8 * (j / 4) + 2 * (l % 4) + j % 2] = bf16 ? ckt_bf16_to_f32(h) : ckt_f16_to_f32(h);
        }
    ckt_emu_wgmma_product((const float (*)[16])A, lds, lds_bytes, db, n, trans_b, bf16, acc, stride, base);
}

/* ---- fp8 (sm_90a's 8-bit wgmma forms; ckt/dtype.h's e4m3 / e5m2) */
/* The OCP FP8 formats decoded exactly (every code is an f32): e4m3 (bias 7, no infinities, NaN
 * S.1111.111), e5m2 (bias 15, IEEE-like); written from the OCP definition, independently of the
 * engine's ckt_e4m3_to_f32. */
CKT_FN float ckt_fp8_to_f32(ckt_u8 c, int e5m2)
{
    int mb = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7, top = e5m2 ? 31 : 15;
    int e = (c >> mb) & top, m = c & ((1 << mb) - 1);
    float s = (c & 0x80) ? -1.0f : 1.0f;
    if (e == top && (e5m2 || m == 7)) return e5m2 && m == 0 ? s * CKT_INF : s * CKT_NAN;
    if (e == 0) return s * ldexpf((float)m, 1 - bias - mb);
    return s * ldexpf((float)((1 << mb) | m), e - bias - mb);
}
CKT_FN float ckt_e4m3_to_f32(ckt_u8 c) { return ckt_fp8_to_f32(c, 0); }
CKT_FN float ckt_e5m2_to_f32(ckt_u8 c) { return ckt_fp8_to_f32(c, 1); }

/* wgmma.mma_async m64nNk32 with 8-bit float A and B (.e4m3 / .e5m2: fmt 0 / 1), f32 accumulators:
 * both operands K-major (the 8-bit forms have no transpose), read through the descriptors as
 * ckt_emu_wgmma reads them with 1-byte elements (16 per 16-byte core-matrix row), K = 32. Each
 * product of two 8-bit values is exact in f32; the 32 products of a K step are summed in K order
 * and added to the accumulator, the order ckt_emu_wgmma uses for its 16. (The hardware's internal
 * accumulation order and width are not documented; this is the engine's model of them.) */
CKT_FN float ckt_emu_wgmma8_elem(const unsigned char *lds, unsigned long lds_bytes, ckt_u64 desc, int fmt, long r, long k)
{
    long start = (long)(desc & 0x3FFF) << 4, lbo = (long)((desc >> 16) & 0x3FFF) << 4, sbo = (long)((desc >> 32) & 0x3FFF) << 4;
    int mode = (int)(desc >> 62);
    long w = mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 0; /* 1-byte elements: 16 per 16 bytes */
    long a = start + (w ? (r % 8) * w + (r / 8) * sbo + k : (r % 8) * 16 + (r / 8) * sbo + (k % 16) + (k / 16) * lbo);
    if (w) a ^= ((a >> 7) & (w / 16 - 1)) << 4;
    if (a < 0 || (unsigned long)a + 1 > lds_bytes) return CKT_NAN;
    return ckt_fp8_to_f32(lds[a], fmt);
}

CKT_FN void ckt_emu_wgmma8(const unsigned char *lds, unsigned long lds_bytes, ckt_u64 da, ckt_u64 db, int n, int fmt_a, int fmt_b, float *acc,
                           long stride, long base)
{
    float A[64][32], B[256][32];
    for (long r = 0; r < 64; ++r)
        for (long k = 0; k < 32; ++k) A[r][k] = ckt_emu_wgmma8_elem(lds, lds_bytes, da, fmt_a, r, k);
    for (long r = 0; r < n; ++r)
        for (long k = 0; k < 32; ++k) B[r][k] = ckt_emu_wgmma8_elem(lds, lds_bytes, db, fmt_b, r, k);
    for (long l = 0; l < 128; ++l)
        for (long i = 0; i < n / 2; ++i) {
            long row = 16 * (l / 32) + (l % 32) / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (l % 4) + i % 2;
            float s = 0.0f;
            for (long k = 0; k < 32; ++k) s += A[row][k] * B[col][k];
            acc[l * stride + base + i] += s;
        }
}
/* ---- end fp8 */

/* Bulk tensor copies (the tensor memory accelerator) and mbarriers, emulated. The tensor map is
 * the engine's ckt_tma_cpu_map (ckt/tma.h; same fields): the copy writes the box row by row (the
 * innermost dimension fastest) from its LDS offset, each element's address XOR-swizzled on bits
 * 4.. by bits 7.. (the 32B/64B/128B swizzle), elements outside the tensor as 0, as NVIDIA's PTX
 * ISA and the driver's tensor-map documentation describe it, written independently of the
 * engine's ckt_tma_check_tile. A copy arrives on its mbarrier when issued, counted towards the
 * phase its arrival falls in, and lands when a wait completes that phase: a kernel that reads
 * its LDS before waiting reads what was there before. A producer warp runs ahead of the block's
 * threads; its wait on a release barrier becomes the guard of the copies it issues next, checked
 * when they land (the releases it waited for must have happened by then). What the GPU would
 * hang on or race on is a fault of the launch: -(1 + bar + 64 set + 4096 kind), kind 0 a phase
 * that can never complete, 1 a copy landing in a stage not yet released, 2 an arrival on a phase
 * before the one before it completed. */
typedef struct {
    const void *base;
    int rank, elem_bytes;
    unsigned long long dim[5], stride[4];
    unsigned box[5];
    int swizzle_bytes;
} ckt_tmap;
/* arrivals a phase; arrivals made (all phases); phases completed; completions a producer's waits
 * on this barrier have assumed so far */
typedef struct { long long arrivals, arrived, completed, seen; } ckt_mbar_state;
typedef struct { ckt_mbar_state *set; long long bar, phase, dst, c[5], parts; const ckt_tmap *map; const ckt_mbar_state *guard; long long need; } ckt_tma_entry;
typedef struct { ckt_tma_entry *e; long long n, cap; const ckt_mbar_state *guard; long long need; } ckt_tma_queue;
#define CKT_MBAR_FAULT(kind, set_no, bar) CKT_FAULT(-(1 + (int)(bar) + 64 * (set_no) + 4096 * (kind)))
CKT_FN void ckt_mbar_init(ckt_mbar_state *s, long long n, long long arrivals)
{
    for (long long i = 0; i < n; i++) s[i] = (ckt_mbar_state){arrivals, 0, 0, 0};
}
CKT_FN long long ckt_tma_box_elems(const ckt_tmap *m)
{
    long long n = 1;
    for (int d = 0; d < m->rank; d++) n *= m->box[d];
    return n;
}
/* element e of box c (dimension 0 fastest): inside the tensor (1) or not, and its byte offset */
CKT_FN int ckt_tma_elem(const ckt_tmap *m, const long long *c, long long e, long long *off)
{
    long long rest = e;
    int inside = 1;
    *off = 0;
    for (int d = 0; d < m->rank; d++) {
        long long i = c[d] + rest % m->box[d];
        rest /= m->box[d];
        inside = inside && i >= 0 && (unsigned long long)i < m->dim[d];
        *off += d ? i * (long long)m->stride[d - 1] : i * m->elem_bytes;
    }
    return inside;
}
/* the LDS byte of element e of a box at byte `at`, swizzled (w: the swizzle's bytes, 0 none) */
CKT_FN long long ckt_tma_lds_at(long long at, long long e, long long esz, long long w)
{
    long long a = at + e * esz;
    return w ? a ^ (((a >> 7) & (w / 16 - 1)) << 4) : a;
}
/* (a multicast box: its parts, the map's box each, one after another along dimension 1 and in
 * LDS, as the cluster's blocks copy them) */
CKT_FN void ckt_tma_land(const ckt_tma_entry *t, unsigned char *lds, unsigned long long lds_bytes)
{
    const ckt_tmap *m = t->map;
    long long n = ckt_tma_box_elems(m), esz = m->elem_bytes, off;
    for (long long p = 0; p < t->parts; p++) {
        long long c[5] = {t->c[0], t->c[1] + p * (long long)m->box[1], t->c[2], t->c[3], t->c[4]};
        for (long long e = 0; e < n; e++) {
            int inside = ckt_tma_elem(m, c, e, &off);
            long long a = ckt_tma_lds_at(t->dst + p * n * esz, e, esz, m->swizzle_bytes);
            if (a < 0 || (unsigned long long)(a + esz) > lds_bytes) continue;
            if (inside)
                memcpy(lds + a, (const unsigned char *)m->base + off, (size_t)esz);
            else
                memset(lds + a, 0, (size_t)esz); /* outside the tensor: 0 */
        }
    }
}
/* A bulk tensor store: the LDS tile at byte src (the box row by row under the swizzle, as a copy
 * lands it) written to the tensor, elements outside it left alone */
CKT_FN void ckt_tma_store(const ckt_tmap *m, const long long c[5], const unsigned char *lds, long long src, unsigned long long lds_bytes)
{
    long long n = ckt_tma_box_elems(m), esz = m->elem_bytes, off;
    for (long long e = 0; e < n; e++) {
        int inside = ckt_tma_elem(m, c, e, &off);
        long long a = ckt_tma_lds_at(src, e, esz, m->swizzle_bytes);
        if (!inside || a < 0 || (unsigned long long)(a + esz) > lds_bytes) continue;
        memcpy((unsigned char *)m->base + off, lds + a, (size_t)esz);
    }
}
/* does barrier b have copies of this phase still to land? */
CKT_FN int ckt_tma_pending(const ckt_tma_queue *q, const ckt_mbar_state *b, long long phase)
{
    for (long long i = 0; i < q->n; i++)
        if (&q->e[i].set[q->e[i].bar] == b && q->e[i].phase == phase) return 1;
    return 0;
}
/* complete the phases whose arrivals are all made and whose copies have all landed */
CKT_FN void ckt_mbar_settle(const ckt_tma_queue *q, ckt_mbar_state *b)
{
    while (b->arrived >= (b->completed + 1) * b->arrivals && !ckt_tma_pending(q, b, b->completed)) b->completed++;
}
/* mbarrier.arrive.expect_tx and the copy, queued (out of memory: it lands at once) */
CKT_FN void ckt_tma_push(ckt_tma_queue *q, ckt_mbar_state *set, int set_no, long long bar, long long dst, const ckt_tmap *map,
                         const long long *c, long long parts, unsigned char *lds, unsigned long long lds_bytes, const ckt_cpu_launch *launch)
{
    ckt_mbar_state *b = &set[bar];
    ckt_tma_entry t = {set, bar, b->arrived / b->arrivals, dst, {0, 0, 0, 0, 0}, parts, map, q->guard, q->need};
    for (int d = 0; d < map->rank && d < 5; d++) t.c[d] = c[d];
    if (t.phase > b->completed && !t.guard) CKT_MBAR_FAULT(2, set_no, bar);
    b->arrived++;
    if (q->n == q->cap) {
        long long cap = q->cap ? 2 * q->cap : 64;
        ckt_tma_entry *e = (ckt_tma_entry *)realloc(q->e, (size_t)cap * sizeof *e);
        if (!e) { ckt_tma_land(&t, lds, lds_bytes); return; }
        q->e = e;
        q->cap = cap;
    }
    q->e[q->n++] = t;
}
/* a cluster's shared boxes hashed (FNV-1a over the words): the set, the mbarrier, the LDS byte and
 * the box's origin of each multicast copy, in order */
CKT_FN unsigned long long ckt_sig_mix(unsigned long long h, const long long *w, int n)
{
    for (int i = 0; i < n; i++) h = (h ^ (unsigned long long)w[i]) * 1099511628211ull;
    return h;
}
/* every thread of the block arrives once (n of them) */
CKT_FN void ckt_mbar_arrive(const ckt_tma_queue *q, ckt_mbar_state *set, long long bar, long long n)
{
    set[bar].arrived += n;
    ckt_mbar_settle(q, &set[bar]);
}
/* mbarrier.try_wait.parity until it succeeds (it does once the phase in progress has the other
 * parity): land the copies of the phase in progress, checking their guards, and complete it if
 * all its arrivals were made; a phase that cannot complete is a fault */
CKT_FN void ckt_mbar_wait(ckt_tma_queue *q, ckt_mbar_state *set, int set_no, long long bar, int parity, unsigned char *lds,
                          unsigned long long lds_bytes, const ckt_cpu_launch *launch)
{
    ckt_mbar_state *b = &set[bar];
    if (b->completed % 2 != parity) return;
    if (b->arrived < (b->completed + 1) * b->arrivals) { CKT_MBAR_FAULT(0, set_no, bar); return; }
    long long keep = 0;
    for (long long i = 0; i < q->n; i++) {
        const ckt_tma_entry *t = &q->e[i];
        if (&t->set[t->bar] != b || t->phase != b->completed) { q->e[keep++] = *t; continue; }
        if (t->guard && t->guard->completed < t->need) CKT_MBAR_FAULT(1, set_no, bar);
        ckt_tma_land(t, lds, lds_bytes);
    }
    q->n = keep;
    b->completed++;
    ckt_mbar_settle(q, b);
}
/* a producer's wait: the completions it assumes of barrier b guard the copies it issues next */
CKT_FN void ckt_mbar_guard(ckt_tma_queue *q, ckt_mbar_state *set, long long bar, int parity)
{
    ckt_mbar_state *b = &set[bar];
    if (b->seen % 2 == parity) b->seen++;
    q->guard = b;
    q->need = b->seen;
}
