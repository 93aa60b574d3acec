/* SPDX-License-Identifier: MIT */
/* "sampling [MS [rt]]": spin() computes sin() for MS ms of CPU time (default 300), then nap()
 * sleeps MS ms; with rt, first raises SIGRTMAX-5 three times with a handler of its own and prints
 * "rt=N". */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "progs.h"

volatile double sampling_sink;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Nearly all of its time is in libm's sin(), which is not instrumented
 * (looked up at run time: the test programs link libc only). */
NOINLINE void spin(long ms)
{
	void *libm = dlopen("libm.so.6", RTLD_NOW);
	double (*sine)(double) = libm ? (double (*)(double))dlsym(libm, "sin") : NULL;
	double until = cpu_ms() + (double)ms, x = 0.5;

	if (!sine)
		exit(3);
	while (cpu_ms() < until)
		for (int i = 0; i < 20000; i++)
			x = sine(x + 1.0);
	sampling_sink = x;
}

NOINLINE void nap(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static volatile sig_atomic_t rt_calls;

static void on_rt(int sig)
{
	(void)sig;
	rt_calls++;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 300;

	if (argc > 2 && strcmp(argv[2], "rt") == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_rt;
		sigaction(SIGRTMAX - 5, &sa, NULL);
		for (int i = 0; i < 3; i++)
			raise(SIGRTMAX - 5);
		printf("rt=%d\n", (int)rt_calls);
		fflush(stdout);
	}

	spin(ms);
	nap(ms);
	return 0;
}
