/* SPDX-License-Identifier: MIT */
/* The two hooks -finstrument-functions calls: the whole hot path. */
#include "filter.h"
#include "record.h"

#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Each hook is written once, inlined twice: in the hook itself with the
 * TSC, and in a function of its own with CLOCK_MONOTONIC, which the hook
 * jumps to when the TSC is not the clock. Every other call the hooks make
 * is a jump too, so they need no stack frame.
 *
 * While filters apply, the fast path's tests fail for every call (see
 * struct scope_thread), and the slow branches go to the filters: the fast
 * path pays nothing for them.
 */
static inline __attribute__((always_inline)) void enter(void *fn, uintptr_t frame, int tsc)
{
	uint64_t now = tsc ? scope_tsc() : scope_mono_ns();
	struct scope_thread *t = &scope_tls;
	struct scope_rec *r;

	if (scope_below_floor(t)) {
		scope_enter_slow(fn, frame, NULL);
		return;
	}
	r = scope_take_slot(t);
	if (unlikely(r >= t->limit)) {
		/* read again: the fast path compares with memory */
		if (__atomic_load_n(&t->limit, __ATOMIC_RELAXED) == SCOPE_LIMIT_FILTER)
			scope_filter_enter(fn, r, frame, now);
		else
			scope_enter_slow(fn, frame, r);
		return;
	}
	scope_record_open(t, r, fn, frame, now);
}

static inline __attribute__((always_inline)) void leave(void *fn, uintptr_t frame, int tsc)
{
	struct scope_thread *t = &scope_tls;
	struct scope_rec *seen = t->cur;
	uint64_t now = tsc ? scope_tsc() : scope_mono_ns();
	struct scope_rec *r = t->open;

	if (unlikely(!r || !scope_record_is(r, fn))) {
		if (scope_filtering)
			scope_filter_exit(fn, now, frame);
		else
			scope_exit_slow(fn, now, frame);
		return;
	}
	t->open = scope_record_parent(r);
	t->depth--;
	scope_signal_fence();
	/* A signal handler that recorded since the clock was read ran inside
	 * this call: the call ends after it. */
	if (unlikely(t->cur != seen))
		now = tsc ? scope_tsc() : scope_mono_ns();
	r->end = now;
}

static SCOPE_NOINST __attribute__((noinline, cold)) void enter_mono(void *fn, uintptr_t frame)
{
	enter(fn, frame, 0);
}

static SCOPE_NOINST __attribute__((noinline, cold)) void leave_mono(void *fn, uintptr_t frame)
{
	leave(fn, frame, 0);
}

SCOPE_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	if (unlikely(!scope_clock_is_tsc))
		enter_mono(fn, scope_caller_frame());
	else
		enter(fn, scope_caller_frame(), 1);
}

SCOPE_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	if (unlikely(!scope_clock_is_tsc))
		leave_mono(fn, scope_caller_frame());
	else
		leave(fn, scope_caller_frame(), 1);
}
