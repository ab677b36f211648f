# A test that must exit with status 0 AND print what it promises. ctest's PASS_REGULAR_EXPRESSION
# alone ignores the exit status (a program that prints its "match" line and then fails, or whose
# leak checker fails it at exit under ASan, would pass), so those tests run through this file:
#
#   included (tests/CMakeLists.txt):  ckt_add_expect_test(NAME name EXPECT regex COMMAND target|prog args...)
#   run by ctest:                      cmake -DCKT_EXPECT=regex -P tests/expect.cmake -- prog args...
#
# The command's stdout and stderr are shown as they come and kept; the test fails, saying why, when
# the command does not start, exits non-zero or by a signal, or its output does not match regex.
if(CMAKE_SCRIPT_MODE_FILE)
  set(cmd "")
  set(after FALSE)
  math(EXPR last "${CMAKE_ARGC} - 1")
  foreach(i RANGE ${last})
    if(after)
      string(REPLACE ";" "\\;" arg "${CMAKE_ARGV${i}}") # keep an argument's ';' inside it
      list(APPEND cmd "${arg}")
    elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
      set(after TRUE)
    endif()
  endforeach()
  if(NOT cmd)
    message(FATAL_ERROR "expect.cmake: no command after --")
  endif()
  if(NOT DEFINED CKT_EXPECT OR CKT_EXPECT STREQUAL "")
    message(FATAL_ERROR "expect.cmake: -DCKT_EXPECT=<regex> is required")
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out
    ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE)
  if(NOT "${rc}" STREQUAL "0")
    list(JOIN cmd " " shown)
    message(FATAL_ERROR "FAILED: exit status ${rc} (want 0): ${shown}")
  endif()
  if(NOT "${out}" MATCHES "${CKT_EXPECT}")
    message(FATAL_ERROR "FAILED: exit status 0, but the output does not match '${CKT_EXPECT}'")
  endif()
  return()
endif()

include_guard(GLOBAL)
set(CKT_EXPECT_SCRIPT ${CMAKE_CURRENT_LIST_FILE})
# ckt_add_expect_test(NAME name EXPECT regex COMMAND exe args...): exe may be a target of this
# project (its file is used); set the test's other properties with set_tests_properties as usual.
function(ckt_add_expect_test)
  cmake_parse_arguments(PARSE_ARGV 0 T "" "NAME;EXPECT" "COMMAND")
  if(NOT T_NAME OR NOT T_EXPECT OR NOT T_COMMAND)
    message(FATAL_ERROR "ckt_add_expect_test: NAME, EXPECT and COMMAND are required")
  endif()
  list(POP_FRONT T_COMMAND exe)
  if(TARGET ${exe})
    set(exe $<TARGET_FILE:${exe}>)
  endif()
  add_test(NAME ${T_NAME} COMMAND ${CMAKE_COMMAND} "-DCKT_EXPECT=${T_EXPECT}" -P ${CKT_EXPECT_SCRIPT} -- ${exe} ${T_COMMAND})
endfunction()
