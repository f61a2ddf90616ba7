# fwd_bench: GPU forward pass time per frame at 100k / 400k / 1M Gaussians, 800x800 (gs_vk).
if(SW_BUILD_PIPELINE)
  add_executable(fwd_bench ${CMAKE_CURRENT_LIST_DIR}/fwd_bench.c)
  target_link_libraries(fwd_bench PRIVATE gs_vk sw_gate sw_util m)
endif()
