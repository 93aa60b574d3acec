# SPDX-License-Identifier: MIT
# The cases of heap.py: heap tracking (SCOPE_HEAP=1) on progs/heap.cpp, scope-report --heap and
# scope-bench --memory. Included from tests/CMakeLists.txt; named heap-CASE[-TC-OPT].

function(heap_add test case prog)
  add_test(NAME ${test}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/heap.py ${case}
      --prog ${prog}
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --src ${prog_src}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/${test}
      ${sanitize_args})
  set_tests_properties(${test} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 180 LABELS "scope;heap")
endfunction()

# The figures: every toolchain and level (the compiler must not change what is charged where).
foreach(tc IN LISTS toolchains)
  foreach(opt 0 2)
    heap_add(heap-exact-${tc}-O${opt} exact ${prog_bin}/heap-${tc}-O${opt})
  endforeach()
endforeach()
foreach(case preload off fork report bench-memory)
  heap_add(heap-${case} ${case} ${prog_bin}/heap-gcc-O2)
endforeach()
