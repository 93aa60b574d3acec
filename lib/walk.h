/* SPDX-License-Identifier: MIT */
/* Replays a process's calls in start order and rebuilds each thread lane's call stack. */
#ifndef SCOPE_LIB_WALK_H
#define SCOPE_LIB_WALK_H

#include "reader.h"

/* A call open on a lane's stack. */
struct wk_frame {
	uint64_t region, pair;
	uint64_t index; /* of the call in its pair: its row is /pairs/first + index */
	uint64_t start, end, duration; /* relative ns; end = start + duration */
	uint64_t depth;		       /* as recorded */
	uint64_t child_ns;	       /* durations of its direct callees seen so far */
	uint64_t calls_under;	       /* calls made from it, directly or not, seen so far */
	uint64_t child_total;	       /* total_ns of its direct callees seen so far */
	/* at leave: duration, less the recording's cost when the visitor asks
	 * for it (wk_visitor.overhead_ns) */
	uint64_t total_ns;
	/* at leave: duration - child_ns, a few ns below 0 when clock rounding
	 * lets a callee end after its caller; with overhead_ns, total_ns -
	 * child_total, at least 0 */
	int64_t self_ns;
	uint64_t tag;  /* the visitor's own */
	uint64_t task; /* its task lane, 0 = none (read when wk_visitor.tasks asks) */
	uint8_t flags;
};

struct wk_lane {
	size_t process, lane;
	struct wk_frame *stack; /* stack[0] outermost, stack[n - 1] the call entered or left */
	size_t n, cap;
};

struct wk_visitor {
	void *ctx;
	/*
	 * What recording one call cost, ns; 0: times as recorded. A call's
	 * total_ns is then its duration less the cost of its own hooks and
	 * those of every call it made, directly or not, and its self_ns its
	 * total_ns less its direct callees' total_ns, both at least 0. Example,
	 * 20 ns a call: f (1000 ns) calls g (300 ns), which calls h (30 ns):
	 * h 10 total, 10 self; g 300 - 2 * 20 = 260 total, 250 self; f 1000 -
	 * 3 * 20 = 940 total, 680 self.
	 */
	double overhead_ns;
	int tasks; /* nonzero: read each call's task lane into wk_frame.task */
	/* A call starts: lane->stack[lane->n - 1], its callers below it.
	 * Return 0 to go on, -1 to stop the walk. */
	int (*enter)(void *ctx, struct wk_lane *lane);
	/* It ends, self_ns known, after all of its callees. Same returns. */
	int (*leave)(void *ctx, struct wk_lane *lane);
};

/*
 * Walks the calls of process: of every lane (lane < 0) or of that lane only.
 * A call comes after every call that starts before it, and a caller before
 * a callee that starts at the same ns; each lane's calls nest as a stack,
 * rebuilt from depth and containment. Memory stays bounded: every pair of
 * the process is read through its own cursor, in slices that share a fixed
 * budget. Returns 0; -1 with the reason in p->err when the events cannot be
 * read; -2 when the visitor stopped the walk.
 */
int wk_process(struct rd_profile *p, size_t process, int64_t lane, const struct wk_visitor *v);

#endif
