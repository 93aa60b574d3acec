/* SPDX-License-Identifier: MIT */
/* Calls grouped by region as they are read, in memory or a temporary file, read back by rows. */
#ifndef SCOPE_WRITER_SPILL_H
#define SCOPE_WRITER_SPILL_H

#include "writer.h"

/* One call as the grouping found it. */
struct spilled_call {
	uint64_t start, duration;
	uint32_t thread;
	uint32_t depth;
	uint32_t task;
	uint8_t flags;
};
_Static_assert(SC_NEV == 12, "a new /events column: a field here (or a record of its own, as the "
			     "bytes have) and its encoding in spill.c");

/*
 * A spill is filled before the calls' rows are known: each call is given
 * as the index-th of its region (spill_call; its bytes, counters and a
 * late end by the same index). It is read back in windows of window rows
 * once every call is in and the regions' places are known (spill_done).
 * Its first records stay in memory, up to 64 bytes a call of a window
 * (and 64 MiB for all spills together); the rest go to a temporary file
 * in the first of dirs (NULL-ended, copied) that takes it, and move on to
 * the next one when a folder fills up. Returns NULL with the cause noted
 * (writer_fail).
 */
struct spill *spill_open(const char *const *dirs, uint64_t window);
void spill_close(struct spill *s);

/* Each returns 0, or -1 with the cause noted (writer_fail): every folder
 * full, most likely. */
int spill_call(struct spill *s, uint32_t region, uint64_t index, const struct spilled_call *c);
int spill_bytes(struct spill *s, uint32_t region, uint64_t index, uint64_t sent, uint64_t received);
/* Counters 2k and 2k + 1's change over the call. */
int spill_counters(struct spill *s, uint32_t region, uint64_t index, uint32_t k, uint64_t a,
		   uint64_t b);
/* A call spilled with this flag has its duration and flags given later,
 * by spill_later (a call still open when it was read). */
#define SPILL_LATER 0x40
int spill_later(struct spill *s, uint32_t region, uint64_t index, uint64_t duration, uint8_t flags);

/* Every call is in: n of them, some moving bytes (bytes), with ncounters
 * counter columns. Writes out what is buffered and lets the buffers go. */
int spill_done(struct spill *s, uint64_t n, int bytes, uint32_t ncounters);

uint64_t spill_windows(const struct spill *s);
/* The records the spill holds in memory, in bytes. */
uint64_t spill_memory(const struct spill *s);

/*
 * Reads window w back as rows [w * window, ...) of /events, ready to
 * write: each region's calls in start order, start turned into the gap to
 * the region's call before (prev holds each region's last start across
 * windows; zeroed before window 0). ev is reused from window to window.
 */
int spill_read(struct spill *s, uint64_t w, const struct region *regions, uint32_t nregions,
	       uint64_t *prev, struct events *ev);

/* Notes call c, its region's index-th, in the columns' largest values m:
 * its start's gap to the region's call before (which started at *last,
 * now c's), or, when c started before that one, *unordered (the gaps are
 * then bounded by the latest start, *max_start). A duration given later
 * (SPILL_LATER) is noted when it comes. */
static inline void note_spilled(struct event_max *m, const struct spilled_call *c, uint64_t index,
				uint64_t *last, uint64_t *max_start, int *unordered)
{
	uint64_t gap = index ? c->start - *last : c->start;

	if (index && c->start < *last)
		*unordered = 1;
	else if (gap > m->start_delta)
		m->start_delta = gap;
	*last = c->start;
	if (c->start > *max_start)
		*max_start = c->start;
	if (!(c->flags & SPILL_LATER) && c->duration > m->duration)
		m->duration = c->duration;
	if (c->thread > m->thread)
		m->thread = c->thread;
	if (c->depth > m->depth)
		m->depth = c->depth;
	if (c->task > m->task)
		m->task = c->task;
}

/* Notes the bytes a spilled call moved in the columns' largest values m. */
static inline void note_spilled_bytes(struct event_max *m, uint64_t sent, uint64_t received)
{
	if (sent > m->sent)
		m->sent = sent;
	if (received > m->received)
		m->received = received;
}

/* Notes counters 2k and 2k + 1's change (a, b) over a spilled call. */
static inline void note_spilled_counters(struct event_max *m, int k, uint64_t a, uint64_t b)
{
	const uint64_t v[2] = {a, b};

	for (int i = 0; i < 2 && 2 * k + i < SCOPE_MAX_COUNTERS; i++)
		if (v[i] > m->counter[2 * k + i])
			m->counter[2 * k + i] = v[i];
}

#endif
