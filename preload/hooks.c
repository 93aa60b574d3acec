/* SPDX-License-Identifier: MIT */
/* The two hooks -finstrument-functions calls: the whole hot path. */
#include "record.h"

#define unlikely(x) __builtin_expect(!!(x), 0)

SCOPE_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	uint64_t now = scope_now();
	struct scope_thread *t = &scope_tls;
	struct scope_rec *r = scope_take_slot(t);
	(void)site;

	if (unlikely(r >= t->limit)) {
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
