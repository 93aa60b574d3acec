/* SPDX-License-Identifier: MIT */
/* The writer of a whole run: arenas handed over by the run's processes, written as they come. */
#define _GNU_SOURCE
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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

/* Waits for the next message, or for the watched process to end; returns
 * its length, 0 for the end of the run, -1 on an error. */
static ssize_t next(int fd, int pidfd, char *buf, size_t cap)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
				      {.fd = pidfd, .events = POLLIN}};
		ssize_t n;

		if (pidfd >= 0 && poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		n = recv(fd, buf, cap, pidfd >= 0 ? MSG_DONTWAIT : 0);
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
	char path[PATH_MAX + 1];
	struct kept k = {0};
	int pidfd = watch > 0 ? (int)syscall(SYS_pidfd_open, watch, 0) : -1;
	int rc = 0;

	for (;;) {
		ssize_t n = next(fd, pidfd, path, sizeof path - 1);
		if (n < 0) {
			fprintf(stderr, "scope-writer: the run's socket: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		if (n == 0)
			break; /* the run has ended */
		path[n] = '\0';
		if (!at_exit) {
			rc |= write_one(path, ctx) != 0;
		} else if (keep(&k, path) != 0) {
			fprintf(stderr, "scope-writer: out of memory; %s is written now\n", path);
			rc |= write_one(path, ctx) != 0;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	for (size_t i = 0; i < k.n; i++) {
		rc |= write_one(k.path[i], ctx) != 0;
		free(k.path[i]);
	}
	free(k.path);
	return rc;
}
