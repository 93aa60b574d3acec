/* SPDX-License-Identifier: MIT */
/* Turns the arena's per-thread records into per-region events with their statistics. */
#define _GNU_SOURCE
#include "writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The calls as read, in lane order; each lane's calls in start order. */
struct raw {
	uint64_t n, cap;
	uint32_t *rid;
	struct events ev;
};

static int raw_alloc(struct raw *r, uint64_t cap)
{
	memset(r, 0, sizeof *r);
	r->cap = cap ? cap : 1;
	r->rid = malloc(r->cap * sizeof *r->rid);
	r->ev.start = malloc(r->cap * sizeof *r->ev.start);
	r->ev.duration = malloc(r->cap * sizeof *r->ev.duration);
	r->ev.thread = malloc(r->cap * sizeof *r->ev.thread);
	r->ev.depth = malloc(r->cap * sizeof *r->ev.depth);
	r->ev.flags = malloc(r->cap * sizeof *r->ev.flags);
	return r->rid && r->ev.start && r->ev.duration && r->ev.thread && r->ev.depth && r->ev.flags
		       ? 0
		       : -1;
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

struct reader {
	const struct arena *a;
	const struct tick_clock *clock;
	uint64_t stop_tick;
	struct addr_map map;
	struct raw raw;
	struct region *regions;
	uint32_t region_cap;
	struct depth_stack *stack;
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

static int read_record(struct reader *rd, const struct scope_rec *r, uint32_t lane, uint32_t gen)
{
	uint64_t addr = r->fn & SCOPE_REC_ADDR_MASK, end = r->end, s, e, dur;
	uint32_t depth = (uint32_t)(r->fn >> SCOPE_REC_ADDR_BITS), n_before = rd->map.n, rid;
	uint8_t flags = 0;
	struct raw *w = &rd->raw;
	struct region *g;

	if ((end & SCOPE_REC_OPEN) || end > rd->stop_tick || end < r->start) {
		end = rd->stop_tick;
		flags = EVENT_UNFINISHED;
	}
	rid = map_get(&rd->map, addr);
	if (rid == UINT32_MAX || (rd->map.n != n_before && add_region(rd, rid, addr) != 0))
		return -1;
	s = tick_ns(rd->clock, r->start);
	e = tick_ns(rd->clock, end);
	dur = e - s;
	w->rid[w->n] = rid;
	w->ev.start[w->n] = s;
	w->ev.duration[w->n] = dur;
	w->ev.thread[w->n] = lane;
	w->ev.depth[w->n] = (uint16_t)depth;
	w->ev.flags[w->n] = flags;
	w->n++;

	g = &rd->regions[rid];
	g->count++;
	g->total_ns += dur;
	g->self_ns += (int64_t)dur;
	if (dur < g->min_ns)
		g->min_ns = dur;
	if (dur > g->max_ns)
		g->max_ns = dur;
	rd->stack->rid[depth & 0xffff] = rid;
	rd->stack->gen[depth & 0xffff] = gen;
	if (depth > 0 && rd->stack->gen[(depth - 1) & 0xffff] == gen)
		rd->regions[rd->stack->rid[(depth - 1) & 0xffff]].self_ns -= (int64_t)dur;
	return 0;
}

/* Reads one chunk; returns 1 when the lane's records end inside it. */
static int read_chunk(struct reader *rd, const struct scope_chunk_head *ch, uint32_t gen, int *err)
{
	const struct scope_rec *r = (const struct scope_rec *)(ch + 1);
	for (uint32_t i = 0; i < rd->a->recs_per_chunk; i++, r++) {
		if (r->fn == 0)
			return 1;
		if (r->start == 0)
			continue; /* being written when recording stopped */
		if (r->start > rd->stop_tick)
			return 1;
		if (read_record(rd, r, ch->lane, gen) != 0) {
			*err = 1;
			return 1;
		}
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

static int read_all(struct reader *rd)
{
	const struct scope_arena_header *h = rd->a->hdr;
	uint64_t n;
	struct chunk_ref *refs = list_chunks(rd->a, &n);
	int err = 0, lane_done = 0;

	if (!refs || raw_alloc(&rd->raw, n * rd->a->recs_per_chunk) != 0) {
		free(refs);
		return -1;
	}
	for (uint64_t i = 0; i < n && !err; i++) {
		if (i > 0 && refs[i].lane != refs[i - 1].lane)
			lane_done = 0;
		if (lane_done)
			continue;
		lane_done = read_chunk(rd,
				       (const void *)(rd->a->base + h->chunks_off +
						      refs[i].index * h->chunk_bytes),
				       refs[i].lane + 1, &err);
	}
	free(refs);
	return err ? -1 : 0;
}

/* Merges the sorted runs of one region's events (one run per lane) so the
 * region's events stand in start order. idx holds event numbers. */
static void merge_runs(uint32_t *idx, uint32_t *tmp, uint64_t n, const uint64_t *start)
{
	uint64_t sorted = 1;
	while (sorted < n && start[idx[sorted - 1]] <= start[idx[sorted]])
		sorted++;
	if (sorted >= n)
		return;
	for (;;) {
		uint64_t i = 0, runs = 0;
		while (i < n) {
			uint64_t a = i, b = i + 1;
			while (b < n && start[idx[b - 1]] <= start[idx[b]])
				b++;
			uint64_t c = b + (b < n);
			while (c < n && start[idx[c - 1]] <= start[idx[c]])
				c++;
			uint64_t x = a, y = b, k = a;
			while (x < b && y < c)
				tmp[k++] = start[idx[y]] < start[idx[x]] ? idx[y++] : idx[x++];
			while (x < b)
				tmp[k++] = idx[x++];
			while (y < c)
				tmp[k++] = idx[y++];
			memcpy(idx + a, tmp + a, (c - a) * sizeof *idx);
			runs++;
			i = c;
		}
		if (runs <= 1)
			return;
	}
}

/* Groups events by region (stable, so each lane's run stays in order), then
 * merges the lanes' runs inside each region. */
static int group(struct reader *rd, struct profile *p)
{
	struct raw *w = &rd->raw;
	uint32_t nreg = rd->map.n;
	uint64_t *pos = calloc(nreg + 1, sizeof *pos);
	uint32_t *order = malloc((w->n ? w->n : 1) * sizeof *order);
	uint32_t *tmp = malloc((w->n ? w->n : 1) * sizeof *tmp);
	struct events *ev = &p->ev;
	int rc = -1;

	if (!pos || !order || !tmp)
		goto out;
	for (uint64_t i = 0; i < w->n; i++)
		pos[w->rid[i] + 1]++;
	for (uint32_t r = 0; r < nreg; r++) {
		pos[r + 1] += pos[r];
		rd->regions[r].first = pos[r];
	}
	for (uint64_t i = 0; i < w->n; i++)
		order[pos[w->rid[i]]++] = (uint32_t)i;
	for (uint32_t r = 0; r < nreg; r++)
		merge_runs(order + rd->regions[r].first, tmp + rd->regions[r].first,
			   rd->regions[r].count, w->ev.start);

	ev->n = w->n;
	ev->start = malloc(w->n * sizeof *ev->start + 1);
	ev->duration = malloc(w->n * sizeof *ev->duration + 1);
	ev->thread = malloc(w->n * sizeof *ev->thread + 1);
	ev->depth = malloc(w->n * sizeof *ev->depth + 1);
	ev->flags = malloc(w->n + 1);
	if (!ev->start || !ev->duration || !ev->thread || !ev->depth || !ev->flags)
		goto out;
	for (uint64_t i = 0; i < w->n; i++) {
		uint32_t k = order[i];
		ev->start[i] = w->ev.start[k];
		ev->duration[i] = w->ev.duration[k];
		ev->thread[i] = w->ev.thread[k];
		ev->depth[i] = w->ev.depth[k];
		ev->flags[i] = w->ev.flags[k];
	}
	rc = 0;
out:
	free(pos);
	free(order);
	free(tmp);
	return rc;
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

int collect(const struct arena *a, const struct tick_clock *c, struct profile *p)
{
	struct reader rd = {.a = a, .clock = c, .stop_tick = stop_tick(a)};
	int rc = -1;

	memset(p, 0, sizeof *p);
	rd.stack = calloc(1, sizeof *rd.stack);
	if (!rd.stack || map_init(&rd.map, 1024) != 0 || read_all(&rd) != 0 || group(&rd, p) != 0) {
		fprintf(stderr, "scope-writer: out of memory while reading the arena\n");
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
	free(rd.raw.rid);
	events_free(&rd.raw.ev);
	return rc;
}

void profile_free(struct profile *p)
{
	events_free(&p->ev);
	free(p->regions);
	memset(p, 0, sizeof *p);
}
