# tests/sched.cmake: unit tests of the coordinator core (store, scheduler) and the reports.
sw_add_check_test(test_store SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_store.c LIBS sw_coordcore)
sw_add_check_test(test_sched SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_sched.c LIBS sw_coordcore)
sw_add_check_test(test_report SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_report.c LIBS sw_read sw_coordcore)
sw_add_check_test(test_watch SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_watch.c LIBS sw_watch)
