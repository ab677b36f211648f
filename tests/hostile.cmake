# Hostile scripts in a sandboxed state with tight caps (label embed): each is a regression for a
# way an untrusted script got past the sandbox. tests/hostile/api_fuzz.lua runs from embed.cmake.
add_executable(run_hostile ${CMAKE_CURRENT_SOURCE_DIR}/hostile/run_hostile.c)
target_include_directories(run_hostile PRIVATE ${CMAKE_SOURCE_DIR}/bindings/lua)
target_link_libraries(run_hostile PRIVATE ckt_lua)
foreach(name sandbox_native_code sandbox_array_memory sandbox_launch kernel_many_ops kernel_huge_lds kernel_deep_nesting kernel_huge_windows kernel_memory)
  ckt_add_expect_test(NAME embed.hostile_${name} EXPECT "hostile scripts survived: 1"
    COMMAND run_hostile ${CMAKE_CURRENT_SOURCE_DIR}/hostile/${name}.lua)
  set_tests_properties(embed.hostile_${name} PROPERTIES LABELS embed TIMEOUT 120)
endforeach()
# kernel_memory.lua: a kernel's C memory is charged to the state (bindings/lua/l_builder.c, charge()).
# All kernel-builder hostile scripts in one state, one after another: the host keeps serving.
# (each through ckt_add_expect_test, tests/expect.cmake: exit status 0 AND the "survived" line)
ckt_add_expect_test(NAME embed.hostile_kernel_all EXPECT "hostile scripts survived: 4" COMMAND run_hostile ${CMAKE_CURRENT_SOURCE_DIR}/hostile/kernel_many_ops.lua
  ${CMAKE_CURRENT_SOURCE_DIR}/hostile/kernel_huge_lds.lua ${CMAKE_CURRENT_SOURCE_DIR}/hostile/kernel_deep_nesting.lua
  ${CMAKE_CURRENT_SOURCE_DIR}/hostile/kernel_huge_windows.lua)
set_tests_properties(embed.hostile_kernel_all PROPERTIES LABELS embed TIMEOUT 120)
