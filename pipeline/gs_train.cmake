# gs_train: the trainer (config, GPU loss/backward/Adam/densify, the iteration loop, result.json).
# The pipeline's other libraries (gs_vk, gs_core, gs_ref) come from fragments owned by other
# modules; they are linked by a deferred call so that fragment order does not matter.
file(GLOB _gs_train_srcs CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/gs_config.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_result.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_train*.c)
add_library(gs_train STATIC ${_gs_train_srcs})
target_include_directories(gs_train PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_SOURCE_DIR}/shaders)
target_link_libraries(gs_train PUBLIC sw_util PkgConfig::FYAML PkgConfig::JANSSON m)

function(_gs_train_link_pipeline)
  foreach(_lib gs_vk gs_core gs_ref gs_shaders gs_train_shaders)
    if(TARGET ${_lib})
      target_link_libraries(gs_train PUBLIC ${_lib})
    endif()
  endforeach()
endfunction()
cmake_language(DEFER CALL _gs_train_link_pipeline)
target_compile_definitions(gs_train PRIVATE GS_TRAINER_VERSION="${PROJECT_VERSION}")
