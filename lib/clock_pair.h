/* SPDX-License-Identifier: MIT */
/* A tick counter reading and a CLOCK_MONOTONIC reading that belong together. */
#ifndef SCOPE_LIB_CLOCK_PAIR_H
#define SCOPE_LIB_CLOCK_PAIR_H

#include <stdint.h>

/*
 * A profile's tick rate comes from two such pairs. Read one straight after
 * the other, the two readings of a pair can be microseconds apart: the
 * first clock_gettime after a sleep or at a process's start is slow (here
 * about 2 us, which over the 10 ms a running process's rate may be taken
 * on is 200 parts per million). So the monotonic reading is bracketed by two
 * ticks, a few times over, and the tightest bracket is kept, with the tick
 * halfway through it.
 */
#define CLOCK_PAIR_TRIES 4

static inline void clock_pair(uint64_t (*tick)(void), uint64_t (*mono_ns)(void), uint64_t *t,
			      uint64_t *ns)
{
	uint64_t best = UINT64_MAX, bt = 0, bn = 0;

	for (int i = 0; i < CLOCK_PAIR_TRIES; i++) {
		uint64_t before = tick(), mono = mono_ns(), after = tick();
		if (after >= before && after - before < best) {
			best = after - before;
			bt = before + best / 2;
			bn = mono;
		}
	}
	if (best == UINT64_MAX) { /* a counter going backwards: take the last reading */
		bt = tick();
		bn = mono_ns();
	}
	/* stored once: *t and *ns may be a shared header's, read meanwhile */
	*t = bt;
	*ns = bn;
}

#endif
