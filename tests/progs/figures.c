/* SPDX-License-Identifier: MIT */
/*
 * Calls made inside calls of the same function, and threads' CPU time, for
 * the totals and CPU times a profile states (tests/figures.py).
 *
 * Usage: figures MODE; it prints "calls NAME=N ..." for what it counted.
 *   recursion  down(24) twice from main, and once from inside lead()
 *   mutual     ping(9) twice: ping -> pong -> ping -> ... 9 levels down
 *   signal     burn() runs while SIGALRM, every 1 ms, runs a handler that
 *              calls burn() too, until 10 handlers have run inside it
 *   cpu        a thread burning 50 ms of its CPU, one sleeping 50 ms
 *   cpu-live   a thread burning 50 ms of CPU, still running at exit
 *   depth N MS nest() recursing N levels, the innermost call burning until
 *              MS ms after the outermost started: N changes the depth alone
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

volatile unsigned long sink;
static unsigned long ndown, nping, npong;
static volatile sig_atomic_t nticks;

/* Not a call of its own: burn() asks it in a loop. */
static __attribute__((no_instrument_function)) long thread_cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Some work at each call, so durations are well above a tick. */
NOINLINE void spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i;
}

NOINLINE unsigned long down(int n)
{
	ndown++;
	spin(200);
	if (n <= 0)
		return 1;
	return down(n - 1) + (n % 3 == 0 ? down(n - 3) : 0);
}

static __attribute__((no_instrument_function)) long long wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

NOINLINE void nest(int n, long long until)
{
	sink++;
	if (n > 0)
		nest(n - 1, until);
	else
		while (wall_ns() < until)
			sink++;
}

NOINLINE void lead(void)
{
	spin(1000);
	down(5);
}

NOINLINE void pong(int n);

NOINLINE void ping(int n)
{
	nping++;
	spin(300);
	if (n > 0)
		pong(n - 1);
	spin(300);
}

NOINLINE void pong(int n)
{
	npong++;
	spin(300);
	if (n > 0)
		ping(n - 1);
}

/* Burns until the thread's CPU clock has moved us on and ticks handlers
 * have run (10 s of CPU at most); async-signal-safe. */
NOINLINE void burn(long us, int ticks)
{
	long start = thread_cpu_us(), now = start;

	while ((now - start < us || nticks < ticks) && now - start < 10000000) {
		sink++;
		now = thread_cpu_us();
	}
}

NOINLINE void on_tick(int sig)
{
	(void)sig;
	nticks++;
	burn(100, 0);
}

static void mode_signal(void)
{
	struct sigaction sa;
	struct itimerval every = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_tick;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
	burn(10000, 10);
	setitimer(ITIMER_REAL, &off, NULL);
	burn(1000, 0);
	printf("calls burn=%d on_tick=%d\n", 2 + (int)nticks, (int)nticks);
}

static volatile int live_started;

NOINLINE void *busy_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "busy");
	burn(50000, 0);
	return NULL;
}

NOINLINE void *sleep_thread(void *arg)
{
	struct timespec ts = {0, 50 * 1000 * 1000};

	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	while (nanosleep(&ts, &ts) != 0)
		;
	return NULL;
}

static void mode_cpu(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, busy_thread, NULL);
	pthread_create(&b, NULL, sleep_thread, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("calls burn=1\n");
}

/* Burns on after its 50 ms, until the process exits under it. */
NOINLINE void *live_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "live");
	burn(50000, 0);
	live_started = 1;
	for (;;)
		sink++;
	return NULL;
}

static void mode_cpu_live(void)
{
	pthread_t a;

	pthread_create(&a, NULL, live_thread, NULL);
	while (!live_started)
		usleep(1000);
	printf("calls burn=1\n");
	fflush(stdout);
	exit(0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "recursion") == 0) {
		down(24);
		down(24);
		lead();
		printf("calls down=%lu lead=1\n", ndown);
	} else if (strcmp(mode, "mutual") == 0) {
		ping(9);
		ping(9);
		printf("calls ping=%lu pong=%lu\n", nping, npong);
	} else if (strcmp(mode, "signal") == 0) {
		mode_signal();
	} else if (strcmp(mode, "cpu") == 0) {
		mode_cpu();
	} else if (strcmp(mode, "cpu-live") == 0) {
		mode_cpu_live();
	} else if (strcmp(mode, "depth") == 0 && argc == 4) {
		int n = atoi(argv[2]);
		nest(n, wall_ns() + atoll(argv[3]) * 1000000);
		printf("calls nest=%d\n", n + 1);
	} else {
		fprintf(stderr, "usage: figures recursion|mutual|signal|cpu|cpu-live|depth N MS\n");
		return 2;
	}
	return 0;
}
