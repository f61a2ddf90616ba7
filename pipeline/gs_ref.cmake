# gs_ref: the C reference of the training pipeline (forward, loss, backward, Adam), the oracle of
# the GPU tests; its SSIM takes the window and constants of gs_metrics. gs_ref_tmpl.c is included
# by gs_ref.c, not compiled alone.
add_library(gs_ref STATIC ${CMAKE_CURRENT_LIST_DIR}/gs_ref.c)
target_include_directories(gs_ref PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(gs_ref PUBLIC gs_metrics sw_util m)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/gs_ref.c PROPERTIES
  OBJECT_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/gs_ref_tmpl.c)
