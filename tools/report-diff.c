/* SPDX-License-Identifier: MIT */
/* scope-report --diff: per-region change between two profiles, and the regression gate. */
#include "format.h"
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *x, const void *y)
{
	return strcmp(((const struct diff_fig *)x)->name, ((const struct diff_fig *)y)->name);
}

/* The regions of p (files[which]) with calls, one per name (same names summed), sorted
 * by name; NULL with the reason in p->err. */
static struct diff_fig *figures(const struct options *o, size_t which, struct rd_profile *p,
				size_t *n)
{
	struct diff_fig *f = calloc(p->nregions + 1, sizeof *f);
	unsigned char *wanted = region_mask(o, which, p);
	struct pair_sum *sum = from_calls(o) ? sum_calls(o, which, p) : NULL;
	size_t k = 0;

	if (!f || !wanted || (from_calls(o) && !sum)) {
		if (!f || !wanted)
			snprintf(p->err, sizeof p->err, "out of memory");
		free(f);
		free(wanted);
		free(sum);
		return NULL;
	}
	for (size_t r = 0; r < p->nregions; r++) {
		f[r].name = p->regions[r].name;
		f[r].shown = region_name(o, which, r);
		f[r].file = p->regions[r].file;
		f[r].line = p->regions[r].line;
	}
	for (size_t i = 0; i < p->npairs; i++) {
		const struct rd_pair *q = &p->pairs[i];
		if (!wanted[q->region] || !want_process(o, p, q->process))
			continue;
		f[q->region].calls += sum ? sum[i].calls : rd_pair_calls(q);
		f[q->region].total += sum ? sum[i].total : q->total_ns;
		f[q->region].self +=
			sum ? (uint64_t)(sum[i].self > 0 ? sum[i].self : 0) : q->self_ns;
	}
	free(wanted);
	free(sum);
	for (size_t r = 0; r < p->nregions; r++)
		if (f[r].calls)
			f[k++] = f[r];
	qsort(f, k, sizeof *f, by_name);
	*n = 0;
	for (size_t i = 0; i < k; i++) {
		if (*n && strcmp(f[*n - 1].name, f[i].name) == 0) {
			f[*n - 1].calls += f[i].calls;
			f[*n - 1].total += f[i].total;
			f[*n - 1].self += f[i].self;
		} else {
			f[(*n)++] = f[i];
		}
	}
	return f;
}

static double pct(uint64_t base, uint64_t now)
{
	return base ? 100.0 * ((double)now - (double)base) / (double)base : NAN;
}

/* Merges the two sorted lists by name. */
static struct diff_row *join(const struct diff_fig *a, size_t na, const struct diff_fig *b,
			     size_t nb, size_t *n)
{
	struct diff_row *rows = calloc(na + nb + 1, sizeof *rows);
	size_t i = 0, j = 0, k = 0;

	while (rows && (i < na || j < nb)) {
		struct diff_row *r = &rows[k++];
		int c = i == na ? 1 : j == nb ? -1 : strcmp(a[i].name, b[j].name);
		if (c <= 0)
			r->f[0] = a[i++], r->in[0] = 1;
		if (c >= 0)
			r->f[1] = b[j++], r->in[1] = 1;
		r->name = r->in[0] ? r->f[0].name : r->f[1].name;
		r->shown = r->in[1] ? r->f[1].shown : r->f[0].shown;
		r->file = r->in[1] ? r->f[1].file : r->f[0].file;
		r->line = r->in[1] ? r->f[1].line : r->f[0].line;
		r->pct_total = pct(r->f[0].total, r->f[1].total);
		r->pct_self = pct(r->f[0].self, r->f[1].self);
	}
	*n = k;
	return rows;
}

/* ---- Gate --------------------------------------------------------------- */

/* The allowed growth for a region, in percent; < 0 when it is not gated. A REGEX= matches
 * the region's full name or the name it is shown by. */
static double limit_of(const struct options *o, const struct diff_row *r)
{
	double plain = -1;
	for (size_t i = 0; i < o->ngates; i++) {
		if (!o->gates[i].has_re)
			plain = o->gates[i].pct;
		else if (regexec(&o->gates[i].re, r->name, 0, NULL, 0) == 0 ||
			 regexec(&o->gates[i].re, r->shown, 0, NULL, 0) == 0)
			return o->gates[i].pct;
	}
	return plain;
}

static int grew(double change, uint64_t base, uint64_t now, double limit, uint64_t min_time)
{
	return !isnan(change) && change > limit && (base >= min_time || now >= min_time);
}

static size_t gate(const struct options *o, struct diff_row *rows, size_t n)
{
	size_t slower = 0;

	for (size_t i = 0; i < n; i++) {
		struct diff_row *r = &rows[i];
		double limit = limit_of(o, r);
		if (limit < 0 || !r->in[0] || !r->in[1])
			continue;
		r->slower = grew(r->pct_total, r->f[0].total, r->f[1].total, limit, o->min_time) ||
			    grew(r->pct_self, r->f[0].self, r->f[1].self, limit, o->min_time);
		slower += (size_t)r->slower;
	}
	return slower;
}

/* ---- Sorting ------------------------------------------------------------ */

static enum sort_key sort_by;

static uint64_t change(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* Largest absolute change first: of self (default), total or calls; or by name. */
static int by_change(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	uint64_t va, vb, ta = change(a->f[0].total, a->f[1].total),
			 tb = change(b->f[0].total, b->f[1].total);

	switch (sort_by) {
	case SORT_TOTAL: va = ta, vb = tb; break;
	case SORT_CALLS:
		va = change(a->f[0].calls, a->f[1].calls);
		vb = change(b->f[0].calls, b->f[1].calls);
		break;
	case SORT_NAME: va = vb = 0, ta = tb = 0; break;
	default:
		va = change(a->f[0].self, a->f[1].self);
		vb = change(b->f[0].self, b->f[1].self);
		break;
	}
	if (va != vb)
		return va > vb ? -1 : 1;
	if (ta != tb)
		return ta > tb ? -1 : 1;
	return strcmp(a->shown, b->shown);
}

/* ---- Printing ----------------------------------------------------------- */

enum {
	DC_NAME,
	DC_CALLS_BASE,
	DC_CALLS,
	DC_CALLS_CHANGE,
	DC_TOTAL_BASE,
	DC_TOTAL,
	DC_TOTAL_CHANGE,
	DC_TOTAL_PCT,
	DC_SELF_BASE,
	DC_SELF,
	DC_SELF_CHANGE,
	DC_SELF_PCT,
	DC_STATUS,
	DC_FILE,
	DC_LINE,
	DC_WHERE,
	DC_TEXT_NAME,
	DC_N
};
static const struct column diff_cols[DC_N] = {
	{"region", "region", CELL_STR, 0, 1, 0, 0},
	{"base calls", "calls_base", CELL_U64, 10, 1, 0, 0},
	{"calls", "calls_new", CELL_U64, 10, 0, 0, 0},
	{"calls+", "calls_change", CELL_I64, 8, 0, 0, 0},
	{"base total", "total_base_ns", CELL_NS, 11, 0, 0, 0},
	{"new total", "total_new_ns", CELL_NS, 11, 0, 0, 0},
	{"total+", "total_change_ns", CELL_DNS, 12, 1, 0, 0},
	{"total%", "total_change_pct", CELL_DPCT, 8, 0, 0, 0},
	{"base self", "self_base_ns", CELL_NS, 11, 0, 0, 0},
	{"new self", "self_new_ns", CELL_NS, 11, 0, 0, 0},
	{"self+", "self_change_ns", CELL_DNS, 12, 1, 0, 0},
	{"self%", "self_change_pct", CELL_DPCT, 8, 0, 0, 0},
	{"status", "status", CELL_STR, 6, 0, 0, 0},
	{"file", "file", CELL_STR, 0, 1, 0, 0},
	{"line", "line", CELL_U64, 0, 1, 0, 0},
	{"location", "location", CELL_STR, 8, 0, 1, 0},
	{"region", "region", CELL_STR, 0, 0, 1, 0},
};

/* "file:line" of a row, "" when not known, into buf. */
static const char *where_of(char *buf, size_t cap, const struct diff_row *r)
{
	if (!*r->file && !r->line)
		return "";
	snprintf(buf, cap, "%s:%llu", r->file, (unsigned long long)r->line);
	return buf;
}

static int64_t delta(uint64_t a, uint64_t b)
{
	return (int64_t)(b - a); /* two's complement: exact below 2^63 */
}

static void print_rows(const struct options *o, const struct diff_row *rows, size_t n, FILE *out)
{
	struct column cols[DC_N];
	struct table t = {out, o->format, cols, DC_N, 0};
	size_t shown = o->top && o->top < n ? o->top : n;
	char where[4096 + 32];

	memcpy(cols, diff_cols, sizeof cols);
	cols[DC_WHERE].off = !o->lines;
	for (size_t i = 0; i < shown; i++) {
		int w = (int)strlen(where_of(where, sizeof where, &rows[i]));
		if (w > cols[DC_WHERE].width)
			cols[DC_WHERE].width = w;
	}
	table_begin(&t, "regions");
	for (size_t i = 0; i < shown; i++) {
		const struct diff_row *r = &rows[i];
		const char *status = !r->in[0]	 ? "new"
				     : !r->in[1] ? "gone"
				     : r->slower ? "SLOWER"
						 : "";
		table_row(&t,
			  (union cell[DC_N]){
				  [DC_NAME] = {.s = r->shown},
				  [DC_CALLS_BASE] = {.u = r->f[0].calls},
				  [DC_CALLS] = {.u = r->f[1].calls},
				  [DC_CALLS_CHANGE] = {.i = delta(r->f[0].calls, r->f[1].calls)},
				  [DC_TOTAL_BASE] = {.u = r->f[0].total},
				  [DC_TOTAL] = {.u = r->f[1].total},
				  [DC_TOTAL_CHANGE] = {.i = delta(r->f[0].total, r->f[1].total)},
				  [DC_TOTAL_PCT] = {.f = r->pct_total},
				  [DC_SELF_BASE] = {.u = r->f[0].self},
				  [DC_SELF] = {.u = r->f[1].self},
				  [DC_SELF_CHANGE] = {.i = delta(r->f[0].self, r->f[1].self)},
				  [DC_SELF_PCT] = {.f = r->pct_self},
				  [DC_STATUS] = {.s = status},
				  [DC_FILE] = {.s = r->file},
				  [DC_LINE] = {.u = r->line},
				  [DC_WHERE] = {.s = where_of(where, sizeof where, r)},
				  [DC_TEXT_NAME] = {.s = r->shown},
			  });
	}
	table_end(&t);
	if (o->format == FMT_TEXT && shown < n)
		fprintf(out, "... %zu more regions (--top)\n", n - shown);
}

static const char *percent(char *buf, size_t cap, double v)
{
	snprintf(buf, cap, isnan(v) ? "n/a" : "%+.1f%%", v);
	return buf;
}

/* One line on stderr per region that failed the gate. */
static void report_slower(const struct options *o, const struct diff_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct diff_row *r = &rows[i];
		if (!r->slower)
			continue;
		char total[32], self[32];
		fprintf(stderr,
			"scope-report: %s: %s got slower than in %s: total %s, self %s (allowed "
			"+%g%%)\n",
			o->files[1], r->shown, o->files[0],
			percent(total, sizeof total, r->pct_total),
			percent(self, sizeof self, r->pct_self), limit_of(o, r));
	}
}

struct diff_row *diff_compute(const struct options *o, struct rd_profile *const *in, size_t *n,
			      size_t *slower, char *err, size_t cap)
{
	struct rd_profile *base = in[0], *now = in[1];
	size_t na = 0, nb = 0;
	struct diff_fig *a = figures(o, 0, base, &na), *b = a ? figures(o, 1, now, &nb) : NULL;
	struct diff_row *rows = a && b ? join(a, na, b, nb, n) : NULL;

	if (!rows) {
		snprintf(err, cap, "%s: %s", o->files[a ? 1 : 0],
			 a && b ? "out of memory" : (a ? now : base)->err);
	} else {
		*slower = gate(o, rows, *n);
		sort_by = o->sort;
		qsort(rows, *n, sizeof *rows, by_change);
	}
	free(a);
	free(b);
	return rows;
}

int view_diff(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
	      size_t cap)
{
	size_t n = 0, slower = 0;
	struct diff_row *rows = diff_compute(o, in, &n, &slower, err, cap);

	if (!rows)
		return -1;
	if (o->format == FMT_TEXT) {
		fprintf(out, "base %s, new %s: %zu regions", o->files[0], o->files[1], n);
		if (o->ngates)
			fprintf(out, ", %zu slower than allowed", slower);
		fputs(o->compensate ? "\ntimes less the recording's cost (--compensate)\n\n"
				    : "\n\n",
		      out);
	}
	if (o->format == FMT_JSON) {
		fprintf(out, "{\"producer\":\"scope-report %s\",\"base\":", SCOPE_VERSION);
		json_string(out, o->files[0]);
		fputs(",\"new\":", out);
		json_string(out, o->files[1]);
		fprintf(out, ",\"slower\":%zu", slower);
	}
	print_rows(o, rows, n, out);
	if (o->format == FMT_JSON)
		json_doc_end(out);
	report_slower(o, rows, n);
	free(rows);
	return slower ? 1 : 0;
}
