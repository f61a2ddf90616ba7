# tests/wire.cmake: unit tests of the wire codec and the sweep spec loader (module "wire").
sw_add_check_test(test_codec SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_codec.c LIBS sw_wire)
sw_add_check_test(test_spec SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_spec.c LIBS sw_wire)
target_compile_definitions(test_spec PRIVATE
  SW_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  SW_FIXTURES_DIR="${CMAKE_CURRENT_LIST_DIR}/fixtures/specs")
