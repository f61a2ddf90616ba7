# Daemon fixtures and integration tests: the fake trainer (a test fixture honouring the trainer
# contract) and the drivers in tests/integration/ that start the real executables on loopback.
add_executable(fake_trainer ${CMAKE_CURRENT_LIST_DIR}/fake_trainer.c)
target_link_libraries(fake_trainer PRIVATE sw_util PkgConfig::GSL PkgConfig::JANSSON)

add_executable(frame_poke ${CMAKE_CURRENT_LIST_DIR}/integration/frame_poke.c)
target_link_libraries(frame_poke PRIVATE sw_wire sw_keys sw_util PkgConfig::ZMQ)

# sw_it_add(NAME SCRIPT PORT): an integration test driver; each gets its own loopback ports.
function(sw_it_add name script port)
  add_test(NAME ${name} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/integration/${script}
           ${CMAKE_BINARY_DIR}/bin ${port})
  # RUN_SERIAL: the workers judge every run by its load window with the default limits, as on a
  # real machine, so nothing else may load the machine meanwhile (another test would be the
  # "foreign process" that contaminates the runs, correctly).
  set_tests_properties(${name} PROPERTIES TIMEOUT 180 LABELS integration RUN_SERIAL TRUE)
endfunction()
sw_it_add(it_local_gate local_gate.sh 17710)
sw_it_add(it_fleet_tcp fleet_tcp.sh 17720)
sw_it_add(it_worker_kill worker_kill.sh 17730)
sw_it_add(it_check_spec check_spec.sh 17740)
sw_it_add(it_bad_frames bad_frames.sh 17750)
sw_it_add(it_two_sweeps two_sweeps.sh 17760)
sw_it_add(it_curve curve.sh 17770)
# One run trains a model 30% larger: its pair is rerun on the model-size evidence.
sw_it_add(it_runaway runaway.sh 17980)
# Hello floods and worker churn against a coordinator with its defaults.
sw_it_add(it_flood flood.sh 17880)
# Two rounds of 12,000 raw connections (the second bounded): about 4 minutes on 2 cores. No worker
# and no training in it, so no run is judged by its load window: it need not run alone (what it
# checks, answers and heap in use, does not depend on the machine's load). It may share the
# machine with the unit tests (none of which judges load; the RUN_SERIAL tests still run alone),
# and its COST starts it first, beside test_train, the longest of those: about 4 of CI's 23
# minutes were it_flood alone on one of the two cores. TIMEOUT: the share of the CPU it gets.
set_tests_properties(it_flood PROPERTIES TIMEOUT 600 RUN_SERIAL FALSE COST 1000)
# A report of a large store rendered off the loop; a store locked by another process.
sw_it_add(it_store_faults store_faults.sh 17890)
# 30 coordinator SIGKILLs while results arrive (SW_SOAK_TRIALS for more).
sw_it_add(it_coord_kill coord_kill.sh 17900)
set_tests_properties(it_coord_kill PROPERTIES TIMEOUT 500)
# A worker frozen past its lease while its pair finishes elsewhere, then thawed.
sw_it_add(it_sigstop sigstop.sh 17910)
# Partitions shorter than the liveness window and longer than the lease, in a network namespace.
sw_it_add(it_partition partition.sh 17920)
set_tests_properties(it_partition PROPERTIES SKIP_RETURN_CODE 77)

# Unit tests of the worker's parts (sampler, quiet wait, spool, runner, scene preparation).
sw_add_check_test(test_worker SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_worker.c
                  LIBS sw_worker PkgConfig::ARCHIVE)
target_compile_definitions(test_worker PRIVATE FAKE_TRAINER="$<TARGET_FILE:fake_trainer>")
add_dependencies(test_worker fake_trainer)
sw_it_add(it_cutoff cutoff.sh 17790)
sw_it_add(it_coord_restart coord_restart.sh 17800)
sw_it_add(it_placement placement.sh 17810)
# The builtin runner with the real trainer needs the pipeline (splat-train beside splatsweep).
if(TARGET splat-train)
  sw_it_add(it_builtin builtin.sh 17820)
  # The load window with the real trainer and the default limits: idle runs stay ok, a CPU hog
  # flags its run, which is re-run once; and three local workers on two cores never overlap.
  sw_it_add(it_honest honest.sh 17850)
  sw_it_add(it_three_local three_local.sh 17860)
endif()
sw_it_add(it_cancel cancel.sh 17830)
sw_it_add(it_poison poison.sh 17840)
# Nobody takes over a live worker's session or lease by presenting its id (docs/security.md).
sw_it_add(it_impersonate impersonate.sh 17870)
# The ZAP handler: allow-list, User-Id = the key's file name, fail closed (docs/security.md).
sw_add_check_test(test_zap SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_zap.c LIBS sw_coord)
# Headless Chromium on the live dashboard and the report (charts drawn, no console errors,
# screenshots in BUILD/screenshots), the report made without /usr/share/javascript, the token.
sw_it_add(it_browser browser.sh 17950)
# `splatsweep watch` under a pseudo-terminal and into a file (issue 14, item 4).
sw_it_add(it_watch watch.sh 17960)
# A sweep's webhook reaches a local HTTP server with the verdict (issue 14, item 6).
sw_it_add(it_webhook webhook.sh 17970)
# Artifacts uploaded by the workers, downloaded through the coordinator with matching sha256,
# authenticated, checked and kept by the spec's retention rule (issue 14, item 5).
sw_it_add(it_artifacts artifacts.sh 17930)
