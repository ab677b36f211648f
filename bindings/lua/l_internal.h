/* ckt Lua bindings — what the binding files share. The bindings are a thin layer:
 * they convert Lua values to engine values, call the engine, and turn a failed
 * ckt_status into a Lua error raised at the caller's line. */
#ifndef CKT_L_INTERNAL_H
#define CKT_L_INTERNAL_H

#include <lauxlib.h>
#include <lua.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "ckt/ckt.h"

/* ---- l_common.c ---- */
/* Raise err as a Lua error at the caller's line ("script.lua:12: composition: ..."). */
int ckt_l_error(lua_State *L, const ckt_error *err);
/* Raise a formatted error at the caller's line. */
int ckt_l_errorf(lua_State *L, const char *fmt, ...);
/* The message formatted from fmt and ap, raised through frame (a format with one %s). */
int ckt_l_verrorf(lua_State *L, const char *frame, const char *fmt, va_list ap);
/* Argument errors follow lauxlib: "bad argument #arg to 'fn' (msg)", the function's name taken
 * from the call (luaL_argerror). arg <= 0: the value is not an argument of the call (the binding
 * pushed it) and msg stands alone, so it names where the value came from.
 * Convention of the checkers below: a positive idx is an argument of the call and `what` names
 * it bare ("shape"); a negative idx is a value the binding pushed and `what` says whose it is
 * ("launch: grid"). */
int ckt_l_argerror(lua_State *L, int arg, const char *fmt, ...);
/* "what: " for a message's start, or "" when what is NULL (the argument's position says it). */
const char *ckt_l_prefix(char *buf, size_t cap, const char *what);
/* An integer (rejects non-numbers, NaN, non-integral floats), named in errors. */
int64_t ckt_l_checkint(lua_State *L, int idx, const char *what);
/* The integer at idx (a field, a list entry) found in argument arg of the call. */
int64_t ckt_l_checkint_arg(lua_State *L, int idx, int arg, const char *what);
int64_t ckt_l_optint(lua_State *L, int idx, const char *what, int64_t def);
/* Fields of an options table at index t. Return 1 when present, 0 when absent/nil; raise when
 * present with the wrong type: "bad argument #1 to 'encoding_pattern_2d' (field 'block_size'
 * must be an integer, got string)" when t is an argument (t > 0), else "fn: field ..." (fn says
 * whose table it is). */
int ckt_l_field_int(lua_State *L, int t, const char *fn, const char *field, int64_t *out);
int ckt_l_field_bool(lua_State *L, int t, const char *fn, const char *field, int *out);
int ckt_l_field_string(lua_State *L, int t, const char *fn, const char *field, const char **out);
int ckt_l_field_number(lua_State *L, int t, const char *fn, const char *field, double *out);
/* A flat Lua sequence of integers into v (cap entries); returns the count. */
int ckt_l_int_list(lua_State *L, int idx, const char *what, int64_t *v, int cap);
/* Push a flat list of integers as a Lua sequence. */
void ckt_l_push_int_list(lua_State *L, const int64_t *v, int n);
/* The same for an array of any integer type (the engine's int8_t lanes, int16_t banks). */
#define CKT_L_PUSH_INTS(L, v, n)                                                                   \
    do {                                                                                           \
        lua_createtable(L, (n), 0);                                                                \
        for (int i_ = 0; i_ < (n); i_++) {                                                         \
            lua_pushinteger(L, (v)[i_]);                                                           \
            lua_rawseti(L, -2, i_ + 1);                                                            \
        }                                                                                          \
    } while (0)
/* A comma-separated list of names ("gfx942,gfx950") as a Lua sequence; NULL or "" gives {}. */
void ckt_l_push_names(lua_State *L, const char *list);
/* t[field] = v for the table at the top of the stack: the fields of the records the bindings
 * return (one call a field instead of a push and a lua_setfield). */
void ckt_l_set_int(lua_State *L, const char *field, lua_Integer v);
void ckt_l_set_number(lua_State *L, const char *field, lua_Number v);
void ckt_l_set_bool(lua_State *L, const char *field, bool v);
void ckt_l_set_string(lua_State *L, const char *field, const char *v);
void ckt_l_set_function(lua_State *L, const char *field, lua_CFunction f); /* ckt.<field> = f */
/* The integer fields an __index reads from a value type: push the one named key (a string or
 * NULL) and return true, or return false when none is named so. */
typedef struct {
    const char *name;
    int64_t v;
} ckt_l_int_field;
bool ckt_l_push_int_field(lua_State *L, const char *key, const ckt_l_int_field *f, size_t n);
typedef struct {
    const char *name;
    const char *v;
} ckt_l_str_field;
bool ckt_l_push_str_field(lua_State *L, const char *key, const ckt_l_str_field *f, size_t n);
/* The end of an __index that serves fields: the method of class tname named by the key (stack
 * index 2), or nil. Returns 1 (the count of results). */
int ckt_l_index_method(lua_State *L, const char *tname);
/* Reject unknown keys in an options table (catches typos): allowed is NULL-terminated; fn as
 * for the fields. */
void ckt_l_check_fields(lua_State *L, int t, const char *fn, const char *const *allowed);
/* The engine context of this Lua state (created when the module opens). */
ckt_context *ckt_l_context(lua_State *L);
/* What an embedding host (embed.c) tells the bindings through the registry, where a script
 * cannot reach: the state is sandboxed (compile options are a closed list), and the end of the
 * current run's time limit (CLOCK_MONOTONIC seconds, 0: none) that launches must obey. */
#define CKT_L_SANDBOXED_KEY "ckt.sandboxed"
#define CKT_L_DEADLINE_KEY "ckt.deadline"
bool ckt_l_sandboxed(lua_State *L);
double ckt_l_deadline(lua_State *L);
/* Define name() as the __gc / __close / close of a userdata type: release its handle once (the
 * metamethods and close() may all run), e.g. CKT_L_CLOSER(x_gc, l_exe, CKT_L_EXE, exe,
 * ckt_exe_free). */
#define CKT_L_CLOSER(name, type, tname, handle, release)                                           \
    static int name(lua_State *L)                                                                  \
    {                                                                                              \
        type *u_ = luaL_checkudata(L, 1, tname);                                                   \
        release(u_->handle);                                                                       \
        u_->handle = NULL;                                                                         \
        return 0;                                                                                  \
    }
/* Define name() as the __tostring of a value type the engine writes into a buffer, e.g.
 * CKT_L_TOSTRING(n_tostring, checknested, ckt_nested_to_string). */
#define CKT_L_TOSTRING(name, check, to_string)                                                     \
    static int name(lua_State *L)                                                                  \
    {                                                                                              \
        char buf_[1024];                                                                           \
        to_string(check(L, 1), buf_, sizeof buf_);                                                 \
        lua_pushstring(L, buf_);                                                                   \
        return 1;                                                                                  \
    }

/* The type of the value at idx for "got <type>" in errors: the class of a ckt object
 * ("ckt.layout"; its metatable's __name, as lauxlib's own type errors say), else the Lua type. */
const char *ckt_l_typename(lua_State *L, int idx);
/* The userdata of class tname at idx, else an argument error "what: <expected> expected, got
 * <type>" (the checkers' convention above). */
void *ckt_l_checkclass(lua_State *L, int idx, const char *tname, const char *expected,
                       const char *what);
/* Push a new userdata of class tname holding a copy of the size bytes at v (a value type:
 * layout, swizzle, encoding, ...); returns it. */
void *ckt_l_push_value(lua_State *L, const char *tname, const void *v, size_t size);
/* One row of a binding file's registration table: fn as name in the metatable of class cls
 * (created at its first row if need be, named tname; __index pointing at itself unless a row
 * sets it), or in the table on top of the stack (the module) where cls is CKT_L_MODULE;
 * registered as a closure over its row (ckt_l_name). */
typedef struct ckt_l_entry {
    const char *cls;
    const char *name;
    lua_CFunction fn;
} ckt_l_entry;
#define CKT_L_MODULE NULL
/* Register rows up to the first one without a name; leaves the stack as it was. */
void ckt_l_register(lua_State *L, const ckt_l_entry *rows);
/* Register one function f under each of n rows of size bytes at rows, as a closure whose
 * upvalue is its row (a light userdata: ckt_l_row(L) in f): the row's first member is its name,
 * a const char *. Into class cls's metatable (made by ckt_l_register before) or, where cls is
 * CKT_L_MODULE, the table on top of the stack. For families of functions one table describes. */
void ckt_l_register_rows(lua_State *L, const char *cls, lua_CFunction f, const void *rows,
                         size_t size, size_t n);
#define CKT_L_REGISTER_ROWS(L, cls, f, rows)                                                       \
    ckt_l_register_rows(L, cls, f, rows, sizeof *(rows), sizeof(rows) / sizeof *(rows))
#define ckt_l_row(L) lua_touserdata(L, lua_upvalueindex(1))
/* In a function ckt_l_register registered: the name of its row (one function under several names
 * tells them apart by it). */
const char *ckt_l_name(lua_State *L);
/* In such a function registered as both grid and svg (the drawings of a class): 1 when called as
 * svg. */
int ckt_l_svg(lua_State *L);

/* ---- l_layout.c (layouts, tuples, swizzles, composed layouts) ---- */
#define CKT_L_LAYOUT "ckt.layout"
#define CKT_L_SWIZZLE "ckt.swizzle"
#define CKT_L_COMPOSED "ckt.composed"
/* A Lua integer or nested table of integers into a tuple. */
void ckt_l_totuple(lua_State *L, int idx, const char *what, ckt_tuple *out);
void ckt_l_pushtuple(lua_State *L, const ckt_tuple *t); /* integer or nested table */
void ckt_l_pushlayout(lua_State *L, const ckt_layout *l);
ckt_layout *ckt_l_checklayout(lua_State *L, int idx, const char *what);
/* A layout, an integer n (n:1) or a layout string; raises otherwise. */
void ckt_l_tolayout(lua_State *L, int idx, const char *what, ckt_layout *out);
ckt_layout *ckt_l_testlayout(lua_State *L, int idx); /* NULL when not a layout */
/* ckt.local_tile / ckt.local_partition on layouts (the kernel bindings register the functions,
 * which take kernel tensors and windows too, and call these for layouts). */
int ckt_l_layout_local_tile(lua_State *L);
int ckt_l_layout_local_partition(lua_State *L);

/* ---- l_distribution.c / l_nested.c (distributions) ---- */
struct ckt_encoding;
struct ckt_nested;
void ckt_l_pushencoding(lua_State *L, const struct ckt_encoding *e);
void ckt_l_pushnested(lua_State *L, const struct ckt_nested *n);
/* Any distribution-like value (encoding, nested layout, fragment, TV layout) to its TV layout. */
void ckt_l_to_tv(lua_State *L, int idx, const char *what, ckt_layout *tv);
/* Draw a TV layout over a rows x cols tile with T#/V# cells; pushes the text or SVG.
 * opts: 0 or the stack index of checked options ({title=, cell=}, see ckt_l_draw_opts). */
int ckt_l_draw_tv(lua_State *L, const ckt_layout *tv, int64_t rows, int64_t cols, const char *title,
                  int svg, int opts);
/* Check the options table at idx of grid()/svg{} (extra: one more allowed key or NULL); 0 when
 * absent. */
int ckt_l_draw_opts(lua_State *L, int idx, int svg, const char *extra);

/* ---- l_array.c (host arrays, devices, device buffers) and l_jit.c (compile results) ---- */
#include "ckt/dtype.h"
#include "ckt/jit.h"
#include "ckt/runtime.h"
#define CKT_L_ARRAY_MAX_RANK 8
typedef struct ckt_l_array { /* the userdata of ckt.array: host memory, 64-byte aligned */
    ckt_dtype dtype;
    int64_t n; /* elements */
    int rank;
    int64_t shape[CKT_L_ARRAY_MAX_RANK];
    void *data; /* NULL once closed */
    void *raw; /* the allocation data lies in: from the state's allocator, so a sandbox's memory cap
                  counts it */
    size_t raw_size;
    lua_Alloc allocf;
    void *alloc_ud;
} ckt_l_array;
/* A dtype name (f16, bf16, f32, ...) at idx; raises naming `what` (NULL: "dtype") otherwise. */
ckt_dtype ckt_l_checkdtype(lua_State *L, int idx, const char *what);
ckt_l_array *ckt_l_checkarray(lua_State *L, int idx); /* raises on a closed array */
/* l_array.c: n or {d0, d1, ...} at idx: the shape (rank) and element count, checked */
int64_t ckt_l_check_shape(lua_State *L, int idx, const char *fn, ckt_dtype t, int64_t *shape,
                          int *rank);
/* l_array.c: a new zeroed array pushed on the stack */
ckt_l_array *ckt_l_new_array(lua_State *L, ckt_dtype t, const int64_t *shape, int rank, int64_t n);
ckt_device *ckt_l_checkdevice(lua_State *L, int idx); /* ckt.device userdata */
ckt_buffer *ckt_l_checkbuffer(lua_State *L, int idx); /* dev:alloc userdata */
/* l_args.c: the buffer at idx and its dtype, or NULL when idx holds no buffer (raises on a
 * closed one). */
ckt_buffer *ckt_l_testbuffer(lua_State *L, int idx, ckt_dtype *dtype);
void ckt_l_pushbinary(lua_State *L, ckt_binary *b); /* takes ownership (freed by __gc/__close) */
ckt_binary *ckt_l_checkbinary(lua_State *L, int idx);
/* options=, compile_only=, cache= of the compile table at t: fills opts (32), returns their
 * count, sets *flags (ckt_compile_flags). */
int ckt_l_compile_options(lua_State *L, int t, const char *fn, const char **opts, unsigned *flags);
/* The element type of a device buffer (dev:alloc userdata). */
ckt_dtype ckt_l_buffer_dtype(lua_State *L, int idx);
/* The userdata of a device buffer (l_device.c) and of a stream (l_stream.c), read by the
 * conversions of l_args.c. */
typedef struct ckt_l_buffer {
    ckt_buffer *buf;
    ckt_dtype dtype;
    int64_t n;
} ckt_l_buffer;
typedef struct ckt_l_stream {
    struct ckt_stream *s;
    bool owned; /* a device's default stream is not: it holds a reference to the device instead */
} ckt_l_stream;
/* l_args.c: the buffers' class remembered for ckt_l_testbuffer (l_device.c's open calls it) */
void ckt_l_remember_buffer_class(lua_State *L);

/* l_args.c: the Lua value at idx as a launch argument of kind (a buffer of *dtype when dtype is
 * given), or NULL; else the reason ("<what> must be ...") in why. */
const char *ckt_l_to_arg(lua_State *L, int idx, const char *what, ckt_param_kind kind,
                         const ckt_dtype *dtype, ckt_arg *out, char *why, size_t cap);
/* A grid at idx (an integer or a list of 1 to 3, each >= 1) into g, or the reason. */
const char *ckt_l_to_grid(lua_State *L, int idx, const char *name, int64_t g[3], char *why,
                          size_t cap);
/* l_args.c: the stream at idx (a ckt.stream), raising on a closed one; NULL when absent/nil */
struct ckt_stream *ckt_l_optstream(lua_State *L, int idx, const char *what);
/* l_stream.c: push a stream userdata (owned: closing it destroys the stream) */
void ckt_l_pushstream(lua_State *L, struct ckt_stream *s, bool owned);

/* The Lua function behind ckt.device (the kernel builder's launch opens default devices with it).
 */
int ckt_l_device_open(lua_State *L);

/* ---- one open function per binding file; each adds its fields to the module
 * table at the top of the stack ---- */
void ckt_l_open_layout(
    lua_State *L); /* l_layout.c: layouts, algebra, swizzle, composed, grid/svg */
void ckt_l_open_distribution(
    lua_State *L); /* l_distribution.c: CK encodings, patterns, fragments, same_distribution */
void ckt_l_open_nested(lua_State *L);       /* l_nested.c: IREE nested layouts */
void ckt_l_open_sfc(lua_State *L);          /* l_sfc.c */
void ckt_l_open_target(lua_State *L);       /* l_target.c: ckt.target */
void ckt_l_open_lds(lua_State *L);          /* l_lds.c: ckt.lds.* */
void ckt_l_open_array(lua_State *L);        /* l_array.c: host arrays */
void ckt_l_open_device(lua_State *L);       /* l_device.c: devices, buffers, dev:launch */
void ckt_l_open_stream(lua_State *L);       /* l_stream.c: streams, events, graphs */
void ckt_l_open_kernel(lua_State *L);       /* l_builder.c and l_kernel.h's files: builder, tensors,
                                               windows, compile, launch */
void ckt_l_open_help(lua_State *L);         /* l_help.c: help texts */
void ckt_l_open_jit(lua_State *L);          /* l_jit.c: ckt.compile */
void ckt_l_open_compile_pool(lua_State *L); /* l_compile_pool.c: ckt.compile_all */
void ckt_l_open_wgmma(lua_State *L);        /* l_wgmma.c: ckt.wgmma_desc */
/* l_help.c: add (or replace) a help topic, e.g. from a binding file's open function */
void ckt_l_help_add(lua_State *L, const char *name, const char *text);

#endif
