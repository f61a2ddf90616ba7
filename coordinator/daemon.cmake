# coordinator/daemon.cmake: the coordinator daemon library (sw_coord: the poll loop, the ZAP
# handler, reports off the loop, webhooks). Scheduling and the store come from sched.cmake's
# sw_coordcore, the gate engine from common/gate.cmake, the key files from common/keys.cmake.
# The `splatsweep` executable that runs it is in cli/.
add_library(sw_coord STATIC ${CMAKE_CURRENT_LIST_DIR}/sw_coord.c ${CMAKE_CURRENT_LIST_DIR}/sw_zap.c
            ${CMAKE_CURRENT_LIST_DIR}/sw_reader.c
            ${CMAKE_CURRENT_LIST_DIR}/sw_notify.c)
target_include_directories(sw_coord PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_coord PUBLIC sw_coordcore sw_analysis sw_wire sw_keys sw_util
                      PkgConfig::ZMQ PkgConfig::JANSSON PkgConfig::CURL Threads::Threads)

# `splatsweep watch` (sw_watch.h): renders the status JSON; its own library for the unit test.
add_library(sw_watch STATIC ${CMAKE_CURRENT_LIST_DIR}/sw_watch.c)
target_include_directories(sw_watch PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_watch PUBLIC sw_util PkgConfig::JANSSON m)
