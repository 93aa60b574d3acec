# SPDX-License-Identifier: MIT
# The cases of merge.py (scope-merge carrying the columns only some profiles
# have; refusing an output that is an input, inputs that are not files and
# damaged ones), registered as merge-CASE on the gcc -O2 build of chain.c.
# Included from tests/CMakeLists.txt, whose variables it uses.
foreach(case columns nocolumns remerge chunks badcolumn selfout notfile damaged)
  add_test(NAME merge-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/merge.py ${case}
      --prog ${prog_bin}/chain-gcc-O2
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --src ${prog_src}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/merge-${case}
      ${sanitize_args})
  set_tests_properties(merge-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 180 LABELS "scope;merge")
endforeach()
