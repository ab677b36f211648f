# Embedding API tests (label embed) and the example host program.
add_executable(ckt-embed-example ${CMAKE_SOURCE_DIR}/examples/embed.c)
target_include_directories(ckt-embed-example PRIVATE ${CMAKE_SOURCE_DIR}/bindings)
target_include_directories(ckt-embed-example PRIVATE ${CMAKE_SOURCE_DIR}/bindings/lua)
# examples/embed.c includes <ckt/ckt_lua.h> as an installed program would
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/include/ckt)
configure_file(${CMAKE_SOURCE_DIR}/bindings/lua/ckt_lua.h ${CMAKE_BINARY_DIR}/include/ckt/ckt_lua.h COPYONLY)
target_include_directories(ckt-embed-example PRIVATE ${CMAKE_BINARY_DIR}/include)
target_link_libraries(ckt-embed-example PRIVATE ckt_lua)
# (ckt_add_expect_test, tests/expect.cmake: exit status 0 AND the expected output)
ckt_add_expect_test(NAME embed.example EXPECT "stopped: sandbox: instruction budget.*\nckt [0-9.]+: \\(2,3\\):\\(6,1\\)"
  COMMAND ckt-embed-example)
set_tests_properties(embed.example PROPERTIES LABELS embed)

# examples/embed_kernel.c: a kernel built, compiled and launched with the C API alone (no Lua),
# checked element by element on the CPU; GPU targets compile only (skipped, and said so, only where
# the compiler library is not installed; a compile error exits 1, which fails the test)
add_executable(ckt-embed-kernel ${CMAKE_SOURCE_DIR}/examples/embed_kernel.c)
target_link_libraries(ckt-embed-kernel PRIVATE ckt_static m)
ckt_add_expect_test(NAME embed.kernel_example COMMAND ckt-embed-kernel 37 101
  EXPECT "cpu: 37 x 101, 3737 elements match.*gfx90a: (compiled|SKIPPED).*sm_90: (compiled|SKIPPED)")
set_tests_properties(embed.kernel_example PROPERTIES LABELS embed TIMEOUT 300)
ckt_add_expect_test(NAME embed.kernel_example_one_tile COMMAND ckt-embed-kernel 1 1
  EXPECT "cpu: 1 x 1, 1 elements match.*gfx90a: (compiled|SKIPPED).*sm_90: (compiled|SKIPPED)")
set_tests_properties(embed.kernel_example_one_tile PROPERTIES LABELS embed TIMEOUT 300)

if(CMOCKA_LIBRARY AND CMOCKA_INCLUDE_DIR)
  add_executable(test_embed ${CMAKE_CURRENT_SOURCE_DIR}/embed/test_embed.c)
  target_include_directories(test_embed PRIVATE ${CMAKE_SOURCE_DIR}/bindings/lua ${CMOCKA_INCLUDE_DIR})
  target_link_libraries(test_embed PRIVATE ckt_lua ${CMOCKA_LIBRARY})
  add_test(NAME embed.test_embed COMMAND test_embed)
  set_tests_properties(embed.test_embed PROPERTIES LABELS embed TIMEOUT 300)
  add_executable(test_sandbox_holes ${CMAKE_CURRENT_SOURCE_DIR}/embed/test_sandbox_holes.c)
  target_include_directories(test_sandbox_holes PRIVATE ${CMAKE_SOURCE_DIR}/bindings/lua ${CMOCKA_INCLUDE_DIR})
  target_link_libraries(test_sandbox_holes PRIVATE ckt_lua ${CMOCKA_LIBRARY})
  add_test(NAME embed.sandbox_holes COMMAND test_sandbox_holes)
  set_tests_properties(embed.sandbox_holes PROPERTIES LABELS embed TIMEOUT 120)
  # the limits hold inside C: pattern bombs, string.rep / table.concat, host compiles (killed),
  # NVRTC / hipRTC compiles (abandoned), each under a 0.3-2 s limit (issue 30)
  add_executable(test_sandbox_c_time ${CMAKE_CURRENT_SOURCE_DIR}/embed/test_sandbox_c_time.c)
  target_include_directories(test_sandbox_c_time PRIVATE ${CMAKE_SOURCE_DIR}/bindings/lua ${CMOCKA_INCLUDE_DIR})
  target_link_libraries(test_sandbox_c_time PRIVATE ckt_lua ${CMOCKA_LIBRARY})
  add_test(NAME embed.sandbox_c_time COMMAND test_sandbox_c_time)
  # (under ASan: the compilers' own alternate signal stacks on the compile threads confuse ASan's
  # (use_sigaltstack=0), and libamdhip64 keeps a little per thread (tests/embed/lsan.supp))
  set_tests_properties(embed.sandbox_c_time PROPERTIES LABELS embed TIMEOUT 300 ENVIRONMENT
    "ASAN_OPTIONS=detect_leaks=1:use_sigaltstack=0;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/embed/lsan.supp")
endif()

# The Lua API fuzzer in a sandboxed state (under ASan+UBSan in the sanitizer build) and in ckt-lua.
add_executable(run_sandboxed ${CMAKE_CURRENT_SOURCE_DIR}/embed/run_sandboxed.c)
target_include_directories(run_sandboxed PRIVATE ${CMAKE_SOURCE_DIR}/bindings/lua)
target_link_libraries(run_sandboxed PRIVATE ckt_lua)
ckt_add_expect_test(NAME embed.api_fuzz_sandboxed EXPECT "1 passed, 0 failed"
  COMMAND run_sandboxed ${CMAKE_CURRENT_SOURCE_DIR}/hostile/api_fuzz.lua)
set_tests_properties(embed.api_fuzz_sandboxed PROPERTIES LABELS embed TIMEOUT 900)
add_test(NAME cli.api_fuzz COMMAND ckt-lua ${CMAKE_CURRENT_SOURCE_DIR}/hostile/api_fuzz.lua)
set_tests_properties(cli.api_fuzz PROPERTIES LABELS cli TIMEOUT 900 ENVIRONMENT "CKT_FUZZ_SEED=99;CKT_FUZZ_CALLS=50000")
# seeds that found bugs under ASan/UBSan (a use-after-free in help(), a shift by 63) stay in the suite
foreach(seed 3 4 6 8)
  add_test(NAME cli.api_fuzz_seed${seed} COMMAND ckt-lua ${CMAKE_CURRENT_SOURCE_DIR}/hostile/api_fuzz.lua)
  set_tests_properties(cli.api_fuzz_seed${seed} PROPERTIES LABELS cli TIMEOUT 900 ENVIRONMENT "CKT_FUZZ_SEED=${seed};CKT_FUZZ_CALLS=30000")
endforeach()
