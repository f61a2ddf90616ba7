# coordinator/daemon.cmake: the coordinator daemon library (sw_coord: the poll loop, the ZAP
# handler, webhooks). Scheduling and the store come from sched.cmake's sw_coordcore, the
# artifact store from artifact.cmake, reports (off the loop, sw_reader) from the read side
# (read/read.cmake), the gate engine from common/gate.cmake, key files from common/keys.cmake.
# The `splatsweep` executable that runs it is in cli/.
add_library(sw_coord STATIC ${CMAKE_CURRENT_LIST_DIR}/sw_coord.c ${CMAKE_CURRENT_LIST_DIR}/sw_zap.c
            ${CMAKE_CURRENT_LIST_DIR}/sw_notify.c)
target_include_directories(sw_coord PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_coord PUBLIC sw_coordcore sw_artifact sw_read sw_watch sw_wire sw_keys
                      sw_util PkgConfig::ZMQ PkgConfig::JANSSON PkgConfig::CURL Threads::Threads)
