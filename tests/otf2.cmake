# SPDX-License-Identifier: MIT
# Registers every case of otf2.py (scope-report --otf2 archives of real
# profiles, read back with Debian's otf2-print) as otf2-CASE.
# Included from tests/CMakeLists.txt, whose variables it uses.

foreach(case calls mpi memory refuse)
  add_test(NAME otf2-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/otf2.py ${case}
      --bin ${PROJECT_BINARY_DIR}/bin
      --progs ${prog_bin}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/otf2-${case}
      ${sanitize_args})
  set_tests_properties(otf2-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;report;otf2")
endforeach()
# An MPI job, as the mpi tests run theirs: alone.
set_tests_properties(otf2-mpi PROPERTIES RUN_SERIAL TRUE)
