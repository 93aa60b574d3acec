/* SPDX-License-Identifier: MIT */
/* "hybrid N [MS]": main -> work -> tiny x N, then work -> slow x3 (MS each, default 2) -> tiny. */
#include <stdlib.h>
#include <time.h>

#include "progs.h"

volatile unsigned long hybrid_sink;

NOINLINE void tiny(void)
{
	hybrid_sink++;
}

/* Spins (no system call that could be a region) for ms milliseconds. */
NOINLINE void slow(long ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while (progs_ns_between(&a, &b) < ms * 1000000L);
	tiny();
}

NOINLINE void work(long n, long ms)
{
	for (long i = 0; i < n; i++)
		tiny();
	for (int i = 0; i < 3; i++)
		slow(ms);
}

int main(int argc, char **argv)
{
	work(argc > 1 ? atol(argv[1]) : 1000, argc > 2 ? atol(argv[2]) : 2);
	return 0;
}
