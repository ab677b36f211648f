/* ckt Lua bindings — the kernel builder's objects, shared by l_kernel.c and the builder's other
 * binding files (l_async.c): the kernel userdata, its expressions, tensors and windows, and the
 * few helpers they need from l_kernel.c. */
#ifndef CKT_L_KBUILD_H
#define CKT_L_KBUILD_H

#include "ckt/kernel_ir.h"
#include "l_internal.h"

#define CKT_L_KERNEL "ckt.kernel"
#define CKT_L_EXPR "ckt.expr"
#define CKT_L_KTENSOR "ckt.ktensor"
#define CKT_L_WINDOW "ckt.window"

typedef struct l_kernel {
    ckt_kernel *k;
    int building; /* inside its build function */
    int built;
    size_t charged; /* bytes of ballast held as the user value: the kernel's C memory, charged to the state */
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

/* From l_kernel.c. require_building: raise unless kb's build function runs (records the line). */
void ckt_l_kb_require_building(lua_State *L, l_kernel *kb, const char *fn);
/* push a new object of kernel kb (the kernel userdata at kidx) with metatable tname */
l_kobj *ckt_l_kb_newobj(lua_State *L, l_kernel *kb, int kidx, const char *tname, int id);
/* a number or an expression of kb as an expression id */
ckt_expr_id ckt_l_kb_toexpr(lua_State *L, int idx, l_kernel *kb, const char *what);
/* a tile window (or partition) of the kernel being built */
l_kobj *ckt_l_kb_checkwindow(lua_State *L, int idx, const char *what);
/* a tensor of any memory */
l_kobj *ckt_l_kb_checktensor(lua_State *L, int idx, const char *what);
/* a distribution-like value (or a {thread_layout=, ...} table) over `lengths` as a distribution index */
int ckt_l_kb_todist(lua_State *L, int idx, l_kernel *kb, const char *fn, int rank, const int64_t *lengths);
/* the default distribution of a copy of `lengths` (16-byte vectors along the last dim) */
int ckt_l_kb_default_dist(lua_State *L, l_kernel *kb, int rank, const int64_t *lengths, ckt_dtype dtype);

/* l_async.c: asynchronous copies, commit / wait, LDS stages (called by ckt_l_open_kernel with the
 * ckt table on the stack, after the builder's classes exist). */
void ckt_l_open_async(lua_State *L);

#endif
