/* Matrix instructions in the three dialects (see ckt/mma.h for the descriptions and ckt/gemm.h
 * for the register value orders): HIP calls the MFMA builtin, CUDA issues mma.sync by inline
 * PTX, and C emulates the instruction lane by lane at a region boundary (every thread's
 * registers are in memory there), through the prelude's ckt_emu_* functions. The repeat loops
 * stay loops; on the GPU they are unrolled by the compiler (#pragma unroll), so every register
 * index is a constant after unrolling. */
#include <stdarg.h>
#include <stdio.h>

#include "emit_internal.h"

static const char *to_f32(ckt_dtype t)
{
    return t == CKT_BF16 ? "ckt_bf16_to_f32" : t == CKT_F16 ? "ckt_f16_to_f32" : "";
}

/* The register indices of one instruction's operands (value orders of ckt/gemm.h). */
#define A_BASE "(ckt_mi * %lld + ckt_kp) * %lld"
#define B_BASE "(ckt_ni * %lld + ckt_kp) * %lld"
#define C_BASE "(ckt_mi * %lld + ckt_ni) * %lld"

static void repeat_loops(ckt_emit_out *o, const ckt_mma_site *x, bool unroll)
{
    ckt_emit_open_loop(o, unroll, "ckt_mi", (long long)x->rep[0]);
    ckt_emit_open_loop(o, unroll, "ckt_ni", (long long)x->rep[1]);
    ckt_emit_open_loop(o, unroll, "ckt_kp", (long long)x->rep[2]);
}

void ckt_emit_mma_c(ckt_emit_out *o, const ckt_mma_site *x)
{
    const ckt_mma *m = x->mma;
    long long L = (long long)m->lanes, VA = (long long)m->a_values, VB = (long long)m->b_values,
              VC = (long long)m->c_values, P = (long long)x->rep[2], NX = (long long)x->rep[1];
    ckt_emit_put(
        o,
        "/*   emulated lane by lane: each wave's registers gathered per lane, %s(), scattered back "
        "*/",
        m->emulation);
    ckt_emit_open_loop(o, false, "ckt_w", (long long)(x->block / m->lanes));
    repeat_loops(o, x, false);
    ckt_emit_put(o, "float ckt_a[%lld][%lld], ckt_b[%lld][%lld], ckt_c[%lld][%lld];", L, VA, L, VB,
                 L, VC);
    ckt_emit_open_loop(o, false, "ckt_l", L);
    ckt_emit_put(o, "const int tid = ckt_w * %lld + ckt_l;", L);
    ckt_emit_put(
        o,
        "for (int ckt_r = 0; ckt_r < %lld; ++ckt_r) ckt_a[ckt_l][ckt_r] = %s(%s[tid][" A_BASE
        " + ckt_r]);",
        VA, to_f32(m->a), x->a, P, VA);
    ckt_emit_put(
        o,
        "for (int ckt_r = 0; ckt_r < %lld; ++ckt_r) ckt_b[ckt_l][ckt_r] = %s(%s[tid][" B_BASE
        " + ckt_r]);",
        VB, to_f32(m->b), x->b, P, VB);
    ckt_emit_put(o,
                 "for (int ckt_r = 0; ckt_r < %lld; ++ckt_r) ckt_c[ckt_l][ckt_r] = %s[tid][" C_BASE
                 " + ckt_r];",
                 VC, x->c, NX, VC);
    ckt_emit_close(o);
    ckt_emit_put(o, "%s(ckt_a, ckt_b, ckt_c);", m->emulation);
    ckt_emit_open_loop(o, false, "ckt_l", L);
    ckt_emit_put(o,
                 "for (int ckt_r = 0; ckt_r < %lld; ++ckt_r) %s[ckt_w * %lld + ckt_l][" C_BASE
                 " + ckt_r] = ckt_c[ckt_l][ckt_r];",
                 VC, x->c, L, NX, VC);
    ckt_emit_close(o);
    for (int i = 0; i < 4; i++) ckt_emit_close(o);
}

/* MFMA's C vector from the accumulators (in) or back: the array's vector as it is (held as C
 * vectors), or its values one by one */
static void c_transfer(ckt_emit_out *o, const ckt_mma_site *x, long long NX, long long VC, bool in)
{
    if (x->c_vectors) {
        ckt_emit_put(
            o, in ? "ckt_c = %s[ckt_mi * %lld + ckt_ni];" : "%s[ckt_mi * %lld + ckt_ni] = ckt_c;",
            x->c, NX);
        return;
    }
    ckt_emit_put(o, "#pragma unroll");
    if (in)
        ckt_emit_put(
            o, "for (int ckt_r = 0; ckt_r < %lld; ++ckt_r) ckt_c[ckt_r] = %s[" C_BASE " + ckt_r];",
            VC, x->c, NX, VC);
    else
        ckt_emit_put(
            o, "for (int ckt_r = 0; ckt_r < %lld; ++ckt_r) %s[" C_BASE " + ckt_r] = ckt_c[ckt_r];",
            VC, x->c, NX, VC);
}

void ckt_emit_mma_hip(ckt_emit_out *o, const ckt_mma_site *x)
{
    const ckt_mma *m = x->mma;
    long long VA = (long long)m->a_values, VB = (long long)m->b_values, VC = (long long)m->c_values,
              P = (long long)x->rep[2], NX = (long long)x->rep[1];
    bool half = m->a == CKT_F16;
    ckt_emit_put(o, "{");
    o->ind++;
    ckt_emit_put(o, "typedef short ckt_mfma_ab __attribute__((ext_vector_type(%lld)));", VA);
    if (half)
        ckt_emit_put(o, "typedef _Float16 ckt_mfma_half __attribute__((ext_vector_type(%lld)));",
                     VA);
    ckt_emit_put(o, "typedef float ckt_mfma_acc __attribute__((ext_vector_type(%lld)));", VC);
    repeat_loops(o, x, true);
    ckt_emit_put(o, "ckt_mfma_ab ckt_a, ckt_b;");
    ckt_emit_put(o, "ckt_mfma_acc ckt_c;");
    ckt_emit_put(o, "#pragma unroll");
    ckt_emit_put(o, "for (int ckt_r = 0; ckt_r < %lld; ++ckt_r) {", VA);
    ckt_emit_put(o, "    ckt_a[ckt_r] = (short)%s[" A_BASE " + ckt_r];", x->a, P, VA);
    ckt_emit_put(o, "    ckt_b[ckt_r] = (short)%s[" B_BASE " + ckt_r];", x->b, P, VB);
    ckt_emit_put(o, "}");
    c_transfer(o, x, NX, VC, true);
    if (half)
        ckt_emit_put(o,
                     "ckt_c = %s(__builtin_bit_cast(ckt_mfma_half, ckt_a), "
                     "__builtin_bit_cast(ckt_mfma_half, ckt_b), ckt_c, 0, 0, 0);",
                     m->intrinsic);
    else
        ckt_emit_put(o, "ckt_c = %s(ckt_a, ckt_b, ckt_c, 0, 0, 0);", m->intrinsic);
    c_transfer(o, x, NX, VC, false);
    for (int i = 0; i < 3; i++) ckt_emit_close(o);
    o->ind--;
    ckt_emit_put(o, "}");
}

/* An operand's b32 registers from its array at value `base`: the words as they are (an array held
 * in pairs), or two 16-bit values merged into each */
static void operand_words(ckt_emit_out *o, const char *dst, const char *base, const char *src,
                          bool pairs, long long n)
{
    ckt_emit_put(o, "#pragma unroll");
    if (pairs)
        ckt_emit_put(o,
                     "for (int ckt_r = 0; ckt_r < %lld; ++ckt_r) %s[ckt_r] = %s[%s / 2 + ckt_r];",
                     n, dst, src, base);
    else
        ckt_emit_put(o,
                     "for (int ckt_r = 0; ckt_r < %lld; ++ckt_r) %s[ckt_r] = (ckt_u32)%s[%s + 2 * "
                     "ckt_r] | ((ckt_u32)%s[%s + 2 * ckt_r + 1] << 16);",
                     n, dst, src, base, src, base);
}

/* mma.sync: A's values in b32 registers, two 16-bit values each (the lower index in the low half).
 */
void ckt_emit_mma_cuda(ckt_emit_out *o, const ckt_mma_site *x)
{
    const ckt_mma *m = x->mma;
    long long VA = (long long)m->a_values, VB = (long long)m->b_values, VC = (long long)m->c_values,
              P = (long long)x->rep[2], NX = (long long)x->rep[1];
    repeat_loops(o, x, true);
    ckt_emit_put(o, "const int ckt_ab = " A_BASE ", ckt_bb = " B_BASE ", ckt_cb = " C_BASE ";", P,
                 VA, P, VB, NX, VC);
    ckt_emit_put(o, "ckt_u32 ckt_a[%lld], ckt_b[%lld];", VA / 2, VB / 2);
    operand_words(o, "ckt_a", "ckt_ab", x->a, x->a_pairs, VA / 2);
    operand_words(o, "ckt_b", "ckt_bb", x->b, x->b_pairs, VB / 2);
    ckt_emit_put(
        o,
        "asm volatile(\"%s {%%0,%%1,%%2,%%3}, {%%4,%%5,%%6,%%7}, {%%8,%%9}, {%%0,%%1,%%2,%%3};\"",
        m->intrinsic);
    ckt_emit_put(o,
                 "    : \"+f\"(%s[ckt_cb + 0]), \"+f\"(%s[ckt_cb + 1]), \"+f\"(%s[ckt_cb + 2]), "
                 "\"+f\"(%s[ckt_cb + 3])",
                 x->c, x->c, x->c, x->c);
    ckt_emit_put(o, "    : \"r\"(ckt_a[0]), \"r\"(ckt_a[1]), \"r\"(ckt_a[2]), \"r\"(ckt_a[3]), "
                    "\"r\"(ckt_b[0]), \"r\"(ckt_b[1]));");
    for (int i = 0; i < 3; i++) ckt_emit_close(o);
}

void ckt_emit_mma(ckt_sb *s, int ind, const ckt_dialect *dl, const ckt_mma_site *x)
{
    ckt_emit_out o = {s, ind};
    const ckt_mma *m = x->mma;
    char where[32] = "";
    if (x->line) snprintf(where, sizeof where, "line %d: ", x->line);
    ckt_emit_put(
        &o,
        "/* %sblockwise_gemm: %s += %s x %s by %s (%lldx%lldx%lld), %lld x %lld per wave, %lld per "
        "K step */",
        where, x->c, x->a, x->b, m->isa, (long long)m->m, (long long)m->n, (long long)m->k,
        (long long)x->rep[0], (long long)x->rep[1], (long long)x->rep[2]);
    dl->mma(&o, x);
}
