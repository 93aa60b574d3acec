/* SPDX-License-Identifier: MIT */
/* The two hooks -finstrument-functions calls: the whole hot path. */
#include "filter.h"
#include "record.h"

#define unlikely(x) __builtin_expect(!!(x), 0)

SCOPE_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	uint64_t now;
	struct scope_thread *t = &scope_tls;
	struct scope_rec *r;
	(void)site;

	if (unlikely(scope_filtering)) {
		scope_filter_enter(fn, scope_caller_frame());
		return;
	}
	now = scope_now();
	if (scope_below_floor(t))
		goto foreign;
	r = scope_take_slot(t);
	if (unlikely(r >= t->limit)) {
		scope_enter_slow(fn, scope_caller_frame(), r);
		return;
	}
	scope_record_open(t, r, fn, scope_caller_frame(), now);
	return;
foreign:
	scope_enter_slow(fn, scope_caller_frame(), NULL);
}

SCOPE_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
	struct scope_thread *t = &scope_tls;
	struct scope_rec *seen, *r;
	uint64_t now;
	(void)site;

	if (unlikely(scope_filtering)) {
		scope_filter_exit(fn, scope_caller_frame());
		return;
	}
	seen = t->cur;
	now = scope_now();
	r = t->open;
	if (unlikely(!r || !scope_record_is(r, fn))) {
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
