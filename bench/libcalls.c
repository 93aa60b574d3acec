/* SPDX-License-Identifier: MIT */
/* bench/libcalls: the cost of one wrapped C library call, timed inside the program. */
//
// Build: cc -O2 -g -finstrument-functions -fno-inline -pthread -o libcalls libcalls.c
// Use:   ./libcalls [CALLS [ROUNDS]]   (defaults 200000 and 7)
// Prints one line per call, "NAME ns", the best of ROUNDS rounds of CALLS calls each,
// loop included. Each call is made from a function of its own (instrumented, called once
// per round), so that under scope the calls have a recorded caller, as a program's do.
// Run it as is (the calls unwrapped) and under LD_PRELOAD=libscope_preload.so with
// SCOPE_LIBCALLS=none (wrapped, switched off), wait (the default) and all (recorded).
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long calls = 200000;
static int rounds = 7;
static int null_fd, zero_fd;
static FILE *null_file;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static char byte;

__attribute__((noinline)) void write_1(void)
{
	for (long i = 0; i < calls; i++)
		if (write(null_fd, &byte, 1) != 1)
			abort();
}

__attribute__((noinline)) void read_1(void)
{
	for (long i = 0; i < calls; i++)
		if (read(zero_fd, &byte, 1) != 1)
			abort();
}

__attribute__((noinline)) void poll_0(void)
{
	for (long i = 0; i < calls; i++)
		if (poll(NULL, 0, 0) != 0)
			abort();
}

/* No system call: stdio's buffer, flushed every 4096 calls. */
__attribute__((noinline)) void fwrite_1(void)
{
	for (long i = 0; i < calls; i++)
		if (fwrite(&byte, 1, 1, null_file) != 1)
			abort();
}

/* Free every time: a lock that does not wait is never recorded. */
__attribute__((noinline)) void mutex_free(void)
{
	for (long i = 0; i < calls; i++) {
		pthread_mutex_lock(&mutex);
		pthread_mutex_unlock(&mutex);
	}
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void measure(const char *name, void (*loop)(void))
{
	double best = 0;

	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns(), t;
		loop();
		t = (now_ns() - t0) / (double)calls;
		if (r == 0 || t < best)
			best = t;
	}
	printf("%s %.1f\n", name, best);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		calls = atol(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	null_fd = open("/dev/null", O_WRONLY);
	zero_fd = open("/dev/zero", O_RDONLY);
	null_file = fopen("/dev/null", "w");
	if (calls <= 0 || rounds <= 0 || null_fd < 0 || zero_fd < 0 || !null_file) {
		fprintf(stderr,
			"libcalls: usage: libcalls [CALLS [ROUNDS]] (and /dev/null, /dev/zero)\n");
		return 2;
	}
	setvbuf(null_file, NULL, _IOFBF, 4096);
	measure("write", write_1);
	measure("read", read_1);
	measure("poll", poll_0);
	measure("fwrite", fwrite_1);
	measure("pthread_mutex_lock", mutex_free);
	return 0;
}
