/* SPDX-License-Identifier: MIT */
/* scope-report --html: one self-contained page of a profile, its size bounded whatever the calls.
 */
#define _GNU_SOURCE
#include "format.h"
#include "report.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

/*
 * What the page draws at most; the rest is summed, and the page says so.
 * With every limit reached the page is a few MiB: some 200 bytes a table
 * row, 60 a flame-graph node, 40 a bar, 4 a timeline bin.
 */
#define HTML_ROWS      1000  /* regions in the table */
#define HTML_NODES     3000  /* call paths in the flame graph */
#define HTML_LANES     256   /* lanes in the timeline */
#define HTML_BARS      40000 /* calls drawn as bars, over all lanes */
#define HTML_LANE_BARS 4000  /* on one lane */
#define HTML_BINS      400   /* a lane's strip of where its calls started */
#define HTML_RANKS     1024  /* columns of the ranks' heat map */
#define HTML_HOT       20    /* regions in it */

/* The page's script and style (tools/html/, made into arrays by cmake/Embed.cmake). */
extern const char embed_report_js[], embed_report_css[];

#define NO_REF UINT32_MAX

/* ---- Text --------------------------------------------------------------- */

static void html_text(FILE *out, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: putc(*s, out);
		}
}

/* JSON inside <script>: a '<' only occurs in strings, where \u003c says the same
 * and "</script>" in a region's name cannot end the element. */
static void copy_json(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '<')
			fputs("\\u003c", out);
		else
			putc(s[i], out);
}

/* A cell with a number to sort by and text to show. */
static void num_cell(FILE *out, double v, const char *shown)
{
	fprintf(out, "<td data-v=\"%.17g\">", v);
	html_text(out, shown);
	fputs("</td>", out);
}

static void ns_cell(FILE *out, double ns)
{
	char buf[48];
	num_cell(out, ns, fmt_ns(buf, sizeof buf, ns));
}

/* ---- The state of a page ------------------------------------------------ */

/* A call drawn as a bar: ns since the job's start. */
struct bar {
	uint64_t start, duration;
	uint32_t region, depth;
};

/* A lane of the timeline: its longest calls (a min-heap by duration) and a
 * count of the calls that started in each bin. */
struct tl_lane {
	size_t process, lane; /* SIZE_MAX: the row of the lanes not drawn */
	uint64_t calls;
	struct bar *heap;
	size_t n;
	uint64_t bins[HTML_BINS];
};

struct html {
	const struct options *o;
	struct rd_profile *p;
	struct call_filter f;
	struct tl_lane *lanes; /* drawn lanes, then the row of the others */
	size_t nlanes;	       /* drawn */
	size_t other_lanes;    /* lanes summed in the last row */
	size_t *first;	       /* per process: its first lane in lanes, SIZE_MAX when none */
	size_t from;	       /* the first lane of a process shown: --thread, else 0 */
	size_t per_lane;       /* bars a lane keeps */
	uint64_t span;	       /* ns from the job's start to its last end */
	uint32_t *ref;	       /* per region: its index in the page's list, NO_REF */
	uint64_t *refs;	       /* the page's list of regions */
	size_t nrefs;
	int oom;
};

/* The page's index of region r, given on first use. */
static uint32_t ref(struct html *h, uint64_t r)
{
	if (h->ref[r] == NO_REF) {
		h->ref[r] = (uint32_t)h->nrefs;
		h->refs[h->nrefs++] = r;
	}
	return h->ref[r];
}

/* ---- The timeline ------------------------------------------------------- */

static void heap_down(struct bar *b, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct bar t;
		if (l < n && b[l].duration < b[m].duration)
			m = l;
		if (l + 1 < n && b[l + 1].duration < b[m].duration)
			m = l + 1;
		if (m == i)
			return;
		t = b[i], b[i] = b[m], b[m] = t;
		i = m;
	}
}

static void heap_up(struct bar *b, size_t i)
{
	while (i && b[(i - 1) / 2].duration > b[i].duration) {
		struct bar t = b[i];
		b[i] = b[(i - 1) / 2], b[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/* Keeps the call if it is among the lane's per_lane longest so far. */
static void keep_bar(struct html *h, struct tl_lane *l, struct bar b)
{
	if (l->n < h->per_lane) {
		l->heap[l->n] = b;
		heap_up(l->heap, l->n++);
	} else if (b.duration > l->heap[0].duration) {
		l->heap[0] = b;
		heap_down(l->heap, l->n, 0);
	}
}

static int tl_enter(void *ctx, struct wk_lane *wl)
{
	struct html *h = ctx;
	const struct wk_frame *f = &wl->stack[wl->n - 1];
	size_t i = h->first[wl->process] == SIZE_MAX ? SIZE_MAX
						     : h->first[wl->process] + wl->lane - h->from;
	struct tl_lane *l;
	uint64_t at;

	if (!filter_call(&h->f, wl->process, f))
		return 0;
	l = &h->lanes[i < h->nlanes ? i : h->nlanes];
	at = filter_at(&h->f, wl->process, f->start);
	l->calls++;
	l->bins[at >= h->span ? HTML_BINS - 1
			      : (size_t)((long double)at * HTML_BINS / (long double)h->span)]++;
	if (i < h->nlanes)
		keep_bar(h, l,
			 (struct bar){at, f->duration, (uint32_t)f->region, (uint32_t)(wl->n - 1)});
	return 0;
}

/* Whether process i is shown, and the lanes of it that are. */
static int lanes_of(const struct options *o, const struct rd_profile *p, size_t i, size_t *from,
		    size_t *to)
{
	size_t n = p->processes[i].nlanes;

	if (!want_process(o, p, i) || (o->thread >= 0 && (uint64_t)o->thread >= n))
		return 0;
	*from = o->thread >= 0 ? (size_t)o->thread : 0;
	*to = o->thread >= 0 ? *from + 1 : n;
	return 1;
}

/* Chooses the lanes drawn and the job's span; returns 0, or -1 (memory). */
static int tl_init(struct html *h)
{
	const struct rd_profile *p = h->p;
	size_t total = 0, from, to;
	uint64_t end;

	h->first = malloc((p->nprocesses + 1) * sizeof *h->first);
	if (!h->first)
		return -1;
	for (size_t i = 0; i < p->nprocesses; i++) {
		h->first[i] = SIZE_MAX;
		if (!lanes_of(h->o, p, i, &from, &to))
			continue;
		h->first[i] = total; /* its lane k is lanes[first + k - from] */
		h->from = from;
		total += to - from;
		end = filter_at(&h->f, i, p->processes[i].end - p->processes[i].start);
		if (end > h->span)
			h->span = end;
	}
	if (!h->span)
		h->span = 1;
	h->nlanes = total < HTML_LANES ? total : HTML_LANES;
	h->other_lanes = total - h->nlanes;
	h->per_lane = h->nlanes ? HTML_BARS / h->nlanes : 0;
	if (h->per_lane > HTML_LANE_BARS)
		h->per_lane = HTML_LANE_BARS;
	h->lanes = calloc(h->nlanes + 1, sizeof *h->lanes);
	if (!h->lanes)
		return -1;
	for (size_t i = 0, k = 0; i < p->nprocesses; i++) {
		if (!lanes_of(h->o, p, i, &from, &to))
			continue;
		for (size_t j = from; j < to && k < h->nlanes; j++, k++) {
			h->lanes[k].process = i;
			h->lanes[k].lane = j;
			if (!(h->lanes[k].heap = malloc(h->per_lane * sizeof(struct bar))))
				return -1;
		}
	}
	h->lanes[h->nlanes].process = SIZE_MAX;
	return 0;
}

static int tl_walk(struct html *h)
{
	struct wk_visitor v = {.ctx = h, .enter = tl_enter};

	for (size_t i = 0; i < h->p->nprocesses; i++)
		if (h->first[i] != SIZE_MAX && wk_process(h->p, i, h->o->thread, &v) != 0)
			return -1;
	return 0;
}

static void tl_free(struct html *h)
{
	for (size_t i = 0; h->lanes && i <= h->nlanes; i++)
		free(h->lanes[i].heap);
	free(h->lanes);
	free(h->first);
}

static int by_start(const void *a, const void *b)
{
	const struct bar *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* "name (pid 123, rank 2) / lane 1: worker (tid 125)" */
static void lane_label(FILE *j, const struct rd_profile *p, const struct tl_lane *l, size_t others)
{
	char *s = NULL, *exe;
	const struct rd_process *pr;
	char rank[32] = "";

	if (l->process == SIZE_MAX) {
		if (asprintf(&s, "%zu more lanes, summed", others) >= 0)
			json_string(j, s);
		free(s);
		return;
	}
	pr = &p->processes[l->process];
	exe = strdup(pr->executable);
	if (pr->rank >= 0)
		snprintf(rank, sizeof rank, ", rank %lld", (long long)pr->rank);
	if (exe && asprintf(&s, "%s (pid %lld%s) / lane %zu: %s (tid %llu)", basename(exe),
			    (long long)pr->pid, rank, l->lane, pr->lanes[l->lane].name,
			    (unsigned long long)pr->lanes[l->lane].tid) >= 0)
		json_string(j, s);
	else
		json_string(j, "?");
	free(s);
	free(exe);
}

static void tl_json(struct html *h, FILE *j, uint64_t *drawn, uint64_t *calls)
{
	fprintf(j, ",\"span\":%llu,\"lanes\":[", (unsigned long long)h->span);
	for (size_t i = 0; i <= h->nlanes; i++) {
		struct tl_lane *l = &h->lanes[i];
		if (i == h->nlanes && !h->other_lanes)
			break;
		fputs(i ? ",\n{\"label\":" : "\n{\"label\":", j);
		lane_label(j, h->p, l, h->other_lanes);
		fprintf(j, ",\"calls\":%llu,\"bars\":[", (unsigned long long)l->calls);
		if (l->n) /* the row of the lanes not drawn has no bars */
			qsort(l->heap, l->n, sizeof *l->heap, by_start);
		for (size_t b = 0; b < l->n; b++)
			fprintf(j, "%s[%llu,%llu,%u,%u]", b ? "," : "",
				(unsigned long long)l->heap[b].start,
				(unsigned long long)l->heap[b].duration, ref(h, l->heap[b].region),
				l->heap[b].depth);
		fputs("],\"bins\":[", j);
		for (size_t b = 0; b < HTML_BINS; b++)
			fprintf(j, "%s%llu", b ? "," : "", (unsigned long long)l->bins[b]);
		fputs("]}", j);
		*drawn += l->n;
		*calls += l->calls;
	}
	fputs("]", j);
}

/* ---- The flame graph ---------------------------------------------------- */

static int by_u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* The least total a path needs to be drawn: 0.1% of all, and no more than
 * HTML_NODES paths. */
static uint64_t flame_threshold(const struct call_tree *t, uint64_t all)
{
	uint64_t thr = all / 1000, *totals;

	if (t->n <= HTML_NODES)
		return thr;
	if (!(totals = malloc(t->n * sizeof *totals)))
		return UINT64_MAX;
	for (size_t i = 0; i < t->n; i++)
		totals[i] = t->nodes[i].total;
	qsort(totals, t->n, sizeof *totals, by_u64_desc);
	if (totals[HTML_NODES - 1] + 1 > thr)
		thr = totals[HTML_NODES - 1] + 1;
	free(totals);
	return thr;
}

/*
 * The nodes as [parent, region, total, self, calls], parents first; the
 * paths under the threshold below each drawn node summed into one node
 * [parent, -2, total, self, calls, paths]. Returns the paths summed.
 */
static int flame_json(struct html *h, const struct call_tree *t, FILE *j, uint64_t *summed,
		      uint64_t *thr_out)
{
	uint32_t *at = malloc((t->n + 1) * sizeof *at);
	struct call_node *rest = calloc(t->n + 1, sizeof *rest);
	uint64_t *paths = calloc(t->n + 1, sizeof *paths), all = 0, thr;
	size_t k = 0;

	if (!at || !rest || !paths) {
		free(at), free(rest), free(paths);
		return -1;
	}
	for (size_t i = 1; i < t->n; i++)
		if (t->nodes[i].parent == 0)
			all += t->nodes[i].total;
	thr = *thr_out = flame_threshold(t, all);
	fputs(",\"flame\":{\"nodes\":[", j);
	for (size_t i = 0; i < t->n; i++) {
		const struct call_node *x = &t->nodes[i];
		at[i] = NO_REF;
		if (i == 0) {
			fputs("[-1,-1,0,0,0]", j);
			at[i] = (uint32_t)k++;
			continue;
		}
		if (at[x->parent] == NO_REF)
			continue; /* under a summed path */
		if (x->total < thr) {
			rest[x->parent].total += x->total;
			rest[x->parent].self += x->self;
			rest[x->parent].calls += x->calls;
			paths[x->parent]++;
			(*summed)++;
			continue;
		}
		fprintf(j, ",\n[%u,%u,%llu,%llu,%llu]", at[x->parent], ref(h, x->region),
			(unsigned long long)x->total, (unsigned long long)x->self,
			(unsigned long long)x->calls);
		at[i] = (uint32_t)k++;
	}
	for (size_t i = 0; i < t->n; i++)
		if (paths[i] && at[i] != NO_REF)
			fprintf(j, ",\n[%u,-2,%llu,%llu,%llu,%llu]", at[i],
				(unsigned long long)rest[i].total, (unsigned long long)rest[i].self,
				(unsigned long long)rest[i].calls, (unsigned long long)paths[i]);
	fputs("]}", j);
	free(at), free(rest), free(paths);
	return 0;
}

/* ---- The regions -------------------------------------------------------- */

struct row {
	uint64_t region, calls, total, total_all, self, min, max;
};

static int by_self(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	return x->self < y->self ? 1 : x->self > y->self ? -1 : 0;
}

/* Each region's figures in the processes chosen, by self time; *n rows. */
static struct row *region_rows(const struct options *o, struct rd_profile *p, size_t *n)
{
	struct pair_sum *sum = from_calls(o) ? sum_calls(o, 0, p) : NULL;
	unsigned char *wanted = region_mask(o, 0, p);
	struct row *rows = calloc(p->nregions + 1, sizeof *rows);
	size_t kept = 0;

	if ((from_calls(o) && !sum) || !wanted || !rows) {
		free(sum), free(wanted), free(rows);
		return NULL;
	}
	for (size_t i = 0; i < p->nregions; i++)
		rows[i].region = i, rows[i].min = UINT64_MAX;
	for (size_t i = 0; i < p->npairs; i++) {
		const struct rd_pair *r = &p->pairs[i];
		struct row *w = &rows[r->region];
		struct pair_sum s = {.calls = r->count,
				     .total = r->total_ns,
				     .total_all = r->total_all_ns,
				     .self = (int64_t)r->self_ns,
				     .min = r->min_ns,
				     .max = r->max_ns};
		if (!want_process(o, p, r->process) || !wanted[r->region])
			continue;
		if (sum)
			s = sum[i];
		if (!s.calls)
			continue;
		w->calls += s.calls;
		w->total += s.total;
		w->total_all += s.total_all;
		w->self += s.self > 0 ? (uint64_t)s.self : 0;
		w->min = s.min < w->min ? s.min : w->min;
		w->max = s.max > w->max ? s.max : w->max;
	}
	for (size_t i = 0; i < p->nregions; i++)
		if (rows[i].calls)
			rows[kept++] = rows[i];
	qsort(rows, kept, sizeof *rows, by_self);
	free(sum), free(wanted);
	*n = kept;
	return rows;
}

static void region_row(FILE *out, const struct row *r, double wall, const char *name,
		       const char *kind, const char *where, int other)
{
	char pct[32];
	double share = wall > 0 ? 100.0 * (double)r->self / wall : 0;

	fputs(other ? "<tr class=\"other\">" : "<tr>", out);
	num_cell(out, (double)r->calls,
		 (snprintf(pct, sizeof pct, "%llu", (unsigned long long)r->calls), pct));
	ns_cell(out, (double)r->total);
	ns_cell(out, (double)r->self);
	ns_cell(out, r->calls ? (double)r->total_all / (double)r->calls : 0);
	ns_cell(out, other ? 0 : (double)r->min);
	ns_cell(out, (double)r->max);
	snprintf(pct, sizeof pct, "%.1f%%", share);
	fprintf(out, "<td data-v=\"%.6g\"><span class=\"bar-pct\" style=\"width:%.0fpx\"></span> ",
		share, share > 100 ? 60 : 0.6 * share);
	html_text(out, pct);
	fputs("</td><td class=\"name region\">", out);
	html_text(out, name);
	fputs("</td><td class=\"name\">", out);
	html_text(out, kind);
	fputs("</td><td class=\"name\">", out);
	html_text(out, where);
	fputs("</td></tr>\n", out);
}

static int regions_html(FILE *out, const struct options *o, struct rd_profile *p)
{
	size_t n = 0;
	struct row *rows = region_rows(o, p, &n), rest = {0};
	double wall = (double)selected_lanes_wall(o, p);
	char label[64];

	if (!rows)
		return -1;
	fputs("<h2 id=\"regions\">Regions</h2>\n<p class=\"note\">", out);
	if (n > HTML_ROWS)
		fprintf(out,
			"The %d regions with the most self time; the other %zu are summed in the "
			"last row. ",
			HTML_ROWS, n - HTML_ROWS);
	fputs("A click on a heading sorts by it. <i>total</i> sums a region's outermost calls, "
	      "<i>self</i> its calls less the recorded calls they made; <i>share</i> is self time "
	      "over the wall time of the threads shown.</p>\n",
	      out);
	fputs("<div class=\"scroll\"><table class=\"sortable\" id=\"region-table\" "
	      "data-view=\"regions\"><thead><tr>"
	      "<th data-type=\"num\">calls</th><th data-type=\"num\">total</th>"
	      "<th data-type=\"num\" class=\"sorted\">self</th><th data-type=\"num\">mean</th>"
	      "<th data-type=\"num\">min</th><th data-type=\"num\">max</th>"
	      "<th data-type=\"num\">share</th><th class=\"name\">region</th>"
	      "<th class=\"name\">kind</th><th class=\"name\">file:line</th></tr></thead><tbody>\n",
	      out);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		if (i >= HTML_ROWS) {
			rest.calls += r->calls, rest.total += r->total, rest.self += r->self;
			rest.total_all += r->total_all;
			rest.max = r->max > rest.max ? r->max : rest.max;
			continue;
		}
		region_row(out, r, wall, region_name(o, 0, r->region), p->regions[r->region].kind,
			   o->shown[0].where[r->region], 0);
	}
	if (n > HTML_ROWS) {
		snprintf(label, sizeof label, "%zu other regions", n - HTML_ROWS);
		region_row(out, &rest, wall, label, "", "", 1);
	}
	fputs("</tbody></table></div>\n", out);
	free(rows);
	return 0;
}

/* ---- The ranks ---------------------------------------------------------- */

struct hot {
	uint64_t region;
	double lost; /* max - mean, ns */
};

static int by_lost(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;
	return x->lost < y->lost ? 1 : x->lost > y->lost ? -1 : 0;
}

/*
 * The regions whose self time differs most across the ranks (the most
 * above the mean on its slowest rank), as a table and as the heat map's
 * data. Ranks are columns; past HTML_RANKS, neighbours share one (their
 * mean). Nothing for a run of one rank or none.
 */
static int ranks_html(FILE *out, FILE *j, struct html *h)
{
	const struct options *o = h->o;
	struct rd_profile *p = h->p;
	int64_t top = -1;
	size_t nranks, cols, group, nhot = 0;
	double *self = NULL;
	unsigned char *wanted;
	struct hot *hot;

	for (size_t i = 0; i < p->nprocesses; i++)
		if (want_process(o, p, i) && p->processes[i].rank > top)
			top = p->processes[i].rank;
	if (top < 1) {
		fputs(",\"imbalance\":null", j);
		return 0;
	}
	nranks = (size_t)top + 1;
	group = (nranks + HTML_RANKS - 1) / HTML_RANKS;
	cols = (nranks + group - 1) / group;
	wanted = region_mask(o, 0, p);
	self = calloc(p->nregions * nranks + 1, sizeof *self);
	hot = calloc(p->nregions + 1, sizeof *hot);
	if (!wanted || !self || !hot) {
		free(wanted), free(self), free(hot);
		return -1;
	}
	for (size_t i = 0; i < p->npairs; i++) {
		const struct rd_pair *r = &p->pairs[i];
		int64_t rank = p->processes[r->process].rank;
		if (rank >= 0 && want_process(o, p, r->process) && wanted[r->region])
			self[r->region * nranks + (size_t)rank] += (double)r->self_ns;
	}
	for (size_t r = 0; r < p->nregions; r++) {
		double sum = 0, max = 0;
		for (size_t k = 0; k < nranks; k++) {
			sum += self[r * nranks + k];
			max = self[r * nranks + k] > max ? self[r * nranks + k] : max;
		}
		if (sum > 0)
			hot[nhot++] = (struct hot){r, max - sum / (double)nranks};
	}
	qsort(hot, nhot, sizeof *hot, by_lost);
	if (nhot > HTML_HOT)
		nhot = HTML_HOT;
	fputs("<h2 id=\"ranks\">Ranks</h2>\n<p class=\"note\">", out);
	fprintf(out,
		"%zu ranks. The %zu regions whose self time is most above its mean on the slowest "
		"rank; <i>imbalance</i> is the share of the slowest rank's time that the others "
		"spent elsewhere ((max &minus; mean) / max). In the map each rank is a column, "
		"blue below the region's mean, red above.",
		nranks, nhot);
	if (group > 1)
		fprintf(out, " Each column sums %zu neighbouring ranks (their mean).", group);
	fputs("</p>\n<div class=\"scroll\"><table class=\"sortable\" id=\"rank-table\" "
	      "data-view=\"ranks\"><thead><tr>"
	      "<th data-type=\"num\">min</th><th data-type=\"num\">mean</th>"
	      "<th data-type=\"num\">max</th><th data-type=\"num\">on rank</th>"
	      "<th data-type=\"num\" class=\"sorted\">imbalance</th><th class=\"name\">region</th>"
	      "</tr></thead><tbody>\n",
	      out);
	fprintf(j, ",\"imbalance\":{\"group\":%zu,\"ranks\":[", group);
	for (size_t c = 0; c < cols; c++)
		fprintf(j, "%s%zu", c ? "," : "", c * group);
	fputs("],\"rows\":[", j);
	for (size_t i = 0; i < nhot; i++) {
		const double *v = &self[hot[i].region * nranks];
		double min = v[0], max = v[0], sum = 0;
		size_t at = 0;
		char buf[32];
		for (size_t k = 0; k < nranks; k++) {
			sum += v[k];
			min = v[k] < min ? v[k] : min;
			if (v[k] > max)
				max = v[k], at = k;
		}
		fputs("<tr>", out);
		ns_cell(out, min);
		ns_cell(out, sum / (double)nranks);
		ns_cell(out, max);
		num_cell(out, (double)at, (snprintf(buf, sizeof buf, "%zu", at), buf));
		snprintf(buf, sizeof buf, "%.1f%%", max > 0 ? 100 * hot[i].lost / max : 0);
		num_cell(out, max > 0 ? hot[i].lost / max : 0, buf);
		fputs("<td class=\"name region\">", out);
		html_text(out, region_name(o, 0, hot[i].region));
		fputs("</td></tr>\n", out);
		fprintf(j, "%s{\"region\":%u,\"values\":[", i ? "," : "", ref(h, hot[i].region));
		for (size_t c = 0; c < cols; c++) {
			double s = 0;
			size_t n = 0;
			for (size_t k = c * group; k < nranks && k < (c + 1) * group; k++)
				s += v[k], n++;
			fprintf(j, "%s%.0f", c ? "," : "", n ? s / (double)n : 0);
		}
		fputs("]}", j);
	}
	fputs("]}", j);
	fputs("</tbody></table></div>\n<div id=\"heat\"></div>\n", out);
	free(wanted), free(self), free(hot);
	return 0;
}

/* ---- The page ----------------------------------------------------------- */

static void meta_row(FILE *out, const char *key, const char *value)
{
	if (!value || !*value)
		return;
	fputs("<tr><td>", out);
	html_text(out, key);
	fputs("</td><td>", out);
	html_text(out, value);
	fputs("</td></tr>\n", out);
}

static void meta_html(FILE *out, const char *path, const struct rd_profile *p)
{
	char buf[128], a[48], b[48];
	uint64_t lanes = 0;

	for (size_t i = 0; i < p->nprocesses; i++)
		lanes += p->processes[i].nlanes;
	fputs("<table class=\"meta\" id=\"metadata\">\n", out);
	meta_row(out, "profile", path);
	meta_row(out, "command", p->meta.command_line);
	meta_row(out, "host", p->meta.host);
	meta_row(out, "started (UTC)", p->meta.start_time_utc);
	snprintf(buf, sizeof buf, "%s wall, %s CPU",
		 fmt_ns(a, sizeof a, p->meta.wall_seconds * 1e9),
		 fmt_ns(b, sizeof b, p->meta.cpu_seconds * 1e9));
	meta_row(out, "time", buf);
	if (p->meta.peak_rss_bytes > 0)
		meta_row(out, "peak memory",
			 fmt_bytes(buf, sizeof buf, (uint64_t)p->meta.peak_rss_bytes));
	snprintf(buf, sizeof buf, "%zu processes, %llu thread lanes%s", p->nprocesses,
		 (unsigned long long)lanes, p->meta.mpi_ranks > 0 ? ", an MPI job" : "");
	if (p->meta.mpi_ranks > 0)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " of %lld ranks",
			 (long long)p->meta.mpi_ranks);
	meta_row(out, "processes", buf);
	snprintf(buf, sizeof buf, "%llu calls of %zu regions", (unsigned long long)p->nevents,
		 p->nregions);
	meta_row(out, "calls", buf);
	if (p->meta.lost_records) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)p->meta.lost_records);
		meta_row(out, "records lost", buf);
	}
	meta_row(out, "clock", p->meta.clock_source);
	meta_row(out, "report", "scope-report " SCOPE_VERSION);
	fputs("</table>\n", out);
}

/* The headings and notes of the flame graph and the timeline, or why there are none. */
static void pictures_html(FILE *out, const struct html *h, uint64_t summed, uint64_t thr,
			  uint64_t drawn, uint64_t calls)
{
	char a[48];

	if (!h->p->has_events) {
		fputs("<p class=\"note\" id=\"no-events\">This profile holds each region's totals "
		      "but not its calls (/events): no flame graph or timeline.</p>\n",
		      out);
		return;
	}
	fputs("<h2 id=\"flame-graph\">Flame graph</h2>\n<p class=\"note\">The call tree of every "
	      "process and lane shown, merged: callers above callees, each as wide as its "
	      "total time. A click on a block zooms into it, one on a caller above zooms out.",
	      out);
	if (summed)
		fprintf(out,
			" %llu call paths under %s each are summed into one block per caller "
			"(&ldquo;smaller call paths&rdquo;).",
			(unsigned long long)summed, fmt_ns(a, sizeof a, (double)thr));
	fputs("</p>\n<div id=\"flame\"></div>\n", out);
	fputs("<h2 id=\"timeline-head\">Timeline</h2>\n<p class=\"note\">", out);
	fprintf(out,
		"Each lane of each process: its longest calls as bars (%llu of %llu calls are "
		"drawn, at most %zu a lane), stacked by call depth, and under them a strip of "
		"where all its calls started (darker: more). Wheel to zoom, drag to move.",
		(unsigned long long)drawn, (unsigned long long)calls, h->per_lane);
	if (h->other_lanes)
		fprintf(out,
			" The first %zu lanes are drawn; the other %zu are summed in the last row.",
			h->nlanes, h->other_lanes);
	fputs("</p>\n<div class=\"controls\" id=\"timeline-controls\"></div>\n"
	      "<div class=\"timeline\" id=\"timeline\"></div>\n",
	      out);
}

/* The JSON the script draws from, escaped for <script>. */
static int data_html(FILE *out, struct html *h, const struct call_tree *t, const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *j = open_memstream(&buf, &len);
	uint64_t summed = 0, thr = 0, drawn = 0, calls = 0;
	int rc = 0;

	if (!j)
		return -1;
	fputs("{\"profile\":", j);
	json_string(j, path);
	tl_json(h, j, &drawn, &calls);
	rc = flame_json(h, t, j, &summed, &thr);
	if (rc == 0)
		rc = ranks_html(out, j, h);
	fputs(",\"regions\":[", j);
	for (size_t i = 0; i < h->nrefs; i++) {
		const struct rd_region *r = &h->p->regions[h->refs[i]];
		fputs(i ? ",\n[" : "\n[", j);
		json_string(j, region_name(h->o, 0, h->refs[i]));
		putc(',', j);
		json_string(j, r->kind);
		putc(',', j);
		json_string(j, h->o->shown[0].where[h->refs[i]]);
		putc(']', j);
	}
	fputs("]}", j);
	if (fclose(j) != 0 || rc != 0) {
		free(buf);
		return -1;
	}
	pictures_html(out, h, summed, thr, drawn, calls);
	fputs("<script type=\"application/json\" id=\"scope-data\">", out);
	copy_json(out, buf, len);
	fputs("</script>\n", out);
	free(buf);
	return 0;
}

static int page(FILE *out, struct html *h, const struct call_tree *t, const char *path)
{
	char *copy = strdup(path);

	if (!copy)
		return -1;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", out);
	html_text(out, basename(copy));
	fputs(" - scope</title>\n<meta name=\"generator\" content=\"scope-report " SCOPE_VERSION
	      "\">\n<style>\n",
	      out);
	fputs(embed_report_css, out);
	fputs("</style></head>\n<body>\n<div id=\"tip\"></div>\n<h1>", out);
	html_text(out, basename(copy));
	fputs("</h1>\n", out);
	free(copy);
	meta_html(out, path, h->p);
	if (regions_html(out, h->o, h->p) != 0 || data_html(out, h, t, path) != 0)
		return -1;
	fputs("<script>\n", out);
	fputs(embed_report_js, out);
	fputs("</script>\n</body></html>\n", out);
	return 0;
}

int view_html(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
	      size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct html h = {.o = o, .p = p};
	struct call_tree t = {0};
	int rc = -1;

	h.ref = malloc((p->nregions + 1) * sizeof *h.ref);
	h.refs = malloc((p->nregions + 1) * sizeof *h.refs);
	if (!h.ref || !h.refs || filter_init(&h.f, o, 0, p) != 0 || tl_init(&h) != 0)
		snprintf(p->err, sizeof p->err, "out of memory");
	else if (!p->has_events || (call_tree_merged(o, p, &t) == 0 && tl_walk(&h) == 0)) {
		memset(h.ref, 0xff, (p->nregions + 1) * sizeof *h.ref);
		p->err[0] = 0;
		rc = page(out, &h, &t, path);
		if (rc != 0 && !p->err[0])
			snprintf(p->err, sizeof p->err, "out of memory");
	}
	free(t.nodes);
	tl_free(&h);
	filter_free(&h.f);
	free(h.ref);
	free(h.refs);
	if (rc != 0)
		snprintf(err, cap, "%s: %s", path, p->err);
	return rc;
}
