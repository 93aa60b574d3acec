/* SPDX-License-Identifier: MIT */
/* scope-report --samples: on-CPU time per function, instrumented or not, from the samples. */
#include "map.h"
#include "names.h"
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Each thread's CPU-time timer fired once per period of its CPU time, as
 * the kernel's tick allows (often 4 ms, whatever the rate asked for): a
 * sample of a lane stands for the lane's CPU time (cpu_ns) divided by its
 * samples. A function's on-CPU time is the sum over the samples taken in
 * it (innermost frame); a region's, over those taken while it was the
 * innermost recorded call open, set against its time from /pairs.
 */

struct fn_row {
	const char *name; /* in a sample's stack */
	uint64_t samples;
	double cpu_ns;
};

struct region_row {
	uint64_t region, samples;
	double cpu_ns;
	uint64_t total_ns;
};

static int by_samples(const void *x, const void *y)
{
	const struct fn_row *a = x, *b = y;
	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	return strcmp(a->name, b->name);
}

static int by_region_samples(const void *x, const void *y)
{
	const struct region_row *a = x, *b = y;
	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	return (a->region > b->region) - (a->region < b->region);
}

/* The function a stack ends in: its innermost frame. */
static const char *leaf_of(const char *stack)
{
	const char *semi = strrchr(stack, ';');
	return semi ? semi + 1 : stack;
}

/* A function's file and line are known when it is a region. */
enum { FC_SAMPLES, FC_CPU, FC_SHARE, FC_WHERE, FC_NAME, FC_FILE, FC_LINE, FC_N };
static const struct column fn_cols[FC_N] = {
	{"samples", "samples", CELL_U64, 9, 0, 0, 0},
	{"on cpu", "cpu_ns", CELL_NS, 11, 0, 0, 0},
	{"share", "share_pct", CELL_PCT, 6, 0, 0, 0},
	{"location", "location", CELL_STR, 8, 0, 1, 0},
	{"function", "function", CELL_STR, 0, 0, 0, 0},
	{"file", "file", CELL_STR, 0, 1, 0, 0},
	{"line", "line", CELL_U64, 0, 1, 0, 0},
};

enum { RC_SAMPLES, RC_CPU, RC_TOTAL, RC_PCT, RC_WHERE, RC_NAME, RC_FILE, RC_LINE, RC_N };
static const struct column region_cols[RC_N] = {
	{"samples", "samples", CELL_U64, 9, 0, 0, 0},	{"on cpu", "cpu_ns", CELL_NS, 11, 0, 0, 0},
	{"total", "total_ns", CELL_NS, 11, 0, 0, 0},	{"on cpu", "cpu_pct", CELL_PCT, 6, 0, 0, 0},
	{"location", "location", CELL_STR, 8, 0, 1, 0}, {"region", "region", CELL_STR, 0, 0, 0, 0},
	{"file", "file", CELL_STR, 0, 1, 0, 0},		{"line", "line", CELL_U64, 0, 1, 0, 0},
};

/* The widest of n "file:line" (or "location") as a column's width. */
static int where_width(const char *const *where, size_t n)
{
	size_t w = strlen("location");

	for (size_t i = 0; i < n; i++)
		w = strlen(where[i]) > w ? strlen(where[i]) : w;
	return w > 4096 ? 4096 : (int)w;
}

struct sampled {
	struct rd_sample *s; /* every process's, in the window (--since, --until) */
	size_t n;
	size_t taken;	/* before the window */
	double *weight; /* per sample: its lane's CPU time / its lane's samples */
};

/* Keeps the samples taken between --since and --until, on the job's timeline.
 * Returns 0, or -1 with the reason in p->err. */
static int keep_window(const struct options *o, struct rd_profile *p, struct sampled *sm)
{
	struct call_filter f;
	size_t n = 0;

	sm->taken = sm->n;
	if (!o->windowed)
		return 0;
	if (filter_init(&f, o, 0, p) != 0)
		return snprintf(p->err, sizeof p->err, "out of memory"), -1;
	for (size_t i = 0; i < sm->n; i++) {
		if (!filter_time(&f, sm->s[i].process, sm->s[i].time, 0)) {
			free(sm->s[i].stack);
			continue;
		}
		sm->weight[n] = sm->weight[i];
		sm->s[n++] = sm->s[i];
	}
	sm->n = n;
	filter_free(&f);
	return 0;
}

/* Reads every process's samples and weighs them: a sample stands for its
 * lane's CPU time over all of the lane's samples, those a window leaves out
 * too. */
static int read_samples(const struct options *o, struct rd_profile *p, struct sampled *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < p->nprocesses; i++) {
		struct rd_sample *s, *grown;
		size_t n;
		if (rd_samples(p, i, &s, &n) != 0)
			return -1;
		if (!n)
			continue;
		grown = realloc(out->s, (out->n + n) * sizeof *grown);
		if (!grown) {
			rd_samples_free(s, n);
			return snprintf(p->err, sizeof p->err, "out of memory"), -1;
		}
		memcpy(grown + out->n, s, n * sizeof *s);
		free(s);
		out->s = grown;
		out->n += n;
	}
	out->weight = calloc(out->n + 1, sizeof *out->weight);
	if (!out->weight)
		return snprintf(p->err, sizeof p->err, "out of memory"), -1;
	for (size_t i = 0; i < out->n;) {
		/* the samples of one process, lane by lane */
		size_t j = i, nlanes = p->processes[out->s[i].process].nlanes;
		uint64_t *count = calloc(nlanes + 1, sizeof *count);
		if (!count)
			return snprintf(p->err, sizeof p->err, "out of memory"), -1;
		while (j < out->n && out->s[j].process == out->s[i].process)
			j++;
		for (size_t k = i; k < j; k++)
			if (out->s[k].thread < nlanes)
				count[out->s[k].thread]++;
		for (size_t k = i; k < j; k++) {
			uint64_t lane = out->s[k].thread;
			if (lane < nlanes && count[lane])
				out->weight[k] =
					(double)p->processes[out->s[k].process].lanes[lane].cpu_ns /
					(double)count[lane];
		}
		free(count);
		i = j;
	}
	return keep_window(o, p, out);
}

static void sampled_free(struct sampled *s)
{
	rd_samples_free(s->s, s->n);
	free(s->weight);
}

static int print_functions(const struct options *o, const struct rd_profile *p,
			   const struct sampled *sm, FILE *out)
{
	struct fn_row *rows = calloc(sm->n + 1, sizeof *rows);
	struct u64map m = {0};
	struct column cols[FC_N];
	struct table t = {out, o->format, cols, FC_N, 0};
	const char **full = NULL, **where = NULL;
	char **names = NULL;
	size_t n = 0, shown;

	if (!rows)
		return -1;
	for (size_t i = 0; i < sm->n; i++) {
		const char *leaf = leaf_of(sm->s[i].stack);
		uint64_t key = map_hash_str(leaf);
		int added;
		uint32_t *row;
		/* names that hash alike take the next keys */
		while ((row = map_slot(&m, key, (uint32_t)n, &added)) && !added &&
		       strcmp(rows[*row].name, leaf) != 0)
			key++;
		if (!row) {
			free(rows);
			map_free(&m);
			return -1;
		}
		if (added)
			rows[n++].name = leaf;
		rows[*row].samples++;
		rows[*row].cpu_ns += sm->weight[i];
	}
	map_free(&m);
	qsort(rows, n, sizeof *rows, by_samples);
	shown = o->top && o->top < n ? o->top : n;
	full = malloc((shown + 1) * sizeof *full);
	where = calloc(shown + 1, sizeof *where);
	for (size_t i = 0; full && i < shown; i++)
		full[i] = rows[i].name;
	if (!full || !where || !(names = function_names(o, 0, p, full, shown))) {
		free(rows);
		free(full);
		free(where);
		return -1;
	}
	for (size_t i = 0; i < shown; i++) {
		int64_t r = region_named(o, 0, p, rows[i].name);
		where[i] = r < 0 ? "" : o->shown[0].where[r];
	}
	memcpy(cols, fn_cols, sizeof cols);
	cols[FC_WHERE].off = !o->lines;
	cols[FC_WHERE].width = where_width(where, shown);
	table_begin(&t, "functions");
	for (size_t i = 0; i < shown; i++) {
		int64_t r = region_named(o, 0, p, rows[i].name);
		table_row(&t, (union cell[]){{.u = rows[i].samples},
					     {.u = (uint64_t)rows[i].cpu_ns},
					     {.f = 100.0 * (double)rows[i].samples / (double)sm->n},
					     {.s = where[i]},
					     {.s = names[i]},
					     {.s = r < 0 ? "" : p->regions[r].file},
					     {.u = r < 0 ? 0 : p->regions[r].line}});
	}
	table_end(&t);
	if (o->format == FMT_TEXT && shown < n)
		fprintf(out, "... %zu more functions (--top)\n", n - shown);
	names_free(names, shown);
	free(full);
	free(where);
	free(rows);
	return 0;
}

/* Returns 0; -1 when out of memory; -2 when the calls cannot be read (the reason in
 * p->err). */
static int print_regions(const struct options *o, struct rd_profile *p, const struct sampled *sm,
			 FILE *out)
{
	struct region_row *rows = calloc(p->nregions + 1, sizeof *rows);
	const char **where = calloc(p->nregions + 1, sizeof *where);
	struct column cols[RC_N];
	struct table t = {out, o->format, cols, RC_N, 0};
	size_t n = 0, shown;

	if (!rows || !where) {
		free(rows);
		free(where);
		return -1;
	}
	for (size_t r = 0; r < p->nregions; r++)
		rows[r].region = r;
	if (o->windowed) {
		/* the totals of the calls that the window keeps, as the table has them */
		struct pair_sum *sum = sum_calls(o, 0, p);
		if (!sum) {
			free(rows);
			free(where);
			return -2;
		}
		for (size_t i = 0; i < p->npairs; i++)
			rows[p->pairs[i].region].total_ns += sum[i].total;
		free(sum);
	} else {
		for (size_t i = 0; i < p->npairs; i++)
			rows[p->pairs[i].region].total_ns += p->pairs[i].total_ns;
	}
	for (size_t i = 0; i < sm->n; i++)
		if (sm->s[i].region < p->nregions) {
			rows[sm->s[i].region].samples++;
			rows[sm->s[i].region].cpu_ns += sm->weight[i];
		}
	for (size_t r = 0; r < p->nregions; r++)
		if (rows[r].samples)
			rows[n++] = rows[r];
	qsort(rows, n, sizeof *rows, by_region_samples);
	shown = o->top && o->top < n ? o->top : n;
	for (size_t i = 0; i < shown; i++)
		where[i] = o->shown[0].where[rows[i].region];
	memcpy(cols, region_cols, sizeof cols);
	cols[RC_WHERE].off = !o->lines;
	cols[RC_WHERE].width = where_width(where, shown);
	table_begin(&t, "regions");
	for (size_t i = 0; i < shown; i++) {
		const struct rd_region *g = &p->regions[rows[i].region];
		table_row(&t, (union cell[]){
				      {.u = rows[i].samples},
				      {.u = (uint64_t)rows[i].cpu_ns},
				      {.u = rows[i].total_ns},
				      {.f = rows[i].total_ns ? 100.0 * rows[i].cpu_ns /
								       (double)rows[i].total_ns
							     : NAN},
				      {.s = where[i]},
				      {.s = region_name(o, 0, rows[i].region)},
				      {.s = g->file},
				      {.u = g->line},
			      });
	}
	table_end(&t);
	if (o->format == FMT_TEXT && shown < n)
		fprintf(out, "... %zu more regions (--top)\n", n - shown);
	free(where);
	free(rows);
	return 0;
}

int view_samples(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
		 size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct sampled sm;
	double cpu = 0;
	int rc = -1;

	if (read_samples(o, p, &sm) != 0) {
		snprintf(err, cap, "%s: %s", path, p->err);
		goto out;
	}
	if (!sm.taken) {
		snprintf(err, cap, "%s: no samples (record with scope-run --sample HZ)", path);
		goto out;
	}
	for (size_t i = 0; i < sm.n; i++)
		cpu += sm.weight[i];
	if (o->format == FMT_JSON)
		json_doc_begin(out, path, p);
	if (o->format == FMT_TEXT)
		fprintf(out,
			"%s: %zu samples%s, %.3f ms of CPU time; on CPU per function (innermost "
			"frame, instrumented or not):\n\n",
			path, sm.n, o->windowed ? " between --since and --until" : "", cpu / 1e6);
	if (print_functions(o, p, &sm, out) != 0)
		goto oom;
	if (o->format == FMT_TEXT)
		fputs("\nper region (the innermost recorded call open when sampled): its time on "
		      "CPU, against its total\n\n",
		      out);
	else if (o->format == FMT_CSV)
		putc('\n', out);
	if ((rc = print_regions(o, p, &sm, out)) != 0) {
		if (rc == -1)
			goto oom;
		snprintf(err, cap, "%s: %s", path, p->err);
		rc = -1;
		goto out;
	}
	if (o->format == FMT_JSON)
		json_doc_end(out);
	rc = 0;
	goto out;
oom:
	snprintf(err, cap, "%s: out of memory", path);
out:
	sampled_free(&sm);
	return rc;
}

/* The frames of n stacks, split at ';' into copies, in order: their number
 * in *nframes, stack i's from first[i] to first[i + 1]. NULL when out of memory. */
static char **split_frames(const char *const *stack, size_t n, size_t *first, size_t *nframes)
{
	size_t k = 0, cap = 0;
	char **frames = NULL;

	for (size_t i = 0; i < n; i++) {
		cap++;
		for (const char *c = stack[i]; *c; c++)
			cap += *c == ';';
	}
	if (!(frames = calloc(cap + 1, sizeof *frames)))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *s = stack[i];
		first[i] = k;
		for (;;) {
			const char *semi = strchr(s, ';');
			size_t len = semi ? (size_t)(semi - s) : strlen(s);
			if (!(frames[k++] = strndup(s, len))) {
				names_free(frames, k);
				return NULL;
			}
			if (!semi)
				break;
			s = semi + 1;
		}
	}
	first[n] = k;
	*nframes = k;
	return frames;
}

/* Folded stacks (flamegraph.pl) of the samples: each distinct stack, its
 * frames named as the other views name them, with the CPU time its samples
 * stand for, in ns. */
int view_folded_samples(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
			size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct sampled sm;
	struct u64map m = {0};
	double *cpu = NULL;
	const char **stack = NULL;
	char **frames = NULL, **names = NULL;
	size_t n = 0, nframes = 0, *first = NULL;
	int rc = -1;

	if (read_samples(o, p, &sm) != 0) {
		snprintf(err, cap, "%s: %s", path, p->err);
		goto out;
	}
	if (!sm.taken) {
		snprintf(err, cap, "%s: no samples (record with scope-run --sample HZ)", path);
		goto out;
	}
	cpu = calloc(sm.n + 1, sizeof *cpu);
	stack = calloc(sm.n + 1, sizeof *stack);
	if (!cpu || !stack)
		goto oom;
	for (size_t i = 0; i < sm.n; i++) {
		uint64_t key = map_hash_str(sm.s[i].stack);
		int added;
		uint32_t *row;
		while ((row = map_slot(&m, key, (uint32_t)n, &added)) && !added &&
		       strcmp(stack[*row], sm.s[i].stack) != 0)
			key++;
		if (!row)
			goto oom;
		if (added)
			stack[n++] = sm.s[i].stack;
		cpu[*row] += sm.weight[i];
	}
	if (!(first = malloc((n + 1) * sizeof *first)) ||
	    !(frames = split_frames(stack, n, first, &nframes)) ||
	    !(names = function_names(o, 0, p, (const char *const *)frames, nframes)))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		for (size_t f = first[i]; f < first[i + 1]; f++)
			fprintf(out, "%s%s", f > first[i] ? ";" : "", names[f]);
		fprintf(out, " %llu\n", (unsigned long long)(cpu[i] + 0.5));
	}
	rc = 0;
	goto out;
oom:
	snprintf(err, cap, "%s: out of memory", path);
out:
	map_free(&m);
	names_free(names, nframes);
	names_free(frames, nframes);
	free(first);
	free(cpu);
	free(stack);
	sampled_free(&sm);
	return rc;
}
