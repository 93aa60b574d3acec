/* SPDX-License-Identifier: MIT */
/* Phase timings of the writer and merger, for their benchmarks. */
#include "writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* SCOPE_WRITER_TIMES=1: how long each phase took, on stderr. */
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
		fprintf(stderr, "scope-writer: %-8s %8.3f ms\n", name, (t - last) * 1e3);
	last = t;
}
