# Style (label style): the C sources follow .clang-format (tools/format.sh --check, clang-format 14).
# Off until the tree is formatted in one go (tools/format.sh, after the merges); then make the
# option's default ON so that every build registers it.
option(CKT_STYLE_TESTS "Register style.clang_format (needs a tree formatted by tools/format.sh)" OFF)
if(CKT_STYLE_TESTS)
  find_program(CLANG_FORMAT_EXE NAMES clang-format-14)
  if(CLANG_FORMAT_EXE)
    add_test(NAME style.clang_format COMMAND bash ${CMAKE_SOURCE_DIR}/tools/format.sh --check)
    set_tests_properties(style.clang_format PROPERTIES LABELS style ENVIRONMENT "CLANG_FORMAT=${CLANG_FORMAT_EXE}")
  else()
    message(WARNING "clang-format-14 not found: style.clang_format is not registered")
  endif()
endif()
