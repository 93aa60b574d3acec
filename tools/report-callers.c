/* SPDX-License-Identifier: MIT */
/* scope-report --callers and --callees: who calls the regions a regex names, and what they call. */
#include "format.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* A region's calls, or those of one caller-callee edge. */
struct figures {
	uint64_t calls, total;
	int64_t self;
};

struct edge {
	uint64_t target, other; /* other: the caller or callee; nregions for none */
	struct figures f;
};

struct graph {
	struct call_filter f;
	const struct rd_profile *p;
	int callees;	       /* 0: --callers */
	unsigned char *target; /* per region: REGEX matches it */
	struct figures *own;   /* per region: the target's own calls */
	struct u64map index;   /* target * (nregions + 1) + other -> edges[] */
	struct edge *edges;
	size_t n, cap;
	uint64_t *targets; /* the regions matched that have calls, in the order shown */
	size_t ntargets;
	struct u64map open; /* open_enter's */
	int oom;
};

/*
 * A call's total counts only when it is its region's outermost on its lane,
 * in a region's figures and in an edge's alike, so that no time is counted
 * twice: fib(20) called by main gives the edge main -> fib 1 call and all of
 * fib's total, and fib -> fib 21890 calls, their self time and no total. A
 * region's callers' totals add up to its own.
 */
static void add(struct figures *f, const struct wk_frame *fr, int outermost)
{
	f->calls++;
	f->total += outermost ? fr->total_ns : 0;
	f->self += fr->self_ns;
}

static int add_edge(struct graph *g, uint64_t target, uint64_t other, const struct wk_frame *fr,
		    int outermost)
{
	int added;
	uint32_t *slot =
		map_slot(&g->index, target * (g->p->nregions + 1) + other, (uint32_t)g->n, &added);

	if (slot && added && g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		struct edge *grown =
			cap < UINT32_MAX ? realloc(g->edges, cap * sizeof *grown) : NULL;
		if (!grown)
			slot = NULL;
		else
			g->edges = grown, g->cap = cap;
	}
	if (!slot)
		return g->oom = 1, -1;
	if (added)
		g->edges[g->n++] = (struct edge){target, other, {0, 0, 0}};
	add(&g->edges[*slot].f, fr, outermost);
	return 0;
}

/* A frame's tag: 1 + the level of the nearest call kept at or below it; 0: none. */
static int graph_enter(void *ctx, struct wk_lane *l)
{
	struct graph *g = ctx;
	struct wk_frame *fr = &l->stack[l->n - 1];

	if (open_enter(&g->open, l) != 0)
		return g->oom = 1, -1;
	if (filter_call(&g->f, l->process, fr))
		fr->tag = l->n;
	else
		fr->tag = l->n > 1 ? l->stack[l->n - 2].tag : 0;
	return 0;
}

/* At the end of a kept call, its times known: the edge to its nearest kept caller. */
static int graph_leave(void *ctx, struct wk_lane *l)
{
	struct graph *g = ctx;
	const struct wk_frame *fr = &l->stack[l->n - 1];
	uint64_t up = l->n > 1 ? l->stack[l->n - 2].tag : 0, none = g->p->nregions;
	uint64_t caller = up ? l->stack[up - 1].region : none;
	int outermost = open_leave(&g->open, l);

	if (fr->tag != l->n)
		return 0;
	if (g->target[fr->region])
		add(&g->own[fr->region], fr, outermost);
	if (!g->callees && g->target[fr->region])
		return add_edge(g, fr->region, caller, fr, outermost);
	if (g->callees && caller != none && g->target[caller])
		return add_edge(g, caller, fr->region, fr, outermost);
	return 0;
}

/* ---- Sorting ------------------------------------------------------------ */

static const struct options *sort_options;

static uint64_t key_of(const struct figures *f)
{
	switch (sort_options->sort_given ? sort_options->sort : SORT_TOTAL) {
	case SORT_SELF: return f->self > 0 ? (uint64_t)f->self : 0;
	case SORT_CALLS: return f->calls;
	case SORT_NAME: return 0;
	default: return f->total;
	}
}

static const char *name_of(uint64_t region, uint64_t none)
{
	return region == none ? "(none)" : region_name(sort_options, 0, region);
}

static int by_key(const struct figures *a, const struct figures *b, uint64_t ra, uint64_t rb,
		  uint64_t none)
{
	uint64_t va = key_of(a), vb = key_of(b);
	int c;

	if (va != vb)
		return va > vb ? -1 : 1;
	c = strcmp(name_of(ra, none), name_of(rb, none));
	return c ? c : (ra > rb) - (ra < rb);
}

static const struct graph *sort_graph;

static int by_target(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return by_key(&sort_graph->own[a], &sort_graph->own[b], a, b, sort_graph->p->nregions);
}

/* Targets by their own figures, then each target's edges by theirs. */
static int by_edge(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;
	const struct figures *own = sort_graph->own;
	uint64_t none = sort_graph->p->nregions;
	int c = a->target == b->target
			? 0
			: by_key(&own[a->target], &own[b->target], a->target, b->target, none);

	return c ? c : by_key(&a->f, &b->f, a->other, b->other, none);
}

/* ---- Printing ----------------------------------------------------------- */

static const char *where_of(const struct options *o, uint64_t region, uint64_t none)
{
	return region == none ? "" : o->shown[0].where[region];
}

static int where_width(const struct options *o, const struct graph *g)
{
	size_t w = strlen("location");

	for (size_t i = 0; i < g->n; i++) {
		size_t a = strlen(where_of(o, g->edges[i].target, g->p->nregions)),
		       b = strlen(where_of(o, g->edges[i].other, g->p->nregions));
		w = a > w ? a : w;
		w = b > w ? b : w;
	}
	return w > 4096 ? 4096 : (int)w;
}

static void text_line(FILE *out, const struct options *o, int width, const struct figures *f,
		      const char *where, const char *name)
{
	char b[2][32];

	fprintf(out, "%11s  %11s  %10llu  ", fmt_ns(b[0], 32, (double)f->total),
		fmt_ns(b[1], 32, (double)(f->self > 0 ? f->self : 0)),
		(unsigned long long)f->calls);
	if (o->lines)
		fprintf(out, "%-*s  ", width, where);
	fprintf(out, "%s\n", name);
}

/* The edges of target t, from edges[*j] on: their number; *j moves past them. */
static size_t edges_of(const struct graph *g, uint64_t t, size_t *j)
{
	size_t from = *j;

	while (*j < g->n && g->edges[*j].target == t)
		(*j)++;
	return *j - from;
}

static void print_text(const struct options *o, const struct graph *g, FILE *out)
{
	const char *what = g->callees ? "callee" : "caller";
	uint64_t none = g->p->nregions;
	int width = where_width(o, g);
	char b[2][32];

	for (size_t i = 0, j = 0; i < g->ntargets; i++) {
		uint64_t t = g->targets[i];
		const struct figures *own = &g->own[t];
		size_t from = j, n = edges_of(g, t, &j);
		const char *at = o->lines ? where_of(o, t, none) : "";
		fprintf(out, "\n%ss of %s%s%s: %llu calls, total %s, self %s\n", what,
			name_of(t, none), *at ? " at " : "", at, (unsigned long long)own->calls,
			fmt_ns(b[0], 32, (double)own->total),
			fmt_ns(b[1], 32, (double)(own->self > 0 ? own->self : 0)));
		if (!n) {
			fprintf(out, "no %ss\n", what);
			continue;
		}
		fprintf(out, "%11s  %11s  %10s  ", "total", "self", "calls");
		if (o->lines)
			fprintf(out, "%-*s  ", width, "location");
		fprintf(out, "%s\n", what);
		for (size_t k = from; k < j; k++) {
			const struct edge *e = &g->edges[k];
			text_line(out, o, width, &e->f, where_of(o, e->other, none),
				  name_of(e->other, none));
		}
	}
}

static void print_csv(const struct graph *g, FILE *out)
{
	uint64_t none = g->p->nregions;

	fprintf(out, "region,%s,calls,total_ns,self_ns,file,line\n",
		g->callees ? "callee" : "caller");
	for (size_t i = 0; i < g->n; i++) {
		const struct edge *e = &g->edges[i];
		const struct figures *f = &e->f;
		csv_string(out, name_of(e->target, none));
		putc(',', out);
		csv_string(out, name_of(e->other, none));
		fprintf(out, ",%llu,%llu,%llu,", (unsigned long long)f->calls,
			(unsigned long long)f->total,
			(unsigned long long)(f->self > 0 ? f->self : 0));
		csv_string(out, e->other == none ? "" : g->p->regions[e->other].file);
		fprintf(out, ",%llu\n",
			(unsigned long long)(e->other == none ? 0 : g->p->regions[e->other].line));
	}
}

static void json_region(FILE *out, const struct graph *g, uint64_t region, const struct figures *f)
{
	uint64_t none = g->p->nregions;

	fputs("{\"region\":", out);
	json_string(out, name_of(region, none));
	fputs(",\"file\":", out);
	json_string(out, region == none ? "" : g->p->regions[region].file);
	fprintf(out, ",\"line\":%llu,\"calls\":%llu,\"total_ns\":%llu,\"self_ns\":%llu",
		(unsigned long long)(region == none ? 0 : g->p->regions[region].line),
		(unsigned long long)f->calls, (unsigned long long)f->total,
		(unsigned long long)(f->self > 0 ? f->self : 0));
}

static void print_json(const struct graph *g, FILE *out)
{
	const char *key = g->callees ? "callees" : "callers";

	fprintf(out, ",\"%s\":[", key);
	for (size_t i = 0, j = 0; i < g->ntargets; i++) {
		uint64_t t = g->targets[i];
		size_t from = j;
		edges_of(g, t, &j);
		fputs(i ? "," : "", out);
		json_region(out, g, t, &g->own[t]);
		fprintf(out, ",\"%s\":[", key);
		for (size_t k = from; k < j; k++) {
			fputs(k > from ? "," : "", out);
			json_region(out, g, g->edges[k].other, &g->edges[k].f);
			putc('}', out);
		}
		fputs("]}", out);
	}
	putc(']', out);
}

/* ---- The views ---------------------------------------------------------- */

static int walk_all(struct graph *g, const struct options *o, struct rd_profile *p)
{
	struct wk_visitor v = {.ctx = g, .enter = graph_enter, .leave = graph_leave};

	for (size_t i = 0; i < p->nprocesses; i++) {
		if (!want_process(o, p, i) ||
		    (o->thread >= 0 && (uint64_t)o->thread >= p->processes[i].nlanes))
			continue;
		v.overhead_ns = call_cost(o, 0);
		if (wk_process(p, i, o->thread, &v) != 0) {
			if (g->oom)
				snprintf(p->err, sizeof p->err, "out of memory");
			return -1;
		}
	}
	return 0;
}

static int graph_init(struct graph *g, const struct options *o, struct rd_profile *p)
{
	if (p->nregions >= UINT32_MAX) {
		snprintf(p->err, sizeof p->err, "too many regions");
		return -1;
	}
	g->p = p;
	g->target = calloc(p->nregions + 1, 1);
	g->own = calloc(p->nregions + 1, sizeof *g->own);
	g->targets = calloc(p->nregions + 1, sizeof *g->targets);
	if (!g->target || !g->own || !g->targets || filter_init(&g->f, o, 0, p) != 0) {
		snprintf(p->err, sizeof p->err, "out of memory");
		return -1;
	}
	for (size_t r = 0; r < p->nregions; r++)
		g->target[r] = (unsigned char)region_matches(o, &o->target, p, 0, r);
	return 0;
}

static void graph_free(struct graph *g)
{
	filter_free(&g->f);
	free(g->target);
	free(g->own);
	free(g->targets);
	free(g->edges);
	map_free(&g->index);
	map_free(&g->open);
}

static void heading(const struct options *o, const struct graph *g, const char *path, FILE *out)
{
	const struct rd_profile *p = g->p;
	size_t procs = 0, targets = 0;
	uint64_t wall = selected_wall(o, p);
	char b[32];

	for (size_t i = 0; i < p->nprocesses; i++)
		procs += want_process(o, p, i);
	targets = g->ntargets;
	fprintf(out, "%s: %s of %zu region%s in %zu process%s", path,
		g->callees ? "callees" : "callers", targets, targets == 1 ? "" : "s", procs,
		procs == 1 ? "" : "es");
	if (o->thread >= 0)
		fprintf(out, ", thread lane %lld", (long long)o->thread);
	fprintf(out, ", wall %s", fmt_ns(b, sizeof b, (double)wall));
	print_recording(o, 0, p, -1, wall, out);
	if (!targets)
		fputs("\nno call of a region that matches\n", out);
}

static int view_graph(const struct options *o, struct rd_profile *p, int callees, FILE *out,
		      char *err, size_t cap)
{
	const char *path = o->files[0];
	struct graph g = {.callees = callees};
	int rc = graph_init(&g, o, p);

	if (rc == 0)
		rc = walk_all(&g, o, p);
	if (rc == 0) {
		sort_options = o;
		sort_graph = &g;
		for (size_t r = 0; r < p->nregions; r++)
			if (g.own[r].calls)
				g.targets[g.ntargets++] = r;
		if (g.ntargets)
			qsort(g.targets, g.ntargets, sizeof *g.targets, by_target);
		if (g.n)
			qsort(g.edges, g.n, sizeof *g.edges, by_edge);
		if (o->format == FMT_TEXT) {
			heading(o, &g, path, out);
			print_text(o, &g, out);
		} else if (o->format == FMT_CSV) {
			print_csv(&g, out);
		} else {
			json_doc_begin(out, path, p);
			json_recording(o, 0, p, -1, selected_wall(o, p), out);
			print_json(&g, out);
			json_doc_end(out);
		}
	}
	graph_free(&g);
	if (rc != 0)
		snprintf(err, cap, "%s: %s", path, p->err);
	return rc;
}

int view_callers(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
		 size_t cap)
{
	return view_graph(o, in[0], 0, out, err, cap);
}

int view_callees(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
		 size_t cap)
{
	return view_graph(o, in[0], 1, out, err, cap);
}
