# The coordinator daemon library (sw_coord) and the `splatsweep` executable: daemons, local mode,
# control clients, check / gate eval / keygen. Reports and scheduling come from sched.cmake's
# libraries, the gate engine from common/gate.cmake, the worker from worker/worker.cmake.
add_library(sw_coord STATIC ${CMAKE_CURRENT_LIST_DIR}/sw_coord.c ${CMAKE_CURRENT_LIST_DIR}/sw_zap.c
            ${CMAKE_CURRENT_LIST_DIR}/sw_reader.c
            ${CMAKE_CURRENT_LIST_DIR}/sw_notify.c)
target_include_directories(sw_coord PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_coord PUBLIC sw_coordcore sw_analysis sw_wire sw_worker sw_util
                      PkgConfig::ZMQ PkgConfig::JANSSON PkgConfig::CURL Threads::Threads)

add_executable(splatsweep ${CMAKE_CURRENT_LIST_DIR}/splatsweep.c)
target_link_libraries(splatsweep PRIVATE sw_coord sw_worker sw_coordcore sw_gate
                      sw_wire sw_util PkgConfig::ZMQ)
# The builtin trainer's key table (library gs_config), linked so that `check`, `submit` and
# `local` refuse a spec whose arms or grid points the trainer would refuse (LAB-PRACTICE rule 7),
# before the series.
if(SW_BUILD_PIPELINE)
  target_link_libraries(splatsweep PRIVATE gs_config)
  target_compile_definitions(splatsweep PRIVATE SW_HAVE_TRAINER_KEYS=1)
endif()

# `splatsweep watch` (sw_watch.h): renders the status JSON; its own library for the unit test.
add_library(sw_watch STATIC ${CMAKE_CURRENT_LIST_DIR}/sw_watch.c)
target_include_directories(sw_watch PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_watch PUBLIC sw_util PkgConfig::JANSSON m)
target_link_libraries(splatsweep PRIVATE sw_watch)
