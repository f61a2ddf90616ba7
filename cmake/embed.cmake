# cmake/embed.cmake: files embedded in the executables at build time (cmake/embed_asset.cmake
# writes the C; read/sw_html.h uses them).
# sw_embed(VAR SYMBOL FILE [SHA256 [TEXT]]): generates gen/SYMBOL.c holding FILE and appends it
# to VAR (cmake/embed_asset.cmake checks the sha256 and the text).
function(sw_embed var symbol file)
  set(sha "${ARGV3}")
  set(text "${ARGV4}")
  set(out ${CMAKE_BINARY_DIR}/gen/${symbol}.c)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/gen
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out} -DSYMBOL=${symbol}
            "-DEXPECT_SHA256=${sha}" "-DEXPECT_TEXT=${text}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_asset.cmake
    DEPENDS ${file} ${PROJECT_SOURCE_DIR}/cmake/embed_asset.cmake
    COMMENT "Embedding ${file}")
  set(${var} ${${var}} ${out} PARENT_SCOPE)
endfunction()
