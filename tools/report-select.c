/* SPDX-License-Identifier: MIT */
/* scope-report's selection: which processes, lanes, regions and calls a view shows. */
#define _GNU_SOURCE
#include "format.h"
#include "map.h"
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Selection ---------------------------------------------------------- */

static int matches(const regex_t *re, const char *full, const char *shown)
{
	return regexec(re, full, 0, NULL, 0) == 0 ||
	       (shown != full && regexec(re, shown, 0, NULL, 0) == 0);
}

int want_region(const struct options *o, const char *full, const char *shown)
{
	int in = o->ninclude == 0;
	for (size_t i = 0; !in && i < o->ninclude; i++)
		in = matches(&o->include[i], full, shown);
	for (size_t i = 0; in && i < o->nexclude; i++)
		in = !matches(&o->exclude[i], full, shown);
	return in;
}

unsigned char *region_mask(const struct options *o, size_t k, const struct rd_profile *p)
{
	unsigned char *m = malloc(p->nregions + 1);
	for (size_t i = 0; m && i < p->nregions; i++)
		m[i] = (unsigned char)want_region(o, p->regions[i].name, region_name(o, k, i));
	return m;
}

int region_matches(const struct options *o, const regex_t *re, const struct rd_profile *p, size_t k,
		   uint64_t r)
{
	return matches(re, p->regions[r].name, region_name(o, k, r));
}

int want_process(const struct options *o, const struct rd_profile *p, size_t i)
{
	return (o->process < 0 || (uint64_t)o->process == i) &&
	       (o->rank < 0 || p->processes[i].rank == o->rank);
}

uint64_t selected_wall(const struct options *o, const struct rd_profile *p)
{
	uint64_t wall = 0;
	for (size_t i = 0; i < p->nprocesses; i++)
		if (want_process(o, p, i))
			wall += p->processes[i].end - p->processes[i].start;
	return wall;
}

/* A lane's span; one that has no end (or a damaged one) runs to its process's end. */
static uint64_t lane_span(const struct rd_process *pr, const struct rd_lane *l)
{
	uint64_t wall = pr->end - pr->start;
	if (l->end > l->start && l->end <= wall)
		return l->end - l->start;
	return l->start < wall ? wall - l->start : 0;
}

uint64_t selected_lanes_wall(const struct options *o, const struct rd_profile *p)
{
	uint64_t wall = 0;
	for (size_t i = 0; i < p->nprocesses; i++) {
		const struct rd_process *pr = &p->processes[i];
		if (!want_process(o, p, i))
			continue;
		for (size_t k = 0; k < pr->nlanes; k++)
			if (o->thread < 0 || (uint64_t)o->thread == k)
				wall += lane_span(pr, &pr->lanes[k]);
	}
	return wall;
}

int check_selection(const struct options *o, const struct rd_profile *p, const char *path)
{
	size_t chosen = 0, with_lane = 0;

	if (o->process >= 0 && (uint64_t)o->process >= p->nprocesses) {
		fprintf(stderr, "scope-report: %s: no process %lld (it has %zu)\n", path,
			(long long)o->process, p->nprocesses);
		return -1;
	}
	for (size_t i = 0; i < p->nprocesses; i++) {
		if (!want_process(o, p, i))
			continue;
		chosen++;
		with_lane += o->thread >= 0 && (uint64_t)o->thread < p->processes[i].nlanes;
	}
	if (o->rank >= 0 && chosen == 0) {
		fprintf(stderr, "scope-report: %s: no process of rank %lld\n", path,
			(long long)o->rank);
		return -1;
	}
	if (o->thread >= 0 && with_lane == 0) {
		fprintf(stderr, "scope-report: %s: no thread lane %lld in the processes chosen\n",
			path, (long long)o->thread);
		return -1;
	}
	return 0;
}

/* ---- The job's timeline ------------------------------------------------- */

/*
 * Every process's start is read from its own host's clock, and hosts'
 * clocks differ. Ranks leave MPI_Init together (it synchronises them), so
 * each host is shifted to make the latest MPI_Init end among its ranks
 * meet the latest one on rank 0's host. Example: ranks 0 and 1 on host a
 * end MPI_Init at 100 and 104, ranks 2 and 3 on host b at 3107 and 3105:
 * b is shifted by 104 - 3107 = -3003. With one host, no MPI_Init, or
 * --no-align, nothing moves. Zero is then the earliest (shifted) start.
 */

#define MAX_SHIFT (INT64_C(1) << 60) /* beyond it a clock is not trusted */

static int by_host(const void *a, const void *b, void *ctx)
{
	const struct rd_profile *p = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(p->processes[i].host, p->processes[j].host);
	return c ? c : (i > j) - (i < j);
}

/* Numbers the hosts: host[i] of process i, in 0..n-1; returns n, or -1. */
static long number_hosts(const struct rd_profile *p, size_t *host)
{
	size_t *order = malloc((p->nprocesses + 1) * sizeof *order);
	long n = 0;

	if (!order)
		return -1;
	for (size_t i = 0; i < p->nprocesses; i++)
		order[i] = i;
	qsort_r(order, p->nprocesses, sizeof *order, by_host, (void *)p);
	for (size_t k = 0; k < p->nprocesses; k++) {
		if (k && strcmp(p->processes[order[k]].host, p->processes[order[k - 1]].host))
			n++;
		host[order[k]] = (size_t)n;
	}
	free(order);
	return p->nprocesses ? n + 1 : 0;
}

static int is_mpi_init(const struct rd_region *r)
{
	return strcmp(r->kind, "mpi") == 0 &&
	       (strcmp(r->name, "MPI_Init") == 0 || strcmp(r->name, "MPI_Init_thread") == 0);
}

/* The latest end of a pair's calls, unix ns on its host's clock; 0 if unreadable. */
static uint64_t latest_end(struct rd_profile *p, size_t pair)
{
	const struct rd_process *pr = &p->processes[p->pairs[pair].process];
	struct rd_cursor c;
	struct rd_event e;
	uint64_t latest = 0;
	int rc;

	if (rd_cursor_open(p, pair, RD_START | RD_DURATION, 0, &c) != 0)
		return 0;
	while ((rc = rd_cursor_next(&c, &e)) == 1)
		if (e.start + e.duration > latest)
			latest = e.start + e.duration;
	rd_cursor_close(&c);
	return rc == 0 && latest <= UINT64_MAX - pr->start ? pr->start + latest : 0;
}

/* Each process's shift, ns, from its host's; 0 for all when nothing can be aligned. */
static int host_shifts(struct rd_profile *p, int64_t *shift)
{
	size_t *host = calloc(p->nprocesses + 1, sizeof *host), ref = SIZE_MAX;
	uint64_t *init_end = NULL;
	long nhosts = host ? number_hosts(p, host) : -1;
	int64_t best_rank = INT64_MAX;

	if (nhosts < 0 || !(init_end = calloc((size_t)nhosts + 1, sizeof *init_end))) {
		free(host);
		return -1;
	}
	for (size_t k = 0; nhosts > 1 && p->has_events && k < p->npairs; k++) {
		size_t i = p->pairs[k].process;
		uint64_t end;
		if (!is_mpi_init(&p->regions[p->pairs[k].region]))
			continue;
		end = latest_end(p, k);
		if (end > init_end[host[i]])
			init_end[host[i]] = end;
	}
	/* The reference is rank 0's host, or the lowest rank's when 0 is missing. */
	for (size_t i = 0; i < p->nprocesses; i++)
		if (p->processes[i].rank >= 0 && p->processes[i].rank < best_rank &&
		    init_end[host[i]]) {
			best_rank = p->processes[i].rank;
			ref = host[i];
		}
	for (size_t i = 0; i < p->nprocesses; i++) {
		uint64_t mine = init_end[host[i]], theirs = ref == SIZE_MAX ? 0 : init_end[ref];
		uint64_t gap = mine > theirs ? mine - theirs : theirs - mine;
		if (mine && theirs && gap <= (uint64_t)MAX_SHIFT)
			shift[i] = mine > theirs ? -(int64_t)gap : (int64_t)gap;
	}
	free(init_end);
	free(host);
	return 0;
}

/* at0 of every process: its start on the job's timeline. */
static int timeline(struct call_filter *f, struct rd_profile *p)
{
	int64_t *shift = calloc(p->nprocesses + 1, sizeof *shift), zero = INT64_MAX;
	int aligned = f->o->on_timeline;

	f->at0 = calloc(p->nprocesses + 1, sizeof *f->at0);
	if (!shift || !f->at0 || (aligned && !f->o->no_align && host_shifts(p, shift) != 0)) {
		free(shift);
		return -1;
	}
	for (size_t i = 0; i < p->nprocesses; i++) {
		f->at0[i] = p->processes[i].start - p->origin;
		if (f->at0[i] > (uint64_t)MAX_SHIFT)
			aligned = 0; /* a clock beyond belief: nothing moves */
		else if ((int64_t)f->at0[i] + shift[i] < zero)
			zero = (int64_t)f->at0[i] + shift[i];
	}
	for (size_t i = 0; aligned && i < p->nprocesses; i++)
		f->at0[i] = (uint64_t)((int64_t)f->at0[i] + shift[i] - zero);
	free(shift);
	return 0;
}

/* ---- Call filter -------------------------------------------------------- */

int filter_init(struct call_filter *f, const struct options *o, size_t k,
		const struct rd_profile *p)
{
	f->o = o;
	f->p = p;
	f->k = k;
	f->at0 = NULL;
	f->wanted = region_mask(o, k, p);
	/* The cursors that find MPI_Init write only p->err. */
	if (f->wanted && timeline(f, (struct rd_profile *)p) == 0)
		return 0;
	filter_free(f);
	return -1;
}

void filter_free(struct call_filter *f)
{
	free(f->wanted);
	free(f->at0);
	f->wanted = NULL;
	f->at0 = NULL;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* filter_time, inline in filter_call: the walks ask it of every call. */
static inline int in_window(const struct call_filter *f, size_t process, uint64_t start,
			    uint64_t duration)
{
	const struct options *o = f->o;
	uint64_t at, end;

	if (duration < o->min_duration)
		return 0;
	at = filter_at(f, process, start);
	end = add_sat(at, duration);
	return end >= o->since && (!o->until || at < o->until);
}

int filter_time(const struct call_filter *f, size_t process, uint64_t start, uint64_t duration)
{
	return in_window(f, process, start, duration);
}

int filter_call(const struct call_filter *f, size_t process, const struct wk_frame *fr)
{
	return f->wanted[fr->region] && in_window(f, process, fr->start, fr->duration);
}

/* ---- The recording's cost ----------------------------------------------- */

double call_cost(const struct options *o, size_t k)
{
	return o->compensate ? o->shown[k].cost : 0;
}

/* Whether pair q belongs to process i (-1: to a process chosen). */
static int of_process(const struct options *o, const struct rd_profile *p, int64_t i,
		      const struct rd_pair *q)
{
	return i < 0 ? want_process(o, p, q->process) : q->process == (uint64_t)i;
}

double recording_ns(const struct options *o, size_t k, const struct rd_profile *p, int64_t i)
{
	double ns = 0;

	for (size_t j = 0; j < p->npairs; j++)
		if (of_process(o, p, i, &p->pairs[j]))
			ns += (double)rd_pair_calls(&p->pairs[j]) * o->shown[k].cost;
	return ns;
}

void print_recording(const struct options *o, size_t k, const struct rd_profile *p, int64_t i,
		     uint64_t wall, FILE *out)
{
	double ns = recording_ns(o, k, p, i);
	uint64_t calls = 0;
	char b[32];

	for (size_t j = 0; j < p->npairs; j++)
		if (of_process(o, p, i, &p->pairs[j]))
			calls += rd_pair_calls(&p->pairs[j]);
	if (!(ns > 0) || !calls) {
		fputs(", recording cost not measured\n", out);
		return;
	}
	fprintf(out, ", recording %s (", fmt_ns(b, sizeof b, ns));
	if (wall)
		fprintf(out, "%.1f%% of wall, ", 100.0 * ns / (double)wall);
	fprintf(out, "%.1f ns a call)\n", ns / (double)calls);
	if (o->compensate)
		fputs("times less the recording's cost (--compensate)\n", out);
}

void json_recording(const struct options *o, size_t k, const struct rd_profile *p, int64_t i,
		    uint64_t wall, FILE *out)
{
	double ns = recording_ns(o, k, p, i);

	fputs(",\"recording_ns\":", out);
	json_double(out, round(ns));
	fputs(",\"recording_pct\":", out);
	json_double(out, wall ? 100.0 * ns / (double)wall : 0);
	fprintf(out, ",\"compensated\":%s", o->compensate ? "true" : "false");
}

/* ---- Recursion ---------------------------------------------------------- */

/* Pairs are far fewer than 2^40, lanes than 2^24. */
static uint64_t lane_pair(const struct wk_lane *l)
{
	return (uint64_t)l->lane << 40 | l->stack[l->n - 1].pair;
}

int open_enter(struct u64map *open, const struct wk_lane *l)
{
	int added;
	uint32_t *n = map_slot(open, lane_pair(l), 0, &added);

	if (!n)
		return -1;
	++*n;
	return 0;
}

int open_leave(struct u64map *open, const struct wk_lane *l)
{
	int added;
	uint32_t *n = map_slot(open, lane_pair(l), 0, &added); /* there since its enter */

	return --*n == 0;
}

/* ---- Calls summed per pair ---------------------------------------------- */

int from_calls(const struct options *o)
{
	return o->thread >= 0 || o->compensate || o->windowed;
}

struct summing {
	struct call_filter f;
	struct pair_sum *sum;
	struct u64map open; /* open_enter's */
	int nomem;
};

static int sum_enter(void *ctx, struct wk_lane *l)
{
	struct summing *c = ctx;

	if (open_enter(&c->open, l) != 0) {
		c->nomem = 1;
		return -1;
	}
	return 0;
}

static int sum_leave(void *ctx, struct wk_lane *l)
{
	struct summing *c = ctx;
	const struct wk_frame *fr = &l->stack[l->n - 1];
	struct pair_sum *s = &c->sum[fr->pair];
	long double t = (long double)fr->total_ns;
	int outermost = open_leave(&c->open, l);

	if (!filter_call(&c->f, l->process, fr))
		return 0;
	if (outermost)
		s->total += fr->total_ns;
	s->total_all += fr->total_ns;
	if (!s->calls || fr->total_ns < s->min)
		s->min = fr->total_ns;
	if (fr->total_ns > s->max)
		s->max = fr->total_ns;
	s->calls++;
	s->self += fr->self_ns;
	s->sum += t;
	s->sumsq += t * t;
	return 0;
}

struct pair_sum *sum_calls(const struct options *o, size_t k, struct rd_profile *p)
{
	struct summing c = {.sum = calloc(p->npairs + 1, sizeof *c.sum)};
	struct wk_visitor v = {.ctx = &c, .enter = sum_enter, .leave = sum_leave};
	int rc = 0;

	if (!c.sum || filter_init(&c.f, o, k, p) != 0) {
		free(c.sum);
		snprintf(p->err, sizeof p->err, "out of memory");
		return NULL;
	}
	for (size_t i = 0; rc == 0 && i < p->nprocesses; i++) {
		if (!want_process(o, p, i) ||
		    (o->thread >= 0 && (uint64_t)o->thread >= p->processes[i].nlanes))
			continue;
		v.overhead_ns = call_cost(o, k);
		rc = wk_process(p, i, o->thread, &v);
	}
	filter_free(&c.f);
	map_free(&c.open);
	if (rc != 0) {
		if (c.nomem)
			snprintf(p->err, sizeof p->err, "out of memory");
		free(c.sum);
		return NULL;
	}
	return c.sum;
}
