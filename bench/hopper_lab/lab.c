/* The Hopper lab: times and traces the sm_90a GEMM sources that variants.py writes (the library's
 * generated source and hand edits of it), outside ckt, with the driver API and NVRTC.
 *
 *   lab FILE.cu ...     (bench/hopper_lab/run_on_gpu_host.sh builds and runs it)
 *
 * Each file: compiled by NVRTC for sm_90a (the options ckt uses), launched on one tile's worth of
 * blocks with K = 65536 (one block, or a cluster of two: the per-slice time of a lone pipeline)
 * and at 8192^3 (the whole GPU); the 8192^3 output compared element by element with the first
 * file's; clock64 traces read back when the source declares ckt_trace / ckt_ptrace (variants.py).
 * A name containing "cluster" launches clusters of 2 with B's box half as tall; "persistent" a
 * grid of 132 blocks. Inputs: random f16 in +-[0.5, 1) (A) and +-[0.25, 0.5) (B).
 * LAB_SIZES="M,N,K;M,N,K" (at most 4; default 8192,8192,8192) times the whole GPU at those sizes
 * instead, each output compared with the first file's at the same size.
 * LAB_ARCH=sm_90: the files are the mma.sync GEMM (the sm_90 default: 128 x 128 x 32 tiles, 128
 * threads, no tensor maps; sync_variants.py writes its variants), compiled for sm_90, the lone
 * pipeline one 128 x 128 tile. */
#include <cuda.h>
#include <math.h>
#include <nvrtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_) {                                                                                  \
            const char *s_;                                                                        \
            cuGetErrorString(r_, &s_);                                                             \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_);                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { BIG = 8192, KT = 65536, TRACE = 2048, PTRACE = 4096 };

static int sync_path; /* LAB_ARCH=sm_90: the mma.sync GEMM */

typedef struct {
    CUfunction f;
    int cluster, persistent;
    unsigned lds;
} variant;

static char *slurp(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (!f) {
        perror(p);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(n + 1);
    if (fread(b, 1, n, f) != (size_t)n) exit(1);
    b[n] = 0;
    fclose(f);
    return b;
}

static CUmodule load(const char *path, unsigned *lds)
{
    char *src = slurp(path);
    const char *at = strstr(src, "unsigned char ckt_lds[]; /* ");
    *lds = at ? (unsigned)strtoul(at + strlen("unsigned char ckt_lds[]; /* "), NULL, 10) : 0;
    nvrtcProgram p;
    nvrtcCreateProgram(&p, src, "gemm", 0, NULL, NULL);
    const char *opts[] = {sync_path ? "-arch=sm_90" : "-arch=sm_90a", "--std=c++17",
                          "-default-device"};
    if (nvrtcCompileProgram(p, 3, opts)) {
        size_t n;
        nvrtcGetProgramLogSize(p, &n);
        char *l = malloc(n);
        nvrtcGetProgramLog(p, l);
        fprintf(stderr, "%s: %s\n", path, l);
        exit(1);
    }
    size_t n;
    nvrtcGetCUBINSize(p, &n);
    char *c = malloc(n);
    nvrtcGetCUBIN(p, c);
    CUmodule m;
    CK(cuModuleLoadData(&m, c));
    free(src);
    free(c);
    return m;
}

/* the library's tensor map for a K-major operand of `rows` rows: boxes of 64 x box_rows, 128B
 * swizzle */
static void encode(CUtensorMap *t, CUdeviceptr g, uint64_t rows, uint64_t k, uint32_t box_rows)
{
    uint64_t dim[2] = {k, rows}, stride[1] = {k * 2};
    uint32_t box[2] = {64, box_rows}, es[2] = {1, 1};
    CK(cuTensorMapEncodeTiled(t, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)g, dim, stride, box,
                              es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
}

/* C's map for the bulk tensor stores: 64 x 64 boxes of the row-major M x N tile, 128B swizzle */
static void encode_c(CUtensorMap *t, CUdeviceptr g, uint64_t rows, uint64_t n)
{
    uint64_t dim[2] = {n, rows}, stride[1] = {n * 2};
    uint32_t box[2] = {64, 64}, es[2] = {1, 1};
    CK(cuTensorMapEncodeTiled(t, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)g, dim, stride, box,
                              es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
}

static double half(unsigned short h)
{
    int e = (h >> 10) & 31, m = h & 0x3ff;
    double v = e ? (1024 + m) * ldexp(1, e - 25) : m * ldexp(1, -24);
    return h >> 15 ? -v : v;
}

/* ms per launch, the mean of reps after 20 warm-up launches */
static float run(const variant *v, int M, int N, int K, int reps, CUdeviceptr A, CUdeviceptr B,
                 CUdeviceptr C)
{
    static CUtensorMap ta __attribute__((aligned(64))), tb __attribute__((aligned(64))),
        tc __attribute__((aligned(64)));
    void *args[] = {&A, &B, &C, &M, &N, &K, &ta, &tb, &tc};
    unsigned grid = ((M + 127) / 128) * ((N + (sync_path ? 127 : 255)) / (sync_path ? 128 : 256));
    if (!sync_path) {
        encode(&ta, A, M, K, 128);
        encode(&tb, B, N, K, v->cluster ? 128 : 256);
        encode_c(&tc, C, M, N);
    }
    if (v->cluster) grid += grid & 1; /* a cluster's second block past the last tile stores nothing */
    if (v->persistent && grid > 132) grid = 132;
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at.value.clusterDim.x = 2, at.value.clusterDim.y = 1, at.value.clusterDim.z = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = grid, cfg.gridDimY = 1, cfg.gridDimZ = 1;
    cfg.blockDimX = sync_path ? 128 : 288, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.sharedMemBytes = v->lds, cfg.attrs = &at, cfg.numAttrs = v->cluster ? 1 : 0;
    CUevent e0, e1;
    cuEventCreate(&e0, 0);
    cuEventCreate(&e1, 0);
    for (int w = 0; w < 20; w++) CK(cuLaunchKernelEx(&cfg, v->f, args, NULL)); /* clocks up */
    CK(cuCtxSynchronize());
    cuEventRecord(e0, 0);
    for (int i = 0; i < reps; i++) CK(cuLaunchKernelEx(&cfg, v->f, args, NULL));
    cuEventRecord(e1, 0);
    CK(cuEventSynchronize(e1));
    float ms;
    cuEventElapsedTime(&ms, e0, e1);
    return ms / reps;
}

static unsigned long long *global(CUmodule m, const char *name)
{
    CUdeviceptr d;
    size_t n;
    if (cuModuleGetGlobal(&d, &n, m, name) != CUDA_SUCCESS) return NULL;
    unsigned long long *h = malloc(n);
    CK(cuMemcpyDtoH(h, d, n));
    return h;
}

/* ckt_trace (the lone pipeline): averages over slices 100..899 */
static void report_trace(const unsigned long long *h)
{
    const unsigned long long *P = h, *Cw = h + TRACE, *R0 = h + 2 * TRACE, *P0 = h + 3 * TRACE,
                             *R1 = h + 4 * TRACE, *P2 = h + 5 * TRACE;
    double wait = 0, issue = 0, ready = 0, slice = 0, react = 0;
    for (int k = 100; k < 900; k++) {
        unsigned long long r = R0[k - 4] > R1[k - 4] ? R0[k - 4] : R1[k - 4];
        wait += (double)P[k] - P0[k], issue += (double)P2[k] - P[k], ready += (double)Cw[k] - P[k];
        slice += (double)Cw[k + 1] - Cw[k], react += (double)P[k] - r;
    }
    printf(
        "    trace (cycles, mean of 800 slices): slice %.0f | producer: waits %.0f, issues %.0f | "
        "copies issued -> consumers past the wait %.0f | last release -> producer past its wait "
        "%.0f\n",
        slice / 800, wait / 800, issue / 800, ready / 800, react / 800);
}

/* ckt_ptrace (persistent, block 0 at 8192^3: 128 slices a tile) */
static void report_ptrace(const unsigned long long *h)
{
    const unsigned long long *P = h, *Cw = h + PTRACE, *E0 = h + 2 * PTRACE, *E1 = h + 3 * PTRACE;
    const int nk = BIG / 64;
    double slice = 0, ep = 0, gap = 0, lead = 0;
    int n = 14;
    for (int t = 0; t < n; t++) {
        int g = t * nk;
        slice += (double)(Cw[g + nk - 1] - Cw[g + 1]) / (nk - 2);
        ep += (double)(E1[t] - E0[t]), gap += (double)(Cw[g + nk] - E1[t]),
            lead += (double)(Cw[g + nk] - P[g + nk]);
    }
    printf("    persistent trace (cycles, mean of %d tiles): slice %.0f | epilogue %.0f | epilogue "
           "end -> next "
           "tile's first slice %.0f | the producer's lead then %.0f\n",
           n, slice / n, ep / n, gap / n, lead / n);
}

int main(int argc, char **argv)
{
    const char *arch = getenv("LAB_ARCH");
    sync_path = arch && !strcmp(arch, "sm_90");
    CK(cuInit(0));
    CUdevice d;
    CK(cuDeviceGet(&d, 0));
    CUcontext ctx;
    CK(cuDevicePrimaryCtxRetain(&ctx, d));
    CK(cuCtxSetCurrent(ctx));
    char name[256];
    cuDeviceGetName(name, sizeof name, d);
    printf("device: %s\n", name);
    int sz[4][3] = {{BIG, BIG, BIG}}, nsz = 1;
    const char *env = getenv("LAB_SIZES");
    if (env) {
        nsz = 0;
        for (const char *q = env; *q && nsz < 4;) {
            if (sscanf(q, "%d,%d,%d", &sz[nsz][0], &sz[nsz][1], &sz[nsz][2]) != 3) break;
            nsz++;
            q = strchr(q, ';');
            if (!q) break;
            q++;
        }
    }
    size_t elems = (size_t)256 * KT, celems = 0;
    for (int i = 0; i < nsz; i++) {
        size_t a = (size_t)sz[i][0] * sz[i][2], b = (size_t)sz[i][1] * sz[i][2],
               c = (size_t)sz[i][0] * sz[i][1];
        if (a > elems) elems = a;
        if (b > elems) elems = b;
        if (c > celems) celems = c;
    }
    CUdeviceptr A, B, C;
    CK(cuMemAlloc(&A, elems * 2));
    CK(cuMemAlloc(&B, elems * 2));
    CK(cuMemAlloc(&C, celems * 2));
    unsigned short *h_a = malloc(elems * 2), *h_b = malloc(elems * 2), *ref[4] = {0},
                   *got = malloc(celems * 2);
    unsigned x = 12345;
    for (int which = 0; which < 2; which++) {
        unsigned short *h = which ? h_b : h_a;
        for (size_t i = 0; i < elems; i++) {
            x = x * 1664525u + 1013904223u;
            h[i] = (unsigned short)((which ? 0x3400 : 0x3800) + ((x >> 16) & 0x3ff)) |
                   (unsigned short)((x >> 31) << 15);
        }
        CK(cuMemcpyHtoD(which ? B : A, h, elems * 2));
    }
    for (int a = 1; a < argc; a++) {
        variant v = {0};
        CUmodule m = load(argv[a], &v.lds);
        v.cluster = strstr(argv[a], "cluster") != NULL;
        v.persistent = strstr(argv[a], "persistent") != NULL;
        CK(cuModuleGetFunction(&v.f, m, "gemm_f16_kk"));
        CK(cuFuncSetAttribute(v.f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)v.lds));
        int regs;
        cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, v.f);
        float lone = run(&v, v.cluster ? 256 : 128, sync_path ? 128 : 256, KT, 5, A, B, C);
        unsigned long long *tr = global(m, "ckt_trace");
        printf("%-24s %3d regs | lone pipeline %.3f us a slice\n", argv[a], regs,
               lone * 1000 / (KT / (sync_path ? 32 : 64)));
        unsigned long long *ptr = NULL;
        for (int i = 0; i < nsz; i++) {
            int M = sz[i][0], N = sz[i][1], K = sz[i][2];
            float whole = run(&v, M, N, K, 10, A, B, C);
            if (!ptr) ptr = global(m, "ckt_ptrace");
            size_t n = (size_t)M * N;
            CK(cuMemcpyDtoH(got, C, n * 2));
            long diff = 0, bad = 0;
            for (int j = 0; j < 64; j++) { /* spot checks against a double reference */
                unsigned r = (unsigned)(j * 2654435761u) % (unsigned)M,
                         c = (unsigned)(j * 40503u + 7) % (unsigned)N;
                double acc = 0;
                for (int k = 0; k < K; k++)
                    acc += half(h_a[(size_t)r * K + k]) * half(h_b[(size_t)c * K + k]);
                bad += fabs(half(got[(size_t)r * N + c]) - acc) > 1e-2 * fabs(acc) + 1e-2;
            }
            if (bad) printf("    %ld of 64 spot checks against the reference FAILED\n", bad);
            if (!ref[i])
                ref[i] = got, got = malloc(celems * 2);
            else
                for (size_t j = 0; j < n; j++) diff += ref[i][j] != got[j];
            printf("    %dx%dx%d %.3f ms = %.1f TFLOP/s | %ld elements differ from %s\n", M, N, K,
                   whole, 2.0 * M * N * K / whole / 1e9, diff, argv[1]);
        }
        if (tr) report_trace(tr);
        if (ptr) report_ptrace(ptr);
        free(tr);
        free(ptr);
        CK(cuModuleUnload(m));
    }
    return 0;
}
