/* SPDX-License-Identifier: MIT */
/* LD_PRELOAD helper for bench/run: counts -finstrument-functions calls, prints the total at exit.
 */
//
// Build: cc -O2 -shared -fPIC -o callcount.so callcount.c
// Use:   CALLCOUNT_OUT=FILE LD_PRELOAD=./callcount.so ./prog   (appends "calls N" to FILE,
//        one line per process; stderr when CALLCOUNT_OUT is unset)
// A process counts the calls it enters: a forked child starts again from 0, as the calls
// entered before the fork are its parent's. The run's total is the sum of the lines; a
// process that ends without exit handlers (_exit, a signal) writes no line.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long calls; /* every thread's */

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)fn;
	(void)site;
	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn;
	(void)site;
}

__attribute__((no_instrument_function)) static void callcount_forked(void)
{
	calls = 0;
}

__attribute__((constructor, no_instrument_function)) static void callcount_start(void)
{
	pthread_atfork(NULL, NULL, callcount_forked);
}

__attribute__((destructor, no_instrument_function)) static void callcount_report(void)
{
	const char *path = getenv("CALLCOUNT_OUT");
	FILE *f = path ? fopen(path, "a") : NULL;
	fprintf(f ? f : stderr, "calls %llu\n", calls);
	if (f)
		fclose(f);
}
