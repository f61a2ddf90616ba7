# common/yaml.cmake: sw_yaml, the project's YAML reader (libyaml's event parser, a tree built under
# limits, FILE:LINE:COL errors): the sweep spec loader (sw_spec, in sw_wire) and the trainer's
# config file (gs_config).
add_library(sw_yaml STATIC ${CMAKE_CURRENT_LIST_DIR}/sw_yaml.c)
target_include_directories(sw_yaml PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sw_yaml PUBLIC sw_util PkgConfig::YAML)
