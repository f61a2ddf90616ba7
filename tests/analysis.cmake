# tests/analysis.cmake: unit tests of the Pareto data, the audits and the HTTP dashboard.
sw_add_check_test(test_pareto SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_pareto.c
                  LIBS sw_analysis sw_coordcore)
sw_add_check_test(test_audit SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_audit.c
                  LIBS sw_analysis sw_coordcore)
sw_add_check_test(test_http SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_http.c
                  LIBS sw_analysis sw_coordcore PkgConfig::CURL)
