/* SPDX-License-Identifier: MIT */
/* scope-report --counters: each region's counter totals (all calls, and self), and instructions per
 * cycle. */
#define _GNU_SOURCE
#include "report.h"
#include <stdio.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAMES 16 /* distinct counters over the processes of a profile */

/* The counters of a profile: each process lists its own (rd_process.counters),
 * and a counter is summed over the processes that read it. */
struct counter_set {
	char *names[MAX_NAMES];
	size_t n;
	int *slot; /* [process * 4 + k]: process's counter k in names, or -1 */
};

static int find_or_add(struct counter_set *cs, const char *name, size_t len)
{
	for (size_t i = 0; i < cs->n; i++)
		if (strlen(cs->names[i]) == len && strncmp(cs->names[i], name, len) == 0)
			return (int)i;
	if (cs->n == MAX_NAMES || !(cs->names[cs->n] = strndup(name, len)))
		return -1;
	return (int)cs->n++;
}

static int counter_set(const struct rd_profile *p, struct counter_set *cs)
{
	memset(cs, 0, sizeof *cs);
	if (!(cs->slot = malloc((p->nprocesses * 4 + 1) * sizeof *cs->slot)))
		return -1;
	for (size_t i = 0; i < p->nprocesses; i++) {
		const char *s = p->processes[i].counters;
		for (int k = 0; k < 4; k++) {
			const char *end = s ? strchr(s, ',') : NULL;
			size_t len = s ? (end ? (size_t)(end - s) : strlen(s)) : 0;
			cs->slot[i * 4 + k] = len ? find_or_add(cs, s, len) : -1;
			s = end ? end + 1 : NULL;
		}
	}
	return 0;
}

static void counter_set_free(struct counter_set *cs)
{
	for (size_t i = 0; i < cs->n; i++)
		free(cs->names[i]);
	free(cs->slot);
}

static int named(const struct counter_set *cs, const char *name)
{
	for (size_t i = 0; i < cs->n; i++)
		if (strcmp(cs->names[i], name) == 0)
			return (int)i;
	return -1;
}

/* Per region: calls, and each counter's total and self, summed over the
 * processes shown. */
struct region_sums {
	uint64_t calls;
	uint64_t total[MAX_NAMES], self[MAX_NAMES];
};

static void sum_pairs(const struct options *o, const struct rd_profile *p,
		      const struct counter_set *cs, struct region_sums *sums)
{
	for (size_t k = 0; k < p->npairs; k++) {
		const struct rd_pair *pr = &p->pairs[k];
		struct region_sums *s = &sums[pr->region];
		if (!want_process(o, p, pr->process))
			continue;
		s->calls += pr->count;
		for (int c = 0; c < 4; c++) {
			int at = cs->slot[pr->process * 4 + c];
			if (at < 0)
				continue;
			s->total[at] += pr->counter_total[c];
			s->self[at] += pr->counter_self[c];
		}
	}
}

/* The table's columns: calls, total and self of each counter, IPC, the location with
 * --lines, region, file and line. */
static struct column *columns(const struct options *o, const struct counter_set *cs, int ipc,
			      size_t *n)
{
	struct column *cols = calloc(2 * cs->n + 6, sizeof *cols);
	size_t k = 0;

	if (!cols)
		return NULL;
	cols[k++] = (struct column){"calls", "calls", CELL_U64, 10, 0, 0, 0};
	for (size_t i = 0; i < cs->n; i++) {
		cols[k++] = (struct column){cs->names[i], cs->names[i], CELL_U64, 18, 0, 0, 0};
		cols[k++] = (struct column){"self", NULL, CELL_U64, 14, 0, 0, 0};
	}
	if (ipc)
		cols[k++] = (struct column){"IPC", "ipc", CELL_RATIO, 7, 0, 0, 0};
	cols[k++] = (struct column){"location", "location", CELL_STR, 8, 0, 1, !o->lines};
	cols[k++] = (struct column){"region", "region", CELL_STR, 0, 0, 0, 0};
	cols[k++] = (struct column){"file", "file", CELL_STR, 0, 1, 0, 0};
	cols[k++] = (struct column){"line", "line", CELL_U64, 0, 1, 0, 0};
	*n = k;
	return cols;
}

/* CSV and JSON keys of the self columns: "<name>_self". */
static int self_keys(struct column *cols, const struct counter_set *cs, char **keys)
{
	for (size_t i = 0; i < cs->n; i++) {
		size_t len = strlen(cs->names[i]) + 6;
		if (!(keys[i] = malloc(len)))
			return -1;
		snprintf(keys[i], len, "%s_self", cs->names[i]);
		cols[2 + 2 * i].key = keys[i];
	}
	return 0;
}

static int order_by_first(const void *a, const void *b, void *ctx)
{
	const struct region_sums *s = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return s[x].total[0] < s[y].total[0]   ? 1
	       : s[x].total[0] > s[y].total[0] ? -1
					       : (x > y) - (x < y);
}

int view_counters(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
		  size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct counter_set cs;
	struct region_sums *sums = NULL;
	struct column *cols = NULL;
	char *keys[MAX_NAMES] = {0};
	uint32_t *order = NULL;
	size_t ncols = 0;
	int rc = -1, ins, cyc;

	if (counter_set(p, &cs) != 0)
		goto out;
	if (!cs.n) {
		snprintf(err, cap,
			 "%s: no counters were read in it; record it with scope-run --counters "
			 "EVENTS",
			 path);
		counter_set_free(&cs);
		return -1;
	}
	ins = named(&cs, "PAPI_TOT_INS");
	cyc = named(&cs, "PAPI_TOT_CYC");
	sums = calloc(p->nregions + 1, sizeof *sums);
	order = malloc((p->nregions + 1) * sizeof *order);
	cols = columns(o, &cs, ins >= 0 && cyc >= 0, &ncols);
	if (!sums || !order || !cols || self_keys(cols, &cs, keys) != 0)
		goto out;
	sum_pairs(o, p, &cs, sums);
	for (uint32_t r = 0; r < p->nregions; r++)
		order[r] = r;
	qsort_r(order, p->nregions, sizeof *order, order_by_first, sums);
	for (uint32_t r = 0; r < p->nregions; r++) {
		size_t w = strlen(o->shown[0].where[r]);
		if (sums[r].calls && w > (size_t)cols[ncols - 4].width)
			cols[ncols - 4].width = w > 4096 ? 4096 : (int)w;
	}
	{
		struct table t = {out, o->format, cols, ncols, 0};
		union cell cells[2 * MAX_NAMES + 6];
		if (o->format == FMT_JSON)
			json_doc_begin(out, path, p);
		table_begin(&t, "counters");
		for (uint32_t i = 0; i < p->nregions; i++) {
			uint32_t r = order[i];
			size_t k = 0;
			if (!sums[r].calls ||
			    !want_region(o, p->regions[r].name, region_name(o, 0, r)))
				continue;
			cells[k++].u = sums[r].calls;
			for (size_t c = 0; c < cs.n; c++) {
				cells[k++].u = sums[r].total[c];
				cells[k++].u = sums[r].self[c];
			}
			if (ins >= 0 && cyc >= 0)
				cells[k++].f = sums[r].total[cyc]
						       ? (double)sums[r].total[ins] /
								 (double)sums[r].total[cyc]
						       : NAN;
			cells[k++].s = o->shown[0].where[r];
			cells[k++].s = region_name(o, 0, r);
			cells[k++].s = p->regions[r].file;
			cells[k++].u = p->regions[r].line;
			table_row(&t, cells);
		}
		table_end(&t);
		if (o->format == FMT_JSON)
			json_doc_end(out);
	}
	rc = 0;
out:
	if (rc != 0)
		snprintf(err, cap, "%s: out of memory", path);
	for (size_t i = 0; i < MAX_NAMES; i++)
		free(keys[i]);
	free(cols);
	free(order);
	free(sums);
	counter_set_free(&cs);
	return rc;
}
