# Runs CMD with ARGS and checks it exits with EXPECT_CODE (0 too) and prints EXPECT_TEXT.
execute_process(COMMAND ${CMD} ${ARGS} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL EXPECT_CODE)
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECT_CODE}\nstdout: ${out}\nstderr: ${err}")
endif()
string(FIND "${out}${err}" "${EXPECT_TEXT}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "output lacks '${EXPECT_TEXT}'\nstdout: ${out}\nstderr: ${err}")
endif()
