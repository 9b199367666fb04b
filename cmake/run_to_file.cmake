# cmake -DEXE=... -DARGS="a;b" -DOUT=file [-DEMULATOR=...] -P run_to_file.cmake
# Runs EXE ARGS and writes its stdout to OUT (the man page and completion scripts are the
# binary's own output, so they always match its --help). A failure fails the build.
separate_arguments(ARGS)
execute_process(COMMAND ${EMULATOR} ${EXE} ${ARGS}
                OUTPUT_FILE ${OUT}.tmp
                RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "${EXE} ${ARGS} failed (${rc}): ${err}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
