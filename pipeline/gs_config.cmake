# gs_config: the trainer's key table and its resolution (defaults, YAML, --set; gs_config.h). No
# GPU: linked by the trainer, by `splatsweep` (check, submit and local refuse a spec the trainer
# would refuse) and by test_sweep_configs.
add_library(gs_config STATIC ${CMAKE_CURRENT_LIST_DIR}/gs_config.c)
target_include_directories(gs_config PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(gs_config PUBLIC sw_util sw_yaml PkgConfig::YAML PkgConfig::JANSSON m)
