# Daemon benchmarks: coord_load (hundreds of simulated workers against the real coordinator).
# bench/coord_soak.sh drives real processes; both are described in bench/README.md.
add_executable(coord_load ${CMAKE_CURRENT_LIST_DIR}/coord_load.c)
target_link_libraries(coord_load PRIVATE sw_wire sw_util PkgConfig::ZMQ PkgConfig::JANSSON)
