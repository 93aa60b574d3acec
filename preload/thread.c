/* SPDX-License-Identifier: MIT */
/* The hooks' slow path: thread registration, new chunks, calls not recorded. */
#define _GNU_SOURCE
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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
	return scope_proc.hdr && !scope_proc.stopped;
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

static SCOPE_NOINST int next_chunk(struct scope_thread *t)
{
	struct scope_process *p = &scope_proc;
	struct scope_chunk_head *ch = scope_arena_chunk(p);
	struct scope_rec *first;

	if (t->chunk_end)
		release_chunk(p, t->chunk_end);
	if (!ch)
		return 0;
	ch->lane = (uint32_t)t->lane;
	ch->seq = t->seq++;
	__atomic_store_n(&ch->magic, SCOPE_CHUNK_MAGIC, __ATOMIC_RELEASE);
	first = (struct scope_rec *)(ch + 1);
	t->cur = first;
	t->limit = t->chunk_end = first + p->recs_per_chunk;
	return 1;
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
	__atomic_store_n(&l->used, 1, __ATOMIC_RELEASE);
	t->lane = lane;
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
}

/* The calling thread records nothing more: calls still open stay open in
 * the arena, and the exits that come later touch nothing. */
SCOPE_NOINST void scope_thread_stop_self(void)
{
	struct scope_thread *t = &scope_tls;
	t->limit = t->chunk_end = NULL;
	t->open = t->saved_open = NULL;
}

SCOPE_NOINST void scope_enter_slow(void *fn, uintptr_t frame)
{
	struct scope_thread *t = &scope_tls;
	int saved_errno = errno;

	if (!scope_proc.initialized && !t->busy)
		scope_init();
	if (t->busy || t->ignored || !recording()) {
		ignore_call(t);
		goto out;
	}
	scope_busy_begin(t);
	if (!t->registered)
		scope_thread_register(-1);
	if (t->lane >= 0 && t->cur >= t->chunk_end)
		next_chunk(t);
	scope_busy_end(t);
	if (t->lane < 0 || t->cur >= t->chunk_end) {
		scope_arena_lost(&scope_proc,
				 t->lane < 0 ? SCOPE_LOST_NO_LANE : SCOPE_LOST_ARENA_FULL);
		ignore_call(t);
		goto out;
	}
	scope_record_open(t, t->cur, fn, frame);
out:
	errno = saved_errno;
}

/*
 * An exit that is not the innermost open call's. Either calls not recorded
 * are returning, or longjmp, an exception or a thread cancellation left some
 * frames without their exits: then the open chain is searched for the frame
 * that returns, and those above it are closed now.
 */
SCOPE_NOINST void scope_exit_slow(void *fn, uint64_t now)
{
	struct scope_thread *t = &scope_tls;
	struct scope_rec *r;

	if (t->ignored) {
		if (--t->ignored == 0) {
			t->open = t->saved_open;
			resume(t);
		}
		return;
	}
	for (r = t->open; r && !scope_record_is(r, fn); r = scope_record_parent(r))
		;
	if (!r)
		return;
	while (t->open != r)
		scope_record_close(t, t->open, now);
	scope_record_close(t, r, now);
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
