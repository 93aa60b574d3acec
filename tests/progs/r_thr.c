/* SPDX-License-Identifier: MIT */
/*
 * Threads: many short-lived ones, detached ones, ones still running at
 * exit, one created by a constructor before main, named ones, and a TSD
 * destructor that makes calls at thread exit.
 *
 * Prints what it knows: "calls NAME=N", per-thread lines "thread NAME
 * tid=T calls work=N", "threads=N". Usage: r_thr MODE [N]; see main().
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

static unsigned long n_work, n_dtor, n_in_dtor, n_ctor_thread;
volatile unsigned long thr_sink;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

NOINLINE void work(void)
{
	__atomic_fetch_add(&n_work, 1, __ATOMIC_RELAXED);
	thr_sink++;
}

/* Each short-lived thread calls work() (index % 5) + 1 times. */
NOINLINE void *short_thread(void *arg)
{
	int k = (int)((intptr_t)arg % 5) + 1;
	for (int i = 0; i < k; i++)
		work();
	return NULL;
}

static void mode_many(int n)
{
	enum { BATCH = 100 };
	pthread_t t[BATCH];
	unsigned long expect = 0;
	int made = 0;

	while (made < n) {
		int batch = n - made < BATCH ? n - made : BATCH;
		for (int i = 0; i < batch; i++) {
			if (pthread_create(&t[i], NULL, short_thread,
					   (void *)(intptr_t)(made + i)) != 0)
				exit(1);
			expect += (unsigned long)((made + i) % 5) + 1;
		}
		for (int i = 0; i < batch; i++)
			pthread_join(t[i], NULL);
		made += batch;
	}
	printf("threads=%d\n", made);
	printf("calls short_thread=%d work=%lu\n", made, n_work);
	if (expect != n_work)
		printf("work expected %lu\n", expect);
}

/* Detached threads: each calls work() 1000 times and counts itself out. */
static int detached_left;

NOINLINE void *detached_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		work();
	__atomic_fetch_sub(&detached_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void mode_detached(int n)
{
	pthread_attr_t attr;
	pthread_t t;

	detached_left = n;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, &attr, detached_thread, NULL) != 0)
			exit(1);
	while (__atomic_load_n(&detached_left, __ATOMIC_ACQUIRE) > 0)
		sched_yield();
	/* A detached thread may still be between its last call and its end. */
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	printf("threads=%d\n", n);
	printf("calls detached_thread=%d work=%lu\n", n, n_work);
}

/* Threads still running when main returns: spinner() never returns, it
 * calls tick() forever. main waits for each to have ticked 1000 times. */
static unsigned long ticks[8];

NOINLINE void tick(int k)
{
	__atomic_fetch_add(&ticks[k], 1, __ATOMIC_RELAXED);
}

NOINLINE void *spinner(void *arg)
{
	int k = (int)(intptr_t)arg;
	for (;;)
		tick(k);
	return NULL;
}

static void mode_running(int n)
{
	pthread_t t;

	for (int i = 0; i < n; i++)
		if (pthread_create(&t, NULL, spinner, (void *)(intptr_t)i) != 0)
			exit(1);
	for (int i = 0; i < n; i++)
		while (__atomic_load_n(&ticks[i], __ATOMIC_RELAXED) < 1000)
			sched_yield();
	printf("threads=%d\n", n);
	printf("calls spinner=%d\n", n);
	printf("at least tick=%d\n", 1000 * n);
}

/* A thread created and joined by a constructor, before main. */
NOINLINE void *ctor_thread(void *arg)
{
	(void)arg;
	n_ctor_thread++;
	for (int i = 0; i < 100; i++)
		work();
	return NULL;
}

static int ctor_mode;

NOINLINE __attribute__((constructor)) void early_ctor(void)
{
	const char *m = getenv("R_THR_CTOR");
	pthread_t t;

	if (!m || strcmp(m, "1") != 0)
		return;
	ctor_mode = 1;
	if (pthread_create(&t, NULL, ctor_thread, NULL) == 0)
		pthread_join(t, NULL);
}

/* Named threads: each names itself and calls work() its index + 1 times;
 * the main thread is named too. */
NOINLINE void *named_thread(void *arg)
{
	int k = (int)(intptr_t)arg;
	char name[16];

	snprintf(name, sizeof name, "r-named-%d", k);
	pthread_setname_np(pthread_self(), name);
	for (int i = 0; i <= k; i++)
		work();
	pthread_mutex_lock(&lock);
	printf("thread %s tid=%ld calls work=%d\n", name, (long)syscall(SYS_gettid), k + 1);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void mode_names(int n)
{
	pthread_t t[16];

	pthread_setname_np(pthread_self(), "r-main");
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, named_thread, (void *)(intptr_t)i) != 0)
			exit(1);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("threads=%d\n", n);
}

/* A TSD destructor that is itself instrumented and calls in_dtor(). */
static pthread_key_t key;

NOINLINE void in_dtor(void)
{
	__atomic_fetch_add(&n_in_dtor, 1, __ATOMIC_RELAXED);
}

NOINLINE void dtor(void *v)
{
	(void)v;
	__atomic_fetch_add(&n_dtor, 1, __ATOMIC_RELAXED);
	in_dtor();
}

NOINLINE void *tsd_thread(void *arg)
{
	pthread_setspecific(key, arg);
	work();
	return NULL;
}

static void mode_tsd(int n)
{
	pthread_t t[16];

	pthread_key_create(&key, dtor);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, tsd_thread, (void *)(intptr_t)(i + 1)) != 0)
			exit(1);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("threads=%d\n", n);
	printf("calls tsd_thread=%d dtor=%lu in_dtor=%lu work=%lu\n", n, n_dtor, n_in_dtor, n_work);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 4;

	if (strcmp(mode, "many") == 0)
		mode_many(n);
	else if (strcmp(mode, "detached") == 0)
		mode_detached(n);
	else if (strcmp(mode, "running") == 0)
		mode_running(n > 8 ? 8 : n);
	else if (strcmp(mode, "ctor") == 0 && ctor_mode)
		printf("calls early_ctor=1 ctor_thread=%lu work=%lu\n", n_ctor_thread, n_work);
	else if (strcmp(mode, "names") == 0)
		mode_names(n > 16 ? 16 : n);
	else if (strcmp(mode, "tsd") == 0)
		mode_tsd(n > 16 ? 16 : n);
	else {
		fprintf(stderr,
			"usage: %s many N | detached N | running N | names N | tsd N | "
			"ctor (with R_THR_CTOR=1)\n",
			argv[0]);
		return 64;
	}
	fflush(stdout);
	return 0;
}
