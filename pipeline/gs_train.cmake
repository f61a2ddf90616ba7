# gs_train: the trainer (GPU loss/backward/Adam/densify, the iteration loop, result.json) on the
# device layer and forward pass (gs_vk), the host core (gs_core), its configuration (gs_config),
# the evaluation metrics (gs_metrics) and the training kernels (gs_train_shaders, shaders/).
add_library(gs_train STATIC
  ${CMAKE_CURRENT_LIST_DIR}/gs_result.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_train.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_train_densify.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_train_diag.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_train_gpu.c)
target_include_directories(gs_train PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_SOURCE_DIR}/shaders)
target_link_libraries(gs_train PUBLIC gs_config gs_vk gs_core gs_metrics gs_train_shaders sw_util
  PkgConfig::JANSSON m)
target_compile_definitions(gs_train PRIVATE GS_TRAINER_VERSION="${PROJECT_VERSION}")
