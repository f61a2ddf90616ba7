# gs_ref tests: the C reference's forward, binning, loss, Adam and the evaluation metrics
# (gs_metrics) beside it (test_ref), and its gradient checks against finite differences in double
# (test_ref_grad).
if(SW_BUILD_PIPELINE)
  sw_add_check_test(test_ref
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_ref.c ${CMAKE_CURRENT_LIST_DIR}/unit/test_ref_scene.c
    LIBS gs_ref gs_metrics m)
  sw_add_check_test(test_ref_grad
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_ref_grad.c
            ${CMAKE_CURRENT_LIST_DIR}/unit/test_ref_scene.c
    LIBS gs_ref m)
endif()
