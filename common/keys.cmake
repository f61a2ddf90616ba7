# common/keys.cmake: sw_keys, the CurveZMQ key files (sw_keys.h) read by the coordinator, the
# worker and the control clients alike.
add_library(sw_keys STATIC ${CMAKE_CURRENT_LIST_DIR}/sw_keys.c)
target_include_directories(sw_keys PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_keys PUBLIC sw_util PkgConfig::ZMQ)
