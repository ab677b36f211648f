# libFuzzer targets (clang; -DCKT_FUZZ=ON). Each target gets a short run as a ctest (label fuzz);
# long runs: build/fuzz_<name> -max_total_time=3600 tests/fuzz/corpus/<name>
set(CKT_FUZZ_TARGETS layout_parse layout_algebra distribution lds code_object runtime cache kernel)

# In every build (any compiler): replay the kept corpus and the crash regressions of each target
# (tests/fuzz/regressions/<name>/, which must exist: replay_main.c fails on a missing path) through
# a plain main(), label unit; valgrind.cmake reuses them. Exit status 0 AND a non-zero count.
set(CKT_FUZZ_REPLAYS "")
foreach(name ${CKT_FUZZ_TARGETS})
  add_executable(fuzz_replay_${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_${name}.c ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/replay_main.c)
  target_link_libraries(fuzz_replay_${name} PRIVATE ckt_static)
  ckt_add_expect_test(NAME unit.fuzz_replay_${name} EXPECT "replayed [1-9][0-9]* inputs" COMMAND fuzz_replay_${name}
    ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regressions/${name})
  set_tests_properties(unit.fuzz_replay_${name} PROPERTIES LABELS unit)
  list(APPEND CKT_FUZZ_REPLAYS ${name})
endforeach()

if(CKT_FUZZ)
  set(CKT_FUZZ_SECONDS 25 CACHE STRING "seconds per fuzz target in the test suite")
  foreach(name ${CKT_FUZZ_TARGETS})
    add_executable(fuzz_${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_${name}.c ${CKT_ENGINE_SRC})
    add_dependencies(fuzz_${name} ckt_engine) # generates the embedded preludes first
    target_include_directories(fuzz_${name} PRIVATE ${CMAKE_SOURCE_DIR}/engine/include ${CMAKE_SOURCE_DIR}/engine/src)
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_${name} PRIVATE ${CKT_SYSLIBS})
    file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz-corpus/${name})
    add_test(NAME fuzz.${name} COMMAND fuzz_${name} -max_total_time=${CKT_FUZZ_SECONDS} -rss_limit_mb=2048
      -print_final_stats=1 ${CMAKE_BINARY_DIR}/fuzz-corpus/${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name})
    set_tests_properties(fuzz.${name} PROPERTIES LABELS fuzz TIMEOUT 600)
  endforeach()
endif()
