# gs_core: the pipeline's host-side core: Gaussian model, scenes (loader, archives), PNG, PLY and
# the scene generator. No Vulkan here, so every tool and test can link it.
add_library(gs_core STATIC
  ${CMAKE_CURRENT_LIST_DIR}/gs_model.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_scene.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_scene_nerf.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_scene_transforms.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_scene_colmap.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_scene_undistort.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_gen_capture.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_image.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_png.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_ply.c
  ${CMAKE_CURRENT_LIST_DIR}/gs_gen.c)
target_include_directories(gs_core PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(gs_core PUBLIC sw_util PkgConfig::JANSSON PkgConfig::SPNG PkgConfig::ARCHIVE
  PkgConfig::JPEG PkgConfig::EXIF
  Threads::Threads m)
