/* SPDX-License-Identifier: MIT */
/*
 * Deep and long-open calls: a recursion 100,000 levels deep, and threads
 * whose recursions keep calls open across many chunks while making
 * millions of leaf calls.
 *
 * Usage:
 *   r_deep deep N           main calls dive(N): dive at depths 1 to N+1,
 *                           then leaf once at N+2 (main is at 0)
 *   r_deep nested T D L R   T threads; each runs R times a recursion of D
 *                           levels (nest), each level calling leaf L times
 *                           before going deeper and L times after
 *
 * Prints "calls NAME=N ..." and "hwm_kib=N": its own peak resident memory
 * (VmHWM; getrusage's ru_maxrss also counts the image it was exec'd from).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "progs.h"

#define NOINSTR __attribute__((no_instrument_function))

volatile unsigned long deep_sink;
static unsigned nest_depth, nest_leaves, nest_rounds;

NOINLINE void leaf(void)
{
	deep_sink++;
}

NOINLINE unsigned long dive(unsigned n)
{
	if (n == 0) {
		leaf();
		return 0;
	}
	return dive(n - 1) + 1;
}

NOINLINE void nest(unsigned level)
{
	for (unsigned i = 0; i < nest_leaves; i++)
		leaf();
	if (level < nest_depth)
		nest(level + 1);
	for (unsigned i = 0; i < nest_leaves; i++)
		leaf();
}

NOINLINE void *nester(void *arg)
{
	(void)arg;
	for (unsigned r = 0; r < nest_rounds; r++)
		nest(1);
	return NULL;
}

static NOINSTR long peak_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* The main thread's stack grows on demand up to RLIMIT_STACK, read when it
 * grows: raised here, the recursion fits. */
static NOINSTR void big_stack(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < (256ul << 20)) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= (256ul << 20)
				      ? (256ul << 20)
				      : rl.rlim_max;
		setrlimit(RLIMIT_STACK, &rl);
	}
}

static NOINSTR int mode_deep(unsigned n)
{
	unsigned long d;

	big_stack();
	d = dive(n);
	printf("calls dive=%u leaf=1 main=1\n", n + 1);
	printf("returned=%lu\n", d);
	return 0;
}

static NOINSTR int mode_nested(unsigned threads, unsigned depth, unsigned leaves, unsigned rounds)
{
	pthread_t t[64];
	unsigned long per = (unsigned long)rounds * depth;

	if (threads == 0 || threads > 64)
		return 2;
	nest_depth = depth;
	nest_leaves = leaves;
	nest_rounds = rounds;
	for (unsigned i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, nester, NULL) != 0)
			return 1;
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("calls nester=%u nest=%lu leaf=%lu main=1\n", threads, per * threads,
	       per * threads * 2 * leaves);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;

	if (argc == 3 && strcmp(argv[1], "deep") == 0)
		rc = mode_deep((unsigned)strtoul(argv[2], NULL, 10));
	else if (argc == 6 && strcmp(argv[1], "nested") == 0)
		rc = mode_nested(
			(unsigned)strtoul(argv[2], NULL, 10), (unsigned)strtoul(argv[3], NULL, 10),
			(unsigned)strtoul(argv[4], NULL, 10), (unsigned)strtoul(argv[5], NULL, 10));
	else
		fprintf(stderr, "usage: r_deep deep N | nested THREADS DEPTH LEAVES ROUNDS\n");
	printf("hwm_kib=%ld\n", peak_kib());
	return rc;
}
