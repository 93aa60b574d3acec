# SPDX-License-Identifier: MIT
# The cases of schema.py (lib/schema.h's table against docs/SCHEMA.md and
# against profiles the writer and the merge wrote), registered as schema-CASE. Included
# from tests/CMakeLists.txt, whose variables it uses.

# scope-schema-dump: the table, printed for the test; never installed.
add_executable(scope-schema-dump schema_dump.c)
target_link_libraries(scope-schema-dump PRIVATE scope_common)
set_target_properties(scope-schema-dump PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# CASE:PROGRAM
foreach(entry docs:chain copies:chain profile:chain merged:r_proc symbolized:r_proc)
  string(REPLACE ":" ";" entry ${entry})
  list(GET entry 0 case)
  list(GET entry 1 prog)
  add_test(NAME schema-${case}
    COMMAND ${SCOPE_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/schema.py ${case}
      --dump $<TARGET_FILE:scope-schema-dump>
      --doc ${PROJECT_SOURCE_DIR}/docs/SCHEMA.md
      --prog ${prog_bin}/${prog}-gcc-O2
      --bin ${PROJECT_BINARY_DIR}/bin
      --lib ${PROJECT_BINARY_DIR}/lib
      --src ${prog_src}
      --workdir ${CMAKE_CURRENT_BINARY_DIR}/work/schema-${case}
      ${sanitize_args})
  set_tests_properties(schema-${case} PROPERTIES
    SKIP_RETURN_CODE ${SCOPE_TEST_SKIP} TIMEOUT 180 LABELS "scope;schema")
endforeach()
