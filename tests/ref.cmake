# gs_ref tests: the C reference's forward, binning, loss, metrics and Adam (test_ref), and its
# gradient checks against finite differences in double (test_ref_grad).
if(TARGET gs_ref)
  sw_add_check_test(test_ref
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_ref.c ${CMAKE_CURRENT_LIST_DIR}/unit/test_ref_scene.c
    LIBS gs_ref m)
  sw_add_check_test(test_ref_grad
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_ref_grad.c
            ${CMAKE_CURRENT_LIST_DIR}/unit/test_ref_scene.c
    LIBS gs_ref m)
endif()
