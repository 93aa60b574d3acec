/* SPDX-License-Identifier: MIT */
/* Unit tests of writer/events.c's events_sort: a region's calls in start order, then lane order,
 * every column moved with its call. */
#include "unit.h"
#include "writer.h"

#include <stdlib.h>
#include <string.h>

/*
 * Each call is told by its row as read, kept in depth; every other column
 * is made from it, so a call whose columns did not all move together shows.
 * Calls of equal start and lane keep the order they were read in.
 */
static void fill_call(struct events *e, uint64_t row, uint64_t start, uint32_t lane)
{
	e->start[row] = start;
	e->thread[row] = lane;
	e->depth[row] = (uint32_t)row;
	e->duration[row] = row * 10 + 1;
	e->task[row] = (uint32_t)(row % 7);
	e->flags[row] = (uint8_t)(row % 2);
	if (e->sent) {
		e->sent[row] = row * 3;
		e->received[row] = row * 5;
	}
	for (int k = 0; k < SCOPE_MAX_COUNTERS; k++)
		if (e->counter[k])
			e->counter[k][row] = row * 100 + (uint64_t)k;
}

/* Checks [first, first + n) of e against the calls as read (start, lane by row). */
static void expect_sorted(const struct events *e, uint64_t first, uint64_t n, const uint64_t *start,
			  const uint32_t *lane, const char *what)
{
	uint64_t out_of_order = 0, moved_apart = 0, outside = 0;
	char *seen = calloc(e->n + 1, 1);

	for (uint64_t i = first; i < first + n; i++) {
		uint64_t row = e->depth[i];
		int apart = row >= e->n || seen[row] || e->start[i] != start[row] ||
			    e->thread[i] != lane[row] || e->duration[i] != row * 10 + 1 ||
			    e->task[i] != row % 7 || e->flags[i] != row % 2 ||
			    (e->sent && (e->sent[i] != row * 3 || e->received[i] != row * 5));
		for (int k = 0; k < SCOPE_MAX_COUNTERS; k++)
			apart |= e->counter[k] && e->counter[k][i] != row * 100 + (uint64_t)k;
		moved_apart += apart;
		if (row < e->n)
			seen[row] = 1;
		if (i > first) {
			uint64_t prev = e->depth[i - 1];
			out_of_order += e->start[i - 1] > e->start[i] ||
					(e->start[i - 1] == e->start[i] &&
					 (e->thread[i - 1] > e->thread[i] ||
					  (e->thread[i - 1] == e->thread[i] && prev > row)));
		}
	}
	for (uint64_t i = 0; i < e->n; i++)
		if ((i < first || i >= first + n) && e->depth[i] != i)
			outside++;
	EXPECT_U64(0, out_of_order, "%s: calls out of (start, lane, read) order", what);
	EXPECT_U64(0, moved_apart, "%s: calls whose columns did not move together", what);
	EXPECT_U64(0, outside, "%s: calls outside the range that moved", what);
	free(seen);
}

struct shape {
	const char *what;
	uint64_t n, first, count; /* the calls, and the range sorted */
	int bytes;
	uint32_t ncounters;
	void (*make)(uint64_t row, uint64_t *start, uint32_t *lane);
};

/* Sorted already: one scan, nothing moves. */
static void sorted(uint64_t row, uint64_t *start, uint32_t *lane)
{
	*start = row * 3;
	*lane = 0;
}

/* Four lanes read one after another, each in its own start order, with
 * starts shared between lanes and within one. */
static void lanes(uint64_t row, uint64_t *start, uint32_t *lane)
{
	*lane = (uint32_t)(row / 250);
	*start = (row % 250) / 2 * 10 + *lane % 2;
}

/* The last lane read first: runs that start later than they were read. */
static void reversed_lanes(uint64_t row, uint64_t *start, uint32_t *lane)
{
	*lane = (uint32_t)(3 - row / 100);
	*start = (row % 100) * 7 + (uint64_t)*lane;
}

/* No runs at all: starts from a linear congruential sequence, 3 lanes. */
static void scattered(uint64_t row, uint64_t *start, uint32_t *lane)
{
	*start = (row * UINT64_C(6364136223846793005) + 1442695040888963407) >> 54;
	*lane = (uint32_t)(row % 3);
}

/* Every call at the same tick: lane order, then read order. */
static void one_tick(uint64_t row, uint64_t *start, uint32_t *lane)
{
	*start = UINT64_MAX - 1;
	*lane = (uint32_t)((row * 5) % 4);
}

static void sort_shape(const struct shape *s)
{
	struct events e;
	uint64_t *start = malloc((s->n + 1) * sizeof *start);
	uint32_t *lane = malloc((s->n + 1) * sizeof *lane);

	if (!start || !lane || events_alloc(&e, s->n, s->bytes, s->ncounters) != 0) {
		EXPECT_STR("memory", NULL, "%s: events_alloc", s->what);
		free(start);
		free(lane);
		return;
	}
	for (uint64_t row = 0; row < s->n; row++) {
		s->make(row, &start[row], &lane[row]);
		fill_call(&e, row, start[row], lane[row]);
	}
	EXPECT_I64(0, events_sort(&e, s->first, s->count), "%s: events_sort", s->what);
	expect_sorted(&e, s->first, s->count, start, lane, s->what);
	events_free(&e);
	free(start);
	free(lane);
}

void unit_sort(void)
{
	static const struct shape shapes[] = {
		{"sorted", 500, 0, 500, 0, 0, sorted},
		{"four lanes", 1000, 0, 1000, 1, 4, lanes},
		{"four lanes, last read first", 400, 0, 400, 0, 2, reversed_lanes},
		{"scattered", 5000, 0, 5000, 1, 0, scattered},
		{"one tick", 64, 0, 64, 0, 1, one_tick},
		{"a range inside the calls", 1000, 300, 400, 1, 1, scattered},
		{"one call", 10, 4, 1, 0, 0, scattered},
		{"no call", 10, 4, 0, 0, 0, scattered},
	};

	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
		sort_shape(&shapes[i]);
}
