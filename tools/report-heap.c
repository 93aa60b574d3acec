/* SPDX-License-Identifier: MIT */
/* scope-report --heap: what each region allocated, its peak and its leaks (SCOPE_HEAP=1), and the
 * call sites that allocated most. */
#define _GNU_SOURCE
#include "names.h"
#include "profile.h"
#include "report.h"
#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTSIDE "(outside any region)"

struct heap_row {
	size_t process;
	char *region;
	uint64_t allocs, frees, bytes, peak, leaked;
};

struct site_row {
	size_t process;
	char *region, *function, *file;
	uint64_t bytes, allocs, address, line;
};

struct heap_view {
	struct heap_row *rows;
	struct site_row *sites;
	size_t nrows, nsites, processes;
	int64_t peak, leaked, untracked; /* summed over the processes */
};

static int grow(void **v, size_t n, size_t more, size_t size)
{
	void *g;

	if (more > SIZE_MAX / size - n - 1 || !(g = realloc(*v, (n + more + 1) * size)))
		return -1;
	*v = g;
	return 0;
}

/* Process k's rows, appended to h; the strings are h's then. */
static int append(struct heap_view *h, size_t k, struct rd_heap *one)
{
	if (grow((void **)&h->rows, h->nrows, one->nrows, sizeof *h->rows) != 0 ||
	    grow((void **)&h->sites, h->nsites, one->nsites, sizeof *h->sites) != 0)
		return -1;
	for (size_t i = 0; i < one->nrows; i++) {
		const struct rd_heap_row *r = &one->rows[i];
		h->rows[h->nrows++] = (struct heap_row){
			k, r->region, r->allocations, r->frees, r->bytes, r->peak, r->leaked};
		one->rows[i].region = NULL;
	}
	for (size_t i = 0; i < one->nsites; i++) {
		struct rd_heap_site *s = &one->sites[i];
		h->sites[h->nsites++] =
			(struct site_row){k,	    s->region,	    s->function, s->file,
					  s->bytes, s->allocations, s->address,	 s->line};
		s->region = s->function = s->file = NULL;
	}
	h->processes++;
	h->peak += one->attrs[SC_HEAPA_PEAK_LIVE];
	h->leaked += one->attrs[SC_HEAPA_LIVE_AT_EXIT];
	h->untracked += one->attrs[SC_HEAPA_UNTRACKED];
	return 0;
}

static void heap_view_free(struct heap_view *h)
{
	for (size_t i = 0; i < h->nrows; i++)
		free(h->rows[i].region);
	for (size_t i = 0; i < h->nsites; i++) {
		free(h->sites[i].region);
		free(h->sites[i].function);
		free(h->sites[i].file);
	}
	free(h->rows);
	free(h->sites);
}

/* Every process's heap tables; 1 when none has them, -1 with the reason in p->err. */
static int read_all(struct rd_profile *p, struct heap_view *h)
{
	for (size_t k = 0; k < p->nprocesses; k++) {
		struct rd_heap one;
		int rc = rd_heap(p, k, &one);
		if (rc < 0)
			return -1;
		if (rc > 0 && append(h, k, &one) != 0) {
			rd_heap_free(&one);
			snprintf(p->err, sizeof p->err, "out of memory");
			return -1;
		}
		rd_heap_free(&one);
	}
	return h->processes ? 0 : 1;
}

/* The most bytes live at once first, then the most allocated, then by name. */
static int by_peak(const void *x, const void *y)
{
	const struct heap_row *a = x, *b = y;
	if (a->peak != b->peak)
		return a->peak < b->peak ? 1 : -1;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return strcmp(a->region, b->region);
}

static int by_site(const void *x, const void *y)
{
	const struct site_row *a = x, *b = y;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return strcmp(a->region, b->region);
}

/* The names the other views show the n names full[i] by ("" is outside any region), in
 * full[i]'s place; -1 when out of memory. */
static int names_of(const struct options *o, const struct rd_profile *p, const char **full,
		    size_t n, char ***names)
{
	*names = function_names(o, 0, p, full, n);
	for (size_t i = 0; *names && i < n; i++)
		if (!*full[i]) {
			free((*names)[i]);
			if (!((*names)[i] = strdup(OUTSIDE))) {
				names_free(*names, n);
				*names = NULL;
			}
		}
	return *names ? 0 : -1;
}

/* The location column's width: the widest "file:line", at least that of "location". */
static int where_width(const char *const *where, size_t n)
{
	size_t w = strlen("location");

	for (size_t i = 0; i < n; i++)
		w = strlen(where[i]) > w ? strlen(where[i]) : w;
	return w > 4096 ? 4096 : (int)w;
}

static int print_rows(const struct options *o, const struct rd_profile *p,
		      const struct heap_view *h, int many, FILE *out)
{
	struct column cols[] = {
		{"process", "process", CELL_U64, 7, 0, 0, 0},
		{"allocs", "allocations", CELL_U64, 10, 0, 0, 0},
		{"frees", "frees", CELL_U64, 10, 0, 0, 0},
		{"allocated", "bytes_allocated", CELL_BYTES, 11, 0, 0, 0},
		{"peak live", "peak_live_bytes", CELL_BYTES, 11, 0, 0, 0},
		{"at exit", "live_bytes_at_exit", CELL_BYTES, 11, 0, 0, 0},
		{"location", "location", CELL_STR, 8, 0, 1, !o->lines},
		{"region", "region", CELL_STR, 0, 0, 0, 0},
		{"file", "file", CELL_STR, 0, 1, 0, 0},
		{"line", "line", CELL_U64, 0, 1, 0, 0},
	};
	struct table t = {out, o->format, cols + !many, NCOLS(cols) - !many, 0};
	size_t n = o->top && o->top < h->nrows ? o->top : h->nrows;
	const char **full = malloc((n + 1) * sizeof *full),
		   **where = malloc((n + 1) * sizeof *where);
	char **names = NULL;

	for (size_t i = 0; full && where && i < n; i++) {
		int64_t g = region_named(o, 0, p, h->rows[i].region);
		full[i] = h->rows[i].region;
		where[i] = g < 0 ? "" : o->shown[0].where[g];
	}
	if (!full || !where || names_of(o, p, full, n, &names) != 0) {
		free(full);
		free(where);
		return -1;
	}
	cols[6].width = where_width(where, n);
	table_begin(&t, "regions");
	for (size_t i = 0; i < n; i++) {
		const struct heap_row *r = &h->rows[i];
		int64_t g = region_named(o, 0, p, r->region);
		union cell c[] = {{.u = r->process},
				  {.u = r->allocs},
				  {.u = r->frees},
				  {.u = r->bytes},
				  {.u = r->peak},
				  {.u = r->leaked},
				  {.s = where[i]},
				  {.s = names[i]},
				  {.s = g < 0 ? "" : p->regions[g].file},
				  {.u = g < 0 ? 0 : p->regions[g].line}};
		table_row(&t, c + !many);
	}
	table_end(&t);
	if (o->format == FMT_TEXT && n < h->nrows)
		fprintf(out, "... %zu more regions (--top)\n", h->nrows - n);
	names_free(names, n);
	free(full);
	free(where);
	return 0;
}

static int print_sites(const struct options *o, const struct rd_profile *p,
		       const struct heap_view *h, int many, FILE *out)
{
	static const struct column cols[] = {
		{"process", "process", CELL_U64, 7, 0, 0, 0},
		{"allocated", "bytes", CELL_BYTES, 11, 0, 0, 0},
		{"allocs", "allocations", CELL_U64, 10, 0, 0, 0},
		{"allocated in", "function", CELL_STR, 28, 0, 0, 0},
		{"at", "file", CELL_STR, 24, 0, 0, 0},
		{"line", "line", CELL_U64, 6, 0, 0, 0},
		{"region", "region", CELL_STR, 0, 0, 0, 0},
	};
	struct table t = {out, o->format, cols + !many, NCOLS(cols) - !many, 0};
	size_t n = o->top && o->top < h->nsites ? o->top : h->nsites;
	const char **full[2] = {malloc((n + 1) * sizeof *full[0]),
				malloc((n + 1) * sizeof *full[1])};
	char **fn = NULL, **region = NULL;
	int rc = full[0] && full[1] ? 0 : -1;

	for (size_t i = 0; rc == 0 && i < n; i++)
		full[0][i] = h->sites[i].function, full[1][i] = h->sites[i].region;
	if (rc == 0)
		rc = names_of(o, p, full[0], n, &fn) | names_of(o, p, full[1], n, &region);
	if (rc == 0)
		table_begin(&t, "sites");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct site_row *s = &h->sites[i];
		const char *base = strrchr(s->file, '/');
		union cell c[] = {{.u = s->process},
				  {.u = s->bytes},
				  {.u = s->allocs},
				  {.s = fn[i]},
				  {.s = o->format == FMT_TEXT && base ? base + 1 : s->file},
				  {.u = s->line},
				  {.s = region[i]}};
		table_row(&t, c + !many);
	}
	if (rc == 0)
		table_end(&t);
	names_free(fn, n);
	names_free(region, n);
	free(full[0]);
	free(full[1]);
	return rc;
}

int view_heap(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
	      size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct heap_view h = {0};
	int rc = read_all(p, &h), many;

	if (rc != 0) {
		snprintf(err, cap, "%s: %s", path,
			 rc > 0 ? "the heap was not tracked (record with SCOPE_HEAP=1, or "
				  "scope-bench --memory)"
				: p->err);
		heap_view_free(&h);
		return -1;
	}
	many = p->nprocesses > 1;
	qsort(h.rows, h.nrows, sizeof *h.rows, by_peak);
	qsort(h.sites, h.nsites, sizeof *h.sites, by_site);
	if (o->format == FMT_JSON) {
		json_doc_begin(out, path, p);
		fprintf(out,
			",\"peak_live_bytes\":%lld,\"live_bytes_at_exit\":%lld,\"untracked\":%lld",
			(long long)h.peak, (long long)h.leaked, (long long)h.untracked);
	} else if (o->format == FMT_TEXT) {
		fprintf(out,
			"%s: heap of %zu process%s: %lld bytes live at the peak%s, %lld not freed "
			"at "
			"exit, %lld calls untracked\n\n",
			path, h.processes, h.processes == 1 ? "" : "es", (long long)h.peak,
			h.processes == 1 ? "" : " (each process's, summed)", (long long)h.leaked,
			(long long)h.untracked);
	}
	rc = print_rows(o, p, &h, many, out);
	if (rc == 0 && o->format == FMT_TEXT)
		fputs("\nthe call sites that allocated most:\n", out);
	if (rc == 0 && o->format != FMT_CSV)
		rc = print_sites(o, p, &h, many, out);
	if (rc == 0 && o->format == FMT_JSON)
		json_doc_end(out);
	heap_view_free(&h);
	if (rc != 0)
		snprintf(err, cap, "%s: out of memory", path);
	return rc;
}
