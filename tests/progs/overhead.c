/* SPDX-License-Identifier: MIT */
/* 10^6 calls of an empty function, in ROUNDS rounds, each after the same loop run with the hooks
 * off (a copy not instrumented) and timed by the program: what the instrumented loop costs
 * without recording, for scope-report --compensate to come close to. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "progs.h"

#define NOINSTR __attribute__((no_instrument_function))

NOINLINE void empty(void)
{
	__asm__ volatile("");
}

NOINLINE NOINSTR void empty_plain(void)
{
	__asm__ volatile("");
}

NOINLINE void loop(long n)
{
	for (long i = 0; i < n; i++)
		empty();
}

NOINLINE NOINSTR void loop_plain(long n)
{
	for (long i = 0; i < n; i++)
		empty_plain();
}

static NOINSTR long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* overhead [CALLS [ROUNDS]]: prints "plain NS" for each round's uninstrumented loop. */
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;

	for (int r = 0; r < rounds; r++) {
		long long t0 = now_ns();
		loop_plain(n);
		long long t1 = now_ns();
		printf("plain %lld\n", t1 - t0);
		loop(n);
	}
	return 0;
}
