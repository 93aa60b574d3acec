/* SPDX-License-Identifier: MIT */
/*
 * Threads whose calls interleave: each runs the same recursion, the same
 * leaves and the same writes, so that the calls of one function come from
 * several lanes in turn, and a recursion is open on several lanes at once.
 * The main thread runs the same work beside them.
 *
 * Prints "calls NAME=N" for each function. Usage: r_lanes THREADS ROUNDS.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "progs.h"

#define DEPTH	 6 /* calls of rec a round: rec(5) down to rec(0) */
#define IO_EVERY 64

volatile unsigned long lanes_sink;
static FILE *out;

NOINLINE unsigned rec(unsigned n)
{
	return n ? rec(n - 1) + 1 : 0;
}

NOINLINE void leaf(void)
{
	lanes_sink++;
}

NOINLINE void io(void)
{
	static const char line[64] = "a line the threads write, so that calls move bytes\n";
	fwrite(line, 1, sizeof line, out);
}

NOINLINE void *lane(void *arg)
{
	long rounds = (long)arg;

	for (long r = 0; r < rounds; r++) {
		lanes_sink += rec(DEPTH - 1);
		leaf();
		leaf();
		if (r % IO_EVERY == 0)
			io();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 3;
	long rounds = argc > 2 ? atol(argv[2]) : 20000;
	pthread_t t[64];

	if (threads < 0 || threads > 64 || rounds < 1) {
		fprintf(stderr, "usage: r_lanes THREADS(0-64) ROUNDS\n");
		return 2;
	}
	if (!(out = fopen("/dev/null", "w")))
		return 1;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, lane, (void *)rounds);
	lane((void *)rounds);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	fclose(out);
	long lanes = threads + 1;
	printf("calls main=1\ncalls lane=%ld\ncalls rec=%ld\ncalls leaf=%ld\ncalls io=%ld\n", lanes,
	       lanes * rounds * DEPTH, lanes * rounds * 2,
	       lanes * ((rounds + IO_EVERY - 1) / IO_EVERY));
	return 0;
}
