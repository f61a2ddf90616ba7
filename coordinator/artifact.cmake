# coordinator/artifact.cmake: library sw_artifact, the daemon's artifact store (sw_artifact.h):
# the upload server and the retention rule. Its files' places and the downloads are the read
# side's (read/sw_artifact_files.h).
add_library(sw_artifact STATIC ${CMAKE_CURRENT_LIST_DIR}/sw_artifact.c)
target_include_directories(sw_artifact PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_artifact PUBLIC sw_read sw_coordcore sw_wire sw_util PkgConfig::JANSSON
                      PkgConfig::MHD PkgConfig::SQLITE Threads::Threads)
