/* The emitter's pieces shared by emit.c and the three dialect descriptors. */
#ifndef CKT_EMIT_INTERNAL_H
#define CKT_EMIT_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "ckt/emit.h"
#include "ckt/mma.h"
#include "strbuf.h"

/* What differs between HIP, CUDA and C. */
typedef struct ckt_dialect {
    ckt_dialect_kind kind;
    const char *name;
    const char *prelude; /* file name under kernels/prelude/ */
    bool thread_loops;   /* C: per-thread regions become for (tid ...) loops; barriers split them */
    const char *barrier; /* the barrier statement (GPU) */
    /* the signature, parameter unpacking, thread / block ids, the LDS declaration (dynamic: an
     * extern array sized at launch) */
    void (*open_kernel)(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes, bool dynamic_lds);
    /* exports after the function (C: K__lds_bytes, K__nparams, K__param_kinds) */
    void (*close_kernel)(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes);
} ckt_dialect;

extern const ckt_dialect ckt_dialect_c, ckt_dialect_hip, ckt_dialect_cuda;

/* Shared spellings. */
const char *ckt_emit_ctype(ckt_dtype t); /* the register / element type: float, ckt_u16, ... */
const char *ckt_emit_param_ctype(ckt_param_kind k);
void ckt_emit_param_comment(ckt_sb *s, const ckt_kernel *k);

/* A matrix-instruction op (CKT_OP_GEMM) in one dialect: emit_mma.c. */
typedef struct ckt_mma_site {
    const ckt_mma *mma;
    const char *a, *b, *c; /* the register arrays of A, B and C */
    int64_t rep[3];        /* instructions per wave along M, N, and per K step */
    int64_t block;
    int line; /* the script line (0: unknown) */
} ckt_mma_site;
/* Indented lines of generated source, for the instruction emitters (emit_out.c). */
typedef struct ckt_emit_out {
    ckt_sb *s;
    int ind;
} ckt_emit_out;
void ckt_emit_put(ckt_emit_out *o, const char *fmt, ...) CKT_PRINTF(2, 3);
/* the same for the emitter's own line writer: a line at indentation ind */
void ckt_emit_vput(ckt_sb *s, int ind, const char *fmt, va_list ap);
/* for (int v = 0; v < n; ++v) { (unroll: #pragma unroll before it); ckt_emit_close ends it */
void ckt_emit_open_loop(ckt_emit_out *o, bool unroll, const char *v, long long n);
void ckt_emit_close(ckt_emit_out *o);

void ckt_emit_mma(ckt_sb *s, int ind, ckt_dialect_kind kind, const ckt_mma_site *site);
/* A warpgroup MMA op (CKT_OP_WGMMA): emit_wgmma.c. */
ckt_status ckt_emit_wgmma(ckt_sb *s, int ind, ckt_dialect_kind kind, const ckt_kernel *k,
                          ckt_expr_pool *ex, const ckt_kop *op, const ckt_target_record *target,
                          ckt_error *err);

/* Bulk tensor copies and mbarriers (CKT_OP_TMA_COPY, CKT_OP_MBAR_WAIT): emit_tma.c. Init after
 * the declarations, close before the kernel's end. */
void ckt_emit_mbar_init(ckt_sb *s, int ind, ckt_dialect_kind kind, const ckt_kernel *k);
void ckt_emit_mbar_close(ckt_sb *s, int ind, ckt_dialect_kind kind, const ckt_kernel *k);
/* CKT_OP_TMA_COPY, CKT_OP_MBAR_WAIT, CKT_OP_MBAR_ARRIVE (refused on targets without them);
 * producer: the op is on the producer warp's elected thread (no thread-0 guard; a C-dialect wait
 * there records what the copies after it wait for) */
ckt_status ckt_emit_tma(ckt_sb *s, int ind, ckt_dialect_kind kind, const ckt_kernel *k,
                        ckt_expr_pool *ex, const ckt_kop *op, const ckt_target_record *target,
                        bool producer, ckt_error *err);

#endif
