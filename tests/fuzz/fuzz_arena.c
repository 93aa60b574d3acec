/* SPDX-License-Identifier: MIT */
/* libFuzzer harness of scope-writer's arena reading: each input is an arena file, read as --recover
 * reads it. */
#define _GNU_SOURCE
#include "spill.h"
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Each input is written to a file and goes the way scope-writer takes an
 * arena, up to the HDF5 output: arena_open (the header's checks),
 * tick_clock_init, modules_parse, then collect twice, once grouping in
 * memory and once through a spill file (a window of SPILL_WINDOW calls),
 * whose windows are read back as the profile writer reads them.
 *
 * Besides crashes, leaks and hangs, a finding is a breach of what the
 * writer's later steps assume of what these accepted (see expect_*): the
 * areas of the header inside the mapping, its strings ended, every call on
 * a lane of the lanes table, every region's calls inside the events. Such
 * a breach aborts with the assumption that failed.
 *
 * This file is built without coverage instrumentation (only the writer's
 * files are instrumented).
 */

#define SPILL_WINDOW 64

static char path[PATH_MAX], spill_dir[PATH_MAX];
static int fd = -1;
static int say_fd = 2;	       /* stderr as it was before libFuzzer's -close_fd_mask=2 */
static volatile uint64_t sink; /* keeps the reads of the areas */

static void cleanup(void)
{
	if (fd >= 0)
		unlink(path);
	rmdir(spill_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	dir = dir && *dir ? dir : "/tmp";
	snprintf(path, sizeof path, "%s/fuzz_arena-%d-XXXXXX", dir, (int)getpid());
	snprintf(spill_dir, sizeof spill_dir, "%s/fuzz_arena-%d-spill", dir, (int)getpid());
	fd = mkstemp(path);
	if (fd < 0 || (mkdir(spill_dir, 0700) != 0 && errno != EEXIST)) {
		fprintf(stderr, "fuzz_arena: %s: %s\n", fd < 0 ? path : spill_dir, strerror(errno));
		exit(1);
	}
	atexit(cleanup);
	/* libFuzzer's -close_fd_mask=2 closes stderr; a breach is still said,
	 * here */
	if ((say_fd = dup(2)) < 0)
		say_fd = 2;
	return 0;
}

__attribute__((noreturn)) static void breach(const char *what)
{
	dprintf(say_fd, "fuzz_arena: an accepted arena breaks an assumption: %s\n", what);
	abort();
}

#define EXPECT(cond)                                                                               \
	do {                                                                                       \
		if (!(cond))                                                                       \
			breach(#cond);                                                             \
	} while (0)

static int area_in(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* What main.c, metadata.c and profile_out.c read of an arena arena_open
 * accepted: the command line, the header's paths, the lanes. */
static void expect_header(const struct arena *a)
{
	const struct scope_arena_header *h = a->hdr;
	const struct scope_lane *lanes;
	uint64_t sum = 0;

	EXPECT(a->size >= sizeof *h);
	EXPECT(area_in(h->cmdline_off, h->cmdline_bytes, a->size));
	EXPECT(area_in(h->modules_off, h->modules_cap, a->size));
	EXPECT(area_in(h->lanes_off, (uint64_t)h->lane_capacity * sizeof *lanes, a->size));
	EXPECT(a->nlanes <= h->lane_capacity);
	EXPECT(h->chunk_bytes > sizeof(struct scope_chunk_head));
	EXPECT(h->chunks_off <= a->size &&
	       a->nchunks <= (a->size - h->chunks_off) / h->chunk_bytes);
	EXPECT(a->recs_per_chunk >= 1 &&
	       sizeof(struct scope_chunk_head) +
			       (uint64_t)a->recs_per_chunk * sizeof(struct scope_rec) <=
		       h->chunk_bytes);
	EXPECT(memchr(h->exe, '\0', sizeof h->exe) && memchr(h->cwd, '\0', sizeof h->cwd) &&
	       memchr(h->output, '\0', sizeof h->output) &&
	       memchr(h->parts, '\0', sizeof h->parts) &&
	       memchr(h->compression, '\0', sizeof h->compression));
	for (uint64_t i = 0; i < h->cmdline_bytes; i++)
		sum += (unsigned char)a->base[h->cmdline_off + i];
	lanes = (const struct scope_lane *)(a->base + h->lanes_off);
	for (uint32_t i = 0; i < a->nlanes; i++)
		sum += lanes[i].tid + lanes[i].start + lanes[i].end +
		       (unsigned char)lanes[i].name[15];
	sink = sum;
}

static void expect_modules(const struct module *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		EXPECT(m[i].path && m[i].build_id);
		EXPECT(i == 0 || m[i - 1].lo <= m[i].lo);
	}
}

/* The calls of a window (rows [lo, lo + n)) as the profile writer takes
 * them: on a lane of the lanes table, and, in a profile of one window
 * (whole), an end below 2^64 ns, as the reader wants them. Each region's
 * first call keeps its start, the others the gap to the call before
 * (*start: the absolute start of the call before, at *region); across
 * windows, a start out of order reads as a gap of 0. */
static void expect_calls(const struct arena *a, const struct profile *p, const struct events *ev,
			 uint64_t lo, int whole, uint32_t *region, uint64_t *start)
{
	for (uint64_t i = 0; i < ev->n; i++) {
		while (*region < p->nregions &&
		       lo + i >= p->regions[*region].first + p->regions[*region].count)
			++*region;
		EXPECT(*region < p->nregions);
		*start = lo + i == p->regions[*region].first ? ev->start[i] : *start + ev->start[i];
		EXPECT(ev->thread[i] < a->nlanes);
		EXPECT(ev->flags[i] <= EVENT_UNFINISHED);
		EXPECT(!whole || *start <= UINT64_MAX - ev->duration[i]);
	}
}

static void expect_regions(const struct profile *p, size_t nmods)
{
	uint64_t at = 0;

	for (uint32_t r = 0; r < p->nregions; r++) {
		const struct region *g = &p->regions[r];
		EXPECT(g->first == at && g->count <= p->nevents - at);
		EXPECT(g->module < 0 || (size_t)g->module < nmods);
		at += g->count;
	}
	EXPECT(at == p->nevents);
}

/* Reads a profile's calls back from its spill, window by window. */
static void read_spill(const struct arena *a, const struct profile *p)
{
	uint64_t *prev = calloc(p->nregions + 1, sizeof *prev), rows = 0, start = 0;
	uint32_t region = 0;
	struct events win = {0};
	int whole = 1;

	if (!prev)
		return;
	for (uint64_t w = 0; w < spill_windows(p->spill) && whole; w++) {
		whole = spill_read(p->spill, w, p->regions, p->nregions, prev, &win) == 0;
		if (whole)
			expect_calls(a, p, &win, rows, spill_windows(p->spill) == 1, &region,
				     &start);
		rows += whole ? win.n : 0;
	}
	EXPECT(whole && rows == p->nevents);
	events_free(&win);
	free(prev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *const dirs[] = {spill_dir, NULL};
	struct module *mods = NULL;
	struct tick_clock clock;
	struct arena a;
	size_t nmods;

	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) {
		fprintf(stderr, "fuzz_arena: %s: %s\n", path, strerror(errno));
		abort();
	}
	writer_fail_reset(); /* each input's first cause is its own */
	if (arena_open(&a, path) != 0)
		return 0;
	expect_header(&a);
	tick_clock_init(&clock, &a);
	nmods = modules_parse(&a, &mods);
	expect_modules(mods, nmods);
	for (int spill = 0; spill < 2; spill++) {
		struct profile p;
		if (collect(&a, &clock, mods, nmods, spill ? SPILL_WINDOW : UINT64_MAX, dirs, &p) !=
		    0)
			continue;
		expect_regions(&p, nmods);
		EXPECT(p.spill != NULL);
		read_spill(&a, &p);
		profile_free(&p);
	}
	modules_free(mods, nmods);
	arena_close(&a);
	return 0;
}
