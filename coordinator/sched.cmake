# coordinator/sched.cmake: the coordinator core library: the SQLite store and the scheduler, which
# works from sw_wire's loaded spec (sw_store.h, sw_sched.h). The daemon (daemon.cmake) and the read
# side (read/read.cmake) link it.
add_library(sw_coordcore STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sw_store.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched_submit.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched_gate.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched_mem.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_sched_status.c)
target_include_directories(sw_coordcore PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_coordcore PUBLIC sw_util sw_wire sw_gate PkgConfig::SQLITE PkgConfig::JANSSON m)
