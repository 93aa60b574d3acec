# SPDX-License-Identifier: MIT
# The robustness cases of robust.py: processes, signals, kill -9, non-local
# exits, threads, unloaded libraries, descriptors and full disks (issue 3).
# Included at the end of tests/CMakeLists.txt, whose glob already builds
# progs/r_*.c and r_*.cpp for every toolchain and optimisation level; this
# file adds the two shared libraries r_dl.c loads (r_dl.c itself, built with
# -DR_DL_PLUGIN=N -fPIC -shared) and registers the cases, named r-CASE[-TC-OPT].
# r_dl needs no -ldl: dlopen and dlinfo are in libc since glibc 2.34.

set(robust_saved_outputs ${prog_outputs})
set(prog_outputs)
foreach(tc IN LISTS toolchains)
  foreach(opt 0 2)
    set(dir ${prog_bin}/r_dl-${tc}-O${opt}.libs)
    file(MAKE_DIRECTORY ${dir})
    foreach(n 1 2)
      scope_test_prog(${dir}/libr_dl${n}.so ${prog_src}/r_dl.c ${cc_${tc}}
        -O${opt} ${prog_flags} -fPIC -shared -DR_DL_PLUGIN=${n})
    endforeach()
  endforeach()
endforeach()
add_custom_target(scope_robust_libs ALL DEPENDS ${prog_outputs})
set(prog_outputs ${robust_saved_outputs})

# robust_add(TEST CASE PROGRAM [ARGS...]): one add_test of robust.py CASE.
function(robust_add test case prog)
  add_test(NAME ${test}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/robust.py ${case}
      --prog ${prog}
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --src ${prog_src}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/${test}
      ${sanitize_args} ${ARGN})
  set_tests_properties(${test} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 180 LABELS "scope;robust")
endfunction()

# CASE:PROGRAM, for every toolchain and optimisation level: the scenarios
# whose instrumented code the compiler shapes (issue 3's third-party list).
set(robust_variant_cases
  fork:r_proc vfork-execl:r_proc daemon:r_proc exit-nested:r_proc
  raise:r_sig sigprof:r_sig
  longjmp:r_jump longjmp-depth:r_jump except:r_except except-depth:r_except
  tsd:r_thr preinit:r_preinit dlclose:r_dl)
foreach(tc IN LISTS toolchains)
  foreach(opt 0 2)
    foreach(entry IN LISTS robust_variant_cases)
      string(REPLACE ":" ";" entry ${entry})
      list(GET entry 0 case)
      list(GET entry 1 prog)
      set(extra)
      if(prog STREQUAL "r_dl")
        set(extra --plugins ${prog_bin}/r_dl-${tc}-O${opt}.libs)
      endif()
      robust_add(r-${case}-${tc}-O${opt} ${case} ${prog_bin}/${prog}-${tc}-O${opt} ${extra})
    endforeach()
  endforeach()
endforeach()

# Cases about the profiler rather than the compiler: once, on gcc -O2.
set(robust_once_cases
  fork-exec:r_proc spawn:r_proc system:r_proc batch-merge:r_proc rewrite-same:r_proc exec-self:r_proc exec-fail:r_proc orphan:r_proc evict:r_proc
  underscore-exit:r_proc fork-exit:r_proc merge:r_proc swapcontext:r_ctx
  fatal:r_sig late-handler:r_sig late-handler-preload:r_sig late-handler-exit:r_sig late-term:r_sig
  early-handler:r_sig
  kill9:r_kill kill9-detail:r_kill kill9-preload:r_kill
  threads-many:r_thr threads-many-rss:r_thr threads-detached:r_thr threads-running:r_thr threads-ctor:r_thr threads-names:r_thr
  dlkeep:r_dl
  fds-closeall:r_fds fds-dup2:r_fds fds-cloexec:r_fds
  disk-output:r_fds disk-tmpdir-full:r_fds disk-tmpdir-small:r_fds disk-tables-full:r_thr arena-full:r_fds arena-full-miscounted:r_fds
  spill-threads:threads spill-sigprof:r_sig spill-disk-full:r_fds spill-fallback:r_fds
  writer-memory:r_fds
  tail-recycle:calls tail-copies:calls tail-kill9:r_kill tail-writer-killed:calls
  tail-grouped:calls tail-grouped-threads:r_later tail-grouped-lanes:r_lanes tail-grouped-kill9:r_kill
  lanes-merged:r_lanes lanes-wide:r_wide)
foreach(entry IN LISTS robust_once_cases)
  string(REPLACE ":" ";" entry ${entry})
  list(GET entry 0 case)
  list(GET entry 1 prog)
  set(extra)
  if(prog STREQUAL "r_dl")
    set(extra --plugins ${prog_bin}/r_dl-gcc-O2.libs)
  endif()
  robust_add(r-${case} ${case} ${prog_bin}/${prog}-gcc-O2 ${extra})
endforeach()
