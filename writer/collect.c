/* SPDX-License-Identifier: MIT */
/* Turns the arena's per-thread records into per-region events with their statistics. */
#define _GNU_SOURCE
#include "collect.h"
#include "spill.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int by_lane_seq(const void *x, const void *y)
{
	const struct chunk_ref *a = x, *b = y;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Returns the region id for addr, adding it when new; UINT32_MAX on failure. */
static uint32_t map_get(struct u64map *m, uint64_t addr)
{
	int added;
	uint32_t *id = map_slot(m, addr, (uint32_t)m->n, &added);
	return id ? *id : UINT32_MAX;
}

static int add_region(struct reader *rd, uint32_t rid, uint64_t addr)
{
	if (rid >= rd->region_cap) {
		uint32_t cap = rd->region_cap ? rd->region_cap * 2 : 256;
		struct region *grown = realloc(rd->regions, cap * sizeof *grown);
		if (!grown)
			return -1;
		rd->regions = grown;
		rd->region_cap = cap;
	}
	memset(&rd->regions[rid], 0, sizeof rd->regions[rid]);
	rd->regions[rid].addr = addr;
	rd->regions[rid].min_ns = UINT64_MAX;
	return 0;
}

/* A call that never returned ends with its thread, or when the process
 * stopped if the thread was still running. */
uint8_t reader_times(const struct reader *rd, const struct scope_rec *r, uint32_t lane,
		     int was_open, uint64_t *start, uint64_t *dur)
{
	uint64_t end = r->end;
	uint8_t flags = 0;

	if (was_open || (end & SCOPE_REC_OPEN) || end > rd->stop_tick || end < r->start) {
		uint64_t lane_end = rd->lane_end[lane];
		end = lane_end && lane_end < rd->stop_tick && lane_end >= r->start ? lane_end
										   : rd->stop_tick;
		flags = EVENT_UNFINISHED;
	}
	*start = tick_ns(rd->clock, r->start);
	*dur = tick_ns(rd->clock, end) - *start;
	return flags;
}

/* The unloaded module that held addr when the call started, or -1: the
 * code mapped there at the end. */
static int unloaded_module(const struct reader *rd, uint64_t addr, uint64_t tick)
{
	int best = -1;
	for (size_t i = 0; i < rd->nmods; i++) {
		const struct module *m = &rd->mods[i];
		if (m->unload && addr >= m->lo && addr < m->hi && tick <= m->unload &&
		    (best < 0 || m->unload < rd->mods[best].unload))
			best = (int)i;
	}
	return best;
}

/* The key a call's region is found by: its address, and the unloaded
 * module that held the address when the call started, if any. */
static uint64_t region_key(const struct reader *rd, const struct scope_rec *r, int *module)
{
	uint64_t addr = r->fn & SCOPE_REC_ADDR_MASK;

	*module = rd->unloads ? unloaded_module(rd, addr, r->start) : -1;
	return *module >= 0 ? addr | (uint64_t)(*module + 1) << SCOPE_REC_ADDR_BITS : addr;
}

uint32_t reader_region(struct reader *rd, const struct scope_rec *r, uint64_t *last_key,
		       uint32_t *last_rid, int *module)
{
	uint64_t key = region_key(rd, r, module);

	/* Calls of one function come in runs (a loop, a recursion): the last
	 * key is asked again first. */
	if (key != *last_key) {
		*last_rid = map_get(&rd->map, key);
		*last_key = key;
	}
	return *last_rid;
}

static int track_reserve(struct depth_track *d, uint32_t depth)
{
	uint64_t cap = d->cap ? d->cap : 1024;
	uint64_t *grown;

	if (depth < d->cap)
		return 0;
	while (cap <= depth)
		cap *= 2;
	if (cap > UINT32_MAX || !(grown = realloc(d->end, cap * sizeof *grown)))
		return -1;
	d->end = grown;
	d->cap = (uint32_t)cap;
	return 0;
}

int depth_of(struct depth_track *d, uint32_t lane, const struct scope_rec *r, uint32_t *depth)
{
	uint32_t low = rec_depth16(r), at = low;

	if (lane != d->lane) {
		d->lane = lane;
		d->known = d->next = 0;
	}
	/* Below 65,536 the 16 bits are the depth; that is every call but
	 * those of very deep recursions. */
	if (d->next > 0xffff && low <= d->next) {
		at = d->next - ((d->next - low) & 0xffff);
		while (at > 0xffff && !(at - 1 < d->known && d->end[at - 1] >= r->start))
			at -= 0x10000;
	}
	if (track_reserve(d, at) != 0)
		return -1;
	/* Depths skipped (a lane whose first calls were not recorded) hold
	 * no call: an end before any start. */
	for (; d->known < at; d->known++)
		d->end[d->known] = 0;
	d->end[at] = r->end;
	if (d->known <= at)
		d->known = at + 1;
	d->next = at + 1;
	*depth = at;
	return 0;
}

/* The call is still open when its bytes are written, and at most as deep
 * as the call read last; calls that moved bytes more than 65,535 levels
 * down are taken to be the deepest candidate. */
uint32_t depth_of_bytes(const struct depth_track *d, uint32_t lane, const struct scope_rec *r)
{
	uint32_t low = rec_depth16(r), last = d->next ? d->next - 1 : 0;

	if (lane != d->lane || last <= 0xffff || low > last)
		return low;
	return last - ((last - low) & 0xffff);
}

int depth_track_copy(struct depth_track *to, const struct depth_track *from)
{
	*to = (struct depth_track){.lane = from->lane, .known = from->known, .next = from->next};
	if (!from->known)
		return 0;
	if (track_reserve(to, from->known - 1) != 0)
		return -1;
	memcpy(to->end, from->end, from->known * sizeof *to->end);
	return 0;
}

void depth_track_free(struct depth_track *d)
{
	free(d->end);
	memset(d, 0, sizeof *d);
}

static int stack_reserve(struct depth_stack *s, uint32_t depth)
{
	uint64_t cap = s->cap ? s->cap : 1024;
	uint32_t *rid, *gen;
	uint64_t *index;

	if (depth < s->cap)
		return 0;
	while (cap <= depth)
		cap *= 2;
	if (cap > UINT32_MAX)
		return -1;
	rid = realloc(s->rid, cap * sizeof *rid);
	if (rid)
		s->rid = rid;
	gen = realloc(s->gen, cap * sizeof *gen);
	if (gen)
		s->gen = gen;
	index = realloc(s->index, cap * sizeof *index);
	if (index)
		s->index = index;
	if (!rid || !gen || !index)
		return -1;
	memset(gen + s->cap, 0, (cap - s->cap) * sizeof *gen); /* 0: no lane's */
	s->cap = (uint32_t)cap;
	return 0;
}

static void stack_free(struct depth_stack *s)
{
	free(s->rid);
	free(s->gen);
	free(s->index);
	memset(s, 0, sizeof *s);
}

static int add_rec_note(struct reader *rd, uint64_t chunk, uint32_t slot, uint32_t kind)
{
	if (rd->nrnotes == rd->rnotes_cap) {
		uint64_t cap = rd->rnotes_cap ? 2 * rd->rnotes_cap : 64;
		struct rec_note *grown = realloc(rd->rnotes, cap * sizeof *grown);
		if (!grown)
			return -1;
		rd->rnotes = grown;
		rd->rnotes_cap = cap;
	}
	rd->rnotes[rd->nrnotes++] = (struct rec_note){chunk, slot, kind};
	return 0;
}

uint64_t rec_note_from(const struct reader *rd, uint64_t c)
{
	uint64_t a = 0, b = rd->nrnotes;
	while (a < b) {
		uint64_t m = a + (b - a) / 2;
		if (rd->rnotes[m].chunk < c)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* Too many calls to group in memory: they will go through a spill. */
static void drop_ids(struct reader *rd)
{
	free(rd->rid);
	free(rd->notes);
	rd->rid = NULL;
	rd->notes = NULL;
	rd->nnotes = rd->notes_cap = 0;
}

static int first_pass(struct reader *rd, const struct scope_rec *r, uint32_t gen, uint64_t c,
		      uint32_t slot)
{
	uint64_t start, dur;
	uint32_t depth, n_before = rd->map.n;
	int module, open = (r->end & SCOPE_REC_OPEN) != 0;
	uint32_t rid = reader_region(rd, r, &rd->last_key, &rd->last_rid, &module);
	struct region *g;

	if (rid == UINT32_MAX || depth_of(&rd->track, gen - 1, r, &depth) != 0 ||
	    stack_reserve(&rd->stack, depth) != 0 || (open && add_rec_note(rd, c, slot, NOTE_OPEN)))
		return -1;
	if (rd->map.n != n_before) {
		if (add_region(rd, rid, r->fn & SCOPE_REC_ADDR_MASK) != 0)
			return -1;
		rd->regions[rid].module = module;
	}
	reader_times(rd, r, gen - 1, open, &start, &dur);
	if (rd->rid && rd->n < rd->rid_cap)
		rd->rid[rd->n] = rid;
	else if (rd->rid)
		drop_ids(rd);
	g = &rd->regions[rid];
	g->count++;
	g->total_ns += dur;
	g->self_ns += (int64_t)dur;
	if (dur < g->min_ns)
		g->min_ns = dur;
	if (dur > g->max_ns)
		g->max_ns = dur;
	rd->stack.rid[depth] = rid;
	rd->stack.gen[depth] = gen;
	rd->stack.index[depth] = rd->n++;
	if (depth > 0 && rd->stack.gen[depth - 1] == gen)
		rd->regions[rd->stack.rid[depth - 1]].self_ns -= (int64_t)dur;
	return 0;
}

/* A bytes record: the call of its depth read last on this lane moved them. */
static int first_pass_bytes(struct reader *rd, const struct scope_rec *r, uint32_t gen)
{
	uint32_t depth = depth_of_bytes(&rd->track, gen - 1, r);
	struct region *g;

	if (depth >= rd->stack.cap || rd->stack.gen[depth] != gen)
		return 0; /* its call was not recorded */
	g = &rd->regions[rd->stack.rid[depth]];
	g->sent += r->start;
	g->received += r->end;
	rd->bytes = 1;
	if (!rd->rid)
		return 0;
	if (rd->nnotes == rd->notes_cap) {
		uint64_t cap = rd->notes_cap ? 2 * rd->notes_cap : 256;
		struct bytes_note *grown = realloc(rd->notes, cap * sizeof *grown);
		if (!grown)
			return -1;
		rd->notes = grown;
		rd->notes_cap = cap;
	}
	rd->notes[rd->nnotes++] = (struct bytes_note){rd->stack.index[depth], r->start, r->end};
	return 0;
}

static int second_pass(struct reader *rd, const struct scope_rec *r, uint32_t lane, int was_open)
{
	uint64_t at = rd->pos[rd->rid[rd->n]]++;
	struct events *ev = rd->ev;
	uint32_t depth;

	if (depth_of(&rd->track, lane, r, &depth) != 0)
		return -1;
	ev->flags[at] = reader_times(rd, r, lane, was_open, &ev->start[at], &ev->duration[at]);
	ev->thread[at] = lane;
	ev->depth[at] = depth;
	if (rd->note < rd->nnotes && rd->notes[rd->note].index == rd->n) {
		ev->sent[at] = rd->notes[rd->note].sent;
		ev->received[at] = rd->notes[rd->note].received;
		rd->note++;
	}
	rd->n++;
	return 0;
}

/*
 * Visits the calls of chunk c (a position in the sorted list); returns -1
 * without memory. A chunk's calls end at the first empty slot. That is not
 * the end of its lane's calls: a signal handler that records while its
 * thread changes chunks takes a chunk of its own and leaves it part-filled.
 * The later passes read only the slots the first one did, the way it did.
 */
static int visit_chunk(struct reader *rd, uint64_t c, int second)
{
	const struct scope_arena_header *h = rd->a->hdr;
	const struct scope_rec *r =
		(const struct scope_rec *)(rd->a->base + h->chunks_off +
					   rd->chunks[c].index * h->chunk_bytes +
					   sizeof(struct scope_chunk_head));
	uint32_t lane = rd->chunks[c].lane, gen = lane + 1, i;
	uint32_t n = second ? rd->chunks[c].used : rd->a->recs_per_chunk;

	for (i = 0; i < n && r[i].fn; i++) {
		uint32_t note = second ? rec_note(rd, &rd->rnote, c, i) : NOTE_NONE;
		if (scope_rec_is_bytes(&r[i])) {
			if (!second && first_pass_bytes(rd, &r[i], gen) != 0)
				return -1;
			continue;
		}
		if (!second && (r[i].start == 0 || (r[i].fn & SCOPE_REC_ADDR_MASK) == 0)) {
			if (add_rec_note(rd, c, i, NOTE_SKIP) != 0)
				return -1;
			continue; /* being written, or at no function's address */
		}
		if (note == NOTE_SKIP || r[i].start > rd->stop_tick)
			continue; /* made after the stop */
		if (second ? second_pass(rd, &r[i], lane, note == NOTE_OPEN)
			   : first_pass(rd, &r[i], gen, c, i))
			return -1;
	}
	if (!second)
		rd->chunks[c].used = i;
	return 0;
}

/* The chunks in lane order. Their heads are read with pread: touching the
 * mapping would map each whole chunk (the kernel maps pages around a
 * fault), the arena's size in resident memory at once. */
static struct chunk_ref *list_chunks(const struct arena *a, uint64_t *count)
{
	const struct scope_arena_header *h = a->hdr;
	struct chunk_ref *refs = malloc((a->nchunks ? a->nchunks : 1) * sizeof *refs);
	uint64_t n = 0;

	if (!refs)
		return NULL;
	for (uint64_t i = 0; i < a->nchunks; i++) {
		struct scope_chunk_head ch;
		if (pread(a->fd, &ch, sizeof ch, (off_t)(h->chunks_off + i * h->chunk_bytes)) !=
			    (ssize_t)sizeof ch ||
		    ch.magic != SCOPE_CHUNK_MAGIC || ch.lane >= a->nlanes)
			continue;
		refs[n].lane = ch.lane;
		refs[n].seq = ch.seq;
		refs[n].index = i;
		n++;
	}
	qsort(refs, n, sizeof *refs, by_lane_seq);
	*count = n;
	return refs;
}

/* Visits chunks [from, to) of the sorted chunk list. Each chunk read leaves
 * this process's memory at once (it stays in the page cache for the next
 * pass), so the arena does not add to the writer's resident memory. */
static int visit_range(struct reader *rd, int second, uint64_t from, uint64_t to)
{
	const struct scope_arena_header *h = rd->a->hdr;

	for (uint64_t i = from; i < to; i++) {
		const char *chunk =
			rd->a->base + h->chunks_off + rd->chunks[i].index * h->chunk_bytes;
		if (visit_chunk(rd, i, second) != 0)
			return -1;
		madvise((void *)chunk, h->chunk_bytes, MADV_DONTNEED);
	}
	return 0;
}

/*
 * The first pass notes, at the middle chunk, how many calls each region had
 * so far: the second pass then runs as two halves at once, the later half
 * starting each region where the earlier half's calls of it end.
 */
static int first_pass_all(struct reader *rd)
{
	rd->split = rd->nchunks / 2;
	rd->n = 0;
	rd->track.lane = UINT32_MAX;
	if (visit_range(rd, 0, 0, rd->split) != 0 ||
	    depth_track_copy(&rd->split_track, &rd->track) != 0)
		return -1;
	rd->split_n = rd->n;
	rd->split_regions = rd->map.n;
	rd->split_count = malloc((rd->map.n + 1) * sizeof *rd->split_count);
	if (!rd->split_count)
		return -1;
	for (uint32_t r = 0; r < rd->map.n; r++)
		rd->split_count[r] = rd->regions[r].count;
	return visit_range(rd, 0, rd->split, rd->nchunks);
}

struct half {
	struct reader rd;
	int rc;
};

static void *second_half(void *arg)
{
	struct half *h = arg;
	h->rc = visit_range(&h->rd, 1, h->rd.split, h->rd.nchunks);
	depth_track_free(&h->rd.track);
	return NULL;
}

/* The first note of a call read at or after index n. */
static uint64_t note_from(const struct reader *rd, uint64_t n)
{
	uint64_t a = 0, b = rd->nnotes;
	while (a < b) {
		uint64_t m = a + (b - a) / 2;
		if (rd->notes[m].index < n)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

static int group(struct reader *rd, struct profile *p)
{
	uint32_t nreg = rd->map.n;
	struct half later;
	pthread_t tid;
	int threaded, rc;

	rd->pos = malloc((nreg + 1) * sizeof *rd->pos);
	later.rd.pos = malloc((nreg + 1) * sizeof *rd->pos);
	if (!rd->pos || !later.rd.pos || events_alloc(&p->ev, rd->n, rd->bytes) != 0) {
		free(later.rd.pos);
		return -1;
	}
	for (uint32_t r = 0; r < nreg; r++) {
		rd->pos[r] = rd->regions[r].first;
		later.rd.pos[r] = rd->pos[r] + (r < rd->split_regions ? rd->split_count[r] : 0);
	}
	rd->ev = &p->ev;
	later.rd = (struct reader){.a = rd->a,
				   .clock = rd->clock,
				   .stop_tick = rd->stop_tick,
				   .track = rd->split_track,
				   .lane_end = rd->lane_end,
				   .rnotes = rd->rnotes,
				   .nrnotes = rd->nrnotes,
				   .rnote = rec_note_from(rd, rd->split),
				   .rid = rd->rid,
				   .n = rd->split_n,
				   .pos = later.rd.pos,
				   .ev = rd->ev,
				   .notes = rd->notes,
				   .nnotes = rd->nnotes,
				   .note = note_from(rd, rd->split_n),
				   .chunks = rd->chunks,
				   .nchunks = rd->nchunks,
				   .split = rd->split};
	rd->split_track = (struct depth_track){0}; /* the later half's now */
	threaded = pthread_create(&tid, NULL, second_half, &later) == 0;
	rd->n = 0;
	rd->note = 0;
	rd->rnote = 0;
	rd->track.lane = UINT32_MAX;
	rc = visit_range(rd, 1, 0, rd->split);
	if (threaded)
		pthread_join(tid, NULL);
	else
		second_half(&later);
	free(later.rd.pos);
	if (rc != 0 || later.rc != 0)
		return -1;
	for (uint32_t r = 0; r < nreg; r++)
		if (events_sort(&p->ev, rd->regions[r].first, rd->regions[r].count) != 0)
			return -1;
	return 0;
}

/* A run that never stopped (killed, or still running) ends at the last tick
 * any of its records holds. */
static uint64_t stop_tick(const struct arena *a)
{
	const struct scope_arena_header *h = a->hdr;
	uint64_t last = h->start_tick;

	if (h->state == SCOPE_ARENA_STOPPED)
		return h->stop_tick;
	for (uint64_t i = 0; i < a->nchunks; i++) {
		const struct scope_chunk_head *ch =
			(const void *)(a->base + h->chunks_off + i * h->chunk_bytes);
		const struct scope_rec *r = (const struct scope_rec *)(ch + 1);
		if (ch->magic != SCOPE_CHUNK_MAGIC)
			continue;
		for (uint32_t k = 0; k < a->recs_per_chunk && r[k].fn; k++) {
			if (scope_rec_is_bytes(&r[k]))
				continue;
			if (r[k].start > last)
				last = r[k].start;
			if (!(r[k].end & SCOPE_REC_OPEN) && r[k].end > last)
				last = r[k].end;
		}
	}
	return last;
}

/* Lays the regions out one after the other, in id order. */
static void place_regions(struct reader *rd)
{
	uint64_t at = 0;
	for (uint32_t r = 0; r < rd->map.n; r++) {
		rd->regions[r].first = at;
		at += rd->regions[r].count;
	}
}

/* The lanes' end times, read once: a thread that ends while the arena is
 * read would otherwise end its open calls differently in each pass. */
static uint64_t *lane_ends(const struct arena *a)
{
	const struct scope_lane *lanes = (const void *)(a->base + a->hdr->lanes_off);
	uint64_t *end = malloc((a->nlanes + 1) * sizeof *end);

	for (uint32_t i = 0; end && i < a->nlanes; i++)
		end[i] = __atomic_load_n(&lanes[i].end, __ATOMIC_RELAXED);
	return end;
}

int collect(const struct arena *a, const struct tick_clock *c, const struct module *mods,
	    size_t nmods, uint64_t window, const char *const *spill_dirs, struct profile *p)
{
	struct reader rd = {
		.a = a, .clock = c, .stop_tick = stop_tick(a), .mods = mods, .nmods = nmods};
	int rc = -1;

	for (size_t i = 0; i < nmods; i++)
		rd.unloads |= mods[i].unload != 0;
	memset(p, 0, sizeof *p);
	rd.lane_end = lane_ends(a);
	rd.chunks = list_chunks(a, &rd.nchunks);
	rd.rid_cap =
		rd.nchunks * a->recs_per_chunk < window ? rd.nchunks * a->recs_per_chunk : window;
	if (rd.chunks)
		rd.rid = malloc((rd.rid_cap + 1) * sizeof *rd.rid);
	if (!rd.lane_end || !rd.rid || first_pass_all(&rd) != 0) {
		writer_fail("out of memory while reading the arena");
		goto out;
	}
	rd.nregions = rd.map.n;
	place_regions(&rd);
	p->nevents = rd.n;
	p->bytes = rd.bytes;
	if (rd.rid && group(&rd, p) != 0) {
		writer_fail("out of memory while grouping the calls");
		goto out;
	}
	if (!rd.rid && stream_group(&rd, p, window, spill_dirs) != 0)
		goto out;
	p->regions = rd.regions;
	p->nregions = rd.nregions;
	rd.regions = NULL;
	p->end_ns = tick_ns(c, rd.stop_tick);
	for (int i = 0; i < SCOPE_LOST_CAUSES; i++)
		p->lost += a->hdr->lost[i];
	rc = 0;
out:
	if (rc != 0)
		profile_free(p);
	map_free(&rd.map);
	free(rd.regions);
	stack_free(&rd.stack);
	depth_track_free(&rd.track);
	depth_track_free(&rd.split_track);
	free(rd.lane_end);
	free(rd.rnotes);
	free(rd.rid);
	free(rd.notes);
	free(rd.pos);
	free(rd.split_count);
	free(rd.chunks);
	return rc;
}

void profile_free(struct profile *p)
{
	events_free(&p->ev);
	spill_close(p->spill);
	free(p->regions);
	memset(p, 0, sizeof *p);
}
