# Hostile scripts in a sandboxed state with tight caps (label embed): each is a regression for a
# way an untrusted script got past the sandbox. tests/hostile/api_fuzz.lua runs from embed.cmake.
add_executable(run_hostile ${CMAKE_CURRENT_SOURCE_DIR}/hostile/run_hostile.c)
target_include_directories(run_hostile PRIVATE ${CMAKE_SOURCE_DIR}/bindings/lua)
target_link_libraries(run_hostile PRIVATE ckt_lua)
foreach(name sandbox_native_code sandbox_array_memory)
  add_test(NAME embed.hostile_${name} COMMAND run_hostile ${CMAKE_CURRENT_SOURCE_DIR}/hostile/${name}.lua)
  set_tests_properties(embed.hostile_${name} PROPERTIES LABELS embed TIMEOUT 120 PASS_REGULAR_EXPRESSION "hostile scripts survived: 1")
endforeach()
