/* SPDX-License-Identifier: MIT */
/* Calls of an empty function, in rounds, each after the same loop run with the hooks off (a copy
 * not instrumented) and timed by the program: what the instrumented loop costs without recording,
 * for scope-report --compensate to come close to. */
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

static NOINSTR long long now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * overhead [CALLS [ROUNDS]]: prints "plain NS CPU OFF" for each round: NS
 * and CPU the uninstrumented loop's wall and CPU time, OFF how long the
 * thread was off its core (preempted) during the instrumented loop, its wall
 * time less its CPU time, all in ns.
 */
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;

	for (int r = 0; r < rounds; r++) {
		long long w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		loop_plain(n);
		long long w1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		loop(n);
		long long w2 = now_ns(CLOCK_MONOTONIC), c2 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		printf("plain %lld %lld %lld\n", w1 - w0, c1 - c0, (w2 - w1) - (c2 - c1));
	}
	return 0;
}
