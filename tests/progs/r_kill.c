/* SPDX-License-Identifier: MIT */
/*
 * A program to be killed with SIGKILL: it calls tick() in a loop, writes
 * its pid and the address of tick() into READY (via a temporary name and a
 * rename) once it has made N calls, and goes on calling tick() until it is killed (or gives up
 * after 60 s, exit status 3).
 *
 * Usage: r_kill READY N [THREADS]. With THREADS > 0, that many threads
 * tick too, each N times before READY is written.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

static unsigned long n_tick[17];
static long target;
static int ready_threads;

NOINLINE void tick(int k)
{
	n_tick[k]++;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE void *ticker(void *arg)
{
	int k = (int)(intptr_t)arg;
	for (long i = 0; i < target; i++)
		tick(k);
	__atomic_fetch_add(&ready_threads, 1, __ATOMIC_RELEASE);
	for (;;)
		tick(k);
	return NULL;
}

NOINLINE void loop(const char *ready, int threads)
{
	char tmp[4096];
	FILE *f;
	double give_up = now() + 60;

	for (long i = 0; i < target; i++)
		tick(0);
	while (__atomic_load_n(&ready_threads, __ATOMIC_ACQUIRE) < threads)
		tick(0);
	snprintf(tmp, sizeof tmp, "%s.tmp", ready);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d %#lx\n", (int)getpid(), (unsigned long)(uintptr_t)&tick) < 0 ||
	    fclose(f) != 0 || rename(tmp, ready) != 0)
		exit(1);
	while (now() < give_up)
		for (int i = 0; i < 1000; i++)
			tick(0);
	exit(3);
}

int main(int argc, char **argv)
{
	int threads = argc > 3 ? atoi(argv[3]) : 0;
	pthread_t t;

	if (argc < 3 || threads < 0 || threads > 16) {
		fprintf(stderr, "usage: %s READY N [THREADS<=16]\n", argv[0]);
		return 64;
	}
	target = atol(argv[2]);
	for (int k = 1; k <= threads; k++)
		if (pthread_create(&t, NULL, ticker, (void *)(intptr_t)k) != 0)
			return 1;
	loop(argv[1], threads);
	return 0;
}
