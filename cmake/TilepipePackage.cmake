# Installs the CMake package config so that another project can find_package(tilepipe).
include(CMakePackageConfigHelpers)
get_property(tp_layers GLOBAL PROPERTY TILEPIPE_INSTALLED_LAYERS)
add_library(tilepipe_all INTERFACE)
set_target_properties(tilepipe_all PROPERTIES EXPORT_NAME tilepipe)
foreach(layer IN LISTS tp_layers)
  target_link_libraries(tilepipe_all INTERFACE tilepipe_${layer})
endforeach()
add_library(tilepipe::tilepipe ALIAS tilepipe_all)
install(TARGETS tilepipe_all EXPORT tilepipeTargets)
install(EXPORT tilepipeTargets NAMESPACE tilepipe:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilepipe)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tilepipeConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tilepipeConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilepipe)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tilepipeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tilepipeConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tilepipeConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/TilepipePlugin.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilepipe)
