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
	int64_t self;
	long double sum, sumsq;	 /* of the durations, for the standard deviation */
	uint64_t spread;	 /* the calls sum and sumsq are of: those in /events */
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
	long double n = s->spread, mean, var;
	if (s->spread < 2)
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
		s->spread++;
	}
	rd_cursor_close(&c);
	return rc;
}

/* The figures of /pairs, or of the calls the filter keeps (from_calls). */
static int from_pairs(const struct options *o, struct rd_profile *p, const unsigned char *wanted,
		      struct stats *st)
{
	struct pair_sum *sum = from_calls(o) ? sum_calls(o, 0, p) : NULL;

	if (from_calls(o) && !sum)
		return -1;
	for (size_t i = 0; i < p->npairs; i++) {
		const struct rd_pair *r = &p->pairs[i];
		struct stats *s = &st[r->region];
		if (!want_process(o, p, r->process) || !wanted[r->region] || !rd_pair_calls(r))
			continue;
		if (sum) {
			if (!sum[i].calls)
				continue;
			stats_add(s, sum[i].calls, sum[i].total, sum[i].total_all, sum[i].self,
				  sum[i].min, sum[i].max);
			s->sum += sum[i].sum;
			s->sumsq += sum[i].sumsq;
			s->spread += sum[i].calls;
			s->sent += r->bytes_sent; /* shown only when every call is kept */
			s->received += r->bytes_received;
			continue;
		}
		stats_add(s, rd_pair_calls(r), r->total_ns, r->total_all_ns,
			  r->self_ns > INT64_MAX ? INT64_MAX : (int64_t)r->self_ns, r->min_ns,
			  r->max_ns);
		s->sent += r->bytes_sent;
		s->received += r->bytes_received;
		if (add_spread(p, i, s) != 0)
			return -1;
	}
	free(sum);
	return 0;
}

/* The regions with calls, gathered and sorted; *n of them. NULL with err on failure. */
static struct stats *gather(const struct options *o, struct rd_profile *p, size_t *n)
{
	struct stats *st = calloc(p->nregions + 1, sizeof *st);
	unsigned char *wanted = region_mask(o, 0, p);
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
		st[r].name = region_name(o, 0, r);
	}
	rc = from_pairs(o, p, wanted, st);
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

/* The table of regions; the columns after share are off unless shown (region_table). */
enum {
	RC_NAME,
	RC_CALLS,
	RC_TOTAL,
	RC_SELF,
	RC_MEAN,
	RC_MIN,
	RC_MAX,
	RC_STD,
	RC_SHARE,
	RC_SENT,
	RC_RECEIVED,
	RC_FILE,
	RC_LINE,
	RC_WHERE,
	RC_TEXT_NAME,
	RC_N
};
static const struct column region_cols[RC_N] = {
	{"region", "region", CELL_STR, 0, 1, 0, 0},
	{"calls", "calls", CELL_U64, 10, 0, 0, 0},
	{"total", "total_ns", CELL_NS, 11, 0, 0, 0},
	{"self", "self_ns", CELL_NS, 11, 0, 0, 0},
	{"mean", "mean_ns", CELL_NSF, 11, 0, 0, 0},
	{"min", "min_ns", CELL_NS, 11, 0, 0, 0},
	{"max", "max_ns", CELL_NS, 11, 0, 0, 0},
	{"std", "std_ns", CELL_NSF, 11, 0, 0, 0},
	{"share", "share_pct", CELL_PCT, 6, 0, 0, 0},
	{"sent", "bytes_sent", CELL_BYTES, 10, 0, 0, 0},
	{"received", "bytes_received", CELL_BYTES, 10, 0, 0, 0},
	{"file", "file", CELL_STR, 0, 1, 0, 0},
	{"line", "line", CELL_U64, 0, 1, 0, 0},
	{"location", "location", CELL_STR, 8, 0, 1, 0},
	{"region", "region", CELL_STR, 0, 0, 1, 0},
};

static const struct column process_cols[] = {
	{"process", "process", CELL_U64, 7, 0, 0, 0},
	{"pid", "pid", CELL_I64, 8, 0, 0, 0},
	{"rank", "rank", CELL_I64, 5, 0, 0, 0},
	{"parent", "parent", CELL_I64, 6, 0, 0, 0},
	{"lanes", "lanes", CELL_U64, 5, 0, 0, 0},
	{"calls", "calls", CELL_U64, 10, 0, 0, 0},
	{"regions", "regions", CELL_U64, 7, 0, 0, 0},
	{"start", "start_ns", CELL_NS, 11, 0, 0, 0},
	{"wall", "wall_ns", CELL_NS, 11, 0, 0, 0},
	{"lost", "lost", CELL_U64, 6, 0, 0, 0},
	{"executable", "executable", CELL_STR, 0, 0, 0, 0},
};

/*
 * Bytes sent and received, for profiles whose /pairs have them (processes
 * that made MPI calls). They go before a table's last column, the name a
 * text table prints unpadded: cols and cells get them copied in, in
 * arrays of BYTES_MAX_COLS.
 */
static const struct column bytes_cols[] = {
	{"sent", "bytes_sent", CELL_BYTES, 10, 0, 0, 0},
	{"received", "bytes_received", CELL_BYTES, 10, 0, 0, 0},
};
#define BYTES_MAX_COLS 16

/* Whether the tables show bytes: per pair only, so not per thread lane or for some calls. */
static int show_bytes(const struct options *o, const struct rd_profile *p)
{
	return p->has_bytes && o->thread < 0 && !o->windowed;
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
		if (!rd_pair_calls(q))
			continue;
		sum[q->process].calls += rd_pair_calls(q);
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

/* The width of the widest "file:line" of the n regions of st, at least that of "location". */
static int where_width(const struct options *o, const struct stats *st, size_t n)
{
	size_t w = strlen("location");

	for (size_t i = 0; i < n; i++)
		if (strlen(o->shown[0].where[st[i].region]) > w)
			w = strlen(o->shown[0].where[st[i].region]);
	return w > 4096 ? 4096 : (int)w;
}

static void print_regions(const struct options *o, const struct rd_profile *p,
			  const struct stats *st, size_t n, uint64_t lanes_wall, FILE *out)
{
	struct column cols[RC_N];
	struct table t = {out, o->format, cols, RC_N, 0};
	size_t shown = o->top && o->top < n ? o->top : n;

	memcpy(cols, region_cols, sizeof cols);
	cols[RC_SENT].off = cols[RC_RECEIVED].off = !show_bytes(o, p);
	cols[RC_WHERE].off = !o->lines;
	cols[RC_WHERE].width = where_width(o, st, shown);
	table_begin(&t, "regions");
	for (size_t i = 0; i < shown; i++) {
		const struct stats *s = &st[i];
		const struct rd_region *r = &p->regions[s->region];
		double share = lanes_wall ? 100.0 * (double)self_of(s) / (double)lanes_wall : NAN;
		table_row(&t, (union cell[RC_N]){
				      [RC_NAME] = {.s = s->name},
				      [RC_CALLS] = {.u = s->calls},
				      [RC_TOTAL] = {.u = s->total},
				      [RC_SELF] = {.u = self_of(s)},
				      [RC_MEAN] = {.f = mean_of(s)},
				      [RC_MIN] = {.u = s->min},
				      [RC_MAX] = {.u = s->max},
				      [RC_STD] = {.f = p->has_events ? std_of(s) : NAN},
				      [RC_SHARE] = {.f = share},
				      [RC_SENT] = {.u = s->sent},
				      [RC_RECEIVED] = {.u = s->received},
				      [RC_FILE] = {.s = r->file},
				      [RC_LINE] = {.u = r->line},
				      [RC_WHERE] = {.s = o->shown[0].where[s->region]},
				      [RC_TEXT_NAME] = {.s = s->name},
			      });
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
	fprintf(out, ", threads %s", fmt_ns(b, sizeof b, (double)lanes_wall));
	print_recording(o, 0, p, -1, wall, out);
	putc('\n', out);
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
		json_recording(o, 0, p, -1, wall, out);
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
	struct call_filter f;
	struct lane_stats *lanes;
	struct u64map self_of; /* lane * nregions + region -> index into self */
	int64_t *self;
	size_t nself, capself;
	int oom;
};

static int lanes_enter(void *ctx, struct wk_lane *l)
{
	struct lanes_ctx *c = ctx;
	struct wk_frame *f = &l->stack[l->n - 1];

	/* busy: the outermost calls, whatever their region, that the window keeps */
	if (l->n == 1 && filter_time(&c->f, l->process, f->start, f->duration))
		c->lanes[l->lane].busy += f->duration;
	f->tag = (uint64_t)filter_call(&c->f, l->process, f);
	if (f->tag)
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

	if (!f->tag)
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
	{"process", "process", CELL_U64, 7, 0, 0, 0},
	{"lane", "lane", CELL_U64, 4, 0, 0, 0},
	{"tid", "tid", CELL_U64, 8, 0, 0, 0},
	{"name", "name", CELL_STR, 16, 0, 0, 0},
	{"calls", "calls", CELL_U64, 10, 0, 0, 0},
	{"regions", "regions", CELL_U64, 7, 0, 0, 0},
	{"in calls", "in_calls_ns", CELL_NS, 11, 0, 0, 0},
	{"span", "span_ns", CELL_NS, 11, 0, 0, 0},
	{"cpu", "cpu_ns", CELL_NS, 11, 0, 0, 0},
	{"busy", "busy_pct", CELL_PCT, 6, 0, 0, 0},
	{"top self", "top_self_ns", CELL_NS, 11, 0, 0, 0},
	{"top region", "top_region", CELL_STR, 0, 0, 0, 0},
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
				     {.s = ls->top_region >= 0
						   ? region_name(c->o, 0, (uint64_t)ls->top_region)
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
	int rc = 0;

	if (filter_init(&c.f, o, 0, p) != 0) {
		snprintf(err, cap, "%s: out of memory", path);
		return -1;
	}
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
	filter_free(&c.f);
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

/* The spread of each region; the columns after max/mean are off unless shown. */
enum {
	SC_NAME,
	SC_PROCS,
	SC_CALLS,
	SC_TOTAL_MIN,
	SC_TOTAL_MEAN,
	SC_TOTAL_MAX,
	SC_SELF_MIN,
	SC_SELF_MEAN,
	SC_SELF_MAX,
	SC_IMBALANCE,
	SC_SENT,
	SC_RECEIVED,
	SC_FILE,
	SC_LINE,
	SC_WHERE,
	SC_TEXT_NAME,
	SC_N
};
static const struct column spread_cols[SC_N] = {
	{"region", "region", CELL_STR, 0, 1, 0, 0},
	{"procs", "processes", CELL_U64, 5, 0, 0, 0},
	{"calls", "calls", CELL_U64, 10, 0, 0, 0},
	{"total min", "total_min_ns", CELL_NSF, 11, 0, 0, 0},
	{"total mean", "total_mean_ns", CELL_NSF, 11, 0, 0, 0},
	{"total max", "total_max_ns", CELL_NSF, 11, 0, 0, 0},
	{"self min", "self_min_ns", CELL_NSF, 11, 0, 0, 0},
	{"self mean", "self_mean_ns", CELL_NSF, 11, 0, 0, 0},
	{"self max", "self_max_ns", CELL_NSF, 11, 0, 0, 0},
	{"max/mean", "imbalance", CELL_RATIO, 8, 0, 0, 0},
	{"sent", "bytes_sent", CELL_BYTES, 10, 0, 0, 0},
	{"received", "bytes_received", CELL_BYTES, 10, 0, 0, 0},
	{"file", "file", CELL_STR, 0, 1, 0, 0},
	{"line", "line", CELL_U64, 0, 1, 0, 0},
	{"location", "location", CELL_STR, 8, 0, 1, 0},
	{"region", "region", CELL_STR, 0, 0, 1, 0},
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

/* A pair's calls, total and self time: from /pairs, or the calls kept (sum). */
static void pair_figures(const struct rd_profile *p, const struct pair_sum *sum, size_t i,
			 uint64_t *calls, double *total, double *self)
{
	if (sum) {
		*calls = sum[i].calls;
		*total = (double)sum[i].total;
		*self = (double)(sum[i].self > 0 ? sum[i].self : 0);
	} else {
		*calls = rd_pair_calls(&p->pairs[i]);
		*total = (double)p->pairs[i].total_ns;
		*self = (double)p->pairs[i].self_ns;
	}
}

/* The pairs chosen, with calls, ordered by region then process; *n of them. */
static size_t *chosen_pairs(const struct options *o, const struct rd_profile *p,
			    const unsigned char *wanted, const struct pair_sum *sum, size_t *n)
{
	size_t *idx = malloc((p->npairs + 1) * sizeof *idx), k = 0;

	for (size_t i = 0; idx && i < p->npairs; i++) {
		const struct rd_pair *q = &p->pairs[i];
		if (rd_pair_calls(q) && wanted[q->region] && want_process(o, p, q->process) &&
		    (!sum || sum[i].calls))
			idx[k++] = i;
	}
	order_pairs = p->pairs;
	if (idx)
		qsort(idx, k, sizeof *idx, by_region_process);
	*n = k;
	return idx;
}

/* Per region: its time in each process chosen that called it, then min/mean/max. */
static struct spread *spreads(const struct options *o, const struct rd_profile *p,
			      const struct pair_sum *sum, size_t *n)
{
	unsigned char *wanted = region_mask(o, 0, p);
	struct spread *out = calloc(p->nregions + 1, sizeof *out);
	double *total = calloc(p->nprocesses + 1, sizeof *total);
	double *self = calloc(p->nprocesses + 1, sizeof *self);
	size_t npairs = 0, kept = 0;
	size_t *idx = wanted ? chosen_pairs(o, p, wanted, sum, &npairs) : NULL;

	for (size_t i = 0; idx && out && total && self && i < npairs;) {
		const struct rd_pair *q = &p->pairs[idx[i]];
		struct spread *s = &out[kept++];
		size_t np = 0;
		s->region = q->region;
		s->name = region_name(o, 0, q->region);
		while (i < npairs && p->pairs[idx[i]].region == s->region) {
			uint64_t process = p->pairs[idx[i]].process;
			total[np] = self[np] = 0;
			for (; i < npairs && p->pairs[idx[i]].region == s->region &&
			       p->pairs[idx[i]].process == process;
			     i++) {
				uint64_t calls;
				double t, sf;
				pair_figures(p, sum, idx[i], &calls, &t, &sf);
				total[np] += t;
				self[np] += sf;
				s->calls += calls;
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

/* The width of the widest "file:line" of the n regions of s, at least that of "location". */
static int spread_where_width(const struct options *o, const struct spread *s, size_t n)
{
	size_t w = strlen("location");

	for (size_t i = 0; i < n; i++)
		if (strlen(o->shown[0].where[s[i].region]) > w)
			w = strlen(o->shown[0].where[s[i].region]);
	return w > 4096 ? 4096 : (int)w;
}

static void print_spreads(const struct options *o, const struct rd_profile *p,
			  const struct spread *s, size_t n, FILE *out)
{
	struct column cols[SC_N];
	struct table t = {out, o->format, cols, SC_N, 0};

	memcpy(cols, spread_cols, sizeof cols);
	cols[SC_SENT].off = cols[SC_RECEIVED].off = !show_bytes(o, p);
	cols[SC_WHERE].off = !o->lines;
	cols[SC_WHERE].width = spread_where_width(o, s, n);
	table_begin(&t, "regions");
	for (size_t i = 0; i < n; i++) {
		const struct spread *r = &s[i];
		table_row(&t,
			  (union cell[SC_N]){
				  [SC_NAME] = {.s = r->name},
				  [SC_PROCS] = {.u = r->procs},
				  [SC_CALLS] = {.u = r->calls},
				  [SC_TOTAL_MIN] = {.f = r->total[0]},
				  [SC_TOTAL_MEAN] = {.f = r->total[1]},
				  [SC_TOTAL_MAX] = {.f = r->total[2]},
				  [SC_SELF_MIN] = {.f = r->self[0]},
				  [SC_SELF_MEAN] = {.f = r->self[1]},
				  [SC_SELF_MAX] = {.f = r->self[2]},
				  [SC_IMBALANCE] = {.f = r->total[1] > 0 ? r->total[2] / r->total[1]
									 : NAN},
				  [SC_SENT] = {.u = r->sent},
				  [SC_RECEIVED] = {.u = r->received},
				  [SC_FILE] = {.s = p->regions[r->region].file},
				  [SC_LINE] = {.u = p->regions[r->region].line},
				  [SC_WHERE] = {.s = o->shown[0].where[r->region]},
				  [SC_TEXT_NAME] = {.s = r->name},
			  });
	}
	table_end(&t);
}

int view_processes(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
		   size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct pair_sum *sum = from_calls(o) ? sum_calls(o, 0, p) : NULL;
	size_t n = 0, shown;
	struct spread *s = from_calls(o) && !sum ? NULL : spreads(o, p, sum, &n);

	free(sum);
	if (!s) {
		snprintf(err, cap, "%s: %s", path, from_calls(o) ? p->err : "out of memory");
		return -1;
	}
	spread_key = o->sort;
	qsort(s, n, sizeof *s, by_spread);
	shown = o->top && o->top < n ? o->top : n;
	if (o->format == FMT_JSON) {
		json_doc_begin(out, path, p);
		json_recording(o, 0, p, -1, selected_wall(o, p), out);
	}
	print_processes(o, p, out, o->format);
	if (o->format != FMT_JSON)
		putc('\n', out);
	print_spreads(o, p, s, shown, out);
	if (o->format == FMT_TEXT && shown < n)
		fprintf(out, "... %zu more regions (--top)\n", n - shown);
	if (o->format == FMT_JSON)
		json_doc_end(out);
	free(s);
	return 0;
}
