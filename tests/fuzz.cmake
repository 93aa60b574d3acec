# SPDX-License-Identifier: MIT
# The libFuzzer harnesses of the reader (fuzz/fuzz_reader.c), of the merge
# (fuzz/fuzz_merge.c) and of the writer's arena reading (fuzz/fuzz_arena.c),
# built with clang -fsanitize=fuzzer,address apart from the project's
# compiler, the profile harnesses' pre-check fuzz/h5walk.c (clang
# -fsanitize=address), and six tests driven by fuzz/fuzz.py:
#   fuzz-reader       fuzzes rd_check for SCOPE_FUZZ_SECONDS on a seed corpus of
#                     real profiles made at test time; fails on a finding in
#                     the reader, saving the input in fuzz/regressions/
#   fuzz-regressions  replays fuzz/regressions/ and the seeds, under ASan and
#                     through scope-report
#   fuzz-merge        fuzzes merge_profiles, each input merged with a seed,
#                     for SCOPE_FUZZ_MERGE_SECONDS; a finding is saved in
#                     fuzz/regressions/merge/
#   fuzz-merge-regressions  replays fuzz/regressions/merge/ and the seeds,
#                     under ASan and through scope-merge
#   fuzz-arena        fuzzes the arena reading of scope-writer (arena_open,
#                     modules_parse, collect, the spill) for
#                     SCOPE_FUZZ_ARENA_SECONDS on real arenas of the test
#                     programs, made small; a finding is saved in
#                     fuzz/regressions/arena/
#   fuzz-arena-regressions  replays fuzz/regressions/arena/ and the seeds,
#                     under ASan and through scope-writer --recover
# Crashes of libhdf5 itself are not scope's: see fuzz/h5check.c and
# fuzz/fuzz.py for how they are told apart, and fuzz/regressions/README.md.
# Included from tests/CMakeLists.txt, whose variables it uses.

set(SCOPE_FUZZ_SECONDS 60 CACHE STRING "How long the fuzz-reader test fuzzes, seconds")
set(SCOPE_FUZZ_ARENA_SECONDS 30 CACHE STRING "How long the fuzz-arena test fuzzes, seconds")
set(SCOPE_FUZZ_MERGE_SECONDS 30 CACHE STRING "How long the fuzz-merge test fuzzes, seconds")
set(fuzz_src ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
set(fuzz_bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
file(MAKE_DIRECTORY ${fuzz_bin})

# Whether clang links a libFuzzer target here (clang and its runtime,
# Debian's libclang-rt-14-dev, which the clang package brings).
set(fuzz_why "")
if(SCOPE_SANITIZE)
  set(fuzz_why "this is the sanitizer build; the fuzzer carries its own ASan and runs in the plain build")
elseif(NOT SCOPE_TEST_CLANG)
  set(fuzz_why "clang is not installed")
else()
  file(WRITE ${fuzz_bin}/probe.c "#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n")
  execute_process(COMMAND ${SCOPE_TEST_CLANG} -fsanitize=fuzzer,address -o ${fuzz_bin}/probe ${fuzz_bin}/probe.c
    RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_VARIABLE probe_err)
  if(NOT probe_rc EQUAL 0)
    set(fuzz_why "clang cannot link -fsanitize=fuzzer,address (install libclang-rt-14-dev): ${probe_err}")
  endif()
endif()

if(fuzz_why STREQUAL "")
  set(fuzz_defs)
  foreach(d IN LISTS HDF5_DEFINITIONS)
    list(APPEND fuzz_defs ${d})
  endforeach()
  set(fuzz_incs)
  foreach(d IN LISTS HDF5_INCLUDE_DIRS)
    list(APPEND fuzz_incs -I${d})
  endforeach()
  # Only the reader gets libFuzzer's coverage instrumentation; the harness
  # (its pre-check) is built with ASan alone, so that skipping an input
  # makes no coverage of its own.
  set(fuzz_cc ${SCOPE_TEST_CLANG} -g -O1 -fno-omit-frame-pointer -Wall -Wextra ${fuzz_defs}
    -I${PROJECT_SOURCE_DIR}/lib ${fuzz_incs})
  if(SCOPE_WERROR)
    list(APPEND fuzz_cc -Werror)
  endif()
  add_custom_command(OUTPUT ${fuzz_bin}/fuzz_reader
    COMMAND ${fuzz_cc} -fsanitize=fuzzer,address -c -o ${fuzz_bin}/reader.o ${PROJECT_SOURCE_DIR}/lib/reader.c
    COMMAND ${fuzz_cc} -fsanitize=address -c -o ${fuzz_bin}/transfer.o ${PROJECT_SOURCE_DIR}/lib/transfer.c
    COMMAND ${fuzz_cc} -fsanitize=address -c -o ${fuzz_bin}/progress.o ${PROJECT_SOURCE_DIR}/lib/progress.c
    COMMAND ${fuzz_cc} -fsanitize=address -c -o ${fuzz_bin}/h5copy.o ${PROJECT_SOURCE_DIR}/lib/h5copy.c
    COMMAND ${fuzz_cc} -fsanitize=address -c -o ${fuzz_bin}/harness.o ${fuzz_src}/fuzz_reader.c
    COMMAND ${fuzz_cc} -fsanitize=address -c -o ${fuzz_bin}/h5check.o ${fuzz_src}/h5check.c
    COMMAND ${SCOPE_TEST_CLANG} -fsanitize=fuzzer,address -o ${fuzz_bin}/fuzz_reader
      ${fuzz_bin}/harness.o ${fuzz_bin}/h5check.o ${fuzz_bin}/reader.o ${fuzz_bin}/transfer.o
      ${fuzz_bin}/progress.o ${fuzz_bin}/h5copy.o ${SCOPE_HDF5_SHARED_LIBRARIES}
    DEPENDS ${fuzz_src}/fuzz_reader.c ${fuzz_src}/h5check.c ${fuzz_src}/h5check.h
      ${PROJECT_SOURCE_DIR}/lib/reader.c ${PROJECT_SOURCE_DIR}/lib/reader.h
      ${PROJECT_SOURCE_DIR}/lib/transfer.c ${PROJECT_SOURCE_DIR}/lib/transfer.h
      ${PROJECT_SOURCE_DIR}/lib/progress.c ${PROJECT_SOURCE_DIR}/lib/progress.h
      ${PROJECT_SOURCE_DIR}/lib/h5copy.c ${PROJECT_SOURCE_DIR}/lib/h5copy.h
    COMMENT "Building the libFuzzer harness fuzz_reader with clang"
    VERBATIM)
  add_custom_target(scope_fuzz_reader ALL DEPENDS ${fuzz_bin}/fuzz_reader)

  # The merge's harness: the merge and the reader with coverage, the rest
  # of what lib/merge.c calls (writing columns, publishing, the parts) and
  # the harness with ASan alone.
  set(merge_cc ${fuzz_cc} -I${PROJECT_SOURCE_DIR}/include -DSCOPE_VERSION="${PROJECT_VERSION}")
  set(merge_cmds)
  set(merge_objs)
  set(merge_deps ${fuzz_src}/fuzz_merge.c ${fuzz_src}/h5check.c ${fuzz_src}/h5check.h)
  foreach(f merge reader chunks rle columns h5copy merge_parts parents publish map progress transfer storage schema ranks)
    if(f STREQUAL "merge" OR f STREQUAL "reader")
      set(san -fsanitize=fuzzer,address)
    else()
      set(san -fsanitize=address)
    endif()
    list(APPEND merge_cmds COMMAND ${merge_cc} ${san} -c -o ${fuzz_bin}/merge-${f}.o
      ${PROJECT_SOURCE_DIR}/lib/${f}.c)
    list(APPEND merge_objs ${fuzz_bin}/merge-${f}.o)
    list(APPEND merge_deps ${PROJECT_SOURCE_DIR}/lib/${f}.c ${PROJECT_SOURCE_DIR}/lib/${f}.h)
  endforeach()
  add_custom_command(OUTPUT ${fuzz_bin}/fuzz_merge
    ${merge_cmds}
    COMMAND ${merge_cc} -fsanitize=address -c -o ${fuzz_bin}/merge-harness.o ${fuzz_src}/fuzz_merge.c
    COMMAND ${merge_cc} -fsanitize=address -c -o ${fuzz_bin}/merge-h5check.o ${fuzz_src}/h5check.c
    COMMAND ${SCOPE_TEST_CLANG} -fsanitize=fuzzer,address -o ${fuzz_bin}/fuzz_merge
      ${fuzz_bin}/merge-harness.o ${fuzz_bin}/merge-h5check.o ${merge_objs}
      ${SCOPE_HDF5_SHARED_LIBRARIES} -ldeflate -lpthread
    DEPENDS ${merge_deps}
    COMMENT "Building the libFuzzer harness fuzz_merge with clang"
    VERBATIM)
  add_custom_target(scope_fuzz_merge ALL DEPENDS ${fuzz_bin}/fuzz_merge)

  # The pre-check: with ASan (its interceptors catch libhdf5's bad copies),
  # without coverage.
  add_custom_command(OUTPUT ${fuzz_bin}/h5walk
    COMMAND ${fuzz_cc} -fsanitize=address -o ${fuzz_bin}/h5walk ${fuzz_src}/h5walk.c
      ${PROJECT_SOURCE_DIR}/lib/schema.c ${SCOPE_HDF5_SHARED_LIBRARIES}
    DEPENDS ${fuzz_src}/h5walk.c ${PROJECT_SOURCE_DIR}/lib/schema.c ${PROJECT_SOURCE_DIR}/lib/schema.h
    COMMENT "Building the fuzzer's pre-check h5walk with clang"
    VERBATIM)
  add_custom_target(scope_fuzz_h5walk ALL DEPENDS ${fuzz_bin}/h5walk)

  # The arena harness: the writer's files that read an arena, without HDF5,
  # with coverage; the harness with ASan alone.
  set(arena_srcs arena_read collect start_order stream spill events fail phase)
  set(arena_cc ${fuzz_cc} -I${PROJECT_SOURCE_DIR}/writer -I${PROJECT_SOURCE_DIR}/include)
  set(arena_cmds)
  set(arena_objs)
  set(arena_deps ${fuzz_src}/fuzz_arena.c ${PROJECT_SOURCE_DIR}/writer/writer.h
    ${PROJECT_SOURCE_DIR}/writer/collect.h ${PROJECT_SOURCE_DIR}/writer/spill.h
    ${PROJECT_SOURCE_DIR}/include/scope/arena.h)
  foreach(f IN LISTS arena_srcs)
    list(APPEND arena_cmds COMMAND ${arena_cc} -fsanitize=fuzzer,address -c -o ${fuzz_bin}/arena-${f}.o
      ${PROJECT_SOURCE_DIR}/writer/${f}.c)
    list(APPEND arena_objs ${fuzz_bin}/arena-${f}.o)
    list(APPEND arena_deps ${PROJECT_SOURCE_DIR}/writer/${f}.c)
  endforeach()
  # and what they take from lib/: the region map
  list(APPEND arena_cmds COMMAND ${arena_cc} -fsanitize=fuzzer,address -c -o ${fuzz_bin}/arena-map.o
    ${PROJECT_SOURCE_DIR}/lib/map.c)
  list(APPEND arena_objs ${fuzz_bin}/arena-map.o)
  list(APPEND arena_deps ${PROJECT_SOURCE_DIR}/lib/map.c ${PROJECT_SOURCE_DIR}/lib/map.h)
  list(APPEND arena_cmds COMMAND ${arena_cc} -fsanitize=address -c -o ${fuzz_bin}/arena-progress.o
    ${PROJECT_SOURCE_DIR}/lib/progress.c)
  list(APPEND arena_objs ${fuzz_bin}/arena-progress.o)
  list(APPEND arena_deps ${PROJECT_SOURCE_DIR}/lib/progress.c ${PROJECT_SOURCE_DIR}/lib/progress.h)
  add_custom_command(OUTPUT ${fuzz_bin}/fuzz_arena
    ${arena_cmds}
    COMMAND ${arena_cc} -fsanitize=address -c -o ${fuzz_bin}/arena-harness.o ${fuzz_src}/fuzz_arena.c
    COMMAND ${SCOPE_TEST_CLANG} -fsanitize=fuzzer,address -o ${fuzz_bin}/fuzz_arena
      ${fuzz_bin}/arena-harness.o ${arena_objs} -lpthread
    DEPENDS ${arena_deps}
    COMMENT "Building the libFuzzer harness fuzz_arena with clang"
    VERBATIM)
  add_custom_target(scope_fuzz_arena ALL DEPENDS ${fuzz_bin}/fuzz_arena)

  foreach(mode reader regressions)
    if(mode STREQUAL "reader")
      set(action run --seconds ${SCOPE_FUZZ_SECONDS} --corpus ${fuzz_bin}/corpus)
    else()
      set(action replay)
    endif()
    add_test(NAME fuzz-${mode}
      COMMAND ${SCOPE_TEST_PYTHON} ${fuzz_src}/fuzz.py ${action}
        --fuzzer ${fuzz_bin}/fuzz_reader
        --h5walk ${fuzz_bin}/h5walk
        --bin ${PROJECT_BINARY_DIR}/bin
        --progs ${prog_bin}
        --regressions ${fuzz_src}/regressions
        --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/fuzz-${mode})
    set_tests_properties(fuzz-${mode} PROPERTIES
      SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 600 LABELS "scope;fuzz")
  endforeach()
  foreach(mode merge merge-regressions)
    if(mode STREQUAL "merge")
      set(action merge --seconds ${SCOPE_FUZZ_MERGE_SECONDS} --corpus ${fuzz_bin}/merge-corpus)
    else()
      set(action merge-replay --rdcheck $<TARGET_FILE:rdcheck>)
    endif()
    add_test(NAME fuzz-${mode}
      COMMAND ${SCOPE_TEST_PYTHON} ${fuzz_src}/fuzz.py ${action}
        --fuzzer ${fuzz_bin}/fuzz_merge
        --h5walk ${fuzz_bin}/h5walk
        --bin ${PROJECT_BINARY_DIR}/bin
        --progs ${prog_bin}
        --regressions ${fuzz_src}/regressions/merge
        --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/fuzz-${mode})
    set_tests_properties(fuzz-${mode} PROPERTIES
      SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 600 LABELS "scope;fuzz")
  endforeach()
  foreach(mode arena arena-regressions)
    if(mode STREQUAL "arena")
      set(action arena --seconds ${SCOPE_FUZZ_ARENA_SECONDS} --corpus ${fuzz_bin}/arena-corpus)
    else()
      set(action arena-replay --rdcheck $<TARGET_FILE:rdcheck>)
    endif()
    add_test(NAME fuzz-${mode}
      COMMAND ${SCOPE_TEST_PYTHON} ${fuzz_src}/fuzz.py ${action}
        --fuzzer ${fuzz_bin}/fuzz_arena
        --bin ${PROJECT_BINARY_DIR}/bin
        --lib ${PROJECT_BINARY_DIR}/lib
        --progs ${prog_bin}
        --regressions ${fuzz_src}/regressions/arena
        --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/fuzz-${mode})
    set_tests_properties(fuzz-${mode} PROPERTIES
      SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 300 LABELS "scope;fuzz")
  endforeach()
else()
  message(STATUS "tests: the fuzz tests are skipped: ${fuzz_why}")
  foreach(mode reader regressions merge merge-regressions arena arena-regressions)
    add_test(NAME fuzz-${mode} COMMAND sh -c "echo \"SKIP fuzz-${mode}: $1\"; exit ${SCOPE_TEST_SKIP}" sh "${fuzz_why}")
    set_tests_properties(fuzz-${mode} PROPERTIES SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} LABELS "scope;fuzz")
  endforeach()
endif()
