# coordinator/analysis.cmake: library sw_analysis: Pareto data (sw_pareto.h), reproducibility
# audits (sw_audit.h) and the read-only HTTP dashboard (sw_http.h), all reading only the store.
add_library(sw_analysis STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sw_pareto.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_audit.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_http.c)
target_include_directories(sw_analysis PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_analysis PUBLIC sw_coordcore sw_util PkgConfig::JANSSON PkgConfig::MHD
                      PkgConfig::SQLITE Threads::Threads m)

# The `splatsweep` executable (cli.cmake, included after this file) dispatches `pareto`, `audit`
# and `--http` to this library. Deferred to the end of the directory because target_link_libraries
# needs the executable to exist already; this keeps the link line with the library it serves.
cmake_language(DEFER CALL target_link_libraries splatsweep PRIVATE sw_analysis)
