/* SPDX-License-Identifier: MIT */
/* What the passes over an arena's records share: the chunk list, the region map, call times. */
#ifndef SCOPE_WRITER_COLLECT_H
#define SCOPE_WRITER_COLLECT_H

#include "map.h"
#include "writer.h"

/* A chunk in the arena, or in its store (from_store): at is its head. */
struct chunk_ref {
	uint32_t lane, seq;
	const char *at;
	uint32_t used; /* slots the first pass read: the later passes read no more */
	uint32_t from_store;
};

/* Per lane: the region open at each depth, to charge a call's time to its
 * parent's self time, and the call's read index, to tell a recursion.
 * gen tells which lane wrote an entry. Grows with the deepest call. */
struct depth_stack {
	uint32_t *rid;
	uint32_t *gen;
	uint64_t *index;
	uint64_t *rindex; /* the call's index among its region's, for its bytes */
	uint32_t cap;
};

/* A region's latest outermost call on a lane: its read index (UINT64_MAX:
 * none) and depth, to tell a recursion. */
struct outer_call {
	uint64_t index;
	uint32_t depth;
};

/*
 * A record keeps its call's depth in 16 bits, so a lane's true depths are
 * rebuilt in read order: a call is at most one deeper than the call read
 * before it on its lane, and its parent, the lane's latest call one level
 * up, was still open when it started. Of the depths with its 16 bits, the
 * deepest that fits both is taken. Worked example: a call read after one
 * at depth 65,537 whose record says 1 is at 65,537 or at 1; if the call
 * at 65,536 had ended before it started, it is at 1 (below main, at 0).
 */
struct depth_track {
	uint64_t *end; /* per depth: end field of the lane's latest call there */
	uint32_t cap;
	uint32_t known; /* depths [0, known) have a call on this lane */
	uint32_t next;	/* the deepest the lane's next call can be */
	uint32_t lane;	/* whose calls; UINT32_MAX before the first */
};

/* The true depth of the call r on lane (the track restarts when the lane
 * changes); -1 without memory. */
int depth_of_slow(struct depth_track *d, uint32_t lane, const struct scope_rec *r, uint32_t *depth);

/* The 16 bits of depth a record keeps. */
static inline uint32_t rec_depth16(const struct scope_rec *r)
{
	return (uint32_t)(r->fn >> SCOPE_REC_ADDR_BITS) & 0xffff;
}

/* depth_of_slow, with the common case inline: a lane never deeper than
 * 65,535, and a call no deeper than one it has had, which its 16 bits
 * give as they are (every pass calls this for every call). */
static inline int depth_of(struct depth_track *d, uint32_t lane, const struct scope_rec *r,
			   uint32_t *depth)
{
	uint32_t low = rec_depth16(r);

	if (lane == d->lane && d->next <= 0xffff && low < d->known) {
		d->end[low] = r->end;
		d->next = low + 1;
		*depth = low;
		return 0;
	}
	return depth_of_slow(d, lane, r, depth);
}
/* The true depth of the call whose bytes record r (on lane) is. */
uint32_t depth_of_bytes(const struct depth_track *d, uint32_t lane, const struct scope_rec *r);
void depth_track_free(struct depth_track *d);

/* What the first pass keeps of the lane it reads: one for all lanes when
 * they are read one after another (gen tells them apart), one each when
 * their calls are read merged in start order (start_order.c). */
struct lane_pass {
	struct depth_stack stack;
	struct depth_track track;
	struct outer_call *outer; /* by region id */
	uint64_t nouter;
	uint64_t last_key; /* 0: no function lives at address 0 */
	uint32_t last_rid;
};

/*
 * The threads of a process that stopped may still run while the writer
 * reads its arena (a thread that never returns). Each pass must see the
 * same calls the same way, so the first pass notes the records that could
 * still change: one being written (skipped by every pass), one open (never
 * returned, for every pass, even if its thread ends it meanwhile). chunk
 * is the position in the sorted chunk list.
 */
enum { NOTE_NONE, NOTE_OPEN, NOTE_SKIP };

struct rec_note {
	uint64_t chunk;
	uint32_t slot;
	uint32_t kind;
};

/* A call read while its process ran, its end not known then: lane, c and
 * slot say where (c: the chunk's seq), the rest what the first pass
 * decided. */
struct later {
	uint64_t c;
	uint32_t slot, rid, parent;
	uint64_t index; /* among its region's calls */
	int outer;
	uint32_t lane;
};

/*
 * The first pass gives every call its region id and sums the regions'
 * statistics; each call goes to a spill as its region's next, so the pass
 * reads the calls in start order: those of a process of one lane as they
 * are, those of several lanes merged (start_order.c). When tasks run on the
 * lanes, the first pass reads them lane after lane instead, and a second
 * pass merges them to spill the calls (stream.c).
 */
struct grouping {
	const struct arena *a;
	const struct tick_clock *clock;
	uint64_t stop_tick;
	struct u64map map; /* function address -> region id */
	struct region *regions;
	uint32_t region_cap;
	struct lane_pass own;	 /* the lanes', read one after another */
	struct lane_pass *lp;	 /* the lane being read: own, or one of lanes */
	struct lane_pass *lanes; /* per lane, read merged (start_order.c); NULL otherwise */
	uint32_t lanes_cap;	 /* of them */
	uint64_t lanes_bytes;	 /* what their outer calls take */
	int too_many;		 /* lanes x regions past what that may take */
	uint64_t *lane_end;	 /* each lane's end, read once */
	struct rec_note *rnotes; /* sorted by chunk, then slot */
	uint64_t nrnotes, rnotes_cap;
	uint64_t n; /* calls read */
	int bytes;  /* some call moved bytes */
	struct chunk_ref *chunks;
	uint64_t nchunks;
	const struct module *mods; /* those unloaded during the run, when any */
	size_t nmods;
	int unloads;
	uint32_t nregions; /* regions the first pass found; the second adds none */
	/* The task lane the lane being read runs (task records), and which
	 * lane that is. The first pass sums each task's time from task_since
	 * on into tasks. */
	uint32_t task, task_lane;
	uint64_t task_since;
	struct task_use *tasks;
	uint32_t ntasks;
	uint32_t ncounters; /* the arena's counters: their records are read */
	int counters;	    /* some call has its counters */
	/* Some calls came as sums (filters); by region and lane, the map
	 * giving each (region << 32 | lane) its row. */
	int aggregates;
	struct u64map lane_map;
	struct lane_sum *lane_sums;
	uint64_t nlane_sums, lane_sums_cap;
	/* Samples (SCOPE_SAMPLE) and their frames. */
	struct sample *samples;
	uint64_t nsamples, samples_cap;
	uint64_t *sample_pcs;
	uint64_t nsample_pcs, sample_pcs_cap;
	/* One pass: each call spilled by region as it is read, the columns'
	 * largest values noted; NULL with two passes. */
	struct spill *once;
	struct event_max once_max;
	uint64_t once_max_start;
	int once_unordered;
	int once_failed; /* its spill could not be written */
	/* Grouping while the process runs (alongside.c): calls whose end is
	 * not known wait in later; max_tick is the latest start or end read. */
	int running;
	struct later *later;
	uint64_t nlater, later_cap;
	uint64_t max_tick;
};

/* The task lane a task record names; 0 for none or one out of range. */
static inline uint32_t task_of(const struct grouping *gr, const struct scope_rec *r)
{
	return r->end >= 1 && r->end <= gr->ntasks ? (uint32_t)r->end : 0;
}

static inline int rec_is_task(const struct scope_rec *r)
{
	return (r->fn & SCOPE_REC_ADDR_MASK) == SCOPE_REC_TASK;
}

/* A counters record's k (counters 2k and 2k + 1), or -1 for another record
 * or one of counters the arena does not list. */
static inline int rec_counters(const struct grouping *gr, const struct scope_rec *r)
{
	uint64_t code = r->fn & SCOPE_REC_ADDR_MASK;
	return code >= SCOPE_REC_COUNTERS && code < SCOPE_REC_COUNTERS + (gr->ncounters + 1) / 2
		       ? (int)(code - SCOPE_REC_COUNTERS)
		       : -1;
}

/* The region id of the call r, a new one when the map has not seen it
 * (UINT32_MAX without memory); *module is the unloaded module it was in,
 * or -1. Asks the map only when r's key is not *last_key's. */
uint32_t grouping_region(struct grouping *gr, const struct scope_rec *r, uint64_t *last_key,
			 uint32_t *last_rid, int *module);

/* The call's start and duration in ns; returns its flags. A call the
 * first pass found open (was_open) counts as never returned. */
uint8_t grouping_times(const struct grouping *gr, const struct scope_rec *r, uint32_t lane,
		       int was_open, uint64_t *start, uint64_t *dur);

/* The first record note at or after chunk position c. */
uint64_t rec_note_from(const struct grouping *gr, uint64_t c);

/* What the first pass noted of slot in chunk position c (NOTE_*); *at
 * walks the notes in read order. */
static inline uint32_t rec_note(const struct grouping *gr, uint64_t *at, uint64_t c, uint32_t slot)
{
	const struct rec_note *n = gr->rnotes;
	while (*at < gr->nrnotes && (n[*at].chunk < c || (n[*at].chunk == c && n[*at].slot < slot)))
		++*at;
	return *at < gr->nrnotes && n[*at].chunk == c && n[*at].slot == slot ? n[*at].kind
									     : NOTE_NONE;
}

/*
 * Grouping a process's calls while it runs (alongside.c drives it; a
 * process of several lanes through running_merge.c and group_call_running):
 * a lane's chunks are read in order as the run's writer
 * takes them, in one pass, each call spilled by region to a file in dirs
 * (NULL-ended). A call whose end is not known yet waits (struct later)
 * until group_resolve is given its record again. NULL (nothing noted)
 * when the spill cannot be made.
 */
struct grouping *grouping_running(const struct arena *a, const struct tick_clock *c,
				  const char *const *dirs, uint64_t window);
/* Reads the records [from, ...) of lane's chunk seq; *stopped is where it
 * stopped: the chunk's end, or a record still being written. Returns 0,
 * -1 without memory, -2 for what only the end can group (a task, a depth
 * past 16 bits). */
int group_running(struct grouping *gr, const struct scope_rec *r, uint32_t from, uint64_t seq,
		  uint32_t lane, uint32_t *stopped);
/* The call l waited for, r its record now: 0 when its time is in, 1 when
 * it is still open, -1 when its spill failed. */
int group_resolve(struct grouping *gr, const struct later *l, const struct scope_rec *r);
/* The process has ended and its arena a is handed over: reads what is left
 * of lane from its chunk seq's record slot on, and ends the calls that
 * waited, into p. Returns 0; -1 on failure (noted); -2 when what was read
 * cannot be used (a second lane, unloaded code, another clock), and then
 * collect does it all. */
int collect_resume(struct grouping *gr, uint32_t lane, uint64_t seq, uint32_t slot,
		   const struct arena *a, const struct tick_clock *c, const struct module *mods,
		   size_t nmods, uint64_t window, struct profile *p);

/* Where the reading of a lane stopped while its process ran: its next
 * record is slot of its chunk seq. */
struct lane_pos {
	uint64_t seq;
	uint32_t slot;
};
/* The same for a process of several lanes read merged while it ran
 * (running_merge.c): each lane of pos[0, npos) read on from where it
 * stopped, the lanes past npos from their start. */
int collect_resume_lanes(struct grouping *gr, const struct lane_pos *pos, uint32_t npos,
			 const struct arena *a, const struct tick_clock *c,
			 const struct module *mods, size_t nmods, uint64_t window,
			 struct profile *p);
/*
 * Read chunks leave the writer's memory (they stay in the page cache),
 * neighbours together, a few MiB at a time: each madvise flushes the TLB
 * of every thread. chunk_done adds the chunk at at (chunk_bytes) to the
 * batch b, letting the batch go first when at does not follow it or it is
 * full; chunks_release lets the rest go.
 */
struct chunk_batch {
	const char *lo, *hi;
};
void chunk_done(struct chunk_batch *b, const char *at, uint64_t chunk_bytes);
void chunks_release(struct chunk_batch *b);

/* The one pass over several lanes, merged in start order (start_order.c):
 * needs gr->lanes and gr->once. Returns 0, or -1 (too_many when the lanes
 * hold too many regions to be read this way). */
int merge_group(struct grouping *gr);
/* The first pass's reading of lane's side record r[i] of n in its chunk,
 * and of its call r, each with the lane's own state (gr->lanes). */
int group_side(struct grouping *gr, const struct scope_rec *r, uint32_t i, uint32_t n,
	       uint32_t lane);
int group_call(struct grouping *gr, const struct scope_rec *r, uint32_t lane);
/* The same while the process runs: r is slot of lane's chunk seq. Returns
 * 0, -1, or -2 for what only the end can group (see group_running). */
int group_call_running(struct grouping *gr, const struct scope_rec *r, uint32_t lane, uint64_t seq,
		       uint32_t slot);
/* The merged pass resumed: each lane of pos[0, npos) from its position,
 * the others from their start (gr->lanes holds every lane). */
int merge_resume(struct grouping *gr, const struct lane_pos *pos, uint32_t npos);
void lane_pass_free(struct lane_pass *lp);

/* Frees what gr holds, not gr. */
void grouping_free(struct grouping *gr);

/* The second pass: the lanes merged in start order, each call spilled as
 * its region's next (in dirs, NULL-ended, past what memory holds); fills
 * p's spill and maxima. */
int stream_group(struct grouping *gr, struct profile *p, uint64_t window, const char *const *dirs);

#endif
