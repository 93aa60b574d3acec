/* SPDX-License-Identifier: MIT */
/* clone() without CLONE_SETTLS: tasks that share one TLS block each get a state and lane of their
 * own. */
#define _GNU_SOURCE
#include "record.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

/*
 * A task that clone(CLONE_VM) starts without CLONE_SETTLS runs on its
 * parent's thread pointer, so on the parent's scope_tls: two tasks would
 * take the same record slots and open chains. While such children live,
 * the block is "shared": its fast paths always fail (limit and open are
 * NULL; the fast path's xadd on cur then touches a value nothing reads),
 * and every slow path finds the calling task's own state in this table by
 * its kernel tid. The block's owner moves its state in here when its
 * first child starts, and takes it back at its first hook after the last
 * child has returned. A child gets a state and a lane of its own when its
 * function starts, and gives them back when it returns.
 *
 * The table holds SCOPE_TASKS states; a task that finds none (more tasks,
 * or a clone made by a raw system call into a shared block) has its calls
 * dropped and counted as SCOPE_LOST_SHARED_TLS. Changes of a block's mode
 * are made with every signal blocked, so a handler never sees half of one.
 */
#define SCOPE_TASKS   128
#define TASK_STARTING UINT32_MAX /* a slot handed to a child not yet running */

struct task_start {
	int (*fn)(void *);
	void *arg;
	int32_t parent;
	sigset_t mask; /* the child's signal mask, once it has its state */
	struct scope_thread *block;
};

static uint32_t task_tid[SCOPE_TASKS]; /* whose state slot i is: 0 free */
static uint32_t task_hi;	       /* slots [0, task_hi) have been used */
static struct scope_thread task_state[SCOPE_TASKS];
static struct task_start task_start[SCOPE_TASKS];

typedef int (*clone_fn)(int (*)(void *), void *, int, void *, ...);
static clone_fn real_clone;

void scope_clone_resolve(void)
{
	if (!__atomic_load_n(&real_clone, __ATOMIC_ACQUIRE))
		__atomic_store_n(&real_clone, (clone_fn)dlsym(RTLD_NEXT, "clone"),
				 __ATOMIC_RELEASE);
}

/* A forked child is one task with a fresh state: the table is empty. */
void scope_clone_forget(void)
{
	memset(task_tid, 0, sizeof task_tid);
	task_hi = 0;
}

/* A free slot, marked starting and with a fresh state; -1 when none is. */
static SCOPE_NOINST int claim(void)
{
	for (uint32_t i = 0; i < SCOPE_TASKS; i++) {
		uint32_t expect = 0, hi;
		if (__atomic_load_n(&task_tid[i], __ATOMIC_RELAXED) != 0 ||
		    !__atomic_compare_exchange_n(&task_tid[i], &expect, TASK_STARTING, 0,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		hi = __atomic_load_n(&task_hi, __ATOMIC_RELAXED);
		while (hi < i + 1 &&
		       !__atomic_compare_exchange_n(&task_hi, &hi, i + 1, 0, __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
			;
		memset(&task_state[i], 0, sizeof task_state[i]);
		task_state[i].lane = -1;
		return (int)i;
	}
	return -1;
}

static SCOPE_NOINST void publish(int slot, uint32_t tid)
{
	__atomic_store_n(&task_tid[slot], tid, __ATOMIC_RELEASE);
}

static SCOPE_NOINST int find(uint32_t tid)
{
	uint32_t hi = __atomic_load_n(&task_hi, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < hi; i++)
		if (__atomic_load_n(&task_tid[i], __ATOMIC_ACQUIRE) == tid)
			return (int)i;
	return -1;
}

static SCOPE_NOINST void block_signals(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, old);
}

/* The owner takes its state back into the block: no child is left. */
static SCOPE_NOINST struct scope_thread *take_back(struct scope_thread *b, int slot)
{
	sigset_t old;

	block_signals(&old);
	memcpy(b, &task_state[slot], sizeof *b);
	b->limit = NULL;
	scope_thread_resume(b);
	publish(slot, 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return b;
}

/* The owner found no slot when its block became shared, and lost its
 * state then: with no child left, it goes on as a new thread. */
static SCOPE_NOINST struct scope_thread *start_over(struct scope_thread *b)
{
	sigset_t old;

	block_signals(&old);
	memset(b, 0, sizeof *b);
	b->lane = -1;
	b->inside = 1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return b;
}

struct scope_thread *scope_task_enter(struct scope_thread *b)
{
	uint32_t tid = (uint32_t)gettid();
	int slot = find(tid), alone = !__atomic_load_n(&b->sharers, __ATOMIC_ACQUIRE);
	struct scope_thread *s;

	if (slot < 0)
		return tid == b->owner && alone && !b->inside ? start_over(b) : NULL;
	s = &task_state[slot];
	s->inside++;
	scope_signal_fence();
	if (__atomic_load_n(&task_tid[slot], __ATOMIC_RELAXED) != tid) {
		/* a signal handler took the state back meanwhile */
		b->inside++;
		return b;
	}
	if (tid == b->owner && alone && s->inside == 1 && !s->busy)
		return take_back(b, slot);
	return s;
}

/*
 * Makes the calling task's block shared, if it is not yet, moving the
 * task's state into the table; returns the task's state (NULL when it has
 * none). Called with every signal blocked.
 */
static SCOPE_NOINST struct scope_thread *share(struct scope_thread *b)
{
	uint32_t tid = (uint32_t)gettid();
	int slot;

	if (__atomic_load_n(&b->shared, __ATOMIC_RELAXED)) {
		slot = find(tid);
		return slot < 0 ? NULL : &task_state[slot];
	}
	slot = claim();
	if (slot >= 0) {
		memcpy(&task_state[slot], b, sizeof *b);
		publish(slot, tid);
	}
	/* What is left in the block sends every hook to the slow path. */
	b->cur = b->limit = b->open = b->saved_open = b->chunk_end = NULL;
	b->depth = b->ignored = b->nheld = 0;
	b->busy = b->dropping = 0;
	b->registered = 1;
	b->lane = -1;
	b->owner = tid;
	__atomic_store_n(&b->shared, 1, __ATOMIC_RELEASE);
	return slot < 0 ? NULL : &task_state[slot];
}

/* The child's first and last steps, around the program's function. */
static SCOPE_NOINST int task_main(void *v)
{
	int slot = (int)(intptr_t)v, rc;
	struct task_start st = task_start[slot];
	struct scope_thread *s = &task_state[slot];
	sigset_t old;

	publish(slot, (uint32_t)gettid());
	scope_thread_begin(s, st.parent);
	sigprocmask(SIG_SETMASK, &st.mask, NULL);
	rc = st.fn(st.arg);
	block_signals(&old);
	scope_thread_end(s);
	publish(slot, 0);
	/* The task ends now, signals blocked, touching nothing more. */
	__atomic_sub_fetch(&st.block->sharers, 1, __ATOMIC_RELEASE);
	return rc;
}

static SCOPE_NOINST int clone_shared(int (*fn)(void *), void *stack, int flags, void *arg,
				     pid_t *ptid, void *tls, pid_t *ctid)
{
	struct scope_thread *b = &scope_tls, *self;
	sigset_t old;
	int slot, rc, err;

	block_signals(&old);
	self = share(b);
	slot = claim();
	__atomic_add_fetch(&b->sharers, 1, __ATOMIC_ACQ_REL);
	if (slot >= 0) {
		task_start[slot] = (struct task_start){fn, arg, self ? self->lane : -1, old, b};
		rc = real_clone(task_main, stack, flags, (void *)(intptr_t)slot, ptid, tls, ctid);
	} else {
		/* No state for it: its calls are dropped and counted, and as its
		 * end is not seen, the block stays shared. */
		sigprocmask(SIG_SETMASK, &old, NULL);
		rc = real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	}
	err = errno;
	if (rc < 0) {
		if (slot >= 0)
			publish(slot, 0);
		__atomic_sub_fetch(&b->sharers, 1, __ATOMIC_RELEASE);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return rc;
}

/* Whether the caller is a process of its own (clone with CLONE_VM but not
 * CLONE_THREAD) on its parent's TLS block: its exit or exec ends only
 * itself, not the recording of the process whose memory it shares. A task
 * of the same thread group ends the whole process when it exits or execs. */
int scope_clone_process(void)
{
	struct scope_thread *b = &scope_tls;
	const struct scope_arena_header *h = scope_proc.hdr;

	return __atomic_load_n(&b->shared, __ATOMIC_ACQUIRE) && (uint32_t)gettid() != b->owner &&
	       h && getpid() != h->pid;
}

/* A child of clone without CLONE_VM is a process of its own, as a forked
 * child is, but no atfork handler runs in it: it is told here, before the
 * program's function, or it would record into its parent's arena. */
struct copy_start {
	int (*fn)(void *);
	void *arg;
};

static SCOPE_NOINST int copy_main(void *v)
{
	struct copy_start st = *(struct copy_start *)v;
	int rc;

	scope_clone_forget();
	scope_process_forked();
	rc = st.fn(st.arg);
	/* clone ends the child with the exit system call: no exit handler */
	scope_finish(SCOPE_EXIT_STATUS, rc & 0xff);
	return rc;
}

SCOPE_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	pid_t *ptid, *ctid;
	void *tls;

	/* glibc reads these three whatever the flags say; so do we. */
	va_start(ap, arg);
	ptid = va_arg(ap, pid_t *);
	tls = va_arg(ap, void *);
	ctid = va_arg(ap, pid_t *);
	va_end(ap);
	scope_clone_resolve();
	if (!real_clone) {
		errno = ENOSYS;
		return -1;
	}
	if (fn && !(flags & CLONE_VM)) {
		/* the child reads this from its copy of the caller's memory */
		struct copy_start st = {fn, arg};
		return real_clone(copy_main, stack, flags, &st, ptid, tls, ctid);
	}
	if ((flags & CLONE_SETTLS) || !fn)
		return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	return clone_shared(fn, stack, flags, arg, ptid, tls, ctid);
}
