/* bench/cublas.c — cuBLAS in the same process as ckt, for bench/gemm.lua's ceiling. A Lua C
 * module loaded by ckt-lua (require "ckt_cublas"); nothing is linked: libcublas and libcuda are
 * dlopen'ed when it opens, so the build needs neither and a host without cuBLAS just says so.
 * cuBLAS runs in the primary context ckt's CUDA runtime made current (open a ckt device first)
 * on the legacy default stream, on ckt device buffers passed by address (buf:address()).
 *
 *   local cublas = require "ckt_cublas"
 *   local h, why = cublas.open()                     -- nil and the reason when unavailable
 *   h:gemm{dtype=, out=, a_major=, b_major=, M=, N=, K=, A=, B=, C=, reps=}  -> ms (median) or nil
 *   h:gemm_async{..., stream=s:handle()}             -- one GEMM enqueued on the stream, no wait
 *   h:library()                                      -- the file that was loaded
 *   h:gemm_fp8{dtype=, M=, N=, K=, A=, B=, C=, scale_A=, scale_B=, workspace=, workspace_bytes=,
 *              reps=, scales=}                      -> ms (median) or nil, why: cuBLASLt's fp8
 *                                                       GEMM (A and B K-major, bf16 C, f32 scales
 *                                                       at device addresses: per tensor, or with
 *                                                       scales = "block" A's by rows of 128 (its
 *                                                       VEC128 mode), B's by 128 x 128 blocks)
 *
 * ckt's convention: C (M x N, row-major) = A (M x K) . B (K x N); a_major "k": A row-major,
 * "m": A stored K x M row-major; b_major "n": B row-major, "k": B stored N x K row-major.
 * cuBLAS is column-major: a row-major X is the column-major X^T, so C^T (N x M, ld N) = B^T A^T:
 * cuBLAS's first operand is B (op N when B is row-major K x N, i.e. column-major N x K; op T when
 * stored N x K, i.e. column-major K x N, ld K), its second A (op N for row-major M x K,
 * column-major K x M, ld K; op T for K x M row-major, column-major M x K, ld M). */
#include <dlfcn.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*cublas_create_fn)(void **);
typedef int (*cublas_destroy_fn)(void *);
typedef int (*cublas_gemmex_fn)(void *, int, int, int, int, int, const void *, const void *, int,
                                int, const void *, int, int, const void *, void *, int, int, int,
                                int);
typedef int (*cu_ctx_get_fn)(void **);
typedef int (*cu_event_create_fn)(void **, unsigned);
typedef int (*cu_event_record_fn)(void *, void *);
typedef int (*cu_event_sync_fn)(void *);
typedef int (*cu_event_elapsed_fn)(float *, void *, void *);
typedef int (*cu_event_destroy_fn)(void *);
typedef int (*cu_ctx_sync_fn)(void);
typedef int (*cublas_set_stream_fn)(void *, void *);

/* cuBLASLt (its header's values; nothing of CUDA is included) */
typedef struct {
    uint64_t data[8];
} lt_algo;
typedef struct {
    lt_algo algo;
    size_t workspace_size;
    int state;
    float waves;
    int reserved[4];
} lt_heuristic;
typedef int (*lt_create_fn)(void **);
typedef int (*lt_desc_create_fn)(void **, int, int);
typedef int (*lt_set_fn)(void *, int, const void *, size_t);
typedef int (*lt_layout_create_fn)(void **, int, uint64_t, uint64_t, int64_t);
typedef int (*lt_pref_create_fn)(void **);
typedef int (*lt_heuristic_fn)(void *, void *, void *, void *, void *, void *, void *, int,
                               lt_heuristic *, int *);
typedef int (*lt_matmul_fn)(void *, void *, const void *, const void *, void *, const void *,
                            void *, const void *, const void *, void *, void *, void *,
                            const lt_algo *, void *, size_t, void *);
typedef int (*lt_destroy_fn)(void *);

enum {
    CUDA_R_32F = 0,
    CUDA_R_16F = 2,
    CUDA_R_16BF = 14,
    CUDA_R_8F_E4M3 = 28,
    CUDA_R_8F_E5M2 = 29,
    LT_DESC_TRANSA = 3,
    LT_DESC_TRANSB = 4,
    LT_DESC_A_SCALE_POINTER = 17,
    LT_DESC_B_SCALE_POINTER = 18,
    LT_DESC_A_SCALE_MODE = 31,
    LT_DESC_B_SCALE_MODE = 32,
    LT_SCALE_VEC128_32F = 4,
    LT_SCALE_BLK128x128_32F = 5,
    LT_PREF_MAX_WORKSPACE_BYTES = 1,
    CUBLAS_OP_N = 0,
    CUBLAS_OP_T = 1,
    CUBLAS_COMPUTE_32F = 68,
    CUBLAS_GEMM_DEFAULT = -1
};

typedef struct handle {
    void *lib, *cuda, *h;
    char libname[256];
    cublas_gemmex_fn gemm;
    cublas_destroy_fn destroy;
    cu_event_create_fn ev_create;
    cu_event_record_fn ev_record;
    cu_event_sync_fn ev_sync;
    cu_event_elapsed_fn ev_elapsed;
    cu_event_destroy_fn ev_destroy;
    cu_ctx_sync_fn ctx_sync;
    cublas_set_stream_fn set_stream;
    void *lt_lib, *lt; /* cuBLASLt, opened on the first gemm_fp8 */
} handle;

#define HANDLE "ckt_cublas.handle"

/* dst = the function `name` of lib (NULL when absent), without an object -> function pointer cast
 */
#define LOAD(dst, lib, name)                                                                       \
    do {                                                                                           \
        void *ckt_p_ = dlsym((lib), (name));                                                       \
        memcpy(&(dst), &ckt_p_, sizeof ckt_p_);                                                    \
    } while (0)

static int h_gc(lua_State *L)
{
    handle *h = luaL_checkudata(L, 1, HANDLE);
    if (h->h && h->destroy) h->destroy(h->h);
    h->h = NULL;
    return 0;
}

static int fail(lua_State *L, const char *fmt, const char *a)
{
    lua_pushnil(L);
    lua_pushfstring(L, fmt, a);
    return 2;
}

/* cublas.open() -> handle | nil, why */
static int l_open(lua_State *L)
{
    const char *names[] = {getenv("CKT_CUBLAS"),
                           "libcublas.so.13",
                           "/usr/local/cuda/lib64/libcublas.so.13",
                           "libcublas.so.12",
                           "/usr/local/cuda/lib64/libcublas.so.12",
                           "libcublas.so",
                           NULL};
    void *lib = NULL;
    const char *used = NULL;
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]) && !lib; i++)
        if (names[i] && (lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL))) used = names[i];
    if (!lib)
        return fail(L,
                    "no libcublas (tried libcublas.so.13 / .12 and /usr/local/cuda/lib64; set "
                    "CKT_CUBLAS=path)%s",
                    "");
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) return fail(L, "no libcuda.so.1%s", "");
    handle *h = lua_newuserdatauv(L, sizeof *h, 0);
    memset(h, 0, sizeof *h);
    luaL_setmetatable(L, HANDLE);
    h->lib = lib;
    h->cuda = cuda;
    snprintf(h->libname, sizeof h->libname, "%s", used);
    cublas_create_fn create;
    LOAD(create, lib, "cublasCreate_v2");
    LOAD(h->destroy, lib, "cublasDestroy_v2");
    LOAD(h->gemm, lib, "cublasGemmEx");
    LOAD(h->set_stream, lib, "cublasSetStream_v2");
    cu_ctx_get_fn ctx_get;
    LOAD(ctx_get, cuda, "cuCtxGetCurrent");
    LOAD(h->ev_create, cuda, "cuEventCreate");
    LOAD(h->ev_record, cuda, "cuEventRecord");
    LOAD(h->ev_sync, cuda, "cuEventSynchronize");
    LOAD(h->ev_elapsed, cuda, "cuEventElapsedTime_v2");
    if (!h->ev_elapsed) LOAD(h->ev_elapsed, cuda, "cuEventElapsedTime");
    LOAD(h->ev_destroy, cuda, "cuEventDestroy_v2");
    LOAD(h->ctx_sync, cuda, "cuCtxSynchronize");
    if (!create || !h->destroy || !h->gemm || !h->set_stream)
        return fail(L, "%s lacks cublasCreate_v2 / cublasGemmEx / cublasSetStream_v2", used);
    if (!ctx_get || !h->ev_create || !h->ev_record || !h->ev_sync || !h->ev_elapsed ||
        !h->ev_destroy || !h->ctx_sync)
        return fail(L, "libcuda.so.1 lacks the event functions%s", "");
    void *ctx = NULL;
    if (ctx_get(&ctx) || !ctx) { /* ckt makes its context current per call: device 0's primary
                                    context, the one ckt retained */
        typedef int (*dev_get_fn)(int *, int);
        typedef int (*retain_fn)(void **, int);
        typedef int (*set_fn)(void *);
        dev_get_fn dev_get;
        LOAD(dev_get, cuda, "cuDeviceGet");
        retain_fn retain;
        LOAD(retain, cuda, "cuDevicePrimaryCtxRetain");
        set_fn set;
        LOAD(set, cuda, "cuCtxSetCurrent");
        int dev = 0;
        if (!dev_get || !retain || !set || dev_get(&dev, 0) || retain(&ctx, dev) || !ctx ||
            set(ctx))
            return fail(L, "no CUDA context: open a ckt device (ckt.device(\"cuda\")) first%s", "");
    }
    int st = create(&h->h);
    if (st) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", st);
        return fail(L, "cublasCreate failed with status %s", buf);
    }
    return 1;
}

static int dtype_of(lua_State *L, int t, const char *field, const char *def)
{
    lua_getfield(L, t, field);
    const char *s = luaL_optstring(L, -1, def);
    lua_pop(L, 1);
    if (!strcmp(s, "f16")) return CUDA_R_16F;
    if (!strcmp(s, "bf16")) return CUDA_R_16BF;
    if (!strcmp(s, "f32")) return CUDA_R_32F;
    return luaL_error(L, "gemm: %s '%s' is not f16, bf16 or f32", field, s);
}

static lua_Integer int_field(lua_State *L, int t, const char *field, lua_Integer def)
{
    lua_getfield(L, t, field);
    lua_Integer v = lua_isnil(L, -1) ? def : luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    if (v < 0) luaL_error(L, "gemm: %s must not be negative", field);
    return v;
}

static char major_of(lua_State *L, int t, const char *field, const char *allowed)
{
    lua_getfield(L, t, field);
    const char *s = luaL_optstring(L, -1, "k");
    lua_pop(L, 1);
    if (strlen(s) != 1 || !strchr(allowed, s[0]))
        luaL_error(L, "gemm: %s '%s' is not one of %s", field, s, allowed);
    return s[0];
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* One GEMM of the table at index 2, in cuBLAS's column-major terms. */
typedef struct problem {
    int in, out, opa, opb, lda, ldb;
    int M, N, K;
    void *A, *B, *C, *stream;
} problem;

static problem parse_problem(lua_State *L, handle *h)
{
    luaL_checktype(L, 2, LUA_TTABLE);
    if (!h->h) luaL_error(L, "gemm: the handle is closed");
    problem p;
    p.in = dtype_of(L, 2, "dtype", "f16");
    lua_getfield(L, 2, "dtype");
    const char *ind = luaL_optstring(L, -1, "f16");
    lua_pop(L, 1);
    p.out = dtype_of(L, 2, "out", ind);
    if (p.in == CUDA_R_32F) luaL_error(L, "gemm: dtype f32 is not a tensor-core GEMM (f16, bf16)");
    char am = major_of(L, 2, "a_major", "km"), bm = major_of(L, 2, "b_major", "kn");
    lua_Integer M = int_field(L, 2, "M", 0), N = int_field(L, 2, "N", 0),
                K = int_field(L, 2, "K", 0);
    if (M < 1 || N < 1 || K < 1 || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
        luaL_error(L, "gemm: M, N, K must be in 1..2^31-1");
    p.M = (int)M, p.N = (int)N, p.K = (int)K;
    p.A = (void *)(uintptr_t)int_field(L, 2, "A", 0);
    p.B = (void *)(uintptr_t)int_field(L, 2, "B", 0);
    p.C = (void *)(uintptr_t)int_field(L, 2, "C", 0);
    p.stream = (void *)(uintptr_t)int_field(L, 2, "stream", 0);
    if (!p.A || !p.B || !p.C)
        luaL_error(L, "gemm: A, B and C are device addresses (buf:address())");
    p.opb = bm == 'k' ? CUBLAS_OP_T : CUBLAS_OP_N, p.ldb = bm == 'k' ? p.K : p.N;
    p.opa = am == 'm' ? CUBLAS_OP_T : CUBLAS_OP_N, p.lda = am == 'm' ? p.M : p.K;
    return p;
}

static int run(handle *h, const problem *p)
{
    static const float alpha = 1.0f, beta = 0.0f;
    int st = h->set_stream(h->h, p->stream);
    return st ? st
              : h->gemm(h->h, p->opb, p->opa, p->N, p->M, p->K, &alpha, p->B, p->in, p->ldb, p->A,
                        p->in, p->lda, &beta, p->C, p->out, p->N, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT);
}

/* the timing of a GEMM call fn(h, arg) enqueued on `stream`: with reps > 0, reps + 3 calls, each
 * between two events, *med the median of the last reps (ms); else one call, *med 0. Returns
 * fn's first nonzero status (TIMED_NOEVENTS: no memory or events); *sync: the context's
 * synchronize status after them */
enum { TIMED_NOEVENTS = -2 };
static int timed(handle *h, void *stream, lua_Integer reps, int (*fn)(handle *, const void *),
                 const void *arg, float *med, int *sync)
{
    int runs = reps > 0 ? (int)reps + 3 : 1, st = 0;
    float *ms = calloc((size_t)runs, sizeof *ms);
    void *e0 = NULL, *e1 = NULL;
    *med = 0;
    if (!ms || h->ev_create(&e0, 0) || h->ev_create(&e1, 0)) st = TIMED_NOEVENTS;
    for (int r = 0; r < runs && !st; r++) {
        h->ev_record(e0, stream);
        st = fn(h, arg);
        h->ev_record(e1, stream);
        h->ev_sync(e1);
        h->ev_elapsed(&ms[r], e0, e1);
    }
    *sync = h->ctx_sync();
    if (e0) h->ev_destroy(e0);
    if (e1) h->ev_destroy(e1);
    if (!st && reps > 0) {
        qsort(ms + 3, (size_t)reps, sizeof *ms, cmp_float);
        *med = ms[3 + (reps - 1) / 2];
    }
    free(ms);
    return st;
}

static int run_problem(handle *h, const void *p) { return run(h, p); }

/* h:gemm{dtype=, out=, a_major=, b_major=, M=, N=, K=, A=, B=, C=, reps=, stream=} -> median ms
 * between two events (reps > 0) or 0 */
static int h_gemm(lua_State *L)
{
    handle *h = luaL_checkudata(L, 1, HANDLE);
    problem p = parse_problem(L, h);
    lua_Integer reps = int_field(L, 2, "reps", 0);
    float med;
    int sync, st = timed(h, p.stream, reps, run_problem, &p, &med, &sync);
    if (st == TIMED_NOEVENTS) return luaL_error(L, "gemm: out of memory or events");
    if (st || sync)
        return luaL_error(L, "gemm: cublasGemmEx failed with status %d (context %d)", st, sync);
    lua_pushnumber(L, med);
    return 1;
}

/* h:gemm_async{..., stream=}: one GEMM enqueued on the stream (an application's loop), no wait */
static int h_gemm_async(lua_State *L)
{
    handle *h = luaL_checkudata(L, 1, HANDLE);
    problem p = parse_problem(L, h);
    int st = run(h, &p);
    if (st) return luaL_error(L, "gemm_async: cublasGemmEx failed with status %d", st);
    return 0;
}

/* the cuBLASLt functions gemm_fp8 calls */
static struct {
    lt_create_fn create;
    lt_desc_create_fn desc_create;
    lt_set_fn desc_set, pref_set;
    lt_layout_create_fn layout_create;
    lt_pref_create_fn pref_create;
    lt_heuristic_fn heuristic;
    lt_matmul_fn matmul;
    lt_destroy_fn desc_destroy, layout_destroy, pref_destroy;
} LT;

static const char *lt_open(handle *h)
{
    if (h->lt) return NULL;
    const char *names[] = {"libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.13",
                           "libcublasLt.so.12", "/usr/local/cuda/lib64/libcublasLt.so.12",
                           "libcublasLt.so",    NULL};
    for (int i = 0; names[i] && !h->lt_lib; i++)
        h->lt_lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h->lt_lib) return "no libcublasLt (tried .so.13, .so.12 and /usr/local/cuda/lib64)";
    LOAD(LT.create, h->lt_lib, "cublasLtCreate");
    LOAD(LT.desc_create, h->lt_lib, "cublasLtMatmulDescCreate");
    LOAD(LT.desc_set, h->lt_lib, "cublasLtMatmulDescSetAttribute");
    LOAD(LT.layout_create, h->lt_lib, "cublasLtMatrixLayoutCreate");
    LOAD(LT.pref_create, h->lt_lib, "cublasLtMatmulPreferenceCreate");
    LOAD(LT.pref_set, h->lt_lib, "cublasLtMatmulPreferenceSetAttribute");
    LOAD(LT.heuristic, h->lt_lib, "cublasLtMatmulAlgoGetHeuristic");
    LOAD(LT.matmul, h->lt_lib, "cublasLtMatmul");
    LOAD(LT.desc_destroy, h->lt_lib, "cublasLtMatmulDescDestroy");
    LOAD(LT.layout_destroy, h->lt_lib, "cublasLtMatrixLayoutDestroy");
    LOAD(LT.pref_destroy, h->lt_lib, "cublasLtMatmulPreferenceDestroy");
    if (!LT.create || !LT.desc_create || !LT.desc_set || !LT.layout_create || !LT.pref_create ||
        !LT.pref_set || !LT.heuristic || !LT.matmul || !LT.desc_destroy || !LT.layout_destroy ||
        !LT.pref_destroy)
        return "libcublasLt lacks a cublasLt function gemm_fp8 needs";
    if (LT.create(&h->lt)) return "cublasLtCreate failed";
    return NULL;
}

static void *addr_field(lua_State *L, int t, const char *field)
{
    lua_getfield(L, t, field);
    lua_Integer v = luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    return (void *)(uintptr_t)v;
}

/* one cuBLASLt matmul of gemm_fp8's setup */
typedef struct {
    void *desc, *la, *lb, *lc, *A, *B, *C, *ws;
    lt_heuristic heur;
} lt_call;

static int lt_run(handle *h, const void *arg)
{
    static const float alpha = 1.0f, beta = 0.0f;
    const lt_call *c = arg;
    return LT.matmul(h->lt, c->desc, &alpha, c->B, c->la, c->A, c->lb, &beta, c->C, c->lc, c->C,
                     c->lc, &c->heur.algo, c->ws, c->heur.workspace_size, NULL);
}

/* h:gemm_fp8{...} (the header comment): ckt's C (M x N row-major) = scale_A scale_B A . B with A
 * M x K and B stored N x K, both K-major, is cuBLASLt's column-major D (N x M) = op(B') op(A')
 * with B' the column-major K x N (op T) and A' the column-major K x M (op N): the "TN" form its
 * fp8 kernels take */
static int h_gemm_fp8(lua_State *L)
{
    handle *h = luaL_checkudata(L, 1, HANDLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    const char *why = lt_open(h);
    if (why) {
        lua_pushnil(L);
        lua_pushstring(L, why);
        return 2;
    }
    lua_getfield(L, 2, "dtype");
    const char *dt = luaL_optstring(L, -1, "e4m3");
    lua_pop(L, 1);
    int in = !strcmp(dt, "e4m3") ? CUDA_R_8F_E4M3 : !strcmp(dt, "e5m2") ? CUDA_R_8F_E5M2 : -1;
    if (in < 0) return luaL_error(L, "gemm_fp8: dtype '%s' is not e4m3 or e5m2", dt);
    lua_Integer M = int_field(L, 2, "M", 0), N = int_field(L, 2, "N", 0),
                K = int_field(L, 2, "K", 0), reps = int_field(L, 2, "reps", 0),
                wsb = int_field(L, 2, "workspace_bytes", 0);
    if (M < 1 || N < 1 || K < 1) return luaL_error(L, "gemm_fp8: M, N, K must be positive");
    void *A = addr_field(L, 2, "A"), *B = addr_field(L, 2, "B"), *C = addr_field(L, 2, "C"),
         *sa = addr_field(L, 2, "scale_A"), *sb = addr_field(L, 2, "scale_B");
    lua_getfield(L, 2, "workspace");
    void *ws = lua_isnil(L, -1) ? NULL : (void *)(uintptr_t)luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, 2, "scales");
    const char *scales = luaL_optstring(L, -1, "tensor");
    lua_pop(L, 1);
    if (strcmp(scales, "tensor") && strcmp(scales, "block"))
        return luaL_error(L, "gemm_fp8: scales '%s' is not tensor or block", scales);
    lt_call c = {.A = A, .B = B, .C = C, .ws = ws};
    void *pref = NULL;
    int ta = CUBLAS_OP_T, tb = CUBLAS_OP_N, st = 0, found = 0, sync = 0;
    size_t wsz = ws ? (size_t)wsb : 0;
    st = LT.desc_create(&c.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (!st) st = LT.desc_set(c.desc, LT_DESC_TRANSA, &ta, sizeof ta);
    if (!st) st = LT.desc_set(c.desc, LT_DESC_TRANSB, &tb, sizeof tb);
    if (!st) /* cuBLASLt's A: ckt's B */
        st = LT.desc_set(c.desc, LT_DESC_A_SCALE_POINTER, &sb, sizeof sb);
    if (!st) st = LT.desc_set(c.desc, LT_DESC_B_SCALE_POINTER, &sa, sizeof sa);
    /* block: DeepSeek-V3's, ckt's B by 128 x 128 blocks and its A by rows of 128 */
    if (!st && !strcmp(scales, "block")) {
        int ma = LT_SCALE_BLK128x128_32F, mb = LT_SCALE_VEC128_32F;
        st = LT.desc_set(c.desc, LT_DESC_A_SCALE_MODE, &ma, sizeof ma);
        if (!st) st = LT.desc_set(c.desc, LT_DESC_B_SCALE_MODE, &mb, sizeof mb);
    }
    if (!st) st = LT.layout_create(&c.la, in, (uint64_t)K, (uint64_t)N, K);
    if (!st) st = LT.layout_create(&c.lb, in, (uint64_t)K, (uint64_t)M, K);
    if (!st) st = LT.layout_create(&c.lc, CUDA_R_16BF, (uint64_t)N, (uint64_t)M, N);
    if (!st) st = LT.pref_create(&pref);
    if (!st) st = LT.pref_set(pref, LT_PREF_MAX_WORKSPACE_BYTES, &wsz, sizeof wsz);
    if (!st) st = LT.heuristic(h->lt, c.desc, c.la, c.lb, c.lc, c.lc, pref, 1, &c.heur, &found);
    if (!st && !found) st = -1;
    float med = 0;
    if (!st)
        st = timed(h, NULL, reps, lt_run, &c, &med, &sync);
    else
        sync = h->ctx_sync();
    if (pref) LT.pref_destroy(pref);
    if (c.lc) LT.layout_destroy(c.lc);
    if (c.lb) LT.layout_destroy(c.lb);
    if (c.la) LT.layout_destroy(c.la);
    if (c.desc) LT.desc_destroy(c.desc);
    if (st || sync) {
        lua_pushnil(L);
        lua_pushfstring(L, "cuBLASLt fp8 GEMM failed: status %d (%s), context %d", st,
                        found ? "matmul" : "no algorithm / setup", sync);
        return 2;
    }
    lua_pushnumber(L, med);
    return 1;
}

static int h_library(lua_State *L)
{
    lua_pushstring(L, ((handle *)luaL_checkudata(L, 1, HANDLE))->libname);
    return 1;
}

int luaopen_ckt_cublas(lua_State *L)
{
    static const luaL_Reg methods[] = {{"gemm", h_gemm},         {"gemm_async", h_gemm_async},
                                       {"gemm_fp8", h_gemm_fp8}, {"library", h_library},
                                       {"__gc", h_gc},           {NULL, NULL}};
    luaL_newmetatable(L, HANDLE);
    luaL_setfuncs(L, methods, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushcfunction(L, l_open);
    lua_setfield(L, -2, "open");
    return 1;
}
