# Gate engine tests: statistics against R's golden fixtures, and the engine / `gate eval` on the
# lab's examples. Fixtures live in tests/fixtures/gate (golden.R made them; CI does not need R).
sw_add_check_test(test_gate_stats SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_gate_stats.c LIBS sw_gate)
target_compile_definitions(test_gate_stats PRIVATE SW_GATE_FIXTURES="${CMAKE_CURRENT_LIST_DIR}/fixtures/gate")
sw_add_check_test(test_gate SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_gate.c LIBS sw_gate)
target_compile_definitions(test_gate PRIVATE SW_GATE_FIXTURES="${CMAKE_CURRENT_LIST_DIR}/fixtures/gate")
