/* SPDX-License-Identifier: MIT */
/* Phase timings of the writer and merger, for their benchmarks. */
#include "writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A /proc/self/status value in kB (VmRSS: resident now, VmHWM: its peak), as MiB. */
static double status_mib(const char *key)
{
	char line[256];
	double kb = 0;
	size_t len = strlen(key);
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, key, len) == 0 && line[len] == ':')
			kb = strtod(line + len + 1, NULL);
	if (f)
		fclose(f);
	return kb / 1024;
}

/* SCOPE_WRITER_TIMES=1: how long each phase took, and the resident memory
 * at its end and at its peak so far, on stderr. */
void phase(const char *name)
{
	static double last;
	static int on = -1;
	struct timespec ts;
	double t;

	if (on < 0)
		on = getenv("SCOPE_WRITER_TIMES") != NULL;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	if (on && last > 0)
		fprintf(stderr, "scope-writer: %-8s %8.3f ms %8.1f MiB, peak %.1f MiB\n", name,
			(t - last) * 1e3, status_mib("VmRSS"), status_mib("VmHWM"));
	last = t;
}
