# Each source folder's CMakeLists.txt includes every *.cmake fragment beside it, so that parts of a
# folder owned by different modules (common/gate.cmake, common/wire.cmake, ...) build independently.
macro(sw_include_fragments)
  file(GLOB _sw_frags CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cmake")
  list(SORT _sw_frags)
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
