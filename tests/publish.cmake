# SPDX-License-Identifier: MIT
# The cases of publish.py (what is published when part of a run cannot be
# written, and the outputs scope-run refuses), registered as pub-CASE on the
# gcc -O2 build of calls.c. Included from tests/CMakeLists.txt, whose
# variables it uses.
foreach(case partial-disk partial-disk-batch partial-killed arenas-released stale-summary writer-full writer-full-deflated writer-fsize
    bad-compression bad-chunk arena-fd arena-fd-cloexec output-is-program
    cli-output-empty cli-top)
  add_test(NAME pub-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/publish.py ${case}
      --prog ${prog_bin}/calls-gcc-O2
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --src ${prog_src}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/pub-${case}
      ${sanitize_args})
  set_tests_properties(pub-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 180 LABELS "scope;publish")
endforeach()
