# tests/wire.cmake: unit tests of the wire codec and the sweep spec loader (module "wire").
sw_add_check_test(test_codec SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_codec.c LIBS sw_wire)
sw_add_check_test(test_spec SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_spec.c LIBS sw_wire)
target_compile_definitions(test_spec PRIVATE
  SW_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  SW_FIXTURES_DIR="${CMAKE_CURRENT_LIST_DIR}/fixtures/specs")
# The shipped sweeps against the builtin trainer's own key table (library gs_config, which needs
# none of the GPU pipeline's libraries).
if(SW_BUILD_PIPELINE)
  sw_add_check_test(test_sweep_configs
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_sweep_configs.c LIBS sw_wire gs_config)
  target_compile_definitions(test_sweep_configs PRIVATE SW_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  # The trainer's config file loader on hostile and odd files (no GPU).
  sw_add_check_test(test_config SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_config.c LIBS gs_config)
endif()
