# SPDX-License-Identifier: MIT
# The cases of api.py: include/scope/scope.h and libscope.so (named regions,
# pause and resume, SCOPE_START_PAUSED), and the installed tree found through
# pkg-config and CMake. Included from tests/CMakeLists.txt; the programs in
# api/ link libscope, so they are built here, not by the progs/ glob.

set(api_src ${CMAKE_CURRENT_SOURCE_DIR}/api)
set(api_outputs)
# api_prog(OUT SRC COMPILER FLAGS...): SRC linked against the build tree's libscope.
macro(api_prog out src compiler)
  add_custom_command(OUTPUT ${out}
    COMMAND ${compiler} ${ARGN} -I${PROJECT_SOURCE_DIR}/include -o ${out} ${src}
      -L$<TARGET_FILE_DIR:scope> -lscope -Wl,-rpath,$<TARGET_FILE_DIR:scope>
    DEPENDS ${src} ${PROJECT_SOURCE_DIR}/include/scope/scope.h ${prog_src}/progs.h scope
    VERBATIM)
  list(APPEND api_outputs ${out})
endmacro()
foreach(tc IN LISTS toolchains)
  foreach(opt 0 2)
    api_prog(${prog_bin}/api-${tc}-O${opt} ${api_src}/api.c ${cc_${tc}} -O${opt} ${prog_flags})
  endforeach()
endforeach()
api_prog(${prog_bin}/api-region-gcc-O2 ${api_src}/region.cpp ${SCOPE_TEST_GXX} -O2 ${prog_flags})
add_custom_target(scope_api_progs ALL DEPENDS ${api_outputs})

# api_add(TEST CASE PROGRAM): one add_test of api.py CASE.
function(api_add test case prog)
  add_test(NAME ${test}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/api.py ${case}
      --prog ${prog}
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --src ${api_src}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/${test}
      ${sanitize_args})
  set_tests_properties(${test} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;api")
endfunction()

foreach(tc IN LISTS toolchains)
  foreach(opt 0 2)
    api_add(api-regions-${tc}-O${opt} regions ${prog_bin}/api-${tc}-O${opt})
  endforeach()
endforeach()
foreach(case pause pause-filtered process started tasks unprofiled)
  api_add(api-${case} ${case} ${prog_bin}/api-gcc-O2)
endforeach()
api_add(api-cxx cxx ${prog_bin}/api-region-gcc-O2)
api_add(api-install install ${prog_bin}/api-gcc-O2)
