/* SPDX-License-Identifier: MIT */
/* Opens a schema-3 profile, validates its tables and decodes its events in slices. */
#define _GNU_SOURCE
#include "reader.h"
#include "transfer.h"

#include <errno.h>
#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SLICE_DEFAULT 65536u
#define SLICE_MAX     (1u << 22)
/* Deflate packs at most about 1032 bytes into one; a table whose rows
 * could not fit in its storage at that ratio is refused before it is
 * allocated, so a forged length cannot claim all memory. */
#define MAX_PACKING 1100u
/* Chunk cache of each event column (see rd_cache). */
#define CACHE_MIN_BYTES (1u << 20)
#define CACHE_MAX_BYTES (64u << 20)
#define CACHE_MAX_SLOTS (1u << 20)

/* Column i of /events is the one enum rd_column's bit i asks for. */
static const char *const event_names[RD_NCOLUMNS] = {"start_delta", "duration", "thread",
						     "task",	    "depth",	"flags"};
enum { C_START, C_DURATION, C_THREAD, C_TASK, C_DEPTH, C_FLAGS };

struct rd_h5 {
	hid_t file;
	hid_t events[RD_NCOLUMNS]; /* in the order of event_names */
	hid_t spaces[RD_NCOLUMNS];
	/* Each column is read in its own width (no conversion inside HDF5,
	 * whose per-read buffers cost more than the widening loop) into
	 * scratch, then widened to 64 bits. */
	hid_t memtype[RD_NCOLUMNS];
	size_t width[RD_NCOLUMNS];
	void *scratch;
	size_t scratch_cap; /* bytes */
};

__attribute__((format(printf, 2, 3))) static int fail(struct rd_profile *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof p->err, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- Objects ------------------------------------------------------------ */

/* Opens parent/name (one path component) when it is a group (want_group)
 * or a dataset; path names it in errors. Returns the object or -1. */
static hid_t open_object(struct rd_profile *p, hid_t parent, const char *path, const char *name,
			 int want_group)
{
	H5I_type_t type;
	hid_t o;

	if (H5Lexists(parent, name, H5P_DEFAULT) <= 0) {
		fail(p, "%s is missing", path);
		return -1;
	}
	o = H5Oopen(parent, name, H5P_DEFAULT);
	if (o < 0) {
		fail(p, "%s cannot be opened", path);
		return -1;
	}
	type = H5Iget_type(o);
	if (type != (want_group ? H5I_GROUP : H5I_DATASET)) {
		H5Oclose(o);
		fail(p, "%s is not a %s", path, want_group ? "group" : "dataset");
		return -1;
	}
	return o;
}

/* Opens a group by a path of components relative to the root ("a/b"). */
static hid_t open_group(struct rd_profile *p, const char *path)
{
	char buf[256], *save = NULL, *part;
	char shown[260] = "";
	hid_t g = H5Gopen2(p->h5->file, "/", H5P_DEFAULT);

	snprintf(buf, sizeof buf, "%s", path);
	for (part = strtok_r(buf, "/", &save); part && g >= 0; part = strtok_r(NULL, "/", &save)) {
		hid_t next;
		size_t len = strlen(shown);
		snprintf(shown + len, sizeof shown - len, "/%s", part);
		next = open_object(p, g, shown, part, 1);
		H5Oclose(g);
		g = next;
	}
	return g;
}

/* Rows of a one-dimensional dataset, or -1 when it is not one. */
static int64_t column_rows(hid_t d)
{
	hid_t s = H5Dget_space(d);
	hsize_t n = 0;
	int ok;

	if (s < 0)
		return -1;
	ok = H5Sget_simple_extent_type(s) == H5S_SIMPLE && H5Sget_simple_extent_ndims(s) == 1 &&
	     H5Sget_simple_extent_dims(s, &n, NULL) == 1;
	H5Sclose(s);
	return ok && n <= INT64_MAX ? (int64_t)n : -1;
}

enum kind { K_U64, K_I64, K_STR };

/* Whether d's type fits kind: integers (any width and sign) for numbers,
 * variable-length strings for strings; unsigned integers when is_unsigned. */
static int type_fits(hid_t d, enum kind kind, int is_unsigned)
{
	hid_t t = H5Dget_type(d);
	int ok;

	if (t < 0)
		return 0;
	if (kind == K_STR)
		ok = H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0;
	else
		ok = H5Tget_class(t) == H5T_INTEGER &&
		     (!is_unsigned || H5Tget_sign(t) == H5T_SGN_NONE);
	H5Tclose(t);
	return ok;
}

/* ---- Tables ------------------------------------------------------------- */

struct column_spec {
	const char *name;
	enum kind kind;
	size_t offset; /* of the field in the row struct */
	int optional;  /* files written before it was added lack it: "" or 0 */
};

/* clang-format off */
#define COL(type, field, kind) {#field, kind, offsetof(type, field), 0}
#define OPT(type, field, kind) {#field, kind, offsetof(type, field), 1}
/* clang-format on */

static const struct column_spec process_columns[] = {
	COL(struct rd_process, pid, K_I64),	  COL(struct rd_process, parent, K_I64),
	COL(struct rd_process, rank, K_I64),	  COL(struct rd_process, executable, K_STR),
	COL(struct rd_process, arguments, K_STR), COL(struct rd_process, start, K_U64),
	COL(struct rd_process, end, K_U64),	  COL(struct rd_process, exit_status, K_I64),
	COL(struct rd_process, lost, K_U64),	  OPT(struct rd_process, host, K_STR),
};
static const struct column_spec region_columns[] = {
	COL(struct rd_region, name, K_STR),   COL(struct rd_region, module, K_STR),
	COL(struct rd_region, offset, K_U64), COL(struct rd_region, file, K_STR),
	COL(struct rd_region, line, K_U64),   COL(struct rd_region, kind, K_STR),
};
static const struct column_spec pair_columns[] = {
	COL(struct rd_pair, process, K_U64),	COL(struct rd_pair, region, K_U64),
	COL(struct rd_pair, first, K_U64),	COL(struct rd_pair, count, K_U64),
	COL(struct rd_pair, total_ns, K_U64),	COL(struct rd_pair, self_ns, K_U64),
	COL(struct rd_pair, min_ns, K_U64),	COL(struct rd_pair, max_ns, K_U64),
	OPT(struct rd_pair, bytes_sent, K_U64), OPT(struct rd_pair, bytes_received, K_U64),
};
static const struct column_spec lane_columns[] = {
	COL(struct rd_lane, tid, K_U64),    COL(struct rd_lane, name, K_STR),
	COL(struct rd_lane, parent, K_I64), COL(struct rd_lane, start, K_U64),
	COL(struct rd_lane, end, K_U64),
};
#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

struct table {
	const char *path; /* "/pairs" */
	const struct column_spec *cols;
	size_t ncols, stride;
	void *rows;
	size_t n;
};

static void table_free(struct table *t)
{
	for (size_t c = 0; t->rows && c < t->ncols; c++) {
		if (t->cols[c].kind != K_STR)
			continue;
		for (size_t i = 0; i < t->n; i++)
			free(*(char **)((char *)t->rows + i * t->stride + t->cols[c].offset));
	}
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}

/* For numbers stored compact or contiguous, the bytes stored must be the
 * rows times the type's size (or none yet, for contiguous): HDF5 itself
 * copies what the layout claims and would read past it. */
static int storage_fits(struct rd_profile *p, hid_t d, const char *path, uint64_t rows)
{
	hid_t plist = H5Dget_create_plist(d), t = H5Dget_type(d);
	H5D_layout_t layout = plist >= 0 ? H5Pget_layout(plist) : H5D_LAYOUT_ERROR;
	uint64_t stored = H5Dget_storage_size(d), size = t >= 0 ? H5Tget_size(t) : 0;
	int rc = 0;

	if (layout == H5D_LAYOUT_ERROR || size == 0)
		rc = fail(p, "%s cannot be read", path);
	else if ((layout == H5D_COMPACT || (layout == H5D_CONTIGUOUS && stored)) &&
		 (rows > UINT64_MAX / size || stored != rows * size))
		rc = fail(p, "%s is damaged: %llu bytes stored for %llu rows of %llu bytes", path,
			  (unsigned long long)stored, (unsigned long long)rows,
			  (unsigned long long)size);
	if (t >= 0)
		H5Tclose(t);
	if (plist >= 0)
		H5Pclose(plist);
	return rc;
}

/* Refuses a length the dataset's storage cannot hold (see MAX_PACKING). */
static int plausible(struct rd_profile *p, hid_t d, const char *path, uint64_t rows)
{
	uint64_t stored = H5Dget_storage_size(d);
	if (rows / MAX_PACKING > stored + 4096)
		return fail(p, "%s claims %llu rows in %llu bytes", path, (unsigned long long)rows,
			    (unsigned long long)stored);
	return 0;
}

/* Reads all n values of d as mt; returns 1 when they were read. */
static int read_all(hid_t d, hid_t mt, uint64_t n, void *v)
{
	hid_t x = transfer_for(n);
	int ok = H5Dread(d, mt, H5S_ALL, H5S_ALL, x, v) >= 0;
	transfer_done(x);
	return ok;
}

static int read_numbers(struct rd_profile *p, hid_t d, const char *path, struct table *t,
			const struct column_spec *c)
{
	uint64_t *v = malloc((t->n ? t->n : 1) * sizeof *v);
	hid_t mt = c->kind == K_U64 ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;

	if (!v)
		return fail(p, "out of memory reading %s", path);
	if (t->n && !read_all(d, mt, t->n, v)) {
		free(v);
		return fail(p, "%s cannot be read", path);
	}
	for (size_t i = 0; i < t->n; i++)
		memcpy((char *)t->rows + i * t->stride + c->offset, &v[i], sizeof v[i]);
	free(v);
	return 0;
}

static int read_strings(struct rd_profile *p, hid_t d, const char *path, struct table *t,
			const struct column_spec *c)
{
	hid_t ft = H5Dget_type(d), mt = H5Tcopy(H5T_C_S1), space = H5Dget_space(d);
	char **v = calloc(t->n ? t->n : 1, sizeof *v);
	int rc = 0, have = 0;

	if (ft < 0 || mt < 0 || space < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 ||
	    H5Tset_cset(mt, H5Tget_cset(ft)) < 0 || !v)
		rc = fail(p, "%s cannot be read", path);
	else if (t->n && !(have = read_all(d, mt, t->n, v)))
		rc = fail(p, "%s cannot be read", path);
	for (size_t i = 0; have && i < t->n; i++) {
		char *s = strdup(v[i] ? v[i] : "");
		if (!s) {
			rc = fail(p, "out of memory reading %s", path);
			break;
		}
		memcpy((char *)t->rows + i * t->stride + c->offset, &s, sizeof s);
	}
	if (have)
		H5Dvlen_reclaim(mt, space, H5P_DEFAULT, v);
	free(v);
	if (space >= 0)
		H5Sclose(space);
	if (mt >= 0)
		H5Tclose(mt);
	if (ft >= 0)
		H5Tclose(ft);
	return rc;
}

/* Checks the shape and type of column c and that its length agrees with
 * the table's; the first column read sets the length and allocates the rows. */
static int check_column(struct rd_profile *p, hid_t d, const char *path, struct table *t,
			const struct column_spec *c)
{
	int64_t n = column_rows(d);

	if (n < 0)
		return fail(p, "%s is not a one-dimensional column", path);
	if (!type_fits(d, c->kind, 0))
		return fail(p, "%s is not a column of %s", path,
			    c->kind == K_STR ? "variable-length strings" : "integers");
	if (c->kind != K_STR && storage_fits(p, d, path, (uint64_t)n) != 0)
		return -1;
	if (t->rows) {
		if ((uint64_t)n != t->n)
			return fail(p, "%s has %lld rows, %s/%s has %zu", path, (long long)n,
				    t->path, t->cols[0].name, t->n);
		return 0;
	}
	if (plausible(p, d, path, (uint64_t)n) != 0)
		return -1;
	if ((uint64_t)n >= SIZE_MAX / t->stride || !(t->rows = calloc((size_t)n + 1, t->stride)))
		return fail(p, "out of memory reading %s", path);
	t->n = (size_t)n;
	return 0;
}

/* An optional column the file lacks: its numbers stay 0, its strings are "". */
static int absent_column(struct rd_profile *p, struct table *t, const struct column_spec *c)
{
	for (size_t i = 0; c->kind == K_STR && i < t->n; i++) {
		char *s = strdup("");
		if (!s)
			return fail(p, "out of memory reading %s", t->path);
		memcpy((char *)t->rows + i * t->stride + c->offset, &s, sizeof s);
	}
	return 0;
}

/* Reads column c of group g into the rows of t. */
static int read_column(struct rd_profile *p, hid_t g, struct table *t, const struct column_spec *c)
{
	char path[300];
	hid_t d;
	int rc;

	snprintf(path, sizeof path, "%s/%s", t->path, c->name);
	if (c->optional && H5Lexists(g, c->name, H5P_DEFAULT) <= 0)
		return absent_column(p, t, c);
	d = open_object(p, g, path, c->name, 0);
	if (d < 0)
		return -1;
	rc = check_column(p, d, path, t, c);
	if (rc == 0)
		rc = c->kind == K_STR ? read_strings(p, d, path, t, c)
				      : read_numbers(p, d, path, t, c);
	H5Oclose(d);
	return rc;
}

/* Reads every column of t from the group at t->path. */
static int read_table(struct rd_profile *p, struct table *t)
{
	hid_t g = open_group(p, t->path + 1);
	int rc = 0;

	if (g < 0)
		return -1;
	for (size_t c = 0; c < t->ncols && rc == 0; c++)
		rc = read_column(p, g, t, &t->cols[c]);
	H5Oclose(g);
	return rc;
}

/* ---- Attributes --------------------------------------------------------- */

/* Opens attribute name of obj when it holds exactly one value; -1 if not. */
static hid_t open_scalar_attr(hid_t obj, const char *name)
{
	hid_t a, s;
	hssize_t n;

	if (H5Aexists(obj, name) <= 0)
		return -1;
	a = H5Aopen(obj, name, H5P_DEFAULT);
	if (a < 0)
		return -1;
	s = H5Aget_space(a);
	n = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
	if (s >= 0)
		H5Sclose(s);
	if (n != 1) {
		H5Aclose(a);
		return -1;
	}
	return a;
}

static H5T_class_t attr_class(hid_t a)
{
	hid_t t = H5Aget_type(a);
	H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
	if (t >= 0)
		H5Tclose(t);
	return c;
}

/* A numeric attribute (integer or float) as a double; 0 when absent or not numeric. */
static double attr_double(hid_t obj, const char *name)
{
	hid_t a = open_scalar_attr(obj, name);
	H5T_class_t c;
	double v = 0;

	if (a < 0)
		return 0;
	c = attr_class(a);
	if ((c != H5T_INTEGER && c != H5T_FLOAT) || H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0)
		v = 0;
	H5Aclose(a);
	return v;
}

/* A variable-length string attribute, copied; "" when absent or another type. NULL only
 * when out of memory. */
static char *attr_string(hid_t obj, const char *name)
{
	hid_t a = open_scalar_attr(obj, name), t, mt;
	char *v = NULL, *copy;

	if (a < 0)
		return strdup("");
	t = H5Aget_type(a);
	mt = H5Tcopy(H5T_C_S1);
	if (t >= 0 && mt >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0 &&
	    H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Tset_cset(mt, H5Tget_cset(t)) >= 0 &&
	    H5Aread(a, mt, &v) >= 0) {
		copy = strdup(v ? v : "");
		H5free_memory(v);
	} else {
		copy = strdup("");
	}
	if (mt >= 0)
		H5Tclose(mt);
	if (t >= 0)
		H5Tclose(t);
	H5Aclose(a);
	return copy;
}

static int check_schema(struct rd_profile *p)
{
	hid_t root = p->h5->file, a;
	int64_t schema = 0;
	char *unit;
	int rc;

	if (H5Aexists(root, "schema") <= 0)
		return fail(p, "not a scope profile (no schema attribute)");
	a = open_scalar_attr(root, "schema");
	if (a < 0 || attr_class(a) != H5T_INTEGER || H5Aread(a, H5T_NATIVE_INT64, &schema) < 0) {
		if (a >= 0)
			H5Aclose(a);
		return fail(p, "the schema attribute is not an integer");
	}
	H5Aclose(a);
	if (schema != RD_SCHEMA)
		return fail(p, "schema %lld is not supported (this scope reads schema %d)",
			    (long long)schema, RD_SCHEMA);
	unit = attr_string(root, "time_unit");
	if (!unit)
		return fail(p, "out of memory");
	rc = *unit && strcmp(unit, "ns") != 0
		     ? fail(p, "time unit '%.32s' is not supported (this scope reads ns)", unit)
		     : 0;
	free(unit);
	return rc;
}

static int read_meta(struct rd_profile *p)
{
	struct rd_meta *md = &p->meta;
	double lost;
	hid_t m;

	if (H5Lexists(p->h5->file, "metadata", H5P_DEFAULT) <= 0 ||
	    (m = H5Oopen(p->h5->file, "metadata", H5P_DEFAULT)) < 0)
		m = H5Gopen2(p->h5->file, "/", H5P_DEFAULT); /* read as absent */
	md->wall_seconds = attr_double(m, "wall_seconds");
	md->cpu_seconds = attr_double(m, "cpu_seconds");
	md->peak_rss_bytes = attr_double(m, "peak_rss_bytes");
	lost = attr_double(m, "lost_records");
	md->lost_records = lost > 0 ? (uint64_t)lost : 0;
	md->command_line = attr_string(m, "command_line");
	md->host = attr_string(m, "host");
	md->start_time_utc = attr_string(m, "start_time_utc");
	md->clock_source = attr_string(m, "clock_source");
	H5Oclose(m);
	if (!md->command_line || !md->host || !md->start_time_utc || !md->clock_source)
		return fail(p, "out of memory");
	return 0;
}

/* ---- Whole profile ------------------------------------------------------ */

static int read_lanes(struct rd_profile *p)
{
	for (size_t i = 0; i < p->nprocesses; i++) {
		char path[64];
		struct table t = {
			path, lane_columns, NCOLS(lane_columns), sizeof(struct rd_lane), NULL, 0};
		snprintf(path, sizeof path, "/process%zu/lanes/threads", i);
		if (read_table(p, &t) != 0) {
			table_free(&t);
			return -1;
		}
		p->processes[i].lanes = t.rows;
		p->processes[i].nlanes = t.n;
	}
	return 0;
}

/* The memory type column i is read in: its own width when it is 1, 2, 4 or 8 bytes. */
static void set_width(struct rd_h5 *h, int i)
{
	hid_t t = H5Dget_type(h->events[i]);
	size_t w = t >= 0 ? H5Tget_size(t) : 0;

	if (t >= 0)
		H5Tclose(t);
	h->width[i] = w == 1 || w == 2 || w == 4 ? w : 8;
	h->memtype[i] = w == 1	 ? H5T_NATIVE_UINT8
			: w == 2 ? H5T_NATIVE_UINT16
			: w == 4 ? H5T_NATIVE_UINT32
				 : H5T_NATIVE_UINT64;
}

/* Opens the /events columns, if the group is there, and checks their types and lengths. */
static int open_events(struct rd_profile *p)
{
	hid_t g;
	int64_t n0 = -1;
	int rc = 0;

	if (H5Lexists(p->h5->file, "events", H5P_DEFAULT) <= 0)
		return 0; /* aggregate only */
	g = open_group(p, "events");
	if (g < 0)
		return -1;
	for (int i = 0; i < RD_NCOLUMNS && rc == 0; i++) {
		const char *name = event_names[i];
		char path[64];
		hid_t o;
		int64_t n;
		snprintf(path, sizeof path, "/events/%s", name);
		if ((o = open_object(p, g, path, name, 0)) < 0) {
			rc = -1;
			break;
		}
		H5Oclose(o);
		p->h5->events[i] = H5Dopen2(g, name, H5P_DEFAULT);
		n = p->h5->events[i] >= 0 ? column_rows(p->h5->events[i]) : -1;
		if (n < 0)
			rc = fail(p, "/events/%s is not a one-dimensional column", name);
		else if (!type_fits(p->h5->events[i], K_U64, 1))
			rc = fail(p, "/events/%s is not a column of unsigned integers", name);
		else if (storage_fits(p, p->h5->events[i], path, (uint64_t)n) != 0)
			rc = -1;
		else if (n0 >= 0 && n != n0)
			rc = fail(p, "/events/%s has %lld rows, /events/%s has %lld", name,
				  (long long)n, event_names[0], (long long)n0);
		else if ((p->h5->spaces[i] = H5Dget_space(p->h5->events[i])) < 0)
			rc = fail(p, "/events/%s cannot be read", name);
		else
			set_width(p->h5, i);
		n0 = n;
	}
	H5Oclose(g);
	p->has_events = rc == 0;
	p->nevents = rc == 0 ? (uint64_t)n0 : 0;
	return rc == 0 ? rd_cache(p, 1) : rc;
}

/* The chunk cache one event column wants for readers cursors; 0 when it is not chunked. */
static int cache_size(hid_t d, uint64_t nevents, size_t readers, size_t *bytes, size_t *slots)
{
	hid_t plist = H5Dget_create_plist(d), t = H5Dget_type(d);
	hsize_t rows = 0;
	uint64_t chunk, nchunks, want;
	int rc = -1;

	*bytes = *slots = 0;
	if (plist >= 0 && t >= 0) {
		rc = 0;
		if (H5Pget_layout(plist) == H5D_CHUNKED && H5Pget_chunk(plist, 1, &rows) == 1 &&
		    rows) {
			chunk = rows * H5Tget_size(t);
			nchunks = nevents / rows + 1;
			want = ((readers < nchunks ? readers : nchunks) + 1) * chunk;
			*bytes = want < CACHE_MIN_BYTES	  ? CACHE_MIN_BYTES
				 : want > CACHE_MAX_BYTES ? CACHE_MAX_BYTES
							  : (size_t)want;
			*slots = nchunks < CACHE_MAX_SLOTS ? (size_t)nchunks + 1 : CACHE_MAX_SLOTS;
		}
	}
	if (t >= 0)
		H5Tclose(t);
	if (plist >= 0)
		H5Pclose(plist);
	return rc;
}

/*
 * Cursors that read one column at different places each keep a chunk of it
 * busy: a chunk evicted before its rows are used is decompressed again for
 * every slice. The cache of each column holds a chunk per reader (plus one),
 * from 1 to 64 MiB, with a slot for every chunk so that none collide; HDF5
 * only sets it when a dataset is opened, so the columns are opened anew.
 */
int rd_cache(struct rd_profile *p, size_t readers)
{
	for (int i = 0; p->has_events && i < RD_NCOLUMNS; i++) {
		char path[64];
		size_t bytes, slots;
		hid_t dapl, d;
		if (cache_size(p->h5->events[i], p->nevents, readers, &bytes, &slots) != 0)
			return fail(p, "/events/%s cannot be read", event_names[i]);
		if (!bytes)
			continue;
		snprintf(path, sizeof path, "/events/%s", event_names[i]);
		dapl = H5Pcreate(H5P_DATASET_ACCESS);
		d = dapl >= 0 && H5Pset_chunk_cache(dapl, slots, bytes, 1.0) >= 0
			    ? H5Dopen2(p->h5->file, path, dapl)
			    : -1;
		if (dapl >= 0)
			H5Pclose(dapl);
		if (d < 0)
			return fail(p, "%s cannot be read", path);
		H5Dclose(p->h5->events[i]);
		p->h5->events[i] = d;
	}
	return 0;
}

static int check_processes(struct rd_profile *p)
{
	p->origin = p->nprocesses ? UINT64_MAX : 0;
	for (size_t i = 0; i < p->nprocesses; i++) {
		const struct rd_process *pr = &p->processes[i];
		if (pr->end < pr->start)
			return fail(p, "/processes row %zu ends (%llu) before it starts (%llu)", i,
				    (unsigned long long)pr->end, (unsigned long long)pr->start);
		if (pr->start < p->origin)
			p->origin = pr->start;
	}
	return 0;
}

static int check_pairs(struct rd_profile *p)
{
	for (size_t i = 0; i < p->npairs; i++) {
		const struct rd_pair *r = &p->pairs[i];
		if (r->process >= p->nprocesses)
			return fail(p,
				    "/pairs row %zu: process %llu is out of range (%zu processes)",
				    i, (unsigned long long)r->process, p->nprocesses);
		if (r->region >= p->nregions)
			return fail(p, "/pairs row %zu: region %llu is out of range (%zu regions)",
				    i, (unsigned long long)r->region, p->nregions);
		if (p->has_events && (r->count > p->nevents || r->first > p->nevents - r->count))
			return fail(
				p,
				"/pairs row %zu: events [%llu, %llu + %llu) lie beyond the %llu "
				"rows of /events",
				i, (unsigned long long)r->first, (unsigned long long)r->first,
				(unsigned long long)r->count, (unsigned long long)p->nevents);
	}
	return 0;
}

const char *rd_not_a_file(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return strerror(errno);
	if (S_ISDIR(st.st_mode))
		return "is a directory";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	return NULL;
}

int rd_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static int load(struct rd_profile *p, const char *path)
{
	struct table processes = {"/processes",
				  process_columns,
				  NCOLS(process_columns),
				  sizeof(struct rd_process),
				  NULL,
				  0};
	struct table regions = {
		"/regions", region_columns, NCOLS(region_columns), sizeof(struct rd_region), NULL,
		0};
	struct table pairs = {
		"/pairs", pair_columns, NCOLS(pair_columns), sizeof(struct rd_pair), NULL, 0};
	const char *why = rd_not_a_file(path);
	htri_t is;
	int rc;

	if (why)
		return fail(p, "%s", why);
	is = H5Fis_hdf5(path);
	if (is <= 0)
		return fail(p, "%s", is == 0 ? "not an HDF5 file" : "cannot be read as HDF5");
	p->h5->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (p->h5->file < 0)
		return fail(p, "cannot be opened as HDF5");
	if (check_schema(p) != 0)
		return -1;
	/* rd_close frees what was read, even in part */
	rc = read_table(p, &processes);
	p->processes = processes.rows;
	p->nprocesses = processes.n;
	if (rc == 0) {
		rc = read_table(p, &regions);
		p->regions = regions.rows;
		p->nregions = regions.n;
	}
	if (rc == 0) {
		rc = read_table(p, &pairs);
		p->pairs = pairs.rows;
		p->npairs = pairs.n;
		p->has_bytes = H5Lexists(p->h5->file, "/pairs/bytes_sent", H5P_DEFAULT) > 0 &&
			       H5Lexists(p->h5->file, "/pairs/bytes_received", H5P_DEFAULT) > 0;
	}
	if (rc != 0)
		return -1;
	if (read_lanes(p) || read_meta(p) || open_events(p) || check_processes(p) || check_pairs(p))
		return -1;
	return 0;
}

struct rd_profile *rd_open(const char *path, char *err, size_t errcap)
{
	struct rd_profile *p = calloc(1, sizeof *p);

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (!p || !(p->h5 = calloc(1, sizeof *p->h5))) {
		snprintf(err, errcap, "out of memory");
		free(p);
		return NULL;
	}
	p->h5->file = -1;
	for (int i = 0; i < RD_NCOLUMNS; i++)
		p->h5->events[i] = p->h5->spaces[i] = -1;
	if (load(p, path) != 0) {
		snprintf(err, errcap, "%s", p->err[0] ? p->err : "cannot be read");
		rd_close(p);
		return NULL;
	}
	return p;
}

static void free_rows(const struct column_spec *cols, size_t ncols, size_t stride, void *rows,
		      size_t n)
{
	struct table t = {"", cols, ncols, stride, rows, n};
	table_free(&t);
}

void rd_close(struct rd_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; p->processes && i < p->nprocesses; i++)
		free_rows(lane_columns, NCOLS(lane_columns), sizeof(struct rd_lane),
			  p->processes[i].lanes, p->processes[i].nlanes);
	free_rows(process_columns, NCOLS(process_columns), sizeof(struct rd_process), p->processes,
		  p->nprocesses);
	free_rows(region_columns, NCOLS(region_columns), sizeof(struct rd_region), p->regions,
		  p->nregions);
	free(p->pairs);
	free(p->meta.command_line);
	free(p->meta.host);
	free(p->meta.start_time_utc);
	free(p->meta.clock_source);
	if (p->h5) {
		for (int i = 0; i < RD_NCOLUMNS; i++) {
			if (p->h5->spaces[i] >= 0)
				H5Sclose(p->h5->spaces[i]);
			if (p->h5->events[i] >= 0)
				H5Dclose(p->h5->events[i]);
		}
		if (p->h5->file >= 0)
			H5Fclose(p->h5->file);
		free(p->h5->scratch);
		free(p->h5);
	}
	free(p);
}

/* ---- Events ------------------------------------------------------------- */

int rd_cursor_open(struct rd_profile *p, size_t pair, unsigned columns, size_t slice,
		   struct rd_cursor *c)
{
	const struct rd_pair *r;

	memset(c, 0, sizeof *c);
	c->p = p;
	if (!p->has_events)
		return fail(p, "the profile holds no events (/events is missing)");
	if (pair >= p->npairs)
		return fail(p, "pair %zu is out of range (%zu pairs)", pair, p->npairs);
	r = &p->pairs[pair];
	c->pair = pair;
	c->columns = columns & RD_ALL;
	c->row = r->first;
	c->end = r->first + r->count;
	c->nlanes = p->processes[r->process].nlanes;
	slice = slice ? slice : SLICE_DEFAULT;
	slice = slice > SLICE_MAX ? SLICE_MAX : slice;
	c->cap = r->count < slice ? (size_t)r->count : slice;
	for (int i = 0; i < RD_NCOLUMNS; i++) {
		if (!(c->columns & (1u << i)))
			continue;
		c->buf[i] = malloc((c->cap ? c->cap : 1) * sizeof(uint64_t));
		if (!c->buf[i]) {
			rd_cursor_close(c);
			return fail(p, "out of memory reading /events");
		}
	}
	return 0;
}

void rd_cursor_close(struct rd_cursor *c)
{
	for (int i = 0; i < RD_NCOLUMNS; i++) {
		free(c->buf[i]);
		c->buf[i] = NULL;
	}
}

/* Widens n values of width bytes at from into to. */
static void widen(uint64_t *to, const void *from, size_t width, size_t n)
{
	const uint8_t *b = from;
	const uint16_t *h = from;
	const uint32_t *w = from;

	switch (width) {
	case 1:
		for (size_t i = 0; i < n; i++)
			to[i] = b[i];
		break;
	case 2:
		for (size_t i = 0; i < n; i++)
			to[i] = h[i];
		break;
	case 4:
		for (size_t i = 0; i < n; i++)
			to[i] = w[i];
		break;
	default: memcpy(to, from, n * sizeof *to);
	}
}

/* Reads rows [off, off + n) of column i into to, as 64-bit values. */
static int read_slice(struct rd_profile *p, int i, hsize_t off, hsize_t n, hid_t mem, uint64_t *to)
{
	struct rd_h5 *h = p->h5;
	size_t bytes = (size_t)n * h->width[i];

	if (bytes > h->scratch_cap) {
		void *grown = realloc(h->scratch, bytes);
		if (!grown)
			return fail(p, "out of memory reading /events");
		h->scratch = grown;
		h->scratch_cap = bytes;
	}
	if (H5Sselect_hyperslab(h->spaces[i], H5S_SELECT_SET, &off, NULL, &n, NULL) < 0 ||
	    H5Dread(h->events[i], h->memtype[i], mem, h->spaces[i], H5P_DEFAULT, h->scratch) < 0)
		return fail(p, "/events/%s rows [%llu, %llu) cannot be read", event_names[i],
			    (unsigned long long)off, (unsigned long long)(off + n));
	widen(to, h->scratch, h->width[i], (size_t)n);
	return 0;
}

/* Reads the next slice of every column asked for. */
static int fill(struct rd_cursor *c)
{
	hsize_t off = c->row, n = c->end - c->row < c->cap ? c->end - c->row : c->cap;
	hid_t mem = H5Screate_simple(1, &n, NULL);
	int rc = 0;

	if (mem < 0)
		return fail(c->p, "cannot read /events");
	for (int i = 0; i < RD_NCOLUMNS && rc == 0; i++)
		if (c->buf[i])
			rc = read_slice(c->p, i, off, n, mem, c->buf[i]);
	H5Sclose(mem);
	if (rc != 0)
		return -1;
	c->row += n;
	c->len = (size_t)n;
	c->pos = 0;
	return 0;
}

int rd_cursor_next(struct rd_cursor *c, struct rd_event *e)
{
	size_t i;
	uint64_t row;

	if (c->pos == c->len) {
		if (c->row == c->end)
			return 0;
		if (fill(c) != 0)
			return -1;
	}
	i = c->pos++;
	row = c->row - c->len + i;
	memset(e, 0, sizeof *e);
	if (c->buf[C_START]) {
		if (c->start > UINT64_MAX - c->buf[C_START][i])
			return fail(c->p, "/events/start_delta row %llu: the start passes 2^64 ns",
				    (unsigned long long)row);
		c->start += c->buf[C_START][i];
		e->start = c->start;
	}
	e->duration = c->buf[C_DURATION] ? c->buf[C_DURATION][i] : 0;
	e->thread = c->buf[C_THREAD] ? c->buf[C_THREAD][i] : 0;
	e->task = c->buf[C_TASK] ? c->buf[C_TASK][i] : 0;
	e->depth = c->buf[C_DEPTH] ? c->buf[C_DEPTH][i] : 0;
	e->flags = c->buf[C_FLAGS] ? (uint8_t)c->buf[C_FLAGS][i] : 0;
	if (c->buf[C_THREAD] && e->thread >= c->nlanes)
		return fail(c->p,
			    "/events/thread row %llu: lane %llu is out of range (process %llu has "
			    "%llu lanes)",
			    (unsigned long long)row, (unsigned long long)e->thread,
			    (unsigned long long)c->p->pairs[c->pair].process,
			    (unsigned long long)c->nlanes);
	if (e->start > UINT64_MAX - e->duration)
		return fail(c->p, "/events/duration row %llu: the end passes 2^64 ns",
			    (unsigned long long)row);
	return 1;
}

int rd_check_events(struct rd_profile *p, unsigned columns)
{
	struct rd_cursor c;
	struct rd_event e;
	int rc = 0;

	for (size_t i = 0; p->has_events && i < p->npairs && rc == 0; i++) {
		if (rd_cursor_open(p, i, columns, 0, &c) != 0)
			return -1;
		while ((rc = rd_cursor_next(&c, &e)) == 1)
			;
		rd_cursor_close(&c);
	}
	return rc;
}

int rd_check(const char *path, char *err, size_t errcap)
{
	struct rd_profile *p = rd_open(path, err, errcap);
	int rc;

	if (!p)
		return -1;
	rc = rd_check_events(p, RD_ALL);
	if (rc != 0)
		snprintf(err, errcap, "%s", p->err);
	rd_close(p);
	return rc;
}
