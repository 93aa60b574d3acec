# SPDX-License-Identifier: MIT
# The cases of hotpath.py: tasks sharing a TLS block, long-open calls in
# bounded memory, recursions deeper than 65,535, threads recording while the
# writer reads. Included from tests/CMakeLists.txt, whose glob builds
# progs/r_*.c for every toolchain and optimisation level; cases are named
# hot-CASE[-TC-OPT].

# hotpath_add(TEST CASE PROGRAM): one add_test of hotpath.py CASE.
function(hotpath_add test case prog)
  scope_add_driver(hotpath 300 "scope;hotpath" ${test} ${case} ${prog})
endfunction()

# The depths the compiler's code reaches: every toolchain and level.
foreach(tc IN LISTS toolchains)
  foreach(opt 0 2)
    hotpath_add(hot-deep-${tc}-O${opt} deep ${prog_bin}/r_deep-${tc}-O${opt})
  endforeach()
  hotpath_add(hot-clone-${tc} clone ${prog_bin}/r_clone-${tc}-O2)
  hotpath_add(hot-clone-raw-${tc} clone-raw ${prog_bin}/r_clone-${tc}-O2)
endforeach()

# About the profiler rather than the compiler: once, on gcc -O2.
set(hotpath_once_cases
  clone-full:r_clone clone-raw-full:r_clone clone-copy:r_clone clone-exec:r_clone deep-spill:r_deep nested-rss:r_deep deep-rss:r_deep live-arena:r_thr)
foreach(entry IN LISTS hotpath_once_cases)
  string(REPLACE ":" ";" entry ${entry})
  list(GET entry 0 case)
  list(GET entry 1 prog)
  hotpath_add(hot-${case} ${case} ${prog_bin}/${prog}-gcc-O2)
endforeach()
# It loads every CPU on purpose: nothing else may run beside it.
set_tests_properties(hot-live-arena PROPERTIES RUN_SERIAL TRUE)
