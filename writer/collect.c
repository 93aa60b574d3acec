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

static int map_init(struct addr_map *m, uint64_t cap)
{
	m->mask = cap - 1;
	m->n = 0;
	m->keys = calloc(cap, sizeof *m->keys);
	m->ids = malloc(cap * sizeof *m->ids);
	return m->keys && m->ids ? 0 : -1;
}

static uint64_t hash_addr(uint64_t a)
{
	a ^= a >> 29;
	a *= UINT64_C(0xbf58476d1ce4e5b9);
	return a ^ (a >> 32);
}

static int map_grow(struct addr_map *m);

/* Returns the region id for addr, adding it when new; UINT32_MAX on failure. */
static uint32_t map_get(struct addr_map *m, uint64_t addr)
{
	uint64_t i = hash_addr(addr) & m->mask;
	while (m->keys[i]) {
		if (m->keys[i] == addr)
			return m->ids[i];
		i = (i + 1) & m->mask;
	}
	if ((m->n + 1) * 2 > m->mask + 1) {
		if (map_grow(m) != 0)
			return UINT32_MAX;
		return map_get(m, addr);
	}
	m->keys[i] = addr;
	m->ids[i] = m->n;
	return m->n++;
}

static int map_grow(struct addr_map *m)
{
	struct addr_map bigger;
	if (map_init(&bigger, (m->mask + 1) * 2) != 0)
		return -1;
	for (uint64_t i = 0; i <= m->mask; i++) {
		if (!m->keys[i])
			continue;
		uint64_t j = hash_addr(m->keys[i]) & bigger.mask;
		while (bigger.keys[j])
			j = (j + 1) & bigger.mask;
		bigger.keys[j] = m->keys[i];
		bigger.ids[j] = m->ids[i];
	}
	bigger.n = m->n;
	free(m->keys);
	free(m->ids);
	*m = bigger;
	return 0;
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
		     uint64_t *start, uint64_t *dur)
{
	uint64_t end = r->end;
	uint8_t flags = 0;

	if ((end & SCOPE_REC_OPEN) || end > rd->stop_tick || end < r->start) {
		uint64_t lane_end = rd->lanes[lane].end;
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

/* Too many calls to group in memory: they will go through a spill. */
static void drop_ids(struct reader *rd)
{
	free(rd->rid);
	free(rd->notes);
	rd->rid = NULL;
	rd->notes = NULL;
	rd->nnotes = rd->notes_cap = 0;
}

static int first_pass(struct reader *rd, const struct scope_rec *r, uint32_t gen)
{
	uint64_t start, dur;
	uint32_t depth = rec_depth(r), n_before = rd->map.n;
	int module;
	uint32_t rid = reader_region(rd, r, &rd->last_key, &rd->last_rid, &module);
	struct region *g;

	if (rid == UINT32_MAX)
		return -1;
	if (rd->map.n != n_before) {
		if (add_region(rd, rid, r->fn & SCOPE_REC_ADDR_MASK) != 0)
			return -1;
		rd->regions[rid].module = module;
	}
	reader_times(rd, r, gen - 1, &start, &dur);
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
	rd->stack->rid[depth] = rid;
	rd->stack->gen[depth] = gen;
	rd->stack->index[depth] = rd->n++;
	if (depth > 0 && rd->stack->gen[depth - 1] == gen)
		rd->regions[rd->stack->rid[depth - 1]].self_ns -= (int64_t)dur;
	return 0;
}

/* A bytes record: the call of its depth read last on this lane moved them. */
static int first_pass_bytes(struct reader *rd, const struct scope_rec *r, uint32_t gen)
{
	uint32_t depth = rec_depth(r);
	struct region *g;

	if (rd->stack->gen[depth] != gen)
		return 0; /* its call was not recorded */
	g = &rd->regions[rd->stack->rid[depth]];
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
	rd->notes[rd->nnotes++] = (struct bytes_note){rd->stack->index[depth], r->start, r->end};
	return 0;
}

static void second_pass(struct reader *rd, const struct scope_rec *r, uint32_t lane)
{
	uint64_t at = rd->pos[rd->rid[rd->n]]++;
	struct events *ev = rd->ev;

	ev->flags[at] = reader_times(rd, r, lane, &ev->start[at], &ev->duration[at]);
	ev->thread[at] = lane;
	ev->depth[at] = (uint16_t)rec_depth(r);
	if (rd->note < rd->nnotes && rd->notes[rd->note].index == rd->n) {
		ev->sent[at] = rd->notes[rd->note].sent;
		ev->received[at] = rd->notes[rd->note].received;
		rd->note++;
	}
	rd->n++;
}

/*
 * Visits one chunk's calls; returns -1 without memory. A chunk's calls end
 * at the first empty slot. That is not the end of its lane's calls: a
 * signal handler that records while its thread changes chunks takes a
 * chunk of its own and leaves it part-filled.
 */
static int visit_chunk(struct reader *rd, const struct scope_chunk_head *ch, uint32_t gen,
		       int second)
{
	const struct scope_rec *r = (const struct scope_rec *)(ch + 1);
	for (uint32_t i = 0; i < rd->a->recs_per_chunk && r->fn; i++, r++) {
		if (scope_rec_is_bytes(r)) {
			if (!second && first_pass_bytes(rd, r, gen) != 0)
				return -1;
			continue;
		}
		if (!reader_takes(rd, r))
			continue;
		if (second)
			second_pass(rd, r, ch->lane);
		else if (first_pass(rd, r, gen) != 0)
			return -1;
	}
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
		if (visit_chunk(rd, (const void *)chunk, rd->chunks[i].lane + 1, second) != 0)
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
	if (visit_range(rd, 0, 0, rd->split) != 0)
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
				   .lanes = rd->lanes,
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
	threaded = pthread_create(&tid, NULL, second_half, &later) == 0;
	rd->n = 0;
	rd->note = 0;
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

int collect(const struct arena *a, const struct tick_clock *c, const struct module *mods,
	    size_t nmods, uint64_t window, const char *const *spill_dirs, struct profile *p)
{
	struct reader rd = {.a = a,
			    .clock = c,
			    .stop_tick = stop_tick(a),
			    .lanes = (const struct scope_lane *)(a->base + a->hdr->lanes_off),
			    .mods = mods,
			    .nmods = nmods};
	int rc = -1;

	for (size_t i = 0; i < nmods; i++)
		rd.unloads |= mods[i].unload != 0;
	memset(p, 0, sizeof *p);
	rd.stack = calloc(1, sizeof *rd.stack);
	rd.chunks = list_chunks(a, &rd.nchunks);
	rd.rid_cap =
		rd.nchunks * a->recs_per_chunk < window ? rd.nchunks * a->recs_per_chunk : window;
	if (rd.chunks)
		rd.rid = malloc((rd.rid_cap + 1) * sizeof *rd.rid);
	if (!rd.stack || !rd.rid || map_init(&rd.map, 1024) != 0 || first_pass_all(&rd) != 0) {
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
	free(rd.map.keys);
	free(rd.map.ids);
	free(rd.regions);
	free(rd.stack);
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
