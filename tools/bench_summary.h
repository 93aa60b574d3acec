/* SPDX-License-Identifier: MIT */
/* What a benchmark found, from its bench.json: the summary, the projection for a batch job, and the
 * HTML page. Shared by scope-bench and scope-report --bench. */
#ifndef SCOPE_TOOLS_BENCH_SUMMARY_H
#define SCOPE_TOOLS_BENCH_SUMMARY_H

#include "json.h"

#include <stddef.h>
#include <stdio.h>

/* Reads DIR/bench.json. Returns the tree, or NULL with a one-line reason in
 * err. */
struct json *bench_load(const char *dir, char *err, size_t cap);

/* Prints the summary of bench (read from dir): each configuration's
 * median, p90 and max, its ratios to the baseline, its failed runs, the
 * regions that changed most, the gate. Returns 0; 1 when a run failed or
 * the gate did; -1 with the reason in err when bench lacks what it needs. */
int bench_summary(FILE *out, const struct json *bench, const char *dir, char *err, size_t cap);

/*
 * Prints an #SBATCH block for units units of the baseline's measured work,
 * the figures grown by margin percent, each line followed by how it was
 * derived. Returns 0, or -1 with the reason in err (no baseline run
 * succeeded).
 */
int bench_project(FILE *out, const struct json *bench, double units, double margin, char *err,
		  size_t cap);

/* Writes a self-contained HTML page of bench: bars per configuration for each
 * figure, the regions that changed most. Returns 0, or -1 with the reason in
 * err. */
int bench_html(FILE *out, const struct json *bench, const char *dir, char *err, size_t cap);

#endif
