/* SPDX-License-Identifier: MIT */
/* Four named pthreads; worker-K calls work() 1000*K times, main calls it never. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "progs.h"

#define WORKERS 4

volatile unsigned long thread_work[WORKERS + 1];

NOINLINE void work(int k)
{
	thread_work[k] += (unsigned long)k;
}

NOINLINE void *worker(void *arg)
{
	int k = (int)(intptr_t)arg;
	char name[16];

	snprintf(name, sizeof name, "worker-%d", k);
	pthread_setname_np(pthread_self(), name);
	for (int i = 0; i < 1000 * k; i++)
		work(k);
	return NULL;
}

int main(void)
{
	pthread_t t[WORKERS];

	for (int k = 1; k <= WORKERS; k++)
		if (pthread_create(&t[k - 1], NULL, worker, (void *)(intptr_t)k) != 0)
			return 1;
	for (int k = 1; k <= WORKERS; k++)
		pthread_join(t[k - 1], NULL);
	for (int k = 1; k <= WORKERS; k++)
		printf("worker-%d %lu\n", k, thread_work[k]);
	return 0;
}
