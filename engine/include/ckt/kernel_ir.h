/* ckt — the kernel builder's IR: parameters, tensors in global / LDS / register memory, tile
 * windows with block-uniform origins, distributions (which thread holds which element of a
 * tile), and a flat list of operations (loads, stores, copies, elementwise maps, folds, block
 * reductions, loops, barriers). A script builds it; the emitter (ckt/emit.h) turns it into
 * straight-line HIP, CUDA or C source.
 *
 * Ownership: ckt_kernel_create allocates, ckt_kernel_destroy frees. Everything else is values
 * copied into the kernel. Builder calls validate their arguments and return a ckt_status
 * naming the argument and the reason. */
#ifndef CKT_KERNEL_IR_H
#define CKT_KERNEL_IR_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/distribution.h"
#include "ckt/dtype.h"
#include "ckt/error.h"
#include "ckt/expr.h"
#include "ckt/layout.h"
#include "ckt/param.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKT_K_MAX_RANK 4
#define CKT_K_MAX_DIGITS 16
#define CKT_K_MAX_VALUES 256
#define CKT_K_MAX_PARAMS 32
#define CKT_K_MAX_BLOCK 1024
#define CKT_K_MAX_MBARS 8 /* sets of mbarriers */
#define CKT_K_MAX_TMAS 8  /* tensor maps */

typedef enum { CKT_MEM_GLOBAL, CKT_MEM_LDS, CKT_MEM_REG } ckt_memory;
const char *ckt_memory_name(ckt_memory m);
ckt_status ckt_memory_parse(const char *s, ckt_memory *out, ckt_error *err);

/* Who holds which element of a tile: thread t (t < threads) holds, as its value v, the element
 *   coord[d] = sum_i ((t / digit_div[i]) % digit_mod[i]) * coef[i][d] + vcoord[v][d].
 * Threads >= `threads` take no part. Made from any TV layout (CK encodings, nested layouts,
 * fragments, make_layout_tv) or from a CK-wrapper thread layout; checked element by element. */
typedef struct ckt_dist {
    int rank;
    int64_t lengths[CKT_K_MAX_RANK];
    int64_t threads;
    int ndigits;
    int64_t digit_div[CKT_K_MAX_DIGITS], digit_mod[CKT_K_MAX_DIGITS];
    int64_t coef[CKT_K_MAX_DIGITS][CKT_K_MAX_RANK];
    int64_t nvalues;
    int64_t vcoord[CKT_K_MAX_VALUES][CKT_K_MAX_RANK];
    char desc[96];
} ckt_dist;

/* tv: (thread, value) -> offset in the row-major tile of `lengths` (CK's tv_layout convention). */
ckt_status ckt_dist_from_tv(const ckt_layout *tv, int rank, const int64_t *lengths, ckt_dist *out,
                            ckt_error *err);
/* CK wrapper blockwise_copy: thread_layout (rank == tile rank) maps a thread coordinate to the
 * thread id; each thread moves vectors of `spv` along vector_dim, raked over the tile;
 * access_order (NULL: 0..rank-1) lists the dims from slowest to fastest value order. */
ckt_status ckt_dist_from_thread_layout(const ckt_layout *thread_layout, int rank,
                                       const int64_t *lengths, int vector_dim, int64_t spv,
                                       const int *access_order, ckt_dist *out, ckt_error *err);
/* CuTe local_partition (interleaved) / CK wrapper make_local_partition (packed) of a tile of
 * `lengths` over the threads of `thr` (flat, one mode per tile dim, one to one onto
 * 0..size(thr)-1): thread index i has the coordinate c_d = (i / stride_d) % shape_d, and owns
 *   interleaved: c_d*val_d + j_d + k_d*shape_d*val_d  (j_d < val_d: a block of values per step,
 *                val NULL: 1 each; CuTe's outer partition, the value block of make_tiled_copy)
 *   packed:      c_d*(lengths_d/shape_d) + k_d        (one contiguous block per thread; val NULL)
 * Values are numbered colexicographically, the value block first, then the steps k (CuTe's
 * fragment order: value v is element v of the layout ckt_local_partition returns). The thread
 * index is (tid / idx_div) % idx_mod (idx_mod 0: no remainder) in a block of `block` threads;
 * threads whose index would reach size(thr) take no part (they must be the last ones). */
ckt_status ckt_dist_partition(const ckt_layout *thr, int rank, const int64_t *lengths,
                              const int64_t *val, bool packed, int64_t idx_div, int64_t idx_mod,
                              int64_t block, ckt_dist *out, ckt_error *err);
/* One thread per block-sized slab: thread t holds `per_thread` consecutive elements of a 1-D tile
 * starting at t * per_thread (threads = length / per_thread), repeated `repeats` times with a
 * stride of threads * per_thread. */
ckt_status ckt_dist_raked_1d(int64_t threads, int64_t per_thread, int64_t repeats, ckt_dist *out,
                             ckt_error *err);
/* The default thread arrangement of a copy of a tile of `lengths` (elements of elem_bytes) by
 * `block` threads: vectors of up to 16 bytes along the last dim, threads row-major over as
 * much of the block as the tile divides. */
ckt_status ckt_dist_default_copy(int rank, const int64_t *lengths, size_t elem_bytes, int64_t block,
                                 ckt_dist *out, ckt_error *err);
void ckt_dist_coord(const ckt_dist *d, int64_t tid, int64_t v, int64_t *coord);
ckt_status ckt_dist_check(const ckt_dist *d, ckt_error *err);

typedef struct ckt_kparam {
    char name[32];
    ckt_param_kind kind;
    ckt_dtype dtype;  /* pointers: the element type */
    bool specialized; /* folded to `value` at build time; not part of the signature */
    int64_t ivalue;
    double fvalue;
    int64_t divisor; /* runtime sizes: a promised divisor (checked at launch) */
    int64_t align;   /* pointers: promised alignment in bytes (default 16) */
    ckt_expr_id expr;
    bool is_const; /* pointers: only read */
    /* derived at launch, never passed by a caller (CKT_PARAM_TMAP: tensor map `tma` of the
     * kernel, ckt_kernel_tma); part of the emitted signature, not of ckt_kernel_signature */
    bool derived;
    int tma;
    /* derived i64 (ckt_kernel_param_extent): the element count of the buffer passed for pointer
     * parameter extent_of */
    bool extent;
    int extent_of;
} ckt_kparam;

/* Is p an argument a caller passes (neither specialized at build time nor derived at launch)? */
static inline bool ckt_kparam_is_argument(const ckt_kparam *p)
{
    return !p->specialized && !p->derived;
}

typedef struct ckt_ktensor {
    ckt_memory mem;
    ckt_dtype dtype;
    int rank;
    char name[32];
    /* global */
    int param;
    ckt_expr_id shape[CKT_K_MAX_RANK], stride[CKT_K_MAX_RANK];
    bool padded; /* ckt.pad: accesses beyond the shape are masked */
    /* limited (ckt_kernel_global_limit): every access's element offset is also masked against
     * [0, limit), an expression of the parameters; the launch checks the buffer against limit
     * instead of the shape, which may then hold block-uniform variables and device reads */
    bool limited;
    ckt_expr_id limit;
    /* lds: a static layout of `rank` modes, optionally swizzled, at a byte offset (a multiple of
     * 16, of the swizzle's 8 x span under one of the hardware's 32B/64B/128B swizzles) */
    ckt_layout layout;
    ckt_swizzle sw;
    bool swizzled;
    int64_t lds_offset, cosize;
    /* lds, multi-stage: `stages` copies of the layout, `stage_elems` elements apart (a multiple of
     * 128 bytes, so every stage has the same bank mapping, and of the offset's alignment). A stage
     * view (t:stage(i)) aliases one of them: its accesses add `stage_base` (a block-uniform element
     * offset) after the swizzle. */
    int64_t stages, stage_elems;
    bool stage_view;
    ckt_expr_id stage_base;
    /* register */
    int dist; /* -1: a plain per-thread array of nvalues */
    int64_t nvalues;
} ckt_ktensor;

typedef struct ckt_kwindow {
    int tensor;
    int rank;
    int64_t lengths[CKT_K_MAX_RANK];
    ckt_expr_id origin[CKT_K_MAX_RANK]; /* block-uniform variables */
    ckt_expr_id init[CKT_K_MAX_RANK];
    int64_t step_divisor[CKT_K_MAX_RANK]; /* gcd of every move step: known at emit time */
    bool moved_by_runtime;
} ckt_kwindow;

typedef enum {
    CKT_OP_SET,  /* var (expr a) = expr b */
    CKT_OP_ADD,  /* var += expr b */
    CKT_OP_LOOP, /* for var in [0, expr b); spv = 1: not unrolled (ckt_kernel_loop_rolled) */
    CKT_OP_IF,   /* if (expr b) */
    CKT_OP_END,
    CKT_OP_SYNC,
    CKT_OP_LOAD,         /* reg r = window w through reg's distribution */
    CKT_OP_STORE,        /* window w = reg r */
    CKT_OP_CLEAR,        /* reg r = fill */
    CKT_OP_MAP,          /* reg r[v] = expr(inputs[v]) */
    CKT_OP_FOLD,         /* reg r[0] = op(r[0], inputs[0][all v]) */
    CKT_OP_BLOCK_REDUCE, /* reg r[0] = op over all threads (every thread gets the result); with
                            an input (ninputs 1): reg r[v] = op along dim vector_dim of input 0's
                            tile (ckt_kernel_reduce_dim) */
    CKT_OP_GEMM, /* reg r += inputs[0] x inputs[1]: matrix instruction mma (ckt/mma.h), mma_rep =
                    {MX, NX, P} per wave */
    CKT_OP_COPY_ASYNC, /* LDS window w = global window inputs[0], element by element through dist */
    CKT_OP_COMMIT,     /* close the group of asynchronous copies issued since the last commit */
    CKT_OP_WAIT,  /* wait until at most spv committed groups are pending (then a barrier unless b ==
                     0) */
    CKT_OP_WGMMA, /* reg r += LDS inputs[0] x LDS inputs[1] by warpgroup MMA mma (ckt/wgmma.h),
                    mma_rep = {MX, NX, K steps} per warpgroup */
    CKT_OP_TMA_COPY,  /* LDS window w = global window inputs[0] by one bulk tensor copy through
                         tensor map r, completing on mbarrier a of set inputs[1]; spv > 1: the
                         cluster's spv blocks each copy 1/spv of it into all of them (multicast) */
    CKT_OP_MBAR_WAIT, /* wait until phase parity b of mbarrier a of set inputs[0] has completed */
    CKT_OP_TMA_STORE, /* global window inputs[0] = LDS window w by one bulk tensor store through
                         tensor map r; spv = 1: its reads of LDS complete when the op ends */
    CKT_OP_TMA_STORE_WAIT, /* the bulk stores issued so far have read their LDS tiles */
    CKT_OP_MBAR_ARRIVE,    /* every thread of the block arrives once on mbarrier a of set inputs[0];
                              spv = 1: every warp once on it in each block of the cluster */
    CKT_OP_PRODUCER,       /* opens the producer warp's region (closed by CKT_OP_END) */
    CKT_OP_NAMED_BARRIER,  /* hardware barrier a (an expression) over spv threads; b = 1: arrive
                              only (ckt_kernel_named_barrier) */
    CKT_OP_ATOMIC_ADD,     /* var a = element b (clamped) of i32 tensor inputs[0], which spv is
                              added to, once for the block (ckt_kernel_atomic_add) */
    CKT_OP_BROADCAST       /* reg r[v] = inputs[0][u]: u the value of the same thread on v's line
                              along dim vector_dim (-1: v's element; the result's tile at mma_rep in
                              the source's) (ckt_kernel_broadcast, ckt_kernel_regather) */
} ckt_kop_kind;

/* CKT_REDUCE_SOFTMAX ("softmax"): pairs of a running maximum m and a sum s of exp(x - m), two
 * pairs combining as (M, s1 e^(m1 - M) + s2 e^(m2 - M)), M = max(m1, m2) (an empty pair: m = -inf,
 * s = 0): the online softmax's statistics, only across threads (ckt_kernel_group_reduce_softmax) */
typedef enum { CKT_REDUCE_SUM, CKT_REDUCE_MAX, CKT_REDUCE_MIN, CKT_REDUCE_SOFTMAX } ckt_reduce_op;

#define CKT_K_MAX_INPUTS 8
typedef struct ckt_kop {
    ckt_kop_kind kind;
    int w, r;
    ckt_expr_id a, b;
    int vector_dim;
    int64_t spv; /* 0: choose */
    float fill;
    ckt_reduce_op rop;
    int ninputs;
    int inputs[CKT_K_MAX_INPUTS];
    int dist; /* LOAD / STORE: the distribution of the access (-1: the register tensor's) */
    int line; /* the script line that built it (0: unknown) */
    char note[96];
    int mma;            /* GEMM: the instruction (ckt_mma_at index) */
    int64_t mma_rep[3]; /* GEMM: instructions per wave along M and N, and per K step (k_pack /
                           k_chunk) */
    int64_t group;      /* BLOCK_REDUCE without input: 0 the LDS tree over the block (one value);
                           > 0 lane shuffles over groups of this many consecutive threads, each
                           value of r on its own (ckt_kernel_group_reduce) */
    bool coords;        /* MAP: expression inputs ninputs.. are the value's tile coordinates */
    int r2;             /* BLOCK_REDUCE softmax: the sums' register tensor (r: the maxima) */
    ckt_expr_id zero;   /* WGMMA: where this is nonzero, the first K step ignores the accumulators
                           (c = a b^T: wgmma's scale-d 0); CKT_EXPR_NONE: never */
} ckt_kop;

typedef struct ckt_kernel ckt_kernel;

ckt_status ckt_kernel_create(const char *name, int64_t block_threads, ckt_kernel **out,
                             ckt_error *err);
void ckt_kernel_destroy(ckt_kernel *k);
const char *ckt_kernel_name(const ckt_kernel *k);
int64_t ckt_kernel_block(const ckt_kernel *k);
ckt_expr_pool *ckt_kernel_exprs(ckt_kernel *k);
const ckt_expr_pool *ckt_kernel_exprs_const(const ckt_kernel *k);
/* The script line recorded with the next operations (comments in the source). */
void ckt_kernel_set_line(ckt_kernel *k, int line);

/* Parameters in signature order. A specialized scalar folds to its value. */
ckt_status ckt_kernel_param_ptr(ckt_kernel *k, const char *name, ckt_dtype dtype, bool is_const,
                                int64_t align, int *index, ckt_error *err);
ckt_status ckt_kernel_param_scalar(ckt_kernel *k, const char *name, ckt_param_kind kind,
                                   bool specialized, int64_t ivalue, double fvalue, int64_t divisor,
                                   int *index, ckt_error *err);
int ckt_kernel_nparams(const ckt_kernel *k);
const ckt_kparam *ckt_kernel_param(const ckt_kernel *k, int i);
/* The launch signature: the non-specialized parameters, in order; returns the count. */
int ckt_kernel_signature(const ckt_kernel *k, ckt_param *sig, int cap);

ckt_status ckt_kernel_global(ckt_kernel *k, int param, ckt_dtype dtype, int rank,
                             const ckt_expr_id *shape, const ckt_expr_id *stride, bool padded,
                             int *tensor, ckt_error *err);
/* A derived i64 parameter (not passed by a caller): the element count of the buffer the launch
 * gets for pointer parameter `ptr` (its bytes over the element size). *index: the parameter;
 * its expression (ckt_kernel_param(k, *index)->expr) reads it. Named "<ptr>_count". */
ckt_status ckt_kernel_param_extent(ckt_kernel *k, int ptr, int *index, ckt_error *err);
/* Make padded global tensor `tensor` limited: each access is masked against element offsets
 * [0, limit) as well as the shape (a vector wholly inside or not at all), and the launch checks
 * that the buffer holds `limit` elements instead of evaluating the shape and strides. limit is
 * an integer expression of the parameters only. Bulk tensor copies refuse a limited tensor. */
ckt_status ckt_kernel_global_limit(ckt_kernel *k, int tensor, ckt_expr_id limit, ckt_error *err);
ckt_status ckt_kernel_lds(ckt_kernel *k, ckt_dtype dtype, const ckt_layout *layout,
                          const ckt_swizzle *sw /* may be NULL */, int *tensor, ckt_error *err);
ckt_status ckt_kernel_registers(ckt_kernel *k, ckt_dtype dtype, int dist /* -1: plain */,
                                int64_t nvalues, int *tensor, ckt_error *err);
ckt_status ckt_kernel_add_dist(ckt_kernel *k, const ckt_dist *d, int *index, ckt_error *err);
const ckt_dist *ckt_kernel_dist(const ckt_kernel *k, int i);
const ckt_ktensor *ckt_kernel_tensor(const ckt_kernel *k, int i);
const ckt_kwindow *ckt_kernel_window(const ckt_kernel *k, int i);
int64_t ckt_kernel_lds_bytes(const ckt_kernel *k);
/* Host bytes the kernel holds (its own allocations): what an embedding charges to a script. */
size_t ckt_kernel_footprint(const ckt_kernel *k);
/* Byte offset in LDS of the block reductions' scratch (block x 4 bytes, or the largest tile of a
 * reduction along a dimension in f32); -1 when none. */
int64_t ckt_kernel_reduce_scratch(const ckt_kernel *k);
/* The group reductions (ckt_kernel_group_reduce, groups above 32 threads) at ops i, i + 1, ...
 * over the same groups with no operation between them: they share one exchange through the
 * scratch (its two barriers) and their partials lie side by side there. The run's length (at most
 * CKT_REDUCE_RUN_MAX), 0 when op i is no such reduction. */
#define CKT_REDUCE_RUN_MAX 8
int ckt_kernel_reduce_run(const ckt_kernel *k, int i);

ckt_status ckt_kernel_window_make(ckt_kernel *k, int tensor, int rank, const int64_t *lengths,
                                  const ckt_expr_id *origin, int *window, ckt_error *err);
ckt_status ckt_kernel_move(ckt_kernel *k, int window, const ckt_expr_id *step, ckt_error *err);

/* Partitions of a tile among the block's threads (CuTe's local_partition; kernel_partition.c).
 * The tile is window `window`, or (window < 0) tensor `tensor` with a static shape (global or
 * LDS: a register tensor is already per thread). The thread index is an expression of the
 * kernel that computes (tid / div) % mod (mod 0: none) for every thread: the thread id, and
 * divisions / right shifts and remainders / low-bit masks of it by constants. Options: */
typedef struct ckt_partition_opts {
    bool packed; /* one contiguous block per thread (CK wrapper's make_local_partition) */
    int nvalues; /* values per step of each dim given (rank of them); -1: not given */
    int64_t values[CKT_K_MAX_RANK];
    bool has_scalar_per_vector, has_vector_dim; /* or: scalar_per_vector values along vector_dim */
    int64_t scalar_per_vector;                  /* 1..16 */
    int64_t vector_dim;                         /* default: the last dim */
} ckt_partition_opts;
/* The partition: its distribution (*dist) and its own window over the same tile (*window_out),
 * which later moves of the parent leave be. Each step's refusals are the functions below. */
ckt_status ckt_kernel_partition(ckt_kernel *k, int tensor, int window, const ckt_layout *thr,
                                ckt_expr_id index, const ckt_partition_opts *o, int *dist,
                                int *window_out, ckt_error *err);
/* The tile's lengths and rank. */
ckt_status ckt_partition_tile(const ckt_kernel *k, int tensor, int window, int64_t *lengths,
                              int *rank, ckt_error *err);
/* The thread index as (tid / *div) % *mod; CKT_EINVAL "thread index must be ..." otherwise. */
ckt_status ckt_partition_thread_index(const ckt_kernel *k, ckt_expr_id index, int64_t *div,
                                      int64_t *mod, ckt_error *err);
/* Values per step of each of the rank dims (1 each unless the options say); *given: they did. */
ckt_status ckt_partition_values(int rank, const ckt_partition_opts *o, int64_t *values, bool *given,
                                ckt_error *err);

/* Block-uniform variables, loops, branches, barriers. */
ckt_status ckt_kernel_var(ckt_kernel *k, const char *name, ckt_expr_id init, ckt_expr_id *var,
                          ckt_error *err);
/* A block-uniform variable that holds values in [lo, hi], multiples of divisor (what the analyses
 * know of it), set to init here; ckt_kernel_assign sets it again, anywhere (inside loops and
 * block-uniform branches), each value refused unless its range and divisor provably keep those
 * facts. name (optional): an identifier of at most 16 characters. */
ckt_status ckt_kernel_var_facts(ckt_kernel *k, const char *name, ckt_expr_id init, int64_t lo,
                                int64_t hi, int64_t divisor, ckt_expr_id *var, ckt_error *err);
ckt_status ckt_kernel_assign(ckt_kernel *k, ckt_expr_id var, ckt_expr_id value, ckt_error *err);
/* A block-uniform value computed once, outside every loop, branch and producer region; reads of
 * *var do not re-evaluate it. name (optional): an identifier of at most 16 characters, part of
 * the emitted variable's name. */
ckt_status ckt_kernel_let(ckt_kernel *k, const char *name, ckt_expr_id value, ckt_expr_id *var,
                          ckt_error *err);
ckt_status ckt_kernel_loop(ckt_kernel *k, ckt_expr_id trip, ckt_expr_id *var, ckt_error *err);
/* The tile (*tm, *tn) that tile number id (CKT_EXPR_NONE: the block id along x) takes of m x n
 * tiles: row-major, column-major, or grouped (`group` tile rows, 1..2^31-1, at a time down a
 * column of groups: CK's and Triton's L2-friendly order). m, n and id block-uniform integer
 * expressions; a tile number past the tiles gives coordinates past them (never negative). */
typedef enum { CKT_ORDER_ROW, CKT_ORDER_COL, CKT_ORDER_GROUPED } ckt_block_order;
ckt_status ckt_kernel_block_order(ckt_kernel *k, ckt_expr_id m, ckt_expr_id n,
                                  ckt_block_order order, int64_t group, ckt_expr_id id,
                                  ckt_expr_id *tm, ckt_expr_id *tn, ckt_error *err);
/* The same loop; rolled: the GPU compilers are told not to unroll it (#pragma unroll 1), for a
 * body whose copies would only cost compile time (iterations serialized by barriers anyway, or
 * enough work in flight in one). Without it they decide, and unroll short constant trip counts. */
ckt_status ckt_kernel_loop_rolled(ckt_kernel *k, ckt_expr_id trip, bool rolled, ckt_expr_id *var,
                                  ckt_error *err);
ckt_status ckt_kernel_if(ckt_kernel *k, ckt_expr_id cond, ckt_error *err);
ckt_status ckt_kernel_end(ckt_kernel *k, ckt_error *err);
ckt_status ckt_kernel_sync(ckt_kernel *k, ckt_error *err);

/* Data movement and compute. spv 0 chooses the widest legal vector; vector_dim -1: the last dim. */
ckt_status ckt_kernel_load(ckt_kernel *k, int window, int dist, int vector_dim, int64_t spv,
                           float fill, int *reg, ckt_error *err);
ckt_status ckt_kernel_store(ckt_kernel *k, int window, int reg, int vector_dim, int64_t spv,
                            ckt_error *err);
/* Store value v of each thread's `reg` to the element `dist` gives that thread as value v (dist -1:
 * reg's own distribution), by value index: CuTe's copy into a partition of another thread
 * layout. Same number of values; a distributed reg must be held by at least dist's threads. */
ckt_status ckt_kernel_store_as(ckt_kernel *k, int window, int reg, int dist, int vector_dim,
                               int64_t spv, ckt_error *err);
ckt_status ckt_kernel_clear(ckt_kernel *k, int reg, float value, ckt_error *err);
/* out[v] = expr over inputs[i][v] (CKT_E_INPUT slot i); inputs share one distribution, except
 * that an input of one value per thread is that thread's scalar, the same for every value (the
 * row statistic a normalization applies); the result takes the first other input's distribution
 * (input 1's when all have one value). */
ckt_status ckt_kernel_map(ckt_kernel *k, int ninputs, const int *inputs, ckt_expr_id expr,
                          ckt_dtype out_dtype, int *reg, ckt_error *err);
ckt_status ckt_kernel_fold(ckt_kernel *k, int acc, int src, ckt_reduce_op op, ckt_error *err);
ckt_status ckt_kernel_block_reduce(ckt_kernel *k, int acc, ckt_reduce_op op, ckt_error *err);
/* Every value of acc (any number per thread) becomes op over the `threads` consecutive threads
 * of the caller's group (threads a power of two dividing the block; the block's size itself
 * allowed), every thread of the group getting the result: lane shuffles in a butterfly over up
 * to 32 lanes (every lane combines in the same order, on every target), and for groups above 32
 * one exchange of the 32-lane partials through LDS scratch between two barriers. The shuffles
 * need whole waves (checked when the source is made). Not inside a branch on the thread id. */
ckt_status ckt_kernel_group_reduce(ckt_kernel *k, int acc, ckt_reduce_op op, int64_t threads,
                                   ckt_error *err);
/* The online softmax's statistics over groups of `threads` (as ckt_kernel_group_reduce): value v
 * of `maxima` (a running maximum of the thread's elements) and value v of `sums` (the sum of
 * exp(x - that maximum)) become the group's maximum and its sum of exp(x - the group's maximum),
 * in one exchange where a max and then a sum would take two. The same numbers of f32 values. */
ckt_status ckt_kernel_group_reduce_softmax(ckt_kernel *k, int maxima, int sums, int64_t threads,
                                           ckt_error *err);
/* ckt_kernel_map (into < 0: a new tensor in *reg) or ckt_kernel_map_into (into >= 0) whose
 * expression also reads, as inputs ninputs .. ninputs + rank - 1, the integer coordinates of
 * each value in its distribution's tile (a mask for the edge of a row); the inputs need a
 * distribution. */
ckt_status ckt_kernel_map_coords(ckt_kernel *k, int ninputs, const int *inputs, ckt_expr_id expr,
                                 ckt_dtype out_dtype, int into, int *reg, ckt_error *err);
/* out[v] = expr over inputs[i][v], written into the existing register tensor `into` (same
 * distribution and values as the inputs; it may be one of them): loop-carried state such as a
 * running maximum or a rescaled accumulator. */
ckt_status ckt_kernel_map_into(ckt_kernel *k, int ninputs, const int *inputs, ckt_expr_id expr,
                               int into, ckt_error *err);
/* A reduction along one dimension of a distributed tile, every holder getting the result: *reg
 * (src's distribution, out_dtype) holds at value v op over the elements of src's tile that share
 * value v's coordinates in every dimension but `dim` -- the row maximum / row sum of an MMA
 * accumulator fragment (dim 1 of an M x N tile), broadcast to the lanes that hold the row. Through
 * LDS scratch (the tile in f32, after the tensors) between two barriers; each thread folds each
 * line its values lie on once, in order. src's distribution must cover its tile. Not inside a
 * branch on the thread id. */
ckt_status ckt_kernel_reduce_dim(ckt_kernel *k, int src, int dim, ckt_reduce_op op,
                                 ckt_dtype out_dtype, int *reg, ckt_error *err);
/* Lines along `dim` of src (values constant along dim, as ckt_kernel_reduce_dim gives) spread over
 * the distribution of register tensor `like`: *reg (like's distribution, src's dtype) holds at
 * value v the value of src on the line of v's element (its coordinates but along dim). In
 * registers: every thread must hold, in src, each line its values of `like` lie on, at the same
 * value index for every thread (the row statistics of an MMA accumulator and another accumulator
 * of the same rows); refused otherwise, naming a thread and value. The tiles agree in every
 * dimension but dim. */
ckt_status ckt_kernel_broadcast(ckt_kernel *k, int src, int like, int dim, int *reg,
                                ckt_error *err);
/* *reg in distribution `dist` (a tile at `origin` in src's tile, rank <= 3) takes each element
 * from the thread's own registers of src: an MMA accumulator's values as the next MMA's operand
 * fragment (blockwise_gemm with a register A). Refused, naming a thread and value, where a thread
 * does not hold its elements in src (or not at the same value index as thread 0). */
ckt_status ckt_kernel_regather(ckt_kernel *k, int src, int dist, const int64_t *origin, int *reg,
                               ckt_error *err);
/* The value of a broadcast's (or regather's) source that value v of its result reads (every
 * thread alike). */
int64_t ckt_kernel_broadcast_source(const ckt_kernel *k, const ckt_kop *op, int64_t v);
/* A launch condition: the launch is refused with `note` unless cond (an integer expression over
 * the parameters) is nonzero at the arguments given. */
ckt_status ckt_kernel_require(ckt_kernel *k, ckt_expr_id cond, const char *note, ckt_error *err);
/* c += a x b by matrix instruction `mma` (a ckt_mma_at index), each wave issuing rep[0] x rep[1]
 * instruction tiles times rep[2] along K; register value orders as in ckt/gemm.h. The block must
 * be whole waves; the dtypes and values per thread must be the instruction's. Block-uniform. */
ckt_status ckt_kernel_mma(ckt_kernel *k, int c_reg, int a_reg, int b_reg, int mma,
                          const int64_t *rep, ckt_error *err);
/* c += a x b by warpgroup MMA `mma` (wgmma, ckt/wgmma.h) read straight from the rank-2 LDS tiles
 * a_lds (M x K) and b_lds (N x K) through shared-memory descriptors: the warpgroups form an
 * (M / (rep[0] * 64)) x (N / (rep[1] * n)) grid, each issuing rep[0] x rep[1] instruction tiles for
 * each of rep[2] K steps of 16 (C value order of ckt/gemm.h). Block-uniform; the block must be
 * whole warpgroups. The descriptors are checked by ckt_kernel_blockwise_gemm and the emitter. */
ckt_status ckt_kernel_wgmma(ckt_kernel *k, int c_reg, int a_lds, int b_lds, int mma,
                            const int64_t *rep, ckt_error *err);
/* The same with `pending` (0..7) groups of warpgroup MMAs left in flight after this one's commit
 * (wgmma.wait_group pending): the next K slice's copies and barrier overlap the MMAs. The caller
 * must not overwrite LDS they read, nor read c_reg, before ckt_kernel_wgmma_wait retires them.
 * zero: an expression of the kernel (CKT_EXPR_NONE: none); where it is nonzero, c_reg = A B^T,
 * its old values ignored (the first K step's scale-d is 0: no clear before). A condition such as
 * "the first K slice" lets one loop start the accumulation, with no peeled first iteration.
 */
ckt_status ckt_kernel_wgmma_async(ckt_kernel *k, int c_reg, int a_lds, int b_lds, int mma,
                                  const int64_t *rep, int64_t pending, ckt_expr_id zero,
                                  ckt_error *err);
/* wgmma.wait_group pending: at most `pending` groups in flight, c_reg's values settled. */
ckt_status ckt_kernel_wgmma_wait(ckt_kernel *k, int c_reg, int64_t pending, ckt_error *err);
/* Marks the last operation, a LOAD into `reg`, as the load of operand 'A' or 'B' fragments of
 * instruction `mma` ('a' / 'b': from an M- / N-contiguous tile, transposed on the way: CUDA's
 * ldmatrix.trans): a dialect with a fragment load (CUDA: ldmatrix) uses it through `addr_dist`
 * (see ckt_gemm_ldmatrix_dist) when the LDS layout allows, else the load stays element / vector
 * loads. Stored in the op: mma, mma_rep = {operand, addr_dist, 1}. */
ckt_status ckt_kernel_fragment_load(ckt_kernel *k, int reg, int mma, char operand, int addr_dist,
                                    ckt_error *err);
ckt_status ckt_reduce_parse(const char *s, ckt_reduce_op *out, ckt_error *err);

/* *view: LDS tensor `tensor` (a ring, one of its stages, or a plain tile) seen through another
 * layout of its elements (the same offset, swizzle and stages; the layout must not span more than
 * the tensor): a rank-4 tile an asynchronous copy fills from a rank-4 global window, read as the
 * rank-2 operand of a blockwise GEMM. */
ckt_status ckt_kernel_lds_view(ckt_kernel *k, int tensor, const ckt_layout *layout, int *view,
                               ckt_error *err);
/* Asynchronous copies and multi-stage LDS.
 * ckt_kernel_lds_stages: make the LDS tensor just created a ring of `stages` copies (2..16).
 * ckt_kernel_lds_stage: a view of stage `stage` (a block-uniform integer expression provably in
 * 0..stages-1, e.g. i % stages) that windows, copies and GEMMs take like any LDS tensor.
 * ckt_kernel_copy_async: dst (an LDS window) = src (a global window of the same lengths and dtype),
 * each thread moving the elements `dist` gives it (padded sources fill 0): cp.async on sm_80+, a
 * load and a store through registers on gfx90a, queued until the wait that retires its group in
 * the C dialect.
 * ckt_kernel_commit / ckt_kernel_wait: cp.async.commit_group and cp.async.wait_group `pending`;
 * the wait is followed by a barrier when `sync` (other threads' copies become visible). Both are
 * refused (CKT_EINVAL) when no asynchronous copy was issued before them in the kernel. */
ckt_status ckt_kernel_lds_stages(ckt_kernel *k, int tensor, int64_t stages, ckt_error *err);
ckt_status ckt_kernel_lds_stage(ckt_kernel *k, int tensor, ckt_expr_id stage, int *view,
                                ckt_error *err);
ckt_status ckt_kernel_copy_async(ckt_kernel *k, int dst_window, int src_window, int dist,
                                 int vector_dim, int64_t spv, ckt_error *err);
ckt_status ckt_kernel_commit(ckt_kernel *k, ckt_error *err);
ckt_status ckt_kernel_wait(ckt_kernel *k, int64_t pending, bool sync, ckt_error *err);

/* Hopper's bulk tensor copies (TMA) and mbarriers (kernel_tma.c; sm_90 / sm_90a and their CPU
 * emulation).
 * ckt_kernel_mbarriers: a set of `count` (1..32) mbarriers in LDS, each initialized on entry to
 * expect `arrivals` (1..block) arrivals per phase; *set names it. The sets take their LDS after
 * every LDS tensor when the kernel is finished (so the tensors' offsets do not depend on where
 * the sets were declared).
 * ckt_kernel_tma_copy: dst (a window of a rank-2 LDS tensor, constant origin) = src (a window of a
 * global tensor of rank 2..5 with one dimension of stride 1, same dtype) by one bulk tensor copy
 * (a rank-2 source: the same lengths; a higher rank, e.g. one (batch, head) of a 4-d tensor: its
 * modes 1 long left out, outermost first, until two remain, which are the destination's), issued by
 * thread 0, which also arrives on mbarrier `bar` (a block-uniform expression in 0..count-1) of
 * `set` expecting the box's bytes; elements outside the tensor read 0. The LDS tile must be the box
 * row by row (the contiguous dimension innermost) under one of the copy's swizzles; refusals name
 * the rule. The source tensor gets a tensor-map parameter (one per tensor and box), which the
 * launch encodes (ckt_kernel_tma). ckt_kernel_mbar_wait: every thread waits until the phase of
 * parity `phase` (an expression, taken modulo 2) of mbarrier `bar` has completed: all its arrivals
 * made and their bytes landed. */
ckt_status ckt_kernel_mbarriers(ckt_kernel *k, int64_t count, int64_t arrivals, int *set,
                                ckt_error *err);
ckt_status ckt_kernel_tma_copy(ckt_kernel *k, int dst_window, int src_window, int set,
                               ckt_expr_id bar, ckt_error *err);
ckt_status ckt_kernel_mbar_wait(ckt_kernel *k, int set, ckt_expr_id bar, ckt_expr_id phase,
                                ckt_error *err);
/* ckt_kernel_tma_copy_clipped: ckt_kernel_tma_copy whose box stops at the tensor's end along the
 * box's outer dimension (the mode the LDS tile's rows follow): a tensor shorter than the box there
 * (a GEMM's A of M = 16 rows under a 64-row tile) is copied min(box, extent) rows, and the tile's
 * rows past them keep what they held, where the plain copy fills them with zeros. The copy engine
 * takes its time over every row it fills (on an H200 a decode GEMM's A of 16 rows in 64-row boxes
 * cost 40% of its copies' time), so a caller whose results from those rows are never used (rows of
 * C past M) asks for this. The transaction count is the clipped box's bytes, computed in the kernel
 * from the same extent the launch clips the box with. Not for multicast boxes. */
ckt_status ckt_kernel_tma_copy_clipped(ckt_kernel *k, int dst_window, int src_window, int set,
                                       ckt_expr_id bar, ckt_error *err);
/* ckt_kernel_tma_store: dst (a window of a global tensor, not const) = src (a window of a rank-2
 * LDS tensor, constant origin) by one bulk tensor store, the reverse of ckt_kernel_tma_copy under
 * the same rules: issued by thread 0 of the block, outside branches on the thread id; elements
 * outside the tensor are not written (a ragged edge needs no mask). With `wait` the operation ends
 * when the store has read its LDS tile, so the tile may be rewritten after the next barrier, while
 * the global writes go on; without, it ends at once, and ckt_kernel_tma_store_wait (then a
 * barrier) must come before the tile is rewritten (the kernel's end waits by itself). The
 * threads' LDS writes it stores must precede it behind a barrier (on CUDA the barrier then also
 * fences them for the async proxy). */
ckt_status ckt_kernel_tma_store(ckt_kernel *k, int dst_window, int src_window, bool wait,
                                ckt_error *err);
ckt_status ckt_kernel_tma_store_wait(ckt_kernel *k, ckt_error *err);

/* Warp specialization. ckt_kernel_mbar_arrive: every thread of the block (the consumers) arrives
 * once on mbarrier `bar` of `set`, which must expect that many arrivals (a stage released).
 * ckt_kernel_producer: the operations up to the matching ckt_kernel_end run on a producer warp
 * launched beside the block's threads (one elected thread of it), ahead of them: loops, branches,
 * bulk tensor copies and mbarrier waits only. It comes before any operation of the block's
 * threads (only window origins may precede it), at most once, outside loops and branches. The
 * block's barriers then count its threads only (the producer warp never joins them).
 * ckt_kernel_producer_threads: the threads launched beside the block's (0, 32 or 128).
 * ckt_kernel_producer_warpgroup: the same region on a whole warpgroup (128 threads, one elected
 * issuing) that gives registers to the block's threads (setmaxnreg on sm_90a: the producer keeps
 * CKT_PRODUCER_REGISTERS, the block's warpgroups share the rest). A block of W warpgroups beside a
 * producer warp is capped at 168 registers a thread for W = 2 (the register file's four quarters
 * hold W + 1 warps of one quarter each); beside a producer warpgroup its threads get
 * ckt_kernel_consumer_registers(k) = 224. The block must be whole warpgroups, at least two. */
ckt_status ckt_kernel_mbar_arrive(ckt_kernel *k, int set, ckt_expr_id bar, ckt_error *err);

/* One atomic add for the block, between blocks of a grid (a split-K tile's last arriving block
 * sums the others' partial tiles): the block's threads first make their global writes visible to
 * the whole device (a fence each, then a barrier of the block's threads), then one thread adds
 * `value` (in the i32 range) to element `index` (a block-uniform integer expression, clamped into
 * the tensor as b:fetch's index is) of `tensor` (a rank-1 global i32 tensor with stride 1, not
 * limited, its pointer not const), *old (a new block-uniform variable) gets the element's value
 * before the add in every thread, and their later reads see what other blocks wrote before their
 * own adds. Not in a branch on the thread id or the producer's region. */
ckt_status ckt_kernel_atomic_add(ckt_kernel *k, int tensor, ckt_expr_id index, int64_t value,
                                 ckt_expr_id *old, ckt_error *err);

/* Thread-block clusters (sm_90 / sm_90a and their CPU emulation). ckt_kernel_cluster: the grid's
 * blocks run in clusters of n (2, 4 or 8) consecutive blocks along x, co-scheduled on one GPC, so
 * that they can write each other's LDS and arrive on each other's mbarriers; the block's rank in
 * its cluster is block id x mod n. It comes before any operation, at most once; a launch's grid.x
 * must be a multiple of n (refused otherwise). The kernel's mbarriers are initialized before any
 * block of the cluster uses them (a cluster barrier after their initialization).
 * ckt_kernel_tma_copy_multicast: ckt_kernel_tma_copy of a box shared by the cluster: every block
 * expects the whole box's bytes on its own mbarrier and copies 1/n of it (part r, by rank r: a
 * slice of the box along its second dimension, whole swizzle periods) into the same LDS offset of
 * every block of the cluster, so that each block ends with the whole box — the source window must
 * be the same in every block of the cluster (the caller's promise: the CPU emulation copies the
 * whole box into its own block). ckt_kernel_mbar_arrive_cluster: each warp of the block arrives
 * once on mbarrier `bar` of `set` in every block of the cluster (a stage released in all of them),
 * which must expect (block / 32) x n arrivals. A block must not exit while another block of its
 * cluster may still arrive on its mbarriers or copy into its LDS: the kernel waits for that itself
 * (e.g. its producer waits for the last releases). ckt_kernel_cluster_size: n (1 without). */
ckt_status ckt_kernel_cluster(ckt_kernel *k, int64_t n, ckt_error *err);
int64_t ckt_kernel_cluster_size(const ckt_kernel *k);
ckt_status ckt_kernel_tma_copy_multicast(ckt_kernel *k, int dst_window, int src_window, int set,
                                         ckt_expr_id bar, ckt_error *err);
ckt_status ckt_kernel_mbar_arrive_cluster(ckt_kernel *k, int set, ckt_expr_id bar, ckt_error *err);
/* A named barrier for scheduling the block's warpgroups (FlashAttention-3's ping-pong: one
 * warpgroup's MMAs issue while another's softmax runs): the calling warps wait at hardware
 * barrier `id` (an integer expression in 2..15, the same over each warp: 0 is the block's
 * barrier, 1 the block's threads' beside a producer) until `threads` (a multiple of 32, at most the
 * block) have reached it, or (arrive) count themselves without waiting. It orders when warps run,
 * and promises nothing about memory: the CPU target, whose threads run one after another, emits
 * it as nothing. sm_90 / sm_90a and their CPU emulation; not on the producer. */
ckt_status ckt_kernel_named_barrier(ckt_kernel *k, ckt_expr_id id, int64_t threads, bool arrive,
                                    ckt_error *err);
ckt_status ckt_kernel_producer(ckt_kernel *k, ckt_error *err);
/* the producer warpgroup's registers a thread after the hand-over: the batched GEMM's producer
 * (its grouped tile order in 64-bit divisions) spilled 8 bytes at 40 */
#define CKT_PRODUCER_REGISTERS 56
ckt_status ckt_kernel_producer_warpgroup(ckt_kernel *k, ckt_error *err);
/* the registers a thread of the block's warpgroups gets beside a producer warpgroup (0: no
 * producer warpgroup) */
int64_t ckt_kernel_consumer_registers(const ckt_kernel *k);
int64_t ckt_kernel_producer_threads(const ckt_kernel *k);

/* A set of mbarriers: count of them at lds_offset (8 bytes each; -1 until the kernel is finished),
 * arrivals per phase. */
typedef struct ckt_kmbar {
    int64_t count, arrivals, lds_offset;
} ckt_kmbar;
/* A tensor map: bulk copies of `box` tiles (rank 2, in the tensor's mode order) of global tensor
 * `tensor`, dimension `inner` contiguous, written to LDS under `swizzle_bytes` (0, 32, 64, 128);
 * launched as parameter `param`. */
typedef struct ckt_ktma {
    int tensor, param, inner;
    /* the map's dimensions, innermost first: dims[d] is the tensor's mode, box[d] the box's
     * extent along it (the inner mode, the other mode the LDS tile spans, then the tensor's
     * remaining modes, each 1 long, in mode order) */
    int rank, dims[5];
    int64_t box[5];
    int swizzle_bytes;
    ckt_swizzle sw; /* the LDS tile's swizzle as a ckt swizzle (b = 0: none) */
    int64_t box_bytes;
    /* clipped (ckt_kernel_tma_copy_clipped): the rows copied along dims[1], min(box[1], the
     * tensor's extent there), an expression over the parameters that the kernel's transaction
     * count and the launch's box both evaluate; CKT_EXPR_NONE: the whole box */
    ckt_expr_id rows;
} ckt_ktma;
int ckt_kernel_nmbars(const ckt_kernel *k);
const ckt_kmbar *ckt_kernel_mbar(const ckt_kernel *k, int i);
int ckt_kernel_ntmas(const ckt_kernel *k);
const ckt_ktma *ckt_kernel_tma(const ckt_kernel *k, int i);

int ckt_kernel_nops(const ckt_kernel *k);
const ckt_kop *ckt_kernel_op(const ckt_kernel *k, int i);
int ckt_kernel_ntensors(const ckt_kernel *k);
int ckt_kernel_nwindows(const ckt_kernel *k);

/* The values of the expression leaves (CKT_E_PARAM, by leaf index, CKT_EXPR_MAX_LEAVES of them)
 * of the kernel's integer parameters, from their values by parameter index (NULL: all 0): what
 * an expression over the parameters is evaluated or bounded with. */
void ckt_kernel_param_leaves(const ckt_kernel *k, const int64_t *param_values, int64_t *leaves);

/* Runtime conditions a launch must meet (unpadded windows over runtime sizes): each is an
 * expression over the parameters that must evaluate to 0, with its explanation. */
ckt_status ckt_kernel_check_launch(const ckt_kernel *k,
                                   const int64_t *param_values /* by parameter index */,
                                   ckt_error *err);

/* Launch memory safety (kernel_bounds.c), before anything runs: at these parameter values
 * (by parameter index) every global tensor's strides are >= 0 and its extent fits the buffer
 * of its pointer (buffer_bytes by parameter index; NULL: not checked), and windows whose
 * origins depend only on the block index stay inside their unpadded tensors over the whole
 * grid. *empty: some global tensor has no elements -- the launch must run no blocks. */
ckt_status ckt_kernel_check_bounds(const ckt_kernel *k, const int64_t *param_values,
                                   const int64_t grid[3], const uint64_t *buffer_bytes, bool *empty,
                                   ckt_error *err);

/* Finish building: loops and branches closed, facts of window origins settled, the mbarriers and
 * the block reductions' scratch given their LDS after the tensors. Called by the emitter;
 * idempotent. */
ckt_status ckt_kernel_finish(ckt_kernel *k, ckt_error *err);
bool ckt_kernel_is_finished(const ckt_kernel *k);

#ifdef __cplusplus
}
#endif
#endif
