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

static struct spilled_call call_of(uint64_t row)
{
	struct spilled_call c = {
		.at = row,
		.start = edges[row % NEDGES],
		.duration = edges[(row + 3) % NEDGES],
		.thread = (uint32_t)edges[(row + 5) % NEDGES],
		.depth = (uint16_t)edges[(row + 7) % NEDGES],
		.flags = (uint8_t)(row % 3 == 0	  ? 0
				   : row % 3 == 1 ? EVENT_UNFINISHED
						  : 0x3f),
	};
	if (row >= NEDGES) { /* past the edges: starts that grow and shrink a little */
		c.start = row * 7919 % 100003 + (row & 1 ? UINT64_C(1) << 40 : 0);
		c.duration = row * row;
	}
	return c;
}

/* Row ROW's window as spill_read gave it: every column of the call, and its bytes. */
static int same_row(const struct events *ev, uint64_t slot, uint64_t row, int bytes)
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
	SAME(c.duration, ev->duration[slot], "duration");
	SAME(c.thread, ev->thread[slot], "thread");
	SAME(c.depth, ev->depth[slot], "depth");
	SAME(c.flags, ev->flags[slot], "flags");
	if (bytes) {
		SAME(row % 4 == 2   ? UINT64_MAX - row
		     : row % 4 == 3 ? 2 * row
				    : 0,
		     ev->sent[slot], "sent");
		SAME(row % 4 == 2 ? row : 0, ev->received[slot], "received");
	}
#undef SAME
	return !bad;
}

/*
 * N calls spilled in windows of WINDOW rows, in a scrambled order (a
 * window's records say their rows), with bytes for some; read back, every
 * value is what went in.
 */
static void round_trip(uint64_t n, uint64_t window, int bytes)
{
	struct spill *s = spill_open(".", n, window, bytes, 0);
	struct events ev = {0};
	uint64_t prev = 0, good = 0, taken = 0, step = n % 7 ? 7 : 11;

	if (!s) {
		EXPECT_STR(NULL, writer_failure(), "spill_open(\".\", %llu, %llu)",
			   (unsigned long long)n, (unsigned long long)window);
		return;
	}
	for (uint64_t k = 0; k < n; k++) {
		uint64_t row = k * step % n; /* step and n share no factor */
		struct spilled_call c = call_of(row);
		int rc = spill_call(s, &c);
		if (rc == 0 && bytes && row % 4 == 2) /* two records of one call's bytes add up */
			rc = spill_bytes(s, row, UINT64_MAX - row - 1, row) ||
			     spill_bytes(s, row, 1, 0);
		else if (rc == 0 && bytes && row % 4 == 3)
			rc = spill_bytes(s, row, 2 * row, 0);
		if (rc != 0) {
			EXPECT_I64(0, rc, "spill_call or spill_bytes(row %llu)",
				   (unsigned long long)row);
			break;
		}
		taken++;
	}
	EXPECT_U64(n, taken, "spill_call(n %llu): calls taken", (unsigned long long)n);
	EXPECT_I64(0, spill_flush(s), "spill_flush(n %llu)", (unsigned long long)n);
	EXPECT_U64((n + window - 1) / window, spill_windows(s),
		   "spill_windows(n %llu, window %llu)", (unsigned long long)n,
		   (unsigned long long)window);
	EXPECT_U64(window, spill_window_rows(s), "spill_window_rows(window %llu)",
		   (unsigned long long)window);
	for (uint64_t w = 0; w < spill_windows(s); w++) {
		uint64_t lo = w * window, len = n - lo < window ? n - lo : window;
		EXPECT_I64(0, spill_read(s, w, NULL, 0, &prev, &ev), "spill_read(window %llu)",
			   (unsigned long long)w);
		EXPECT_U64(len, ev.n, "spill_read(window %llu).n", (unsigned long long)w);
		for (uint64_t i = 0; i < len && i < ev.n; i++)
			good += same_row(&ev, i, lo + i, bytes);
	}
	EXPECT_U64(n, good, "spill_read(n %llu, window %llu): rows read back whole",
		   (unsigned long long)n, (unsigned long long)window);
	events_free(&ev);
	spill_close(s);
}

/* A window with a call missing is refused, saying so. */
static void missing_call(void)
{
	struct spill *s = spill_open(".", 4, 4, 0, 0);
	struct events ev = {0};
	uint64_t prev = 0;

	if (!s) {
		EXPECT_STR(NULL, writer_failure(), "spill_open(\".\", 4, 4)");
		return;
	}
	for (uint64_t row = 0; row < 3; row++) {
		struct spilled_call c = call_of(row);
		spill_call(s, &c);
	}
	spill_flush(s);
	EXPECT_I64(-1, spill_read(s, 0, NULL, 0, &prev, &ev), "spill_read(3 of 4 calls spilled)");
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
static void by_region(const uint64_t *count, uint32_t nregions, uint64_t window)
{
	struct spill *s = spill_open_by_region(".", window);
	struct region regions[8] = {0};
	struct events ev = {0};
	uint64_t prev[8] = {0}, done[8] = {0}, n = 0, good = 0, at = 0;

	if (!s) {
		EXPECT_STR(NULL, writer_failure(), "spill_open_by_region(\".\", %llu)",
			   (unsigned long long)window);
		return;
	}
	for (uint32_t r = 0; r < nregions; r++) {
		regions[r].first = n;
		regions[r].count = count[r];
		n += count[r];
	}
	for (uint64_t k = 0, left = n; left; k++) {
		uint32_t r = (uint32_t)(k % nregions);
		uint64_t i = done[r];
		struct spilled_call c = region_call(r, i);
		int rc;
		if (i == count[r])
			continue;
		rc = spill_region_call(s, r, i, &c);
		if (rc == 0 && i % 5 == 1) /* two records of one call's bytes add up */
			rc = spill_region_bytes(s, r, i, 3 * i, i) ||
			     spill_region_bytes(s, r, i, 1, 0);
		if (rc != 0) {
			EXPECT_I64(0, rc, "spill_region_call(region %u, call %llu)", r,
				   (unsigned long long)i);
			break;
		}
		done[r]++;
		left--;
	}
	EXPECT_I64(0, spill_flush(s), "spill_flush (by region)");
	spill_by_region_done(s, n, 1, window);
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

void unit_spill(void)
{
	static const uint64_t few[] = {3, 1, 9}, many[] = {5, 70000, 130001, 1};

	round_trip(NEDGES, 4, 1);     /* windows by a shift */
	round_trip(NEDGES, 3, 0);     /* by a division */
	round_trip(1, 1, 1);	      /* one call */
	round_trip(200003, 65536, 1); /* many blocks a window */
	by_region(few, 3, 4);	      /* buckets of one call */
	by_region(many, 4, 65536);    /* many buckets a region, windows across regions */
	by_region(many, 4, 1000);     /* a window that is no power of two */
	missing_call();		      /* the writer keeps its first failure: this one */
	EXPECT_U64(0, (uintptr_t)spill_open("/nonexistent/spill", 4, 4, 0, 0),
		   "spill_open(\"/nonexistent/spill\")");
}
