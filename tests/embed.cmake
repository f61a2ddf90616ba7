# The build-time embedding of the page scripts (cmake/embed_asset.cmake) refuses what it must:
# a Chart.js whose sha256 is not the pinned one, a file without the expected version banner, a
# file containing </script; and writes the bytes of a good file exactly (read back from the C).
add_test(NAME test_embed_asset
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/embed_asset_test.sh ${CMAKE_COMMAND}
                 ${PROJECT_SOURCE_DIR}/cmake/embed_asset.cmake ${SW_CHARTJS_FILE}
                 ${SW_CHARTJS_SHA256} ${SW_CHARTJS_VERSION})
