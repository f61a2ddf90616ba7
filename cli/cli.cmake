# cli/cli.cmake: the `splatsweep` executable: splatsweep.c dispatches, one file per command
# family (sw_cmd.h). The libraries below it take option structs, never argv.

# The commands the unit tests call as functions (pareto, audit, and the servers --http and
# --artifacts start beside the daemons), in a library of their own.
add_library(sw_cli STATIC ${CMAKE_CURRENT_LIST_DIR}/sw_cmd_read.c
            ${CMAKE_CURRENT_LIST_DIR}/sw_cmd_serve.c)
target_include_directories(sw_cli PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_cli PUBLIC sw_read sw_artifact sw_coordcore sw_wire sw_util)

add_executable(splatsweep
  ${CMAKE_CURRENT_LIST_DIR}/splatsweep.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_cmd_args.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_cmd_client.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_cmd_control.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_cmd_daemon.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_cmd_local.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_cmd_spec.c)
target_link_libraries(splatsweep PRIVATE sw_cli sw_coord sw_worker sw_read sw_artifact sw_watch
                      sw_coordcore sw_gate sw_wire sw_keys sw_util PkgConfig::ZMQ)
# The builtin trainer's key table (library gs_config), linked so that `check`, `submit` and
# `local` refuse a spec whose arms or grid points the trainer would refuse (LAB-PRACTICE rule 7),
# before the series.
if(SW_BUILD_PIPELINE)
  target_link_libraries(splatsweep PRIVATE gs_config)
  target_compile_definitions(splatsweep PRIVATE SW_HAVE_TRAINER_KEYS=1)
endif()
