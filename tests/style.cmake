# Style (label style): the C sources follow .clang-format (tools/format.sh --check, clang-format 14).
# The tree was formatted in one go on 2026-11-25; format before committing (tools/format.sh).
option(CKT_STYLE_TESTS "Register style.clang_format (the tree is formatted by tools/format.sh)" ON)
if(CKT_STYLE_TESTS)
  find_program(CLANG_FORMAT_EXE NAMES clang-format-14)
  if(CLANG_FORMAT_EXE)
    add_test(NAME style.clang_format COMMAND bash ${CMAKE_SOURCE_DIR}/tools/format.sh --check)
    set_tests_properties(style.clang_format PROPERTIES LABELS style ENVIRONMENT "CLANG_FORMAT=${CLANG_FORMAT_EXE}")
  else()
    message(WARNING "clang-format-14 not found: style.clang_format is not registered")
  endif()
endif()
