# tests/layout.cmake: the include arrows of docs/architecture.md ("Who may include whom") over the
# source tree, and a tree that breaks them, which the check must refuse.
add_test(NAME layout_check COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/layout_check.sh
                                   ${PROJECT_SOURCE_DIR})
add_test(NAME layout_check_catches COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/layout_check_catches.sh
                                           ${CMAKE_CURRENT_LIST_DIR}/layout_check.sh)
set_tests_properties(layout_check layout_check_catches PROPERTIES LABELS unit)
