# SPDX-License-Identifier: MIT
# The cases of filters.py: record-time filters (scope-run -F/-N/-D/-t, SCOPE_ONLY,
# SCOPE_NOT, SCOPE_DEPTH, SCOPE_MIN_DURATION) on tests/progs/filters.c. Included
# from tests/CMakeLists.txt; cases are named filters-CASE[-TC-OPT].

function(filters_add test case prog)
  add_test(NAME ${test}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/filters.py ${case}
      --prog ${prog}
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --progs ${prog_bin}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/${test}
      ${sanitize_args})
  set_tests_properties(${test} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 180 LABELS "scope;filters")
endfunction()

# Which calls are stored, at which depths: every toolchain and level.
foreach(tc IN LISTS toolchains)
  foreach(opt 0 2)
    foreach(case none only not not-subtree depth only-depth)
      filters_add(filters-${case}-${tc}-O${opt} ${case} ${prog_bin}/filters-${tc}-O${opt})
    endforeach()
  endforeach()
endforeach()

# About the settings rather than the compiler: once, on gcc -O2.
foreach(case min-duration variables bad-variable bad-options cxx stripped exact-pairs threads forks jumps sample sample-names sample-signal sample-sigprof hybrid)
  filters_add(filters-${case} ${case} ${prog_bin}/filters-gcc-O2)
endforeach()
