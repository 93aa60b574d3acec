/* SPDX-License-Identifier: MIT */
/* C library calls that wait or move data, as regions: each wrapper records its call around the
 * original. */
#undef _FORTIFY_SOURCE /* the fortified headers define some of these functions inline */
#define _GNU_SOURCE
#include "libcall.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int scope_libcalls;
__thread const struct scope_rec *scope_wrapped;

/* What _FORTIFY_SOURCE calls instead of read, pread, open, fread and poll:
 * the same call, with the size of the caller's buffer checked. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t offset, size_t buflen);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
size_t __fread_chk(void *buf, size_t buflen, size_t size, size_t n, FILE *f);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask,
		size_t fdslen);

/* ---------------------------------------------------------------------- */
/* The originals                                                           */

/* Every function wrapped here, and the ones the wrappers call besides. */
#define ORIGINALS(X)                                                                               \
	X(pthread_join)                                                                            \
	X(pthread_mutex_lock)                                                                      \
	X(pthread_mutex_trylock)                                                                   \
	X(pthread_cond_wait)                                                                       \
	X(pthread_cond_timedwait)                                                                  \
	X(pthread_rwlock_rdlock)                                                                   \
	X(pthread_rwlock_tryrdlock)                                                                \
	X(pthread_rwlock_wrlock)                                                                   \
	X(pthread_rwlock_trywrlock)                                                                \
	X(pthread_rwlock_timedrdlock)                                                              \
	X(pthread_rwlock_timedwrlock)                                                              \
	X(pthread_rwlock_clockrdlock)                                                              \
	X(pthread_rwlock_clockwrlock)                                                              \
	X(pthread_barrier_wait)                                                                    \
	X(sem_wait)                                                                                \
	X(sem_trywait)                                                                             \
	X(sleep)                                                                                   \
	X(usleep)                                                                                  \
	X(nanosleep)                                                                               \
	X(clock_nanosleep)                                                                         \
	X(wait)                                                                                    \
	X(waitpid)                                                                                 \
	X(wait4)                                                                                   \
	X(poll)                                                                                    \
	X(__poll_chk)                                                                              \
	X(ppoll)                                                                                   \
	X(__ppoll_chk)                                                                             \
	X(select)                                                                                  \
	X(pselect)                                                                                 \
	X(epoll_wait)                                                                              \
	X(epoll_pwait)                                                                             \
	X(read)                                                                                    \
	X(__read_chk)                                                                              \
	X(write)                                                                                   \
	X(pread)                                                                                   \
	X(pread64)                                                                                 \
	X(__pread_chk)                                                                             \
	X(__pread64_chk)                                                                           \
	X(pwrite)                                                                                  \
	X(pwrite64)                                                                                \
	X(readv)                                                                                   \
	X(writev)                                                                                  \
	X(open)                                                                                    \
	X(open64)                                                                                  \
	X(__open_2)                                                                                \
	X(__open64_2)                                                                              \
	X(openat)                                                                                  \
	X(openat64)                                                                                \
	X(__openat_2)                                                                              \
	X(__openat64_2)                                                                            \
	X(fsync)                                                                                   \
	X(fdatasync)                                                                               \
	X(fread)                                                                                   \
	X(__fread_chk)                                                                             \
	X(fwrite)

#define SLOT(fn) static void *real_##fn;
ORIGINALS(SLOT)
#undef SLOT

/* What a slot holds once its function was looked up in vain. */
static const char absent;

static SCOPE_NOINST __attribute__((noinline)) void *look_up(void **slot, const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	/* Threads that look up at once find the same function: relaxed. */
	__atomic_store_n(slot, fn ? fn : (void *)&absent, __ATOMIC_RELAXED);
	return fn;
}

/* The original, looked up the first time; NULL when there is none. */
static inline __attribute__((always_inline)) void *original(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (__builtin_expect(!fn, 0))
		return look_up(slot, name);
	return fn == (void *)&absent ? NULL : fn;
}

#define REAL(fn) ((__typeof__(&fn))original(&real_##fn, #fn))

/* The original called with args, else fallback. */
#define CALL(fn, args, fallback)                                                                   \
	({                                                                                         \
		__typeof__(&fn) real_ = REAL(fn);                                                  \
		real_ ? real_ args : (fallback);                                                   \
	})

/* Before any wrapper can run on a second thread or in a signal handler:
 * dlsym is neither async-signal-safe nor cheap. A wrapper called even
 * earlier (a .preinit_array function) looks its original up itself. */
void scope_libcalls_resolve(void)
{
#define RESOLVE(fn) (void)original(&real_##fn, #fn);
	ORIGINALS(RESOLVE)
#undef RESOLVE
}

/* The result of a call with no original and no system call to make. */
static SCOPE_NOINST long no_call(void)
{
	errno = ENOSYS;
	return -1;
}

/* ---------------------------------------------------------------------- */
/* Recording                                                               */

#define KIND_wait SCOPE_LIBCALL_WAIT
#define KIND_io	  SCOPE_LIBCALL_IO

/* A hidden alias of a wrapper, whose address is surely this library's
 * (the program may define a function of the same name); the region is
 * named by the exported name. */
#if __has_attribute(copy)
#define SAME_ATTRIBUTES(fn) __attribute__((copy(fn))) /* nothrow, from the C library's header */
#else
#define SAME_ATTRIBUTES(fn)
#endif
#define REGION(fn)                                                                                 \
	extern __typeof__(fn) self_##fn SCOPE_HIDDEN SAME_ATTRIBUTES(fn)                           \
		__attribute__((alias(#fn)));

/* Runs call (an expression setting rc) as region of kind, a name its
 * kind's list in lib/libcalls.h holds, when calls of that kind are
 * recorded; sent and received are read after it. */
#define RECORDED(kind, region, call, sent, received)                                               \
	do {                                                                                       \
		(void)scope_libcall_##kind##_##region;                                             \
		if (!scope_libcall_wanted(KIND_##kind, __builtin_return_address(0))) {             \
			call;                                                                      \
			break;                                                                     \
		}                                                                                  \
		scope_libcall_begin((void *)self_##region);                                        \
		call;                                                                              \
		scope_libcall_end((void *)self_##region, sent, received);                          \
	} while (0)

/* A wrapper of fn, recorded as region. */
#define LIBCALL(kind, region, rtype, fn, params, args, fallback, sent, received)                   \
	SCOPE_EXPORT rtype fn params                                                               \
	{                                                                                          \
		rtype rc;                                                                          \
		RECORDED(kind, region, rc = CALL(fn, args, fallback), sent, received);             \
		return rc;                                                                         \
	}

/* The bytes a call that returns a count or -1 moved. */
static inline uint64_t moved(ssize_t rc)
{
	return rc > 0 ? (uint64_t)rc : 0;
}

/* ---------------------------------------------------------------------- */
/* Waiting: threads and locks                                              */

REGION(pthread_join)
LIBCALL(wait, pthread_join, int, pthread_join, (pthread_t th, void **ret), (th, ret), ENOSYS, 0, 0)

REGION(pthread_cond_wait)
LIBCALL(wait, pthread_cond_wait, int, pthread_cond_wait, (pthread_cond_t * c, pthread_mutex_t *m),
	(c, m), ENOSYS, 0, 0)

REGION(pthread_cond_timedwait)
LIBCALL(wait, pthread_cond_timedwait, int, pthread_cond_timedwait,
	(pthread_cond_t * c, pthread_mutex_t *m, const struct timespec *at), (c, m, at), ENOSYS, 0,
	0)

REGION(pthread_barrier_wait)
LIBCALL(wait, pthread_barrier_wait, int, pthread_barrier_wait, (pthread_barrier_t * b), (b), ENOSYS,
	0, 0)

/*
 * A lock or semaphore taken at once did not wait: it is no region. Only a
 * call that finds it taken is recorded, around the call that waits. The
 * try gives what the waiting call would for everything but "taken" (an
 * error-checking mutex the thread holds: EBUSY, then EDEADLK from the
 * lock), so the program sees the same results.
 */
#define LOCK_OF(region, try_fn, params, args)                                                      \
	REGION(region)                                                                             \
	SCOPE_EXPORT int region params                                                             \
	{                                                                                          \
		__typeof__(&region) wait_ = REAL(region);                                          \
		__typeof__(&try_fn) try_ = REAL(try_fn);                                           \
		int rc;                                                                            \
		if (!wait_)                                                                        \
			return ENOSYS;                                                             \
		if (!try_ ||                                                                       \
		    !scope_libcall_wanted(SCOPE_LIBCALL_WAIT, __builtin_return_address(0)))        \
			return wait_ args;                                                         \
		if ((rc = try_(lock)) != EBUSY)                                                    \
			return rc;                                                                 \
		RECORDED(wait, region, rc = wait_ args, 0, 0);                                     \
		return rc;                                                                         \
	}
#define LOCK(region, type, try_fn) LOCK_OF(region, try_fn, (type * lock), (lock))

LOCK(pthread_mutex_lock, pthread_mutex_t, pthread_mutex_trylock)
LOCK(pthread_rwlock_rdlock, pthread_rwlock_t, pthread_rwlock_tryrdlock)
LOCK(pthread_rwlock_wrlock, pthread_rwlock_t, pthread_rwlock_trywrlock)

/* The locks that give up at a time: a wait that timed out waited as well. */
LOCK_OF(pthread_rwlock_timedrdlock, pthread_rwlock_tryrdlock,
	(pthread_rwlock_t * lock, const struct timespec *at), (lock, at))
LOCK_OF(pthread_rwlock_timedwrlock, pthread_rwlock_trywrlock,
	(pthread_rwlock_t * lock, const struct timespec *at), (lock, at))
LOCK_OF(pthread_rwlock_clockrdlock, pthread_rwlock_tryrdlock,
	(pthread_rwlock_t * lock, clockid_t clock, const struct timespec *at), (lock, clock, at))
LOCK_OF(pthread_rwlock_clockwrlock, pthread_rwlock_trywrlock,
	(pthread_rwlock_t * lock, clockid_t clock, const struct timespec *at), (lock, clock, at))

REGION(sem_wait)
SCOPE_EXPORT int sem_wait(sem_t *sem)
{
	__typeof__(&sem_wait) wait_ = REAL(sem_wait);
	__typeof__(&sem_trywait) try_ = REAL(sem_trywait);
	int rc, saved = errno;

	if (!wait_)
		return (int)no_call();
	if (!try_ || !scope_libcall_wanted(SCOPE_LIBCALL_WAIT, __builtin_return_address(0)))
		return wait_(sem);
	if ((rc = try_(sem)) == 0 || errno != EAGAIN)
		return rc;
	errno = saved;
	RECORDED(wait, sem_wait, rc = wait_(sem), 0, 0);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Waiting: sleeps, children, descriptors                                  */

REGION(sleep)
LIBCALL(wait, sleep, unsigned, sleep, (unsigned seconds), (seconds), seconds, 0, 0)

REGION(usleep)
LIBCALL(wait, usleep, int, usleep, (useconds_t us), (us), (int)no_call(), 0, 0)

REGION(nanosleep)
LIBCALL(wait, nanosleep, int, nanosleep, (const struct timespec *want, struct timespec *left),
	(want, left), (int)syscall(SYS_nanosleep, want, left), 0, 0)

/* Returns an error number, not -1 and errno. */
REGION(clock_nanosleep)
LIBCALL(wait, clock_nanosleep, int, clock_nanosleep,
	(clockid_t clock, int flags, const struct timespec *want, struct timespec *left),
	(clock, flags, want, left),
	syscall(SYS_clock_nanosleep, clock, flags, want, left) == 0 ? 0 : errno, 0, 0)

REGION(wait)
LIBCALL(wait, wait, pid_t, wait, (int *status), (status),
	(pid_t)syscall(SYS_wait4, -1, status, 0, NULL), 0, 0)

REGION(waitpid)
LIBCALL(wait, waitpid, pid_t, waitpid, (pid_t pid, int *status, int options),
	(pid, status, options), (pid_t)syscall(SYS_wait4, pid, status, options, NULL), 0, 0)

REGION(wait4)
LIBCALL(wait, wait4, pid_t, wait4, (pid_t pid, int *status, int options, struct rusage *usage),
	(pid, status, options, usage), (pid_t)syscall(SYS_wait4, pid, status, options, usage), 0, 0)

REGION(poll)
LIBCALL(wait, poll, int, poll, (struct pollfd * fds, nfds_t n, int timeout), (fds, n, timeout),
	(int)no_call(), 0, 0)
LIBCALL(wait, poll, int, __poll_chk, (struct pollfd * fds, nfds_t n, int timeout, size_t fdslen),
	(fds, n, timeout, fdslen), (int)no_call(), 0, 0)

REGION(ppoll)
LIBCALL(wait, ppoll, int, ppoll,
	(struct pollfd * fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask),
	(fds, n, timeout, mask), (int)no_call(), 0, 0)
LIBCALL(wait, ppoll, int, __ppoll_chk,
	(struct pollfd * fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask,
	 size_t fdslen),
	(fds, n, timeout, mask, fdslen), (int)no_call(), 0, 0)

REGION(select)
LIBCALL(wait, select, int, select,
	(int n, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *timeout),
	(n, rd, wr, ex, timeout), (int)no_call(), 0, 0)

REGION(pselect)
LIBCALL(wait, pselect, int, pselect,
	(int n, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *timeout,
	 const sigset_t *mask),
	(n, rd, wr, ex, timeout, mask), (int)no_call(), 0, 0)

REGION(epoll_wait)
LIBCALL(wait, epoll_wait, int, epoll_wait, (int ep, struct epoll_event *events, int n, int timeout),
	(ep, events, n, timeout), (int)no_call(), 0, 0)

REGION(epoll_pwait)
LIBCALL(wait, epoll_pwait, int, epoll_pwait,
	(int ep, struct epoll_event *events, int n, int timeout, const sigset_t *mask),
	(ep, events, n, timeout, mask), (int)no_call(), 0, 0)

/* ---------------------------------------------------------------------- */
/* I/O: a read counts in bytes_received, a write in bytes_sent             */

REGION(read)
LIBCALL(io, read, ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n),
	syscall(SYS_read, fd, buf, n), 0, moved(rc))
LIBCALL(io, read, ssize_t, __read_chk, (int fd, void *buf, size_t n, size_t buflen),
	(fd, buf, n, buflen), (ssize_t)no_call(), 0, moved(rc))

REGION(write)
LIBCALL(io, write, ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n),
	syscall(SYS_write, fd, buf, n), moved(rc), 0)

REGION(pread)
LIBCALL(io, pread, ssize_t, pread, (int fd, void *buf, size_t n, off_t at), (fd, buf, n, at),
	syscall(SYS_pread64, fd, buf, n, at), 0, moved(rc))
LIBCALL(io, pread, ssize_t, pread64, (int fd, void *buf, size_t n, off64_t at), (fd, buf, n, at),
	syscall(SYS_pread64, fd, buf, n, at), 0, moved(rc))
LIBCALL(io, pread, ssize_t, __pread_chk, (int fd, void *buf, size_t n, off_t at, size_t buflen),
	(fd, buf, n, at, buflen), (ssize_t)no_call(), 0, moved(rc))
LIBCALL(io, pread, ssize_t, __pread64_chk, (int fd, void *buf, size_t n, off64_t at, size_t buflen),
	(fd, buf, n, at, buflen), (ssize_t)no_call(), 0, moved(rc))

REGION(pwrite)
LIBCALL(io, pwrite, ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t at),
	(fd, buf, n, at), syscall(SYS_pwrite64, fd, buf, n, at), moved(rc), 0)
LIBCALL(io, pwrite, ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t at),
	(fd, buf, n, at), syscall(SYS_pwrite64, fd, buf, n, at), moved(rc), 0)

REGION(readv)
LIBCALL(io, readv, ssize_t, readv, (int fd, const struct iovec *iov, int n), (fd, iov, n),
	syscall(SYS_readv, fd, iov, n), 0, moved(rc))

REGION(writev)
LIBCALL(io, writev, ssize_t, writev, (int fd, const struct iovec *iov, int n), (fd, iov, n),
	syscall(SYS_writev, fd, iov, n), moved(rc), 0)

REGION(fsync)
LIBCALL(io, fsync, int, fsync, (int fd), (fd), (int)syscall(SYS_fsync, fd), 0, 0)

REGION(fdatasync)
LIBCALL(io, fdatasync, int, fdatasync, (int fd), (fd), (int)syscall(SYS_fdatasync, fd), 0, 0)

/* The caller's buffer: what it got or gave, in whole items. */
REGION(fread)
LIBCALL(io, fread, size_t, fread, (void *buf, size_t size, size_t n, FILE *f), (buf, size, n, f),
	((void)no_call(), 0), 0, (uint64_t)rc *size)
LIBCALL(io, fread, size_t, __fread_chk, (void *buf, size_t buflen, size_t size, size_t n, FILE *f),
	(buf, buflen, size, n, f), ((void)no_call(), 0), 0, (uint64_t)rc *size)

REGION(fwrite)
LIBCALL(io, fwrite, size_t, fwrite, (const void *buf, size_t size, size_t n, FILE *f),
	(buf, size, n, f), ((void)no_call(), 0), (uint64_t)rc *size, 0)

/* ---------------------------------------------------------------------- */
/* I/O: opening files                                                      */

/* Whether open takes a third argument, the new file's mode. */
static inline int needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define MODE(flags, mode)                                                                          \
	mode_t mode = 0;                                                                           \
	if (needs_mode(flags)) {                                                                   \
		va_list ap;                                                                        \
		va_start(ap, flags);                                                               \
		mode = (mode_t)va_arg(ap, int);                                                    \
		va_end(ap);                                                                        \
	}

#define OPEN(region, fn, dirfd)                                                                    \
	SCOPE_EXPORT int fn(const char *path, int flags, ...)                                      \
	{                                                                                          \
		int rc;                                                                            \
		MODE(flags, mode)                                                                  \
		RECORDED(io, region,                                                               \
			 rc = CALL(fn, (path, flags, mode),                                        \
				   (int)syscall(SYS_openat, dirfd, path, flags, mode)),            \
			 0, 0);                                                                    \
		return rc;                                                                         \
	}

#define OPENAT(region, fn)                                                                         \
	SCOPE_EXPORT int fn(int dirfd, const char *path, int flags, ...)                           \
	{                                                                                          \
		int rc;                                                                            \
		MODE(flags, mode)                                                                  \
		RECORDED(io, region,                                                               \
			 rc = CALL(fn, (dirfd, path, flags, mode),                                 \
				   (int)syscall(SYS_openat, dirfd, path, flags, mode)),            \
			 0, 0);                                                                    \
		return rc;                                                                         \
	}

REGION(open)
OPEN(open, open, AT_FDCWD)
OPEN(open, open64, AT_FDCWD)
LIBCALL(io, open, int, __open_2, (const char *path, int flags), (path, flags),
	(int)syscall(SYS_openat, AT_FDCWD, path, flags), 0, 0)
LIBCALL(io, open, int, __open64_2, (const char *path, int flags), (path, flags),
	(int)syscall(SYS_openat, AT_FDCWD, path, flags), 0, 0)

REGION(openat)
OPENAT(openat, openat)
OPENAT(openat, openat64)
LIBCALL(io, openat, int, __openat_2, (int dirfd, const char *path, int flags), (dirfd, path, flags),
	(int)syscall(SYS_openat, dirfd, path, flags), 0, 0)
LIBCALL(io, openat, int, __openat64_2, (int dirfd, const char *path, int flags),
	(dirfd, path, flags), (int)syscall(SYS_openat, dirfd, path, flags), 0, 0)
