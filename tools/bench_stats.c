/* SPDX-License-Identifier: MIT */
/* Each configuration's median, p90 and max, its ratios to the baseline, its changed regions, and
 * the regression gate. */
#define _GNU_SOURCE
#include "bench_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bench_fig_key[NFIG] = {
	[FIG_WALL] = "wall_s",		[FIG_CPU] = "cpu_s",
	[FIG_USER] = "user_s",		[FIG_SYS] = "sys_s",
	[FIG_UTIL] = "cpu_utilisation", [FIG_RSS] = "peak_rss_bytes",
	[FIG_OUTPUT] = "output_bytes",
};

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double percentile(double *v, size_t n, double q)
{
	double rank, frac;
	size_t low;

	if (!n)
		return 0;
	qsort(v, n, sizeof *v, by_value);
	rank = q / 100.0 * (double)(n - 1);
	low = (size_t)rank;
	frac = rank - (double)low;
	if (low + 1 >= n)
		return v[n - 1];
	return v[low] + frac * (v[low + 1] - v[low]);
}

static double figure(const struct bench_figures *f, enum bench_fig k)
{
	switch (k) {
	case FIG_WALL: return f->wall_s;
	case FIG_CPU: return f->cpu_s;
	case FIG_USER: return f->user_s;
	case FIG_SYS: return f->sys_s;
	case FIG_UTIL: return f->utilisation;
	case FIG_RSS: return (double)f->peak_rss_bytes;
	case FIG_OUTPUT: return (double)f->output_bytes;
	case NFIG: break;
	}
	return 0;
}

/* The succeeded measured runs of configuration c, their indexes in r->runs. */
static size_t succeeded(const struct bench_results *r, size_t c, size_t *idx)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nruns; i++)
		if (r->runs[i].config == c && r->runs[i].kind == BENCH_MEASURED &&
		    !r->runs[i].failed)
			idx[n++] = i;
	return n;
}

/* The run of median wall time among idx[0..n): the lower of the two middle
 * ones when n is even, so it is always a run that happened. */
static long median_run(const struct bench_results *r, const size_t *idx, size_t n)
{
	size_t *order = malloc((n + 1) * sizeof *order);
	long rep;

	if (!n || !order) {
		free(order);
		return -1;
	}
	memcpy(order, idx, n * sizeof *order);
	/* insertion sort: a handful of repeats */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i;
		     j > 0 && r->runs[order[j]].f.wall_s < r->runs[order[j - 1]].f.wall_s; j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	rep = (long)order[(n - 1) / 2];
	free(order);
	return rep;
}

static int spread(struct bench_results *r, size_t c)
{
	struct config_stats *s = &r->stats[c];
	size_t *idx = calloc(r->nruns + 1, sizeof *idx), n;
	double *v = calloc(r->nruns + 1, sizeof *v);

	if (!idx || !v) {
		free(idx);
		free(v);
		return -1;
	}
	s->memory_run = -1;
	for (size_t i = 0; i < r->nruns; i++) {
		const struct bench_run *run = &r->runs[i];
		if (run->config != c)
			continue;
		s->runs += run->kind == BENCH_MEASURED;
		s->failed += run->kind == BENCH_MEASURED && run->failed;
		if (run->kind == BENCH_MEMORY)
			s->memory_run = (long)i;
	}
	n = succeeded(r, c, idx);
	s->has = n > 0;
	for (int k = 0; k < NFIG; k++) {
		for (size_t i = 0; i < n; i++)
			v[i] = figure(&r->runs[idx[i]].f, (enum bench_fig)k);
		s->median[k] = percentile(v, n, 50);
		s->p90[k] = percentile(v, n, 90);
		s->max[k] = n ? v[n - 1] : 0;
		s->ratio[k] = NAN;
	}
	s->rep = median_run(r, idx, n);
	free(idx);
	free(v);
	return 0;
}

static void profile_path(char *out, size_t cap, const struct bench_results *r, long run)
{
	snprintf(out, cap, "%s/%s.h5", r->plan->dir, r->runs[run].name);
}

/* A variant against the baseline: ratios of medians, changed regions, gate. */
static void compare(struct bench_results *r, size_t c)
{
	const struct config_stats *b = &r->stats[0];
	struct config_stats *s = &r->stats[c];
	const struct bench_plan *plan = r->plan;
	char base[PATH_MAX + 256], now[PATH_MAX + 256];

	if (!s->has || !b->has)
		return;
	for (int k = 0; k < NFIG; k++)
		s->ratio[k] = b->median[k] > 0 ? s->median[k] / b->median[k] : NAN;
	if (plan->max_regression >= 0) {
		s->slower_pct = 100.0 * (s->median[FIG_WALL] - b->median[FIG_WALL]) /
				(b->median[FIG_WALL] > 0 ? b->median[FIG_WALL] : 1);
		s->slower = s->slower_pct > plan->max_regression;
	}
	if (s->rep < 0 || b->rep < 0 || !r->runs[s->rep].has_profile ||
	    !r->runs[b->rep].has_profile)
		return;
	profile_path(base, sizeof base, r, b->rep);
	profile_path(now, sizeof now, r, s->rep);
	/* A region that holds under 1% of the baseline's wall time is too
	 * short to say it got slower: its change is noise. */
	if (region_changes(base, now, plan->top, plan->max_regression,
			   (uint64_t)(b->median[FIG_WALL] * 1e9 * BENCH_REGION_MIN_SHARE),
			   &s->changes, &s->nchanges, s->changes_error,
			   sizeof s->changes_error) != 0 &&
	    !s->changes_error[0])
		snprintf(s->changes_error, sizeof s->changes_error, "cannot compare the profiles");
}

/* The baseline's own repeats: its slowest over its median. */
static void baseline_spread(struct bench_results *r)
{
	const struct config_stats *b = &r->stats[0];

	if (r->plan->max_regression < 0 || !b->has || b->median[FIG_WALL] <= 0)
		return;
	r->baseline_spread_pct =
		100.0 * (b->max[FIG_WALL] - b->median[FIG_WALL]) / b->median[FIG_WALL];
	r->baseline_slower = r->baseline_spread_pct > r->plan->max_regression;
}

int bench_stats(struct bench_results *r)
{
	size_t n = r->plan->nconfigs;

	bench_stats_free(r);
	if (!(r->stats = calloc(n + 1, sizeof *r->stats)))
		return -1;
	for (size_t c = 0; c < n; c++)
		if (spread(r, c) != 0)
			return -1;
	for (size_t c = 1; c < n; c++)
		compare(r, c);
	baseline_spread(r);
	r->gate_failed = r->baseline_slower;
	for (size_t c = 1; c < n; c++)
		r->gate_failed |= r->stats[c].slower;
	return 0;
}

void bench_stats_free(struct bench_results *r)
{
	for (size_t c = 0; r->stats && c < r->plan->nconfigs; c++)
		region_changes_free(r->stats[c].changes, r->stats[c].nchanges);
	free(r->stats);
	r->stats = NULL;
}
