# Each source folder's CMakeLists.txt includes the *.cmake fragments beside it, so that parts of a
# folder owned by different modules (common/gate.cmake, common/wire.cmake, ...) build independently.
#   sw_include_fragments()              every fragment of the folder, in sorted order
#   sw_include_fragments(a b ...)       exactly a.cmake, b.cmake, ... in that order: a folder whose
#                                       fragments build on one another names them; a named fragment
#                                       that is missing, or one beside them that is not named, stops
#                                       the configure (nothing is dropped or added in silence)
macro(sw_include_fragments)
  file(GLOB _sw_frags CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cmake")
  list(SORT _sw_frags)
  set(_sw_named ${ARGN})
  if(_sw_named)
    list(TRANSFORM _sw_named PREPEND "${CMAKE_CURRENT_SOURCE_DIR}/")
    list(TRANSFORM _sw_named APPEND ".cmake")
    foreach(_f IN LISTS _sw_frags)
      if(NOT _f IN_LIST _sw_named)
        message(FATAL_ERROR "${_f} is not named in the sw_include_fragments() of "
                            "${CMAKE_CURRENT_SOURCE_DIR}/CMakeLists.txt")
      endif()
    endforeach()
    foreach(_f IN LISTS _sw_named)
      if(NOT EXISTS "${_f}")
        message(FATAL_ERROR "${CMAKE_CURRENT_SOURCE_DIR}/CMakeLists.txt names fragment ${_f}, "
                            "which does not exist")
      endif()
    endforeach()
    set(_sw_frags ${_sw_named})
  endif()
  foreach(_f IN LISTS _sw_frags)
    include("${_f}")
  endforeach()
endmacro()

# sw_add_check_test(NAME SOURCES... LIBS ... [TIMEOUT S] [LABELS L...]): a Check unit-test
# executable registered with ctest. Every test that drives the Vulkan device (lavapipe in CI) carries
# the label `vulkan`: scripts/test.sh leaves those out of the sanitizer pass by label, not by name.
function(sw_add_check_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} PkgConfig::CHECK)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "CK_DEFAULT_TIMEOUT=600")
  if(T_TIMEOUT)
    set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
