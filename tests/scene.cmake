# Tests of the pipeline core owned by "scene": PNG, PLY, model, scene loader, generator (gs_core).
# The real Lego training split is looked for beside the repository (../shared/datasets, as CI
# has it); the tests that need it print a notice and skip when it is absent.
if(SW_BUILD_PIPELINE)
  set(_gs_fixtures ${CMAKE_CURRENT_LIST_DIR}/fixtures/pipeline)
  get_filename_component(_gs_lego ${CMAKE_SOURCE_DIR}/../shared/datasets/nerf_synthetic_lego ABSOLUTE)
  foreach(_t test_png test_ply test_scene test_scene_formats test_gen test_model)
    set(_libs gs_core)
    if(_t STREQUAL "test_scene")
      list(APPEND _libs gs_ref gs_metrics) # the Lego render check
    endif()
    sw_add_check_test(${_t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/${_t}.c LIBS ${_libs}
      TIMEOUT 120)
    target_compile_definitions(${_t} PRIVATE GS_FIXTURES_DIR="${_gs_fixtures}"
      GS_LEGO_DIR="${_gs_lego}")
  endforeach()

  # `splat-train render` end to end through its entry point; needs the GPU forward (gs_vk), the
  # C reference (gs_ref) and the metrics.
  sw_add_check_test(test_render SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_render.c
    ${CMAKE_SOURCE_DIR}/pipeline/gs_cmd_render.c LIBS gs_core gs_vk gs_ref gs_metrics TIMEOUT 180
    LABELS vulkan)
  target_include_directories(test_render PRIVATE ${CMAKE_SOURCE_DIR}/pipeline)
  target_compile_definitions(test_render PRIVATE GS_FIXTURES_DIR="${_gs_fixtures}"
    GS_LEGO_DIR="${_gs_lego}" GS_SPLAT_TRAIN="$<TARGET_FILE:splat-train>")
  add_dependencies(test_render splat-train)
endif()

# Scene formats end to end through `splat-train` (lavapipe in CI): the same generated scene as
# NeRF-synthetic (pinhole) and as COLMAP binary, COLMAP text and transforms.json (off-centre
# principal point, radial distortion) trains to the same held-out PSNR within 0.3 dB; broken
# scenes (malformed COLMAP files, a FIFO, a /dev/zero symlink, missing frames) exit 2 naming the
# file.
if(SW_BUILD_PIPELINE)
  add_test(NAME test_scene_formats_psnr COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/scene/formats_psnr.sh
           ${CMAKE_BINARY_DIR}/bin)
  set_tests_properties(test_scene_formats_psnr PROPERTIES TIMEOUT 600 LABELS "scene;vulkan")
  add_test(NAME test_scene_bad_input COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/scene/bad_input.sh
           ${CMAKE_BINARY_DIR}/bin)
  set_tests_properties(test_scene_bad_input PROPERTIES TIMEOUT 300 LABELS "scene;vulkan")
endif()
