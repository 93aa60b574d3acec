/* SPDX-License-Identifier: MIT */
/* Sums the per-region figures of a schema-3 profile and prints them as a table. */
#define _GNU_SOURCE
#include "profile.h"

#include "format.h"
#include "names.h"
#include "reader.h"
#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_self(const void *x, const void *y)
{
	const struct region_stats *a = x, *b = y;
	return a->self_ns > b->self_ns ? -1 : a->self_ns < b->self_ns;
}

/* The names to show, short and kept apart; NULL when out of memory. */
static char **short_names(const struct rd_profile *p)
{
	const char **full = malloc((p->nregions + 1) * sizeof *full);
	char **names;

	if (!full)
		return NULL;
	for (size_t i = 0; i < p->nregions; i++)
		full[i] = p->regions[i].name;
	names = names_shown(full, p->nregions, 1);
	free(full);
	return names;
}

/* Sums the pairs of every process into one row per region. */
static int fold(const struct rd_profile *p, struct summary *s)
{
	char **names = short_names(p);

	s->regions = calloc(p->nregions + 1, sizeof *s->regions);
	if (!s->regions || !names) {
		names_free(names, p->nregions);
		return -1;
	}
	s->n = p->nregions;
	for (size_t i = 0; i < p->nregions; i++) {
		s->regions[i].min_ns = UINT64_MAX;
		s->regions[i].name = names[i];
	}
	free(names); /* the strings are the rows' now */
	for (size_t i = 0; i < p->npairs; i++) {
		const struct rd_pair *r = &p->pairs[i];
		struct region_stats *g = &s->regions[r->region];
		g->calls += rd_pair_calls(r);
		g->total_ns += r->total_ns;
		g->total_all_ns += r->total_all_ns;
		g->self_ns += r->self_ns;
		if (r->min_ns < g->min_ns)
			g->min_ns = r->min_ns;
		if (r->max_ns > g->max_ns)
			g->max_ns = r->max_ns;
		s->events += r->count;
		s->aggregated += r->aggregated;
	}
	qsort(s->regions, s->n, sizeof *s->regions, by_self);
	return 0;
}

/* The calls times the cost of one call: a call that the filters kept out
 * of /events went through the hooks too (the filter's test takes their
 * slow path), at about the cost measured for a stored one. */
static double recording(const struct rd_profile *p)
{
	double calls = 0;

	for (size_t i = 0; i < p->npairs; i++)
		calls += (double)rd_pair_calls(&p->pairs[i]);
	return calls * p->meta.overhead_ns_per_call;
}

int summary_read(const char *path, struct summary *s, char *err, size_t errcap)
{
	struct rd_profile *p = rd_open_brief(path, err, errcap);
	int rc;

	memset(s, 0, sizeof *s);
	if (!p)
		return -1;
	rc = fold(p, s);
	if (rc != 0) {
		snprintf(err, errcap, "out of memory");
		summary_free(s);
	} else {
		s->recording_ns = recording(p);
		s->wall_seconds = p->meta.wall_seconds;
		s->cpu_seconds = p->meta.cpu_seconds;
		s->peak_rss_bytes = p->meta.peak_rss_bytes;
		s->lost = p->meta.lost_records;
	}
	rd_close(p);
	return rc;
}

void summary_free(struct summary *s)
{
	for (size_t i = 0; s->regions && i < s->n; i++)
		free(s->regions[i].name);
	free(s->regions);
	memset(s, 0, sizeof *s);
}

void summary_print(FILE *out, const struct summary *s, size_t top)
{
	char b[6][32];
	double all_self = 0;
	size_t shown = s->n < top ? s->n : top;

	/* Shares of the time recorded on all threads together, so they add up
	 * to 100% however many threads ran. */
	for (size_t i = 0; i < s->n; i++)
		all_self += (double)s->regions[i].self_ns;

	/* the name last: it is never cut, however long */
	fprintf(out, "%10s %11s %11s %11s %11s %11s %6s  %s\n", "calls", "total", "self", "mean",
		"min", "max", "share", "region (by self time)");
	for (size_t i = 0; i < shown; i++) {
		const struct region_stats *g = &s->regions[i];
		fprintf(out, "%10llu %11s %11s %11s %11s %11s %5.1f%%  %s\n",
			(unsigned long long)g->calls, fmt_ns(b[0], 32, (double)g->total_ns),
			fmt_ns(b[1], 32, (double)g->self_ns),
			fmt_ns(b[2], 32, g->calls ? (double)g->total_all_ns / (double)g->calls : 0),
			fmt_ns(b[3], 32, g->calls ? (double)g->min_ns : 0),
			fmt_ns(b[4], 32, (double)g->max_ns),
			all_self > 0 ? 100.0 * (double)g->self_ns / all_self : 0.0, g->name);
	}
	if (s->n > shown)
		fprintf(out, "... %zu more regions\n", s->n - shown);
}
