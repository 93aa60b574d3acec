/* SPDX-License-Identifier: MIT */
/* The two hooks -finstrument-functions calls: the whole hot path. */
#include "filter.h"
#include "record.h"

#define unlikely(x) __builtin_expect(!!(x), 0)

/* While filters apply, the fast path's tests fail for every call (see
 * struct scope_thread), and the slow branches go to the filters: the
 * fast path pays nothing for them. */
SCOPE_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	uint64_t now = scope_now();
	struct scope_thread *t = &scope_tls;
	struct scope_rec *r = scope_take_slot(t);
	(void)site;

	if (unlikely(r >= t->limit)) {
		/* read again: the fast path compares with memory */
		if (__atomic_load_n(&t->limit, __ATOMIC_RELAXED) == SCOPE_LIMIT_FILTER)
			scope_filter_enter(fn, scope_caller_frame(), r, now);
		else
			scope_enter_slow(fn, scope_caller_frame(), r);
		return;
	}
	scope_record_open(t, r, fn, scope_caller_frame(), now);
}

SCOPE_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
	struct scope_thread *t = &scope_tls;
	struct scope_rec *seen = t->cur;
	uint64_t now = scope_now();
	struct scope_rec *r = t->open;
	(void)site;

	if (unlikely(!r || !scope_record_is(r, fn))) {
		if (scope_filtering)
			scope_filter_exit(fn, now, scope_caller_frame());
		else
			scope_exit_slow(fn, now, scope_caller_frame());
		return;
	}
	t->open = scope_record_parent(r);
	t->depth--;
	scope_signal_fence();
	/* A signal handler that recorded since the clock was read ran inside
	 * this call: the call ends after it. */
	if (unlikely(t->cur != seen))
		now = scope_now();
	r->end = now;
}
