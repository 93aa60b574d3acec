/* SPDX-License-Identifier: MIT */
/* Opening the profiles a view reads, with what is shown of them: names, places, recording costs. */
#define _GNU_SOURCE
#include "h5guard.h"
#include "names.h"
#include "profile.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "file:line" of each region of p, "" when not known; NULL when out of memory. */
static char **locations(const struct rd_profile *p)
{
	char **where = calloc(p->nregions + 1, sizeof *where);

	for (size_t r = 0; where && r < p->nregions; r++) {
		const struct rd_region *g = &p->regions[r];
		int rc = *g->file || g->line ? asprintf(&where[r], "%s:%llu", g->file,
							(unsigned long long)g->line)
					     : ((where[r] = strdup("")) ? 0 : -1);
		if (rc < 0) {
			where[r] = NULL;
			names_free(where, r);
			return NULL;
		}
	}
	return where;
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The names of the regions of p[k] as shown. --diff matches regions by full
 * name: their short names are made from the full names of both profiles
 * together, each once, so that a region is shown by the same name in both.
 */
static char **shown_names(const struct options *o, struct rd_profile **p, size_t k)
{
	size_t n = 0, m = 0;
	const char **all;
	char **shown, **names;

	for (size_t i = 0; i < o->nfiles; i++)
		n += p[i]->nregions;
	all = malloc((n + 1) * sizeof *all);
	if (!all)
		return NULL;
	for (size_t i = 0, j = 0; i < o->nfiles; i++)
		for (size_t r = 0; r < p[i]->nregions; r++)
			all[j++] = p[i]->regions[r].name;
	if (o->nfiles == 1) {
		names = names_shown(all, n, !o->full_names);
		free(all);
		return names;
	}
	qsort(all, n, sizeof *all, by_string);
	for (size_t i = 0; i < n; i++)
		if (!m || strcmp(all[m - 1], all[i]) != 0)
			all[m++] = all[i];
	shown = names_shown(all, m, !o->full_names);
	names = shown ? calloc(p[k]->nregions + 1, sizeof *names) : NULL;
	for (size_t r = 0; names && r < p[k]->nregions; r++) {
		const char *key = p[k]->regions[r].name;
		const char **at = bsearch(&key, all, m, sizeof *all, by_string);
		if (!(names[r] = strdup(shown[at - all]))) {
			names_free(names, r);
			names = NULL;
		}
	}
	names_free(shown, m);
	free(all);
	return names;
}

/* Names the program or its OpenMP runtime gave ("load mesh", "omp
 * parallel") are no C++ signatures: shown whole. Returns 0, -1 when out of
 * memory. */
static int keep_given_names(const struct rd_profile *p, char **names)
{
	for (size_t r = 0; names && r < p->nregions; r++) {
		const char *kind = p->regions[r].kind;
		char *whole;
		if (strcmp(kind, "user") != 0 && strcmp(kind, "openmp") != 0)
			continue;
		if (!(whole = strdup(p->regions[r].name)))
			return -1;
		free(names[r]);
		names[r] = whole;
	}
	return 0;
}

/* Fills o->shown[k] for p[k]. Returns 0, or 1 with the reason printed. */
static int show(struct options *o, struct rd_profile **p, size_t k, const char *prog)
{
	struct shown *s = &o->shown[k];

	s->names = shown_names(o, p, k);
	if (keep_given_names(p[k], s->names) != 0) {
		names_free(s->names, p[k]->nregions);
		s->names = NULL;
	}
	s->where = locations(p[k]);
	s->cost = p[k]->meta.overhead_ns_per_call;
	if (!s->names || !s->where) {
		fprintf(stderr, "%s: %s: out of memory\n", prog, o->files[k]);
		return 1;
	}
	return 0;
}

void report_close(struct options *o, struct rd_profile **p)
{
	for (size_t k = 0; k < o->nfiles; k++) {
		if (!p[k])
			continue;
		names_free(o->shown[k].names, p[k]->nregions);
		names_free(o->shown[k].where, p[k]->nregions);
	}
	for (size_t k = 0; k < o->nfiles; k++) {
		rd_close(p[k]);
		p[k] = NULL;
	}
}

int report_open(struct options *o, struct rd_profile **p, const char *prog)
{
	char err[RD_ERR_MAX + 64];

	for (size_t i = 0; i < o->nfiles; i++) {
		h5guard_reading(o->files[i]);
		p[i] = rd_open(o->files[i], err, sizeof err);
		if (!p[i]) {
			fprintf(stderr, "%s: %s: %s\n", prog, o->files[i], err);
			return 1;
		}
		if (check_selection(o, p[i], o->files[i]) != 0)
			return 2;
	}
	for (size_t k = 0; k < o->nfiles; k++)
		if (show(o, p, k, prog) != 0)
			return 1;
	return 0;
}
