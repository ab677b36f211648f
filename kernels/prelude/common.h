/* ckt device prelude — shared by the three dialects (after the dialect's own part).
 * Vector views of 4, 8 and 16 bytes; exact f16/bf16 <-> f32 conversions written with integer
 * operations only, so the CPU target rounds exactly as the GPUs do. */
typedef union { CKT_RAW16; float f32[4]; ckt_i32 i32[4]; ckt_u16 u16[8]; ckt_i8 i8[16]; ckt_u8 u8[16]; unsigned char b[16]; } ckt_v16;
typedef union { CKT_RAW8; float f32[2]; ckt_i32 i32[2]; ckt_u16 u16[4]; ckt_i8 i8[8]; ckt_u8 u8[8]; unsigned char b[8]; } ckt_v8;
typedef union { CKT_RAW4; float f32[1]; ckt_i32 i32[1]; ckt_u16 u16[2]; ckt_i8 i8[4]; ckt_u8 u8[4]; unsigned char b[4]; } ckt_v4;

/* Asynchronous global -> LDS copies of n = 4, 8 or 16 bytes, zero-filled when p is false. Where
 * the dialect has no asynchronous copy (the CUDA prelude defines cp.async, the C prelude an
 * emulation) they are a load and a store through registers, done when issued, so commit and wait
 * have nothing to do. */
#ifndef CKT_CP_ASYNC
#define CKT_CP_ASYNC(n, d, s, p)                                   \
    do {                                                           \
        if (p) {                                                   \
            ckt_v##n ckt_cp_;                                      \
            CKT_LD##n(ckt_cp_, (s));                               \
            CKT_ST##n((d), ckt_cp_);                               \
        } else {                                                   \
            ckt_v##n ckt_cz_;                                      \
            for (int ckt_q_ = 0; ckt_q_ < (n) / 4; ++ckt_q_) ckt_cz_.i32[ckt_q_] = 0; \
            CKT_ST##n((d), ckt_cz_);                               \
        }                                                          \
    } while (0)
#define CKT_CP_COMMIT() ((void)0)
#define CKT_CP_WAIT(n) ((void)0)
#endif

CKT_FN ckt_i64 ckt_imin(ckt_i64 a, ckt_i64 b) { return a < b ? a : b; }
CKT_FN ckt_i64 ckt_imax(ckt_i64 a, ckt_i64 b) { return a > b ? a : b; }
/* index i of an array of n >= 1 elements clamped into 0..n-1 (b:fetch's reads, b:atomic_add's
 * adds) */
#define ckt_clampidx(i, n) ckt_imin(ckt_imax((i), 0), (n) - 1)
/* element i of a rank-1 integer array of n elements (ckt_expr_load): i clamped into 0..n-1, 0
 * when n < 1 */
#define ckt_ldidx(p, i, n) ((n) > 0 ? (ckt_i64)(p)[ckt_clampidx((i), (n))] : (ckt_i64)0)
CKT_FN ckt_i64 ckt_iabs(ckt_i64 a) { return a < 0 ? (ckt_i64)(0ull - (ckt_u64)a) : a; } /* wraps like Lua's math.abs */

/* Lua's integer // and % -- floor division, the remainder takes the divisor's sign. A kernel
 * cannot raise Lua's "attempt to perform 'n//0'": a zero divisor gives 0. */
CKT_FN ckt_i64 ckt_floordiv(ckt_i64 a, ckt_i64 b)
{
    if (b == 0) return 0;
    if (b == -1) return (ckt_i64)(0ull - (ckt_u64)a); /* INT64_MIN // -1 wraps, as in Lua */
    ckt_i64 q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
CKT_FN ckt_i64 ckt_floormod(ckt_i64 a, ckt_i64 b)
{
    if (b == 0 || b == -1) return 0;
    ckt_i64 r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* Float to integer the way ckt.array stores a number into an integer type: toward zero, NaN
 * gives 0, out-of-range values saturate (a plain C cast is undefined there). */
CKT_FN ckt_i64 ckt_toint(float x)
{
    double d = (double)x;
    return d != d ? 0 : d >= 9223372036854775808.0 ? (ckt_i64)0x7fffffffffffffffll : d <= -9223372036854775808.0 ? (ckt_i64)(-0x7fffffffffffffffll - 1) : (ckt_i64)d;
}
CKT_FN ckt_i64 ckt_clamp(ckt_i64 x, ckt_i64 lo, ckt_i64 hi) { return x < lo ? lo : x > hi ? hi : x; }
CKT_FN ckt_i32 ckt_sat_i32(float x) { return (ckt_i32)ckt_clamp(ckt_toint(x), -2147483647 - 1, 2147483647); }
CKT_FN ckt_i8 ckt_sat_i8(float x) { return (ckt_i8)ckt_clamp(ckt_toint(x), -128, 127); }
CKT_FN ckt_u8 ckt_sat_u8(float x) { return (ckt_u8)ckt_clamp(ckt_toint(x), 0, 255); }

#ifndef CKT_HW_F16 /* the dialect has no hardware conversion: integer code, exact RNE */
/* f32 -> f16, round to nearest even; NaN keeps its sign and top payload bits (quiet). */
CKT_FN ckt_u16 ckt_f32_to_f16(float f)
{
    ckt_u32 x = ckt_f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (ckt_u16)(sign | (ax > 0x7f800000u ? (0x7e00u | ((ax >> 13) & 0x3ffu)) : 0x7c00u));
    if (ax >= 0x477ff000u) return (ckt_u16)(sign | 0x7c00u); /* >= 65520 rounds to infinity */
    if (ax < 0x38800000u) {                                  /* below 2^-14: an f16 subnormal */
        ckt_u32 e = ax >> 23;
        if (e < 102u) return (ckt_u16)sign;
        ckt_u32 m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
        ckt_u32 q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) q++;
        return (ckt_u16)(sign | q);
    }
    ckt_u32 r = (ax - 0x38000000u) >> 13, rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
    return (ckt_u16)(sign | r);
}

CKT_FN float ckt_f16_to_f32(ckt_u16 h)
{
    ckt_u32 sign = ((ckt_u32)h & 0x8000u) << 16, e = ((ckt_u32)h >> 10) & 0x1fu, m = (ckt_u32)h & 0x3ffu;
    if (e == 0x1fu) return ckt_bits_f32(sign | 0x7f800000u | (m << 13));
    if (e == 0u) {
        float v = (float)m * 5.9604644775390625e-8f; /* m * 2^-24, exact */
        return sign ? -v : v;
    }
    return ckt_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

#endif

#ifndef CKT_HW_BF16
/* f32 -> bf16, round to nearest even; NaN stays NaN (quiet). Both results, then a select: with
 * an early return for NaN, hipRTC (ROCm 5.2, LLVM 15) made a divergent branch per element on
 * gfx90a and left the 16-byte store vectors (ckt_v16) fed by those branches as private arrays:
 * one moved to LDS (4096 bytes), three dead 16-byte stack slots (64 bytes of scratch), in the
 * bf16 elementwise kernel. The same value for every input (checked for all 2^32). */
CKT_FN ckt_u16 ckt_f32_to_bf16(float f)
{
    ckt_u32 x = ckt_f32_bits(f);
    ckt_u32 nan = (x >> 16) | 0x40u, rne = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    return (ckt_u16)((x & 0x7fffffffu) > 0x7f800000u ? nan : rne);
}

#endif

#ifndef CKT_BF16_TO_F32_DEFINED
CKT_FN float ckt_bf16_to_f32(ckt_u16 h) { return ckt_bits_f32((ckt_u32)h << 16); }
#endif
CKT_FN float ckt_round_f16(float x) { return ckt_f16_to_f32(ckt_f32_to_f16(x)); }
CKT_FN float ckt_round_bf16(float x) { return ckt_bf16_to_f32(ckt_f32_to_bf16(x)); }
