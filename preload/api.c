/* SPDX-License-Identifier: MIT */
/* The functions of include/scope/scope.h as the profiler runs them; libscope.so's do nothing. */
#define _GNU_SOURCE
#include "record.h"

#include <scope/scope.h>

/* The record key of a named region: SCOPE_REC_NAMED + its name's slot;
 * NULL when it has none (not recording, names area full). */
static SCOPE_NOINST void *named(const char *name, enum scope_name_kind kind)
{
	uint32_t slot;

	if (!scope_proc.initialized)
		scope_init();
	slot = scope_name_slot(name, kind);
	if (slot == UINT32_MAX || SCOPE_REC_NAMED + slot >= SCOPE_REC_CODE)
		return NULL;
	return (void *)(uintptr_t)(SCOPE_REC_NAMED + slot);
}

/* A named region is a call of its key: the hooks keep it on the thread's
 * stack of calls, so it nests, and calls made while the library is busy
 * or the thread paused are left out the same way. */
SCOPE_EXPORT void scope_region_begin(const char *name)
{
	void *key = named(name, SCOPE_NAME_USER);

	if (key)
		__cyg_profile_func_enter(key, __builtin_return_address(0));
}

SCOPE_EXPORT void scope_region_end(const char *name)
{
	void *key = named(name, SCOPE_NAME_USER);

	if (key)
		__cyg_profile_func_exit(key, __builtin_return_address(0));
}

/* A thread sharing another's TLS block (clone.c) pauses with it. */
SCOPE_EXPORT void scope_pause(void)
{
	struct scope_thread *t = &scope_tls;

	t->paused = 1;
	t->limit = NULL;
}

SCOPE_EXPORT void scope_resume(void)
{
	struct scope_thread *t = &scope_tls;

	t->paused = 0;
	scope_thread_resume(t);
}

SCOPE_EXPORT void scope_pause_process(void)
{
	__atomic_store_n(&scope_proc.paused, 1, __ATOMIC_SEQ_CST);
	scope_tls.limit = NULL;
	scope_threads_pause();
}

SCOPE_EXPORT void scope_resume_process(void)
{
	__atomic_store_n(&scope_proc.paused, 0, __ATOMIC_SEQ_CST);
	scope_thread_resume(&scope_tls);
}
