/* The emitter's pieces shared by the walk (emit.c), the concept files (emit_mma.c, emit_wgmma.c,
 * emit_tma.c) and the three dialects (emit_c.c; emit_gpu.c, what HIP and CUDA share; emit_hip.c,
 * emit_cuda.c). A dialect is a table of hooks (ckt_dialect): the walk never asks which one it
 * is. */
#ifndef CKT_EMIT_INTERNAL_H
#define CKT_EMIT_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "ckt/emit.h"
#include "ckt/mma.h"
#include "strbuf.h"

/* Shared spellings (emit_out.c, with the line writer below). */
const char *ckt_emit_ctype(ckt_dtype t); /* the register / element type: float, ckt_u16, ... */
const char *ckt_emit_param_ctype(ckt_param_kind k);
void ckt_emit_param_comment(ckt_sb *s, const ckt_kernel *k);

/* A matrix-instruction op (CKT_OP_GEMM) in one dialect: emit_mma.c. */
typedef struct ckt_mma_site {
    const ckt_mma *mma;
    const char *a, *b, *c; /* the register arrays of A, B and C */
    bool a_pairs, b_pairs; /* A / B held as 32-bit words of two 16-bit values (CUDA) */
    bool c_vectors;        /* C held as an array of the instruction's C vectors (HIP) */
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

/* A matrix-instruction op in each dialect's spelling (emit_mma.c): after its comment line. */
void ckt_emit_mma_c(ckt_emit_out *o, const ckt_mma_site *x);
void ckt_emit_mma_hip(ckt_emit_out *o, const ckt_mma_site *x);
void ckt_emit_mma_cuda(ckt_emit_out *o, const ckt_mma_site *x);

/* One warpgroup MMA op, planned (emit_wgmma.c), for the dialect's spelling of it. */
typedef struct ckt_wgmma_site {
    const ckt_kernel *k;
    const ckt_kop *op;
    const ckt_mma *m;
    const ckt_ktensor *c;     /* the accumulators */
    const char *offa, *offb;  /* the A and B tiles' byte offsets in LDS (with the stage) */
    long long wn;             /* warpgroups along N */
    long long step_a, step_b; /* bytes between the warpgroups' A / B tiles */
    long long nx, cv;         /* instruction tiles along N, C values of one */
    int tra, trb;             /* A / B M/N-major (transposed) */
    const ckt_ktensor *a_reg; /* A from registers (the RS form; NULL: A through a descriptor) */
    const char *zero;         /* where the first K step ignores the accumulators ("1": always;
                                 NULL: never) */
} ckt_wgmma_site;
typedef struct ckt_wgmma_ops {
    bool unroll; /* the K-step and repeat loops carry #pragma unroll */
    /* the warpgroups' base addresses (C: opens the loop over the warpgroups) */
    void (*open)(ckt_emit_out *o, const ckt_wgmma_site *x, long long warpgroups);
    void (*issue)(ckt_emit_out *o, const ckt_wgmma_site *x); /* one instruction tile */
    /* every K step of every instruction tile in one statement, where the dialect can (false: it
     * wrote nothing, `issue` is called a tile and a step); NULL: never */
    bool (*issue_all)(ckt_emit_out *o, const ckt_wgmma_site *x, long long mx, long long ks);
    void (*close)(ckt_emit_out *o, const ckt_wgmma_site *x); /* after the loops: commit, wait */
    void (*wait)(ckt_emit_out *o, const ckt_wgmma_site *x);  /* a wait alone (op without inputs) */
} ckt_wgmma_ops;
extern const ckt_wgmma_ops ckt_wgmma_c, ckt_wgmma_cuda;

/* One bulk tensor copy or mbarrier op, printed (emit_tma.c), for the dialect's spelling of it. */
typedef struct ckt_bulk_site {
    const ckt_kernel *k;
    int set;              /* the mbarrier set */
    const char *index;    /* the mbarrier's index in its set */
    const char *bar;      /* its LDS byte offset */
    const char *phase;    /* wait: the parity waited for */
    const char *dst;      /* copy, store: the LDS tile's byte offset */
    const char *map;      /* copy, store: the tensor-map parameter */
    const char *coord[5]; /* copy, store: the box's origin, innermost first (rank of them) */
    int rank;
    long long box_bytes;
    bool producer; /* on the producer warp's elected thread */
    /* copy: the cluster's blocks that share the box (1: none), each copying box_bytes of it,
     * part_rows along its second dimension; arrive: the blocks arrived on (1, or the cluster's) and
     * the arrivals made (the set's: every thread once, or each warp once in each block) */
    long long parts, part_rows, arrivals;
    /* copy: a clipped box's rows (ckt_kernel_tma_copy_clipped), an expression; NULL: the whole box
     * (its bytes then box_bytes; else box_bytes / part_rows a row) */
    const char *rows;
} ckt_bulk_site;
typedef struct ckt_bulk_ops {
    void (*init)(ckt_emit_out *o, const ckt_kernel *k);  /* the mbarriers, after declarations */
    void (*close)(ckt_emit_out *o, const ckt_kernel *k); /* before the kernel's end (may be NULL) */
    void (*copy)(ckt_emit_out *o, const ckt_bulk_site *x);
    /* LDS tile -> global box (wait: until the store has read the tile) */
    void (*store)(ckt_emit_out *o, const ckt_bulk_site *x, bool wait);
    void (*store_wait)(ckt_emit_out *o); /* the stores issued so far have read their tiles */
    void (*wait)(ckt_emit_out *o, const ckt_bulk_site *x);
    void (*arrive)(ckt_emit_out *o, const ckt_bulk_site *x);
    /* a named barrier: x->index its id, x->box_bytes its threads, x->producer false; arrive */
    void (*named)(ckt_emit_out *o, const ckt_bulk_site *x, bool arrive);
} ckt_bulk_ops;
extern const ckt_bulk_ops ckt_bulk_c, ckt_bulk_cuda;

/* The kernel's frame and its threads in one dialect: the signature, parameter unpacking, thread
 * / block ids and LDS declaration (dynamic: an extern array sized at launch), and what follows the
 * body (C: K__lds_bytes, K__nparams, K__param_kinds); thread_loops: per-thread regions become
 * for (tid ...) loops (C), which a barrier ends; the barrier itself; the producer warp's region
 * (opened and closed, indentation included); a register tensor's declaration and one register's
 * name. ckt_frame_c (emit_c.c), ckt_frame_gpu (emit_gpu.c: HIP and CUDA share it). */
typedef struct ckt_frame_ops {
    void (*open_kernel)(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes, bool dynamic_lds);
    void (*close_kernel)(ckt_sb *s, const ckt_kernel *k, int64_t lds_bytes);
    bool thread_loops;
    void (*barrier)(ckt_emit_out *o, const ckt_kernel *k, const char *why);
    void (*producer_open)(ckt_emit_out *o, const ckt_kernel *k);
    void (*producer_close)(ckt_emit_out *o, const ckt_kernel *k);
    /* a register tile of n values a thread (its own nvalues, or what one pass of a copy uses) */
    void (*declare_regs)(ckt_emit_out *o, const ckt_ktensor *t, int64_t n, int64_t block);
    void (*reg)(char *buf, size_t cap, const char *name, int64_t v);
} ckt_frame_ops;
extern const ckt_frame_ops ckt_frame_c, ckt_frame_gpu;

/* A dialect: what differs between C, HIP and CUDA, as data and hooks; the walk (emit.c) asks
 * the dialect instead of testing which one it is. */
typedef struct ckt_dialect {
    ckt_dialect_kind kind;
    const char *name;
    const char *prelude; /* file name under kernels/prelude/ */
    /* what follows the preludes (NULL: nothing), then the kernel's frame and threads */
    void (*preamble)(ckt_sb *s, const ckt_kernel *k);
    const ckt_frame_ops *frame;
    const char *no_unroll; /* before a loop the compiler must not unroll (NULL: it decides) */
    /* accesses and asynchronous copies. interior_unmasked: a block whose window lies inside a
     * padded tensor copies without masks; lds_immediates: LDS addresses as one per-thread shared
     * address plus an immediate per vector; ldmatrix: MMA operands load by ldmatrix; the copy
     * queue's state (C: declared at the start, freed at the end; NULL: none); after a wait for
     * copies (NULL: nothing); masked_reads_nothing: a masked-off asynchronous copy reads nothing
     * (src-size 0), so its source address is passed as it is, unselected */
    bool interior_unmasked, lds_immediates, ldmatrix, masked_reads_nothing;
    /* acc_vectors: the f32 accumulators of matrix instructions are declared as arrays of the
     * instruction's C vector (ext_vector_type), which the builtin takes and returns whole */
    bool acc_vectors;
    void (*async_state)(ckt_emit_out *o, bool open);
    void (*async_waited)(ckt_emit_out *o, const ckt_kernel *k);
    /* matrix instructions; warpgroup MMAs and bulk copies where the dialect has them (NULL:
     * none) */
    void (*mma)(ckt_emit_out *o, const ckt_mma_site *x);
    const ckt_wgmma_ops *wgmma;
    const ckt_bulk_ops *bulk;
} ckt_dialect;

extern const ckt_dialect ckt_dialect_c, ckt_dialect_hip, ckt_dialect_cuda;

/* Write a matrix-instruction op (its comment, then the dialect's spelling): emit_mma.c. */
void ckt_emit_mma(ckt_sb *s, int ind, const ckt_dialect *dl, const ckt_mma_site *site);
/* A warpgroup MMA op (CKT_OP_WGMMA): emit_wgmma.c. */
ckt_status ckt_emit_wgmma(ckt_sb *s, int ind, const ckt_dialect *dl, const ckt_kernel *k,
                          ckt_expr_pool *ex, const ckt_kop *op, const ckt_target_record *target,
                          ckt_error *err);

/* Bulk tensor copies, stores and mbarriers (CKT_OP_TMA_COPY, CKT_OP_TMA_STORE, CKT_OP_MBAR_WAIT):
 * emit_tma.c. Init after
 * the declarations, close before the kernel's end. */
void ckt_emit_mbar_init(ckt_sb *s, int ind, const ckt_dialect *dl, const ckt_kernel *k);
void ckt_emit_mbar_close(ckt_sb *s, int ind, const ckt_dialect *dl, const ckt_kernel *k);
/* CKT_OP_TMA_COPY, CKT_OP_TMA_STORE, CKT_OP_MBAR_WAIT, CKT_OP_MBAR_ARRIVE (refused on targets
 * without them);
 * producer: the op is on the producer warp's elected thread (no thread-0 guard; a C-dialect wait
 * there records what the copies after it wait for) */
/* Has dialect dl on target t bulk tensor copies, mbarriers and clusters (sm_90, sm_90a, their CPU
 * emulation)? */
bool ckt_emit_has_tma(const ckt_dialect *dl, const ckt_target_record *t);
ckt_status ckt_emit_tma(ckt_sb *s, int ind, const ckt_dialect *dl, const ckt_kernel *k,
                        ckt_expr_pool *ex, const ckt_kop *op, const ckt_target_record *target,
                        bool producer, ckt_error *err);

#endif
