# SPDX-License-Identifier: MIT
# Registers every case of report.py (scope-report on profiles of the test
# programs) as a test named report-CASE. Included from tests/CMakeLists.txt,
# whose variables (the interpreter, the programs, the sanitizer) it uses.

# rdcheck: the reader's whole-file check, the entry point a fuzzer drives.
add_executable(rdcheck rdcheck.c)
target_link_libraries(rdcheck PRIVATE scope_common)
set_target_properties(rdcheck PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

set(report_cases flat tree threads processes chrome speedscope folded diff badinput cli output selfout scale align
  bytes names lines compensate compensate-loop overhead callers merged filters sizes)
foreach(case IN LISTS report_cases)
  add_test(NAME report-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/report.py ${case}
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --progs ${prog_bin}
      --rdcheck $<TARGET_FILE:rdcheck>
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/report-${case}
      ${sanitize_args})
  set_tests_properties(report-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 600 LABELS "scope;report")
endforeach()
# The large profile wants the machine to itself: its times are part of what it checks.
set_tests_properties(report-scale PROPERTIES RUN_SERIAL TRUE)
# It times a loop against its uninstrumented copy: the fewer tests beside it, the more rounds
# run undisturbed.
set_tests_properties(report-compensate-loop PROPERTIES RUN_SERIAL TRUE)
