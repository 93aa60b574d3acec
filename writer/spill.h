/* SPDX-License-Identifier: MIT */
/* Calls kept in a temporary file while they are grouped by region, read back a window at a time. */
#ifndef SCOPE_WRITER_SPILL_H
#define SCOPE_WRITER_SPILL_H

#include "writer.h"

/* One call as the grouping pass found it; at is its row in /events. */
struct spilled_call {
	uint64_t at, start, duration;
	uint32_t thread;
	uint32_t depth;
	uint32_t task;
	uint8_t flags;
};
_Static_assert(SC_NEV == 12, "a new /events column: a field here (or a record of its own, as the "
			     "bytes have) and its encoding in spill.c");

/* A spill of n calls in windows of window rows, in a file made in dir.
 * Returns NULL with the cause noted (writer_fail). */
struct spill *spill_open(const char *dir, uint64_t n, uint64_t window, int bytes,
			 uint32_t ncounters);
void spill_close(struct spill *s);

/* A spill filled before the rows are known: each call given as its
 * region's index-th (spill_region_call, spill_region_bytes). Once every
 * call is in, spill_by_region_done says how many there are (n, in the
 * regions' first and count that spill_read is given) and whether any moved
 * bytes, and the windows of rows it is read in.
 * Returns NULL with the cause noted. */
struct spill *spill_open_by_region(const char *dir, uint64_t window);
int spill_region_call(struct spill *s, uint32_t region, uint64_t index,
		      const struct spilled_call *c);
int spill_region_bytes(struct spill *s, uint32_t region, uint64_t index, uint64_t sent,
		       uint64_t received);
/* A call spilled with this flag has its duration and flags given later,
 * by spill_region_later (a call still open when it was read). */
#define SPILL_LATER 0x40
int spill_region_later(struct spill *s, uint32_t region, uint64_t index, uint64_t duration,
		       uint8_t flags);
void spill_by_region_done(struct spill *s, uint64_t n, int bytes, uint64_t window);

/* Each returns 0, or -1 with the cause noted (writer_fail): a full disk,
 * most likely. */
int spill_call(struct spill *s, const struct spilled_call *c);
int spill_bytes(struct spill *s, uint64_t at, uint64_t sent, uint64_t received);
/* Counters 2k and 2k + 1's change over the call at row at. */
int spill_counters(struct spill *s, uint64_t at, uint32_t k, uint64_t a, uint64_t b);
int spill_flush(struct spill *s);

uint64_t spill_windows(const struct spill *s);
uint64_t spill_window_rows(const struct spill *s);

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

#endif
