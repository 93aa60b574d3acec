# SPDX-License-Identifier: MIT
# Registers every case of symbolize.py (scope-symbolize on profiles of real
# programs: SCOPE_SYMBOLIZE=0, stripped binaries with separate debug info,
# rebuilt binaries, bad input) as a test named symbolize-CASE. Included from
# tests/CMakeLists.txt, whose variables (the interpreter, the programs, the
# sanitizer) it uses; rdcheck comes from report.cmake.

set(symbolize_cases same dso debuglink debugdir buildid strip-debug cpp usr-lib-debug rebuilt badinput notfile link cli)
foreach(case IN LISTS symbolize_cases)
  add_test(NAME symbolize-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/symbolize.py ${case}
      --bin ${PROJECT_BINARY_DIR}/bin
      --progs ${prog_bin}
      --src ${prog_src}
      --rdcheck $<TARGET_FILE:rdcheck>
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/symbolize-${case}
      ${sanitize_args})
  set_tests_properties(symbolize-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;symbolize")
endforeach()
