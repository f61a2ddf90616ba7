# Trainer tests: host side (config, result.json + schema, densification, and a short real training
# on a generated scene) and the GPU backward kernels against the C reference (lavapipe in CI).
if(SW_BUILD_PIPELINE)
  sw_add_check_test(test_train SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_train.c
    LIBS gs_train gs_core TIMEOUT 600 LABELS vulkan)
  target_compile_definitions(test_train PRIVATE SW_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    SW_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
  # The longest unit test: started first, beside it_flood (tests/daemon.cmake).
  set_tests_properties(test_train PROPERTIES COST 900)
  sw_add_check_test(test_gpu_bwd SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_gpu_bwd.c
    ${CMAKE_CURRENT_LIST_DIR}/unit/test_ref_scene.c
    LIBS gs_train gs_ref gs_core m TIMEOUT 300 LABELS vulkan)
endif()
