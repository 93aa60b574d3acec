/* SPDX-License-Identifier: MIT */
/* "filters [SLOW_MS [fork]]": main -> run -> outer x10 -> mid x2 -> leaf x3, run -> skip x5 ->
 * leaf, run -> slow x2 (SLOW_MS each, default 0); with fork, then a forked child runs run once
 * more. */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

volatile unsigned long filters_sink;

NOINLINE void leaf(void)
{
	filters_sink++;
}

NOINLINE void mid(void)
{
	for (int i = 0; i < 3; i++)
		leaf();
}

NOINLINE void outer(void)
{
	for (int i = 0; i < 2; i++)
		mid();
}

NOINLINE void skip(void)
{
	leaf();
}

/* Spins (no system call that could be a region) for ms milliseconds. */
NOINLINE void slow(long ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while (progs_ns_between(&a, &b) < ms * 1000000L);
}

NOINLINE void run(long ms)
{
	for (int i = 0; i < 10; i++)
		outer();
	for (int i = 0; i < 5; i++)
		skip();
	for (int i = 0; i < 2; i++)
		slow(ms);
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 0;
	pid_t pid;

	run(ms);
	if (argc > 2) {
		if ((pid = fork()) < 0)
			return 1;
		if (pid == 0) {
			run(ms);
			return 0;
		}
		waitpid(pid, NULL, 0);
	}
	return 0;
}
