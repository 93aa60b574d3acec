/* SPDX-License-Identifier: MIT */
/* Lanes' cursors in a heap by the start of each one's next call, then by lane. */
#ifndef SCOPE_WRITER_LANE_HEAP_H
#define SCOPE_WRITER_LANE_HEAP_H

#include <stdint.h>

/* The first member of a cursor over a lane's calls: its place in the heap's
 * order. */
struct lane_key {
	uint64_t start_ns; /* of the lane's next call */
	uint32_t lane;
};

/* Start order, then lane order (two ticks can make one ns). */
static inline int lane_before(const struct lane_key *a, const struct lane_key *b)
{
	return a->start_ns < b->start_ns || (a->start_ns == b->start_ns && a->lane < b->lane);
}

/* Moves heap[i] down to its place among heap[0, n). */
static inline void lane_heap_down(struct lane_key **heap, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		if (l < n && lane_before(heap[l], heap[m]))
			m = l;
		if (l + 1 < n && lane_before(heap[l + 1], heap[m]))
			m = l + 1;
		if (m == i)
			return;
		struct lane_key *t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

/* Puts heap[0, n) in heap order. */
static inline void lane_heap_make(struct lane_key **heap, uint32_t n)
{
	for (uint32_t k = n / 2 + 1; k-- > 0;)
		lane_heap_down(heap, n, k);
}

#endif
