# MPI jobs: every rank profiled, MPI calls as regions, one file per job.
# Built and run once with Debian's Open MPI (tests mpi-*) and once with its
# MPICH and the Hydra launcher (mpich-*): the library's wrappers take both
# ABIs (MPICH's integer handles, its own MPI_STATUS_IGNORE and
# MPI_COMM_WORLD). Debian installs MPICH beside Open MPI as mpicc.mpich and
# mpirun.mpich; Open MPI stays mpicc and mpirun.

# mpi_tests(NAME FLAVOUR MPICC CASES...): ring.c and calls.c built with
# MPICC as NAME-ring and NAME-calls, and one test NAME-CASE of mpi.py per case.
function(mpi_tests name flavour mpicc)
  foreach(src ring calls)
    scope_test_prog(${prog_bin}/${name}-${src} ${CMAKE_CURRENT_SOURCE_DIR}/mpi/${src}.c ${mpicc}
      -O2 ${prog_flags} -Wno-stringop-overflow)
  endforeach()
  add_custom_target(scope_test_${name} ALL DEPENDS ${prog_bin}/${name}-ring ${prog_bin}/${name}-calls)
  foreach(case IN LISTS ARGN)
    set(prog ${prog_bin}/${name}-ring)
    if(case STREQUAL "nompi")
      set(prog ${prog_bin}/fib-gcc-O2)
    elseif(case STREQUAL "calls")
      set(prog ${prog_bin}/${name}-calls)
    endif()
    add_test(NAME ${name}-${case}
      COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/mpi.py ${case} --mpi ${flavour}
        --prog ${prog} --bin ${PROJECT_BINARY_DIR}/bin --lib ${PROJECT_BINARY_DIR}/lib
        --src ${prog_src} --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/${name}-${case} ${sanitize_args})
    set_tests_properties(${name}-${case} PROPERTIES
      SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 180 LABELS "scope;mpi" RUN_SERIAL TRUE)
  endforeach()
endfunction()

find_program(SCOPE_TEST_MPICC mpicc)
find_program(SCOPE_TEST_MPIRUN mpirun)
if(SCOPE_TEST_MPICC AND SCOPE_TEST_MPIRUN)
  mpi_tests(mpi openmpi ${SCOPE_TEST_MPICC} ring nompi kill calls singleton preload plain rerun)
  # not a test: what a wrapped call costs (README, "MPI jobs")
  scope_test_prog(${prog_bin}/mpi-sendloop ${CMAKE_CURRENT_SOURCE_DIR}/mpi/sendloop.c
    ${SCOPE_TEST_MPICC} -O2 -g)
  add_custom_target(scope_test_mpi_sendloop ALL DEPENDS ${prog_bin}/mpi-sendloop)
else()
  message(STATUS "tests: no mpicc/mpirun (Debian: openmpi-bin, libopenmpi-dev), the MPI tests are not run")
endif()

find_program(SCOPE_TEST_MPICC_MPICH mpicc.mpich)
find_program(SCOPE_TEST_MPIRUN_MPICH mpirun.mpich)
if(SCOPE_TEST_MPICC_MPICH AND SCOPE_TEST_MPIRUN_MPICH)
  mpi_tests(mpich mpich ${SCOPE_TEST_MPICC_MPICH} ring calls kill singleton plain)
else()
  message(STATUS "tests: no mpicc.mpich/mpirun.mpich (Debian: mpich, libmpich-dev), the MPICH tests are not run")
endif()
