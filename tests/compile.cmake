# Compile tests (label `compile`): hipRTC for gfx90a and NVRTC for sm_90, compile-only, no GPU
# needed. Where the compiler library is absent the test prints "SKIPPED: ..." and exits 77,
# which ctest reports as skipped.
add_executable(compile_check ${CMAKE_CURRENT_SOURCE_DIR}/compile/compile_check.c)
target_link_libraries(compile_check PRIVATE ckt_static)
foreach(target gfx90a sm_90)
  add_test(NAME compile.${target}
    COMMAND compile_check ${target} ${CMAKE_BINARY_DIR}/test-cache/compile)
  set_tests_properties(compile.${target} PROPERTIES LABELS compile SKIP_RETURN_CODE 77)
endforeach()

# The parameter sizes read from the cubin NVRTC produces (what every CUDA launch is checked
# against), for sm_80 and sm_90: the records CUDA 13 writes, KPARAM_INFO_V2, no parameters.
add_executable(cubin_params_check ${CMAKE_CURRENT_SOURCE_DIR}/compile/cubin_params_check.c)
target_link_libraries(cubin_params_check PRIVATE ckt_static)
foreach(target sm_80 sm_90)
  add_test(NAME compile.cubin_params_${target} COMMAND cubin_params_check ${target})
  set_tests_properties(compile.cubin_params_${target} PROPERTIES LABELS compile SKIP_RETURN_CODE 77)
endforeach()

# GPU runtime tests (label gpu): compile for the device's own target, every buffer operation,
# a launch over a grid checked element by element, refusals. Skipped (77) without the GPU.
add_executable(runtime_check ${CMAKE_CURRENT_SOURCE_DIR}/compile/runtime_check.c)
target_link_libraries(runtime_check PRIVATE ckt_static)
if(CKT_GPU_TESTS)
  foreach(backend cuda hip)
    add_test(NAME gpu.runtime_${backend} COMMAND runtime_check ${backend})
    set_tests_properties(gpu.runtime_${backend} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
endif()

# The kernel library compiled for each GPU target (compile only): every kernel and dtype, and the
# code-object checks of the transpose (128-bit LDS and global accesses, no spills). 77: skipped.
foreach(target gfx90a sm_90)
  add_test(NAME compile.kernels_${target} COMMAND ckt-lua ${CMAKE_CURRENT_SOURCE_DIR}/compile/kernels_compile.lua ${target})
  set_tests_properties(compile.kernels_${target} PROPERTIES LABELS compile SKIP_RETURN_CODE 77 TIMEOUT 900
    ENVIRONMENT "CKT_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache/kernels")
endforeach()

# The blockwise GEMM compiled for each GPU target (compile only): every matrix instruction the
# target has, no spills or scratch, the instruction in the ISA / source (SASS where cuobjdump is). 77: skipped.
foreach(target gfx90a sm_90)
  add_test(NAME compile.gemm_${target} COMMAND ckt-lua ${CMAKE_CURRENT_SOURCE_DIR}/compile/gemm_compile.lua ${target})
  set_tests_properties(compile.gemm_${target} PROPERTIES LABELS compile SKIP_RETURN_CODE 77 TIMEOUT 900
    ENVIRONMENT "CKT_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache/kernels")
endforeach()

# The library GEMM (kernels/gemm) compile-only for sm_90 (mma.sync with ldmatrix) and sm_90a
# (wgmma with bulk tensor copies and mbarriers, its cp.async and persistent variants), every
# dtype and both majors: NVRTC and ptxas must accept what the CPU target only emulates. A compile
# error fails; only a missing NVRTC library skips (77, reported by ctest as skipped, not passed).
foreach(target sm_90 sm_90a)
  add_test(NAME compile.gemm_library_${target} COMMAND ckt-lua ${CMAKE_CURRENT_SOURCE_DIR}/compile/gemm_library_compile.lua ${target})
  set_tests_properties(compile.gemm_library_${target} PROPERTIES LABELS compile SKIP_RETURN_CODE 77 TIMEOUT 900
    ENVIRONMENT "CKT_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache/kernels")
endforeach()

# The driver entry points runtime_gpu.c binds by dlopen, in the shapes of its table, checked
# against each library's own header where it is installed (HIP: libamdhip64-dev, in CI; CUDA:
# cuda.h of a CUDA toolkit): a compile error when an assumption is wrong. Not registered without
# the header (configure says so).
find_path(CKT_HIP_API_INCLUDE hip/hip_runtime_api.h PATHS /usr/include /opt/rocm/include)
find_path(CKT_CUDA_API_INCLUDE cuda.h PATHS /usr/local/cuda/include NO_DEFAULT_PATH)
foreach(api HIP CUDA)
  if(CKT_${api}_API_INCLUDE)
    add_test(NAME compile.gpu_api_shapes_${api}
      COMMAND ${CMAKE_C_COMPILER} -std=c17 -Wall -Wextra -Werror -fsyntax-only -DSHAPES_${api}
              -I${CKT_${api}_API_INCLUDE} ${CMAKE_CURRENT_SOURCE_DIR}/compile/gpu_api_shapes.c)
    set_tests_properties(compile.gpu_api_shapes_${api} PROPERTIES LABELS compile)
  else()
    message(STATUS "the ${api} header is not installed: compile.gpu_api_shapes_${api} is not registered")
  endif()
endforeach()
