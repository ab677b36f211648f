# GPU tests (label gpu): they need an NVIDIA GPU host (tests/gpu/run_on_gpu_host.sh runs them).
add_executable(gpu_bank_probe ${CMAKE_CURRENT_SOURCE_DIR}/gpu/bank_probe.c)
target_link_libraries(gpu_bank_probe PRIVATE ckt_static)
if(CKT_GPU_TESTS)
  add_test(NAME gpu.bank_probe COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/compare_bank_model.sh $<TARGET_FILE:gpu_bank_probe>)
  set_tests_properties(gpu.bank_probe PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
  # the library GEMM on the GPU: every dtype and major combination element by element against the
  # double reference at 200x136x264 (and cuBLAS against it, where the cuBLAS module loads)
  add_test(NAME gpu.gemm_lib COMMAND ckt-lua ${CMAKE_SOURCE_DIR}/bench/gemm.lua sm_90 ${CMAKE_BINARY_DIR}/gemm_check.json default none)
  set_tests_properties(gpu.gemm_lib PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600 WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    ENVIRONMENT "CKT_BENCH_LIB=${CMAKE_BINARY_DIR}")
endif()
