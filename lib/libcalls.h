/* SPDX-License-Identifier: MIT */
/* The C library's calls the preload library records as regions, and the kind of each region. */
#ifndef SCOPE_LIBCALLS_H
#define SCOPE_LIBCALLS_H

#include <string.h>

/*
 * Each list names regions: the C function a call was made to. Variants of
 * one function are recorded under its name: open64, __open_2 and
 * __open64_2 as open; pread64 and __pread_chk (_FORTIFY_SOURCE) as pread;
 * __read_chk as read; __fread_chk as fread; __poll_chk as poll;
 * __ppoll_chk as ppoll.
 *
 * wait: calls that block the thread until something else happens.
 * io:   calls that move data or open and close files; the bytes a call
 *       moved are its bytes_sent (write) or bytes_received (read).
 */
#define SCOPE_LIBCALLS_WAIT(X)                                                                     \
	X(pthread_join)                                                                            \
	X(pthread_mutex_lock)                                                                      \
	X(pthread_cond_wait)                                                                       \
	X(pthread_cond_timedwait)                                                                  \
	X(pthread_rwlock_rdlock)                                                                   \
	X(pthread_rwlock_wrlock)                                                                   \
	X(pthread_rwlock_timedrdlock)                                                              \
	X(pthread_rwlock_timedwrlock)                                                              \
	X(pthread_rwlock_clockrdlock)                                                              \
	X(pthread_rwlock_clockwrlock)                                                              \
	X(pthread_barrier_wait)                                                                    \
	X(sem_wait)                                                                                \
	X(sleep)                                                                                   \
	X(usleep)                                                                                  \
	X(nanosleep)                                                                               \
	X(clock_nanosleep)                                                                         \
	X(wait)                                                                                    \
	X(waitpid)                                                                                 \
	X(wait4)                                                                                   \
	X(poll)                                                                                    \
	X(ppoll)                                                                                   \
	X(select)                                                                                  \
	X(pselect)                                                                                 \
	X(epoll_wait)                                                                              \
	X(epoll_pwait)

#define SCOPE_LIBCALLS_IO(X)                                                                       \
	X(read)                                                                                    \
	X(write)                                                                                   \
	X(pread)                                                                                   \
	X(pwrite)                                                                                  \
	X(readv)                                                                                   \
	X(writev)                                                                                  \
	X(open)                                                                                    \
	X(openat)                                                                                  \
	X(close)                                                                                   \
	X(fsync)                                                                                   \
	X(fdatasync)                                                                               \
	X(fread)                                                                                   \
	X(fwrite)

/* "wait" or "io" for the region of libscope_preload.so called name; NULL
 * for any other name (an MPI call). */
static inline const char *scope_libcall_kind(const char *name)
{
#define SCOPE_LIBCALL_IS(fn) || strcmp(name, #fn) == 0
	if (0 SCOPE_LIBCALLS_WAIT(SCOPE_LIBCALL_IS))
		return "wait";
	if (0 SCOPE_LIBCALLS_IO(SCOPE_LIBCALL_IS))
		return "io";
#undef SCOPE_LIBCALL_IS
	return NULL;
}

#endif
