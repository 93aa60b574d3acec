/* SPDX-License-Identifier: MIT */
/* "sampling [MS]": spin() computes sin() for MS ms of CPU time (default 300), then nap() sleeps MS ms. */
#include <dlfcn.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 300;

	spin(ms);
	nap(ms);
	return 0;
}
