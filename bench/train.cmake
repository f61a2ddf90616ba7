# bench/train.cmake: iter_bench, the training-iteration benchmark of issue 4 (see iter_bench.c;
# usage in docs/trainer.md). A smoke run on a tiny workload is registered as a test so that the
# benchmark cannot rot; the real figures come from the H200 (device tool).
if(TARGET gs_train)
  add_executable(iter_bench ${CMAKE_CURRENT_LIST_DIR}/iter_bench.c)
  target_link_libraries(iter_bench PRIVATE gs_train)
  add_test(NAME iter_bench_smoke
    COMMAND iter_bench --n 300 --size 48 --focal 67 --warmup 2 --iters 3)
  set_tests_properties(iter_bench_smoke PROPERTIES TIMEOUT 120)
  add_test(NAME iter_bench_smoke_splat
    COMMAND iter_bench --n 300 --size 48 --focal 67 --warmup 2 --iters 3 --splat-bwd)
  set_tests_properties(iter_bench_smoke_splat PROPERTIES TIMEOUT 120)
endif()
