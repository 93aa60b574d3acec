/* SPDX-License-Identifier: MIT */
/* Grouping the calls of many lanes in one pass: the lanes merged in start order. */
#define _GNU_SOURCE
#include "collect.h"
#include "lane_heap.h"
#include "progress.h"

#include <stdlib.h>

/*
 * Each lane's records are read in its order, by a cursor that stops at the
 * lane's next call; the cursors sit in a heap by that call's start, so the
 * calls come out in start order (then lane order), each its region's next.
 * A lane's side records (bytes, counters, sums, samples) are read as its
 * cursor passes them, after the calls they belong to. Each lane keeps its
 * own depths, open calls and outer calls (struct lane_pass), so a call is
 * grouped as it would be were its lane read alone.
 */
struct cursor {
	struct lane_key key;			 /* first: the heap holds its address */
	const struct scope_rec *r, *first, *end; /* in the current chunk */
	uint64_t chunk, chunk_end;		 /* the lane's chunks in the sorted list */
};

struct merger {
	struct grouping *gr;
	struct cursor *cur;
	struct lane_key **heap;
	uint32_t nheap;
	struct chunk_batch done; /* read chunks, every lane's, not yet let go */
};

static void enter_chunk(const struct grouping *gr, struct cursor *c, uint64_t i)
{
	c->chunk = i;
	c->r = c->first =
		(const struct scope_rec *)(gr->chunks[i].at + sizeof(struct scope_chunk_head));
	c->end = c->r + gr->a->recs_per_chunk;
	progress_add(gr->a->recs_per_chunk);
}

/* Moves c to its lane's next call, reading the side records on the way.
 * Returns 1 at a call, 0 at the lane's end, -1 on failure. A chunk's calls
 * end at its first empty slot (see visit_chunk). */
static int advance(struct merger *m, struct cursor *c)
{
	struct grouping *gr = m->gr;

	for (;;) {
		for (; c->r < c->end && c->r->fn; c->r++) {
			uint64_t code = c->r->fn & SCOPE_REC_ADDR_MASK;
			if (__builtin_expect(code < SCOPE_REC_NAMED && code != 0, 0)) {
				if (group_side(gr, c->first, (uint32_t)(c->r - c->first),
					       gr->a->recs_per_chunk, c->key.lane) != 0)
					return -1;
				continue;
			}
			/* being written, at no function's address, or made after the stop */
			if (c->r->start == 0 || code == 0 || c->r->start > gr->stop_tick)
				continue;
			c->key.start_ns = tick_ns(gr->clock, c->r->start);
			return 1;
		}
		chunk_done(&m->done, gr->chunks[c->chunk].at, gr->a->hdr->chunk_bytes);
		if (c->chunk + 1 >= c->chunk_end)
			return 0;
		enter_chunk(gr, c, c->chunk + 1);
	}
}

/* One cursor per lane that has calls left, at its first: from pos[lane]
 * for the lanes before npos (their chunks before pos's seq read already),
 * else from the lane's start. */
static int start_cursors(struct merger *m, const struct lane_pos *pos, uint32_t npos)
{
	struct grouping *gr = m->gr;
	uint64_t i = 0;

	while (i < gr->nchunks) {
		uint32_t lane = gr->chunks[i].lane;
		struct cursor *c = &m->cur[lane];
		uint64_t first = i;
		int at;
		while (i < gr->nchunks && gr->chunks[i].lane == lane)
			i++;
		while (lane < npos && first < i && gr->chunks[first].seq < pos[lane].seq)
			first++;
		if (first == i)
			continue; /* read whole while the process ran */
		c->key.lane = lane;
		enter_chunk(gr, c, first);
		if (lane < npos && gr->chunks[first].seq == pos[lane].seq)
			c->r += pos[lane].slot;
		c->chunk_end = i;
		if ((at = advance(m, c)) < 0)
			return -1;
		if (at)
			m->heap[m->nheap++] = &c->key;
	}
	lane_heap_make(m->heap, m->nheap);
	return 0;
}

static int merge_lanes(struct merger *m)
{
	struct grouping *gr = m->gr;

	while (m->nheap > 0) {
		struct cursor *c = (struct cursor *)m->heap[0];
		int at;
		if (group_call(gr, c->r, c->key.lane) != 0)
			return -1;
		c->r++;
		if ((at = advance(m, c)) < 0)
			return -1;
		if (!at)
			m->heap[0] = m->heap[--m->nheap];
		lane_heap_down(m->heap, m->nheap, 0);
	}
	return 0;
}

int merge_resume(struct grouping *gr, const struct lane_pos *pos, uint32_t npos)
{
	struct merger m = {.gr = gr};
	int rc = -1;

	m.cur = calloc(gr->a->nlanes + 1, sizeof *m.cur);
	m.heap = calloc(gr->a->nlanes + 1, sizeof *m.heap);
	if (m.cur && m.heap && start_cursors(&m, pos, npos) == 0 && merge_lanes(&m) == 0)
		rc = 0;
	chunks_release(&m.done);
	gr->lp = &gr->own;
	free(m.cur);
	free(m.heap);
	return rc;
}

int merge_group(struct grouping *gr)
{
	gr->n = 0;
	return merge_resume(gr, NULL, 0);
}
