# shaders/train.cmake: the training kernels (loss, SSIM, rasterize/projection backward, Adam),
# compiled and embedded as the library gs_train_shaders (see cmake/shaders.cmake).
include(${CMAKE_SOURCE_DIR}/cmake/shaders.cmake)
gs_embed_shaders(TARGET gs_train_shaders
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/loss_l1.comp
    ${CMAKE_CURRENT_LIST_DIR}/ssim_h.comp
    ${CMAKE_CURRENT_LIST_DIR}/loss_ssim.comp
    ${CMAKE_CURRENT_LIST_DIR}/ssim_bwd_h.comp
    ${CMAKE_CURRENT_LIST_DIR}/ssim_bwd_v.comp
    ${CMAKE_CURRENT_LIST_DIR}/rasterize_bwd.comp
    ${CMAKE_CURRENT_LIST_DIR}/rasterize_bwd_cas.comp
    ${CMAKE_CURRENT_LIST_DIR}/rasterize_bwd_det.comp
    ${CMAKE_CURRENT_LIST_DIR}/rasterize_bwd_splat.comp
    ${CMAKE_CURRENT_LIST_DIR}/rasterize_bwd_splat_cas.comp
    ${CMAKE_CURRENT_LIST_DIR}/rasterize_bwd_splat_det.comp
    ${CMAKE_CURRENT_LIST_DIR}/grad2d_resolve.comp
    ${CMAKE_CURRENT_LIST_DIR}/project_bwd.comp
    ${CMAKE_CURRENT_LIST_DIR}/project_bwd_adam.comp
    ${CMAKE_CURRENT_LIST_DIR}/adam.comp
    ${CMAKE_CURRENT_LIST_DIR}/densify_gather.comp
  INCLUDES ${CMAKE_CURRENT_LIST_DIR})
