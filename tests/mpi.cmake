# MPI jobs (Debian's Open MPI): every rank profiled, one file per job.
find_program(SCOPE_TEST_MPICC mpicc)
find_program(SCOPE_TEST_MPIRUN mpirun)
if(SCOPE_TEST_MPICC AND SCOPE_TEST_MPIRUN)
  scope_test_prog(${prog_bin}/mpi-ring ${CMAKE_CURRENT_SOURCE_DIR}/mpi/ring.c ${SCOPE_TEST_MPICC}
    -O2 ${prog_flags})
  scope_test_prog(${prog_bin}/mpi-calls ${CMAKE_CURRENT_SOURCE_DIR}/mpi/calls.c ${SCOPE_TEST_MPICC}
    -O2 ${prog_flags})
  # not a test: what a wrapped call costs (README, "MPI jobs")
  scope_test_prog(${prog_bin}/mpi-sendloop ${CMAKE_CURRENT_SOURCE_DIR}/mpi/sendloop.c
    ${SCOPE_TEST_MPICC} -O2 -g)
  add_custom_target(scope_test_mpi ALL
    DEPENDS ${prog_bin}/mpi-ring ${prog_bin}/mpi-calls ${prog_bin}/mpi-sendloop)
  foreach(case ring nompi kill calls singleton preload plain rerun)
    set(prog ${prog_bin}/mpi-ring)
    if(case STREQUAL "nompi")
      set(prog ${prog_bin}/fib-gcc-O2)
    elseif(case STREQUAL "calls")
      set(prog ${prog_bin}/mpi-calls)
    endif()
    add_test(NAME mpi-${case}
      COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/mpi.py ${case}
        --prog ${prog} --bin ${PROJECT_BINARY_DIR}/bin --lib ${PROJECT_BINARY_DIR}/lib
        --src ${prog_src} --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/mpi-${case} ${sanitize_args})
    set_tests_properties(mpi-${case} PROPERTIES
      SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 180 LABELS "scope;mpi" RUN_SERIAL TRUE)
  endforeach()
else()
  message(STATUS "tests: no mpicc/mpirun (Debian: openmpi-bin, libopenmpi-dev), the MPI tests are not run")
endif()

# The same jobs built with MPICH and run by its Hydra launcher: the
# library's wrappers take MPICH's ABI (integer handles, its own
# MPI_STATUS_IGNORE and MPI_COMM_WORLD). Debian installs MPICH beside Open
# MPI as mpicc.mpich and mpirun.mpich.
find_program(SCOPE_TEST_MPICC_MPICH mpicc.mpich)
find_program(SCOPE_TEST_MPIRUN_MPICH mpirun.mpich)
if(SCOPE_TEST_MPICC_MPICH AND SCOPE_TEST_MPIRUN_MPICH)
  foreach(prog ring calls)
    scope_test_prog(${prog_bin}/mpich-${prog} ${CMAKE_CURRENT_SOURCE_DIR}/mpi/${prog}.c
      ${SCOPE_TEST_MPICC_MPICH} -O2 ${prog_flags} -Wno-stringop-overflow)
  endforeach()
  add_custom_target(scope_test_mpich ALL DEPENDS ${prog_bin}/mpich-ring ${prog_bin}/mpich-calls)
  foreach(case ring calls kill singleton plain)
    set(prog ${prog_bin}/mpich-ring)
    if(case STREQUAL "calls")
      set(prog ${prog_bin}/mpich-calls)
    endif()
    add_test(NAME mpich-${case}
      COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/mpi.py ${case} --mpi mpich
        --prog ${prog} --bin ${PROJECT_BINARY_DIR}/bin --lib ${PROJECT_BINARY_DIR}/lib
        --src ${prog_src} --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/mpich-${case} ${sanitize_args})
    set_tests_properties(mpich-${case} PROPERTIES
      SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 180 LABELS "scope;mpi" RUN_SERIAL TRUE)
  endforeach()
else()
  message(STATUS "tests: no mpicc.mpich/mpirun.mpich (Debian: mpich, libmpich-dev), the MPICH tests are not run")
endif()
