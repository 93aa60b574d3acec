/* SPDX-License-Identifier: MIT */
/* Opening and closing one call record: the stores the hooks make. */
#ifndef SCOPE_PRELOAD_RECORD_H
#define SCOPE_PRELOAD_RECORD_H

#include "clock.h"
#include "state.h"

/* Keeps a signal handler that runs between two stores from seeing them in
 * another order; costs no instruction. cur moves first, so a handler that
 * records takes the next slot instead of this one. */
#define scope_signal_fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* The instrumented function's frame: its stack pointer when it called the
 * hook (the hook's canonical frame address). */
#if defined(__GNUC__) && !defined(__clang__)
#define scope_caller_frame() ((uintptr_t)__builtin_dwarf_cfa())
#else
#define scope_caller_frame() ((uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *))
#endif

/*
 * Takes the thread's next record slot in one instruction, so a signal
 * handler that records on this thread meanwhile takes the slot after it,
 * never the same one. xadd without a lock prefix: only this thread writes
 * cur, and an instruction is never split by a signal.
 */
static inline __attribute__((always_inline)) struct scope_rec *
scope_take_slot(struct scope_thread *t)
{
#if defined(__x86_64__)
	uintptr_t r = sizeof(struct scope_rec);
	__asm__ volatile("xaddq %0, %1" : "+r"(r), "+m"(t->cur));
	return (struct scope_rec *)r;
#else
	struct scope_rec *r = t->cur;
	t->cur = r + 1;
	scope_signal_fence();
	return r;
#endif
}

/* A slot t took and did not use, filled with a record of nothing (cold). */
void scope_pad_slot(struct scope_thread *t, struct scope_rec *taken) SCOPE_HIDDEN;

/*
 * Gives back taken, the slot scope_take_slot gave, in one instruction on
 * x86-64 (a compare-exchange without a lock prefix, as the slot was taken):
 * a signal handler that records before it finds the slot taken, one that
 * records after it takes the slot again. When a handler has taken slots
 * after it meanwhile, the slot cannot come back: try returns 0, and
 * scope_give_back pads it.
 */
static inline __attribute__((always_inline)) int scope_try_give_back(struct scope_thread *t,
								     struct scope_rec *taken)
{
	struct scope_rec *expect = taken + 1;
#if defined(__x86_64__)
	int done;
	__asm__ volatile("cmpxchgq %3, %1"
			 : "+a"(expect), "+m"(t->cur), "=@ccz"(done)
			 : "r"(taken));
	return done;
#else
	if (t->cur == expect)
		t->cur = taken;
	else
		expect = t->cur;
	scope_signal_fence();
	return expect == taken + 1;
#endif
}

static inline __attribute__((always_inline)) void scope_give_back(struct scope_thread *t,
								  struct scope_rec *taken)
{
	if (__builtin_expect(!scope_try_give_back(t, taken), 0))
		scope_pad_slot(t, taken);
}

/* r is a slot taken with scope_take_slot. now is read before anything
 * changes: a signal handler that records while this runs then starts after
 * the call it interrupts. */
static inline __attribute__((always_inline)) void scope_record_open(struct scope_thread *t,
								    struct scope_rec *r, void *fn,
								    uintptr_t frame, uint64_t now)
{
	t->frames[t->depth & (SCOPE_FRAME_SLOTS - 1)] = frame;
	r->fn = (uint64_t)(uintptr_t)fn | (uint64_t)t->depth << SCOPE_REC_ADDR_BITS;
	r->end = SCOPE_REC_OPEN | (uint64_t)(uintptr_t)t->open;
	r->start = now;
	scope_signal_fence();
	t->depth++;
	t->open = r;
}

static inline struct scope_rec *scope_record_parent(const struct scope_rec *r)
{
	return (struct scope_rec *)(uintptr_t)(r->end & ~SCOPE_REC_OPEN);
}

static inline __attribute__((always_inline)) void
scope_record_close(struct scope_thread *t, struct scope_rec *r, uint64_t now)
{
	t->open = scope_record_parent(r);
	t->depth--;
	scope_signal_fence();
	r->end = now;
}

static inline int scope_record_is(const struct scope_rec *r, void *fn)
{
	return (r->fn & SCOPE_REC_ADDR_MASK) == (uint64_t)(uintptr_t)fn;
}

#endif
