# SPDX-License-Identifier: MIT
# The cases of counters.py: counters per call (scope-run --counters) on
# progs/counters.c. Included from tests/CMakeLists.txt.

function(counters_add test case prog)
  add_test(NAME ${test}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/counters.py ${case}
      --prog ${prog_bin}/${prog}
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/${test}
      ${sanitize_args})
  set_tests_properties(${test} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;counters")
endfunction()

foreach(tc IN LISTS toolchains)
  counters_add(counters-software-${tc}-O0 software counters-${tc}-O0)
  counters_add(counters-software-${tc}-O2 software counters-${tc}-O2)
endforeach()
foreach(case regions missing hardware ipc off)
  counters_add(counters-${case} ${case} counters-gcc-O2)
endforeach()
