# tilepipe_add_plugin(<target> <source>...): a kernel plugin for `tilepipe run --plugin`, a shared
# module whose sources use TILEPIPE_PLUGIN_KERNEL (tilepipe/plugin.hpp). It links tilepipe's static
# libraries (built position-independent) and exports one symbol, tilepipe_plugin_table: its own
# code is compiled with hidden visibility and the static libraries' symbols stay inside it
# (--exclude-libs), so that two plugins, or a plugin and the executable, never bind to each
# other's copies (docs/adr/0006-kernel-plugins.md).
function(tilepipe_add_plugin target)
  if(NOT ARGN)
    message(FATAL_ERROR "tilepipe_add_plugin(${target}): give the plugin's sources")
  endif()
  add_library(${target} MODULE ${ARGN})
  target_link_libraries(${target} PRIVATE tilepipe::runtime)
  set_target_properties(${target} PROPERTIES PREFIX "lib" CXX_VISIBILITY_PRESET hidden
                                             VISIBILITY_INLINES_HIDDEN ON
                                             POSITION_INDEPENDENT_CODE ON)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT APPLE)
    target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL")
  endif()
endfunction()
