# sw_util: errors, logging, clocks, sha256, file helpers. Every other library links it.
add_library(sw_util STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sw_err.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_log.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_clock.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sha256.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_fs.c)
target_include_directories(sw_util PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_util PUBLIC PkgConfig::SODIUM PkgConfig::JANSSON Threads::Threads m)
