/* ckt — the one emitter: a kernel IR (ckt/kernel_ir.h) to device source in one of three
 * dialects. The per-thread index arithmetic is generated once (folded symbolic expressions,
 * each commented with the layout it came from); dialects differ only in thread ids, barriers,
 * vector types, the LDS declaration and the kernel signature (and, later, matrix intrinsics).
 *   HIP C++ (hipRTC: gfx90a, gfx908, ...), CUDA C++ (NVRTC: sm_80, sm_90), C (the CPU target,
 *   ABI in ckt/jit.h: one call runs one block, barrier-free regions loop over the threads). */
#ifndef CKT_EMIT_H
#define CKT_EMIT_H

#include "ckt/error.h"
#include "ckt/kernel_ir.h"
#include "ckt/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The device prelude the emitter puts at the top of every source of a dialect. */
const char *ckt_prelude_text(ckt_dialect_kind d);

/* Emit the kernel's source for a parsed target (ckt_target_parse); *source is malloc'ed (free()
 * it). The kernel is not changed. Fails for LDS beyond the target's capacity, impossible vector
 * widths asked for explicitly, an unfinished kernel (ckt_kernel_finish). */
ckt_status ckt_emit(const ckt_kernel *k, const ckt_target_record *target, char **source,
                    ckt_error *err);
/* The same for a target name ("gfx90a", "cpu:sm_90", ...), parsed once here. */
ckt_status ckt_emit_named(const ckt_kernel *k, const char *target, char **source, ckt_error *err);

/* The LDS bytes the emitted kernel takes on target t: ckt_kernel_lds_bytes, less the block
 * reductions' scratch where every reduction is lane exchanges on t (a GPU) and needs none (no
 * target: the kernel's; no kernel: 0). */
int64_t ckt_emit_lds_bytes(const ckt_kernel *k, const ckt_target_record *t);

/* The LDS bytes a launch of the emitted kernel must request (dynamic shared memory): the CUDA
 * dialect declares LDS beyond the 48 KiB static limit as an extern array, and the runtime opts
 * the function in to that size at launch; 0 for every other kernel and dialect. */
int64_t ckt_emit_dynamic_lds_bytes(const ckt_kernel *k, const ckt_target_record *t);

#ifdef __cplusplus
}
#endif
#endif
