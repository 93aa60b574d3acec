/* SPDX-License-Identifier: MIT */
/* Unit tests of writer/spill.c: calls packed as varints with zigzag gaps come back as they went in.
 */
#include "spill.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

/* Values at the edges of each varint length and of the zigzag gaps between
 * starts: 0, 7-bit boundaries, 2^63 and the maxima, ascending and back. */
static const uint64_t edges[] = {
	0,
	UINT64_MAX,
	1,
	127,
	128,
	16383,
	16384,
	UINT64_C(1) << 63,
	(UINT64_C(1) << 63) - 1,
	UINT64_C(1) << 32,
	5,
	5,
	0,
	UINT64_MAX - 1,
	123456789012345,
};
#define NEDGES (sizeof edges / sizeof edges[0])

static const char *const here[] = {".", NULL};

static struct spilled_call call_of(uint64_t row)
{
	struct spilled_call c = {
		.start = edges[row % NEDGES],
		.duration = edges[(row + 3) % NEDGES],
		.thread = (uint32_t)edges[(row + 5) % NEDGES],
		.depth = (uint16_t)edges[(row + 7) % NEDGES],
		.task = (uint32_t)edges[(row + 9) % NEDGES],
		.flags = (uint8_t)(row % 3 == 0	  ? 0
				   : row % 3 == 1 ? EVENT_UNFINISHED
						  : 0x3f),
	};
	return c;
}

/* Row ROW's window as spill_read gave it: every column of the call, its
 * bytes and its counters. */
static int same_row(const struct events *ev, uint64_t slot, uint64_t row)
{
	struct spilled_call c = call_of(row);
	unsigned long long r = (unsigned long long)row;
	int bad = 0;

#define SAME(want, got, col)                                                                       \
	do {                                                                                       \
		if ((uint64_t)(want) != (uint64_t)(got)) {                                         \
			EXPECT_U64((uint64_t)(want), (uint64_t)(got), "spill_read: row %llu's %s", \
				   r, col);                                                        \
			bad = 1;                                                                   \
		}                                                                                  \
	} while (0)
	SAME(c.start, ev->start[slot], "start");
	SAME(row % 5 == 4 ? row + 1 : c.duration, ev->duration[slot], "duration");
	SAME(c.thread, ev->thread[slot], "thread");
	SAME(c.depth, ev->depth[slot], "depth");
	SAME(c.task, ev->task[slot], "task");
	SAME(row % 5 == 4 ? EVENT_UNFINISHED : c.flags, ev->flags[slot], "flags");
	SAME(row % 4 == 2 ? UINT64_MAX - row : row % 4 == 3 ? 2 * row : 0, ev->sent[slot], "sent");
	SAME(row % 4 == 2 ? row : 0, ev->received[slot], "received");
	SAME(row % 3 == 1 ? edges[row % NEDGES] : 0, ev->counter[0][slot], "counter0");
	SAME(row % 3 == 1 ? row : 0, ev->counter[1][slot], "counter1");
#undef SAME
	return !bad;
}

/*
 * Every value at the edges of the varints, a call each in a region of its
 * own, spilled in a scrambled order with bytes, counters and late ends
 * for some, and read back in windows of WINDOW rows: every value is what
 * went in.
 */
static void edges_round_trip(uint64_t window)
{
	struct spill *s = spill_open(here, window);
	struct region regions[NEDGES] = {0};
	struct events ev = {0};
	uint64_t prev[NEDGES] = {0}, good = 0, n = NEDGES;

	if (!s) {
		EXPECT_STR(NULL, writer_failure(), "spill_open(window %llu)",
			   (unsigned long long)window);
		return;
	}
	for (uint64_t k = 0; k < n; k++) {
		uint64_t row = k * 7 % n; /* 7 and n share no factor */
		uint32_t r = (uint32_t)row;
		struct spilled_call c = call_of(row);
		int rc;
		regions[row] = (struct region){.first = row, .count = 1};
		if (row % 5 == 4)
			c.flags |= SPILL_LATER;
		rc = spill_call(s, r, 0, &c);
		if (rc == 0 && row % 4 == 2) /* two records of one call's bytes add up */
			rc = spill_bytes(s, r, 0, UINT64_MAX - row - 1, row) ||
			     spill_bytes(s, r, 0, 1, 0);
		else if (rc == 0 && row % 4 == 3)
			rc = spill_bytes(s, r, 0, 2 * row, 0);
		if (rc == 0 && row % 3 == 1)
			rc = spill_counters(s, r, 0, 0, edges[row % NEDGES], row);
		if (rc == 0 && row % 5 == 4)
			rc = spill_later(s, r, 0, row + 1, EVENT_UNFINISHED);
		EXPECT_I64(0, rc, "spilling row %llu", (unsigned long long)row);
	}
	EXPECT_I64(0, spill_done(s, n, 1, 2), "spill_done(n %llu)", (unsigned long long)n);
	EXPECT_U64((n + window - 1) / window, spill_windows(s), "spill_windows(window %llu)",
		   (unsigned long long)window);
	for (uint64_t w = 0; w < spill_windows(s); w++) {
		uint64_t lo = w * window;
		EXPECT_I64(0, spill_read(s, w, regions, (uint32_t)n, prev, &ev),
			   "spill_read(window %llu)", (unsigned long long)w);
		for (uint64_t i = 0; i < ev.n; i++)
			good += same_row(&ev, i, lo + i);
	}
	EXPECT_U64(n, good, "spill_read(window %llu): rows read back whole",
		   (unsigned long long)window);
	events_free(&ev);
	spill_close(s);
}

/* A window with a call missing is refused, saying so. */
static void missing_call(void)
{
	struct spill *s = spill_open(here, 4);
	struct region one = {.first = 0, .count = 4};
	struct events ev = {0};
	uint64_t prev = 0;

	if (!s) {
		EXPECT_STR(NULL, writer_failure(), "spill_open(window 4)");
		return;
	}
	for (uint64_t i = 0; i < 3; i++) {
		struct spilled_call c = call_of(i);
		spill_call(s, 0, i, &c);
	}
	spill_done(s, 4, 0, 0);
	EXPECT_I64(-1, spill_read(s, 0, &one, 1, &prev, &ev), "spill_read(3 of 4 calls spilled)");
	EXPECT_STR("the arena changed while it was read (3 of 4 calls)", writer_failure(),
		   "writer_failure() after spill_read(3 of 4 calls spilled)");
	events_free(&ev);
	spill_close(s);
}

/* Call index i of region r in the by-region round trip: starts that grow
 * within a region, the other columns varied. */
static struct spilled_call region_call(uint32_t r, uint64_t i)
{
	return (struct spilled_call){
		.start = (uint64_t)r * 1000000000000 + i * 1000 + i % 7,
		.duration = edges[(i + r) % NEDGES],
		.thread = r,
		.depth = (uint32_t)(i % 70000),
		.task = (uint32_t)(i % 3),
		.flags = (uint8_t)(i % 2 ? EVENT_UNFINISHED : 0),
	};
}

static int same_region_row(const struct events *ev, uint64_t slot, uint32_t r, uint64_t i)
{
	struct spilled_call c = region_call(r, i);
	uint64_t gap = i ? c.start - region_call(r, i - 1).start : c.start;
	uint64_t sent = i % 5 == 1 ? 3 * i + 1 : 0;

	return ev->start[slot] == gap && ev->duration[slot] == c.duration &&
	       ev->thread[slot] == c.thread && ev->depth[slot] == c.depth &&
	       ev->task[slot] == c.task && ev->flags[slot] == c.flags && ev->sent[slot] == sent &&
	       ev->received[slot] == (i % 5 == 1 ? i : 0);
}

/*
 * Calls given as their region's index-th, the regions interleaved, before
 * the rows are known (the one pass): read back in windows of rows, each
 * region's calls are at its rows, in order, their starts turned to gaps.
 */
static void by_region(const uint64_t *count, uint32_t nregions, uint64_t window,
		      const char *const *dirs)
{
	struct region regions[8] = {0};
	struct events ev = {0};
	uint64_t prev[8] = {0}, done[8] = {0}, n = 0, good = 0, at = 0;
	struct spill *s;

	for (uint32_t r = 0; r < nregions; r++)
		n += count[r];
	s = spill_open(dirs, window);

	if (!s) {
		EXPECT_STR(NULL, writer_failure(), "spill_open(window %llu)",
			   (unsigned long long)window);
		return;
	}
	for (uint32_t r = 0, first = 0; r < nregions; first += (uint32_t)count[r++]) {
		regions[r].first = first;
		regions[r].count = count[r];
	}
	for (uint64_t k = 0, left = n; left; k++) {
		uint32_t r = (uint32_t)(k % nregions);
		uint64_t i = done[r];
		struct spilled_call c = region_call(r, i);
		int rc;
		if (i == count[r])
			continue;
		rc = spill_call(s, r, i, &c);
		if (rc == 0 && i % 5 == 1) /* two records of one call's bytes add up */
			rc = spill_bytes(s, r, i, 3 * i, i) || spill_bytes(s, r, i, 1, 0);
		if (rc != 0) {
			EXPECT_I64(0, rc, "spill_call(region %u, call %llu)", r,
				   (unsigned long long)i);
			break;
		}
		done[r]++;
		left--;
	}
	EXPECT_I64(0, spill_done(s, n, 1, 0), "spill_done (by region)");
	EXPECT_U64(1, spill_memory(s) > 0, "spill_memory(%llu calls in windows of %llu) > 0",
		   (unsigned long long)n, (unsigned long long)window);
	EXPECT_U64((n + window - 1) / window, spill_windows(s), "spill_windows (by region)");
	for (uint64_t w = 0; w < spill_windows(s); w++) {
		EXPECT_I64(0, spill_read(s, w, regions, nregions, prev, &ev),
			   "spill_read(window %llu, by region)", (unsigned long long)w);
		for (uint64_t j = 0; j < ev.n; j++, at++) {
			uint32_t r = 0;
			while (r + 1 < nregions && at >= regions[r + 1].first)
				r++;
			good += same_region_row(&ev, j, r, at - regions[r].first);
		}
	}
	EXPECT_U64(n, good, "spill_read (by region, window %llu): rows read back whole",
		   (unsigned long long)window);
	events_free(&ev);
	spill_close(s);
}

/* A region's calls given out of turn (3, 4, 0, 1, 2, 5, ...) still read
 * back in order, each with its own values. */
static void out_of_turn(void)
{
	static const uint64_t order[] = {3, 4, 0, 1, 2, 5, 7, 6, 8, 9};
	struct region one = {.first = 0, .count = 10};
	struct events ev = {0};
	uint64_t prev = 0, good = 0;
	struct spill *s = spill_open(here, 16);

	if (!s) {
		EXPECT_STR(NULL, writer_failure(), "spill_open(window 16)");
		return;
	}
	for (int k = 0; k < 10; k++) {
		struct spilled_call c = region_call(0, order[k]);
		EXPECT_I64(0, spill_call(s, 0, order[k], &c), "spill_call(call %llu, out of turn)",
			   (unsigned long long)order[k]);
	}
	EXPECT_I64(0, spill_done(s, 10, 1, 0), "spill_done (out of turn)");
	EXPECT_I64(0, spill_read(s, 0, &one, 1, &prev, &ev), "spill_read (out of turn)");
	for (uint64_t i = 0; i < ev.n; i++) {
		struct spilled_call c = region_call(0, i);
		uint64_t gap = i ? c.start - region_call(0, i - 1).start : c.start;
		good += ev.start[i] == gap && ev.duration[i] == c.duration &&
			ev.depth[i] == c.depth && ev.task[i] == c.task && ev.flags[i] == c.flags;
	}
	EXPECT_U64(10, good, "spill_read (out of turn): rows read back whole, in order");
	events_free(&ev);
	spill_close(s);
}

/* Past what memory holds, in a folder that cannot take the file: one line
 * naming the folder and the cause. */
static void no_folder(void)
{
	static const char *const none[] = {"/nonexistent/spill", NULL};
	struct spill *s = spill_open(none, 4);
	int rc = 0;

	writer_fail_reset();
	for (uint64_t i = 0; s && rc == 0 && i < 100000; i++) {
		struct spilled_call c = call_of(i);
		rc = spill_call(s, 0, i, &c);
	}
	if (rc == 0 && s)
		rc = spill_done(s, 100000, 0, 0);
	EXPECT_I64(-1, rc, "spilling 100000 calls with no folder to spill to");
	EXPECT_STR("cannot create the temporary spill file in /nonexistent/spill: No such file or "
		   "directory",
		   writer_failure(), "writer_failure() with no folder to spill to");
	writer_fail_reset();
	spill_close(s);
}

void unit_spill(void)
{
	static const uint64_t few[] = {3, 1, 9}, many[] = {5, 70000, 130001, 1};
	static const char *const first_missing[] = {"/nonexistent/spill", ".", NULL};
	static const char *const only_missing[] = {"/nonexistent/spill", NULL};

	edges_round_trip(4);		 /* windows by a shift */
	edges_round_trip(3);		 /* by a division */
	edges_round_trip(1);		 /* a call a window */
	edges_round_trip(64);		 /* in memory */
	by_region(few, 3, 4, here);	 /* buckets of one call, in memory and a file */
	by_region(many, 4, 65536, here); /* many buckets a region, windows across regions */
	by_region(many, 4, 1000, here);	 /* a window that is no power of two; mostly in a file */
	by_region(many, 4, 1 << 20, only_missing); /* in memory: no folder needed */
	by_region(many, 4, 4096, first_missing);   /* the file in the next folder */
	out_of_turn();
	missing_call(); /* the writer keeps its first failure: this one */
	no_folder();
}
