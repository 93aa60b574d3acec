# SPDX-License-Identifier: MIT
# The cases of crash.py (the stack a fatal signal's profile names, and what
# the library maps into a program), registered as crash-CASE[-TC-OPT] on
# progs/r_crash.c. Included from tests/CMakeLists.txt, whose variables it uses.

# crash_add(TEST CASE PROGRAM): one add_test of crash.py CASE.
function(crash_add test case prog)
  scope_add_driver(crash 180 "scope;crash" ${test} ${case} ${prog})
endfunction()

# The frames the compiler shapes: every toolchain and optimisation level.
foreach(tc IN LISTS toolchains)
  foreach(opt 0 2)
    foreach(case deep wide)
      crash_add(crash-${case}-${tc}-O${opt} ${case} ${prog_bin}/r_crash-${tc}-O${opt})
    endforeach()
  endforeach()
endforeach()
# About the library rather than the compiler: once, on gcc -O2.
foreach(case thread sealed maps)
  crash_add(crash-${case} ${case} ${prog_bin}/r_crash-gcc-O2)
endforeach()
