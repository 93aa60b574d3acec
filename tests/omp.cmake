# SPDX-License-Identifier: MIT
# The cases of omp.py: OpenMP explicit tasks as task lanes through OMPT (clang
# with LLVM's libomp), and GCC's libgomp, which has no OMPT, recorded as
# threads only. Included from tests/CMakeLists.txt; omp/tasks.c needs
# -fopenmp, so it is built here, not by the progs/ glob.

set(omp_src ${CMAKE_CURRENT_SOURCE_DIR}/omp/tasks.c)
set(omp_outputs)
set(omp_builds)
# omp_prog(NAME COMPILER FLAGS...): omp/tasks.c built as progs/NAME.
macro(omp_prog name compiler)
  add_custom_command(OUTPUT ${prog_bin}/${name}
    COMMAND ${compiler} ${ARGN} -fopenmp -o ${prog_bin}/${name} ${omp_src}
    DEPENDS ${omp_src} ${prog_src}/progs.h
    COMMENT "Building test program ${name}"
    VERBATIM)
  list(APPEND omp_outputs ${prog_bin}/${name})
  list(APPEND omp_builds ${name})
endmacro()

# Whether COMPILER builds and links an OpenMP program here (clang needs
# libomp-dev).
function(omp_works compiler var)
  set(probe ${CMAKE_CURRENT_BINARY_DIR}/omp-probe.c)
  file(WRITE ${probe} "#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
  execute_process(COMMAND ${compiler} -fopenmp -o ${probe}.out ${probe}
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    set(${var} ON PARENT_SCOPE)
  else()
    set(${var} OFF PARENT_SCOPE)
  endif()
endfunction()

set(omp_clang OFF)
if(SCOPE_TEST_CLANG)
  omp_works(${SCOPE_TEST_CLANG} omp_clang)
endif()
omp_works(${SCOPE_TEST_GCC} omp_gcc)
if(omp_clang)
  foreach(opt 0 2)
    omp_prog(omp-clang-O${opt} ${SCOPE_TEST_CLANG} -O${opt} ${prog_flags})
  endforeach()
else()
  message(STATUS "tests: clang -fopenmp does not build (libomp-dev), the OMPT cases are skipped")
endif()
if(omp_gcc)
  omp_prog(omp-gcc-O2 ${SCOPE_TEST_GCC} -O2 ${prog_flags})
endif()
add_custom_target(scope_omp_progs ALL DEPENDS ${omp_outputs})

function(omp_add test case prog)
  add_test(NAME ${test}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/omp.py ${case}
      --prog ${prog_bin}/${prog}
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/${test}
      ${sanitize_args})
  set_tests_properties(${test} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;omp")
endfunction()

# Registered whether or not the program could be built: the case then
# skips, saying why.
foreach(opt 0 2)
  omp_add(omp-tasks-clang-O${opt} ompt omp-clang-O${opt})
endforeach()
omp_add(omp-libgomp libgomp omp-gcc-O2)
