/* SPDX-License-Identifier: MIT */
/*
 * Threads meeting in the profiler, for ThreadSanitizer: waves of threads
 * that each fill and hand off several chunks, a pool that creates a thread
 * whenever one ends, a relay where each thread creates the next one as it
 * exits, detached threads, and one that is still calling when the
 * process stops. Built with -fsanitize=thread.
 *
 * Every thread but the spinner names itself KIND-I (a lane name) and calls
 * work() calls_for(N) times, N being its number over the whole run; work()
 * calls leaf() once. The spinner ("spinner") calls work() until the end,
 * at least SPIN_MIN times. Prints "threads=N" and "calls work=W" (the
 * spinner's calls not included).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../progs/progs.h"

enum { WAVES = 4, WAVE_WIDTH = 8, POOL = 4, POOL_THREADS = 24, RELAY = 16, DETACHED = 8 };
enum { SPIN_MIN = 5000 };

/* Each thread's calls of work(): enough for several chunks of the 16 KiB
 * the test sets (681 records each, two records per call of work). */
#define calls_for(n) (2000 + 131 * (n))

static unsigned long total_work;
static int detached_left;
static unsigned long spun;

NOINLINE void leaf(unsigned long *n)
{
	++*n;
}

NOINLINE void work(unsigned long *n)
{
	leaf(n);
}

/* The work of thread number n, named KIND-I; returns its calls of work. */
static unsigned long run(const char *kind, int i, int n)
{
	char name[16];
	unsigned long done = 0;

	snprintf(name, sizeof name, "%s-%d", kind, i);
	pthread_setname_np(pthread_self(), name);
	for (int k = 0; k < calls_for(n); k++)
		work(&done);
	__atomic_fetch_add(&total_work, done, __ATOMIC_RELAXED);
	return done;
}

static void start(pthread_t *t, void *(*fn)(void *), int arg)
{
	if (pthread_create(t, NULL, fn, (void *)(intptr_t)arg) != 0) {
		perror("pthread_create");
		exit(1);
	}
}

/* Threads are numbered in one sequence: waves, pool, relay, detached. */
#define POOL_FIRST     (WAVES * WAVE_WIDTH)
#define RELAY_FIRST    (POOL_FIRST + POOL_THREADS)
#define DETACHED_FIRST (RELAY_FIRST + RELAY)

NOINLINE void *wave_thread(void *arg)
{
	int n = (int)(intptr_t)arg;
	run("wave", n, n);
	return NULL;
}

NOINLINE void waves(void)
{
	pthread_t t[WAVE_WIDTH];

	for (int w = 0; w < WAVES; w++) {
		for (int i = 0; i < WAVE_WIDTH; i++)
			start(&t[i], wave_thread, w * WAVE_WIDTH + i);
		for (int i = 0; i < WAVE_WIDTH; i++)
			pthread_join(t[i], NULL);
	}
}

NOINLINE void *pool_thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	run("pool", i, POOL_FIRST + i);
	return NULL;
}

/* POOL threads at a time: the oldest is joined and a new one started, so
 * threads start while others end. */
NOINLINE void pool(void)
{
	pthread_t t[POOL_THREADS];

	for (int i = 0; i < POOL_THREADS; i++) {
		if (i >= POOL)
			pthread_join(t[i - POOL], NULL);
		start(&t[i], pool_thread, i);
	}
	for (int i = POOL_THREADS - POOL; i < POOL_THREADS; i++)
		pthread_join(t[i], NULL);
}

/* Each relay thread works, starts the next one and ends at once; it
 * returns the next one's handle for main to join. */
NOINLINE void *relay_thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	pthread_t *next = NULL;

	run("relay", i, RELAY_FIRST + i);
	if (i + 1 < RELAY) {
		next = malloc(sizeof *next);
		if (!next)
			exit(1);
		start(next, relay_thread, i + 1);
	}
	return next;
}

NOINLINE void relay(void)
{
	pthread_t t;
	void *next;

	start(&t, relay_thread, 0);
	for (int i = 0; i < RELAY; i++) {
		pthread_join(t, &next);
		if (!next)
			break;
		t = *(pthread_t *)next;
		free(next);
	}
}

NOINLINE void *detached_thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	run("detached", i, DETACHED_FIRST + i);
	__atomic_fetch_sub(&detached_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Detached threads, overlapping the relay; main only waits for their work
 * to be done, so they may still be ending when the process stops. */
NOINLINE void detached(void)
{
	pthread_attr_t attr;
	pthread_t t;

	__atomic_store_n(&detached_left, DETACHED, __ATOMIC_RELAXED);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < DETACHED; i++)
		if (pthread_create(&t, &attr, detached_thread, (void *)(intptr_t)i) != 0)
			exit(1);
	pthread_attr_destroy(&attr);
}

/* Still calling when main returns: the process stops while this thread
 * hands off chunks. */
NOINLINE void *spinner(void *arg)
{
	unsigned long n = 0;
	(void)arg;
	pthread_setname_np(pthread_self(), "spinner");
	for (;;) {
		work(&n);
		__atomic_store_n(&spun, n, __ATOMIC_RELAXED);
		if (n % 1024 == 0)
			sched_yield();
	}
	return NULL;
}

NOINLINE void spin(void)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, spinner, NULL) != 0)
		exit(1);
	pthread_attr_destroy(&attr);
	while (__atomic_load_n(&spun, __ATOMIC_RELAXED) < SPIN_MIN)
		sched_yield();
}

int main(void)
{
	unsigned long expect = 0;
	int threads = DETACHED_FIRST + DETACHED;

	spin();
	waves();
	pool();
	detached();
	relay();
	while (__atomic_load_n(&detached_left, __ATOMIC_ACQUIRE) > 0)
		sched_yield();
	for (int n = 0; n < threads; n++)
		expect += calls_for(n);
	printf("threads=%d\n", threads);
	printf("calls work=%lu\n", __atomic_load_n(&total_work, __ATOMIC_RELAXED));
	return expect == total_work ? 0 : 3;
}
