# coordinator/sched.cmake: the coordinator core library: the SQLite store, the scheduler (which
# works from sw_wire's loaded spec), the reports and the Pareto data (sw_store.h, sw_sched.h,
# sw_report.h, sw_pareto.h) and the page frame every HTML page shares (sw_html.h). The daemon
# and the CLI link sw_coordcore.

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

add_library(sw_coordcore STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sw_store.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched_submit.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched_gate.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched_mem.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched_status.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_report.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_pareto.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_html.c
  ${SW_HTML_ASSETS})
target_include_directories(sw_coordcore PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(sw_coordcore PRIVATE SW_CHARTJS_VERSION="${SW_CHARTJS_VERSION}")
target_link_libraries(sw_coordcore PUBLIC sw_util sw_wire sw_gate PkgConfig::SQLITE PkgConfig::JANSSON m)
