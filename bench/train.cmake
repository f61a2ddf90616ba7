# bench/train.cmake: iter_bench, the training-iteration benchmark of issue 4 (see iter_bench.c;
# usage in docs/trainer.md). A smoke run on a tiny workload is registered as a test so that the
# benchmark cannot rot; the real figures come from the H200 (device tool).
if(SW_BUILD_PIPELINE)
  add_executable(iter_bench ${CMAKE_CURRENT_LIST_DIR}/iter_bench.c)
  target_link_libraries(iter_bench PRIVATE gs_train sw_gate)
  # The default backward is the trainer's auto (lavapipe: pixel, with a note).
  add_test(NAME iter_bench_smoke
    COMMAND iter_bench --n 300 --size 48 --focal 67 --warmup 2 --iters 3)
  set_tests_properties(iter_bench_smoke PROPERTIES TIMEOUT 120 LABELS vulkan)
  # The per-splat backward, with --json: the three per-iteration figures must order as they are
  # defined (kernels' busy union <= the GPU span of the iteration <= its wallclock), the median
  # iteration's wallclock must lie inside the three iterations' total, and the kernels' shares
  # must add up to 1.
  add_test(NAME iter_bench_smoke_splat
    COMMAND sh -ec "$<TARGET_FILE:iter_bench> --n 300 --size 48 --focal 67 --warmup 2 --iters 3 --splat-bwd --json >splat.json
      cat splat.json
      python3 -c \"import json,sys; r=json.load(open('splat.json')); b,s,w,m=r['gpu_busy_ms_per_iter'],r['gpu_span_ms_per_iter'],r['ms_per_iter'],r['ms_per_iter_median']; sh=sum(k['share'] for k in r['kernels']); sys.exit(0 if 0<b<=s*1.0001 and s<=w and 0<m<=3*w*1.0001 and abs(sh-1)<1e-3 else 'busy %g span %g wall %g median %g shares %g' % (b,s,w,m,sh))\"")
  set_tests_properties(iter_bench_smoke_splat PROPERTIES TIMEOUT 120 LABELS vulkan)
  # project_adam fused: one stage in place of project_bwd and adam, timed under its own name.
  add_test(NAME iter_bench_smoke_fused
    COMMAND sh -ec "$<TARGET_FILE:iter_bench> --n 300 --size 48 --focal 67 --warmup 2 --iters 3 --project-adam fused >fused.txt
      cat fused.txt
      grep -q '^  project_adam .* ms/iter' fused.txt
      ! grep -q '^  adam ' fused.txt")
  set_tests_properties(iter_bench_smoke_fused PROPERTIES TIMEOUT 120 LABELS vulkan)
  # The replayed workload: a tiny training writes a checkpoint PLY (checkpoint_ply), which
  # iter_bench replays through the scene's training views, with either backward (the per-splat
  # one with --run-stats, whose line must be printed).
  set(_replay ${CMAKE_CURRENT_BINARY_DIR}/replay_smoke)
  file(MAKE_DIRECTORY ${_replay})
  add_test(NAME iter_bench_replay_smoke WORKING_DIRECTORY ${_replay}
    COMMAND sh -ec "rm -rf s r
      $<TARGET_FILE:splat-train> scene --kind shapes --out s --train-views 6 --test-views 2 --resolution 48
      $<TARGET_FILE:splat-train> train --scene s --out r --set iterations=20 --set init_points=400 --set checkpoints=20 --set checkpoint_ply=1 --set save_ply=0
      test -s r/checkpoint-20.ply
      $<TARGET_FILE:iter_bench> --ply r/checkpoint-20.ply --scene s --warmup 1 --iters 3 --rasterize-bwd pixel
      $<TARGET_FILE:iter_bench> --ply r/checkpoint-20.ply --scene s --warmup 1 --iters 3 --rasterize-bwd splat --run-stats >o.txt
      cat o.txt
      grep -q 'run stats (last frame' o.txt")
  set_tests_properties(iter_bench_replay_smoke PROPERTIES TIMEOUT 300 LABELS vulkan)
endif()
