sw_add_check_test(test_util SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_util.c LIBS sw_util)
# The result check generated from docs/result.schema.json agrees with python3-jsonschema on a real
# H200 result, a mapped foreign result and every variant of them with a value deleted, replaced
# or added (tests/result_schema.py).
add_test(NAME test_result_schema
         COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/result_schema.py $<TARGET_FILE:splatsweep>
                 ${PROJECT_SOURCE_DIR}/docs/result.schema.json
                 ${CMAKE_CURRENT_LIST_DIR}/fixtures/result/h200_lego_30k.json
                 ${CMAKE_CURRENT_LIST_DIR}/fixtures/result/mapped.json)
