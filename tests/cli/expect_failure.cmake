# Runs CMD with ARGS and checks it exits with EXPECT_CODE (0 too) and prints EXPECT_TEXT;
# with EXPECT_ABSENT, that the run left nothing at that path (a folder it created, say).
execute_process(COMMAND ${CMD} ${ARGS} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL EXPECT_CODE)
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECT_CODE}\nstdout: ${out}\nstderr: ${err}")
endif()
string(FIND "${out}${err}" "${EXPECT_TEXT}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "output lacks '${EXPECT_TEXT}'\nstdout: ${out}\nstderr: ${err}")
endif()
if(DEFINED EXPECT_ABSENT AND EXISTS "${EXPECT_ABSENT}")
  message(FATAL_ERROR "the run left '${EXPECT_ABSENT}' behind")
endif()
