/* SPDX-License-Identifier: MIT */
/* bench/api: the cost of an instrumented call, a named region, a counted call and an OpenMP task,
 * timed inside the program. */
//
// Build: cc -O2 -g [-finstrument-functions] [-fopenmp] -o api api.c -lscope   (see bench/api)
// Use:   ./api MODE [CALLS [ROUNDS]]   (defaults 200000 and 7)
// Prints "MODE ns": the best of ROUNDS rounds of CALLS iterations, per iteration, loop
// included. MODE is call (a call of an empty noinline function), region (a
// scope_region_begin/end pair around nothing) or task (an OpenMP task of an empty body,
// created and run by one thread; -fopenmp builds only).
#define _GNU_SOURCE
#include <scope/scope.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long calls = 200000;
static int rounds = 7;
static volatile unsigned long sink;

__attribute__((noinline)) void leaf(void)
{
	sink++;
}

__attribute__((noinline)) static void call_loop(void)
{
	for (long i = 0; i < calls; i++)
		leaf();
}

__attribute__((noinline)) static void region_loop(void)
{
	for (long i = 0; i < calls; i++) {
		scope_region_begin("bench region");
		scope_region_end("bench region");
	}
}

#ifdef _OPENMP
__attribute__((noinline)) static void task_loop(void)
{
#pragma omp parallel num_threads(1)
#pragma omp single
	for (long i = 0; i < calls; i++) {
#pragma omp task
		sink++;
#pragma omp taskwait
	}
}
#endif

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "call";
	void (*loop)(void) = strcmp(mode, "call") == 0	   ? call_loop
			     : strcmp(mode, "region") == 0 ? region_loop
#ifdef _OPENMP
			     : strcmp(mode, "task") == 0 ? task_loop
#endif
							 : NULL;
	double best = 1e300;

	if (argc > 2)
		calls = atol(argv[2]);
	if (argc > 3)
		rounds = atoi(argv[3]);
	if (!loop || calls < 1 || rounds < 1) {
		fprintf(stderr, "api: unknown mode %s, or no calls\n", mode);
		return 2;
	}
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns(), t;
		loop();
		t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	printf("%s %.2f\n", mode, best / (double)calls);
	return 0;
}
