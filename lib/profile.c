/* SPDX-License-Identifier: MIT */
/* Sums the per-region figures of a schema-3 profile and prints them as a table. */
#define _GNU_SOURCE
#include "profile.h"

#include "format.h"
#include "names.h"
#include "reader.h"
#include "schema.h"

#include <hdf5.h>
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

/* Each process's calls times its cost of one call: a call that the filters
 * kept out of /events went through the hooks too (the filter's test takes
 * their slow path), at about the cost measured for a stored one. */
static int recording(const char *path, const struct rd_profile *p, struct summary *s, char *err,
		     size_t errcap)
{
	double *cost = calloc(p->nprocesses + 1, sizeof *cost);

	if (!cost) {
		snprintf(err, errcap, "out of memory");
		return -1;
	}
	if (profile_overhead(path, p->nprocesses, cost, err, errcap) != 0) {
		free(cost);
		return -1;
	}
	for (size_t i = 0; i < p->npairs; i++)
		s->recording_ns += (double)rd_pair_calls(&p->pairs[i]) * cost[p->pairs[i].process];
	free(cost);
	return 0;
}

int summary_read(const char *path, struct summary *s, char *err, size_t errcap)
{
	struct rd_profile *p = rd_open(path, err, errcap);
	int rc;

	memset(s, 0, sizeof *s);
	if (!p)
		return -1;
	rc = fold(p, s);
	if (rc != 0)
		snprintf(err, errcap, "out of memory");
	else
		rc = recording(path, p, s, err, errcap);
	if (rc != 0) {
		summary_free(s);
	} else {
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

/* Reads the column name of /processes as n doubles; 1 when the file has no such column. */
static int column(hid_t f, const char *name, size_t n, double *to, char *err, size_t errcap)
{
	hid_t d, space;
	hssize_t len;
	int rc = -1;

	if (H5Lexists(f, "/" SC_PROCESSES, H5P_DEFAULT) <= 0 ||
	    H5Lexists(f, name, H5P_DEFAULT) <= 0)
		return 1;
	d = H5Dopen2(f, name, H5P_DEFAULT);
	space = d < 0 ? -1 : H5Dget_space(d);
	len = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
	if (len != (hssize_t)n || H5Sget_simple_extent_ndims(space) != 1)
		snprintf(err, errcap, "%s has %lld rows, /processes has %zu", name, (long long)len,
			 n);
	else if (n && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, to) < 0)
		snprintf(err, errcap, "%s cannot be read as numbers", name);
	else
		rc = 0;
	if (space >= 0)
		H5Sclose(space);
	if (d >= 0)
		H5Dclose(d);
	return rc;
}

/* /metadata's attribute name as a double; 0 when absent. */
static int attribute(hid_t f, const char *name, double *v, char *err, size_t errcap)
{
	hid_t a;
	int rc = 0;

	*v = 0;
	if (H5Aexists_by_name(f, "/" SC_METADATA, name, H5P_DEFAULT) <= 0)
		return 0;
	a = H5Aopen_by_name(f, "/" SC_METADATA, name, H5P_DEFAULT, H5P_DEFAULT);
	if (a < 0 || H5Aread(a, H5T_NATIVE_DOUBLE, v) < 0) {
		snprintf(err, errcap, "/%s/%s cannot be read as a number", SC_METADATA, name);
		rc = -1;
	}
	if (a >= 0)
		H5Aclose(a);
	return rc;
}

int profile_overhead(const char *path, size_t n, double *per_process, char *err, size_t errcap)
{
	const char *name = SC_META(OVERHEAD_NS_PER_CALL);
	char col[128];
	hid_t f;
	double all;
	int rc;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) {
		snprintf(err, errcap, "cannot be opened as HDF5");
		return -1;
	}
	snprintf(col, sizeof col, "/%s/%s", SC_PROCESSES, name);
	rc = column(f, col, n, per_process, err, errcap);
	if (rc == 1) {
		rc = attribute(f, name, &all, err, errcap);
		for (size_t i = 0; rc == 0 && i < n; i++)
			per_process[i] = all;
	}
	/* a cost that is no number, or below 0, is none */
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (!(per_process[i] > 0) || per_process[i] > 1e9)
			per_process[i] = 0;
	H5Fclose(f);
	return rc;
}
