# tp_add_gtest(<name> LABEL <label> [PROCESS] SOURCES ... LIBS ...): one GoogleTest executable, its
# tests discovered into CTest with the prefix <label>/ and the label <label>. PROCESS: the tests
# drive the tilepipe executable as a process and run no library code of their own, so they are
# compiled without optimization (half the compile time of gtest + nlohmann-json test files, the
# largest part of make test's builds; their speed is the executable's) and, in the sanitizer
# builds, without instrumentation (TILEPIPE_UNINSTRUMENTED, cmake/TilepipeWarnings.cmake): the
# sanitizers check the executable they run.
# Every test executable is a unity build with TILEPIPE_UNITY (docs/adr/0019): its files share one
# namespace, so helpers two files need live in a shared header.
function(tp_add_gtest name)
  cmake_parse_arguments(ARG "PROCESS" "LABEL;TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${TILEPIPE_UNITY})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main
                                        tilepipe_warnings tilepipe_sanitizers)
  if(ARG_PROCESS)
    target_compile_options(${name} PRIVATE -O0)
    set_target_properties(${name} PROPERTIES TILEPIPE_UNINSTRUMENTED ON)
  endif()
  gtest_discover_tests(${name} TEST_PREFIX "${ARG_LABEL}/" DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS "${ARG_LABEL}" TIMEOUT ${ARG_TIMEOUT})
endfunction()
