# Documentation hygiene (label docs): documents are named by what they are, never by file number.
add_test(NAME docs.no_file_citations COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/docs/no_file_citations.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(docs.no_file_citations PROPERTIES LABELS docs)
