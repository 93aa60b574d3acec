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

static int by_region_name(const void *a, const void *b, void *ctx)
{
	const struct rd_profile *p = ctx;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	int c = strcmp(p->regions[x].name, p->regions[y].name);
	return c ? c : (x > y) - (x < y);
}

/* The rows of /regions in byte order of their names; NULL when out of memory. */
static uint64_t *regions_by_name(const struct rd_profile *p)
{
	uint64_t *r = malloc((p->nregions + 1) * sizeof *r);

	for (size_t i = 0; r && i < p->nregions; i++)
		r[i] = i;
	if (r)
		qsort_r(r, p->nregions, sizeof *r, by_region_name, (void *)p);
	return r;
}

int64_t region_named(const struct options *o, size_t k, const struct rd_profile *p,
		     const char *full)
{
	const uint64_t *r = o->shown[k].by_name;
	size_t lo = 0, hi = p->nregions;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(p->regions[r[mid]].name, full) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nregions && strcmp(p->regions[r[lo]].name, full) == 0 ? (int64_t)r[lo] : -1;
}

/* A name in function_names' numbering: its short form, then the name shown. */
struct fn_entry {
	char *shown;
	const char *full;
	int region; /* a region's: it keeps the number the region has */
};

/* By short form, a region before a function that is none, then by full name. */
static int by_short(const void *a, const void *b)
{
	const struct fn_entry *x = a, *y = b;
	int c = strcmp(x->shown, y->shown);

	if (c)
		return c;
	if (x->region != y->region)
		return y->region - x->region;
	return strcmp(x->full, y->full);
}

static int by_full(const void *a, const void *b)
{
	return strcmp(((const struct fn_entry *)a)->full, ((const struct fn_entry *)b)->full);
}

static int by_cstring(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Each short form's names, regions first: a region's keeps its number (its
 * place among the regions), the others take the next ones. Example: regions
 * geo::scale and geo::scale#2, then a sampled geo::scale<float>(float):
 * geo::scale#3. Returns 0, -1 when out of memory.
 */
static int number_functions(struct fn_entry *e, size_t n)
{
	qsort(e, n, sizeof *e, by_short);
	for (size_t g = 0, j; g < n; g = j) {
		size_t taken = 0;
		for (j = g; j < n && strcmp(e[j].shown, e[g].shown) == 0; j++) {
			char *numbered;
			if (e[j].region || !taken++)
				continue;
			if (asprintf(&numbered, "%s#%zu", e[j].shown, taken) < 0)
				return -1;
			free(e[j].shown);
			e[j].shown = numbered;
		}
	}
	qsort(e, n, sizeof *e, by_full);
	return 0;
}

char **function_names(const struct options *o, size_t k, const struct rd_profile *p,
		      const char *const *full, size_t n)
{
	char **out = calloc(n + 1, sizeof *out);
	const char **other = malloc((n + 1) * sizeof *other); /* not regions', each once */
	struct fn_entry *e = NULL;
	size_t m = 0, ne = 0;
	int ok = out && other;

	for (size_t i = 0; ok && i < n; i++)
		if (region_named(o, k, p, full[i]) < 0)
			other[m++] = full[i];
	if (ok && m) {
		size_t w = 0;
		qsort(other, m, sizeof *other, by_cstring);
		for (size_t i = 0; i < m; i++)
			if (!w || strcmp(other[w - 1], other[i]) != 0)
				other[w++] = other[i];
		m = w;
	}
	if (ok && !o->full_names && m) {
		ok = (e = calloc(p->nregions + m + 1, sizeof *e)) != NULL;
		for (size_t r = 0; ok && r < p->nregions; r++, ne++)
			ok = (e[ne] = (struct fn_entry){name_short(p->regions[r].name),
							p->regions[r].name, 1})
				     .shown != NULL;
		for (size_t i = 0; ok && i < m; i++, ne++)
			ok = (e[ne] = (struct fn_entry){name_short(other[i]), other[i], 0}).shown !=
			     NULL;
		ok = ok && number_functions(e, ne) == 0;
	}
	for (size_t i = 0; ok && i < n; i++) {
		int64_t r = region_named(o, k, p, full[i]);
		const struct fn_entry key = {NULL, full[i], 0}, *found;
		if (r >= 0)
			out[i] = strdup(region_name(o, k, (uint64_t)r));
		else if (!e)
			out[i] = strdup(full[i]);
		else if ((found = bsearch(&key, e, ne, sizeof *e, by_full)))
			out[i] = strdup(found->shown);
		ok = out[i] != NULL;
	}
	for (size_t i = 0; e && i < ne; i++)
		free(e[i].shown);
	free(e);
	free(other);
	if (!ok) {
		names_free(out, n);
		return NULL;
	}
	return out;
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
	s->by_name = regions_by_name(p[k]);
	if (!s->names || !s->where || !s->by_name) {
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
		free(o->shown[k].by_name);
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
