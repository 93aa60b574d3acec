/* SPDX-License-Identifier: MIT */
/* Turns the arena's per-thread records into per-region events with their statistics. */
#define _GNU_SOURCE
#include "writer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct chunk_ref {
	uint32_t lane, seq;
	uint64_t index;
};

static int by_lane_seq(const void *x, const void *y)
{
	const struct chunk_ref *a = x, *b = y;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Function address -> region id, open addressing. */
struct addr_map {
	uint64_t *keys; /* 0 = empty: no function lives at address 0 */
	uint32_t *ids;
	uint64_t mask;
	uint32_t n;
};

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

static int events_alloc(struct events *e, uint64_t n)
{
	memset(e, 0, sizeof *e);
	e->n = n;
	e->start = malloc(n * sizeof *e->start + 1);
	e->duration = malloc(n * sizeof *e->duration + 1);
	e->thread = malloc(n * sizeof *e->thread + 1);
	e->depth = malloc(n * sizeof *e->depth + 1);
	e->flags = malloc(n + 1);
	return e->start && e->duration && e->thread && e->depth && e->flags ? 0 : -1;
}

static void events_free(struct events *e)
{
	free(e->start);
	free(e->duration);
	free(e->thread);
	free(e->depth);
	free(e->flags);
	memset(e, 0, sizeof *e);
}

/* Per lane: the region open at each depth, to charge a call's time to its
 * parent's self time. gen tells which lane wrote an entry. */
struct depth_stack {
	uint32_t rid[65536];
	uint32_t gen[65536];
};

/*
 * Two passes over the records, in lane order. The first gives every call
 * its region id and sums the regions' statistics; with the counts known,
 * the second puts each call straight at its place in the region-grouped
 * columns. Nothing is copied twice, and the only per-call memory besides
 * the columns is the region id.
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
	uint32_t *rid; /* per call, in read order */
	uint64_t n;    /* calls read */
	uint64_t *pos; /* second pass: next slot of each region */
	struct events *ev;
	struct chunk_ref *chunks;
	uint64_t nchunks;
	const struct scope_lane *lanes;
	const struct module *mods; /* those unloaded during the run, when any */
	size_t nmods;
	int unloads;
	uint64_t split;		/* the second pass's halves: chunks [0, split), [split, end) */
	uint64_t split_n;	/* calls before split */
	uint32_t split_regions; /* regions seen before split */
	uint64_t *split_count;	/* their calls before split */
};

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

/* A call's times in ns. One that never returned ends with its thread, or
 * when the process stopped if the thread was still running. */
static uint8_t times(const struct reader *rd, const struct scope_rec *r, uint32_t lane,
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

static int first_pass(struct reader *rd, const struct scope_rec *r, uint32_t gen)
{
	uint64_t addr = r->fn & SCOPE_REC_ADDR_MASK, start, dur, key = addr;
	uint32_t depth = (uint32_t)(r->fn >> SCOPE_REC_ADDR_BITS) & 0xffff, n_before = rd->map.n;
	int module = rd->unloads ? unloaded_module(rd, addr, r->start) : -1;
	uint32_t rid;
	struct region *g;

	if (module >= 0)
		key = addr | (uint64_t)(module + 1) << SCOPE_REC_ADDR_BITS;
	/* Calls of one function come in runs (a loop, a recursion): the last
	 * key is asked again first. */
	if (key == rd->last_key) {
		rid = rd->last_rid;
	} else {
		rid = map_get(&rd->map, key);
		if (rid == UINT32_MAX || (rd->map.n != n_before && add_region(rd, rid, addr) != 0))
			return -1;
		rd->last_key = key;
		rd->last_rid = rid;
	}
	if (rd->map.n != n_before)
		rd->regions[rid].module = module;
	times(rd, r, gen - 1, &start, &dur);
	rd->rid[rd->n++] = rid;
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
	if (depth > 0 && rd->stack->gen[depth - 1] == gen)
		rd->regions[rd->stack->rid[depth - 1]].self_ns -= (int64_t)dur;
	return 0;
}

static void second_pass(struct reader *rd, const struct scope_rec *r, uint32_t lane)
{
	uint64_t at = rd->pos[rd->rid[rd->n++]]++;
	struct events *ev = rd->ev;

	ev->flags[at] = times(rd, r, lane, &ev->start[at], &ev->duration[at]);
	ev->thread[at] = lane;
	ev->depth[at] = (uint16_t)(r->fn >> SCOPE_REC_ADDR_BITS);
}

/* Visits one chunk's calls; returns 1 when the lane's calls end inside it. */
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
		if (r->start == 0 || r->start > rd->stop_tick)
			continue; /* being written, or made after the stop */
		if (second)
			second_pass(rd, r, ch->lane);
		else if (first_pass(rd, r, gen) != 0)
			return -1;
	}
	return 0;
}

static struct chunk_ref *list_chunks(const struct arena *a, uint64_t *count)
{
	const struct scope_arena_header *h = a->hdr;
	struct chunk_ref *refs = malloc((a->nchunks ? a->nchunks : 1) * sizeof *refs);
	uint64_t n = 0;

	if (!refs)
		return NULL;
	for (uint64_t i = 0; i < a->nchunks; i++) {
		const struct scope_chunk_head *ch =
			(const void *)(a->base + h->chunks_off + i * h->chunk_bytes);
		if (ch->magic != SCOPE_CHUNK_MAGIC || ch->lane >= a->nlanes)
			continue;
		refs[n].lane = ch->lane;
		refs[n].seq = ch->seq;
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

/* Merges the sorted runs of one region's calls (one run per lane) into
 * start order. Only regions called on several threads need it. */
static int merge_region(struct events *ev, uint64_t first, uint64_t n)
{
	uint64_t *start = ev->start + first, sorted = 1;
	uint32_t *idx, *tmp;
	void *col;

	while (sorted < n && start[sorted - 1] <= start[sorted])
		sorted++;
	if (sorted >= n)
		return 0;
	idx = malloc(n * sizeof *idx);
	tmp = malloc(n * sizeof *tmp);
	col = malloc(n * sizeof(uint64_t));
	if (!idx || !tmp || !col) {
		free(idx);
		free(tmp);
		free(col);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	for (;;) {
		uint64_t i = 0, merges = 0;
		while (i < n) {
			uint64_t a = i, b = i + 1, c, x, y, k;
			while (b < n && start[idx[b - 1]] <= start[idx[b]])
				b++;
			c = b + (b < n);
			while (c < n && start[idx[c - 1]] <= start[idx[c]])
				c++;
			for (x = a, y = b, k = a; x < b || y < c;)
				tmp[k++] = (y >= c || (x < b && start[idx[x]] <= start[idx[y]]))
						   ? idx[x++]
						   : idx[y++];
			memcpy(idx + a, tmp + a, (c - a) * sizeof *idx);
			merges++;
			i = c;
		}
		if (merges <= 1)
			break;
	}
#define PERMUTE(arr, type)                                                                         \
	do {                                                                                       \
		type *dst = (type *)col, *src = (arr) + first;                                     \
		for (uint64_t i = 0; i < n; i++)                                                   \
			dst[i] = src[idx[i]];                                                      \
		memcpy(src, dst, n * sizeof(type));                                                \
	} while (0)
	PERMUTE(ev->start, uint64_t);
	PERMUTE(ev->duration, uint64_t);
	PERMUTE(ev->thread, uint32_t);
	PERMUTE(ev->depth, uint16_t);
	PERMUTE(ev->flags, uint8_t);
#undef PERMUTE
	free(idx);
	free(tmp);
	free(col);
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

static int group(struct reader *rd, struct profile *p)
{
	uint32_t nreg = rd->map.n;
	uint64_t at = 0, n = rd->n;
	struct half later;
	pthread_t tid;
	int threaded, rc;

	rd->pos = malloc((nreg + 1) * sizeof *rd->pos);
	later.rd.pos = malloc((nreg + 1) * sizeof *rd->pos);
	if (!rd->pos || !later.rd.pos || events_alloc(&p->ev, n) != 0) {
		free(later.rd.pos);
		return -1;
	}
	for (uint32_t r = 0; r < nreg; r++) {
		rd->regions[r].first = rd->pos[r] = at;
		later.rd.pos[r] = at + (r < rd->split_regions ? rd->split_count[r] : 0);
		at += rd->regions[r].count;
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
				   .chunks = rd->chunks,
				   .nchunks = rd->nchunks,
				   .split = rd->split};
	threaded = pthread_create(&tid, NULL, second_half, &later) == 0;
	rd->n = 0;
	rc = visit_range(rd, 1, 0, rd->split);
	if (threaded)
		pthread_join(tid, NULL);
	else
		second_half(&later);
	free(later.rd.pos);
	if (rc != 0 || later.rc != 0)
		return -1;
	for (uint32_t r = 0; r < nreg; r++)
		if (merge_region(&p->ev, rd->regions[r].first, rd->regions[r].count) != 0)
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
			if (r[k].start > last)
				last = r[k].start;
			if (!(r[k].end & SCOPE_REC_OPEN) && r[k].end > last)
				last = r[k].end;
		}
	}
	return last;
}

int collect(const struct arena *a, const struct tick_clock *c, const struct module *mods,
	    size_t nmods, struct profile *p)
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
	if (rd.chunks)
		rd.rid = malloc((rd.nchunks * a->recs_per_chunk + 1) * sizeof *rd.rid);
	if (!rd.stack || !rd.rid || map_init(&rd.map, 1024) != 0 || first_pass_all(&rd) != 0 ||
	    group(&rd, p) != 0) {
		fprintf(stderr, "scope-writer: out of memory while reading the arena\n");
		profile_free(p);
		goto out;
	}
	p->regions = rd.regions;
	p->nregions = rd.map.n;
	rd.regions = NULL;
	p->end_ns = tick_ns(c, rd.stop_tick);
	for (int i = 0; i < SCOPE_LOST_CAUSES; i++)
		p->lost += a->hdr->lost[i];
	rc = 0;
out:
	free(rd.map.keys);
	free(rd.map.ids);
	free(rd.regions);
	free(rd.stack);
	free(rd.rid);
	free(rd.pos);
	free(rd.split_count);
	free(rd.chunks);
	return rc;
}

void profile_free(struct profile *p)
{
	events_free(&p->ev);
	free(p->regions);
	memset(p, 0, sizeof *p);
}
