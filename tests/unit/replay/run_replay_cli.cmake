# cmake -DDIMCTL=<exe> -DARGS=<;-list> [-DSTDIN=<file>] -DEXPECT_RC=<n>
#       [-DEXPECT_STDOUT=<file with the exact expected stdout>] [-DEXPECT_STDERR=<substring>]
#       -P run_replay_cli.cmake
# Runs the real dimctl binary and checks exit code, stdout and stderr.
set(input_args)
if(STDIN)
  set(input_args INPUT_FILE ${STDIN})
endif()
execute_process(COMMAND ${DIMCTL} ${ARGS} ${input_args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\nstderr:\n${err}")
endif()
if(EXPECT_STDOUT)
  file(READ ${EXPECT_STDOUT} want)
  if(NOT out STREQUAL want)
    file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/replay_cli_actual.txt "${out}")
    message(FATAL_ERROR "stdout differs from ${EXPECT_STDOUT} "
                        "(actual in ${CMAKE_CURRENT_BINARY_DIR}/replay_cli_actual.txt)")
  endif()
endif()
if(EXPECT_STDERR)
  string(FIND "${err}" "${EXPECT_STDERR}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "stderr does not contain '${EXPECT_STDERR}':\n${err}")
  endif()
endif()
