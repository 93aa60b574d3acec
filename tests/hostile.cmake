# SPDX-License-Identifier: MIT
# The cases of hostile.py: the library preloaded for a whole machine, setuid
# programs, privilege and descriptor limits, stack overflow, wrong settings and
# writers, long and strange paths, valgrind. All on tests/progs/r_env.c, gcc -O2.

set(hostile_cases
  system-preload secure-mode privilege-drop nofile-soft nofile-hard file-limit stack-overflow
  writer-true writer-false writer-killed writer-env
  bad-compression bad-compression-lz4 bad-clock bad-chunk-size bad-arena-max bad-root bad-progress
  unknown-setting settings-docs
  long-output exec-fail orphan-parent newline-path valgrind launcher-exec run-writer write-at-exit plain-root-killed
  arena-in-memory arena-dir-named arena-at-exit)
foreach(case IN LISTS hostile_cases)
  add_test(NAME h-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/hostile.py ${case}
      --prog ${prog_bin}/r_env-gcc-O2
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --src ${prog_src}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/h-${case}
      ${sanitize_args})
  set_tests_properties(h-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 180 LABELS "scope;hostile")
endforeach()
