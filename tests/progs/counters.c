/* SPDX-License-Identifier: MIT */
/* Calls with known software-counter changes: page faults, context switches, CPU time. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#include "progs.h"

#define PAGES 64

static volatile unsigned long sink;

/* Touches PAGES fresh pages of anonymous memory: PAGES page faults. */
NOINLINE void touch_pages(void)
{
	long page = 4096;
	char *p = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);

	if (p == MAP_FAILED)
		return;
	madvise(p, PAGES * page, MADV_NOHUGEPAGE);
	for (int i = 0; i < PAGES; i++)
		p[i * page] = (char)i;
	sink += (unsigned char)p[page];
	munmap(p, PAGES * page);
}

/* Sleeps twice: at least two context switches. */
NOINLINE void sleeper(void)
{
	struct timespec ts = {0, 2000000};

	nanosleep(&ts, NULL);
	nanosleep(&ts, NULL);
}

/* Runs on the CPU for about a millisecond. */
NOINLINE void spin(void)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while (progs_ns_between(&a, &b) < 1000000L);
}

NOINLINE void work(void)
{
	touch_pages();
	sleeper();
	spin();
}

NOINLINE static void *worker(void *unused)
{
	(void)unused;
	touch_pages();
	touch_pages();
	return NULL;
}

int main(void)
{
	pthread_t th;

	for (int i = 0; i < 3; i++)
		work();
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	printf("counters ok\n");
	return 0;
}
