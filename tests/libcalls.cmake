# SPDX-License-Identifier: MIT
# The cases of libcalls.py: C library calls recorded as regions of kind wait
# and io (SCOPE_LIBCALLS, scope-run --libcalls). Included from
# tests/CMakeLists.txt, whose glob builds progs/libcalls.c for every
# toolchain and optimisation level, and once with -D_FORTIFY_SOURCE=2;
# cases are named libcalls-CASE[-TC-OPT].

# libcalls_add(TEST CASE PROGRAM): one add_test of libcalls.py CASE.
function(libcalls_add test case prog)
  scope_add_driver(libcalls 180 "scope;libcalls" ${test} ${case} ${prog})
endfunction()

# Where the calls are and who made them: every toolchain and level.
foreach(tc IN LISTS toolchains)
  foreach(opt 0 2)
    libcalls_add(libcalls-pattern-${tc}-O${opt} pattern ${prog_bin}/libcalls-${tc}-O${opt})
  endforeach()
endforeach()

# About the settings and the library rather than the compiler: once, on gcc -O2.
foreach(case default none io own-calls cli)
  libcalls_add(libcalls-${case} ${case} ${prog_bin}/libcalls-gcc-O2)
endforeach()
libcalls_add(libcalls-fortify fortify ${prog_bin}/libcalls-gcc-O2-fortify)
