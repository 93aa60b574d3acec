/* SPDX-License-Identifier: MIT */
/* Merges a process's pairs by start time and keeps a call stack per thread lane. */
#include "walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows buffered for all cursors of a walk together (8 bytes a column). */
#define WALK_BUDGET_ROWS (1u << 20)
#define WALK_MIN_SLICE	 256u
#define WALK_MAX_SLICE	 65536u
#define WALK_COLUMNS	 (RD_START | RD_DURATION | RD_THREAD | RD_DEPTH | RD_FLAGS)

struct source {
	struct rd_cursor c;
	struct rd_event ev; /* its next call */
	uint64_t index;	    /* of that call in its pair */
};

/* A heap entry: a source's next call's sort key, kept in the heap for locality. */
struct entry {
	uint64_t start, depth;
	size_t src;
};

struct walk {
	struct rd_profile *p;
	const struct wk_visitor *v;
	int64_t only;
	struct source *src;
	size_t nsrc;	    /* cursors opened */
	struct entry *heap; /* the earliest next call first */
	size_t nheap;
	struct wk_lane *lanes;
	size_t nlanes;
};

/* Whether a's call comes before b's: by start, then caller first, then pair order. */
static int before(const struct entry *a, const struct entry *b)
{
	if (a->start != b->start)
		return a->start < b->start;
	if (a->depth != b->depth)
		return a->depth < b->depth;
	return a->src < b->src;
}

static void set_key(struct walk *w, struct entry *e, size_t src)
{
	e->start = w->src[src].ev.start;
	e->depth = w->src[src].ev.depth;
	e->src = src;
}

/* Moves heap[i] down to its place. */
static void sift_down(struct walk *w, size_t i)
{
	struct entry x = w->heap[i];

	for (;;) {
		size_t l = 2 * i + 1, m;
		if (l >= w->nheap)
			break;
		m = l + 1 < w->nheap && before(&w->heap[l + 1], &w->heap[l]) ? l + 1 : l;
		if (!before(&w->heap[m], &x))
			break;
		w->heap[i] = w->heap[m];
		i = m;
	}
	w->heap[i] = x;
}

/* A call's total and self time, with or without the recording's cost. */
static void times(const struct walk *w, struct wk_frame *f)
{
	double cost;

	if (!(w->v->overhead_ns > 0)) {
		f->total_ns = f->duration;
		f->self_ns = (int64_t)(f->duration - f->child_ns);
		return;
	}
	cost = w->v->overhead_ns * (1.0 + (double)f->calls_under);
	f->total_ns = cost < (double)f->duration ? f->duration - (uint64_t)(cost + 0.5) : 0;
	f->self_ns = f->total_ns > f->child_total ? (int64_t)(f->total_ns - f->child_total) : 0;
}

static int leave(struct walk *w, struct wk_lane *l)
{
	struct wk_frame *f = &l->stack[l->n - 1];
	int rc;

	times(w, f);
	if (l->n > 1) {
		struct wk_frame *caller = &l->stack[l->n - 2];
		caller->calls_under += 1 + f->calls_under;
		caller->child_total += f->total_ns;
	}
	rc = w->v->leave ? w->v->leave(w->v->ctx, l) : 0;
	l->n--;
	return rc;
}

static int push(struct wk_lane *l, const struct rd_event *e, uint64_t pair, uint64_t region,
		uint64_t index)
{
	struct wk_frame *f;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct wk_frame *s = realloc(l->stack, cap * sizeof *s);
		if (!s)
			return -1;
		l->stack = s;
		l->cap = cap;
	}
	f = &l->stack[l->n++];
	/* every field, without a memset: the walk does this for every call */
	*f = (struct wk_frame){.region = region,
			       .pair = pair,
			       .index = index,
			       .start = e->start,
			       .end = e->start + e->duration,
			       .duration = e->duration,
			       .depth = e->depth,
			       .task = e->task,
			       .flags = e->flags};
	if (l->n > 1)
		l->stack[l->n - 2].child_ns += e->duration;
	return 0;
}

/* One call: close what ended or sits as deep, open the call. */
static int step(struct walk *w, size_t s)
{
	const struct rd_event *e = &w->src[s].ev;
	size_t pair = w->src[s].c.pair;
	uint64_t index = w->src[s].index++;
	struct wk_lane *l;

	if (w->only >= 0 && e->thread != (uint64_t)w->only)
		return 0;
	l = &w->lanes[e->thread];
	while (l->n && (l->stack[l->n - 1].depth >= e->depth || l->stack[l->n - 1].end < e->start))
		if (leave(w, l) != 0)
			return -2;
	if (push(l, e, pair, w->p->pairs[pair].region, index) != 0) {
		snprintf(w->p->err, sizeof w->p->err, "out of memory");
		return -1;
	}
	return w->v->enter && w->v->enter(w->v->ctx, l) != 0 ? -2 : 0;
}

/* Opens a cursor on every pair of the process that has calls. */
static int open_sources(struct walk *w, size_t process)
{
	size_t k = 0, slice;

	for (size_t i = 0; i < w->p->npairs; i++)
		k += w->p->pairs[i].process == process && w->p->pairs[i].count > 0;
	w->src = calloc(k + 1, sizeof *w->src);
	w->heap = calloc(k + 1, sizeof *w->heap);
	if (!w->src || !w->heap) {
		snprintf(w->p->err, sizeof w->p->err, "out of memory");
		return -1;
	}
	if (rd_cache(w->p, k) != 0)
		return -1;
	slice = k ? WALK_BUDGET_ROWS / k : WALK_MAX_SLICE;
	slice = slice < WALK_MIN_SLICE	 ? WALK_MIN_SLICE
		: slice > WALK_MAX_SLICE ? WALK_MAX_SLICE
					 : slice;
	for (size_t i = 0; i < w->p->npairs; i++) {
		struct source *s = &w->src[w->nheap];
		int rc;
		if (w->p->pairs[i].process != process || w->p->pairs[i].count == 0)
			continue;
		if (rd_cursor_open(w->p, i, WALK_COLUMNS | (w->v->tasks ? RD_TASK : 0), slice,
				   &s->c) != 0)
			return -1;
		w->nsrc++;
		rc = rd_cursor_next(&s->c, &s->ev);
		if (rc < 0)
			return -1;
		set_key(w, &w->heap[w->nheap], w->nheap);
		w->nheap++;
	}
	for (size_t i = w->nheap; i-- > 0;)
		sift_down(w, i);
	return 0;
}

static int merge(struct walk *w)
{
	while (w->nheap) {
		size_t s = w->heap[0].src;
		int rc = step(w, s);
		if (rc != 0)
			return rc;
		rc = rd_cursor_next(&w->src[s].c, &w->src[s].ev);
		if (rc < 0)
			return -1;
		if (rc == 0)
			w->heap[0] = w->heap[--w->nheap];
		else
			set_key(w, &w->heap[0], s);
		if (w->nheap)
			sift_down(w, 0);
	}
	for (size_t i = 0; i < w->nlanes; i++)
		while (w->lanes[i].n)
			if (leave(w, &w->lanes[i]) != 0)
				return -2;
	return 0;
}

int wk_process(struct rd_profile *p, size_t process, int64_t lane, const struct wk_visitor *v)
{
	struct walk w = {.p = p, .v = v, .only = lane};
	int rc = -1;

	if (process >= p->nprocesses) {
		snprintf(p->err, sizeof p->err, "process %zu is out of range", process);
		return -1;
	}
	w.nlanes = p->processes[process].nlanes;
	w.lanes = calloc(w.nlanes + 1, sizeof *w.lanes);
	if (!w.lanes)
		snprintf(p->err, sizeof p->err, "out of memory");
	for (size_t i = 0; w.lanes && i < w.nlanes; i++) {
		w.lanes[i].process = process;
		w.lanes[i].lane = i;
	}
	if (w.lanes && open_sources(&w, process) == 0)
		rc = merge(&w);
	for (size_t i = 0; i < w.nsrc; i++)
		rd_cursor_close(&w.src[i].c);
	for (size_t i = 0; w.lanes && i < w.nlanes; i++)
		free(w.lanes[i].stack);
	free(w.lanes);
	free(w.src);
	free(w.heap);
	return rc;
}
