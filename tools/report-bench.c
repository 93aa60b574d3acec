/* SPDX-License-Identifier: MIT */
/* scope-report --bench: a benchmark's summary, projection or HTML page, read again from its
 * bench.json. */
#define _GNU_SOURCE
#include "bench_summary.h"
#include "publish.h"
#include "report.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bench_view {
	const char *dir, *output;
	int html;
	double project, margin;
	const struct json *bench;
	int rc;
	int failed_io; /* the output could not be written */
};

__attribute__((noreturn)) static void bench_usage(const char *what, const char *value)
{
	fprintf(stderr, "scope-report: %s%s%s (see scope-report --help)\n", what, value ? " " : "",
		value ? value : "");
	exit(2);
}

static double bench_number(const char *opt, const char *v, double lo)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (!*v || *end || errno || d < lo || d > 1e12) {
		fprintf(stderr,
			"scope-report: bad %s '%s': give a number from %g (see "
			"scope-report --help)\n",
			opt, v, lo);
		exit(2);
	}
	return d;
}

int report_bench_option(const char *arg)
{
	/* --html is also a view of a profile: with --bench it draws the benchmark */
	static const char *const opts[] = {"--bench", "--project", "--margin"};

	for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
		size_t n = strlen(opts[i]);
		if (strncmp(arg, opts[i], n) == 0 && (arg[n] == '\0' || arg[n] == '='))
			return 1;
	}
	return 0;
}

static void bench_parse(int argc, char **argv, struct bench_view *v)
{
	static const struct option longs[] = {
		{"bench", required_argument, 0, 'b'},  {"html", no_argument, 0, 'H'},
		{"output", required_argument, 0, 'o'}, {"project", required_argument, 0, 'p'},
		{"margin", required_argument, 0, 'm'}, {0, 0, 0, 0}};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:", longs, NULL)) != -1) {
		switch (c) {
		case 'b': v->dir = optarg; break;
		case 'H': v->html = 1; break;
		case 'o': v->output = optarg; break;
		case 'p': v->project = bench_number("--project", optarg, 0); break;
		case 'm': v->margin = bench_number("--margin", optarg, 0); break;
		case ':': bench_usage("option needs a value:", argv[optind - 1]);
		default:
			bench_usage("--bench takes only --html, --project, --margin and -o, not",
				    argv[optind - 1]);
		}
	}
	if (!v->dir)
		bench_usage("--project and --margin apply to --bench DIR", NULL);
	if (optind < argc)
		bench_usage("--bench reads a results folder, not", argv[optind]);
	if (v->html && v->project > 0)
		bench_usage("give --html or --project, not both", NULL);
}

/* Writes the view into out; the exit status is left in v->rc. */
static int bench_write(FILE *out, void *ctx)
{
	struct bench_view *v = ctx;
	char err[512];
	int rc;

	if (v->html)
		rc = bench_html(out, v->bench, v->dir, err, sizeof err);
	else if (v->project > 0)
		rc = bench_project(out, v->bench, v->project, v->margin, err, sizeof err);
	else
		rc = bench_summary(out, v->bench, v->dir, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "scope-report: %s\n", err);
		v->rc = 1;
		return -1;
	}
	v->rc = rc;
	return 0;
}

static int write_file(const char *tmp, void *ctx)
{
	FILE *f = fopen(tmp, "w");
	int rc;

	if (!f)
		return -1;
	rc = bench_write(f, ctx);
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

int report_bench(int argc, char **argv)
{
	struct bench_view v = {.margin = 25};
	char err[512];
	struct json *j;
	const struct json *gate;

	bench_parse(argc, argv, &v);
	if (!(j = bench_load(v.dir, err, sizeof err))) {
		fprintf(stderr, "scope-report: %s\n", err);
		return 1;
	}
	v.bench = j;
	if (v.output) {
		if (publish_atomic(v.output, write_file, &v, -1, NULL, err, sizeof err) != 0) {
			if (!v.rc)
				fprintf(stderr, "scope-report: cannot write %s: %s\n", v.output,
					err);
			v.rc = 1;
		}
	} else if (bench_write(stdout, &v) != 0) {
		v.rc = 1;
		v.failed_io = 1;
	}
	gate = json_get(j, "gate");
	if (!v.html && !v.project && v.rc == 1 && !v.failed_io && json_get(gate, "failed") &&
	    json_get(gate, "failed")->boolean)
		v.rc = 3;
	json_free(j);
	return v.rc;
}
