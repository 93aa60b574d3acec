# SPDX-License-Identifier: MIT
# The cases of bench.py: scope-bench and scope-report --bench on progs/bench_job.c, once on
# gcc -O2; named bench-CASE. Included from tests/CMakeLists.txt.

set(bench_cases order-labels fresh failure gate baseline-gate tree interrupt no-profile project report cli exe)
foreach(case IN LISTS bench_cases)
  add_test(NAME bench-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench.py ${case}
      --prog ${prog_bin}/bench_job-gcc-O2
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --src ${prog_src}
      --progs ${prog_bin}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/bench-${case}
      ${sanitize_args})
  set_tests_properties(bench-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;bench")
endforeach()
# Its wall times are what the gate checks: the machine to itself.
set_tests_properties(bench-gate bench-baseline-gate PROPERTIES RUN_SERIAL TRUE)
