# SPDX-License-Identifier: MIT
# The cases of heap.py: heap tracking (SCOPE_HEAP=1) on progs/heap.cpp, scope-report --heap and
# scope-bench --memory. Included from tests/CMakeLists.txt; named heap-CASE[-TC-OPT].

function(heap_add test case prog)
  scope_add_driver(heap 180 "scope;heap" ${test} ${case} ${prog})
endfunction()

# The figures: every toolchain and level (the compiler must not change what is charged where).
foreach(tc IN LISTS toolchains)
  foreach(opt 0 2)
    heap_add(heap-exact-${tc}-O${opt} exact ${prog_bin}/heap-${tc}-O${opt})
  endforeach()
endforeach()
foreach(case preload off fork churn report damaged bench-memory)
  heap_add(heap-${case} ${case} ${prog_bin}/heap-gcc-O2)
endforeach()
