# sw_util: errors, logging, clocks, sha256, file helpers, small JSON getters (sw_json.h),
# the flock-based host lock (the workers'
# measurement lock, the coordinator's one-per-database lock), the result check. Every other
# library links it.
# The result check is generated from the published schema (docs/result.schema.json) by
# common/schema_to_c.py, so the C checks exactly what the docs promise.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(SW_RESULT_CHECK_C ${CMAKE_BINARY_DIR}/gen/sw_result_check.c)
add_custom_command(
  OUTPUT ${SW_RESULT_CHECK_C}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/gen
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/schema_to_c.py
          ${PROJECT_SOURCE_DIR}/docs/result.schema.json ${SW_RESULT_CHECK_C} sw_result_check
          sw_result.h
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/schema_to_c.py ${PROJECT_SOURCE_DIR}/docs/result.schema.json
  COMMENT "Generating the result check from docs/result.schema.json")
add_library(sw_util STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sw_err.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_log.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_clock.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sha256.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_fs.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_hostlock.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_json.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_result.c
  ${SW_RESULT_CHECK_C})
target_include_directories(sw_util PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_util PUBLIC PkgConfig::SODIUM PkgConfig::JANSSON Threads::Threads m)
