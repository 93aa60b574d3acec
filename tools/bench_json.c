/* SPDX-License-Identifier: MIT */
/* bench.json: the manifest, every figure of every run, and what they add up to. */
#define _GNU_SOURCE
#include "bench_stats.h"
#include "format.h"
#include "publish.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *const kind_name[] = {
	[BENCH_WARM_UP] = "warm-up",
	[BENCH_MEASURED] = "measured",
	[BENCH_MEMORY] = "memory",
};

/* A finite number, else null (a ratio without a base). */
static void number(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.9g", v);
	else
		fputs("null", f);
}

static void key(FILE *f, const char *k)
{
	json_string(f, k);
	fputc(':', f);
}

static void text_or_null(FILE *f, const char *s)
{
	if (s)
		json_string(f, s);
	else
		fputs("null", f);
}

static void string_array(FILE *f, const struct strings *s, size_t from)
{
	fputc('[', f);
	for (size_t i = from; i < s->n; i++) {
		if (i > from)
			fputc(',', f);
		json_string(f, s->v[i]);
	}
	fputc(']', f);
}

static void argv_array(FILE *f, char *const *argv)
{
	fputc('[', f);
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			fputc(',', f);
		json_string(f, argv[i]);
	}
	fputc(']', f);
}

static void manifest(FILE *f, const struct machine *m)
{
	int first = 1;

	fputs("\"manifest\":{", f);
	key(f, "host"), json_string(f, m->host);
	fputc(',', f), key(f, "cpu_model"), json_string(f, m->cpu_model);
	fprintf(f, ",\"cpu_mhz\":"), number(f, m->cpu_mhz);
	fprintf(f, ",\"logical_cores\":%ld,\"physical_cores\":%ld,\"memory_bytes\":%lld",
		m->logical_cores, m->physical_cores, (long long)m->memory_bytes);
	fputc(',', f), key(f, "kernel"), json_string(f, m->kernel);
	fputc(',', f), key(f, "platform"), json_string(f, m->platform);
	fputc(',', f), key(f, "libc_version"), json_string(f, m->libc);
	fputs(",\"thread_env\":{", f);
	for (size_t i = 0; i < machine_nthread_vars; i++) {
		const char *v = getenv(machine_thread_vars[i]);
		if (!v)
			continue;
		if (!first)
			fputc(',', f);
		first = 0;
		key(f, machine_thread_vars[i]);
		json_string(f, v);
	}
	fprintf(f, "},\"scope_version\":\"%s\"}", SCOPE_VERSION);
}

static void options(FILE *f, const struct bench_plan *p)
{
	fprintf(f, "\"options\":{\"repeat\":%u,\"warm_up\":%s,\"warm_up_args\":", p->repeat,
		p->warm_up ? "true" : "false");
	string_array(f, &p->warm_up_args, 0);
	fprintf(f, ",\"profile\":%s,\"memory\":%s,\"keep\":%s,\"stage\":",
		p->profile ? "true" : "false", p->memory ? "true" : "false",
		p->keep ? "true" : "false");
	text_or_null(f, p->has_stage ? p->stage : NULL);
	fputs(",\"max_regression_pct\":", f);
	number(f, p->max_regression >= 0 ? p->max_regression : NAN);
	fputs(",\"project_units\":", f);
	number(f, p->project > 0 ? p->project : NAN);
	fputs(",\"margin_pct\":", f);
	number(f, p->margin);
	fprintf(f, ",\"top\":%zu}", p->top);
}

static void figures(FILE *f, const struct bench_figures *g)
{
	fprintf(f, "\"wall_s\":%.9g,\"cpu_s\":%.9g,\"user_s\":%.9g,\"sys_s\":%.9g,", g->wall_s,
		g->cpu_s, g->user_s, g->sys_s);
	fprintf(f, "\"cpu_utilisation\":%.9g,\"peak_rss_bytes\":%llu,\"output_bytes\":%llu,",
		g->utilisation, (unsigned long long)g->peak_rss_bytes,
		(unsigned long long)g->output_bytes);
	fprintf(f, "\"profile_s\":%.9g", g->profile_s);
}

static void run(FILE *f, const struct bench_results *r, const struct bench_run *x)
{
	const struct bench_plan *p = r->plan;
	char file[BENCH_LABEL_MAX + 64];

	fputc('{', f);
	key(f, "label"), json_string(f, p->configs[x->config].label);
	fprintf(f, ",\"config\":%zu,\"kind\":\"%s\",\"repeat\":%u,\"name\":", x->config,
		kind_name[x->kind], x->repeat);
	json_string(f, x->name);
	fprintf(f, ",\"status\":\"%s\",\"started\":%s,\"exit_status\":%d,\"signal\":%d,\"error\":",
		x->failed ? "failed" : "ok", x->started ? "true" : "false",
		x->started && WIFEXITED(x->status) ? WEXITSTATUS(x->status) : -1,
		x->started && WIFSIGNALED(x->status) ? WTERMSIG(x->status) : 0);
	json_string(f, x->error);
	fputc(',', f);
	if (x->started && x->kind != BENCH_MEMORY)
		figures(f, &x->f);
	else
		fputs("\"wall_s\":null", f);
	snprintf(file, sizeof file, "%s.h5", x->name);
	fputs(",\"profile\":", f);
	text_or_null(f, x->has_profile ? file : NULL);
	snprintf(file, sizeof file, "%s.log", x->name);
	fputs(",\"log\":", f);
	json_string(f, file);
	snprintf(file, sizeof file, BENCH_WORK "/%s", x->name);
	fputs(",\"workdir\":", f);
	text_or_null(f, x->kept ? file : NULL);
	fputc('}', f);
}

static void stats_of(FILE *f, const struct config_stats *s)
{
	fputs("\"stats\":", f);
	if (!s->has) {
		fputs("null", f);
		return;
	}
	fputc('{', f);
	for (int k = 0; k < NFIG; k++) {
		fprintf(f, "%s\"%s\":{\"median\":", k ? "," : "", bench_fig_key[k]);
		number(f, s->median[k]);
		fputs(",\"p90\":", f);
		number(f, s->p90[k]);
		fputs(",\"max\":", f);
		number(f, s->max[k]);
		fputc('}', f);
	}
	fputs("},\"ratios\":{", f);
	for (int k = 0; k < NFIG; k++) {
		fprintf(f, "%s\"%s\":", k ? "," : "", bench_fig_key[k]);
		number(f, s->ratio[k]);
	}
	fputc('}', f);
}

static void changes(FILE *f, const struct bench_results *r, const struct config_stats *s, size_t c)
{
	const struct config_stats *b = &r->stats[0];

	fputs(",\"compared\":", f);
	if (c == 0 || !s->has || !b->has || s->rep < 0 || b->rep < 0 ||
	    !r->runs[b->rep].has_profile || !r->runs[s->rep].has_profile) {
		fputs("null", f);
		return;
	}
	fputs("{\"base\":", f);
	json_string(f, r->runs[b->rep].name);
	fputs(",\"new\":", f);
	json_string(f, r->runs[s->rep].name);
	fputs(",\"error\":", f);
	json_string(f, s->changes_error);
	fputs(",\"regions\":[", f);
	for (size_t i = 0; i < s->nchanges; i++) {
		const struct region_change *x = &s->changes[i];
		fprintf(f, "%s{\"region\":", i ? "," : "");
		json_string(f, x->name);
		fprintf(f,
			",\"status\":\"%s\",\"calls_base\":%llu,\"calls\":%llu,"
			"\"total_base_ns\":%llu,\"total_ns\":%llu,\"self_base_ns\":%llu,"
			"\"self_ns\":%llu,\"total_change_pct\":",
			!x->in[0]   ? "new"
			: !x->in[1] ? "gone"
			: x->slower ? "SLOWER"
				    : "",
			(unsigned long long)x->calls[0], (unsigned long long)x->calls[1],
			(unsigned long long)x->total_ns[0], (unsigned long long)x->total_ns[1],
			(unsigned long long)x->self_ns[0], (unsigned long long)x->self_ns[1]);
		number(f, x->total_pct);
		fputs(",\"self_change_pct\":", f);
		number(f, x->self_pct);
		fputc('}', f);
	}
	fputs("]}", f);
}

static void config(FILE *f, const struct bench_results *r, size_t c)
{
	const struct bench_config *x = &r->plan->configs[c];
	const struct config_stats *s = &r->stats[c];

	fputc('{', f);
	key(f, "label"), json_string(f, x->label);
	fputs(",\"name\":", f);
	text_or_null(f, x->name);
	fputs(",\"program\":", f);
	json_string(f, x->program);
	fputs(",\"args\":", f);
	string_array(f, &x->args, 0);
	fputs(",\"env\":", f);
	string_array(f, &x->env, 0);
	fprintf(f, ",\"runs\":%zu,\"failed\":%zu,", s->runs, s->failed);
	stats_of(f, s);
	changes(f, r, s, c);
	fprintf(f, ",\"slower\":%s,\"slower_pct\":", s->slower ? "true" : "false");
	number(f, c && r->plan->max_regression >= 0 && s->has ? s->slower_pct : NAN);
	fputs(",\"memory\":", f);
	if (s->memory_run >= 0)
		json_string(f, r->runs[s->memory_run].name);
	else
		fputs("null", f);
	fputc('}', f);
}

static int write_json(const char *tmp, void *ctx)
{
	const struct bench_results *r = ctx;
	const struct bench_plan *p = r->plan;
	FILE *f = fopen(tmp, "w");

	if (!f)
		return -1;
	fprintf(f, "{\"producer\":\"scope-bench %s\",\"format\":1,", SCOPE_VERSION);
	key(f, "started_utc"), json_string(f, r->started_utc);
	fputc(',', f), key(f, "finished_utc"), json_string(f, r->finished_utc);
	fprintf(f, ",\"interrupted\":%s,\"command\":", r->interrupted ? "true" : "false");
	argv_array(f, p->argv);
	fputs(",\n", f);
	manifest(f, &r->machine);
	fputs(",\n", f);
	options(f, p);
	fputs(",\n\"configurations\":[\n", f);
	for (size_t c = 0; c < p->nconfigs; c++) {
		config(f, r, c);
		fputs(c + 1 < p->nconfigs ? ",\n" : "\n", f);
	}
	fputs("],\n\"runs\":[\n", f);
	for (size_t i = 0; i < r->nruns; i++) {
		run(f, r, &r->runs[i]);
		fputs(i + 1 < r->nruns ? ",\n" : "\n", f);
	}
	fputs("],\n\"gate\":", f);
	if (p->max_regression < 0 || !r->stats[0].has) {
		fputs("null", f);
	} else {
		fputs("{\"max_regression_pct\":", f);
		number(f, p->max_regression);
		fputs(",\"baseline_spread_pct\":", f);
		number(f, r->baseline_spread_pct);
		fprintf(f, ",\"baseline_slower\":%s,\"failed\":%s}",
			r->baseline_slower ? "true" : "false", r->gate_failed ? "true" : "false");
	}
	fputs("}\n", f);
	return fclose(f) == 0 ? 0 : -1;
}

int bench_json_write(const struct bench_results *r, char *err, size_t cap)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof path, "%s/" BENCH_JSON, r->plan->dir);
	return publish_atomic(path, write_json, (void *)r, -1, NULL, err, cap);
}
