sw_add_check_test(test_util SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_util.c LIBS sw_util)
