# tests/fuzz.cmake: the libFuzzer targets of tests/fuzz/ (option SW_FUZZ, clang only; the top-level
# CMakeLists.txt checks the compiler and instruments everything). scripts/fuzz.sh builds and runs
# them; each is also a ctest test (label fuzz) that replays its seed corpus once.
if(SW_FUZZ)
  set(_fz ${CMAKE_CURRENT_LIST_DIR}/fuzz)
  # sw_fuzz_add(NAME SOURCES... LIBS ...): one fuzz target and its corpus replay.
  function(sw_fuzz_add name)
    cmake_parse_arguments(F "" "" "SOURCES;LIBS" ${ARGN})
    add_executable(fuzz_${name} ${_fz}/fuzz_${name}.c ${_fz}/fuzz_util.c ${F_SOURCES})
    target_include_directories(fuzz_${name} PRIVATE ${_fz})
    target_link_libraries(fuzz_${name} PRIVATE ${F_LIBS})
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    add_test(NAME fuzz_${name}_corpus
             COMMAND fuzz_${name} -runs=0 ${_fz}/corpus/${name})
    set_tests_properties(fuzz_${name}_corpus PROPERTIES LABELS fuzz)
  endfunction()
  sw_fuzz_add(codec LIBS sw_wire)
  sw_fuzz_add(spec LIBS sw_wire)
  # The result check is generated from docs/result.schema.json into sw_util.
  sw_fuzz_add(result LIBS sw_util)
  # The `gate eval` input and the engine on what it accepts.
  sw_fuzz_add(gate LIBS sw_gate)
  add_executable(codec_seeds ${_fz}/codec_seeds.c)
  target_link_libraries(codec_seeds PRIVATE sw_wire)
  if(SW_BUILD_PIPELINE)
    sw_fuzz_add(config LIBS gs_config)
    sw_fuzz_add(png LIBS gs_core)
    sw_fuzz_add(ply LIBS gs_core)
    sw_fuzz_add(scene LIBS gs_core)
    sw_fuzz_add(colmap LIBS gs_core)
    sw_fuzz_add(transforms LIBS gs_core)
  endif()
endif()
