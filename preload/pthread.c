/* SPDX-License-Identifier: MIT */
/* The pthread_create trampoline: every thread gets a lane that names its parent. */
#define _GNU_SOURCE
#include "filter.h"
#include "state.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static create_fn real_pthread_create;
static pthread_key_t finish_key;

struct start {
	void *(*fn)(void *);
	void *arg;
	int32_t parent;
};

/* The key's value when the thread has no signal stack of ours. */
static char no_stack;

static SCOPE_NOINST void on_thread_exit(void *stack)
{
	scope_thread_finish();
	if (stack != &no_stack)
		scope_signals_thread_end(stack);
}

static SCOPE_NOINST void *trampoline(void *v)
{
	struct start s = *(struct start *)v;
	void *stack;

	free(v);
	scope_thread_register(s.parent);
	scope_sample_thread();
	stack = scope_signals_thread_begin();
	/* A value for the key makes on_thread_exit run however the thread
	 * ends: return, pthread_exit or cancellation. */
	pthread_setspecific(finish_key, stack ? stack : &no_stack);
	return s.fn(s.arg);
}

SCOPE_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
				void *arg)
{
	struct start *s;
	int rc;

	if (!real_pthread_create && scope_pthread_init() != 0)
		return ENOSYS;
	scope_busy_begin(&scope_tls);
	s = malloc(sizeof *s);
	scope_busy_end(&scope_tls);
	if (!s)
		return real_pthread_create(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	s->parent = scope_thread_lane();
	rc = real_pthread_create(th, attr, trampoline, s);
	if (rc != 0)
		free(s);
	return rc;
}

int scope_pthread_init(void)
{
	if (!real_pthread_create) {
		real_pthread_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
		pthread_key_create(&finish_key, on_thread_exit);
		scope_clone_resolve();
		pthread_atfork(NULL, NULL, scope_clone_forget);
	}
	return real_pthread_create ? 0 : -1;
}

typedef int (*setname_fn)(pthread_t, const char *);
static setname_fn real_setname;

SCOPE_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	/* Threads that name themselves at once may all look it up: each finds
	 * the same function, so relaxed atomics suffice. */
	setname_fn real = __atomic_load_n(&real_setname, __ATOMIC_RELAXED);
	int rc;
	if (!real) {
		real = (setname_fn)dlsym(RTLD_NEXT, "pthread_setname_np");
		__atomic_store_n(&real_setname, real, __ATOMIC_RELAXED);
	}
	if (!real)
		return ENOSYS;
	rc = real(th, name);
	if (rc == 0 && pthread_equal(th, pthread_self()))
		scope_thread_named(name);
	return rc;
}
