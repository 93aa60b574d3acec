/* SPDX-License-Identifier: MIT */
/* Keeps the arena's descriptor out of reach of a program that closes or reuses descriptors. */
#define _GNU_SOURCE
#include "libcall.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <unistd.h>

static int (*real_close)(int);
static int (*real_close_range)(unsigned, unsigned, int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);

/* Done from scope_init, before the program starts threads, and again by a
 * wrapper called even earlier (then there is one thread). */
void scope_fds_resolve(void)
{
	if (real_close)
		return;
	real_close_range = (int (*)(unsigned, unsigned, int))dlsym(RTLD_NEXT, "close_range");
	real_dup2 = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
	real_dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
	real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
}

/* Moves fd high, where programs rarely look: daemons close 0..1023 and
 * shells dup2 onto low numbers. Returns the new descriptor, or fd. */
int scope_fd_hide(int fd)
{
	struct rlimit rl;
	int at = 1000, moved;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur <= (rlim_t)at)
		at = (int)(rl.rlim_cur / 2);
	moved = fcntl(fd, F_DUPFD_CLOEXEC, at);
	if (moved < 0)
		return fd;
	scope_fds_resolve();
	real_close ? real_close(fd) : close(fd);
	return moved;
}

/* Closes one of the library's own descriptors, past the wrapper. */
void scope_fd_close(int fd)
{
	scope_fds_resolve();
	if (real_close)
		real_close(fd);
}

static SCOPE_NOINST int ours(int fd)
{
	return fd >= 0 && fd == scope_proc.fd;
}

/* A region of kind io, like the calls in libcalls.c. */
extern __typeof__(close) self_close SCOPE_HIDDEN __attribute__((alias("close")));

SCOPE_EXPORT int close(int fd)
{
	int rc;

	scope_fds_resolve();
	if (ours(fd))
		return 0; /* the program thinks it closed it; the arena needs it */
	if (!real_close) {
		errno = ENOSYS;
		return -1;
	}
	(void)scope_libcall_io_close;
	if (!scope_libcall_wanted(SCOPE_LIBCALL_IO, __builtin_return_address(0)))
		return real_close(fd);
	scope_libcall_begin((void *)self_close);
	rc = real_close(fd);
	scope_libcall_end((void *)self_close, 0, 0);
	return rc;
}

SCOPE_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	unsigned fd = (unsigned)scope_proc.fd;
	int rc = 0;

	scope_fds_resolve();
	if (!real_close_range) {
		errno = ENOSYS;
		return -1;
	}
	if (scope_proc.fd < 0 || fd < first || fd > last)
		return real_close_range(first, last, flags);
	if (fd > first)
		rc = real_close_range(first, fd - 1, flags);
	if (rc == 0 && fd < last)
		rc = real_close_range(fd + 1, last, flags);
	return rc;
}

SCOPE_EXPORT void closefrom(int lowfd)
{
	close_range(lowfd < 0 ? 0 : (unsigned)lowfd, UINT_MAX, 0);
}

/* A program that puts something on the arena's number moves the arena. */
static SCOPE_NOINST void make_room(int newfd)
{
	if (ours(newfd))
		scope_proc.fd = fcntl(newfd, F_DUPFD_CLOEXEC, newfd + 1);
}

SCOPE_EXPORT int dup2(int oldfd, int newfd)
{
	scope_fds_resolve();
	if (!real_dup2) {
		errno = ENOSYS;
		return -1;
	}
	make_room(newfd);
	return real_dup2(oldfd, newfd);
}

SCOPE_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	scope_fds_resolve();
	if (!real_dup3) {
		errno = ENOSYS;
		return -1;
	}
	make_room(newfd);
	return real_dup3(oldfd, newfd, flags);
}
