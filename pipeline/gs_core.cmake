# gs_core: the pipeline's host-side core: Gaussian model, scenes (loader, archives), PNG, PLY and
# the scene generator. No Vulkan here, so every tool and test can link it.
set(_gs_core_srcs)
foreach(_s gs_model gs_scene gs_scene_nerf gs_scene_transforms gs_scene_colmap gs_scene_undistort gs_gen_capture
    gs_image gs_png gs_ply gs_gen)
  # Only sources that exist: the tree is shared while modules land one by one.
  if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/${_s}.c)
    list(APPEND _gs_core_srcs ${CMAKE_CURRENT_LIST_DIR}/${_s}.c)
  endif()
endforeach()
add_library(gs_core STATIC ${_gs_core_srcs})
target_include_directories(gs_core PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(gs_core PUBLIC sw_util PkgConfig::JANSSON PkgConfig::SPNG PkgConfig::ARCHIVE
  PkgConfig::JPEG PkgConfig::EXIF
  Threads::Threads m)
