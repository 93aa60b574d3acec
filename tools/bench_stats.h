/* SPDX-License-Identifier: MIT */
/* What a benchmark's runs add up to: each configuration's spread, its ratios to the baseline, its
 * changed regions, and the regression gate. */
#ifndef SCOPE_TOOLS_BENCH_STATS_H
#define SCOPE_TOOLS_BENCH_STATS_H

#include "bench.h"
#include "machine.h"

#include <stddef.h>
#include <stdint.h>

/* The figures of a run, in bench.json's order and names. */
enum bench_fig { FIG_WALL, FIG_CPU, FIG_USER, FIG_SYS, FIG_UTIL, FIG_RSS, FIG_OUTPUT, NFIG };
extern const char *const bench_fig_key[NFIG];

/* q-th percentile (0..100) of v[0..n), by linear interpolation between the
 * closest ranks: rank q/100 * (n - 1). Sorts v. 0 when n is 0. */
double percentile(double *v, size_t n, double q);

/* A region in the two profiles compared (a copy of a --diff row). */
struct region_change {
	char *name;
	uint64_t calls[2], total_ns[2], self_ns[2]; /* base, new */
	int in[2];
	double self_pct, total_pct; /* NaN without a base */
	int slower;		    /* grew more than --max-regression allows */
};

/* The rows of scope-report --diff BASE NOW, at most top (0: all), marked
 * by a gate of gate_pct (< 0: none) when they hold min_ns or more in
 * either (scope-report's --min-time). Returns 0, or -1 with the reason in
 * err. */
int region_changes(const char *base, const char *now, size_t top, double gate_pct, uint64_t min_ns,
		   struct region_change **out, size_t *n, char *err, size_t cap);
void region_changes_free(struct region_change *rows, size_t n);

struct config_stats {
	size_t runs, failed; /* measured runs */
	int has;	     /* some run succeeded: the figures below mean something */
	double median[NFIG], p90[NFIG], max[NFIG];
	double ratio[NFIG]; /* median over the baseline's; NaN for the baseline or a 0 base */
	long rep;	    /* the run compared: the succeeded one of median wall time, -1 */
	struct region_change *changes; /* against the baseline's rep */
	size_t nchanges;
	char changes_error[256]; /* why there are none, "" */
	int slower;		 /* the gate: its median wall time grew more than allowed */
	double slower_pct;	 /* by how much, percent */
	long memory_run;	 /* its memory pass, -1 */
};

/* Everything bench.json holds. */
struct bench_results {
	const struct bench_plan *plan;
	struct bench_run *runs;
	size_t nruns, cap;
	struct machine machine;
	char started_utc[40], finished_utc[40];
	int interrupted;
	struct config_stats *stats; /* per configuration */
	/* The gate (--max-regression): the baseline's slowest repeat over its
	 * median, and whether anything failed it. */
	double baseline_spread_pct;
	int baseline_slower;
	int gate_failed;
};

/* Fills r->stats from r->runs: spreads, ratios, the changed regions of
 * each variant, the gate. Returns 0, or -1 without memory. */
int bench_stats(struct bench_results *r);
void bench_stats_free(struct bench_results *r);

/* Writes bench.json into the results folder, atomically. Returns 0, or -1
 * with the reason in err. */
int bench_json_write(const struct bench_results *r, char *err, size_t cap);

#endif
