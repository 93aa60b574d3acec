# SPDX-License-Identifier: MIT
# The tests of the scope_profile package (python/tests, pytest) on profiles
# made with this build's scope-run, registered as python. Included from
# tests/CMakeLists.txt, whose variables it uses.

execute_process(COMMAND ${SCOPE_TEST_PYTHON} -c "import pytest, h5py, numpy, pandas, matplotlib"
  RESULT_VARIABLE python_missing OUTPUT_QUIET ERROR_QUIET)
if(python_missing)
  # pytest, pandas or matplotlib missing (scripts/deps installs them): say so and skip
  add_test(NAME python COMMAND sh -c
    "echo 'SKIP python: ${SCOPE_TEST_PYTHON} lacks pytest, h5py, numpy, pandas or matplotlib (run scripts/deps)'; exit 77")
else()
  # In the sanitizer build the programs need the ASan runtime ahead of the library.
  set(python_asan)
  if(SCOPE_SANITIZE)
    set(python_asan SCOPE_TEST_ASAN=${libasan} ASAN_OPTIONS=detect_leaks=0)
  endif()
  add_test(NAME python
    COMMAND ${CMAKE_COMMAND} -E env
      "PATH=${PROJECT_BINARY_DIR}/bin:$ENV{PATH}"
      SCOPE_TEST_PROGS=${prog_bin}
      ${python_asan}
      PYTHONPATH=${PROJECT_SOURCE_DIR}/python
      PYTHONDONTWRITEBYTECODE=1
      MPLBACKEND=Agg
      ${SCOPE_TEST_PYTHON} -m pytest ${PROJECT_SOURCE_DIR}/python/tests -q -p no:cacheprovider
        --basetemp=${CMAKE_CURRENT_BINARY_DIR}/work/python)
endif()
set_tests_properties(python PROPERTIES
  SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;python")
