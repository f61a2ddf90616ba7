# gs_metrics: the evaluation metrics (PSNR, SSIM) and the SSIM definition, used by the trainer,
# `splat-train render` and the C reference (gs_ref) alike. No GPU and no reference code.
add_library(gs_metrics STATIC ${CMAKE_CURRENT_LIST_DIR}/gs_metrics.c)
target_include_directories(gs_metrics PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(gs_metrics PUBLIC sw_util m)
