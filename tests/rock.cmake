# `luarocks make` of the rockspec into a local tree, then require "ckt" from a stock lua5.4
# (label rock; a full Release build of its own: a few minutes on 2 cores).
add_test(NAME rock.luarocks_make COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/rock/luarocks_make.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(rock.luarocks_make PROPERTIES LABELS rock SKIP_RETURN_CODE 77 TIMEOUT 900)
