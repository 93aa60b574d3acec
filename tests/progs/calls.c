/* SPDX-License-Identifier: MIT */
/* "calls N [K]": main -> run -> outer x N/100 -> leaf x 99 each; forked child c of K runs c*N. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progs.h"

volatile unsigned long calls_sink;

NOINLINE void leaf(void)
{
	calls_sink++;
}

NOINLINE void outer(void)
{
	for (int i = 0; i < 99; i++)
		leaf();
}

/* n/100 calls of outer, each calling leaf 99 times: n calls below run. */
NOINLINE void run(long n)
{
	for (long i = 0; i < n / 100; i++)
		outer();
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int k = argc > 2 ? atoi(argv[2]) : 0;

	for (int c = 1; c <= k; c++) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			run(n * c);
			return 0;
		}
	}
	run(n);
	for (int c = 0; c < k; c++)
		wait(NULL);
	printf("%lu leaf calls in the parent\n", calls_sink);
	return 0;
}
