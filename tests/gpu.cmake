# GPU tests (label gpu): they need an NVIDIA GPU host (tests/gpu/run_on_gpu_host.sh runs them).
add_executable(gpu_bank_probe ${CMAKE_CURRENT_SOURCE_DIR}/gpu/bank_probe.c)
target_link_libraries(gpu_bank_probe PRIVATE ckt_static)
if(CKT_GPU_TESTS)
  add_test(NAME gpu.bank_probe COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/compare_bank_model.sh $<TARGET_FILE:gpu_bank_probe>)
  set_tests_properties(gpu.bank_probe PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
