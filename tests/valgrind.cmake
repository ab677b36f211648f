# The C tests under valgrind's memcheck (label valgrind): no invalid accesses, no leaks.
find_program(VALGRIND_EXE valgrind)
if(VALGRIND_EXE AND NOT CKT_SANITIZE AND CMOCKA_LIBRARY AND CMOCKA_INCLUDE_DIR)
  set(CKT_VALGRIND ${VALGRIND_EXE} --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible
      --show-leak-kinds=definite,indirect,possible --track-origins=yes --quiet
      --suppressions=${CMAKE_CURRENT_SOURCE_DIR}/valgrind.supp)
  foreach(src ${CKT_UNIT_TESTS})
    get_filename_component(name ${src} NAME_WE)
    add_test(NAME valgrind.${name} COMMAND ${CKT_VALGRIND} $<TARGET_FILE:${name}>)
    set_tests_properties(valgrind.${name} PROPERTIES LABELS valgrind TIMEOUT 900
                         ENVIRONMENT "CKT_TEST_TIME_SCALE=20")
  endforeach()
  foreach(name ${CKT_FUZZ_REPLAYS}) # fuzz.cmake sorts before valgrind.cmake in the glob
    add_test(NAME valgrind.fuzz_replay_${name} COMMAND ${CKT_VALGRIND} $<TARGET_FILE:fuzz_replay_${name}>
      ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regressions/${name})
    set_tests_properties(valgrind.fuzz_replay_${name} PROPERTIES LABELS valgrind TIMEOUT 900)
  endforeach()
  add_test(NAME valgrind.test_embed COMMAND ${CKT_VALGRIND} $<TARGET_FILE:test_embed>)
  add_test(NAME valgrind.embed_example COMMAND ${CKT_VALGRIND} $<TARGET_FILE:ckt-embed-example>)
  set_tests_properties(valgrind.test_embed valgrind.embed_example PROPERTIES LABELS valgrind TIMEOUT 900 ENVIRONMENT "CKT_HOSTILE_RUNS=40")
endif()
