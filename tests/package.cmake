# SPDX-License-Identifier: MIT
# The cases of package.py (the installed tree, the .deb, the bash completion,
# the versions, the wheel), registered as package-CASE. Included from
# tests/CMakeLists.txt, whose variables it uses.

foreach(case install local deb completion version wheel)
  add_test(NAME package-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/package.py ${case}
      --prog ${prog_bin}/fib-gcc-O2
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/package-${case}
      --build ${PROJECT_BINARY_DIR}
      --source ${PROJECT_SOURCE_DIR}
      --version ${PROJECT_VERSION}
      ${sanitize_args})
  set_tests_properties(package-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;package")
endforeach()
