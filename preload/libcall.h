/* SPDX-License-Identifier: MIT */
/* A wrapped C library call as a region: whether to record it, and the hooks around the original. */
#ifndef SCOPE_PRELOAD_LIBCALL_H
#define SCOPE_PRELOAD_LIBCALL_H

#include "libcalls.h"
#include "filter.h"
#include "state.h"

#include <errno.h>

/* The kinds SCOPE_LIBCALLS chooses, as bits of scope_libcalls. */
enum { SCOPE_LIBCALL_WAIT = 1, SCOPE_LIBCALL_IO = 2 };

/* Every region in lib/libcalls.h, by kind: a wrapper that records a region
 * its kind's list does not name does not build. */
#define SCOPE_LIBCALL_WAIT_ENUM(fn) scope_libcall_wait_##fn,
#define SCOPE_LIBCALL_IO_ENUM(fn)   scope_libcall_io_##fn,
enum scope_libcall_wait { SCOPE_LIBCALLS_WAIT(SCOPE_LIBCALL_WAIT_ENUM) };
enum scope_libcall_io { SCOPE_LIBCALLS_IO(SCOPE_LIBCALL_IO_ENUM) };
#undef SCOPE_LIBCALL_WAIT_ENUM
#undef SCOPE_LIBCALL_IO_ENUM

/* The kinds recorded: 0 until this process records, and in one that never
 * does (the writer, scope's own programs, SCOPE_OFF). */
extern int scope_libcalls SCOPE_HIDDEN;

/* The first and last byte of this library, from the linker. */
extern const char __ehdr_start[] SCOPE_HIDDEN;
extern const char _end[] SCOPE_HIDDEN;

/* The record of the wrapped call (MPI's or the C library's) opened last on
 * this thread; see scope_libcall_wanted. */
extern __thread const struct scope_rec *scope_wrapped SCOPE_HIDDEN
	__attribute__((tls_model("initial-exec")));

/*
 * Whether a call of kind (a SCOPE_LIBCALL_* bit) is recorded, ret being
 * the wrapper's return address. Only the program's calls made inside one
 * of its recorded calls are:
 *
 *   - never a call the library makes itself (its log lines, its reads of
 *     the arena, waiting for the writer), which may come from a slow path
 *     of the hooks where recording would recurse;
 *   - never one made where no recorded call is open: on a thread a
 *     library started (MPI's progress thread in epoll_wait), or before
 *     the first instrumented function; it would stand in no caller;
 *   - never one made inside a wrapped call: MPI_Recv polling is MPI_Recv.
 *
 * Tasks sharing a TLS block (clone.c) have their state elsewhere: the
 * hooks decide for them.
 */
static inline __attribute__((always_inline)) int scope_libcall_wanted(int kind, const void *ret)
{
	const struct scope_thread *t = &scope_tls;
	const char *from = ret;

	if (!(__atomic_load_n(&scope_libcalls, __ATOMIC_RELAXED) & kind) ||
	    (from >= __ehdr_start && from < _end))
		return 0;
	if (__builtin_expect(__atomic_load_n(&t->shared, __ATOMIC_RELAXED), 0))
		return 1;
	if (__builtin_expect(scope_filtering, 0))
		return scope_filter_in_call();
	return t->open && t->open != scope_wrapped;
}

/* Inlined, so that both hooks see the wrapper's own frame. */
static inline __attribute__((always_inline)) void scope_libcall_begin(void *region)
{
	__cyg_profile_func_enter(region, __builtin_return_address(0));
	scope_wrapped = scope_tls.open;
}

/* The bytes go to the region's open call; errno stays the original's. */
static inline __attribute__((always_inline)) void scope_libcall_end(void *region, uint64_t sent,
								    uint64_t received)
{
	int saved = errno;
	if (sent || received)
		scope_record_bytes(region, sent, received);
	__cyg_profile_func_exit(region, __builtin_return_address(0));
	errno = saved;
}

/* libcalls.c: looks every original up, before the program can start a
 * thread or take a signal in a wrapper. */
void scope_libcalls_resolve(void) SCOPE_HIDDEN;

#endif
