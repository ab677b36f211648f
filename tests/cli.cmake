# ckt-lua command-line behaviour (label cli) and the REPL driven through tmux.
add_test(NAME cli.ckt_lua COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/cli_test.sh $<TARGET_FILE:ckt-lua>)
set_tests_properties(cli.ckt_lua PROPERTIES LABELS cli)
add_test(NAME cli.repl_tmux COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/repl_tmux.sh $<TARGET_FILE:ckt-lua>)
set_tests_properties(cli.repl_tmux PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 120)
