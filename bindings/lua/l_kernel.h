/* ckt Lua bindings — what the files of the kernel builder share (ckt.kernel{} and the objects of a
 * kernel being built). One concept per file:
 *   l_builder.c    the kernel object, ckt.kernel{}, the builder's control methods (ids, params,
 *                  loops, branches, sync, block order) and the registration of the others
 *   l_expr.c       kernel expressions (arithmetic metamethods) and ckt.min/max/lt/select/exp/...
 *   l_tensor.c     ckt.tensor, tile windows (ckt.tile_window, ckt.local_tile), load / store
 *   l_partition.c  ckt.local_partition on kernel tensors and windows
 *   l_copy.c       b:copy, b:blockwise_copy
 *   l_async.c      asynchronous copies (async = true), b:commit, b:wait, LDS stages (t:stage)
 *   l_tma.c        bulk tensor copies (b:tma_copy) and mbarriers (b:mbarriers, b:mbarrier_wait)
 *   l_compute.c    b:clear, b:map, ckt.sweep, b:reduce, b:fold, b:block_reduce
 *   l_gemm.c       ckt.mma, ckt.gemm_traits, b:blockwise_gemm and the C register / partition
 * helpers l_executable.c k:source, k:compile, k:signature and the executable's launch l_library.c
 * require "ckt.kernels.<name>" (the embedded kernel library) l_autotune.c   ckt.autotune{...}
 * (ckt/autotune.h)
 *
 * Adding builder methods in a new file: write `void ckt_lk_open_<concept>(lua_State *L)` that
 * calls ckt_l_register(L, rows) with one table: builder methods as rows of class CKT_L_KERNEL,
 * ckt.* functions as rows of CKT_L_MODULE (the module table is at the top of the stack), declare
 * it below and add it to the parts list in l_builder.c. */
#ifndef CKT_L_KERNEL_H
#define CKT_L_KERNEL_H

#include "ckt/kernel_ir.h"
#include "l_internal.h"

#define CKT_L_KERNEL "ckt.kernel"
#define CKT_L_EXPR "ckt.expr"
#define CKT_L_KTENSOR "ckt.ktensor"
#define CKT_L_WINDOW "ckt.window"
#define CKT_L_EXE "ckt.executable"
/* registry key: the kernel whose build function is running */
#define ACTIVE_KEY "ckt.kernel.active"

typedef struct l_kernel {
    ckt_kernel *k;
    int building; /* inside its build function */
    int built;
    size_t charged; /* bytes of ballast held as the user value: the kernel's C memory, charged to
                       the state */
} l_kernel;

/* Every object of a kernel (expression, tensor, window) holds the kernel userdata as its user
 * value, so the kernel outlives them. */
typedef struct l_kobj {
    l_kernel *kb;
    int id;    /* expression id, tensor index, window index */
    int param; /* expressions: the pointer parameter's index (-1: not a pointer) */
    int dist;  /* windows: the distribution given at creation (-1: none); partitions: theirs */
    int part;  /* windows: a per-thread partition (ckt.local_partition): its distribution decides
                * who holds what, and a store writes registers to it by value index */
} l_kobj;

/* {dist=, vector_dim=, scalar_per_vector=, fill=} of a load, store or copy */
typedef struct access_opts {
    int dist;
    int64_t vector_dim, spv;
    float fill;
} access_opts;

/* ---- l_builder.c: the kernel and the objects of it ---- */
l_kernel *ckt_lk_checkkernel(lua_State *L, int idx);
/* The builder b of a method b:fn(...) (argument 1), whose kernel must be being built. */
l_kernel *ckt_lk_checkbuilder(lua_State *L, const char *fn);
/* The kernel whose build function is running (raises outside one). */
l_kernel *ckt_lk_active(lua_State *L, const char *fn);
/* Raise unless kb's build function is running; records the caller's script line. */
void ckt_lk_require_building(lua_State *L, l_kernel *kb, const char *fn);
void ckt_lk_mark_line(lua_State *L, l_kernel *kb);
/* A new object of kernel kb (at stack index kidx) with metatable tname. */
l_kobj *ckt_lk_newobj(lua_State *L, l_kernel *kb, int kidx, const char *tname, int id);
/* Push the kernel userdata the object at idx belongs to. */
void ckt_lk_push_owner(lua_State *L, int idx);

/* ---- l_expr.c ---- */
void ckt_lk_check_pool(lua_State *L, l_kernel *kb);
void ckt_lk_push_expr(lua_State *L, l_kernel *kb, int kidx, ckt_expr_id id);
l_kobj *ckt_lk_testexpr(lua_State *L, int idx);
/* A Lua number or an expression of kernel kb as an expression id. */
ckt_expr_id ckt_lk_toexpr(lua_State *L, int idx, l_kernel *kb, const char *what);
/* The same for a value found in argument arg of the call (a field of its options table): errors
 * are "bad argument #arg to 'fn' (what: ...)". */
ckt_expr_id ckt_lk_toexpr_arg(lua_State *L, int idx, int arg, l_kernel *kb, const char *what);

/* ---- l_tensor.c ---- */
l_kobj *ckt_lk_checktensor(lua_State *L, int idx, const char *what);
l_kobj *ckt_lk_checkreg(lua_State *L, int idx, l_kernel *kb, const char *what);
l_kobj *ckt_lk_checkwindow(lua_State *L, int idx, const char *what);
const ckt_ktensor *ckt_lk_ktensor(const l_kobj *t);
const ckt_kwindow *ckt_lk_kwindow(const l_kobj *w);
int ckt_lk_int_list_field(lua_State *L, int t, const char *fn, const char *field, int64_t *v,
                          int cap);
void ckt_lk_dist_from_thread_layout(lua_State *L, int idx, const char *fn, int rank,
                                    const int64_t *lengths, ckt_dist *d, int vector_dim,
                                    int64_t spv);
void ckt_lk_vector_opts(lua_State *L, int idx, const char *fn, int rank, access_opts *o);
access_opts ckt_lk_read_access(lua_State *L, int idx, l_kobj *w, const char *fn, int allow_dist);
int ckt_lk_load_into(lua_State *L, l_kobj *w, int widx, access_opts o);
/* Any distribution-like value (or a {thread_layout=, ...} table) over `lengths` as a distribution
 * index; the default distribution of a window (16-byte vectors along the last dim). */
int ckt_lk_todist(lua_State *L, int idx, l_kernel *kb, const char *fn, int rank,
                  const int64_t *lengths);
int ckt_lk_default_dist_index(lua_State *L, l_kobj *w);

/* ---- l_async.c ---- */
/* dst (an LDS window) = src (a global window), asynchronously (b:copy / b:blockwise_copy with
 * async = true); opts: the options table's stack index (thread_layout=, dist=, vector_dim=,
 * scalar_per_vector=) or 0. */
void ckt_lk_copy_async(lua_State *L, l_kernel *kb, l_kobj *dst, l_kobj *src, int opts,
                       const char *fn);
void ckt_lk_store_from(lua_State *L, l_kobj *w, l_kobj *r, access_opts o);

/* ---- one open function per file: adds its classes, builder methods and ckt.* functions (the
 * module table is at the top of the stack) ---- */
void ckt_lk_open_expr(lua_State *L);
void ckt_lk_open_tensor(lua_State *L);
void ckt_lk_open_partition(lua_State *L);
void ckt_lk_open_copy(lua_State *L);
void ckt_lk_open_compute(lua_State *L);
void ckt_lk_open_gemm(lua_State *L);
void ckt_lk_open_async(lua_State *L);
void ckt_lk_open_executable(lua_State *L);
void ckt_lk_open_library(lua_State *L);
void ckt_lk_open_autotune(lua_State *L);
void ckt_lk_open_tma(lua_State *L);
/* l_executable.c: push a new executable of the kernel at kidx (takes ownership of exe) */
struct ckt_executable;
void ckt_lk_push_executable(lua_State *L, int kidx, struct ckt_executable *exe);
/* l_args.c: the kernel's arguments from the table at t (by parameter name) or, when positional
 * is a stack index, from that list; raises naming a bad argument. Returns their count, or
 * -(i + 1) when kernel parameter i is missing. */
int ckt_l_kernel_args(lua_State *L, int t, int positional, const ckt_kernel *k, ckt_arg *args);

#endif
