# SPDX-License-Identifier: MIT
# ThreadSanitizer where threads meet in the profiler (issue 3): with
# -DSCOPE_TSAN=ON, libscope_preload.so is built with -fsanitize=thread and
# so is tsan/tsan_threads.c; the test tsan-threads (label tsan) profiles it
# with scope-run and fails on any TSan report and on any wrong count per
# lane. Included from tests/CMakeLists.txt. Run it alone, as .ci/run does:
#   cmake --build DIR --target scope_tsan && ctest --test-dir DIR -L tsan
#
# How TSan and the preload meet: the program is linked with
# -fsanitize=thread, so its .preinit_array starts the runtime before any
# constructor runs, and LD_PRELOAD holds libscope_preload.so alone (it
# needs the same libtsan.so). libtsan must not come first in LD_PRELOAD:
# its interceptors would then shadow the profiler's pthread_create, and it
# calls the profiler's sigaction before it is itself initialized.

if(NOT SCOPE_TSAN)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU")
  message(WARNING "tests: SCOPE_TSAN is only wired for gcc's libtsan")
endif()

set(tsan_prog ${CMAKE_CURRENT_BINARY_DIR}/tsan/tsan_threads)
set(tsan_src ${CMAKE_CURRENT_SOURCE_DIR}/tsan/tsan_threads.c)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/tsan)
add_custom_command(OUTPUT ${tsan_prog}
  COMMAND ${CMAKE_C_COMPILER} -O1 ${prog_flags} -fsanitize=thread -o ${tsan_prog} ${tsan_src}
  DEPENDS ${tsan_src} ${prog_src}/progs.h
  COMMENT "Building test program tsan_threads with -fsanitize=thread"
  VERBATIM)
set(tsan_calls ${CMAKE_CURRENT_BINARY_DIR}/tsan/tsan_calls)
add_custom_command(OUTPUT ${tsan_calls}
  COMMAND ${CMAKE_C_COMPILER} -O1 ${prog_flags} -fsanitize=thread -o ${tsan_calls} ${prog_src}/calls.c
  DEPENDS ${prog_src}/calls.c ${prog_src}/progs.h
  COMMENT "Building test program tsan_calls with -fsanitize=thread"
  VERBATIM)
# Everything the tests need and nothing else, so CI builds only this.
add_custom_target(scope_tsan ALL DEPENDS ${tsan_prog} ${tsan_calls})
add_dependencies(scope_tsan scope_preload scope-writer scope-run)

add_test(NAME tsan-threads
  COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tsan.py threads
    --prog ${tsan_prog}
    --bin ${PROJECT_BINARY_DIR}/bin
    --lib ${PROJECT_BINARY_DIR}/lib
    --src ${prog_src}
    --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/tsan-threads)
set_tests_properties(tsan-threads PROPERTIES
  SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "tsan")

# The run's writer, built with TSan too: its threads (the socket's, the
# grouping's, the compressing ones) meet on one long process.
add_test(NAME tsan-writer
  COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tsan.py writer
    --prog ${tsan_calls}
    --bin ${PROJECT_BINARY_DIR}/bin
    --lib ${PROJECT_BINARY_DIR}/lib
    --src ${prog_src}
    --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/tsan-writer)
set_tests_properties(tsan-writer PROPERTIES
  SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "tsan")
