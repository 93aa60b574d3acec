# SPDX-License-Identifier: MIT
# Registers every case of htmlpage.py (scope-report --html pages of real profiles,
# drawn by headless Chromium and read back from the DOM) as html-CASE.
# Included from tests/CMakeLists.txt, whose variables it uses.

foreach(case page offline bounded ranks manyranks)
  add_test(NAME html-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/htmlpage.py ${case}
      --bin ${PROJECT_BINARY_DIR}/bin
      --progs ${prog_bin}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/html-${case}
      ${sanitize_args})
  set_tests_properties(html-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;report;html")
endforeach()
# An MPI job, as the mpi tests run theirs: alone.
set_tests_properties(html-ranks PROPERTIES RUN_SERIAL TRUE)
