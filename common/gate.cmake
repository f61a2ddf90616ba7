# sw_gate: the gate engine (statistics + verdicts, pure) and its JSON in/out. See common/sw_gate.h.
add_library(sw_gate STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sw_stats.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_gate.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_gate_plan.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_gate_json.c)
target_include_directories(sw_gate PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_gate PUBLIC sw_util PkgConfig::GSL PkgConfig::JANSSON m)
