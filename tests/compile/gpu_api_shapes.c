/* The CUDA driver's and HIP's entry points in the shapes engine/src/runtime_gpu.h's table gives
 * them, checked against each library's own header: the runtime binds them by dlopen under one
 * table (one implementation of streams, events, graphs, copies and launches for both), so a
 * shape that differs would be a silent ABI mismatch. Compiled once per header present
 * (-DSHAPES_CUDA with cuda.h, -DSHAPES_HIP with hip/hip_runtime_api.h), syntax only (nothing
 * is linked): a wrong assumption is a compile error (tests/compile.cmake). */
#include <stddef.h>
#include <stdio.h>

#if defined(SHAPES_CUDA)
#include <cuda.h>
#define LIB "CUDA driver (cuda.h)"
typedef CUresult res;
typedef CUstream stream;
typedef CUevent event;
typedef CUfunction function;
typedef CUgraph graph;
typedef CUgraphExec graph_exec;
typedef CUdeviceptr dptr;
#define NOT_READY CUDA_ERROR_NOT_READY
#define NON_BLOCKING CU_STREAM_NON_BLOCKING
#define THREAD_LOCAL CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
#define F(cu, hip) cu
/* device addresses: a 64-bit integer here, a pointer in the table (one register in the ABI) */
_Static_assert(sizeof(CUdeviceptr) == sizeof(void *), "CUdeviceptr is pointer-sized");
#elif defined(SHAPES_HIP)
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#define LIB "HIP (hip/hip_runtime_api.h)"
typedef hipError_t res;
typedef hipStream_t stream;
typedef hipEvent_t event;
typedef hipFunction_t function;
typedef hipGraph_t graph;
typedef hipGraphExec_t graph_exec;
typedef hipDeviceptr_t dptr;
#define NOT_READY hipErrorNotReady
#define NON_BLOCKING hipStreamNonBlocking
#define THREAD_LOCAL hipStreamCaptureModeThreadLocal
#define F(cu, hip) hip
_Static_assert(sizeof(hipDeviceptr_t) == sizeof(void *), "hipDeviceptr_t is pointer-sized");
#else
#error "define SHAPES_CUDA or SHAPES_HIP"
#endif

/* results are int-sized, 0 is success and 600 "not ready" in both (runtime_gpu.c reads them so) */
_Static_assert(sizeof(res) == sizeof(int), "results are int-sized");
_Static_assert(NOT_READY == 600, "not ready is 600");
_Static_assert(NON_BLOCKING == 1, "the non-blocking stream flag is 1");
_Static_assert(THREAD_LOCAL == 1, "the thread-local capture mode is 1");
_Static_assert(sizeof(stream) == sizeof(void *) && sizeof(event) == sizeof(void *) &&
                   sizeof(function) == sizeof(void *) && sizeof(graph) == sizeof(void *) &&
                   sizeof(graph_exec) == sizeof(void *),
               "handles are pointers");

/* each entry point as runtime_gpu.h's ckt_gpu_api declares it (with the library's own types) */
static res (*const launch)(function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, stream, void **,
                           void **) = F(cuLaunchKernel, hipModuleLaunchKernel);
static res (*const h2d)(dptr, F(const void *, void *), size_t, stream) = F(cuMemcpyHtoDAsync,
                                                                           hipMemcpyHtoDAsync);
static res (*const d2h)(void *, dptr, size_t, stream) = F(cuMemcpyDtoHAsync, hipMemcpyDtoHAsync);
static res (*const d2d)(dptr, dptr, size_t, stream) = F(cuMemcpyDtoDAsync, hipMemcpyDtoDAsync);
static res (*const memset8)(dptr, unsigned char, size_t, stream) = F(cuMemsetD8Async,
                                                                     hipMemsetD8Async);
static res (*const stream_create)(stream *, unsigned) = F(cuStreamCreate, hipStreamCreateWithFlags);
static res (*const stream_destroy)(stream) = F(cuStreamDestroy, hipStreamDestroy);
static res (*const stream_sync)(stream) = F(cuStreamSynchronize, hipStreamSynchronize);
static res (*const stream_wait)(stream, event, unsigned) = F(cuStreamWaitEvent, hipStreamWaitEvent);
static res (*const event_create)(event *, unsigned) = F(cuEventCreate, hipEventCreateWithFlags);
static res (*const event_record)(event, stream) = F(cuEventRecord, hipEventRecord);
static res (*const event_sync)(event) = F(cuEventSynchronize, hipEventSynchronize);
static res (*const event_query)(event) = F(cuEventQuery, hipEventQuery);
static res (*const event_elapsed)(float *, event, event) = F(cuEventElapsedTime,
                                                             hipEventElapsedTime);
static res (*const event_destroy)(event) = F(cuEventDestroy, hipEventDestroy);
static res (*const capture_end)(stream, graph *) = F(cuStreamEndCapture, hipStreamEndCapture);
static res (*const graph_instantiate)(graph_exec *, graph,
                                      unsigned long long) = F(cuGraphInstantiateWithFlags,
                                                              hipGraphInstantiateWithFlags);
static res (*const graph_launch)(graph_exec, stream) = F(cuGraphLaunch, hipGraphLaunch);
static res (*const graph_exec_destroy)(graph_exec) = F(cuGraphExecDestroy, hipGraphExecDestroy);
static res (*const graph_destroy)(graph) = F(cuGraphDestroy, hipGraphDestroy);
#if defined(SHAPES_CUDA)
static res (*const capture_begin)(stream, CUstreamCaptureMode) = cuStreamBeginCapture;
#else
static res (*const capture_begin)(stream, hipStreamCaptureMode) = hipStreamBeginCapture;
#endif
_Static_assert(sizeof(F(CUstreamCaptureMode, hipStreamCaptureMode)) == sizeof(int),
               "the capture mode is passed as an int");

int main(void)
{
    const void *all[] = {launch,
                         h2d,
                         d2h,
                         d2d,
                         memset8,
                         stream_create,
                         stream_destroy,
                         stream_sync,
                         stream_wait,
                         event_create,
                         event_record,
                         event_sync,
                         event_query,
                         event_elapsed,
                         event_destroy,
                         capture_begin,
                         capture_end,
                         graph_instantiate,
                         graph_launch,
                         graph_exec_destroy,
                         graph_destroy};
    printf("%s: %zu entry points in the shapes of runtime_gpu.h's table; results int-sized, not "
           "ready = 600, non-blocking = 1, thread-local capture = 1\n",
           LIB, sizeof all / sizeof *all);
    return 0;
}
