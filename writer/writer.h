/* SPDX-License-Identifier: MIT */
/* The parts of scope-writer: arena in, columns out. */
#ifndef SCOPE_WRITER_H
#define SCOPE_WRITER_H

#include "schema.h"
#include "storage.h"

#include <scope/arena.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* A mapped arena, checked for consistency. */
struct arena {
	const struct scope_arena_header *hdr;
	const char *base;
	uint64_t size;
	uint64_t nchunks; /* chunks that may hold records */
	uint32_t nlanes;
	uint32_t nnames, ntasks; /* name and task slots handed out */
	uint32_t ncounters;	 /* counters read at counted calls (the header's list) */
	uint32_t recs_per_chunk;
	int fd;
	/* The chunks the run's writer took while the program ran (the
	 * arena's store), mapped; store_nchunks is 0 when there are none. */
	const char *store;
	uint64_t store_size, store_nchunks;
	int store_fd;
};

/* Returns 0, or -1 with the cause noted (writer_fail): a file that cannot
 * be opened or mapped, or is no arena this writer reads. */
int arena_open(struct arena *a, const char *path);
/* The same through an open descriptor fd (then owned by a), path naming it
 * in messages: a process that cannot open path itself still reads it. */
int arena_open_fd(struct arena *a, const char *path, int fd);
void arena_close(struct arena *a);
/* The name of the store of the arena at path arena, whose header is h (see
 * scope_store_path), or beside the arena when only that one is there (the
 * two moved together). Returns 0, or -1 when it does not fit in cap. */
int arena_store_name(const struct scope_arena_header *h, const char *arena, char *out, size_t cap);
/* The same, the header read from the file; beside the arena when it
 * cannot be read. */
int arena_store_of(const char *arena, char *out, size_t cap);

/* Notes in a kept arena that its profile was written. */
void arena_mark_published(const struct arena *a);

/* Notes that this writer has said why it did not publish. */
void arena_mark_reported(const struct arena *a);

/* Drops the records' pages from this process once they have been read. */
void arena_release_records(const struct arena *a);

struct module {
	char *path;
	char *build_id; /* "" when the object has none */
	uint64_t bias, lo, hi;
	uint64_t unload; /* tick it was closed at, 0 = mapped at the end */
};

/* Parses the arena's module lines; returns the count, sorted by lo. */
size_t modules_parse(const struct arena *a, struct module **out);
void modules_free(struct module *m, size_t n);

/* Converts clock ticks to nanoseconds since the process's start. */
struct tick_clock {
	uint64_t start_tick;
	uint64_t mult; /* ns per tick, 32.32 fixed point */
	double hz;
};

void tick_clock_init(struct tick_clock *c, const struct arena *a);

static inline uint64_t tick_ns(const struct tick_clock *c, uint64_t tick)
{
	unsigned __int128 ns;

	if (tick <= c->start_tick)
		return 0;
	ns = ((unsigned __int128)(tick - c->start_tick) * c->mult) >> 32;
	/* past 2^64 ns (a forged clock) times stop there, in their order */
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

/* Calls, grouped by region and ordered by start within it: one window of
 * them, read back from a spill. */
struct events {
	uint64_t n;
	uint64_t *start;    /* ns since the process's start */
	uint64_t *duration; /* ns */
	uint32_t *thread;
	uint32_t *depth; /* the true depth: records keep 16 bits of it */
	uint32_t *task;	 /* task lane, 0 = none */
	uint8_t *flags;
	uint64_t *sent, *received;	       /* bytes an MPI call moved; NULL when none did */
	uint64_t *counter[SCOPE_MAX_COUNTERS]; /* each counter's change; NULL past ncounters */
};

/* struct events, struct event_max, struct spilled_call, events_alloc,
 * events_sort and the spill's records each list the /events columns by
 * hand: a column
 * added to lib/schema.h stops the build here until each list has it. */
_Static_assert(SC_NEV == 12, "a new /events column: add it to struct events, struct event_max, "
			     "struct spilled_call, events_alloc, events_sort and spill.c");

#define EVENT_UNFINISHED 1u

/* Calls grouped in memory at once, unless SCOPE_WRITER_WINDOW says: a
 * window's columns (33 bytes a call, 8 MiB) are fresh pages, and a page's
 * first write costs more than the windows saved by making them larger (in a
 * virtual machine it may be the host's to back). */
#define WINDOW_CALLS (UINT64_C(1) << 18)

/* SCOPE_WRITER_WINDOW, else WINDOW_CALLS. */
static inline uint64_t window_calls(void)
{
	const char *v = getenv("SCOPE_WRITER_WINDOW");
	uint64_t w = v && *v ? strtoull(v, NULL, 10) : 0;

	return w ? w : WINDOW_CALLS;
}

int events_alloc(struct events *e, uint64_t n, int bytes, uint32_t ncounters);
void events_free(struct events *e);

/* Puts calls [first, first + n) in start order (then lane order); they come as sorted runs
 * (one per thread lane), so sorted input costs one scan. */
int events_sort(struct events *e, uint64_t first, uint64_t n);

struct region {
	uint64_t addr;
	int module; /* an unloaded module it belongs to, or -1 */
	uint64_t first, count;
	uint64_t total_ns;     /* of its outermost calls: none of its calls open around them */
	uint64_t total_all_ns; /* of every call */
	uint64_t min_ns, max_ns;
	int64_t self_ns;
	uint64_t sent, received;		    /* bytes, summed over its calls */
	uint64_t counter_total[SCOPE_MAX_COUNTERS]; /* each counter's change, summed */
	int64_t counter_self[SCOPE_MAX_COUNTERS];   /* less the recorded callees' */
	uint64_t last_start; /* the one pass's: start of its latest call, ns */
	/* Calls a filter kept out of the events, counted in the sums above. */
	uint64_t aggregated;
};

/* The largest value of each event column, known before any is written. */
struct event_max {
	uint64_t start_delta, duration, sent, received;
	uint64_t counter[SCOPE_MAX_COUNTERS];
	uint32_t thread;
	uint32_t depth;
	uint32_t task;
};

/* Sums of one region's calls on one thread lane that a filter kept out
 * of the events (ns). */
struct lane_sum {
	uint32_t region, lane;
	uint64_t calls, total_ns, total_all_ns, min_ns, max_ns;
	int64_t self_ns;
};

/* One sample: where a thread was when its CPU-time timer fired. Its
 * frames (code addresses, innermost first) are [first, first + n) of the
 * profile's sample_pcs. */
struct sample {
	uint64_t time_ns;
	uint32_t lane;
	uint32_t region; /* the innermost open recorded call's, UINT32_MAX when none */
	uint64_t first;
	uint32_t n;
};

struct spill;

/* A task lane, as the records tell it: the thread lanes that ran it
 * (ascending: the first pass reads lane after lane) and the time they ran
 * it, in clock ticks. */
struct task_use {
	uint64_t busy_ticks;
	uint32_t *threads;
	uint32_t nthreads, cap;
};

struct profile {
	struct spill *spill; /* the calls, read back a window at a time */
	struct event_max max;
	uint64_t nevents;
	int bytes; /* some call moved bytes: the bytes columns are written */
	struct region *regions;
	uint32_t nregions;
	uint64_t end_ns; /* the process's end, ns since its start */
	uint64_t lost;
	struct task_use *tasks; /* [lane - 1] for each task lane of the arena */
	uint32_t ntasks;
	uint32_t ncounters; /* /events/counter0.. columns */
	/* The arena had sums of calls not stored (filters): by region and lane. */
	int aggregates;
	struct lane_sum *lane_sums;
	uint64_t nlane_sums;
	/* SCOPE_SAMPLE's samples, in read order. */
	struct sample *samples;
	uint64_t nsamples;
	uint64_t *sample_pcs;
	uint64_t nsample_pcs;
};

/*
 * Returns 0, or -1 with the cause noted (writer_fail). mods tells which code was unloaded
 * during the run, so calls at one address can belong to two libraries.
 * The calls are grouped through a spill, held in memory up to about a
 * window of calls and past that in a temporary file in the first of
 * spill_dirs (NULL-ended) with room for it, and are written window by
 * window, so the writer's memory does not grow with the number of calls.
 */
int collect(const struct arena *a, const struct tick_clock *c, const struct module *mods,
	    size_t nmods, uint64_t window, const char *const *spill_dirs, struct profile *p);
void profile_free(struct profile *p);

/*
 * The writer's errors: below main, a function that fails returns -1 (NULL
 * for a pointer) after noting why with writer_fail; main says the first
 * cause noted in one line, with where the recorded data is kept, which only
 * main knows. writer_fail keeps the first reason given (printf-style);
 * writer_failure() returns it, NULL when none was noted.
 */
void writer_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *writer_failure(void);
/* Forgets the cause noted: the run's writer goes on to its next arena. */
void writer_fail_reset(void);

/* Notes how long the phase that ends now took (SCOPE_WRITER_TIMES=1). */
void phase(const char *name);

#endif
