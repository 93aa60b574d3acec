/* SPDX-License-Identifier: MIT */
/* The writer of a whole run: arenas handed over by the run's processes, written as they come. */
#define _GNU_SOURCE
#include "run.h"
#include "writer.h"
#include "tail.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * The run's first process (scope-run, or a plain run's first profiled
 * process) makes a datagram socket and hands it to this writer. Each
 * process of the run, when it stops recording, sends its arena's path and
 * goes on to its end: its exit costs it one message, not a writer of its
 * own, and its parent's calls are not charged for it. The writer writes the
 * arenas while the program runs on; at_exit, it keeps them until the run
 * has ended, so that it takes no CPU from a program that wants every core.
 * The run's first process sends the empty message once the run has ended,
 * so every path is already queued before it. A first process that dies
 * without sending it (kill -9) ends the run too, when watch is its pid.
 */

struct kept {
	char **path;
	size_t n, cap;
};

static int keep(struct kept *k, const char *path)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 64;
		char **grown = realloc(k->path, cap * sizeof *grown);
		if (!grown)
			return -1;
		k->path = grown;
		k->cap = cap;
	}
	if (!(k->path[k->n] = strdup(path)))
		return -1;
	k->n++;
	return 0;
}

/* How often the arenas of running processes are read, in ms: soon again
 * after a round that consumed chunks, since a thread recording fast fills
 * tens of chunks a millisecond and each chunk not yet handed back grows
 * the arena; less and less often while they record nothing. */
#define POLL_MIN_MS 1
#define POLL_MAX_MS 16

struct pace {
	uint64_t polled, every; /* ms: when the last round was, and the wait before the next */
};

/* The arenas being consumed while their processes run. */
struct tails {
	struct tail **t;
	size_t n, cap;
};

static void tails_add(struct tails *ts, const char *path)
{
	struct tail *t;

	if (ts->n == ts->cap) {
		size_t cap = ts->cap ? 2 * ts->cap : 16;
		struct tail **grown = realloc(ts->t, cap * sizeof *grown);
		if (!grown)
			return; /* the arena is written at its end, as a whole */
		ts->t = grown;
		ts->cap = cap;
	}
	if ((t = tail_open(path)))
		ts->t[ts->n++] = t;
}

static void tails_drop(struct tails *ts, size_t i)
{
	tail_close(ts->t[i]);
	ts->t[i] = ts->t[--ts->n];
}

/* The writer's CPU seconds so far. */
static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Stops consuming path's arena: its process has handed it over. With
 * SCOPE_WRITER_TIMES, one line says what was done while it ran (and the
 * phases that follow count from here). */
static void tails_forget(struct tails *ts, const char *path)
{
	for (size_t i = 0; i < ts->n; i++)
		if (strcmp(tail_path(ts->t[i]), path) == 0) {
			if (getenv("SCOPE_WRITER_TIMES"))
				fprintf(stderr,
					"scope-writer: while the program ran: %llu chunks copied "
					"to "
					"the store, %llu freed for reuse; writer CPU %.3f s so "
					"far\n",
					(unsigned long long)tail_stored(ts->t[i]),
					(unsigned long long)tail_freed(ts->t[i]), cpu_seconds());
			phase("alongside");
			tails_drop(ts, i);
			return;
		}
}

/* One round over the running processes' arenas; those whose process is
 * gone (killed) are left, with their stores, to the writer that recovers
 * them. Returns whether it consumed a chunk. */
static int tails_poll(struct tails *ts)
{
	int moved = 0;

	for (size_t i = 0; i < ts->n;) {
		uint64_t before = tail_stored(ts->t[i]);
		if (!tail_poll(ts->t[i])) {
			tails_drop(ts, i);
			continue;
		}
		moved |= tail_stored(ts->t[i]) != before;
		i++;
	}
	return moved;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits for the next message, or for the watched process to end, reading
 * the running processes' arenas meanwhile; returns its length, 0 for the
 * end of the run, -1 on an error. */
static ssize_t next(int fd, int pidfd, char *buf, size_t cap, struct tails *ts, struct pace *pc)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
				      {.fd = pidfd, .events = POLLIN}};
		uint64_t now = now_ms();
		int wait = -1, ready;
		ssize_t n;

		if (ts->n) {
			if (now >= pc->polled + pc->every) {
				int moved = tails_poll(ts);
				pc->every = moved || pc->every < POLL_MIN_MS ? POLL_MIN_MS
					    : pc->every < POLL_MAX_MS	     ? 2 * pc->every
									     : POLL_MAX_MS;
				pc->polled = now = now_ms();
			}
			wait = (int)(pc->polled + pc->every - now);
		}
		ready = poll(p, pidfd >= 0 ? 2 : 1, wait);
		if (ready < 0 && errno != EINTR)
			return -1;
		if (ready <= 0)
			continue;
		n = recv(fd, buf, cap, MSG_DONTWAIT);
		if (n >= 0)
			return n;
		if (errno == EINTR || (errno == EAGAIN && !(p[1].revents & POLLIN)))
			continue;
		/* the first process is gone, and nothing more is queued */
		return errno == EAGAIN ? 0 : -1;
	}
}

int run_serve(int fd, int at_exit, pid_t watch, int (*write_one)(const char *arena, void *ctx),
	      void *ctx)
{
	char path[PATH_MAX + 2];
	struct kept k = {0};
	struct tails ts = {0};
	struct pace pc = {0, POLL_MIN_MS};
	int pidfd = watch > 0 ? (int)syscall(SYS_pidfd_open, watch, 0) : -1;
	int rc = 0;

	for (;;) {
		ssize_t n = next(fd, pidfd, path, sizeof path - 1, &ts, &pc);
		if (n < 0) {
			fprintf(stderr, "scope-writer: the run's socket: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		if (n == 0)
			break; /* the run has ended */
		path[n] = '\0';
		if (path[0] == '\0') {
			if (!at_exit && n > 1)
				tails_add(&ts, path + 1);
			continue;
		}
		tails_forget(&ts, path);
		if (!at_exit) {
			rc |= write_one(path, ctx) != 0;
		} else if (keep(&k, path) != 0) {
			fprintf(stderr, "scope-writer: out of memory; %s is written now\n", path);
			rc |= write_one(path, ctx) != 0;
		}
	}
	/* Processes still running, or killed: their arenas, with what was
	 * consumed of them, are written by --recover. */
	while (ts.n)
		tails_drop(&ts, ts.n - 1);
	free(ts.t);
	if (pidfd >= 0)
		close(pidfd);
	for (size_t i = 0; i < k.n; i++) {
		rc |= write_one(k.path[i], ctx) != 0;
		free(k.path[i]);
	}
	free(k.path);
	return rc;
}
