/* SPDX-License-Identifier: MIT */
/* Checks for the unit tests of scope's pure functions: a failure names the call, what it wanted and
 * what it got. */
#ifndef SCOPE_TESTS_UNIT_H
#define SCOPE_TESTS_UNIT_H

#include <stdint.h>

/*
 * Each EXPECT_* compares a value with what it should be, exactly; the
 * arguments after the two values say the call, printf-style:
 *
 *   EXPECT_I64(-1, storage_parse(&s, "gzip:10"), "storage_parse(\"%s\")", "gzip:10");
 *
 * prints, when it fails,
 *
 *   FAIL storage.c:12: storage_parse("gzip:10"): expected -1, got 0
 */
#define EXPECT_I64(want, got, ...) unit_i64(__FILE__, __LINE__, (want), (got), __VA_ARGS__)
#define EXPECT_U64(want, got, ...) unit_u64(__FILE__, __LINE__, (want), (got), __VA_ARGS__)
#define EXPECT_DBL(want, got, ...) unit_dbl(__FILE__, __LINE__, (want), (got), __VA_ARGS__)
/* Strings compared byte for byte; NULL is a value of its own. */
#define EXPECT_STR(want, got, ...) unit_str(__FILE__, __LINE__, (want), (got), __VA_ARGS__)

void unit_i64(const char *file, int line, int64_t want, int64_t got, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void unit_u64(const char *file, int line, uint64_t want, uint64_t got, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void unit_dbl(const char *file, int line, double want, double got, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void unit_str(const char *file, int line, const char *want, const char *got, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* The groups, one per file of tests; unit.c lists them. */
void unit_storage(void);
void unit_format(void);
void unit_names(void);
void unit_columns(void);
void unit_tick(void);
void unit_spill(void);
void unit_errors(void);
void unit_map(void);
void unit_sort(void);
void unit_rle(void);
void unit_tunables(void);

#endif
