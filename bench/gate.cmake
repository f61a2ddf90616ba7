# gate_mc: Monte Carlo comparison of the lab's fixed gate procedure with the gate engine's
# sequential procedure (bench/README.md). Not a ctest test: run build/bin/gate_mc by hand.
add_executable(gate_mc ${CMAKE_CURRENT_LIST_DIR}/gate_mc.c)
target_link_libraries(gate_mc PRIVATE sw_gate PkgConfig::GSL m)
