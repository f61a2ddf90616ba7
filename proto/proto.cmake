# proto/proto.cmake: compiles splatsweep.proto with protoc-c at build time into the build tree
# (generated code is never committed) as the object library sw_proto, which common/wire.cmake
# folds into sw_wire. Only the codec includes the generated header.
set(SW_PROTO_GEN_DIR ${CMAKE_BINARY_DIR}/proto-gen CACHE INTERNAL "protoc-c output directory")
add_custom_command(
  OUTPUT ${SW_PROTO_GEN_DIR}/splatsweep.pb-c.c ${SW_PROTO_GEN_DIR}/splatsweep.pb-c.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SW_PROTO_GEN_DIR}
  COMMAND ${PROTOC_C} --c_out=${SW_PROTO_GEN_DIR} -I${CMAKE_CURRENT_LIST_DIR}
          ${CMAKE_CURRENT_LIST_DIR}/splatsweep.proto
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/splatsweep.proto
  COMMENT "protoc-c splatsweep.proto"
  VERBATIM)
add_library(sw_proto OBJECT ${SW_PROTO_GEN_DIR}/splatsweep.pb-c.c)
target_include_directories(sw_proto PRIVATE ${SW_PROTO_GEN_DIR})
target_link_libraries(sw_proto PRIVATE PkgConfig::PROTOBUFC)
set_target_properties(sw_proto PROPERTIES POSITION_INDEPENDENT_CODE ON)
