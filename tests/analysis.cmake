# tests/analysis.cmake: unit tests of the Pareto data, the audits and the HTTP dashboard.
sw_add_check_test(test_pareto SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_pareto.c
                  LIBS sw_cli sw_read sw_coordcore)
sw_add_check_test(test_audit SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_audit.c
                  LIBS sw_cli sw_read sw_coordcore)
sw_add_check_test(test_http SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_http.c
                  LIBS sw_cli sw_coord sw_read sw_coordcore PkgConfig::CURL)

# The `splatsweep` front end of the same code: pareto and audit are dispatched (exit 2 on a
# missing database, usage names --reference), and --http / --artifacts are options of the one
# option table: a bad port, a bind address without its port and either option on a command
# other than coordinator and local are usage errors; a good port starts and stops the dashboard
# around a spec that fails to load.
if(TARGET splatsweep)
  add_test(NAME analysis_cli COMMAND sh -c "\
    s=$<TARGET_FILE:splatsweep>; \
    $s pareto --db /nonexistent/x.db; test $? -eq 2 || exit 1; \
    $s audit --db /nonexistent/x.db; test $? -eq 2 || exit 1; \
    $s audit --help | grep -q -- --reference || exit 1; \
    $s local --http web /nonexistent.yaml 2>&1 | grep -q 'expected a port number' || exit 1; \
    $s local --http=70000 /nonexistent.yaml; test $? -eq 2 || exit 1; \
    $s local --http-bind 127.0.0.1 /nonexistent.yaml 2>&1 | grep -q 'needs --http PORT' || exit 1; \
    $s coordinator --artifacts-url ftp://x 2>&1 | grep -q 'expected an http' || exit 1; \
    $s status --http 0 2>&1 | grep -q 'belong to coordinator and local' || exit 1; \
    $s local /nonexistent.yaml --http 0 --db /nonexistent/x.db; test $? -eq 2 || exit 1")
endif()
sw_add_check_test(test_artifact SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_artifact.c
                  LIBS sw_artifact sw_read sw_coordcore)
