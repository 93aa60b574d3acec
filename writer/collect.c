/* SPDX-License-Identifier: MIT */
/* Turns the arena's per-thread records into per-region events with their statistics. */
#define _GNU_SOURCE
#include "collect.h"
#include "grow.h"
#include "progress.h"
#include "spill.h"

#include <scope/aggregate.h>
#include <scope/sample.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Lane, then seq; of one chunk in both places, the arena's first. */
static int by_lane_seq(const void *x, const void *y)
{
	const struct chunk_ref *a = x, *b = y;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return (a->from_store > b->from_store) - (a->from_store < b->from_store);
}

/* Returns the region id for addr, adding it when new; UINT32_MAX on failure. */
static uint32_t map_get(struct u64map *m, uint64_t addr)
{
	int added;
	uint32_t *id = map_slot(m, addr, (uint32_t)m->n, &added);
	return id ? *id : UINT32_MAX;
}

static int add_region(struct grouping *gr, uint32_t rid, uint64_t addr)
{
	if (rid >= gr->region_cap) {
		uint32_t cap = gr->region_cap ? gr->region_cap * 2 : 256;
		struct region *grown = realloc(gr->regions, cap * sizeof *grown);
		if (!grown)
			return -1;
		gr->regions = grown;
		gr->region_cap = cap;
	}
	memset(&gr->regions[rid], 0, sizeof gr->regions[rid]);
	gr->regions[rid].addr = addr;
	gr->regions[rid].min_ns = UINT64_MAX;
	return 0;
}

/* A call that never returned ends with its thread, or when the process
 * stopped if the thread was still running. */
uint8_t grouping_times(const struct grouping *gr, const struct scope_rec *r, uint32_t lane,
		       int was_open, uint64_t *start, uint64_t *dur)
{
	uint64_t end = r->end;
	uint8_t flags = 0;

	if (was_open || (end & SCOPE_REC_OPEN) || end > gr->stop_tick || end < r->start) {
		uint64_t lane_end = gr->lane_end[lane];
		end = lane_end && lane_end < gr->stop_tick && lane_end >= r->start ? lane_end
										   : gr->stop_tick;
		flags = EVENT_UNFINISHED;
	}
	*start = tick_ns(gr->clock, r->start);
	*dur = tick_ns(gr->clock, end) - *start;
	return flags;
}

/* The unloaded module that held addr when the call started, or -1: the
 * code mapped there at the end. */
static int unloaded_module(const struct grouping *gr, uint64_t addr, uint64_t tick)
{
	int best = -1;
	for (size_t i = 0; i < gr->nmods; i++) {
		const struct module *m = &gr->mods[i];
		if (m->unload && addr >= m->lo && addr < m->hi && tick <= m->unload &&
		    (best < 0 || m->unload < gr->mods[best].unload))
			best = (int)i;
	}
	return best;
}

/* The key a call's region is found by: its address, and the unloaded
 * module that held the address when the call started, if any. */
static uint64_t region_key(const struct grouping *gr, const struct scope_rec *r, int *module)
{
	uint64_t addr = scope_rec_addr(r);

	*module = gr->unloads ? unloaded_module(gr, addr, r->start) : -1;
	return *module >= 0 ? addr | (uint64_t)(*module + 1) << SCOPE_REC_ADDR_BITS : addr;
}

uint32_t grouping_region(struct grouping *gr, const struct scope_rec *r, uint64_t *last_key,
			 uint32_t *last_rid, int *module)
{
	uint64_t key = region_key(gr, r, module);

	/* Calls of one function come in runs (a loop, a recursion): the last
	 * key is asked again first. */
	if (key != *last_key) {
		*last_rid = map_get(&gr->map, key);
		*last_key = key;
	}
	return *last_rid;
}

static int track_reserve(struct depth_track *d, uint32_t depth)
{
	uint64_t cap = d->cap ? d->cap : 64;
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

int depth_of_slow(struct depth_track *d, uint32_t lane, const struct scope_rec *r, uint32_t *depth)
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

void depth_track_free(struct depth_track *d)
{
	free(d->end);
	memset(d, 0, sizeof *d);
}

static __attribute__((noinline)) int stack_grow(struct depth_stack *s, uint32_t depth)
{
	uint64_t cap = s->cap ? s->cap : 64;
	uint32_t *rid, *gen;
	uint64_t *index, *rindex;

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
	rindex = realloc(s->rindex, cap * sizeof *rindex);
	if (rindex)
		s->rindex = rindex;
	if (!rid || !gen || !index || !rindex)
		return -1;
	memset(gen + s->cap, 0, (cap - s->cap) * sizeof *gen); /* 0: no lane's */
	s->cap = (uint32_t)cap;
	return 0;
}

/* Room in s for a call at depth (every call asks: the room is there but
 * for a call deeper than any before). */
static inline int stack_reserve(struct depth_stack *s, uint32_t depth)
{
	return __builtin_expect(depth < s->cap, 1) ? 0 : stack_grow(s, depth);
}

static void stack_free(struct depth_stack *s)
{
	free(s->rid);
	free(s->gen);
	free(s->index);
	free(s->rindex);
	memset(s, 0, sizeof *s);
}

void lane_pass_free(struct lane_pass *lp)
{
	stack_free(&lp->stack);
	depth_track_free(&lp->track);
	free(lp->outer);
	memset(lp, 0, sizeof *lp);
}

static int add_rec_note(struct grouping *gr, uint64_t chunk, uint32_t slot, uint32_t kind)
{
	if (gr->nrnotes == gr->rnotes_cap) {
		uint64_t cap = gr->rnotes_cap ? 2 * gr->rnotes_cap : 64;
		struct rec_note *grown = realloc(gr->rnotes, cap * sizeof *grown);
		if (!grown)
			return -1;
		gr->rnotes = grown;
		gr->rnotes_cap = cap;
	}
	gr->rnotes[gr->nrnotes++] = (struct rec_note){chunk, slot, kind};
	return 0;
}

uint64_t rec_note_from(const struct grouping *gr, uint64_t c)
{
	uint64_t a = 0, b = gr->nrnotes;
	while (a < b) {
		uint64_t m = a + (b - a) / 2;
		if (gr->rnotes[m].chunk < c)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/*
 * Whether a call at depth on lane gen is made inside a call of its own
 * region g (a recursion): that call is then g's latest outermost call,
 * still open. Proof: the shallowest such call was outermost when it
 * started, and every call of g after it on the lane started inside it.
 * It is open, and so the call's ancestor, when the lane's latest call at
 * its depth is still it; the indices tell calls apart, the generations
 * lanes. One test a call, whatever the depth.
 */
static inline int inside_own_call(const struct depth_stack *s, const struct outer_call *o,
				  uint32_t gen, uint32_t depth)
{
	uint32_t d = o->depth;

	/* index is UINT64_MAX before the region's first call: no index is */
	return d < depth && s->gen[d] == gen && s->index[d] == o->index;
}

/* Lanes read merged keep an outer call per region each: past this, the
 * lanes are read one after another instead (1,024 lanes that each reach
 * region 1,024 take it; 10,000 lanes of 100 regions about 20 MiB). */
#define LANES_OUTER_BYTES (UINT64_C(32) << 20)

/* outer_of, past the lane's outer calls: grows them to hold rid's. */
static __attribute__((noinline)) struct outer_call *outer_grow(struct grouping *gr,
							       struct lane_pass *lp, uint32_t rid)
{
	uint64_t had = lp->nouter, cap = had ? had : 16;
	struct outer_call *grown;

	while (cap <= rid)
		cap *= 2;
	if (gr->lanes && (gr->lanes_bytes += (cap - had) * sizeof *grown) > LANES_OUTER_BYTES) {
		gr->too_many = 1;
		return NULL;
	}
	if (!(grown = realloc(lp->outer, cap * sizeof *grown)))
		return NULL;
	for (uint64_t i = had; i < cap; i++)
		grown[i] = (struct outer_call){UINT64_MAX, 0};
	lp->outer = grown;
	lp->nouter = cap;
	return &grown[rid];
}

/* The lane's outer call of region rid; NULL without memory, or past
 * LANES_OUTER_BYTES (too_many). */
static inline struct outer_call *outer_of(struct grouping *gr, struct lane_pass *lp, uint32_t rid)
{
	return __builtin_expect(rid < lp->nouter, 1) ? &lp->outer[rid] : outer_grow(gr, lp, rid);
}

/* Whether the lane's latest call at depth was open at tick: the parent of
 * a call that starts then one level deeper. It is not when a filter left
 * the parent out (the call is stored at its true depth under a call that
 * is not): its time is then the parent's, summed by the library. */
static inline int open_at(const struct depth_track *d, uint32_t depth, uint64_t tick)
{
	uint64_t end = depth < d->known ? d->end[depth] : 0;
	return (end & SCOPE_REC_OPEN) || end >= tick;
}

/* The one pass spills the call it read, the index-th of region rid, and
 * notes the columns' largest values (as the stream's emit does). */
static inline __attribute__((always_inline)) int once_call(struct grouping *gr, uint32_t rid,
							   const struct spilled_call *call)
{
	struct region *g = &gr->regions[rid];
	uint64_t index = g->count - 1;

	note_spilled(&gr->once_max, call, index, &g->last_start, &gr->once_max_start,
		     &gr->once_unordered);
	gr->lp->stack.rindex[call->depth] = index;
	if (spill_call(gr->once, rid, index, call) != 0) {
		gr->once_failed = 1;
		return -1;
	}
	return 0;
}

/* A call's time, now that it is known, in its region's statistics and,
 * when it ran inside a call of parent (UINT32_MAX: none), out of that
 * call's self time; outer: none of its region's calls was open around it. */
static void account(struct grouping *gr, uint32_t rid, uint32_t parent, int outer, uint64_t dur)
{
	struct region *g = &gr->regions[rid];

	g->total_all_ns += dur;
	if (outer)
		g->total_ns += dur;
	g->self_ns += (int64_t)dur;
	if (dur < g->min_ns)
		g->min_ns = dur;
	if (dur > g->max_ns)
		g->max_ns = dur;
	if (parent != UINT32_MAX)
		gr->regions[parent].self_ns -= (int64_t)dur;
}

/* While the process runs (gr->running), a call whose end is not known yet
 * waits, everything but its time counted, until it is (group_resolve). */
static int add_later(struct grouping *gr, struct later l)
{
	if (scope_grow((void **)&gr->later, &gr->later_cap, gr->nlater + 1, sizeof *gr->later) != 0)
		return -1;
	gr->later[gr->nlater++] = l;
	return 0;
}

static inline __attribute__((always_inline)) int
first_pass(struct grouping *gr, const struct scope_rec *r, uint32_t gen, uint64_t c, uint32_t slot)
{
	uint64_t start, dur;
	uint32_t depth, n_before = gr->map.n, parent = UINT32_MAX;
	int module, open = (r->end & SCOPE_REC_OPEN) != 0, outer, later;
	uint8_t flags;
	struct lane_pass *lp = gr->lp;
	uint32_t rid = grouping_region(gr, r, &lp->last_key, &lp->last_rid, &module);
	struct depth_stack *s = &lp->stack;
	struct outer_call *o;
	struct region *g;

	later = gr->running && (open || r->end < r->start);
	if (rid == UINT32_MAX || depth_of(&lp->track, gen - 1, r, &depth) != 0 ||
	    stack_reserve(s, depth) != 0 || !(o = outer_of(gr, lp, rid)) ||
	    (open && !gr->running && !gr->lanes && add_rec_note(gr, c, slot, NOTE_OPEN)))
		return -1;
	if (gr->map.n != n_before) {
		if (add_region(gr, rid, scope_rec_addr(r)) != 0)
			return -1;
		gr->regions[rid].module = module;
	}
	g = &gr->regions[rid];
	g->count++;
	outer = !inside_own_call(s, o, gen, depth);
	if (outer)
		*o = (struct outer_call){gr->n, depth};
	s->rid[depth] = rid;
	s->gen[depth] = gen;
	s->index[depth] = gr->n++;
	if (depth > 0 && s->gen[depth - 1] == gen && open_at(&lp->track, depth - 1, r->start))
		parent = s->rid[depth - 1];
	if (later) {
		start = tick_ns(gr->clock, r->start);
		dur = 0;
		flags = SPILL_LATER;
		if (add_later(gr, (struct later){c, slot, rid, parent, g->count - 1, outer,
						 gen - 1}) != 0)
			return -1;
	} else {
		flags = grouping_times(gr, r, gen - 1, open, &start, &dur);
		account(gr, rid, parent, outer, dur);
		if (!open && r->end > gr->max_tick)
			gr->max_tick = r->end;
	}
	if (gr->once) {
		struct spilled_call call = {.start = start,
					    .duration = dur,
					    .thread = gen - 1,
					    .depth = depth,
					    .task = gr->task,
					    .flags = flags};
		return once_call(gr, rid, &call);
	}
	return 0;
}

/* A bytes record: the call of its depth read last on this lane moved them. */
static int first_pass_bytes(struct grouping *gr, const struct scope_rec *r, uint32_t gen)
{
	const struct depth_stack *s = &gr->lp->stack;
	uint32_t depth = depth_of_bytes(&gr->lp->track, gen - 1, r);
	struct region *g;

	if (depth >= s->cap || s->gen[depth] != gen)
		return 0; /* its call was not recorded */
	g = &gr->regions[s->rid[depth]];
	g->sent += r->start;
	g->received += r->end;
	gr->bytes = 1;
	if (gr->once) {
		note_spilled_bytes(&gr->once_max, r->start, r->end);
		if (spill_bytes(gr->once, s->rid[depth], s->rindex[depth], r->start, r->end) != 0) {
			gr->once_failed = 1;
			return -1;
		}
	}
	return 0;
}

/* A counters record: the change of counters 2k and 2k + 1 over the call of
 * its depth read last on this lane, which is its caller's too, less. */
static int first_pass_counters(struct grouping *gr, const struct scope_rec *r, uint32_t gen, int k)
{
	const struct depth_stack *s = &gr->lp->stack;
	uint32_t depth = depth_of_bytes(&gr->lp->track, gen - 1, r);
	const uint64_t v[2] = {r->start, r->end};

	if (depth >= s->cap || s->gen[depth] != gen)
		return 0; /* its call was not recorded */
	for (int i = 0; i < 2 && 2 * k + i < (int)gr->ncounters; i++) {
		gr->regions[s->rid[depth]].counter_total[2 * k + i] += v[i];
		gr->regions[s->rid[depth]].counter_self[2 * k + i] += (int64_t)v[i];
		if (depth > 0 && s->gen[depth - 1] == gen)
			gr->regions[s->rid[depth - 1]].counter_self[2 * k + i] -= (int64_t)v[i];
	}
	gr->counters = 1;
	if (gr->once) {
		note_spilled_counters(&gr->once_max, k, r->start, r->end);
		if (spill_counters(gr->once, s->rid[depth], s->rindex[depth], (uint32_t)k, r->start,
				   r->end) != 0) {
			gr->once_failed = 1;
			return -1;
		}
	}
	return 0;
}

/* The task the lane ran stops running at tick end: its time so far is
 * added to it. */
static void task_stop(struct grouping *gr, uint64_t end)
{
	if (gr->task && end > gr->task_since)
		gr->tasks[gr->task - 1].busy_ticks += end - gr->task_since;
}

/* The lane read so far ends: a task it still ran stopped at the lane's
 * end, or the task's, whichever came first. */
static void task_lane_end(struct grouping *gr)
{
	const struct scope_task *slots = (const void *)(gr->a->base + gr->a->hdr->tasks_off);
	uint64_t end = gr->stop_tick, lane_end;

	if (!gr->task || gr->task_lane >= gr->a->nlanes)
		return;
	lane_end = gr->lane_end[gr->task_lane];
	if (lane_end && lane_end < end)
		end = lane_end;
	if (slots[gr->task - 1].end && slots[gr->task - 1].end < end)
		end = slots[gr->task - 1].end;
	task_stop(gr, end);
	gr->task = 0;
}

/* A task record on lane: the lane's task changes, and the new one has
 * run on it. */
static int first_pass_task(struct grouping *gr, const struct scope_rec *r, uint32_t lane)
{
	uint32_t k = task_of(gr, r);
	struct task_use *u;

	task_stop(gr, r->start);
	gr->task = k;
	gr->task_since = r->start;
	if (!k)
		return 0;
	u = &gr->tasks[k - 1];
	if (u->nthreads && u->threads[u->nthreads - 1] == lane)
		return 0; /* lanes come in order: a lane already listed is the last */
	if (u->nthreads == u->cap) {
		uint32_t cap = u->cap ? 2 * u->cap : 2;
		uint32_t *grown = realloc(u->threads, cap * sizeof *grown);
		if (!grown)
			return -1;
		u->threads = grown;
		u->cap = cap;
	}
	u->threads[u->nthreads++] = lane;
	return 0;
}

/* Exact sums of calls that were not stored (filters): they count in
 * the region's statistics, not in its events. */
static uint64_t ticks_ns(const struct grouping *gr, uint64_t ticks)
{
	return tick_ns(gr->clock, gr->clock->start_tick + ticks);
}

/* The sums of region rid on lane, zero when new; NULL without memory. */
static struct lane_sum *lane_sum(struct grouping *gr, uint32_t rid, uint32_t lane)
{
	int added;
	uint32_t *row = map_slot(&gr->lane_map, (uint64_t)rid << 32 | lane,
				 (uint32_t)gr->nlane_sums, &added);

	if (!row)
		return NULL;
	if (!added)
		return &gr->lane_sums[*row];
	if (gr->nlane_sums == gr->lane_sums_cap) {
		uint64_t cap = gr->lane_sums_cap ? 2 * gr->lane_sums_cap : 64;
		struct lane_sum *grown = realloc(gr->lane_sums, cap * sizeof *grown);
		if (!grown)
			return NULL;
		gr->lane_sums = grown;
		gr->lane_sums_cap = cap;
	}
	gr->lane_sums[gr->nlane_sums] = (struct lane_sum){rid, lane, 0, 0, 0, UINT64_MAX, 0, 0};
	return &gr->lane_sums[gr->nlane_sums++];
}

/* r[0..SCOPE_AGG_RECS) is one group of sums (include/scope/aggregate.h). */
static int first_pass_agg(struct grouping *gr, const struct scope_rec *r)
{
	uint64_t addr = r[0].start, min = ticks_ns(gr, r[2].end), max = ticks_ns(gr, r[3].start);
	int64_t self = (int64_t)r[2].start;
	uint32_t n_before = gr->map.n, rid;
	struct region *g;

	for (int k = 1; k < SCOPE_AGG_RECS; k++)
		if ((r[k].fn & SCOPE_REC_ADDR_MASK) != SCOPE_REC_AGG_2)
			return 0; /* not a whole group: a damaged arena */
	if (!addr || addr > SCOPE_REC_ADDR_MASK)
		return 0;
	rid = map_get(&gr->map, addr);
	if (rid == UINT32_MAX || (gr->map.n != n_before && add_region(gr, rid, addr) != 0))
		return -1;
	if (gr->map.n != n_before)
		gr->regions[rid].module = -1;
	g = &gr->regions[rid];
	if (r[0].end && r[4].start < gr->a->nlanes) {
		struct lane_sum *l = lane_sum(gr, rid, (uint32_t)r[4].start);
		if (!l)
			return -1;
		l->calls += r[0].end;
		l->total_ns += ticks_ns(gr, r[1].start);
		l->total_all_ns += ticks_ns(gr, r[1].end);
		l->self_ns += self < 0 ? -(int64_t)ticks_ns(gr, (uint64_t)-self)
				       : (int64_t)ticks_ns(gr, (uint64_t)self);
		l->min_ns = min < l->min_ns ? min : l->min_ns;
		l->max_ns = max > l->max_ns ? max : l->max_ns;
	}
	g->aggregated += r[0].end;
	g->total_ns += ticks_ns(gr, r[1].start);
	g->total_all_ns += ticks_ns(gr, r[1].end);
	g->self_ns += self < 0 ? -(int64_t)ticks_ns(gr, (uint64_t)-self)
			       : (int64_t)ticks_ns(gr, (uint64_t)self);
	g->self_ns -= (int64_t)ticks_ns(gr, r[3].end);
	if (r[0].end && min < g->min_ns)
		g->min_ns = min;
	if (r[0].end && max > g->max_ns)
		g->max_ns = max;
	gr->aggregates = 1;
	return 0;
}

/* r[0..) is one sample of lane (include/scope/sample.h), n its frames. */
static int first_pass_sample(struct grouping *gr, const struct scope_rec *r, uint32_t lane,
			     uint32_t n)
{
	uint32_t rid = UINT32_MAX, n_before = gr->map.n;
	uint64_t addr = r[0].end;

	for (uint32_t k = 1; k < 1 + (n + 1) / 2; k++)
		if ((r[k].fn & SCOPE_REC_ADDR_MASK) != SCOPE_REC_SAMPLE_2)
			return 0; /* not a whole sample: a damaged arena */
	if (r[0].start > gr->stop_tick || !n)
		return 0;
	if (addr && addr <= SCOPE_REC_ADDR_MASK) {
		rid = map_get(&gr->map, addr);
		if (rid == UINT32_MAX || (gr->map.n != n_before && add_region(gr, rid, addr) != 0))
			return -1;
		if (gr->map.n != n_before)
			gr->regions[rid].module = -1;
	}
	if (scope_grow((void **)&gr->samples, &gr->samples_cap, gr->nsamples + 1,
		       sizeof *gr->samples) != 0 ||
	    scope_grow((void **)&gr->sample_pcs, &gr->sample_pcs_cap, gr->nsample_pcs + n,
		       sizeof *gr->sample_pcs) != 0)
		return -1;
	gr->samples[gr->nsamples++] =
		(struct sample){tick_ns(gr->clock, r[0].start), lane, rid, gr->nsample_pcs, n};
	for (uint32_t i = 0; i < n; i++)
		gr->sample_pcs[gr->nsample_pcs++] = i % 2 ? r[1 + i / 2].end : r[1 + i / 2].start;
	return 0;
}

/* A side record r[i] (its code below SCOPE_REC_NAMED, not 0) of lane:
 * 0 once read, -1 without memory, -2 for a task while the process runs. */
static int visit_side(struct grouping *gr, const struct scope_rec *r, uint32_t i, uint32_t n,
		      uint32_t lane)
{
	uint32_t gen = lane + 1;
	int k;

	if (rec_is_task(&r[i])) {
		if (gr->running)
			return -2;
		return first_pass_task(gr, &r[i], lane) != 0 ? -1 : 0;
	}
	if (scope_rec_is_bytes(&r[i]))
		return first_pass_bytes(gr, &r[i], gen) != 0 ? -1 : 0;
	if (scope_rec_is_agg(&r[i]))
		return i + SCOPE_AGG_RECS <= n && first_pass_agg(gr, &r[i]) != 0 ? -1 : 0;
	if (scope_rec_is_sample(&r[i])) {
		if (r[i].start > gr->max_tick)
			gr->max_tick = r[i].start;
		return i + 1 + (scope_sample_frames(&r[i]) + 1) / 2 <= n &&
				       first_pass_sample(gr, &r[i], lane,
							 scope_sample_frames(&r[i])) != 0
			       ? -1
			       : 0;
	}
	if ((k = rec_counters(gr, &r[i])) >= 0)
		return first_pass_counters(gr, &r[i], gen, k) != 0 ? -1 : 0;
	return 0; /* a side record of a kind this writer does not use */
}

int group_side(struct grouping *gr, const struct scope_rec *r, uint32_t i, uint32_t n,
	       uint32_t lane)
{
	gr->lp = &gr->lanes[lane];
	return visit_side(gr, r, i, n, lane);
}

int group_call(struct grouping *gr, const struct scope_rec *r, uint32_t lane)
{
	gr->lp = &gr->lanes[lane];
	return first_pass(gr, r, lane + 1, 0, 0);
}

int group_call_running(struct grouping *gr, const struct scope_rec *r, uint32_t lane, uint64_t seq,
		       uint32_t slot)
{
	gr->lp = &gr->lanes[lane];
	if (r->start > gr->max_tick)
		gr->max_tick = r->start;
	if (first_pass(gr, r, lane + 1, seq, slot) != 0)
		return -1;
	return gr->lp->track.next > 0xffff ? -2 : 0;
}

/*
 * Visits records [from, n) of chunk c (a position in the sorted list; with
 * gr->running, the chunk's seq) of lane; *stopped is where it stopped: n,
 * the first empty slot, or, while the process runs, a record still being
 * written (read again once its chunk has settled). Returns 0, -1 without
 * memory, or, while the process runs, -2 for what only its end can group:
 * a task, a depth past 16 bits (its true depth needs the calls' ends).
 * Calls are all but a few records: one test sets the others aside.
 */
static int visit_recs(struct grouping *gr, const struct scope_rec *r, uint32_t n, uint32_t from,
		      uint64_t c, uint32_t lane, uint32_t *stopped)
{
	uint32_t gen = lane + 1, i;

	for (i = from; i < n && r[i].fn; i++) {
		uint64_t code = r[i].fn & SCOPE_REC_ADDR_MASK;
		if (__builtin_expect(code < SCOPE_REC_NAMED && code != 0, 0)) {
			int rc = visit_side(gr, r, i, n, lane);
			if (rc != 0)
				return rc;
			continue;
		}
		if (gr->running && r[i].start == 0)
			break;
		if (r[i].start > gr->max_tick)
			gr->max_tick = r[i].start;
		if (r[i].start == 0 || code == 0) {
			if (add_rec_note(gr, c, i, NOTE_SKIP) != 0)
				return -1;
			continue; /* being written, or at no function's address */
		}
		if (r[i].start > gr->stop_tick)
			continue; /* made after the stop */
		if (first_pass(gr, &r[i], gen, c, i) != 0)
			return -1;
		if (gr->running && gr->lp->track.next > 0xffff)
			return -2;
	}
	*stopped = i;
	return 0;
}

/*
 * Visits the calls of chunk c (a position in the sorted list) from record
 * slot from on; returns -1 without memory. A chunk's calls end at the
 * first empty slot. That is not the end of its lane's calls: a signal
 * handler that records while its thread changes chunks takes a chunk of
 * its own and leaves it part-filled. The second pass (stream.c) reads only
 * the slots the first one did, the way it did.
 */
static int visit_chunk(struct grouping *gr, uint64_t c, uint32_t from)
{
	const struct scope_rec *r =
		(const struct scope_rec *)(gr->chunks[c].at + sizeof(struct scope_chunk_head));
	uint32_t lane = gr->chunks[c].lane, i = from;

	if (lane != gr->task_lane) {
		task_lane_end(gr);
		gr->task_lane = lane;
		gr->task = 0;
	}
	if (visit_recs(gr, r, gr->a->recs_per_chunk, from, c, lane, &i) != 0)
		return -1;
	gr->chunks[c].used = i;
	return 0;
}

int group_running(struct grouping *gr, const struct scope_rec *r, uint32_t from, uint64_t seq,
		  uint32_t lane, uint32_t *stopped)
{
	gr->running = 1;
	gr->task_lane = lane;
	return visit_recs(gr, r, gr->a->recs_per_chunk, from, seq, lane, stopped);
}

int group_resolve(struct grouping *gr, const struct later *l, const struct scope_rec *r)
{
	int open = (r->end & SCOPE_REC_OPEN) != 0;
	uint64_t start, dur;
	uint8_t flags;

	if (gr->running && (open || r->end < r->start))
		return 1;
	flags = grouping_times(gr, r, l->lane, open, &start, &dur);
	account(gr, l->rid, l->parent, l->outer, dur);
	if (!open && r->end > gr->max_tick)
		gr->max_tick = r->end;
	if (dur > gr->once_max.duration)
		gr->once_max.duration = dur;
	if (spill_later(gr->once, l->rid, l->index, dur, flags) != 0) {
		gr->once_failed = 1;
		return -1;
	}
	return 0;
}

/* Adds the chunk whose head ch is, at at, when it holds a lane's records. */
static void add_chunk(const struct arena *a, const struct scope_chunk_head *ch, const char *at,
		      uint32_t from_store, struct chunk_ref *refs, uint64_t *n)
{
	if (ch->magic != SCOPE_CHUNK_MAGIC || ch->lane >= a->nlanes)
		return;
	refs[*n] = (struct chunk_ref){
		.lane = ch->lane, .seq = ch->seq, .at = at, .from_store = from_store};
	++*n;
}

/* Drops the store's copy of a chunk still in the arena: the arena's is
 * never older (see the arena header's store). */
static uint64_t drop_copies(struct chunk_ref *refs, uint64_t n)
{
	uint64_t kept = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (kept && refs[i].from_store && refs[kept - 1].lane == refs[i].lane &&
		    refs[kept - 1].seq == refs[i].seq)
			continue;
		refs[kept++] = refs[i];
	}
	return kept;
}

/* The chunks in lane order: the arena's, and those the run's writer moved
 * to the store while the program ran. The arena's heads are read with
 * pread: touching the mapping would map each whole chunk (the kernel maps
 * pages around a fault), the arena's size in resident memory at once. */
static struct chunk_ref *list_chunks(const struct arena *a, uint64_t *count)
{
	const struct scope_arena_header *h = a->hdr;
	uint64_t all = a->nchunks + a->store_nchunks, n = 0;
	struct chunk_ref *refs = malloc((all ? all : 1) * sizeof *refs);

	if (!refs)
		return NULL;
	for (uint64_t i = 0; i < a->nchunks; i++) {
		uint64_t off = h->chunks_off + i * h->chunk_bytes;
		struct scope_chunk_head ch;
		if (pread(a->fd, &ch, sizeof ch, (off_t)off) == (ssize_t)sizeof ch)
			add_chunk(a, &ch, a->base + off, 0, refs, &n);
	}
	for (uint64_t i = 0; i < a->store_nchunks; i++) {
		uint64_t off = i * h->chunk_bytes;
		struct scope_chunk_head ch;
		if (pread(a->store_fd, &ch, sizeof ch, (off_t)off) == (ssize_t)sizeof ch)
			add_chunk(a, &ch, a->store + off, 1, refs, &n);
	}
	qsort(refs, n, sizeof *refs, by_lane_seq);
	*count = drop_copies(refs, n);
	return refs;
}

#define RELEASE_BATCH (4u << 20)

void chunk_done(struct chunk_batch *b, const char *at, uint64_t chunk_bytes)
{
	if (b->lo && (at != b->hi || (uint64_t)(b->hi - b->lo) >= RELEASE_BATCH))
		chunks_release(b);
	if (!b->lo)
		b->lo = at;
	b->hi = at + chunk_bytes;
}

void chunks_release(struct chunk_batch *b)
{
	if (b->lo)
		madvise((void *)b->lo, (size_t)(b->hi - b->lo), MADV_DONTNEED);
	b->lo = b->hi = NULL;
}

/* Visits chunks [from, to) of the sorted chunk list, the first from record
 * slot on (0: whole; the end of a grouping begun while the process ran
 * goes on where it stopped). The chunks read leave this process's memory
 * (struct chunk_batch), so the arena adds little to the writer's resident
 * memory. */
static int visit_range(struct grouping *gr, uint64_t from, uint64_t to, uint32_t slot)
{
	struct chunk_batch done = {0};
	int rc = 0;

	for (uint64_t i = from; i < to && rc == 0; i++) {
		rc = visit_chunk(gr, i, i == from ? slot : 0);
		progress_add(gr->a->recs_per_chunk);
		chunk_done(&done, gr->chunks[i].at, gr->a->hdr->chunk_bytes);
	}
	chunks_release(&done);
	return rc;
}

static int first_pass_all(struct grouping *gr)
{
	gr->n = 0;
	gr->own.track.lane = UINT32_MAX;
	gr->task_lane = UINT32_MAX;
	if (visit_range(gr, 0, gr->nchunks, 0) != 0)
		return -1;
	task_lane_end(gr);
	return 0;
}

/* A run that never stopped (killed, or still running) ends at the last tick
 * any of its records holds. */
static uint64_t stop_tick(const struct arena *a, const struct chunk_ref *chunks, uint64_t n)
{
	const struct scope_arena_header *h = a->hdr;
	uint64_t last = h->start_tick;

	if (h->state == SCOPE_ARENA_STOPPED)
		return h->stop_tick;
	for (uint64_t i = 0; i < n; i++) {
		const struct scope_rec *r =
			(const struct scope_rec *)(chunks[i].at + sizeof(struct scope_chunk_head));
		for (uint32_t k = 0; k < a->recs_per_chunk && r[k].fn; k++) {
			if (scope_rec_is_side(&r[k]))
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
static void place_regions(struct grouping *gr)
{
	uint64_t at = 0;
	for (uint32_t r = 0; r < gr->map.n; r++) {
		gr->regions[r].first = at;
		at += gr->regions[r].count;
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

/*
 * One pass, when a process's calls are all on one lane: they come in start
 * order, so each is spilled as the first pass reads it, as its region's
 * next call; the rows its region's place gives them are known by the time
 * the spill is read. The profile is the one the second pass would make
 * from the same records, without reading them twice.
 */
static int one_lane(const struct grouping *gr)
{
	return gr->nchunks && gr->chunks[0].lane == gr->chunks[gr->nchunks - 1].lane;
}

/* The one pass's spill, made ready to read into p. */
static int once_done(struct grouping *gr, struct profile *p)
{
	if (spill_done(gr->once, gr->n, gr->bytes, gr->counters ? gr->ncounters : 0) != 0) {
		gr->once_failed = 1;
		return -1;
	}
	p->spill = gr->once;
	gr->once = NULL;
	p->max = gr->once_max;
	/* A gap is never more than the latest start. */
	if (gr->once_unordered)
		p->max.start_delta = gr->once_max_start;
	progress_add(gr->n); /* the second visit, not needed */
	return 0;
}

/* What the passes found, into p, its calls spilled (by the second pass
 * when there was no one pass). */
static int fill_profile(struct grouping *gr, uint64_t window, const char *const *spill_dirs,
			struct profile *p)
{
	gr->nregions = gr->map.n;
	place_regions(gr);
	p->nevents = gr->n;
	p->bytes = gr->bytes;
	p->aggregates = gr->aggregates;
	p->lane_sums = gr->lane_sums;
	p->nlane_sums = gr->nlane_sums;
	gr->lane_sums = NULL;
	p->samples = gr->samples;
	p->nsamples = gr->nsamples;
	p->sample_pcs = gr->sample_pcs;
	p->nsample_pcs = gr->nsample_pcs;
	gr->samples = NULL;
	gr->sample_pcs = NULL;
	p->ncounters = gr->counters ? gr->ncounters : 0;
	if (!p->spill && stream_group(gr, p, window, spill_dirs) != 0)
		return -1;
	p->regions = gr->regions;
	p->nregions = gr->nregions;
	gr->regions = NULL;
	p->tasks = gr->tasks;
	p->ntasks = gr->ntasks;
	gr->tasks = NULL;
	p->end_ns = tick_ns(gr->clock, gr->stop_tick);
	for (int i = 0; i < SCOPE_LOST_CAUSES; i++)
		p->lost += gr->a->hdr->lost[i];
	return 0;
}

/* Frees what the passes hold (not gr itself). */
void grouping_free(struct grouping *gr)
{
	spill_close(gr->once);
	map_free(&gr->map);
	map_free(&gr->lane_map);
	free(gr->lane_sums);
	free(gr->samples);
	free(gr->sample_pcs);
	free(gr->regions);
	lane_pass_free(&gr->own);
	for (uint32_t i = 0; gr->lanes && i < gr->lanes_cap; i++)
		lane_pass_free(&gr->lanes[i]);
	free(gr->lanes);
	free(gr->lane_end);
	free(gr->rnotes);
	free(gr->chunks);
	free(gr->later);
	for (uint32_t i = 0; gr->tasks && i < gr->ntasks; i++)
		free(gr->tasks[i].threads);
	free(gr->tasks);
	memset(gr, 0, sizeof *gr);
}

/*
 * The calls of several lanes are read merged in start order, in one pass
 * (start_order.c), unless tasks move between the lanes (a task's time is summed
 * lane after lane), the lanes hold too many regions each, or
 * SCOPE_WRITER_MERGE is 0: then the first pass reads them one after
 * another, and the second (stream.c) merges them.
 */
static int merges(const struct grouping *gr, int may)
{
	const char *on = getenv("SCOPE_WRITER_MERGE");

	return may && gr->nchunks && !one_lane(gr) && !gr->a->ntasks &&
	       !(on && strcmp(on, "0") == 0);
}

static int collect_as(const struct arena *a, const struct tick_clock *c, const struct module *mods,
		      size_t nmods, uint64_t window, const char *const *spill_dirs,
		      struct profile *p, int may_merge, int *too_many)
{
	struct grouping gr = {.a = a, .clock = c, .mods = mods, .nmods = nmods};
	int rc = -1, oom = 0;

	gr.lp = &gr.own;

	for (size_t i = 0; i < nmods; i++)
		gr.unloads |= mods[i].unload != 0;
	memset(p, 0, sizeof *p);
	gr.lane_end = lane_ends(a);
	gr.ntasks = a->ntasks;
	gr.ncounters = a->ncounters;
	gr.tasks = calloc(gr.ntasks + 1, sizeof *gr.tasks);
	gr.chunks = list_chunks(a, &gr.nchunks);
	if (gr.chunks)
		gr.stop_tick = stop_tick(a, gr.chunks, gr.nchunks);
	if (gr.chunks && merges(&gr, may_merge) &&
	    !(gr.lanes = calloc(a->nlanes + 1, sizeof *gr.lanes)))
		oom = 1;
	gr.lanes_cap = gr.lanes ? a->nlanes + 1 : 0;
	if (gr.chunks && !oom && (one_lane(&gr) || gr.lanes) &&
	    !(gr.once = spill_open(spill_dirs, window)))
		gr.once_failed = 1;
	if (oom || !gr.lane_end || !gr.tasks || !gr.chunks || gr.once_failed ||
	    (gr.lanes ? merge_group(&gr) : first_pass_all(&gr)) != 0 ||
	    (gr.once && once_done(&gr, p) != 0)) {
		if (!gr.once_failed && !gr.too_many)
			writer_fail("out of memory while reading the arena");
	} else {
		rc = fill_profile(&gr, window, spill_dirs, p);
	}
	*too_many = gr.too_many;
	if (rc != 0)
		profile_free(p);
	grouping_free(&gr);
	return rc;
}

int collect(const struct arena *a, const struct tick_clock *c, const struct module *mods,
	    size_t nmods, uint64_t window, const char *const *spill_dirs, struct profile *p)
{
	int too_many = 0;
	int rc = collect_as(a, c, mods, nmods, window, spill_dirs, p, 1, &too_many);

	if (rc != 0 && too_many) {
		if (getenv("SCOPE_WRITER_TIMES"))
			fprintf(stderr,
				"scope-writer: %u lanes hold too many regions to be read merged: "
				"read lane after lane\n",
				a->nlanes);
		rc = collect_as(a, c, mods, nmods, window, spill_dirs, p, 0, &too_many);
	}
	return rc;
}

struct grouping *grouping_running(const struct arena *a, const struct tick_clock *c,
				  const char *const *dirs, uint64_t window)
{
	struct grouping *gr = calloc(1, sizeof *gr);

	if (!gr)
		return NULL;
	*gr = (struct grouping){.a = a, .clock = c, .stop_tick = UINT64_MAX, .running = 1};
	gr->lp = &gr->own;
	gr->own.track.lane = UINT32_MAX;
	gr->task_lane = UINT32_MAX;
	gr->tasks = calloc(1, sizeof *gr->tasks);
	gr->once = spill_open(dirs, window);
	if (!gr->tasks || !gr->once) {
		grouping_free(gr);
		free(gr);
		writer_fail_reset(); /* the process is grouped at its end instead */
		return NULL;
	}
	return gr;
}

/* The chunk of the sorted list that is lane's seq-th, or gr->nchunks. */
static uint64_t chunk_of(const struct grouping *gr, uint32_t lane, uint64_t seq)
{
	uint64_t a = 0, b = gr->nchunks;
	while (a < b) {
		uint64_t m = a + (b - a) / 2;
		const struct chunk_ref *k = &gr->chunks[m];
		if (k->lane < lane || (k->lane == lane && k->seq < seq))
			a = m + 1;
		else
			b = m;
	}
	return a < gr->nchunks && gr->chunks[a].lane == lane && gr->chunks[a].seq == seq
		       ? a
		       : gr->nchunks;
}

/* The arena a, handed over at the process's end, as what gr read while it
 * ran goes on: 0, -1 without memory, -2 when gr's reading cannot be used. */
static int resume_on(struct grouping *gr, const struct arena *a, const struct tick_clock *c,
		     const struct module *mods, size_t nmods)
{
	for (size_t i = 0; i < nmods; i++)
		if (mods[i].unload)
			return -2; /* calls at one address can belong to two libraries */
	if (c->mult != gr->clock->mult || c->start_tick != gr->clock->start_tick)
		return -2;
	gr->a = a;
	gr->clock = c;
	gr->mods = mods;
	gr->nmods = nmods;
	free(gr->lane_end);
	gr->lane_end = lane_ends(a);
	gr->chunks = list_chunks(a, &gr->nchunks);
	if (!gr->lane_end || !gr->chunks)
		return -1;
	gr->stop_tick = stop_tick(a, gr->chunks, gr->nchunks);
	if (gr->max_tick > gr->stop_tick || a->ncounters || a->ntasks)
		return -2;
	gr->running = 0;
	return 0;
}

/* Ends the calls that waited for their ends, from the arena's chunks; the
 * rest as collect ends a grouping. */
static int resume_end(struct grouping *gr, uint64_t window, struct profile *p)
{
	const char *none[] = {NULL};

	for (uint64_t i = 0; i < gr->nlater; i++) {
		uint64_t k = chunk_of(gr, gr->later[i].lane, gr->later[i].c);
		const struct scope_rec *r;
		if (k == gr->nchunks)
			return -2; /* its chunk is gone: cannot happen */
		r = (const struct scope_rec *)(gr->chunks[k].at + sizeof(struct scope_chunk_head));
		if (group_resolve(gr, &gr->later[i], &r[gr->later[i].slot]) != 0)
			return -1;
	}
	gr->nlater = 0;
	task_lane_end(gr);
	return once_done(gr, p) != 0 || fill_profile(gr, window, none, p) != 0 ? -1 : 0;
}

/* rc as collect_resume returns it: a spill that could not be written, or
 * lanes past what the merged pass holds, leave the grouping to collect. */
static int resume_failed(struct grouping *gr, struct profile *p, int rc)
{
	if (rc == 0)
		return 0;
	if (gr->once_failed || gr->too_many)
		return -2;
	if (!writer_failure())
		writer_fail("out of memory while reading the arena");
	profile_free(p);
	return -1;
}

int collect_resume_lanes(struct grouping *gr, const struct lane_pos *pos, uint32_t npos,
			 const struct arena *a, const struct tick_clock *c,
			 const struct module *mods, size_t nmods, uint64_t window,
			 struct profile *p)
{
	int rc;

	memset(p, 0, sizeof *p);
	if ((rc = resume_on(gr, a, c, mods, nmods)) == -2)
		return -2;
	if (rc == 0 && a->nlanes + 1 > gr->lanes_cap) {
		/* threads that began after the last chunk read: read from their start */
		struct lane_pass *grown = realloc(gr->lanes, (a->nlanes + 1) * sizeof *grown);
		if (!grown) {
			rc = -1;
		} else {
			memset(grown + gr->lanes_cap, 0,
			       (a->nlanes + 1 - gr->lanes_cap) * sizeof *grown);
			gr->lanes = grown;
			gr->lanes_cap = a->nlanes + 1;
		}
	}
	if (rc == 0 && (rc = merge_resume(gr, pos, npos)) == 0 &&
	    (rc = resume_end(gr, window, p)) == -2)
		return -2;
	return resume_failed(gr, p, rc);
}

int collect_resume(struct grouping *gr, uint32_t lane, uint64_t seq, uint32_t slot,
		   const struct arena *a, const struct tick_clock *c, const struct module *mods,
		   size_t nmods, uint64_t window, struct profile *p)
{
	int rc;

	memset(p, 0, sizeof *p);
	if ((rc = resume_on(gr, a, c, mods, nmods)) == -2)
		return -2;
	if (rc == 0 && gr->nchunks &&
	    (gr->chunks[0].lane != lane || gr->chunks[gr->nchunks - 1].lane != lane))
		return -2; /* a thread began after the last chunk read */
	if (rc == 0 && visit_range(gr, chunk_of(gr, lane, seq), gr->nchunks, slot) != 0)
		rc = -1;
	if (rc == 0 && (rc = resume_end(gr, window, p)) == -2)
		return -2;
	return resume_failed(gr, p, rc);
}

void profile_free(struct profile *p)
{
	spill_close(p->spill);
	free(p->regions);
	free(p->lane_sums);
	free(p->samples);
	free(p->sample_pcs);
	for (uint32_t i = 0; p->tasks && i < p->ntasks; i++)
		free(p->tasks[i].threads);
	free(p->tasks);
	memset(p, 0, sizeof *p);
}
