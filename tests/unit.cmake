# SPDX-License-Identifier: MIT
# The unit tests of scope's pure functions (unit/): one program, `unit`, and
# one test per group of it, unit-GROUP; `unit --list` names the groups, which
# cases-agree holds against the tests. The writer's files under test are
# compiled into it from writer/, as fuzz.cmake does for the arena harness, and
# reached only through writer.h, spill.h and lib/columns.h. Included from
# tests/CMakeLists.txt.

set(unit_writer arena_read collect events fail phase spill start_order stream)
set(unit_srcs unit/unit.c unit/columns.c unit/errors.c unit/format.c unit/map.c unit/names.c unit/rle.c unit/sort.c
  unit/spill.c unit/storage.c unit/tick.c unit/tunables.c)
foreach(f IN LISTS unit_writer)
  list(APPEND unit_srcs ${PROJECT_SOURCE_DIR}/writer/${f}.c)
endforeach()
add_executable(unit ${unit_srcs})
target_include_directories(unit PRIVATE ${PROJECT_SOURCE_DIR}/writer ${PROJECT_SOURCE_DIR}/include
  ${HDF5_INCLUDE_DIRS})
target_link_libraries(unit PRIVATE scope_write scope_common ${HDF5_C_LIBRARIES} PkgConfig::LIBDEFLATE ZLIB::ZLIB Threads::Threads)
set_target_properties(unit PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

set(unit_groups columns errors format map names rle sort spill storage tick tunables)
foreach(group IN LISTS unit_groups)
  # spill makes its (unnamed) temporary files in the working directory
  add_test(NAME unit-${group} COMMAND unit ${group} WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(unit-${group} PROPERTIES TIMEOUT 60 LABELS "scope;unit")
endforeach()
