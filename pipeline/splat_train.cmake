# splat-train: the trainer executable. splat_train.c dispatches to one gs_cmd_<name>.c per
# subcommand; render scores with gs_metrics and can render with the C reference (gs_ref).
add_executable(splat-train
  ${CMAKE_CURRENT_LIST_DIR}/splat_train.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_cmd_train.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_cmd_config.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_cmd_scene.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_cmd_render.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_cmd_devices.c)
target_include_directories(splat-train PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(splat-train PRIVATE gs_train gs_config gs_vk gs_core gs_metrics gs_ref sw_util)
