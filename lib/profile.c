/* SPDX-License-Identifier: MIT */
/* Reads the per-region figures of a schema-3 profile and prints them as a table. */
#define _GNU_SOURCE
#include "profile.h"

#include <hdf5.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct reader {
	hid_t file;
	char *err;
	size_t errcap;
};

static int fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, r->errcap, fmt, ap);
	va_end(ap);
	return -1;
}

/* Reads a one-dimensional unsigned column as uint64; *n receives its length. */
static uint64_t *read_u64(struct reader *r, const char *name, hsize_t *n)
{
	hid_t d = H5Dopen2(r->file, name, H5P_DEFAULT), s, t;
	uint64_t *v = NULL;

	if (d < 0) {
		fail(r, "%s is missing", name);
		return NULL;
	}
	s = H5Dget_space(d);
	t = H5Dget_type(d);
	if (H5Sget_simple_extent_ndims(s) != 1 || H5Tget_class(t) != H5T_INTEGER) {
		fail(r, "%s is not a column of integers", name);
	} else {
		H5Sget_simple_extent_dims(s, n, NULL);
		v = malloc((*n + 1) * sizeof *v);
		if (v && H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
			fail(r, "%s cannot be read", name);
			free(v);
			v = NULL;
		}
	}
	H5Tclose(t);
	H5Sclose(s);
	H5Dclose(d);
	return v;
}

static char **read_str(struct reader *r, const char *name, hsize_t *n)
{
	hid_t d = H5Dopen2(r->file, name, H5P_DEFAULT), s, t, mt;
	char **v = NULL, **copy = NULL;

	if (d < 0) {
		fail(r, "%s is missing", name);
		return NULL;
	}
	s = H5Dget_space(d);
	t = H5Dget_type(d);
	mt = H5Tcopy(H5T_C_S1);
	H5Tset_size(mt, H5T_VARIABLE);
	H5Tset_cset(mt, H5T_CSET_UTF8);
	if (H5Sget_simple_extent_ndims(s) != 1 || H5Tget_class(t) != H5T_STRING ||
	    !H5Tis_variable_str(t)) {
		fail(r, "%s is not a column of strings", name);
		goto out;
	}
	H5Sget_simple_extent_dims(s, n, NULL);
	v = calloc(*n + 1, sizeof *v);
	copy = calloc(*n + 1, sizeof *copy);
	if (!v || !copy || H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
		fail(r, "%s cannot be read", name);
		free(copy);
		copy = NULL;
		goto out;
	}
	for (hsize_t i = 0; i < *n; i++)
		copy[i] = strdup(v[i] ? v[i] : "");
	H5Dvlen_reclaim(mt, s, H5P_DEFAULT, v);
out:
	free(v);
	H5Tclose(mt);
	H5Tclose(t);
	H5Sclose(s);
	H5Dclose(d);
	return copy;
}

/* A numeric attribute as a double (HDF5 converts integers); 0 when absent. */
static double read_attr_f64(hid_t file, const char *obj, const char *name)
{
	double v = 0;
	hid_t a;
	if (H5Aexists_by_name(file, obj, name, H5P_DEFAULT) <= 0)
		return 0;
	a = H5Aopen_by_name(file, obj, name, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0) {
		if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0)
			v = 0;
		H5Aclose(a);
	}
	return v;
}

static int check_schema(struct reader *r)
{
	int64_t schema = 0;
	hid_t a;
	if (H5Aexists(r->file, "schema") <= 0)
		return fail(r, "not a scope profile (no schema attribute)");
	a = H5Aopen(r->file, "schema", H5P_DEFAULT);
	if (a < 0 || H5Aread(a, H5T_NATIVE_INT64, &schema) < 0) {
		if (a >= 0)
			H5Aclose(a);
		return fail(r, "unreadable schema attribute");
	}
	H5Aclose(a);
	return schema == 3 ? 0
			   : fail(r, "schema %lld is not supported (this scope reads 3)",
				  (long long)schema);
}

static int by_self(const void *x, const void *y)
{
	const struct region_stats *a = x, *b = y;
	return a->self_ns > b->self_ns ? -1 : a->self_ns < b->self_ns;
}

static int fold(struct reader *r, struct summary *s, char **names, hsize_t nnames, uint64_t **c,
		hsize_t npairs)
{
	s->regions = calloc(nnames + 1, sizeof *s->regions);
	if (!s->regions)
		return fail(r, "out of memory");
	for (hsize_t i = 0; i < nnames; i++) {
		s->regions[i].name = names[i];
		s->regions[i].min_ns = UINT64_MAX;
		names[i] = NULL;
	}
	s->n = nnames;
	for (hsize_t i = 0; i < npairs; i++) {
		struct region_stats *g;
		if (c[0][i] >= nnames)
			return fail(r, "/pairs/region %llu is out of range",
				    (unsigned long long)c[0][i]);
		g = &s->regions[c[0][i]];
		g->calls += c[1][i];
		g->total_ns += c[2][i];
		g->self_ns += c[3][i];
		if (c[4][i] < g->min_ns)
			g->min_ns = c[4][i];
		if (c[5][i] > g->max_ns)
			g->max_ns = c[5][i];
		s->events += c[1][i];
	}
	qsort(s->regions, s->n, sizeof *s->regions, by_self);
	return 0;
}

int summary_read(const char *path, struct summary *s, char *err, size_t errcap)
{
	static const char *const cols[] = {"/pairs/region",  "/pairs/count",  "/pairs/total_ns",
					   "/pairs/self_ns", "/pairs/min_ns", "/pairs/max_ns"};
	struct reader r = {.err = err, .errcap = errcap};
	uint64_t *c[6] = {0};
	char **names = NULL;
	hsize_t nnames = 0, npairs = 0, len;
	int rc = -1;

	memset(s, 0, sizeof *s);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (H5Fis_hdf5(path) <= 0) {
		fail(&r, "not an HDF5 file");
		return -1;
	}
	r.file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (r.file < 0)
		return fail(&r, "cannot open");
	if (check_schema(&r) != 0 || !(names = read_str(&r, "/regions/name", &nnames)))
		goto out;
	for (int i = 0; i < 6; i++) {
		if (!(c[i] = read_u64(&r, cols[i], &len)))
			goto out;
		if (i == 0)
			npairs = len;
		else if (len != npairs) {
			fail(&r, "%s has %llu rows, /pairs/region %llu", cols[i],
			     (unsigned long long)len, (unsigned long long)npairs);
			goto out;
		}
	}
	if (fold(&r, s, names, nnames, c, npairs) != 0)
		goto out;
	s->wall_seconds = read_attr_f64(r.file, "/metadata", "wall_seconds");
	s->cpu_seconds = read_attr_f64(r.file, "/metadata", "cpu_seconds");
	s->peak_rss_bytes = read_attr_f64(r.file, "/metadata", "peak_rss_bytes");
	s->lost = (uint64_t)read_attr_f64(r.file, "/metadata", "lost_records");
	rc = 0;
out:
	for (hsize_t i = 0; names && i < nnames; i++)
		free(names[i]);
	free(names);
	for (int i = 0; i < 6; i++)
		free(c[i]);
	H5Fclose(r.file);
	if (rc != 0)
		summary_free(s);
	return rc;
}

void summary_free(struct summary *s)
{
	for (size_t i = 0; s->regions && i < s->n; i++)
		free(s->regions[i].name);
	free(s->regions);
	memset(s, 0, sizeof *s);
}

/* 1234567 ns -> "1.235 ms": four significant figures in a fitting unit. */
static const char *duration(char *buf, size_t cap, double ns)
{
	static const char *const unit[] = {"ns", "us", "ms", "s"};
	int u = 0;
	while (ns >= 1000 && u < 3) {
		ns /= 1000;
		u++;
	}
	snprintf(buf, cap, u == 0 ? "%.0f %s" : "%.3f %s", ns, unit[u]);
	return buf;
}

void summary_print(FILE *out, const struct summary *s, size_t top)
{
	char b[6][32];
	double all_self = 0;
	size_t shown = s->n < top ? s->n : top;

	/* Shares of the time recorded on all threads together, so they add up
	 * to 100% however many threads ran. */
	for (size_t i = 0; i < s->n; i++)
		all_self += (double)s->regions[i].self_ns;

	fprintf(out, "%-36s %10s %11s %11s %11s %11s %11s %6s\n", "region (by self time)", "calls",
		"total", "self", "mean", "min", "max", "share");
	for (size_t i = 0; i < shown; i++) {
		const struct region_stats *g = &s->regions[i];
		const char *name = g->name;
		size_t len = strlen(name);
		char cut[40];
		if (len > 36) {
			snprintf(cut, sizeof cut, "%.16s...%s", name, name + len - 17);
			name = cut;
		}
		fprintf(out, "%-36s %10llu %11s %11s %11s %11s %11s %5.1f%%\n", name,
			(unsigned long long)g->calls, duration(b[0], 32, (double)g->total_ns),
			duration(b[1], 32, (double)g->self_ns),
			duration(b[2], 32, g->calls ? (double)g->total_ns / (double)g->calls : 0),
			duration(b[3], 32, g->calls ? (double)g->min_ns : 0),
			duration(b[4], 32, (double)g->max_ns),
			all_self > 0 ? 100.0 * (double)g->self_ns / all_self : 0.0);
	}
	if (s->n > shown)
		fprintf(out, "... %zu more regions\n", s->n - shown);
}
