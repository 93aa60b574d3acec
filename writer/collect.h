/* SPDX-License-Identifier: MIT */
/* What the passes over an arena's records share: the chunk list, the region map, call times. */
#ifndef SCOPE_WRITER_COLLECT_H
#define SCOPE_WRITER_COLLECT_H

#include "writer.h"

struct chunk_ref {
	uint32_t lane, seq;
	uint64_t index;
};

/* Function address -> region id, open addressing. */
struct addr_map {
	uint64_t *keys; /* 0 = empty: no function lives at address 0 */
	uint32_t *ids;
	uint64_t mask;
	uint32_t n;
};

/* Per lane: the region open at each depth, to charge a call's time to its
 * parent's self time, and the call's read index, for its bytes record.
 * gen tells which lane wrote an entry. */
struct depth_stack {
	uint32_t rid[65536];
	uint32_t gen[65536];
	uint64_t index[65536];
};

/* Bytes an MPI call moved, by the call's index in read order. */
struct bytes_note {
	uint64_t index, sent, received;
};

/*
 * The first pass, in lane order, gives every call its region id and sums
 * the regions' statistics. A process of at most window calls is then
 * grouped in memory: the ids are kept per call, and the second pass puts
 * each call straight at its place. A larger one is grouped through a
 * spill (stream.c), reading the lanes merged in start order.
 */
struct reader {
	const struct arena *a;
	const struct tick_clock *clock;
	uint64_t stop_tick;
	struct addr_map map;
	uint64_t last_key; /* 0: no function lives at address 0 */
	uint32_t last_rid;
	struct region *regions;
	uint32_t region_cap;
	struct depth_stack *stack;
	uint32_t *rid; /* per call in read order; NULL once there are too many */
	uint64_t rid_cap;
	uint64_t n;    /* calls read */
	uint64_t *pos; /* second pass: next slot of each region */
	struct events *ev;
	struct bytes_note *notes; /* with rid only */
	uint64_t nnotes, notes_cap, note;
	int bytes; /* some call moved bytes */
	struct chunk_ref *chunks;
	uint64_t nchunks;
	const struct scope_lane *lanes;
	const struct module *mods; /* those unloaded during the run, when any */
	size_t nmods;
	int unloads;
	uint64_t split;		/* the second pass's halves: chunks [0, split), [split, end) */
	uint64_t split_n;	/* calls before split */
	uint32_t split_regions; /* regions seen before split */
	uint32_t nregions;	/* regions the first pass found; later passes add none */
	uint64_t *split_count;	/* their calls before split */
};

/* The region id of the call r, a new one when the map has not seen it
 * (UINT32_MAX without memory); *module is the unloaded module it was in,
 * or -1. Asks the map only when r's key is not *last_key's. */
uint32_t reader_region(struct reader *rd, const struct scope_rec *r, uint64_t *last_key,
		       uint32_t *last_rid, int *module);

/* The call's start and duration in ns; returns its flags. */
uint8_t reader_times(const struct reader *rd, const struct scope_rec *r, uint32_t lane,
		     uint64_t *start, uint64_t *dur);

static inline uint32_t rec_depth(const struct scope_rec *r)
{
	return (uint32_t)(r->fn >> SCOPE_REC_ADDR_BITS) & 0xffff;
}

/* Whether every pass reads the call r (not a bytes record): started (0
 * while it is being written), not after the stop, and at an address (0 is
 * no function's, and the region map's mark of an empty slot). */
static inline int reader_takes(const struct reader *rd, const struct scope_rec *r)
{
	return r->start != 0 && r->start <= rd->stop_tick && (r->fn & SCOPE_REC_ADDR_MASK) != 0;
}

/* Groups the calls through a spill in the first of dirs (NULL-ended) that
 * takes it; fills p's spill and maxima. */
int stream_group(struct reader *rd, struct profile *p, uint64_t window, const char *const *dirs);

#endif
