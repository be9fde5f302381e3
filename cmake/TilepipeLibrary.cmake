# tp_add_layer(<layer> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...]):
# defines tilepipe_<layer> with alias tilepipe::<layer>, its public include/ folder, install rules.
function(tp_add_layer layer)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target tilepipe_${layer})
  if(ARG_SOURCES)
    add_library(${target} STATIC ${ARG_SOURCES})
    set(scope PUBLIC)
    target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:tilepipe_warnings>)
    target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON
                                               EXPORT_NAME ${layer})
  else()
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${layer})
  endif()
  add_library(tilepipe::${layer} ALIAS ${target})
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} ${scope} cxx_std_20)
  target_link_libraries(${target} ${scope} $<BUILD_INTERFACE:tilepipe_sanitizers> ${ARG_PUBLIC_DEPS})
  if(ARG_PRIVATE_DEPS)
    target_link_libraries(${target} PRIVATE ${ARG_PRIVATE_DEPS})
  endif()
  install(TARGETS ${target} EXPORT tilepipeTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set_property(GLOBAL APPEND PROPERTY TILEPIPE_INSTALLED_LAYERS ${layer})
endfunction()
