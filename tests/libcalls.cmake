# SPDX-License-Identifier: MIT
# The cases of libcalls.py: C library calls recorded as regions of kind wait
# and io (SCOPE_LIBCALLS, scope-run --libcalls). Included from
# tests/CMakeLists.txt, whose glob builds progs/libcalls.c for every
# toolchain and optimisation level, and once with -D_FORTIFY_SOURCE=2;
# cases are named libcalls-CASE[-TC-OPT].

# libcalls_add(TEST CASE PROGRAM): one add_test of libcalls.py CASE.
function(libcalls_add test case prog)
  add_test(NAME ${test}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/libcalls.py ${case}
      --prog ${prog}
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --src ${prog_src}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/${test}
      ${sanitize_args})
  set_tests_properties(${test} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 180 LABELS "scope;libcalls")
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
