/* SPDX-License-Identifier: MIT */
/* Runs the unit tests of scope's pure functions, by group: one summary line, or one line per
 * failure. */
#include "unit.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct group {
	const char *name;
	void (*run)(void);
} groups[] = {
	{"columns", unit_columns}, {"errors", unit_errors},	{"format", unit_format},
	{"map", unit_map},	   {"names", unit_names},	{"rle", unit_rle},
	{"sort", unit_sort},	   {"spill", unit_spill},	{"storage", unit_storage},
	{"tick", unit_tick},	   {"tunables", unit_tunables},
};
#define NGROUPS (sizeof groups / sizeof groups[0])

static unsigned long checks, failures;

/* One failure: where, the call (FMT, AP), what was wanted and what came. */
static void failed(const char *file, int line, const char *want, const char *got, const char *fmt,
		   va_list ap)
{
	const char *base = strrchr(file, '/');

	failures++;
	printf("FAIL %s:%d: ", base ? base + 1 : file, line);
	vprintf(fmt, ap);
	printf(": expected %s, got %s\n", want, got);
}

void unit_i64(const char *file, int line, int64_t want, int64_t got, const char *fmt, ...)
{
	char w[32], g[32];
	va_list ap;

	checks++;
	if (want == got)
		return;
	snprintf(w, sizeof w, "%" PRId64, want);
	snprintf(g, sizeof g, "%" PRId64, got);
	va_start(ap, fmt);
	failed(file, line, w, g, fmt, ap);
	va_end(ap);
}

void unit_u64(const char *file, int line, uint64_t want, uint64_t got, const char *fmt, ...)
{
	char w[32], g[32];
	va_list ap;

	checks++;
	if (want == got)
		return;
	snprintf(w, sizeof w, "%" PRIu64, want);
	snprintf(g, sizeof g, "%" PRIu64, got);
	va_start(ap, fmt);
	failed(file, line, w, g, fmt, ap);
	va_end(ap);
}

void unit_dbl(const char *file, int line, double want, double got, const char *fmt, ...)
{
	char w[40], g[40];
	va_list ap;

	checks++;
	if (want == got)
		return;
	snprintf(w, sizeof w, "%.17g", want);
	snprintf(g, sizeof g, "%.17g", got);
	va_start(ap, fmt);
	failed(file, line, w, g, fmt, ap);
	va_end(ap);
}

/* S quoted as C would write it, bytes outside printable ASCII as \xNN, into buf. */
static const char *quoted(char *buf, size_t cap, const char *s)
{
	size_t k = 0;

	if (!s)
		return "NULL";
	buf[k++] = '"';
	for (; *s && k + 6 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			buf[k++] = '\\';
		if (c >= 0x20 && c < 0x7f)
			buf[k++] = (char)c;
		else
			k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", c);
	}
	buf[k++] = '"';
	buf[k] = '\0';
	return buf;
}

void unit_str(const char *file, int line, const char *want, const char *got, const char *fmt, ...)
{
	char w[512], g[512];
	va_list ap;

	checks++;
	if (want == got || (want && got && strcmp(want, got) == 0))
		return;
	va_start(ap, fmt);
	failed(file, line, quoted(w, sizeof w, want), quoted(g, sizeof g, got), fmt, ap);
	va_end(ap);
}

static const struct group *find(const char *name)
{
	for (size_t i = 0; i < NGROUPS; i++)
		if (strcmp(groups[i].name, name) == 0)
			return &groups[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const char *what = "all groups";

	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < NGROUPS; i++)
			puts(groups[i].name);
		return 0;
	}
	for (int i = 1; i < argc; i++)
		if (!find(argv[i])) {
			fprintf(stderr, "unit: no group '%s'; unit --list names them\n", argv[i]);
			return 2;
		}
	if (argc == 1)
		for (size_t i = 0; i < NGROUPS; i++)
			groups[i].run();
	for (int i = 1; i < argc; i++)
		find(argv[i])->run();
	if (argc == 2)
		what = argv[1];
	else if (argc > 2)
		what = "the groups named";
	if (failures) {
		printf("FAIL unit %s: %lu of %lu checks failed\n", what, failures, checks);
		return 1;
	}
	printf("PASS unit %s: %lu checks\n", what, checks);
	return 0;
}
