/* The walk's state and the pieces the emitter's files share (not installed): emit.c (the
 * kernel, the op walk and pass loops), emit_walk.c (lines, per-thread regions, barriers, the
 * producer region, registers, value conversions), emit_access.c (loads and stores: coordinates,
 * vectors, masks), emit_async.c (asynchronous copies), emit_compute.c (clear, map, reductions,
 * matrix instructions). Each builds on the ones before it; none calls back into emit.c. */
#ifndef CKT_EMIT_WALK_H
#define CKT_EMIT_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/ckt.h"
#include "emit_internal.h"

/* the scopes the walk is in (loops, uniform and divergent branches, the producer region) */
enum { SCOPE_LOOP, SCOPE_UIF, SCOPE_DIF, SCOPE_PRODUCER };

/* A register tensor the GPU dialects hold otherwise than one value an element: in pairs (CUDA:
 * 16-bit values two a 32-bit word, which only ldmatrix writes and mma.sync reads), or as an array
 * of a matrix instruction's C vectors of `width` values (HIP: MFMA's accumulators). At most
 * CKT_EM_MAX_FORMS of them; the rest stay one value an element. */
enum { CKT_EM_MAX_FORMS = 32 };
typedef struct em_reg_form {
    const ckt_ktensor *t;
    bool pairs;
    int64_t width;
} em_reg_form;

typedef struct em {
    ckt_sb *s;
    const ckt_kernel *k;
    ckt_expr_pool *ex;
    const ckt_dialect *dl;
    int ind;
    bool in_tid;
    int scope[64], depth;
    ckt_expr_id cond[64]; /* an if scope's condition */
    int64_t block;
    const ckt_target_record *target;
    ckt_error *err;
    ckt_status st;
    em_reg_form forms[CKT_EM_MAX_FORMS]; /* (ckt_em_find_reg_forms) */
    int nforms;
    /* a pass loop's copy through registers whose stores take the loads' vectors whole: register
     * value -> the slot of ckt_fw holding its vector (ckt_em_access_body moves vectors, not
     * values); NULL elsewhere */
    const int64_t *fw_slot;
} em;

/* ---- emit_walk.c */
void ckt_em_line(em *e, const char *fmt, ...) CKT_PRINTF(2, 3);
char *ckt_em_estr(em *e, ckt_expr_id id, const char *const *inputs);
/* per-thread regions: C's thread loops (ckt_dialect.thread_loops); a no-op on the GPU */
void ckt_em_thread_open(em *e);
void ckt_em_thread_close(em *e);
/* the dialect's writer at the walk's indentation, and back */
ckt_emit_out ckt_em_out(em *e);
void ckt_em_done(em *e, const ckt_emit_out *o);
void ckt_em_barrier(em *e, const char *why);
void ckt_em_producer_open(em *e);
void ckt_em_producer_close(em *e);
bool ckt_em_in_producer(const em *e);
char *ckt_em_reg(em *e, const ckt_ktensor *t, int64_t v, char *buf, size_t cap);
/* the register tensors held otherwise (em_reg_form), found once before the declarations; t's form
 * (NULL: one value an element), whether it is held in pairs, its C vectors' width or 0 */
void ckt_em_find_reg_forms(em *e);
const em_reg_form *ckt_em_reg_form(const em *e, const ckt_ktensor *t);
bool ckt_em_paired(const em *e, const ckt_ktensor *t);
int64_t ckt_em_acc_width(const em *e, const ckt_ktensor *t);
/* value conversions through f32, literals */
void ckt_em_to_f32(ckt_dtype t, const char *x, char *out, size_t cap);
void ckt_em_from_f32(ckt_dtype t, const char *x, char *out, size_t cap);
bool ckt_em_is_int(ckt_dtype t);
void ckt_em_int_to(ckt_dtype t, const char *x, char *out, size_t cap);
void ckt_em_convert(ckt_dtype to, ckt_dtype from, const char *x, char *out, size_t cap);
void ckt_em_literal(ckt_dtype t, float v, char *out, size_t cap);

/* ---- emit_access.c: one tensor access of a distribution's values */
typedef struct em_access {
    const ckt_kwindow *w;
    const ckt_ktensor *t;
    const ckt_ktensor *r;
    const ckt_dist *d;
    int rank, vd;
    int64_t esz;
    ckt_expr_id thr[CKT_K_MAX_RANK]; /* thread part of each coordinate */
    ckt_expr_id idx[CKT_K_MAX_RANK]; /* i_d: origin + thread part (a named per-access variable) */
    int64_t group[CKT_K_MAX_VALUES]; /* value -> first value of its vector (-1: not a first) */
    int64_t order[CKT_K_MAX_VALUES]; /* value -> position in its vector */
} em_access;
ckt_expr_id ckt_em_swizzled(em *e, const ckt_ktensor *t, ckt_expr_id off);
ckt_expr_id ckt_em_group_offset(em *e, const em_access *a, int64_t v, int64_t j);
/* width: the elements of the vector at value v (a limited tensor masks all of them) */
ckt_expr_id ckt_em_in_bounds(em *e, const em_access *a, int64_t v, int64_t width);
ckt_expr_id ckt_em_window_within(em *e, const em_access *a);
const char *ckt_em_vector_blocker(em *e, em_access *a, int64_t s, char *why, size_t cap);
void ckt_em_describe_tensor(em *e, const ckt_ktensor *t, char *buf, size_t cap);
bool ckt_em_thread_address(em *e, const em_access *a, ckt_expr_id u0, const char *off,
                           const char *base);
bool ckt_em_split_offsets(em *e, const em_access *a, int nrep, const int64_t *vals, ckt_expr_id *u0,
                          int64_t *fc, bool *add);
ckt_status ckt_em_access_init(em *e, em_access *a, int w, int dist, int vector_dim,
                              const char *prefix);
void ckt_em_declare_coords(em *e, const em_access *a, const char *prefix);
void ckt_em_pass_index_vars(em *e, em_access *a, int64_t passes, const int64_t *step);
/* the values of the vector whose first value is v, by position (members[0] = v) */
void ckt_em_vector_members(const em_access *a, int64_t v, int64_t spv, int64_t nv,
                           int64_t *members);
bool ckt_em_access_prepare(em *e, const ckt_kop *op, em_access *a, int64_t *spv, char *note,
                           size_t cap);
void ckt_em_access_comments(em *e, const ckt_kop *op, const em_access *a, int64_t spv,
                            const char *note);
void ckt_em_access_body(em *e, const ckt_kop *op, em_access *a, int64_t spv, int64_t nv,
                        const int64_t *step);
void ckt_em_access_op(em *e, const ckt_kop *op);
/* whether register tensor t (index i) may be held in pairs (emit_access.c), the C width it may be
 * held in vectors of, or 0 (emit_compute.c): each by its dialect's flag */
bool ckt_em_pairs_ok(em *e, int i);
int64_t ckt_em_acc_vector_width(const em *e, int i);

/* ---- emit_async.c */
void ckt_em_copy_async(em *e, const ckt_kop *op);
void ckt_em_commit(em *e);
void ckt_em_wait(em *e, const ckt_kop *op);
void ckt_em_async_visible(em *e);

/* ---- emit_compute.c */
void ckt_em_clear(em *e, const ckt_kop *op);
void ckt_em_map(em *e, const ckt_kop *op);
void ckt_em_fold(em *e, const ckt_kop *op);
void ckt_em_broadcast(em *e, const ckt_kop *op);
void ckt_em_block_reduce(em *e, const ckt_kop *op);
/* ops i, i + 1, ...: a run of group reductions sharing one exchange (ckt_kernel_reduce_run),
 * emitted together; the count of ops, 0 when op i begins no run of two or more */
int ckt_em_reduce_run(em *e, int i);
/* Is the reduction along dim of distribution d a butterfly of lanes inside waves of `wave` lanes
 * (no LDS scratch on a GPU)? */
bool ckt_em_lane_reduce_ok(const ckt_dist *d, int dim, int64_t block, int wave);
void ckt_em_gemm(em *e, const ckt_kop *op);

#endif
