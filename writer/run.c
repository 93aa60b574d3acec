/* SPDX-License-Identifier: MIT */
/* The writer of a whole run: arenas handed over by the run's processes, written as they come. */
#define _GNU_SOURCE
#include "run.h"

#include "alongside.h"
#include "tail.h"
#include "writer.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
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
 * the arena; less often while they record nothing, but within 4 ms: a
 * process's first 64 chunks take it some 7 ms to fill, and a writer that
 * waits 16 ms to look again starts grouping a short process too late to
 * matter (an idle run costs it 3 ms of CPU a second instead of 0.7). */
#define POLL_MIN_MS 1
#define POLL_MAX_MS 4

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
 * phases that follow count from here). Returns the grouping of its calls
 * done meanwhile, if any. */
static struct alongside *tails_forget(struct tails *ts, const char *path)
{
	for (size_t i = 0; i < ts->n; i++)
		if (strcmp(tail_path(ts->t[i]), path) == 0) {
			struct alongside *g = tail_take_grouping(ts->t[i]);
			if (getenv("SCOPE_WRITER_TIMES"))
				fprintf(stderr,
					"scope-writer: while the program ran: %llu chunks copied "
					"to the store, %llu freed for reuse, %llu calls grouped; "
					"writer CPU %.3f s so far\n",
					(unsigned long long)tail_stored(ts->t[i]),
					(unsigned long long)tail_freed(ts->t[i]),
					(unsigned long long)(g ? alongside_calls(g) : 0),
					cpu_seconds());
			phase("alongside");
			tails_drop(ts, i);
			return g;
		}
	return NULL;
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

/*
 * The messages of the run's socket, taken off it by a thread of their own
 * as they come: the socket holds only a few (net.unix.max_dgram_qlen, 10
 * by default), and a process handing its arena over would wait, in its
 * exit, for as long as this writer is busy writing another one.
 */
struct inbox {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	char **msg; /* a message: its length in the first bytes, then its text */
	size_t head, n, cap;
	int end; /* 1: the run has ended; -1: the socket failed (errno in err) */
	int err;
	int fd, pidfd;
	pthread_t thread;
};

static int inbox_push(struct inbox *in, const char *buf, ssize_t n)
{
	char *m = malloc(sizeof(size_t) + (size_t)n + 1);

	if (!m)
		return -1;
	memcpy(m, &(size_t){(size_t)n}, sizeof(size_t));
	memcpy(m + sizeof(size_t), buf, (size_t)n);
	pthread_mutex_lock(&in->lock);
	if (in->head + in->n == in->cap && in->head) {
		memmove(in->msg, in->msg + in->head, in->n * sizeof *in->msg);
		in->head = 0;
	}
	if (in->n == in->cap) {
		size_t cap = in->cap ? 2 * in->cap : 64;
		char **grown = realloc(in->msg, cap * sizeof *grown);
		if (!grown) {
			pthread_mutex_unlock(&in->lock);
			free(m);
			return -1;
		}
		in->msg = grown;
		in->cap = cap;
	}
	in->msg[in->head + in->n++] = m;
	pthread_cond_signal(&in->ready);
	pthread_mutex_unlock(&in->lock);
	return 0;
}

static void inbox_close(struct inbox *in, int end, int err)
{
	pthread_mutex_lock(&in->lock);
	in->end = end;
	in->err = err;
	pthread_cond_signal(&in->ready);
	pthread_mutex_unlock(&in->lock);
}

/* Receives until the empty message, or until the watched process has
 * ended and nothing more is queued. */
static void *receive(void *arg)
{
	struct inbox *in = arg;
	char buf[PATH_MAX + 2];

	for (;;) {
		struct pollfd p[2] = {{.fd = in->fd, .events = POLLIN},
				      {.fd = in->pidfd, .events = POLLIN}};
		int ready = poll(p, in->pidfd >= 0 ? 2 : 1, -1);
		ssize_t n;
		if (ready < 0 && errno != EINTR) {
			inbox_close(in, -1, errno);
			return NULL;
		}
		if (ready <= 0)
			continue;
		n = recv(in->fd, buf, sizeof buf - 1, MSG_DONTWAIT);
		if (n > 0 && inbox_push(in, buf, n) == 0)
			continue;
		if (n > 0) {
			inbox_close(in, -1, ENOMEM);
			return NULL;
		}
		if (n == 0 || (errno == EAGAIN && (p[1].revents & POLLIN))) {
			inbox_close(in, 1, 0); /* the run has ended */
			return NULL;
		}
		if (errno != EINTR && errno != EAGAIN) {
			inbox_close(in, -1, errno);
			return NULL;
		}
	}
}

/* The next message into buf, reading the running processes' arenas while
 * none comes; returns its length, 0 for the end of the run, -1 on an error
 * (errno set). */
static ssize_t next(struct inbox *in, char *buf, size_t cap, struct tails *ts, struct pace *pc)
{
	pthread_mutex_lock(&in->lock);
	for (;;) {
		uint64_t now = now_ms();
		if (in->n) {
			char *m = in->msg[in->head++];
			size_t n;
			in->n--;
			pthread_mutex_unlock(&in->lock);
			memcpy(&n, m, sizeof n);
			n = n < cap ? n : cap;
			memcpy(buf, m + sizeof(size_t), n);
			free(m);
			return (ssize_t)n;
		}
		if (in->end) {
			int end = in->end, err = in->err;
			pthread_mutex_unlock(&in->lock);
			errno = err;
			return end > 0 ? 0 : -1;
		}
		if (ts->n && now >= pc->polled + pc->every) {
			int moved;
			pthread_mutex_unlock(&in->lock);
			moved = tails_poll(ts);
			pc->every = moved || pc->every < POLL_MIN_MS ? POLL_MIN_MS
				    : pc->every < POLL_MAX_MS	     ? 2 * pc->every
								     : POLL_MAX_MS;
			pc->polled = now_ms();
			pthread_mutex_lock(&in->lock);
			continue;
		}
		if (!ts->n) {
			pthread_cond_wait(&in->ready, &in->lock);
		} else {
			uint64_t at = pc->polled + pc->every;
			struct timespec ts_at;
			clock_gettime(CLOCK_MONOTONIC, &ts_at);
			ts_at.tv_sec += (time_t)((at - now) / 1000);
			ts_at.tv_nsec += (long)((at - now) % 1000) * 1000000L;
			if (ts_at.tv_nsec >= 1000000000L) {
				ts_at.tv_sec++;
				ts_at.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&in->ready, &in->lock, &ts_at);
		}
	}
}

static int inbox_open(struct inbox *in, int fd, int pidfd)
{
	pthread_condattr_t ca;

	memset(in, 0, sizeof *in);
	in->fd = fd;
	in->pidfd = pidfd;
	pthread_mutex_init(&in->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&in->ready, &ca);
	pthread_condattr_destroy(&ca);
	return pthread_create(&in->thread, NULL, receive, in) == 0 ? 0 : -1;
}

/* Waits for the receiving thread, which has ended the run or failed. */
static void inbox_free(struct inbox *in)
{
	pthread_join(in->thread, NULL);
	for (size_t i = 0; i < in->n; i++)
		free(in->msg[in->head + i]);
	free(in->msg);
	pthread_cond_destroy(&in->ready);
	pthread_mutex_destroy(&in->lock);
}

int run_serve(int fd, int at_exit, pid_t watch,
	      int (*write_one)(const char *arena, struct alongside *early, void *ctx), void *ctx)
{
	char path[PATH_MAX + 2];
	struct kept k = {0};
	struct tails ts = {0};
	struct pace pc = {0, POLL_MIN_MS};
	struct inbox in;
	struct alongside *early;
	int pidfd = watch > 0 ? (int)syscall(SYS_pidfd_open, watch, 0) : -1;
	int rc = 0;

	if (inbox_open(&in, fd, pidfd) != 0) {
		fprintf(stderr, "scope-writer: cannot start a thread: %s\n", strerror(errno));
		if (pidfd >= 0)
			close(pidfd);
		return 1;
	}
	for (;;) {
		ssize_t n = next(&in, path, sizeof path - 1, &ts, &pc);
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
		early = tails_forget(&ts, path);
		if (!at_exit) {
			rc |= write_one(path, early, ctx) != 0;
		} else if (keep(&k, path) != 0) {
			fprintf(stderr, "scope-writer: out of memory; %s is written now\n", path);
			rc |= write_one(path, NULL, ctx) != 0;
		}
	}
	inbox_free(&in);
	/* Processes still running, or killed: their arenas, with what was
	 * consumed of them, are written by --recover. */
	while (ts.n)
		tails_drop(&ts, ts.n - 1);
	free(ts.t);
	if (pidfd >= 0)
		close(pidfd);
	for (size_t i = 0; i < k.n; i++) {
		rc |= write_one(k.path[i], NULL, ctx) != 0;
		free(k.path[i]);
	}
	free(k.path);
	return rc;
}
