/* SPDX-License-Identifier: MIT */
/* scope-report's tables of regions, thread lanes and processes. */
#include "format.h"
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One region's calls over the processes (and lane) chosen. */
struct stats {
	uint64_t region;
	const char *name;
	uint64_t calls, total, min, max;
	uint64_t total_all; /* of every call, recursive ones included: the mean's */
	uint64_t open;	    /* its calls open on the lane walked */
	int64_t self;
	long double sum, sumsq;	 /* of the durations, for the standard deviation */
	uint64_t sent, received; /* bytes moved by the calls (MPI calls) */
};

static void stats_add(struct stats *s, uint64_t calls, uint64_t total, uint64_t total_all,
		      int64_t self, uint64_t min, uint64_t max)
{
	if (!s->calls || min < s->min)
		s->min = min;
	if (max > s->max)
		s->max = max;
	s->calls += calls;
	s->total += total;
	s->total_all += total_all;
	s->self += self;
}

static uint64_t self_of(const struct stats *s)
{
	return s->self > 0 ? (uint64_t)s->self : 0;
}

static double mean_of(const struct stats *s)
{
	return s->calls ? (double)s->total_all / (double)s->calls : 0;
}

static double std_of(const struct stats *s)
{
	long double n = s->calls, mean, var;
	if (s->calls < 2)
		return 0;
	mean = s->sum / n;
	var = s->sumsq / n - mean * mean;
	return var > 0 ? (double)sqrtl(var) : 0;
}

/* ---- Sorting ------------------------------------------------------------ */

static enum sort_key sort_by;

static double sort_value(const struct stats *s)
{
	switch (sort_by) {
	case SORT_SELF: return (double)self_of(s);
	case SORT_TOTAL: return (double)s->total;
	case SORT_CALLS: return (double)s->calls;
	case SORT_MEAN: return mean_of(s);
	case SORT_MIN: return (double)s->min;
	case SORT_MAX: return (double)s->max;
	case SORT_STD: return std_of(s);
	case SORT_NAME: return 0;
	}
	return 0;
}

/* Largest first (names: alphabetical); ties by name, then region id. */
static int by_key(const void *x, const void *y)
{
	const struct stats *a = x, *b = y;
	double va = sort_value(a), vb = sort_value(b);
	int c;

	if (va != vb)
		return va > vb ? -1 : 1;
	c = strcmp(a->name, b->name);
	return c ? c : (a->region > b->region) - (a->region < b->region);
}

/* ---- Gathering ---------------------------------------------------------- */

/* Sums of squares of every pair's durations, read from /events. */
static int add_spread(struct rd_profile *p, size_t pair, struct stats *s)
{
	struct rd_cursor c;
	struct rd_event e;
	int rc;

	if (!p->has_events)
		return 0;
	if (rd_cursor_open(p, pair, RD_DURATION, 0, &c) != 0)
		return -1;
	while ((rc = rd_cursor_next(&c, &e)) == 1) {
		long double d = (long double)e.duration;
		s->sum += d;
		s->sumsq += d * d;
	}
	rd_cursor_close(&c);
	return rc;
}

static int from_pairs(const struct options *o, struct rd_profile *p, const unsigned char *wanted,
		      struct stats *st)
{
	for (size_t i = 0; i < p->npairs; i++) {
		const struct rd_pair *r = &p->pairs[i];
		struct stats *s = &st[r->region];
		if (!want_process(o, p, r->process) || !wanted[r->region] || !r->count)
			continue;
		stats_add(s, r->count, r->total_ns, r->total_all_ns,
			  r->self_ns > INT64_MAX ? INT64_MAX : (int64_t)r->self_ns, r->min_ns,
			  r->max_ns);
		s->sent += r->bytes_sent;
		s->received += r->bytes_received;
		if (add_spread(p, i, s) != 0)
			return -1;
	}
	return 0;
}

static int lane_enter(void *ctx, struct wk_lane *l)
{
	((struct stats *)ctx)[l->stack[l->n - 1].region].open++;
	return 0;
}

/* The total counts the outermost calls, as /pairs/total_ns does. */
static int lane_leave(void *ctx, struct wk_lane *l)
{
	const struct wk_frame *f = &l->stack[l->n - 1];
	struct stats *s = &((struct stats *)ctx)[f->region];
	long double d = (long double)f->duration;

	stats_add(s, 1, --s->open ? 0 : f->duration, f->duration, f->self_ns, f->duration,
		  f->duration);
	s->sum += d;
	s->sumsq += d * d;
	return 0;
}

/* With --thread the pairs' totals mix lanes: replay the lane's calls instead. */
static int from_lane(const struct options *o, struct rd_profile *p, const unsigned char *wanted,
		     struct stats *st)
{
	struct wk_visitor v = {.ctx = st, .enter = lane_enter, .leave = lane_leave};

	for (size_t i = 0; i < p->nprocesses; i++) {
		if (!want_process(o, p, i) || (uint64_t)o->thread >= p->processes[i].nlanes)
			continue;
		if (wk_process(p, i, o->thread, &v) != 0)
			return -1;
	}
	for (size_t r = 0; r < p->nregions; r++)
		if (!wanted[r])
			st[r].calls = 0;
	return 0;
}

/* The regions with calls, gathered and sorted; *n of them. NULL with err on failure. */
static struct stats *gather(const struct options *o, struct rd_profile *p, size_t *n)
{
	struct stats *st = calloc(p->nregions + 1, sizeof *st);
	unsigned char *wanted = region_mask(o, p);
	size_t kept = 0;
	int rc;

	if (!st || !wanted) {
		free(st);
		free(wanted);
		snprintf(p->err, sizeof p->err, "out of memory");
		return NULL;
	}
	for (size_t r = 0; r < p->nregions; r++) {
		st[r].region = r;
		st[r].name = p->regions[r].name;
	}
	rc = o->thread >= 0 ? from_lane(o, p, wanted, st) : from_pairs(o, p, wanted, st);
	free(wanted);
	if (rc != 0) {
		free(st);
		return NULL;
	}
	for (size_t r = 0; r < p->nregions; r++)
		if (st[r].calls)
			st[kept++] = st[r];
	sort_by = o->sort;
	qsort(st, kept, sizeof *st, by_key);
	*n = kept;
	return st;
}

/* ---- The flat table ----------------------------------------------------- */

static const struct column region_cols[] = {
	{"region", "region", CELL_STR, 0, 1, 0},   {"calls", "calls", CELL_U64, 10, 0, 0},
	{"total", "total_ns", CELL_NS, 11, 0, 0},  {"self", "self_ns", CELL_NS, 11, 0, 0},
	{"mean", "mean_ns", CELL_NSF, 11, 0, 0},   {"min", "min_ns", CELL_NS, 11, 0, 0},
	{"max", "max_ns", CELL_NS, 11, 0, 0},	   {"std", "std_ns", CELL_NSF, 11, 0, 0},
	{"share", "share_pct", CELL_PCT, 6, 0, 0}, {"region", "region", CELL_STR, 0, 0, 1},
};

static const struct column process_cols[] = {
	{"process", "process", CELL_U64, 7, 0, 0},
	{"pid", "pid", CELL_I64, 8, 0, 0},
	{"rank", "rank", CELL_I64, 5, 0, 0},
	{"parent", "parent", CELL_I64, 6, 0, 0},
	{"lanes", "lanes", CELL_U64, 5, 0, 0},
	{"calls", "calls", CELL_U64, 10, 0, 0},
	{"regions", "regions", CELL_U64, 7, 0, 0},
	{"start", "start_ns", CELL_NS, 11, 0, 0},
	{"wall", "wall_ns", CELL_NS, 11, 0, 0},
	{"lost", "lost", CELL_U64, 6, 0, 0},
	{"executable", "executable", CELL_STR, 0, 0, 0},
};

/*
 * Bytes sent and received, for profiles whose /pairs have them (processes
 * that made MPI calls). They go before a table's last column, the name a
 * text table prints unpadded: cols and cells get them copied in, in
 * arrays of BYTES_MAX_COLS.
 */
static const struct column bytes_cols[] = {
	{"sent", "bytes_sent", CELL_BYTES, 10, 0, 0},
	{"received", "bytes_received", CELL_BYTES, 10, 0, 0},
};
#define BYTES_MAX_COLS 16

/* Whether the tables show bytes: per pair only, so not per thread lane. */
static int show_bytes(const struct options *o, const struct rd_profile *p)
{
	return p->has_bytes && o->thread < 0;
}

/* The table of cols, with the bytes columns when shown. */
static struct table bytes_table(FILE *out, enum format fmt, const struct column *cols, size_t n,
				int bytes, struct column *buf)
{
	if (!bytes || n + NCOLS(bytes_cols) > BYTES_MAX_COLS)
		return (struct table){out, fmt, cols, n, 0};
	memcpy(buf, cols, (n - 1) * sizeof *buf);
	memcpy(buf + n - 1, bytes_cols, sizeof bytes_cols);
	buf[n - 1 + NCOLS(bytes_cols)] = cols[n - 1];
	return (struct table){out, fmt, buf, n + NCOLS(bytes_cols), 0};
}

/* A row of t, whose n cells come without bytes. */
static void bytes_row(struct table *t, const union cell *cells, size_t n, uint64_t sent,
		      uint64_t received)
{
	union cell row[BYTES_MAX_COLS];

	if (t->ncols == n) {
		table_row(t, cells);
		return;
	}
	memcpy(row, cells, (n - 1) * sizeof *row);
	row[n - 1].u = sent;
	row[n].u = received;
	row[n + 1] = cells[n - 1];
	table_row(t, row);
}

/* A process's calls, regions and bytes, summed from /pairs. */
struct proc_sums {
	uint64_t calls, regions, sent, received;
};

/* One row per process chosen: its calls and regions from /pairs. */
static void print_processes(const struct options *o, const struct rd_profile *p, FILE *out,
			    enum format fmt)
{
	struct column cols[BYTES_MAX_COLS];
	struct table t =
		bytes_table(out, fmt, process_cols, NCOLS(process_cols), show_bytes(o, p), cols);
	struct proc_sums *sum = calloc(p->nprocesses + 1, sizeof *sum);

	/* one pass over /pairs, not one per process: a job has thousands */
	for (size_t k = 0; sum && k < p->npairs; k++) {
		const struct rd_pair *q = &p->pairs[k];
		if (!q->count)
			continue;
		sum[q->process].calls += q->count;
		sum[q->process].regions++;
		sum[q->process].sent += q->bytes_sent;
		sum[q->process].received += q->bytes_received;
	}
	table_begin(&t, "processes");
	for (size_t i = 0; sum && i < p->nprocesses; i++) {
		const struct rd_process *pr = &p->processes[i];
		if (!want_process(o, p, i))
			continue;
		bytes_row(&t,
			  (union cell[]){{.u = i},
					 {.i = pr->pid},
					 {.i = pr->rank},
					 {.i = pr->parent},
					 {.u = pr->nlanes},
					 {.u = sum[i].calls},
					 {.u = sum[i].regions},
					 {.u = pr->start - p->origin},
					 {.u = pr->end - pr->start},
					 {.u = pr->lost},
					 {.s = pr->executable}},
			  NCOLS(process_cols), sum[i].sent, sum[i].received);
	}
	table_end(&t);
	free(sum);
}

static void print_regions(const struct options *o, const struct rd_profile *p,
			  const struct stats *st, size_t n, uint64_t lanes_wall, FILE *out)
{
	struct column cols[BYTES_MAX_COLS];
	struct table t = bytes_table(out, o->format, region_cols, NCOLS(region_cols),
				     show_bytes(o, p), cols);
	size_t shown = o->top && o->top < n ? o->top : n;

	table_begin(&t, "regions");
	for (size_t i = 0; i < shown; i++) {
		const struct stats *s = &st[i];
		double share = lanes_wall ? 100.0 * (double)self_of(s) / (double)lanes_wall : NAN;
		bytes_row(&t,
			  (union cell[]){{.s = s->name},
					 {.u = s->calls},
					 {.u = s->total},
					 {.u = self_of(s)},
					 {.f = mean_of(s)},
					 {.u = s->min},
					 {.u = s->max},
					 {.f = p->has_events ? std_of(s) : NAN},
					 {.f = share},
					 {.s = s->name}},
			  NCOLS(region_cols), s->sent, s->received);
	}
	table_end(&t);
	if (o->format == FMT_TEXT && shown < n)
		fprintf(out, "... %zu more regions (--top)\n", n - shown);
}

/* The text heading: what the table covers. */
static void heading(const struct options *o, const struct rd_profile *p, const char *path,
		    const struct stats *st, size_t n, uint64_t wall, uint64_t lanes_wall, FILE *out)
{
	uint64_t calls = 0;
	size_t procs = 0;
	char b[32];

	for (size_t i = 0; i < n; i++)
		calls += st[i].calls;
	for (size_t i = 0; i < p->nprocesses; i++)
		procs += want_process(o, p, i);
	fprintf(out, "%s: %llu calls of %zu regions in %zu process%s", path,
		(unsigned long long)calls, n, procs, procs == 1 ? "" : "es");
	if (o->thread >= 0)
		fprintf(out, ", thread lane %lld", (long long)o->thread);
	fprintf(out, ", wall %s", fmt_ns(b, sizeof b, (double)wall));
	fprintf(out, ", threads %s\n\n", fmt_ns(b, sizeof b, (double)lanes_wall));
}

int view_flat(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
	      size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	uint64_t wall = selected_wall(o, p), lanes_wall = selected_lanes_wall(o, p);
	size_t n = 0;
	struct stats *st = gather(o, p, &n);

	if (!st) {
		snprintf(err, cap, "%s: %s", path, p->err);
		return -1;
	}
	if (o->format == FMT_TEXT)
		heading(o, p, path, st, n, wall, lanes_wall, out);
	if (o->format == FMT_JSON) {
		json_doc_begin(out, path, p);
		print_processes(o, p, out, FMT_JSON);
	}
	print_regions(o, p, st, n, lanes_wall, out);
	if (o->format == FMT_JSON)
		json_doc_end(out);
	free(st);
	return 0;
}

/* ---- Thread lanes ------------------------------------------------------- */

struct lane_stats {
	uint64_t calls, busy, regions, top_self;
	int64_t top_region; /* -1: none */
};

struct lanes_ctx {
	const struct options *o;
	const struct rd_profile *p;
	const unsigned char *wanted; /* per region */
	struct lane_stats *lanes;
	struct u64map self_of; /* lane * nregions + region -> index into self */
	int64_t *self;
	size_t nself, capself;
	int oom;
};

static int lanes_enter(void *ctx, struct wk_lane *l)
{
	struct lanes_ctx *c = ctx;
	const struct wk_frame *f = &l->stack[l->n - 1];

	if (l->n == 1)
		c->lanes[l->lane].busy += f->duration;
	if (c->wanted[f->region])
		c->lanes[l->lane].calls++;
	return 0;
}

static int lanes_leave(void *ctx, struct wk_lane *l)
{
	struct lanes_ctx *c = ctx;
	const struct wk_frame *f = &l->stack[l->n - 1];
	uint64_t key = (uint64_t)l->lane * c->p->nregions + f->region;
	uint32_t *slot;
	int added = 0;

	if (!c->wanted[f->region])
		return 0;
	slot = map_slot(&c->self_of, key, (uint32_t)c->nself, &added);
	if (slot && added && c->nself == c->capself) {
		size_t cap = c->capself ? 2 * c->capself : 256;
		int64_t *grown = realloc(c->self, cap * sizeof *grown);
		if (!grown)
			slot = NULL;
		else
			c->self = grown, c->capself = cap;
	}
	if (!slot) {
		c->oom = 1;
		return -1;
	}
	if (added) {
		c->self[c->nself++] = 0;
		c->lanes[l->lane].regions++;
	}
	c->self[*slot] += f->self_ns;
	return 0;
}

/* For each lane, the region with the most self time (the lowest id of equals). */
static void top_regions(struct lanes_ctx *c, size_t nlanes)
{
	for (size_t i = 0; i < nlanes; i++)
		c->lanes[i].top_region = -1;
	for (size_t s = 0; s < c->self_of.cap; s++) {
		uint64_t key, region, self;
		struct lane_stats *ls;
		int64_t v;
		if (!c->self_of.keys[s])
			continue;
		key = c->self_of.keys[s] - 1;
		region = key % c->p->nregions;
		v = c->self[c->self_of.vals[s]];
		self = v > 0 ? (uint64_t)v : 0;
		ls = &c->lanes[key / c->p->nregions];
		if (ls->top_region < 0 || self > ls->top_self ||
		    (self == ls->top_self && region < (uint64_t)ls->top_region)) {
			ls->top_region = (int64_t)region;
			ls->top_self = self;
		}
	}
}

static const struct column lane_cols[] = {
	{"process", "process", CELL_U64, 7, 0, 0},
	{"lane", "lane", CELL_U64, 4, 0, 0},
	{"tid", "tid", CELL_U64, 8, 0, 0},
	{"name", "name", CELL_STR, 16, 0, 0},
	{"calls", "calls", CELL_U64, 10, 0, 0},
	{"regions", "regions", CELL_U64, 7, 0, 0},
	{"in calls", "in_calls_ns", CELL_NS, 11, 0, 0},
	{"span", "span_ns", CELL_NS, 11, 0, 0},
	{"cpu", "cpu_ns", CELL_NS, 11, 0, 0},
	{"busy", "busy_pct", CELL_PCT, 6, 0, 0},
	{"top self", "top_self_ns", CELL_NS, 11, 0, 0},
	{"top region", "top_region", CELL_STR, 0, 0, 0},
};

static void print_lanes(struct table *t, const struct lanes_ctx *c, size_t process)
{
	const struct rd_process *pr = &c->p->processes[process];

	for (size_t i = 0; i < pr->nlanes; i++) {
		const struct rd_lane *ln = &pr->lanes[i];
		const struct lane_stats *ls = &c->lanes[i];
		uint64_t span = ln->end > ln->start ? ln->end - ln->start : 0;
		if (c->o->thread >= 0 && (uint64_t)c->o->thread != i)
			continue;
		table_row(t, (union cell[]){
				     {.u = process},
				     {.u = i},
				     {.u = ln->tid},
				     {.s = ln->name},
				     {.u = ls->calls},
				     {.u = ls->regions},
				     {.u = ls->busy},
				     {.u = span},
				     {.u = ln->cpu_ns},
				     {.f = span ? 100.0 * (double)ls->busy / (double)span : NAN},
				     {.u = ls->top_self},
				     {.s = ls->top_region >= 0 ? c->p->regions[ls->top_region].name
							       : ""},
			     });
	}
}

static int lanes_of_process(struct lanes_ctx *c, struct rd_profile *p, size_t i, struct table *t)
{
	struct wk_visitor v = {.ctx = c, .enter = lanes_enter, .leave = lanes_leave};
	size_t nlanes = p->processes[i].nlanes;
	int rc;

	/* lane * nregions + region must stay a key of the map */
	if (nlanes && p->nregions > (UINT64_MAX - 1) / nlanes)
		return snprintf(p->err, sizeof p->err, "too many lanes and regions"), -1;
	c->lanes = calloc(nlanes + 1, sizeof *c->lanes);
	if (!c->lanes)
		return snprintf(p->err, sizeof p->err, "out of memory"), -1;
	rc = wk_process(p, i, c->o->thread >= 0 ? c->o->thread : -1, &v);
	if (rc == 0) {
		top_regions(c, nlanes);
		print_lanes(t, c, i);
	} else if (c->oom) {
		snprintf(p->err, sizeof p->err, "out of memory");
	}
	free(c->lanes);
	c->lanes = NULL;
	map_free(&c->self_of);
	c->nself = 0;
	return rc == 0 ? 0 : -1;
}

int view_threads(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
		 size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct lanes_ctx c = {.o = o, .p = p};
	struct table t = {out, o->format, lane_cols, NCOLS(lane_cols), 0};
	unsigned char *wanted = region_mask(o, p);
	int rc = 0;

	if (!wanted) {
		snprintf(err, cap, "%s: out of memory", path);
		return -1;
	}
	c.wanted = wanted;
	if (o->format == FMT_JSON)
		json_doc_begin(out, path, p);
	table_begin(&t, "lanes");
	for (size_t i = 0; i < p->nprocesses && rc == 0; i++) {
		if (!want_process(o, p, i) ||
		    (o->thread >= 0 && (uint64_t)o->thread >= p->processes[i].nlanes))
			continue;
		rc = lanes_of_process(&c, p, i, &t);
	}
	table_end(&t);
	if (o->format == FMT_JSON)
		json_doc_end(out);
	free(c.self);
	free(wanted);
	if (rc != 0)
		snprintf(err, cap, "%s: %s", path, p->err);
	return rc;
}

/* ---- Processes ---------------------------------------------------------- */

/* A region's figures in each process, then their spread. */
struct spread {
	uint64_t region;
	const char *name;
	uint64_t procs, calls;
	double total[3], self[3]; /* min, mean, max over the processes that called it */
	uint64_t sent, received;  /* bytes, summed over those processes */
};

static const struct column spread_cols[] = {
	{"region", "region", CELL_STR, 0, 1, 0},
	{"procs", "processes", CELL_U64, 5, 0, 0},
	{"calls", "calls", CELL_U64, 10, 0, 0},
	{"total min", "total_min_ns", CELL_NSF, 11, 0, 0},
	{"total mean", "total_mean_ns", CELL_NSF, 11, 0, 0},
	{"total max", "total_max_ns", CELL_NSF, 11, 0, 0},
	{"self min", "self_min_ns", CELL_NSF, 11, 0, 0},
	{"self mean", "self_mean_ns", CELL_NSF, 11, 0, 0},
	{"self max", "self_max_ns", CELL_NSF, 11, 0, 0},
	{"max/mean", "imbalance", CELL_RATIO, 8, 0, 0},
	{"region", "region", CELL_STR, 0, 0, 1},
};

static enum sort_key spread_key;

static int by_spread(const void *x, const void *y)
{
	const struct spread *a = x, *b = y;
	double va, vb;
	int c;

	switch (spread_key) {
	case SORT_SELF: va = a->self[1], vb = b->self[1]; break;
	case SORT_CALLS: va = (double)a->calls, vb = (double)b->calls; break;
	case SORT_NAME: va = vb = 0; break;
	default: va = a->total[1], vb = b->total[1]; break;
	}
	if (va != vb)
		return va > vb ? -1 : 1;
	c = strcmp(a->name, b->name);
	return c ? c : (a->region > b->region) - (a->region < b->region);
}

static void fold_spread(struct spread *s, const double *total, const double *self, size_t n)
{
	s->procs = n;
	s->total[0] = s->total[2] = total[0];
	s->self[0] = s->self[2] = self[0];
	s->total[1] = s->self[1] = 0;
	for (size_t i = 0; i < n; i++) {
		s->total[0] = fmin(s->total[0], total[i]);
		s->total[2] = fmax(s->total[2], total[i]);
		s->self[0] = fmin(s->self[0], self[i]);
		s->self[2] = fmax(s->self[2], self[i]);
		s->total[1] += total[i] / (double)n;
		s->self[1] += self[i] / (double)n;
	}
}

static const struct rd_pair *order_pairs;

static int by_region_process(const void *x, const void *y)
{
	const struct rd_pair *a = &order_pairs[*(const size_t *)x];
	const struct rd_pair *b = &order_pairs[*(const size_t *)y];
	if (a->region != b->region)
		return a->region < b->region ? -1 : 1;
	return (a->process > b->process) - (a->process < b->process);
}

/* The pairs chosen, with calls, ordered by region then process; *n of them. */
static size_t *chosen_pairs(const struct options *o, const struct rd_profile *p,
			    const unsigned char *wanted, size_t *n)
{
	size_t *idx = malloc((p->npairs + 1) * sizeof *idx), k = 0;

	for (size_t i = 0; idx && i < p->npairs; i++) {
		const struct rd_pair *q = &p->pairs[i];
		if (q->count && wanted[q->region] && want_process(o, p, q->process))
			idx[k++] = i;
	}
	order_pairs = p->pairs;
	if (idx)
		qsort(idx, k, sizeof *idx, by_region_process);
	*n = k;
	return idx;
}

/* Per region: its time in each process chosen that called it, then min/mean/max. */
static struct spread *spreads(const struct options *o, const struct rd_profile *p, size_t *n)
{
	unsigned char *wanted = region_mask(o, p);
	struct spread *out = calloc(p->nregions + 1, sizeof *out);
	double *total = calloc(p->nprocesses + 1, sizeof *total);
	double *self = calloc(p->nprocesses + 1, sizeof *self);
	size_t npairs = 0, kept = 0;
	size_t *idx = wanted ? chosen_pairs(o, p, wanted, &npairs) : NULL;

	for (size_t i = 0; idx && out && total && self && i < npairs;) {
		const struct rd_pair *q = &p->pairs[idx[i]];
		struct spread *s = &out[kept++];
		size_t np = 0;
		s->region = q->region;
		s->name = p->regions[q->region].name;
		while (i < npairs && p->pairs[idx[i]].region == s->region) {
			uint64_t process = p->pairs[idx[i]].process;
			total[np] = self[np] = 0;
			for (; i < npairs && p->pairs[idx[i]].region == s->region &&
			       p->pairs[idx[i]].process == process;
			     i++) {
				total[np] += (double)p->pairs[idx[i]].total_ns;
				self[np] += (double)p->pairs[idx[i]].self_ns;
				s->calls += p->pairs[idx[i]].count;
				s->sent += p->pairs[idx[i]].bytes_sent;
				s->received += p->pairs[idx[i]].bytes_received;
			}
			np++;
		}
		fold_spread(s, total, self, np);
	}
	if (!idx || !total || !self) {
		free(out);
		out = NULL;
	}
	free(idx);
	free(wanted);
	free(total);
	free(self);
	*n = kept;
	return out;
}

int view_processes(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
		   size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct column cols[BYTES_MAX_COLS];
	struct table t = bytes_table(out, o->format, spread_cols, NCOLS(spread_cols),
				     show_bytes(o, p), cols);
	size_t n = 0, shown;
	struct spread *s = spreads(o, p, &n);

	if (!s) {
		snprintf(err, cap, "%s: out of memory", path);
		return -1;
	}
	spread_key = o->sort;
	qsort(s, n, sizeof *s, by_spread);
	shown = o->top && o->top < n ? o->top : n;
	if (o->format == FMT_JSON)
		json_doc_begin(out, path, p);
	print_processes(o, p, out, o->format);
	if (o->format != FMT_JSON)
		putc('\n', out);
	table_begin(&t, "regions");
	for (size_t i = 0; i < shown; i++) {
		const struct spread *r = &s[i];
		bytes_row(&t,
			  (union cell[]){{.s = r->name},
					 {.u = r->procs},
					 {.u = r->calls},
					 {.f = r->total[0]},
					 {.f = r->total[1]},
					 {.f = r->total[2]},
					 {.f = r->self[0]},
					 {.f = r->self[1]},
					 {.f = r->self[2]},
					 {.f = r->total[1] > 0 ? r->total[2] / r->total[1] : NAN},
					 {.s = r->name}},
			  NCOLS(spread_cols), r->sent, r->received);
	}
	table_end(&t);
	if (o->format == FMT_TEXT && shown < n)
		fprintf(out, "... %zu more regions (--top)\n", n - shown);
	if (o->format == FMT_JSON)
		json_doc_end(out);
	free(s);
	return 0;
}
