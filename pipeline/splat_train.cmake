# splat-train: the trainer executable. Subcommand sources gs_cmd_*.c are picked up as they land;
# each module's library (gs_core, gs_vk, gs_train) is linked when its fragment defines it.
file(GLOB _gs_cmd_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/gs_cmd_*.c)
add_executable(splat-train ${CMAKE_CURRENT_LIST_DIR}/splat_train.c ${_gs_cmd_srcs})
target_include_directories(splat-train PRIVATE ${CMAKE_CURRENT_LIST_DIR})
foreach(_lib gs_train gs_vk gs_core)
  if(TARGET ${_lib} OR EXISTS ${CMAKE_CURRENT_LIST_DIR}/${_lib}.cmake)
    target_link_libraries(splat-train PRIVATE ${_lib})
  endif()
endforeach()
target_link_libraries(splat-train PRIVATE sw_util)
