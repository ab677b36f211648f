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
