# common/wire.cmake: sw_wire, the wire protocol codec (sw_msg, sw_codec) and the sweep spec
# loader (sw_spec). The protobuf-c generated code is compiled into it with its headers private:
# nothing outside the codec sees protobuf-c types.
add_library(sw_wire STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sw_msg.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_codec.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_spec.c
  ${CMAKE_CURRENT_LIST_DIR}/sw_spec_view.c
  $<TARGET_OBJECTS:sw_proto>)
add_dependencies(sw_wire sw_proto)
target_include_directories(sw_wire PUBLIC ${CMAKE_CURRENT_LIST_DIR} PRIVATE ${SW_PROTO_GEN_DIR})
target_link_libraries(sw_wire PUBLIC sw_util sw_yaml PkgConfig::JANSSON
                      PRIVATE PkgConfig::PROTOBUFC PkgConfig::YAML)
