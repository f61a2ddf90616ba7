# coordinator/sched.cmake: the coordinator core library: the SQLite store, the scheduler, the
# reports and the Pareto data (sw_store.h, sw_sched.h, sw_report.h, sw_pareto.h) and the page
# frame every HTML page shares (sw_html.h). The daemon and the CLI link sw_coordcore.

# The charting library is embedded in the executables at build time (sw_html.h): Chart.js
# 3.9.1 (MIT licence) from Debian 12's libjs-chart.js 3.9.1+~0.2.1-2, pinned by its sha256, so
# a report made anywhere carries its charts. SW_CHARTJS_FILE names another copy of the same
# file (same sha256) where /usr/share/javascript is not the place.
set(SW_CHARTJS_VERSION 3.9.1)
set(SW_CHARTJS_SHA256 fbc45926e6b46845a0f905552a0e0b1331049bff1115ecf94dbe0904d895e710)
set(SW_CHARTJS_FILE /usr/share/javascript/chart.js/chart.min.js CACHE FILEPATH
    "Chart.js ${SW_CHARTJS_VERSION} (chart.min.js) embedded in the executables")
if(NOT EXISTS ${SW_CHARTJS_FILE})
  message(FATAL_ERROR "${SW_CHARTJS_FILE} not found: install libjs-chart.js (Chart.js "
                      "${SW_CHARTJS_VERSION}; scripts/install-deps.sh) or set SW_CHARTJS_FILE")
endif()

# sw_embed(VAR SYMBOL FILE [SHA256 [TEXT]]): generates gen/SYMBOL.c holding FILE and appends it
# to VAR (cmake/embed_asset.cmake checks the sha256 and the text).
function(sw_embed var symbol file)
  set(sha "${ARGV3}")
  set(text "${ARGV4}")
  set(out ${CMAKE_BINARY_DIR}/gen/${symbol}.c)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/gen
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out} -DSYMBOL=${symbol}
            "-DEXPECT_SHA256=${sha}" "-DEXPECT_TEXT=${text}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_asset.cmake
    DEPENDS ${file} ${PROJECT_SOURCE_DIR}/cmake/embed_asset.cmake
    COMMENT "Embedding ${file}")
  set(${var} ${${var}} ${out} PARENT_SCOPE)
endfunction()
set(SW_HTML_ASSETS)
sw_embed(SW_HTML_ASSETS sw_asset_chartjs ${SW_CHARTJS_FILE} ${SW_CHARTJS_SHA256}
         "Chart.js v${SW_CHARTJS_VERSION}")
sw_embed(SW_HTML_ASSETS sw_asset_charts ${CMAKE_CURRENT_LIST_DIR}/web/sw_charts.js)

add_library(sw_coordcore STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sw_store.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched_submit.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched_gate.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched_status.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_report.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_pareto.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_html.c
  ${SW_HTML_ASSETS})
target_include_directories(sw_coordcore PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(sw_coordcore PRIVATE SW_CHARTJS_VERSION="${SW_CHARTJS_VERSION}")
target_link_libraries(sw_coordcore PUBLIC sw_util sw_gate PkgConfig::SQLITE PkgConfig::JANSSON m)
