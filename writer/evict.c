/* SPDX-License-Identifier: MIT */
/* The published arenas' last close, on a process of its own. */
#define _GNU_SOURCE
#include "evict.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

/* In the child of a process with threads: system calls only. */
static void hold_until_closed(int fd)
{
	char c;

	if (fd > 0)
		close_range(0, (unsigned)fd - 1, 0);
	close_range((unsigned)fd + 1, ~0u, 0);
	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
	/* the exit is the eviction: on a core nobody else wants */
	sched_setscheduler(0, SCHED_IDLE, &(struct sched_param){0});
	_exit(0);
}

int evict_apart(void)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid == 0)
		hold_until_closed(p[0]);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	return p[1];
}

void evict_apart_go(int handle)
{
	if (handle >= 0)
		close(handle);
}
