/* SPDX-License-Identifier: MIT */
/* The regions whose time changed most between two runs' profiles: scope-report --diff's rows. */
#define _GNU_SOURCE
#include "bench_stats.h"
#include "h5guard.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void region_changes_free(struct region_change *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].name);
	free(rows);
}

static int copy_rows(const struct diff_row *d, size_t nd, size_t top, struct region_change **out,
		     size_t *n)
{
	size_t k = top && top < nd ? top : nd;
	struct region_change *rows = calloc(k + 1, sizeof *rows);

	for (size_t i = 0; rows && i < k; i++) {
		struct region_change *r = &rows[i];
		if (!(r->name = strdup(d[i].shown))) {
			region_changes_free(rows, i);
			return -1;
		}
		r->calls[0] = d[i].f[0].calls, r->calls[1] = d[i].f[1].calls;
		r->total_ns[0] = d[i].f[0].total, r->total_ns[1] = d[i].f[1].total;
		r->self_ns[0] = d[i].f[0].self, r->self_ns[1] = d[i].f[1].self;
		r->in[0] = d[i].in[0], r->in[1] = d[i].in[1];
		r->self_pct = d[i].pct_self;
		r->total_pct = d[i].pct_total;
		r->slower = d[i].slower;
	}
	if (!rows)
		return -1;
	*out = rows;
	*n = k;
	return 0;
}

int region_changes(const char *base, const char *now, size_t top, double gate_pct, uint64_t min_ns,
		   struct region_change **out, size_t *n, char *err, size_t cap)
{
	struct rd_profile *p[2] = {NULL, NULL};
	struct gate gate = {.pct = gate_pct};
	struct options o;
	struct diff_row *rows;
	size_t nrows = 0, slower = 0;
	int rc = -1;

	/* scope-report --diff BASE NEW with its defaults: every process and
	 * region, sorted by the change of self time, gated as asked. */
	memset(&o, 0, sizeof o);
	o.process = o.rank = o.thread = -1;
	o.sort = SORT_SELF;
	o.files[0] = base;
	o.files[1] = now;
	o.nfiles = 2;
	o.min_time = min_ns;
	if (gate_pct >= 0) {
		o.gates = &gate;
		o.ngates = 1;
	}
	*out = NULL;
	*n = 0;
	if (report_open(&o, p, "scope-bench") != 0) {
		snprintf(err, cap, "the profiles cannot be compared");
		report_close(&o, p);
		return -1;
	}
	h5guard_reading(NULL);
	rows = diff_compute(&o, p, &nrows, &slower, err, cap);
	if (rows && copy_rows(rows, nrows, top, out, n) == 0)
		rc = 0;
	else if (rows)
		snprintf(err, cap, "out of memory");
	free(rows);
	report_close(&o, p);
	return rc;
}
