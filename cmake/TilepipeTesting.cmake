# tp_add_gtest(<name> LABEL <label> SOURCES ... LIBS ...): one GoogleTest executable, its tests
# discovered into CTest with the prefix <label>/ and the label <label>.
function(tp_add_gtest name)
  cmake_parse_arguments(ARG "" "LABEL;TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main
                                        tilepipe_warnings tilepipe_sanitizers)
  gtest_discover_tests(${name} TEST_PREFIX "${ARG_LABEL}/" DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS "${ARG_LABEL}" TIMEOUT ${ARG_TIMEOUT})
endfunction()
