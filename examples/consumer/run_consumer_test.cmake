# Installs the build tree into a scratch prefix, builds consumer/ against it and runs the result:
# the Pascal kernel, the recurrence through the door, and the recurrence as a plugin of the
# installed `tilepipe run` on 2 forked ranks, its checksum equal to the plain loop's.
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer_test.cmake needs -D${var}=...")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer_pascal)
run(${WORK_DIR}/build/consumer_recurrence 301 1 1)
if(NOT run_out MATCHES "plain loop ([0-9a-f]+), verified yes")
  message(FATAL_ERROR "consumer_recurrence printed no plain-loop sum:\n${run_out}")
endif()
set(plain ${CMAKE_MATCH_1})
run(${WORK_DIR}/prefix/bin/tilepipe run --plugin ${WORK_DIR}/build/libmine.so --kernel recurrence
    --size 301x301 --nodes 2 --cpus 1 --tile 64 --verify)
if(NOT run_out MATCHES "checksum +${plain}\n" OR NOT run_out MATCHES "verified +yes")
  message(FATAL_ERROR "tilepipe run --plugin: not the plain loop's checksum ${plain}:\n${run_out}")
endif()
