# SPDX-License-Identifier: MIT
# Registers every case of symbols.py (the symbolizer on generated programs of
# thousands of functions: its answers, and that its cost grows linearly with
# the functions of a unit) as a test named symbols-CASE. Included from
# tests/CMakeLists.txt, whose variables (the interpreter, the programs) it uses.

# symcheck: the symbolizer against libdw's own answers, and its lookups timed.
add_executable(symcheck symcheck.c)
target_link_libraries(symcheck PRIVATE scope_symbolize)
set_target_properties(symcheck PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

set(symbols_cases same profile scale)
foreach(case IN LISTS symbols_cases)
  add_test(NAME symbols-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/symbols.py ${case}
      --bin ${PROJECT_BINARY_DIR}/bin
      --progs ${prog_bin}
      --symcheck $<TARGET_FILE:symcheck>
      --bench ${PROJECT_SOURCE_DIR}/bench/symbols
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/symbols-${case}
      ${sanitize_args})
  set_tests_properties(symbols-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 600 LABELS "scope;symbolize")
endforeach()
# Its times are part of what it checks: it wants the machine to itself.
set_tests_properties(symbols-scale PROPERTIES RUN_SERIAL TRUE)
