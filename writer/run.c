/* SPDX-License-Identifier: MIT */
/* The writer of a whole run: arenas handed over by the run's processes, written as they come. */
#define _GNU_SOURCE
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/*
 * scope-run makes a datagram socket before the program starts and hands it
 * to this writer. Each process of the run, when it stops recording, sends
 * its arena's path and goes on to its end: its exit costs it one message,
 * not a writer of its own, and its parent's calls are not charged for it.
 * The writer writes the arenas while the program runs on; at_exit, it keeps
 * them until the run has ended, so that it takes no CPU from a program that
 * wants every core. scope-run sends the empty message once every process of
 * the run has exited, so every path is already queued before it.
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

int run_serve(int fd, int at_exit, int (*write_one)(const char *arena, void *ctx), void *ctx)
{
	char path[PATH_MAX + 1];
	struct kept k = {0};
	int rc = 0;

	for (;;) {
		ssize_t n = recv(fd, path, sizeof path - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
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
	for (size_t i = 0; i < k.n; i++) {
		rc |= write_one(k.path[i], ctx) != 0;
		free(k.path[i]);
	}
	free(k.path);
	return rc;
}
