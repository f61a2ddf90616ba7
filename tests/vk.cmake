# GPU tests (gs_vk): the radix sort and the forward pass against the C reference, on the default
# Vulkan device (lavapipe in CI).
if(SW_BUILD_PIPELINE)
  sw_add_check_test(test_gpu_sort SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_gpu_sort.c
    LIBS gs_vk TIMEOUT 300 LABELS vulkan)
  sw_add_check_test(test_gpu_fwd SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_gpu_fwd.c
    ${CMAKE_CURRENT_LIST_DIR}/unit/test_ref_scene.c
    LIBS gs_vk gs_ref TIMEOUT 300 LABELS vulkan)
endif()
