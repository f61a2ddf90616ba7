# bench/train.cmake: iter_bench, the training-iteration benchmark of issue 4 (see iter_bench.c;
# usage in docs/trainer.md). A smoke run on a tiny workload is registered as a test so that the
# benchmark cannot rot; the real figures come from the H200 (device tool).
if(SW_BUILD_PIPELINE)
  add_executable(iter_bench ${CMAKE_CURRENT_LIST_DIR}/iter_bench.c)
  target_link_libraries(iter_bench PRIVATE gs_train sw_gate)
  # The default backward is the trainer's auto (lavapipe: pixel, with a note).
  # Its command line: --help, and bad values named with what the option takes (exit 2), before
  # any device is opened.
  add_test(NAME iter_bench_cli
    COMMAND sh -ec "b=$<TARGET_FILE:iter_bench>; $b --help | grep -q '^usage: iter_bench'
      bad() { exp=$1; shift; if $b \"$@\" >/dev/null 2>e.txt; then echo \"accepted: $*\"; exit 1; else rc=$?; fi
              [ $rc -eq 2 ] || { echo \"$*: exit $rc\"; exit 1; }
              grep -qF -- \"$exp\" e.txt || { echo \"$*: \"; cat e.txt; exit 1; }; }
      bad \"unknown option '--bogus'\" --bogus
      bad \"--iters takes a whole number from 1 to 1000000, not '10x'\" --iters 10x
      bad \"--n takes splat counts separated by commas, not '300,,5'\" --n 300,,5
      bad \"--n (each count) takes a whole number from 1 to 100000000, not 'k'\" --n 3,k
      bad \"--n takes at most 8 splat counts\" --n 1,2,3,4,5,6,7,8,9
      bad \"--timing takes production or per_kernel, not 'fast'\" --timing fast
      bad \"--focal takes a positive number of pixels, not '-3'\" --focal -3
      bad \"--n needs a value\" --n
      bad \"'fast' is not one of branch|select|lean|dot\" --bwd-step fast
      bad \"'fast' is not one of branch|select|group|group8\" --fwd-step fast
      bad \"'sparse' is not one of rows|dense_first\" --fwd-order sparse
      bad \"'early' is not one of direct|prefetch\" --fwd-stage early
      bad \"--stats-bucket takes an even number of splats, not 3\" --stats-bucket 3
      bad \"--stats-bucket takes a whole number from 2 to 64, not '128'\" --stats-bucket 128
      bad \"--ply and --scene go together\" --ply x
      echo ok")
  set_tests_properties(iter_bench_cli PROPERTIES TIMEOUT 60)
  add_test(NAME iter_bench_smoke
    COMMAND iter_bench --n 300 --size 48 --focal 67 --warmup 2 --iters 3)
  set_tests_properties(iter_bench_smoke PROPERTIES TIMEOUT 120 LABELS vulkan)
  # The per-splat backward, with --json: the three per-iteration figures must order as they are
  # defined (kernels' busy union <= the GPU span of the iteration <= its wallclock), the median
  # iteration's wallclock must lie inside the three iterations' total, and the kernels' shares
  # must add up to 1. With one iteration in flight (the default is two, as the trainer's): then
  # every iteration's wallclock holds its whole span; with two, the first timed iteration may
  # start on the GPU before the clock does, which three iterations do not average away.
  add_test(NAME iter_bench_smoke_splat
    COMMAND sh -ec "$<TARGET_FILE:iter_bench> --n 300 --size 48 --focal 67 --warmup 2 --iters 3 --splat-bwd --json --in-flight 1 >splat.json
      cat splat.json
      python3 -c \"import json,sys; r=json.load(open('splat.json')); b,s,w,m=r['gpu_busy_ms_per_iter'],r['gpu_span_ms_per_iter'],r['ms_per_iter'],r['ms_per_iter_median']; sh=sum(k['share'] for k in r['kernels']); sys.exit(0 if 0<b<=s*1.0001 and s<=w and 0<m<=3*w*1.0001 and abs(sh-1)<1e-3 else 'busy %g span %g wall %g median %g shares %g' % (b,s,w,m,sh))\"")
  set_tests_properties(iter_bench_smoke_splat PROPERTIES TIMEOUT 120 LABELS vulkan)
  # Two iterations in flight (the default) train what one does: in deterministic mode every
  # frame has the same pairs, so their sums are equal. The arena keeps the size the 300 splats
  # gave it (4,096 pairs) into the 3,000's run, whose first frame (no warm-up) makes about 4,550,
  # so the path that waits for both, grows the arena and submits both again runs too (retries: 2
  # with two in flight, 1 with one).
  add_test(NAME iter_bench_in_flight
    COMMAND sh -ec "for f in 1 2; do $<TARGET_FILE:iter_bench> --n 300,3000 --size 48 --focal 67 --warmup 0 --iters 6 --splat-bwd --deterministic --json --in-flight $f >f$f.json; cat f$f.json; done
      python3 -c \"import json,sys; a,b=(json.loads(open('f%d.json' % f).read().splitlines()[-1]) for f in (1,2)); ok=a['in_flight']==1 and b['in_flight']==2 and a['pairs_per_iter']==b['pairs_per_iter']>0 and a['retries']==1 and b['retries']==2 and b['gpu_busy_ms_per_iter']<=b['gpu_span_ms_per_iter']*1.0001; sys.exit(0 if ok else 'in flight 1: %s / 2: %s' % (a, b))\"")
  set_tests_properties(iter_bench_in_flight PROPERTIES TIMEOUT 180 LABELS vulkan)
  # project_adam fused: one stage in place of project_bwd and adam, timed under its own name.
  add_test(NAME iter_bench_smoke_fused
    COMMAND sh -ec "$<TARGET_FILE:iter_bench> --n 300 --size 48 --focal 67 --warmup 2 --iters 3 --project-adam fused >fused.txt
      cat fused.txt
      grep -q '^  project_adam .* ms/iter' fused.txt
      ! grep -q '^  adam ' fused.txt")
  set_tests_properties(iter_bench_smoke_fused PROPERTIES TIMEOUT 120 LABELS vulkan)
  # The replayed workload: a tiny training writes a checkpoint PLY (checkpoint_ply), which
  # iter_bench replays through the scene's training views, with either backward (the per-splat
  # one with --run-stats, whose line must be printed; and the pixel one with --stats-bucket 32,
  # which counts runs of 32 and of 16 whatever the device's subgroup size).
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
      grep -q 'run stats (last frame' o.txt
      grep -q 'tile stats (last frame): [1-9][0-9]* of [0-9]* tiles with pairs' o.txt
      grep -q 'fwd step group, fwd cull off, fwd stage prefetch, fwd order dense_first' o.txt
      $<TARGET_FILE:iter_bench> --ply r/checkpoint-20.ply --scene s --warmup 1 --iters 3 --rasterize-bwd pixel --run-stats --stats-bucket 32 >b.txt
      cat b.txt
      grep -q 'run stats (last frame, .* bucket 32).*runs of 16, two to a subgroup' b.txt")
  set_tests_properties(iter_bench_replay_smoke PROPERTIES TIMEOUT 300 LABELS vulkan)
endif()
