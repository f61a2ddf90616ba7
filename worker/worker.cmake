# worker/: the worker daemon's library (session, runners, sampler, fingerprint, scene
# preparation, spool). The `splatsweep` executable (cli/cli.cmake) links it.
add_library(sw_worker STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sw_sampler.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_gpu.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_fingerprint.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_runner.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_spool.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_scene_prep.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_upload.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_worker.c)
target_include_directories(sw_worker PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_worker PUBLIC sw_wire sw_keys sw_util PkgConfig::JANSSON PkgConfig::ZMQ Threads::Threads
                      PRIVATE PkgConfig::CURL PkgConfig::ARCHIVE ${CMAKE_DL_LIBS})
