# SPDX-License-Identifier: MIT
# The cases of figures.py (totals without double counting, threads' CPU
# time), registered as figures-CASE[-TC-OPT] on progs/figures.c. Included
# from tests/CMakeLists.txt, whose variables it uses.

# figures_add(TEST CASE PROGRAM): one add_test of figures.py CASE.
function(figures_add test case prog)
  scope_add_driver(figures 180 "scope;figures" ${test} ${case} ${prog})
endfunction()

# The recursions the compiler shapes: every toolchain and optimisation level.
foreach(tc IN LISTS toolchains)
  foreach(opt 0 2)
    foreach(case recursion mutual signal)
      figures_add(figures-${case}-${tc}-O${opt} ${case} ${prog_bin}/figures-${tc}-O${opt})
    endforeach()
  endforeach()
endforeach()
# About the writer, the tools and the library rather than the compiler: once, on gcc -O2.
foreach(case spill merge report cpu cpu-live)
  figures_add(figures-${case} ${case} ${prog_bin}/figures-gcc-O2)
endforeach()
