# SPDX-License-Identifier: MIT
# The viewer test: scope-report's --speedscope and --chrome exports of a real
# profile loaded into speedscope (the npm package) in headless Chromium
# (Debian's chromium), checked from the rendered page, with screenshots left
# in work/viewer/. It installs what it lacks and is skipped, saying why, where
# the browser or the package cannot be had. Included from tests/CMakeLists.txt.

add_test(NAME viewer
  COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/viewer.py
    --bin ${PROJECT_BINARY_DIR}/bin
    --progs ${prog_bin}
    --cache ${CMAKE_CURRENT_BINARY_DIR}/viewer-speedscope
    --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/viewer
    ${sanitize_args})
set_tests_properties(viewer PROPERTIES
  SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;viewer")
