/* SPDX-License-Identifier: MIT */
/* The hooks' slow path: thread registration, new chunks, calls not recorded. */
#define _GNU_SOURCE
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

__thread struct scope_thread scope_tls __attribute__((tls_model("initial-exec"))) = {.lane = -1};

static SCOPE_NOINST struct scope_lane *lane_slot(int32_t lane)
{
	struct scope_process *p = &scope_proc;
	return (struct scope_lane *)(p->base + p->hdr->lanes_off) + lane;
}

/* Stops recording this call and every call it makes until it returns; the
 * exits of the calls not recorded are matched by count. */
static SCOPE_NOINST void ignore_call(struct scope_thread *t)
{
	if (t->ignored++ == 0) {
		t->saved_open = t->open;
		t->open = NULL;
	}
	t->limit = NULL;
}

static SCOPE_NOINST int recording(void)
{
	return scope_proc.hdr && !scope_stopped();
}

/* Lets the hooks' fast path run again if nothing holds it off. */
static SCOPE_NOINST void resume(struct scope_thread *t)
{
	if (!t->busy && !t->ignored && recording())
		t->limit = t->chunk_end;
}

void scope_busy_end(struct scope_thread *t)
{
	t->busy--;
	resume(t);
}

/* A full chunk leaves this process's memory: its pages stay in the file
 * (the page cache writes them out), so resident memory grows with the
 * calls still open, not with everything recorded. */
static SCOPE_NOINST void release_chunk(struct scope_process *p, struct scope_rec *end)
{
	char *head = (char *)(end - p->recs_per_chunk) - sizeof(struct scope_chunk_head);
	madvise(head, p->hdr->chunk_bytes, MADV_DONTNEED);
}

/*
 * Moves the thread to a fresh chunk. A signal handler that records may run
 * at any point in here and take a chunk of its own: every step leaves the
 * thread state consistent (chunk_end before cur, the sequence number taken
 * atomically), so neither loses records; at worst the handler's chunk is
 * left part-filled.
 */
static SCOPE_NOINST int next_chunk(struct scope_thread *t)
{
	struct scope_process *p = &scope_proc;
	struct scope_rec *old_end = t->chunk_end, *first;
	struct scope_chunk_head *ch = scope_arena_chunk(p);

	if (!ch)
		return 0;
	ch->lane = (uint32_t)t->lane;
	ch->seq = __atomic_fetch_add(&t->seq, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ch->magic, SCOPE_CHUNK_MAGIC, __ATOMIC_RELEASE);
	first = (struct scope_rec *)(ch + 1);
	t->chunk_end = first + p->recs_per_chunk;
	scope_signal_fence();
	t->cur = first;
	scope_signal_fence();
	resume(t);
	if (old_end)
		release_chunk(p, old_end);
	return 1;
}

static SCOPE_NOINST void stack_bounds(struct scope_thread *t)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}

SCOPE_NOINST void scope_thread_register(int32_t parent)
{
	struct scope_thread *t = &scope_tls;
	struct scope_lane *l;
	int lane;

	if (t->registered || !recording())
		return;
	t->registered = 1;
	lane = scope_arena_lane(&scope_proc, parent);
	if (lane < 0)
		return;
	l = lane_slot(lane);
	l->tid = (uint32_t)gettid();
	l->parent = parent;
	l->start = scope_now();
	prctl(PR_GET_NAME, l->name, 0, 0, 0);
	__atomic_store_n(&l->used, 1, __ATOMIC_RELEASE);
	t->lane = lane;
	stack_bounds(t);
}

/* A thread's new name goes into its lane at once, so a run that is killed
 * keeps it too. */
void scope_thread_named(const char *name)
{
	struct scope_thread *t = &scope_tls;
	if (t->lane >= 0 && scope_proc.hdr && name)
		strncpy(lane_slot(t->lane)->name, name, sizeof lane_slot(t->lane)->name - 1);
}

int32_t scope_thread_lane(void)
{
	return scope_tls.lane;
}

/* Called when the thread ends (or the process stops, for the thread that
 * stops it): the lane gets its end time and the thread's name. */
SCOPE_NOINST void scope_thread_finish(void)
{
	struct scope_thread *t = &scope_tls;
	struct scope_lane *l;

	if (t->lane < 0 || !scope_proc.hdr)
		return;
	l = lane_slot(t->lane);
	l->end = scope_now();
	prctl(PR_GET_NAME, l->name, 0, 0, 0);
	/* Its chunk leaves memory too: ten thousand ended threads would
	 * otherwise keep a chunk resident each. */
	if (t->chunk_end && !scope_stopped())
		release_chunk(&scope_proc, t->chunk_end);
}

/* The calling thread records nothing more: calls still open stay open in
 * the arena, and the exits that come later touch nothing. */
SCOPE_NOINST void scope_thread_stop_self(void)
{
	struct scope_thread *t = &scope_tls;
	t->limit = t->chunk_end = NULL;
	t->open = t->saved_open = NULL;
}

SCOPE_NOINST void scope_enter_slow(void *fn, uintptr_t frame, struct scope_rec *taken)
{
	struct scope_thread *t = &scope_tls;
	int saved_errno = errno;

	/* Give back the slot the fast path took, unless a signal handler has
	 * moved on from it since. */
	if (t->cur == taken + 1)
		t->cur = taken;
	if (!scope_proc.initialized && !t->busy)
		scope_init();
	if (t->busy || t->ignored || !recording()) {
		if (t->ignored && t->dropping && recording())
			scope_arena_lost(&scope_proc, t->dropping - 1);
		ignore_call(t);
		goto out;
	}
	if (!t->registered) {
		scope_busy_begin(t);
		scope_thread_register(-1);
		scope_busy_end(t);
	}
	if (t->lane >= 0 && t->cur >= t->chunk_end)
		next_chunk(t);
	if (t->lane < 0 || t->cur >= t->chunk_end) {
		/* this call and every call it makes are lost, and counted */
		int why = t->lane < 0 ? SCOPE_LOST_NO_LANE : SCOPE_LOST_ARENA_FULL;
		scope_arena_lost(&scope_proc, why);
		ignore_call(t);
		t->dropping = (uint8_t)(why + 1);
		goto out;
	}
	/* read after the slow path's own work, which is not the call's */
	scope_record_open(t, scope_take_slot(t), fn, frame, scope_now());
out:
	errno = saved_errno;
}

/*
 * An exit that is not the innermost open call's. Either calls not recorded
 * are returning, or longjmp, an exception or a thread cancellation left some
 * frames without their exits: then the open chain is searched for the frame
 * that returns, and those above it are closed now.
 */
static SCOPE_NOINST uintptr_t frame_of(const struct scope_thread *t, const struct scope_rec *r)
{
	return t->frames[(r->fn >> SCOPE_REC_ADDR_BITS) & (SCOPE_FRAME_SLOTS - 1)];
}

/* Whether two frames are on one stack: the thread's own, or not. A
 * coroutine (swapcontext) runs on a stack of its own. */
static SCOPE_NOINST int same_stack(const struct scope_thread *t, uintptr_t a, uintptr_t b)
{
	int in_a = a >= t->stack_lo && a < t->stack_hi, in_b = b >= t->stack_lo && b < t->stack_hi;
	return !t->stack_hi || in_a == in_b;
}

/* Ends r, which child (or nothing, when r is innermost) sits on. */
static SCOPE_NOINST void unlink_close(struct scope_thread *t, struct scope_rec *child,
				      struct scope_rec *r, uint64_t now)
{
	struct scope_rec *parent = scope_record_parent(r);
	if (child)
		child->end = SCOPE_REC_OPEN | (uint64_t)(uintptr_t)parent;
	else
		t->open = parent;
	t->depth--;
	scope_signal_fence();
	r->end = now;
}

/*
 * An exit that is not the innermost open call's. Either calls not recorded
 * are returning; or longjmp without the wrapper, or an exception whose
 * unwinding calls no exit hooks (clang), left frames behind: those on this
 * stack above the returning call end now. Calls open on another stack
 * belong to a context switched away from (swapcontext): they stay open.
 */
SCOPE_NOINST void scope_exit_slow(void *fn, uint64_t now, uintptr_t frame)
{
	struct scope_thread *t = &scope_tls;
	struct scope_rec *r, *child = NULL, *above;

	if (t->ignored) {
		if (--t->ignored == 0) {
			t->open = t->saved_open;
			t->dropping = 0;
			resume(t);
		}
		return;
	}
	for (r = t->open; r; r = scope_record_parent(r))
		if (scope_record_is(r, fn) && same_stack(t, frame_of(t, r), frame))
			break;
	if (!r)
		return;
	for (above = t->open; above != r;) {
		struct scope_rec *next = scope_record_parent(above);
		if (same_stack(t, frame_of(t, above), frame))
			unlink_close(t, child, above, now);
		else
			child = above;
		above = next;
	}
	unlink_close(t, child, r, now);
}

/* The cost of one recorded call, enter and exit hooks together, measured on
 * a scratch chunk so that reports can subtract it. The best of a few
 * rounds: the question is what the hooks cost, not what the machine did
 * meanwhile. */
uint64_t scope_measure_overhead(void)
{
	enum { CALLS = 256, ROUNDS = 8 };
	struct scope_thread *t = &scope_tls, saved = *t;
	struct scope_rec scratch[CALLS];
	uint64_t best = UINT64_MAX;

	for (int round = 0; round < ROUNDS; round++) {
		uint64_t t0, t1;
		t->cur = scratch;
		t->limit = t->chunk_end = scratch + CALLS;
		t->open = NULL;
		t->depth = 0;
		t0 = scope_now();
		for (int i = 0; i < CALLS; i++) {
			__cyg_profile_func_enter((void *)&scope_measure_overhead, NULL);
			__cyg_profile_func_exit((void *)&scope_measure_overhead, NULL);
		}
		t1 = scope_now();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	*t = saved;
	return best / CALLS;
}

/*
 * What an MPI call moved, in the slot after whatever the call recorded so
 * far, while the call is still open: the record carries the call's depth,
 * and the writer gives it to the latest call of that depth before it. The
 * slot is taken as the hooks take theirs, and fn is stored last, so a
 * signal handler that records meanwhile neither shares the slot nor sees
 * half a record. A call not being recorded (ignored, or recording
 * stopped) has no open record of its own and gets no bytes either.
 */
SCOPE_NOINST void scope_record_bytes(void *fn, uint64_t sent, uint64_t received)
{
	struct scope_thread *t = &scope_tls;
	struct scope_rec *open = t->open, *r;

	if (!open || !scope_record_is(open, fn))
		return;
	r = scope_take_slot(t);
	if (r >= t->limit) {
		if (t->cur == r + 1)
			t->cur = r;
		if (t->busy || t->ignored || !recording() || t->lane < 0)
			return;
		if (t->cur >= t->chunk_end && !next_chunk(t))
			return;
		if (t->cur >= t->chunk_end)
			return;
		r = scope_take_slot(t);
	}
	r->start = sent;
	r->end = received;
	scope_signal_fence();
	r->fn = SCOPE_REC_BYTES | (open->fn & ~SCOPE_REC_ADDR_MASK);
}
