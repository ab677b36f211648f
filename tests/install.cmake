# Install into a temporary prefix, then build examples/embed.c against it through pkg-config
# and through find_package(ckt), and run both (label install).
find_program(PKG_CONFIG_EXE pkg-config)
if(PKG_CONFIG_EXE AND NOT CKT_SANITIZE)
  add_test(NAME install.consumers COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/install_test.sh
    ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR} ${CMAKE_C_COMPILER})
  set_tests_properties(install.consumers PROPERTIES LABELS install TIMEOUT 600 RUN_SERIAL TRUE)
endif()
