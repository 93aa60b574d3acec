/* SPDX-License-Identifier: MIT */
/* A benchmark's summary and its projection for a batch job, from bench.json. */
#define _GNU_SOURCE
#include "bench_summary.h"
#include "format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

struct json *bench_load(const char *dir, char *err, size_t cap)
{
	char path[4096 + 16], why[256];
	struct json *j;

	snprintf(path, sizeof path, "%s/bench.json", dir);
	if (!(j = json_parse_file(path, why, sizeof why))) {
		snprintf(err, cap, "%s: %s", path, why);
		return NULL;
	}
	if (!json_get(j, "configurations") || !json_get(j, "runs")) {
		snprintf(err, cap, "%s: not a benchmark's results (no configurations or runs)",
			 path);
		json_free(j);
		return NULL;
	}
	return j;
}

/* A figure's spread: stats[key][which], NaN when absent. */
static double stat(const struct json *config, const char *key, const char *which)
{
	return json_get_number(json_get(json_get(config, "stats"), key), which, NAN);
}

static const char *seconds(char *buf, size_t cap, double s)
{
	if (isnan(s))
		return snprintf(buf, cap, "-"), buf;
	return fmt_ns(buf, cap, s * 1e9);
}

static const char *mib(char *buf, size_t cap, double bytes)
{
	if (isnan(bytes))
		snprintf(buf, cap, "-");
	else if (bytes < 1024)
		snprintf(buf, cap, "%.0f B", bytes);
	else if (bytes < MIB)
		snprintf(buf, cap, "%.1f KiB", bytes / 1024);
	else
		snprintf(buf, cap, "%.1f MiB", bytes / MIB);
	return buf;
}

static const char *ratio(char *buf, size_t cap, double r)
{
	if (isnan(r))
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%.2f", r);
	return buf;
}

/* "5/5", or "3/5 FAILED 2". */
static const char *runs_of(char *buf, size_t cap, const struct json *c)
{
	double runs = json_get_number(c, "runs", 0), failed = json_get_number(c, "failed", 0);
	if (failed > 0)
		snprintf(buf, cap, "%.0f/%.0f FAILED", runs - failed, runs);
	else
		snprintf(buf, cap, "%.0f/%.0f", runs, runs);
	return buf;
}

typedef const char *fmt_fn(char *buf, size_t cap, double v);

/* One table: a row per configuration, median, p90 and max of each key. */
static void spread_table(FILE *out, const struct json *configs, const char *const *keys,
			 const char *const *heads, fmt_fn *const *fmt, size_t nkeys)
{
	char buf[64];

	fprintf(out, "%-24s %-12s", "configuration", "runs");
	for (size_t k = 0; k < nkeys; k++)
		fprintf(out, " %12s %10s %10s", heads[k], "p90", "max");
	fputc('\n', out);
	for (size_t i = 0; i < configs->n; i++) {
		const struct json *c = &configs->items[i];
		fprintf(out, "%-24s %-12s", json_get_text(c, "label", "?"),
			runs_of(buf, sizeof buf, c));
		for (size_t k = 0; k < nkeys; k++) {
			fprintf(out, " %12s", fmt[k](buf, sizeof buf, stat(c, keys[k], "median")));
			fprintf(out, " %10s", fmt[k](buf, sizeof buf, stat(c, keys[k], "p90")));
			fprintf(out, " %10s", fmt[k](buf, sizeof buf, stat(c, keys[k], "max")));
		}
		fputc('\n', out);
	}
}

static const char *plain(char *buf, size_t cap, double v)
{
	if (isnan(v))
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%.2f", v);
	return buf;
}

static void ratios(FILE *out, const struct json *configs)
{
	static const char *const keys[] = {"wall_s", "cpu_s", "peak_rss_bytes", "output_bytes"};
	char buf[32];

	if (configs->n < 2)
		return;
	fprintf(out, "\nmedians over the baseline's:\n%-24s %8s %8s %9s %8s\n", "configuration",
		"wall", "CPU", "peak RSS", "output");
	for (size_t i = 1; i < configs->n; i++) {
		const struct json *c = &configs->items[i], *r = json_get(c, "ratios");
		fprintf(out, "%-24s", json_get_text(c, "label", "?"));
		for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
			fprintf(out, " %*s", k == 2 ? 9 : 8,
				ratio(buf, sizeof buf, json_get_number(r, keys[k], NAN)));
		fputc('\n', out);
	}
}

/* One line per failed run. Returns how many failed. */
static int failures(FILE *out, const struct json *runs, const char *dir)
{
	int n = 0;

	for (size_t i = 0; i < runs->n; i++) {
		const struct json *r = &runs->items[i];
		if (strcmp(json_get_text(r, "status", ""), "failed") != 0)
			continue;
		if (!n++)
			fputs("\nfailed runs:\n", out);
		fprintf(out, "  %s (%s): %s; log %s/%s\n", json_get_text(r, "name", "?"),
			json_get_text(r, "kind", "?"), json_get_text(r, "error", ""), dir,
			json_get_text(r, "log", "?"));
	}
	return n;
}

static const char *pct(char *buf, size_t cap, double v)
{
	if (isnan(v))
		snprintf(buf, cap, "n/a");
	else
		snprintf(buf, cap, "%+.1f%%", v);
	return buf;
}

static void changed_regions(FILE *out, const struct json *c, const char *dir)
{
	const struct json *cmp = json_get(c, "compared"), *rows = json_get(cmp, "regions");
	char a[32], b[32], d[32];

	if (!cmp || cmp->type != JSON_OBJECT)
		return;
	fprintf(out, "\n%s against baseline (scope-report --diff %s/%s.h5 %s/%s.h5):\n",
		json_get_text(c, "label", "?"), dir, json_get_text(cmp, "base", "?"), dir,
		json_get_text(cmp, "new", "?"));
	if (*json_get_text(cmp, "error", "")) {
		fprintf(out, "  no comparison: %s\n", json_get_text(cmp, "error", ""));
		return;
	}
	if (!rows || !rows->n) {
		fputs("  no region in either profile\n", out);
		return;
	}
	fprintf(out, "  %11s %11s %8s %10s %10s %6s  %s\n", "base self", "new self", "self%",
		"base calls", "calls", "", "region");
	for (size_t i = 0; i < rows->n; i++) {
		const struct json *r = &rows->items[i];
		fprintf(out, "  %11s %11s %8s %10.0f %10.0f %6s  %s\n",
			fmt_ns(a, sizeof a, json_get_number(r, "self_base_ns", 0)),
			fmt_ns(b, sizeof b, json_get_number(r, "self_ns", 0)),
			pct(d, sizeof d, json_get_number(r, "self_change_pct", NAN)),
			json_get_number(r, "calls_base", 0), json_get_number(r, "calls", 0),
			json_get_text(r, "status", ""), json_get_text(r, "region", "?"));
	}
}

/* The gate's verdicts; returns 1 when it failed. */
static int gate(FILE *out, const struct json *bench, const struct json *configs)
{
	const struct json *g = json_get(bench, "gate");
	double limit = json_get_number(g, "max_regression_pct", NAN);
	char a[32];

	if (!g || g->type != JSON_OBJECT)
		return 0;
	fprintf(out, "\ngate, --max-regression %g%% of the median wall time:\n", limit);
	fprintf(out, "  baseline: slowest repeat %s of its median: %s\n",
		pct(a, sizeof a, json_get_number(g, "baseline_spread_pct", NAN)),
		json_get(g, "baseline_slower") && json_get(g, "baseline_slower")->boolean
			? "SLOWER than allowed"
			: "ok");
	for (size_t i = 1; i < configs->n; i++) {
		const struct json *c = &configs->items[i], *s = json_get(c, "slower");
		double p = json_get_number(c, "slower_pct", NAN);
		fprintf(out, "  %s: %s of the baseline's: %s\n", json_get_text(c, "label", "?"),
			pct(a, sizeof a, p),
			isnan(p)	  ? "not compared (no run succeeded)"
			: s && s->boolean ? "SLOWER than allowed"
					  : "ok");
	}
	return json_get(g, "failed") && json_get(g, "failed")->boolean;
}

int bench_summary(FILE *out, const struct json *bench, const char *dir, char *err, size_t cap)
{
	static const char *const time_keys[] = {"wall_s", "cpu_s", "cpu_utilisation"};
	static const char *const time_heads[] = {"wall", "CPU", "CPU/wall"};
	static fmt_fn *const time_fmt[] = {seconds, seconds, plain};
	static const char *const mem_keys[] = {"peak_rss_bytes", "output_bytes"};
	static const char *const mem_heads[] = {"peak RSS", "output"};
	static fmt_fn *const mem_fmt[] = {mib, mib};
	const struct json *configs = json_get(bench, "configurations"),
			  *runs = json_get(bench, "runs"), *opt = json_get(bench, "options");
	int failed, gated;

	if (!configs || configs->type != JSON_ARRAY || !configs->n || !runs ||
	    runs->type != JSON_ARRAY) {
		snprintf(err, cap, "%s/bench.json has no configurations", dir);
		return -1;
	}
	fprintf(out, "%s: %zu configuration%s, %.0f measured run%s each%s%s%s\n\n", dir, configs->n,
		configs->n == 1 ? "" : "s", json_get_number(opt, "repeat", 0),
		json_get_number(opt, "repeat", 0) == 1 ? "" : "s",
		json_get(opt, "warm_up") && json_get(opt, "warm_up")->boolean ? " after a warm-up"
									      : "",
		json_get(opt, "profile") && !json_get(opt, "profile")->boolean ? ", not profiled"
									       : ", profiled",
		json_get(bench, "interrupted") && json_get(bench, "interrupted")->boolean
			? " (INTERRUPTED)"
			: "");
	spread_table(out, configs, time_keys, time_heads, time_fmt, 3);
	fputc('\n', out);
	spread_table(out, configs, mem_keys, mem_heads, mem_fmt, 2);
	ratios(out, configs);
	failed = failures(out, runs, dir);
	for (size_t i = 1; i < configs->n; i++)
		changed_regions(out, &configs->items[i], dir);
	gated = gate(out, bench, configs);
	return failed || gated ? 1 : 0;
}

/* Slurm's --time: [D-]HH:MM:SS. */
static void slurm_time(char *buf, size_t cap, double minutes)
{
	unsigned long long m = (unsigned long long)minutes;
	if (m >= 1440)
		snprintf(buf, cap, "%llu-%02llu:%02llu:00", m / 1440, m % 1440 / 60, m % 60);
	else
		snprintf(buf, cap, "%02llu:%02llu:00", m / 60, m % 60);
}

int bench_project(FILE *out, const struct json *bench, double units, double margin, char *err,
		  size_t cap)
{
	const struct json *configs = json_get(bench, "configurations");
	const struct json *b = configs && configs->n ? &configs->items[0] : NULL;
	double grow = 1 + margin / 100, wall = stat(b, "wall_s", "p90"),
	       util = stat(b, "cpu_utilisation", "median"), rss = stat(b, "peak_rss_bytes", "p90"),
	       rss_max = stat(b, "peak_rss_bytes", "max"), written = stat(b, "output_bytes", "p90");
	double time_s, minutes, mem, mem_mib, cpus, tmp, tmp_mib;
	char t[64];

	if (!b || isnan(wall)) {
		snprintf(err, cap, "no run of the baseline succeeded: nothing to project from");
		return -1;
	}
	time_s = units * wall * grow;
	minutes = ceil(time_s / 60);
	if (minutes < 1)
		minutes = 1;
	mem = rss * grow;
	if (rss_max > mem)
		mem = rss_max;
	mem_mib = ceil(mem / MIB);
	if (mem_mib < 1)
		mem_mib = 1;
	cpus = ceil(util - 0.1);
	if (cpus < 1)
		cpus = 1;
	tmp = units * written * grow;
	tmp_mib = ceil(tmp / MIB);
	slurm_time(t, sizeof t, minutes);
	fprintf(out,
		"# A job for %g units of the work one run of %s did (%.0f runs measured), the\n"
		"# figures grown by a margin of %g%%; the units run one after another.\n",
		units, json_get_text(b, "label", "baseline"), json_get_number(b, "runs", 0),
		margin);
	fprintf(out, "#SBATCH --time=%s\n", t);
	fprintf(out, "#SBATCH --mem=%.0fM\n", mem_mib);
	fprintf(out, "#SBATCH --cpus-per-task=%.0f\n", cpus);
	if (tmp_mib > 0)
		fprintf(out, "#SBATCH --tmp=%.0fM\n", tmp_mib);
	fprintf(out,
		"# --time: %g units x p90 wall time %.3f s x %g = %.1f s, rounded up to %.0f "
		"minutes\n",
		units, wall, grow, time_s, minutes);
	fprintf(out,
		"# --mem: p90 peak RSS of the process tree %.1f MiB x %g = %.1f MiB (at least the "
		"largest seen, %.1f MiB), rounded up\n",
		rss / MIB, grow, rss * grow / MIB, rss_max / MIB);
	fprintf(out,
		"# --cpus-per-task: median CPU time over wall time %.2f, rounded up (within 0.1 of "
		"a whole number counts as it)\n",
		util);
	if (tmp_mib > 0)
		fprintf(out,
			"# --tmp: %g units x p90 bytes written under the working directory %.1f "
			"MiB x %g = %.1f MiB, rounded up\n",
			units, written / MIB, grow, tmp / MIB);
	else
		fputs("# no --tmp: the runs wrote nothing under their working directory\n", out);
	return 0;
}

/* text with &, <, > and " escaped. */
static void html_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* One chart: a bar per configuration of its median of key, a line from its
 * median to its max, all against the largest max. */
static void html_bars(FILE *out, const struct json *configs, const char *key, const char *title,
		      fmt_fn *fmt)
{
	double top = 0;
	char a[64], b[64], c[64];

	for (size_t i = 0; i < configs->n; i++) {
		double m = stat(&configs->items[i], key, "max");
		if (!isnan(m) && m > top)
			top = m;
	}
	fprintf(out, "<h2>%s</h2>\n<table class=\"bars\">\n", title);
	for (size_t i = 0; i < configs->n; i++) {
		const struct json *x = &configs->items[i];
		double med = stat(x, key, "median"), p90 = stat(x, key, "p90"),
		       max = stat(x, key, "max");
		double wm = top > 0 && !isnan(med) ? 100 * med / top : 0,
		       wx = top > 0 && !isnan(max) ? 100 * max / top : 0;
		fputs("<tr><th>", out);
		html_text(out, json_get_text(x, "label", "?"));
		fprintf(out,
			"</th><td class=\"bar\"><div class=\"med\" style=\"width:%.1f%%\"></div>"
			"<div class=\"spread\" style=\"left:%.1f%%;width:%.1f%%\"></div></td>"
			"<td>median %s, p90 %s, max %s</td></tr>\n",
			wm, wm, wx - wm, fmt(a, sizeof a, med), fmt(b, sizeof b, p90),
			fmt(c, sizeof c, max));
	}
	fputs("</table>\n", out);
}

static void html_changes(FILE *out, const struct json *c)
{
	const struct json *cmp = json_get(c, "compared"), *rows = json_get(cmp, "regions");
	char a[32], b[32], d[32];

	if (!cmp || cmp->type != JSON_OBJECT || !rows || !rows->n)
		return;
	fputs("<h2>", out);
	html_text(out, json_get_text(c, "label", "?"));
	fputs(": regions whose self time changed most against the baseline</h2>\n<table>\n"
	      "<tr><th>region</th><th>base self</th><th>self</th><th>change</th>"
	      "<th>base calls</th><th>calls</th><th></th></tr>\n",
	      out);
	for (size_t i = 0; i < rows->n; i++) {
		const struct json *r = &rows->items[i];
		double p = json_get_number(r, "self_change_pct", NAN);
		fputs("<tr><td>", out);
		html_text(out, json_get_text(r, "region", "?"));
		fprintf(out,
			"</td><td>%s</td><td>%s</td><td class=\"%s\">%s</td><td>%.0f</td>"
			"<td>%.0f</td><td>%s</td></tr>\n",
			fmt_ns(a, sizeof a, json_get_number(r, "self_base_ns", 0)),
			fmt_ns(b, sizeof b, json_get_number(r, "self_ns", 0)),
			!isnan(p) && p > 0 ? "up" : "down", pct(d, sizeof d, p),
			json_get_number(r, "calls_base", 0), json_get_number(r, "calls", 0),
			json_get_text(r, "status", ""));
	}
	fputs("</table>\n", out);
}

int bench_html(FILE *out, const struct json *bench, const char *dir, char *err, size_t cap)
{
	const struct json *configs = json_get(bench, "configurations");

	if (!configs || configs->type != JSON_ARRAY || !configs->n) {
		snprintf(err, cap, "%s/bench.json has no configurations", dir);
		return -1;
	}
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>scope-bench ", out);
	html_text(out, dir);
	fputs("</title>\n<style>body{font-family:sans-serif;margin:2em}"
	      "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left}"
	      ".bars td.bar{width:30em;position:relative}"
	      ".med{background:#4a7ebb;height:1em}"
	      ".spread{position:absolute;top:50%;border-top:2px solid #222}"
	      ".up{color:#b00}.down{color:#070}</style></head><body>\n<h1>",
	      out);
	html_text(out, dir);
	fprintf(out, "</h1>\n<p>%zu configuration%s; bars are medians, lines reach the max.</p>\n",
		configs->n, configs->n == 1 ? "" : "s");
	html_bars(out, configs, "wall_s", "wall time", seconds);
	html_bars(out, configs, "cpu_s", "CPU time", seconds);
	html_bars(out, configs, "peak_rss_bytes", "peak RSS of the process tree", mib);
	html_bars(out, configs, "output_bytes", "bytes written", mib);
	for (size_t i = 1; i < configs->n; i++)
		html_changes(out, &configs->items[i]);
	fputs("</body></html>\n", out);
	return ferror(out) ? (snprintf(err, cap, "cannot write the page"), -1) : 0;
}
