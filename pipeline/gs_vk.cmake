# gs_vk: the Vulkan device layer, the GPU radix sort and the GPU forward pass, with the kernels
# they run embedded as SPIR-V (library gs_shaders, see cmake/shaders.cmake).
include(${CMAKE_SOURCE_DIR}/cmake/shaders.cmake)
set(_gs_vk_shader_srcs)
foreach(_s project_fwd tile_count scan_block scan_add emit_pairs sort_hist sort_scan sort_scatter
    sort_scatter_flat tile_ranges rasterize_fwd rasterize_fwd_bucket bucket_alloc bucket_args
    depth_gather tile_order)
  list(APPEND _gs_vk_shader_srcs ${CMAKE_SOURCE_DIR}/shaders/${_s}.comp)
endforeach()
gs_embed_shaders(TARGET gs_shaders SOURCES ${_gs_vk_shader_srcs}
  INCLUDES ${CMAKE_SOURCE_DIR}/shaders)

add_library(gs_vk STATIC
  ${CMAKE_CURRENT_LIST_DIR}/gs_vk.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_vk_loader.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_sort.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_fwd.c)
target_include_directories(gs_vk PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_SOURCE_DIR}/shaders)
# Vulkan headers only: the loader is opened at run time (gs_vk_loader.c), so that programs linking
# gs_vk start on machines without libvulkan.
target_link_libraries(gs_vk PUBLIC gs_shaders Vulkan::Headers sw_util m ${CMAKE_DL_LIBS}
  Threads::Threads)
