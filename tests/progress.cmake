# SPDX-License-Identifier: MIT
# Registers every case of progress.py (the progress line of the exports,
# scope-merge and the writer, on a pseudo-terminal) as progress-CASE.
# Included from tests/CMakeLists.txt, whose variables it uses.

foreach(case report merge writer)
  add_test(NAME progress-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/progress.py ${case}
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --progs ${prog_bin}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/progress-${case}
      ${sanitize_args})
  set_tests_properties(progress-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;progress")
endforeach()
