/* SPDX-License-Identifier: MIT */
/* The C library's settings the writer runs with: malloc's memory in transparent huge pages. */
#include "writer_tunables.h"

#include <stdio.h>
#include <string.h>

#define NAME "GLIBC_TUNABLES="

int is_tunables(const char *entry)
{
	return strncmp(entry, NAME, sizeof NAME - 1) == 0;
}

const char *writer_tunables(const char *entry, char *buf, size_t cap)
{
	const char *had = entry ? entry + sizeof NAME - 1 : "";
	int n = snprintf(buf, cap, NAME "%s%s" WRITER_TUNABLE, had, *had ? ":" : "");

	return n > 0 && (size_t)n < cap ? buf : entry;
}
