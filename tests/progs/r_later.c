/* SPDX-License-Identifier: MIT */
/* "r_later N T": main -> run -> outer x N/100 -> leaf x 99 each, then T threads (at most 8) run
 * N/10 each: threads that start only after main has made most of its calls. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "progs.h"

volatile unsigned long later_sink;

NOINLINE void leaf(void)
{
	later_sink++;
}

NOINLINE void outer(void)
{
	for (int i = 0; i < 99; i++)
		leaf();
}

NOINLINE void run(long n)
{
	for (long i = 0; i < n / 100; i++)
		outer();
}

NOINLINE void *thread_run(void *arg)
{
	run((long)(intptr_t)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int th = argc > 2 ? atoi(argv[2]) : 0;
	pthread_t tid[8];

	run(n);
	for (int c = 0; c < th && c < 8; c++)
		if (pthread_create(&tid[c], NULL, thread_run, (void *)(intptr_t)(n / 10)) != 0)
			return 1;
	for (int c = 0; c < th && c < 8; c++)
		pthread_join(tid[c], NULL);
	printf("%lu leaf calls\n", later_sink);
	return 0;
}
