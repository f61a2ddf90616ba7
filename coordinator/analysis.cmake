# coordinator/analysis.cmake: library sw_analysis: reproducibility audits (sw_audit.h), the
# machines' noise memory (sw_noise.h) and the read-only HTTP dashboard (sw_http.h), all reading
# only the store (the Pareto data, sw_pareto.h, is in sw_coordcore: the grid reports use it).
if(NOT TARGET PkgConfig::MHD)
  message(FATAL_ERROR "libmicrohttpd not found: install libmicrohttpd-dev (the HTTP dashboard, "
                      "coordinator/sw_http.c, needs it)")
endif()
# The dashboard's page logic (coordinator/web/dashboard.js), embedded at build time.
set(SW_DASH_ASSETS)
sw_embed(SW_DASH_ASSETS sw_asset_dashboard ${CMAKE_CURRENT_LIST_DIR}/web/dashboard.js)
add_library(sw_analysis STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sw_audit.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_http.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_dash.c
  ${SW_DASH_ASSETS}
  ${CMAKE_CURRENT_LIST_DIR}/sw_artifact.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_noise.c)
target_include_directories(sw_analysis PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_analysis PUBLIC sw_coordcore sw_wire sw_util PkgConfig::JANSSON PkgConfig::MHD
                      PkgConfig::SQLITE Threads::Threads m)
# sw_coord (cli.cmake) links it publicly, which gives `splatsweep` its `pareto`, `audit` and `--http`.
