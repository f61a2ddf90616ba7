# tests/gpu_sampler.cmake: the GPU sampler (worker/sw_gpu.c) against a fake NVML. The fake is
# built once per process-list ABI the sampler reads (tests/fake_nvml.c says which) and loaded
# through SW_NVML_LIB, so these tests need no NVIDIA driver.
foreach(_v fake_nvml fake_nvml_cc fake_nvml_v1)
  add_library(${_v} MODULE ${CMAKE_CURRENT_LIST_DIR}/fake_nvml.c)
  set_target_properties(${_v} PROPERTIES PREFIX "lib" C_VISIBILITY_PRESET hidden)
endforeach()
target_compile_definitions(fake_nvml_cc PRIVATE FAKE_CC=1)
target_compile_definitions(fake_nvml_v1 PRIVATE FAKE_V1=1)

# The sampler needs nothing else of sw_worker (only sw_err from sw_util and dlopen), so the test
# compiles it on its own, as sw_worker does, and builds without the rest of the worker.
sw_add_check_test(test_gpu_sampler
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_gpu_sampler.c ${CMAKE_SOURCE_DIR}/worker/sw_gpu.c
  LIBS sw_util ${CMAKE_DL_LIBS})
target_include_directories(test_gpu_sampler PRIVATE ${CMAKE_SOURCE_DIR}/worker)
target_compile_definitions(test_gpu_sampler PRIVATE FAKE_NVML="$<TARGET_FILE:fake_nvml>"
  FAKE_NVML_CC="$<TARGET_FILE:fake_nvml_cc>" FAKE_NVML_V1="$<TARGET_FILE:fake_nvml_v1>")
add_dependencies(test_gpu_sampler fake_nvml fake_nvml_cc fake_nvml_v1)
