/* ckt device prelude — C dialect (the CPU target). One call runs one block: the emitter
 * wraps each barrier-free region in a loop over the block's threads and keeps per-thread
 * registers in arrays. Vector accesses are memcpy's of 4/8/16 bytes (the host compiler turns
 * them into plain loads); f16/bf16 values are held as their bits and converted exactly
 * (round to nearest even) like the GPU preludes do. */
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef int8_t ckt_i8;
typedef uint8_t ckt_u8;
typedef uint16_t ckt_u16;
typedef int32_t ckt_i32;
typedef uint32_t ckt_u32;
typedef int64_t ckt_i64;
typedef uint64_t ckt_u64;

#ifndef CKT_CPU_LAUNCH_DEFINED
#define CKT_CPU_LAUNCH_DEFINED
typedef struct ckt_cpu_launch {
    int64_t grid[3], block[3], block_id[3];
    void *lds;
    int *fault; /* a window outside its tensor sets it to the window's number + 1 (may be NULL) */
} ckt_cpu_launch;
#endif

#define CKT_FN static inline
/* a window left its tensor: the access is skipped and the runtime reports the launch failed */
#define CKT_FAULT(n) do { if (launch->fault) __atomic_store_n(launch->fault, (n), __ATOMIC_RELAXED); } while (0)
#define CKT_INF (__builtin_inff())
#define CKT_NAN (__builtin_nanf(""))

CKT_FN ckt_u32 ckt_f32_bits(float f) { ckt_u32 u; memcpy(&u, &f, 4); return u; }
CKT_FN float ckt_bits_f32(ckt_u32 u) { float f; memcpy(&f, &u, 4); return f; }
#define CKT_RAW16 ckt_u32 raw[4]
#define CKT_RAW8 ckt_u32 raw[2]
#define CKT_RAW4 ckt_u32 raw
#define ckt_expf expf
#define ckt_logf logf
#define ckt_sqrtf sqrtf
#define CKT_LD16(v, p) memcpy((v).b, (p), 16)
#define CKT_LD8(v, p) memcpy((v).b, (p), 8)
#define CKT_LD4(v, p) memcpy((v).b, (p), 4)
#define CKT_ST16(p, v) memcpy((p), (v).b, 16)
#define CKT_ST8(p, v) memcpy((p), (v).b, 8)
#define CKT_ST4(p, v) memcpy((p), (v).b, 4)
