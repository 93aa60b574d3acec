/* SPDX-License-Identifier: MIT */
/* Grouping the calls of many lanes: the lanes merged in start order, each call spilled as its
 * region's next. */
#define _GNU_SOURCE
#include "collect.h"
#include "lane_heap.h"
#include "grow.h"
#include "progress.h"
#include "spill.h"

#include <scope/aggregate.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One lane's records, read in order, chunk after chunk. */
struct cursor {
	struct lane_key key;			 /* first: the heap holds its address */
	const struct scope_rec *r, *first, *end; /* in the current chunk */
	uint64_t chunk, chunk_end;		 /* the lane's chunks in the sorted list */
	int was_open;				 /* the first pass found the call at r open */
	uint32_t task;				 /* the lane's task at r */
	uint64_t rnote;				 /* the next record note of this lane */
	uint64_t last_key;
	uint32_t last_rid;
	struct depth_track track;
	/* The latest call at each depth, for its bytes: its region and
	 * index among the region's calls (rid: the region + 1, 0: none). */
	uint32_t *rid;
	uint64_t *index;
	uint64_t depths;
};

struct streamer {
	struct grouping *gr;
	struct spill *spill;
	struct event_max *max;
	uint64_t *seen; /* per region: calls placed */
	uint64_t *last; /* per region: the start of the call placed last */
	uint64_t max_start;
	int unordered; /* a lane's calls did not come in start order */
	struct cursor *cur;
	struct lane_key **heap; /* by the start of each lane's next call */
	uint32_t nheap;
	struct chunk_batch done; /* read chunks, every lane's, not yet let go */
};

static const struct scope_rec *chunk_recs(const struct grouping *gr, uint64_t i)
{
	return (const void *)(gr->chunks[i].at + sizeof(struct scope_chunk_head));
}

static int note_call(struct cursor *c, uint32_t depth, uint32_t rid, uint64_t index)
{
	uint64_t cap = c->depths;

	if (depth >= c->depths &&
	    (scope_grow((void **)&c->index, &cap, (uint64_t)depth + 1, sizeof *c->index) != 0 ||
	     scope_grow_zeroed((void **)&c->rid, &c->depths, cap, sizeof *c->rid) != 0))
		return -1;
	c->rid[depth] = rid + 1;
	c->index[depth] = index;
	return 0;
}

static int add_bytes(struct streamer *s, struct cursor *c, const struct scope_rec *r)
{
	uint32_t depth = depth_of_bytes(&c->track, c->key.lane, r);

	if (depth >= c->depths || !c->rid[depth])
		return 0; /* its call was not recorded */
	note_spilled_bytes(s->max, r->start, r->end);
	return spill_bytes(s->spill, c->rid[depth] - 1, c->index[depth], r->start, r->end);
}

/* A counters record: counters 2k and 2k + 1 of the call of its depth. */
static int add_counters(struct streamer *s, struct cursor *c, const struct scope_rec *r, int k)
{
	uint32_t depth = depth_of_bytes(&c->track, c->key.lane, r);

	if (depth >= c->depths || !c->rid[depth])
		return 0; /* its call was not recorded */
	note_spilled_counters(s->max, k, r->start, r->end);
	return spill_counters(s->spill, c->rid[depth] - 1, c->index[depth], (uint32_t)k, r->start,
			      r->end);
}

/* Points c at chunk position i of its lane: the slots the first pass read. */
static void enter_chunk(const struct grouping *gr, struct cursor *c, uint64_t i)
{
	c->chunk = i;
	c->r = c->first = chunk_recs(gr, i);
	c->end = c->r + gr->chunks[i].used;
	progress_add(gr->chunks[i].used); /* the second visit of its records */
}

/* Moves c to its lane's next call, handling bytes records on the way,
 * as the first pass read them. Returns 1 at a call, 0 at the lane's end,
 * -1 on failure. */
static int advance(struct streamer *s, struct cursor *c)
{
	struct grouping *gr = s->gr;

	for (;;) {
		for (; c->r < c->end; c->r++) {
			uint32_t note;
			if (rec_is_task(c->r)) {
				c->task = task_of(gr, c->r);
				continue;
			}
			if (scope_rec_is_bytes(c->r)) {
				if (add_bytes(s, c, c->r) != 0)
					return -1;
				continue;
			}
			if (rec_counters(gr, c->r) >= 0) {
				if (gr->counters &&
				    add_counters(s, c, c->r, rec_counters(gr, c->r)) != 0)
					return -1;
				continue;
			}
			if ((c->r->fn & SCOPE_REC_ADDR_MASK) && scope_rec_is_side(c->r))
				continue;
			note = rec_note(gr, &c->rnote, c->chunk, (uint32_t)(c->r - c->first));
			if (note != NOTE_SKIP && c->r->start <= gr->stop_tick) {
				c->was_open = note == NOTE_OPEN;
				c->key.start_ns = tick_ns(gr->clock, c->r->start);
				return 1;
			}
		}
		chunk_done(&s->done, gr->chunks[c->chunk].at, gr->a->hdr->chunk_bytes);
		if (c->chunk + 1 >= c->chunk_end)
			return 0;
		enter_chunk(gr, c, c->chunk + 1);
	}
}

/* Places the call at c and notes the columns' largest values. */
static int emit(struct streamer *s, struct cursor *c)
{
	struct grouping *gr = s->gr;
	const struct scope_rec *r = c->r;
	uint32_t known = gr->map.n, rid;
	uint64_t index;
	int module;
	struct spilled_call call = {.thread = c->key.lane, .task = c->task};

	rid = grouping_region(gr, r, &c->last_key, &c->last_rid, &module);
	if (depth_of(&c->track, c->key.lane, r, &call.depth) != 0)
		return -1;
	if (rid >= known || s->seen[rid] >= gr->regions[rid].count)
		return 0; /* not seen by the first pass: cannot happen */
	call.flags = grouping_times(gr, r, c->key.lane, c->was_open, &call.start, &call.duration);
	index = s->seen[rid]++;
	note_spilled(s->max, &call, index, &s->last[rid], &s->max_start, &s->unordered);
	if ((gr->bytes || gr->counters) && note_call(c, call.depth, rid, index) != 0)
		return -1;
	return spill_call(s->spill, rid, index, &call);
}

/* One cursor per lane that has calls, in a heap by next start. */
static int start_cursors(struct streamer *s)
{
	struct grouping *gr = s->gr;
	uint64_t i = 0;

	s->cur = calloc(gr->a->nlanes + 1, sizeof *s->cur);
	s->heap = calloc(gr->a->nlanes + 1, sizeof *s->heap);
	if (!s->cur || !s->heap)
		return -1;
	while (i < gr->nchunks) {
		struct cursor *c = &s->cur[gr->chunks[i].lane];
		int at;
		c->key.lane = gr->chunks[i].lane;
		c->rnote = rec_note_from(gr, i);
		enter_chunk(gr, c, i);
		while (i < gr->nchunks && gr->chunks[i].lane == c->key.lane)
			i++;
		c->chunk_end = i;
		if ((at = advance(s, c)) < 0)
			return -1;
		if (at)
			s->heap[s->nheap++] = &c->key;
	}
	lane_heap_make(s->heap, s->nheap);
	return 0;
}

static int merge_lanes(struct streamer *s)
{
	while (s->nheap > 0) {
		struct cursor *c = (struct cursor *)s->heap[0];
		int at;
		if (emit(s, c) != 0)
			return -1;
		c->r++;
		if ((at = advance(s, c)) < 0)
			return -1;
		if (!at)
			s->heap[0] = s->heap[--s->nheap];
		lane_heap_down(s->heap, s->nheap, 0);
	}
	return 0;
}

int stream_group(struct grouping *gr, struct profile *p, uint64_t window, const char *const *dirs)
{
	struct streamer s = {.gr = gr, .max = &p->max};
	int rc = -1;

	memset(&p->max, 0, sizeof p->max);
	s.seen = calloc(gr->map.n + 1, sizeof *s.seen);
	s.last = calloc(gr->map.n + 1, sizeof *s.last);
	if (!s.seen || !s.last || !(s.spill = spill_open(dirs, window)) || start_cursors(&s) != 0 ||
	    merge_lanes(&s) != 0 ||
	    spill_done(s.spill, gr->n, gr->bytes, gr->counters ? gr->ncounters : 0) != 0) {
		writer_fail("out of memory while grouping the calls");
		goto out;
	}
	/* A gap is never more than the latest start. */
	if (s.unordered)
		p->max.start_delta = s.max_start;
	p->spill = s.spill;
	s.spill = NULL;
	rc = 0;
out:
	chunks_release(&s.done);
	for (uint32_t i = 0; s.cur && i < gr->a->nlanes; i++) {
		free(s.cur[i].rid);
		free(s.cur[i].index);
		depth_track_free(&s.cur[i].track);
	}
	free(s.cur);
	free(s.heap);
	free(s.seen);
	free(s.last);
	spill_close(s.spill);
	return rc;
}
