/* SPDX-License-Identifier: MIT */
/* The writer's last unmapping, the published arenas' eviction with it, on a process of its own. */
#define _GNU_SOURCE
#include "evict.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { STACK_BYTES = 64 << 10 };

/*
 * The process that outlives the writer. It runs in the writer's memory,
 * beside its threads, on a stack of its own and with the writer's thread
 * pointer: system calls only, through syscall(2), every signal blocked,
 * and nothing it could fail at retried (errno is the writer's). Its copies
 * of the descriptors go at once, but for the pipe whose end of file says
 * the writer has exited.
 */
static int outlive(void *arg)
{
	unsigned fd = (unsigned)(uintptr_t)arg;
	struct sched_param idle = {0};
	char c;

	if (fd > 0)
		syscall(SYS_close_range, 0u, fd - 1, 0u);
	syscall(SYS_close_range, fd + 1, ~0u, 0u);
	syscall(SYS_read, fd, &c, 1);
	/* the exit is the eviction: on a core nobody else wants */
	syscall(SYS_sched_setscheduler, 0, SCHED_IDLE, &idle);
	syscall(SYS_exit, 0);
	return 0;
}

int evict_at_exit(void)
{
	sigset_t all, old;
	void *stack;
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	/* Never unmapped: it goes with the memory, at the other's exit. */
	stack = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(outlive, (char *)stack + STACK_BYTES, CLONE_VM | SIGCHLD,
		    (void *)(uintptr_t)p[0]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		munmap(stack, STACK_BYTES);
		return -1;
	}
	return 0; /* p[1] closes with this process */
}
