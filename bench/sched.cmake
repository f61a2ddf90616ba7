# sched_bench: in-process load benchmark of the scheduler and the SQLite store (bench/README.md).
# Not a ctest test: run build/bin/sched_bench by hand.
add_executable(sched_bench ${CMAKE_CURRENT_LIST_DIR}/sched_bench.c)
target_link_libraries(sched_bench PRIVATE sw_coordcore)
