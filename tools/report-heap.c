/* SPDX-License-Identifier: MIT */
/* scope-report --heap: what each region allocated, its peak and its leaks (SCOPE_HEAP=1), and the
 * call sites that allocated most. */
#define _GNU_SOURCE
#include "names.h"
#include "profile.h"
#include "report.h"
#include "schema.h"

#include <hdf5.h>
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

/* Column name of group g, n values as uint64 into out (calloc'd). */
static int read_u64(hid_t g, const char *name, size_t n, uint64_t **out)
{
	hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
	int rc = -1;

	*out = calloc(n + 1, sizeof **out);
	if (d >= 0 && *out &&
	    (n == 0 || H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) >= 0))
		rc = 0;
	if (d >= 0)
		H5Dclose(d);
	return rc;
}

/* Strings, each strdup'd into out. */
static int read_str(hid_t g, const char *name, size_t n, char ***out)
{
	hid_t d = H5Dopen2(g, name, H5P_DEFAULT), mt = H5Tcopy(H5T_C_S1);
	hid_t space = d >= 0 ? H5Dget_space(d) : -1;
	char **v = calloc(n + 1, sizeof *v);
	int rc = -1;

	*out = calloc(n + 1, sizeof **out);
	if (d >= 0 && space >= 0 && v && *out && H5Tset_size(mt, H5T_VARIABLE) >= 0 &&
	    H5Tset_cset(mt, H5T_CSET_UTF8) >= 0 &&
	    (n == 0 || H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0)) {
		rc = 0;
		for (size_t i = 0; i < n && rc == 0; i++)
			if (!((*out)[i] = strdup(v[i] ? v[i] : "")))
				rc = -1;
		if (n)
			H5Dvlen_reclaim(mt, space, H5P_DEFAULT, v);
	}
	free(v);
	if (space >= 0)
		H5Sclose(space);
	H5Tclose(mt);
	if (d >= 0)
		H5Dclose(d);
	return rc;
}

static size_t rows_of(hid_t g, const char *name)
{
	hid_t d = H5Dopen2(g, name, H5P_DEFAULT), s = d >= 0 ? H5Dget_space(d) : -1;
	hsize_t n = 0;

	if (s >= 0)
		H5Sget_simple_extent_dims(s, &n, NULL);
	if (s >= 0)
		H5Sclose(s);
	if (d >= 0)
		H5Dclose(d);
	return (size_t)n;
}

static int64_t attr_of(hid_t g, const char *name)
{
	int64_t v = 0;
	hid_t a = H5Aexists(g, name) > 0 ? H5Aopen(g, name, H5P_DEFAULT) : -1;

	if (a >= 0) {
		if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0)
			v = 0;
		H5Aclose(a);
	}
	return v;
}

static int grow(void **v, size_t n, size_t size)
{
	void *g = realloc(*v, (n + 1) * size);
	if (!g)
		return -1;
	*v = g;
	return 0;
}

/* The heap group of process k, appended to h. */
static int read_heap(hid_t proc, size_t k, struct heap_view *h)
{
	hid_t g = H5Gopen2(proc, SC_HEAP, H5P_DEFAULT);
	size_t n = rows_of(g, sc_heap[SC_HEAP_REGION].name);
	uint64_t *col[5] = {0};
	char **names = NULL;
	int rc = -1;

	if (g < 0)
		return -1;
	h->processes++;
	h->peak += attr_of(g, sc_heap_attrs[SC_HEAPA_PEAK_LIVE].name);
	h->leaked += attr_of(g, sc_heap_attrs[SC_HEAPA_LIVE_AT_EXIT].name);
	h->untracked += attr_of(g, sc_heap_attrs[SC_HEAPA_UNTRACKED].name);
	if (read_str(g, sc_heap[SC_HEAP_REGION].name, n, &names) != 0 ||
	    read_u64(g, sc_heap[SC_HEAP_ALLOCATIONS].name, n, &col[0]) != 0 ||
	    read_u64(g, sc_heap[SC_HEAP_FREES].name, n, &col[1]) != 0 ||
	    read_u64(g, sc_heap[SC_HEAP_BYTES].name, n, &col[2]) != 0 ||
	    read_u64(g, sc_heap[SC_HEAP_PEAK].name, n, &col[3]) != 0 ||
	    read_u64(g, sc_heap[SC_HEAP_LEAKED].name, n, &col[4]) != 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (grow((void **)&h->rows, h->nrows, sizeof *h->rows) != 0)
			goto out;
		h->rows[h->nrows++] = (struct heap_row){k,	   names[i],  col[0][i], col[1][i],
							col[2][i], col[3][i], col[4][i]};
		names[i] = NULL;
	}
	rc = 0;
out:
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	for (int i = 0; i < 5; i++)
		free(col[i]);
	H5Gclose(g);
	return rc;
}

static int read_sites(hid_t proc, size_t k, struct heap_view *h)
{
	hid_t g = H5Gopen2(proc, SC_HEAP_SITES, H5P_DEFAULT);
	size_t n = rows_of(g, sc_heap_sites[SC_SITE_REGION].name);
	uint64_t *bytes = NULL, *allocs = NULL, *addr = NULL, *line = NULL;
	char **region = NULL, **fn = NULL, **file = NULL;
	int rc = -1;

	if (g < 0)
		return -1;
	if (read_str(g, sc_heap_sites[SC_SITE_REGION].name, n, &region) != 0 ||
	    read_str(g, sc_heap_sites[SC_SITE_FUNCTION].name, n, &fn) != 0 ||
	    read_str(g, sc_heap_sites[SC_SITE_FILE].name, n, &file) != 0 ||
	    read_u64(g, sc_heap_sites[SC_SITE_BYTES].name, n, &bytes) != 0 ||
	    read_u64(g, sc_heap_sites[SC_SITE_ALLOCATIONS].name, n, &allocs) != 0 ||
	    read_u64(g, sc_heap_sites[SC_SITE_ADDRESS].name, n, &addr) != 0 ||
	    read_u64(g, sc_heap_sites[SC_SITE_LINE].name, n, &line) != 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (grow((void **)&h->sites, h->nsites, sizeof *h->sites) != 0)
			goto out;
		h->sites[h->nsites++] = (struct site_row){k,	    region[i], fn[i],	file[i],
							  bytes[i], allocs[i], addr[i], line[i]};
		region[i] = fn[i] = file[i] = NULL;
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++) {
		free(region ? region[i] : NULL);
		free(fn ? fn[i] : NULL);
		free(file ? file[i] : NULL);
	}
	free(region);
	free(fn);
	free(file);
	free(bytes);
	free(allocs);
	free(addr);
	free(line);
	H5Gclose(g);
	return rc;
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

/* Every process's heap groups; 1 when none has one, -1 when one cannot be read. */
static int read_all(const char *path, size_t nprocesses, struct heap_view *h)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	int rc = 0;

	if (f < 0)
		return -1;
	for (size_t k = 0; k < nprocesses && rc == 0; k++) {
		char name[64];
		snprintf(name, sizeof name, SC_PROCESS_N "/" SC_HEAP, k);
		if (H5Lexists(f, name, H5P_DEFAULT) <= 0 ||
		    H5Lexists(f, strtok(name, "/"), H5P_DEFAULT) <= 0)
			continue;
		hid_t proc = H5Gopen2(f, name, H5P_DEFAULT);
		if (proc < 0 || read_heap(proc, k, h) != 0 || read_sites(proc, k, h) != 0)
			rc = -1;
		if (proc >= 0)
			H5Gclose(proc);
	}
	H5Fclose(f);
	return rc == 0 && !h->processes ? 1 : rc;
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
	int rc = read_all(path, p->nprocesses, &h), many;

	if (rc != 0) {
		snprintf(err, cap, "%s: %s", path,
			 rc > 0 ? "the heap was not tracked (record with SCOPE_HEAP=1, or "
				  "scope-bench --memory)"
				: "its heap figures cannot be read");
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
