/* GPU check of the shared-memory bank model (NVIDIA): for a set of per-lane address patterns and
 * access widths, ckt predicts the wavefronts of one warp-wide shared load; this program compiles a
 * probe kernel through ckt's NVRTC path, launches it once per pattern through the CUDA driver API,
 * and prints the predictions. Run it under ncu (tests/gpu/run_on_gpu_host.sh) to compare with
 * l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum for each launch. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/jit.h"
#include "ckt/lds.h"
#include "ckt/target.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef unsigned long long CUdeviceptr;

static struct {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*ctx_create)(CUcontext *, unsigned, CUdevice);
    CUresult (*module_load)(CUmodule *, const void *);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);
    CUresult (*sync)(void);
} cu;

#define CHECK(x) do { CUresult r_ = (x); if (r_) { fprintf(stderr, "%s failed: %d\n", #x, r_); exit(1); } } while (0)

static const char *src =
    "extern \"C\" __global__ void probe32(const int* addr, int* out) {\n"
    "  __shared__ __align__(16) unsigned char smem[32768];\n"
    "  for (int i = threadIdx.x; i < 32768 / 16; i += 32) reinterpret_cast<int4*>(smem)[i] = make_int4(i, i, i, i);\n"
    "  __syncthreads();\n"
    "  int a = addr[threadIdx.x];\n"
    "  int v = a >= 0 ? *reinterpret_cast<const int*>(smem + a) : 0;\n"
    "  out[threadIdx.x] = v;\n"
    "}\n"
    "extern \"C\" __global__ void probe64(const int* addr, int* out) {\n"
    "  __shared__ __align__(16) unsigned char smem[32768];\n"
    "  for (int i = threadIdx.x; i < 32768 / 16; i += 32) reinterpret_cast<int4*>(smem)[i] = make_int4(i, i, i, i);\n"
    "  __syncthreads();\n"
    "  int a = addr[threadIdx.x];\n"
    "  int2 v = a >= 0 ? *reinterpret_cast<const int2*>(smem + a) : make_int2(0, 0);\n"
    "  out[threadIdx.x] = v.x + v.y;\n"
    "}\n"
    "extern \"C\" __global__ void probe128(const int* addr, int* out) {\n"
    "  __shared__ __align__(16) unsigned char smem[32768];\n"
    "  for (int i = threadIdx.x; i < 32768 / 16; i += 32) reinterpret_cast<int4*>(smem)[i] = make_int4(i, i, i, i);\n"
    "  __syncthreads();\n"
    "  int a = addr[threadIdx.x];\n"
    "  int4 v = make_int4(0, 0, 0, 0);\n"
    "  if (a >= 0) v = *reinterpret_cast<const int4*>(smem + a);\n"
    "  out[threadIdx.x] = v.x + v.y + v.z + v.w;\n"
    "}\n";

int main(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) { printf("SKIPPED: no CUDA driver (libcuda.so.1)\n"); return 77; }
    *(void **)&cu.init = dlsym(lib, "cuInit");
    *(void **)&cu.device_get = dlsym(lib, "cuDeviceGet");
    *(void **)&cu.ctx_create = dlsym(lib, "cuCtxCreate_v2");
    *(void **)&cu.module_load = dlsym(lib, "cuModuleLoadData");
    *(void **)&cu.get_function = dlsym(lib, "cuModuleGetFunction");
    *(void **)&cu.mem_alloc = dlsym(lib, "cuMemAlloc_v2");
    *(void **)&cu.htod = dlsym(lib, "cuMemcpyHtoD_v2");
    *(void **)&cu.launch = dlsym(lib, "cuLaunchKernel");
    *(void **)&cu.sync = dlsym(lib, "cuCtxSynchronize");
    CUdevice dev;
    CUcontext ctx;
    CHECK(cu.init(0));
    CHECK(cu.device_get(&dev, 0));
    CHECK(cu.ctx_create(&ctx, 0, dev));
    ckt_error err;
    ckt_binary *bin;
    ckt_compile_request req = {"sm_90", src, "probe32", NULL, 0};
    if (ckt_compile(NULL, &req, 0, &bin, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    size_t n;
    const uint8_t *code = ckt_binary_code(bin, &n);
    CUmodule mod;
    CHECK(cu.module_load(&mod, code));
    CUfunction fn[3];
    CHECK(cu.get_function(&fn[0], mod, "probe32"));
    CHECK(cu.get_function(&fn[1], mod, "probe64"));
    CHECK(cu.get_function(&fn[2], mod, "probe128"));
    CUdeviceptr daddr, dout;
    CHECK(cu.mem_alloc(&daddr, 32 * sizeof(int)));
    CHECK(cu.mem_alloc(&dout, 32 * sizeof(int)));
    ckt_target t;
    ckt_target_get("sm_90", &t, &err);
    static const char *instr[3] = {"lds32", "lds64", "lds128"};
    static const int width[3] = {4, 8, 16};
    const char *names[] = {"stride-1", "stride-2", "stride-32-words", "broadcast", "mfma-vertical", "row-of-8", "random", "half-inactive",
                           "8-distinct-x4", "16-distinct-x2"};
    srand(7);
    int idx = 0;
    for (int w = 0; w < 3; w++)
        for (int p = 0; p < 10; p++) {
            int a32[32];
            int64_t a64[64];
            for (int l = 0; l < 32; l++) {
                int64_t a;
                switch (p) {
                case 0: a = (int64_t)l * width[w]; break;
                case 1: a = (int64_t)l * 2 * width[w]; break;
                case 2: a = (int64_t)l * 128; break;
                case 3: a = 64; break;
                case 4: a = (l % 16) * 128 + (l / 16) * 16; break; /* 64 halves per row */
                case 5: a = (l / 8) * 144 + (l % 8) * width[w]; break;
                case 6: a = (int64_t)(rand() % (32768 / width[w])) * width[w]; break;
                case 7: a = (l % 2) ? -1 : (int64_t)l * 64; break;
                /* the two patterns that tell the phase-pair rule from NVIDIA's thread-pair packing rule */
                case 8: a = (int64_t)(l % 8) * 16; break;
                default: a = (int64_t)(l % 16) * 8; break;
                }
                if (a >= 0) a -= a % width[w]; /* inactive lanes stay inactive */
                a32[l] = (int)a;
                a64[l] = a;
            }
            ckt_lds_result r;
            if (ckt_lds_analyze(&t, ckt_target_instr(&t, instr[w]), a64, 32, &r, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
            CHECK(cu.htod(daddr, a32, sizeof a32));
            void *args[] = {&daddr, &dout};
            CHECK(cu.launch(fn[w], 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
            CHECK(cu.sync());
            printf("PRED %d %s %s %d %d\n", idx++, instr[w], names[p], r.cycles, r.ideal_cycles);
        }
    ckt_binary_free(bin);
    return 0;
}
