# read/read.cmake: the read side, library sw_read: everything that answers from the store alone
# (docs/architecture.md): reports (sw_report.h), Pareto data (sw_pareto.h), audits (sw_audit.h),
# the machines' noise memory (sw_noise.h), the one HTML page frame (sw_html.h), the live
# dashboard (sw_dash.h) and its HTTP server (sw_http.h), the artifact files and downloads
# (sw_artifact_files.h), and the daemon's report thread (sw_reader.h). sw_watch renders
# `splatsweep watch` from the status JSON.
if(NOT TARGET PkgConfig::MHD)
  message(FATAL_ERROR "libmicrohttpd not found: install libmicrohttpd-dev (the HTTP dashboard, "
                      "read/sw_http.c, needs it)")
endif()

# The charting library is embedded in the executables at build time (sw_html.h): Chart.js
# 3.9.1 (MIT licence) from Debian 12's libjs-chart.js 3.9.1+~0.2.1-2, pinned by its sha256, so
# a report made anywhere carries its charts. SW_CHARTJS_FILE names another copy of the same
# file (same sha256) where /usr/share/javascript is not the place.
# Cache entries, so tests/embed.cmake reads the same pin.
set(SW_CHARTJS_VERSION 3.9.1 CACHE INTERNAL "the embedded Chart.js")
set(SW_CHARTJS_SHA256 fbc45926e6b46845a0f905552a0e0b1331049bff1115ecf94dbe0904d895e710
    CACHE INTERNAL "the embedded Chart.js's sha256")
set(SW_CHARTJS_FILE /usr/share/javascript/chart.js/chart.min.js CACHE FILEPATH
    "Chart.js ${SW_CHARTJS_VERSION} (chart.min.js) embedded in the executables")
if(NOT EXISTS ${SW_CHARTJS_FILE})
  message(FATAL_ERROR "${SW_CHARTJS_FILE} not found: install libjs-chart.js (Chart.js "
                      "${SW_CHARTJS_VERSION}; scripts/install-deps.sh) or set SW_CHARTJS_FILE")
endif()

set(SW_HTML_ASSETS)
sw_embed(SW_HTML_ASSETS sw_asset_chartjs ${SW_CHARTJS_FILE} ${SW_CHARTJS_SHA256}
         "Chart.js v${SW_CHARTJS_VERSION}")
sw_embed(SW_HTML_ASSETS sw_asset_charts ${CMAKE_CURRENT_LIST_DIR}/web/sw_charts.js)

# The dashboard's page logic (read/web/dashboard.js), embedded at build time.
sw_embed(SW_HTML_ASSETS sw_asset_dashboard ${CMAKE_CURRENT_LIST_DIR}/web/dashboard.js)

add_library(sw_read STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sw_report.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_pareto.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_audit.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_noise.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_html.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_dash.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_http.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_artifact_files.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_reader.c
  ${SW_HTML_ASSETS})
target_include_directories(sw_read PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(sw_read PRIVATE SW_CHARTJS_VERSION="${SW_CHARTJS_VERSION}")
target_link_libraries(sw_read PUBLIC sw_coordcore sw_gate sw_wire sw_util PkgConfig::JANSSON
                      PkgConfig::MHD PkgConfig::SQLITE Threads::Threads m)

# `splatsweep watch` (sw_watch.h): renders the status JSON; its own library for the unit test.
add_library(sw_watch STATIC ${CMAKE_CURRENT_LIST_DIR}/sw_watch.c)
target_include_directories(sw_watch PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_watch PUBLIC sw_util PkgConfig::JANSSON m)
