/* SPDX-License-Identifier: MIT */
/* Opens a schema-3 profile, validates its tables and decodes its events in slices. */
#define _GNU_SOURCE
#include "reader.h"
#include "h5copy.h"
#include "progress.h"
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

/* The fields of each group, from lib/schema.h's lists (here, not through
 * its tables, so that the fuzzers link the reader alone). */
struct field {
	const char *name;
	enum sc_type type;
	enum sc_need need;
};
#define FIELD(id, name, type, need, unit, what) {name, type, need},
static const struct field event_fields[SC_NEV] = {SC_EVENT_FIELDS(FIELD)};
static const struct field process_fields[SC_NPROC] = {SC_PROCESS_FIELDS(FIELD)};
static const struct field region_fields[SC_NREG] = {SC_REGION_FIELDS(FIELD)};
static const struct field pair_fields[SC_NPAIR] = {SC_PAIR_FIELDS(FIELD)};
static const struct field thread_fields[SC_NTHR] = {SC_THREAD_FIELDS(FIELD)};
static const struct field task_fields[SC_NTASK] = {SC_TASK_FIELDS(FIELD)};
static const struct field module_fields[SC_NMOD] = {SC_MODULE_FIELDS(FIELD)};
static const struct field sample_fields[SC_NSMP] = {SC_SAMPLE_FIELDS(FIELD)};
static const struct field aggregate_fields[SC_NAGG] = {SC_AGGREGATE_FIELDS(FIELD)};
static const struct field heap_fields[SC_NHEAP] = {SC_HEAP_FIELDS(FIELD)};
static const struct field site_fields[SC_NSITE] = {SC_HEAP_SITE_FIELDS(FIELD)};
#define META_NAME(id, name, ...) [SC_META_##id] = name,
static const char *const meta_names[SC_NMETA] = {SC_METADATA_FIELDS(META_NAME)};
#define ROOT_NAME(id, name, ...) [SC_ROOT_##id] = name,
static const char *const root_names[SC_NROOT] = {SC_ROOT_FIELDS(ROOT_NAME)};
#define HEAPA_NAME(id, name, ...) [SC_HEAPA_##id] = name,
static const char *const heap_attr_names[SC_NHEAPA] = {SC_HEAP_ATTRS(HEAPA_NAME)};
#define EVENT_NAME(i) (event_fields[i].name)

struct rd_h5 {
	hid_t file;
	hid_t events[SC_NEV]; /* in lib/schema.h's order; -1: an optional one the file lacks */
	hid_t spaces[SC_NEV];
	/* Each column is read in its own width (no conversion inside HDF5,
	 * whose per-read buffers cost more than the widening loop) into
	 * scratch, then widened to 64 bits. */
	hid_t memtype[SC_NEV];
	size_t width[SC_NEV]; /* 0: not in the file */
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

/* A field of a table and where its values go in the row struct; the
 * name, type and need are lib/schema.h's for field id. */
struct column_spec {
	int id;
	size_t offset;
	int64_t fill; /* an optional column the file lacks: every row's number; strings are "" */
};

/* clang-format off */
#define COL(prefix, id, type, field) {SC_##prefix##_##id, offsetof(type, field), 0}
#define OPT(prefix, id, type, field, fill) {SC_##prefix##_##id, offsetof(type, field), fill}
/* clang-format on */

/* Every field of each table has its place in the row struct: a column
 * added to lib/schema.h stops the build until it has one. */
static const struct column_spec process_columns[] = {
	COL(PROC, PID, struct rd_process, pid),
	OPT(PROC, PPID, struct rd_process, ppid, -1),
	COL(PROC, PARENT, struct rd_process, parent),
	COL(PROC, RANK, struct rd_process, rank),
	COL(PROC, EXECUTABLE, struct rd_process, executable),
	COL(PROC, ARGUMENTS, struct rd_process, arguments),
	COL(PROC, START, struct rd_process, start),
	COL(PROC, END, struct rd_process, end),
	COL(PROC, EXIT_STATUS, struct rd_process, exit_status),
	OPT(PROC, EXIT_SIGNAL, struct rd_process, exit_signal, 0),
	COL(PROC, LOST, struct rd_process, lost),
	OPT(PROC, EXEC, struct rd_process, exec, 0),
	OPT(PROC, COMPLETE, struct rd_process, complete, 0),
	OPT(PROC, HOST, struct rd_process, host, 0),
	OPT(PROC, COUNTERS, struct rd_process, counters, 0),
};
static const struct column_spec region_columns[] = {
	COL(REG, NAME, struct rd_region, name),	    COL(REG, MODULE, struct rd_region, module),
	COL(REG, OFFSET, struct rd_region, offset), COL(REG, FILE, struct rd_region, file),
	COL(REG, LINE, struct rd_region, line),	    COL(REG, KIND, struct rd_region, kind),
};
static const struct column_spec pair_columns[] = {
	COL(PAIR, PROCESS, struct rd_pair, process),
	COL(PAIR, REGION, struct rd_pair, region),
	COL(PAIR, FIRST, struct rd_pair, first),
	COL(PAIR, COUNT, struct rd_pair, count),
	COL(PAIR, TOTAL_NS, struct rd_pair, total_ns),
	OPT(PAIR, TOTAL_ALL_NS, struct rd_pair, total_all_ns, 0),
	COL(PAIR, SELF_NS, struct rd_pair, self_ns),
	COL(PAIR, MIN_NS, struct rd_pair, min_ns),
	COL(PAIR, MAX_NS, struct rd_pair, max_ns),
	OPT(PAIR, BYTES_SENT, struct rd_pair, bytes_sent, 0),
	OPT(PAIR, BYTES_RECEIVED, struct rd_pair, bytes_received, 0),
	OPT(PAIR, AGGREGATED, struct rd_pair, aggregated, 0),
	OPT(PAIR, COUNTER0_TOTAL, struct rd_pair, counter_total[0], 0),
	OPT(PAIR, COUNTER0_SELF, struct rd_pair, counter_self[0], 0),
	OPT(PAIR, COUNTER1_TOTAL, struct rd_pair, counter_total[1], 0),
	OPT(PAIR, COUNTER1_SELF, struct rd_pair, counter_self[1], 0),
	OPT(PAIR, COUNTER2_TOTAL, struct rd_pair, counter_total[2], 0),
	OPT(PAIR, COUNTER2_SELF, struct rd_pair, counter_self[2], 0),
	OPT(PAIR, COUNTER3_TOTAL, struct rd_pair, counter_total[3], 0),
	OPT(PAIR, COUNTER3_SELF, struct rd_pair, counter_self[3], 0),
};
static const struct column_spec lane_columns[] = {
	COL(THR, TID, struct rd_lane, tid),	  COL(THR, NAME, struct rd_lane, name),
	COL(THR, PARENT, struct rd_lane, parent), COL(THR, START, struct rd_lane, start),
	COL(THR, END, struct rd_lane, end),	  OPT(THR, CPU_NS, struct rd_lane, cpu_ns, 0),
};
static const struct column_spec task_columns[] = {
	COL(TASK, ID, struct rd_task, id),	     COL(TASK, NAME, struct rd_task, name),
	COL(TASK, PARENT, struct rd_task, parent),   COL(TASK, START, struct rd_task, start),
	COL(TASK, END, struct rd_task, end),	     COL(TASK, THREADS, struct rd_task, threads),
	COL(TASK, BUSY_NS, struct rd_task, busy_ns),
};
static const struct column_spec module_columns[] = {
	COL(MOD, PATH, struct rd_module, path),		COL(MOD, BIAS, struct rd_module, bias),
	OPT(MOD, LOW, struct rd_module, lo, 0),		OPT(MOD, HIGH, struct rd_module, hi, 0),
	COL(MOD, BUILD_ID, struct rd_module, build_id),
};
#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))
/* In the order of lib/schema.h's lists: spec[id] is field id's (rd_open checks). */
_Static_assert(NCOLS(process_columns) == SC_NPROC, "a /processes column without a field");
_Static_assert(NCOLS(region_columns) == SC_NREG, "a /regions column without a field");
_Static_assert(NCOLS(pair_columns) == SC_NPAIR, "a /pairs column without a field");
_Static_assert(NCOLS(lane_columns) == SC_NTHR, "a lanes/threads column without a field");
_Static_assert(NCOLS(task_columns) == SC_NTASK, "a lanes/tasks column without a field");
_Static_assert(NCOLS(module_columns) == SC_NMOD, "a modules column without a field");
static const struct column_spec sample_columns[] = {
	COL(SMP, TIME, struct rd_sample, time),
	COL(SMP, THREAD, struct rd_sample, thread),
	COL(SMP, REGION, struct rd_sample, region),
	COL(SMP, STACK, struct rd_sample, stack),
};
_Static_assert(NCOLS(sample_columns) == SC_NSMP, "a samples column without a field");
static const struct column_spec aggregate_columns[] = {
	COL(AGG, REGION, struct rd_aggregate, region),
	COL(AGG, THREAD, struct rd_aggregate, thread),
	COL(AGG, CALLS, struct rd_aggregate, calls),
	COL(AGG, TOTAL_NS, struct rd_aggregate, total_ns),
	COL(AGG, TOTAL_ALL_NS, struct rd_aggregate, total_all_ns),
	COL(AGG, SELF_NS, struct rd_aggregate, self_ns),
	COL(AGG, MIN_NS, struct rd_aggregate, min_ns),
	COL(AGG, MAX_NS, struct rd_aggregate, max_ns),
};
_Static_assert(NCOLS(aggregate_columns) == SC_NAGG, "an aggregates column without a field");
static const struct column_spec heap_columns[] = {
	COL(HEAP, REGION, struct rd_heap_row, region),
	COL(HEAP, ALLOCATIONS, struct rd_heap_row, allocations),
	COL(HEAP, FREES, struct rd_heap_row, frees),
	COL(HEAP, BYTES, struct rd_heap_row, bytes),
	COL(HEAP, PEAK, struct rd_heap_row, peak),
	COL(HEAP, LEAKED, struct rd_heap_row, leaked),
};
_Static_assert(NCOLS(heap_columns) == SC_NHEAP, "a heap column without a field");
static const struct column_spec site_columns[] = {
	COL(SITE, REGION, struct rd_heap_site, region),
	COL(SITE, BYTES, struct rd_heap_site, bytes),
	COL(SITE, ALLOCATIONS, struct rd_heap_site, allocations),
	COL(SITE, ADDRESS, struct rd_heap_site, address),
	COL(SITE, FUNCTION, struct rd_heap_site, function),
	COL(SITE, FILE, struct rd_heap_site, file),
	COL(SITE, LINE, struct rd_heap_site, line),
};
_Static_assert(NCOLS(site_columns) == SC_NSITE, "a heap_sites column without a field");

/* How a field is read: integers of any width and sign as 64-bit numbers
 * (signed ones as int64), strings as copies. */
static enum kind kind_of(const struct field *f)
{
	return f->type == SC_STRING			    ? K_STR
	       : f->type == SC_INT32 || f->type == SC_INT64 ? K_I64
							    : K_U64;
}

struct table {
	const char *path; /* "/pairs" */
	const struct field *fields;
	const struct column_spec *cols;
	size_t ncols, stride;
	void *rows;
	size_t n;
};

static enum kind col_kind(const struct table *t, const struct column_spec *c)
{
	return kind_of(&t->fields[c->id]);
}

static const char *col_name(const struct table *t, const struct column_spec *c)
{
	return t->fields[c->id].name;
}

static void table_free(struct table *t)
{
	for (size_t c = 0; t->rows && c < t->ncols; c++) {
		if (col_kind(t, &t->cols[c]) != K_STR)
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
	hid_t mt = col_kind(t, c) == K_U64 ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;

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
	if (!type_fits(d, col_kind(t, c), 0))
		return fail(p, "%s is not a column of %s", path,
			    col_kind(t, c) == K_STR ? "variable-length strings" : "integers");
	if (col_kind(t, c) != K_STR && storage_fits(p, d, path, (uint64_t)n) != 0)
		return -1;
	if (t->rows) {
		if ((uint64_t)n != t->n)
			return fail(p, "%s has %lld rows, %s/%s has %zu", path, (long long)n,
				    t->path, col_name(t, &t->cols[0]), t->n);
		return 0;
	}
	if (plausible(p, d, path, (uint64_t)n) != 0)
		return -1;
	if ((uint64_t)n >= SIZE_MAX / t->stride || !(t->rows = calloc((size_t)n + 1, t->stride)))
		return fail(p, "out of memory reading %s", path);
	t->n = (size_t)n;
	return 0;
}

/* An optional column the file lacks: its numbers are c->fill, its strings "". */
static int absent_column(struct rd_profile *p, struct table *t, const struct column_spec *c)
{
	for (size_t i = 0; i < t->n; i++) {
		char *row = (char *)t->rows + i * t->stride + c->offset, *s;
		if (col_kind(t, c) != K_STR) {
			memcpy(row, &c->fill, sizeof c->fill);
			continue;
		}
		if (!(s = strdup("")))
			return fail(p, "out of memory reading %s", t->path);
		memcpy(row, &s, sizeof s);
	}
	return 0;
}

/* Reads column c of group g into the rows of t. */
static int read_column(struct rd_profile *p, hid_t g, struct table *t, const struct column_spec *c)
{
	char path[300];
	hid_t d;
	int rc;

	snprintf(path, sizeof path, "%s/%s", t->path, col_name(t, c));
	if (t->fields[c->id].need == SC_OPTIONAL && H5Lexists(g, col_name(t, c), H5P_DEFAULT) <= 0)
		return absent_column(p, t, c);
	d = open_object(p, g, path, col_name(t, c), 0);
	if (d < 0)
		return -1;
	rc = check_column(p, d, path, t, c);
	if (rc == 0)
		rc = col_kind(t, c) == K_STR ? read_strings(p, d, path, t, c)
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

/* An integer attribute as int64 (HDF5 converts any numeric type); 0 when absent or unreadable. */
static int64_t attr_int64(hid_t obj, const char *name)
{
	hid_t a = open_scalar_attr(obj, name);
	int64_t v = 0;

	if (a < 0)
		return 0;
	if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0)
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

	if (H5Aexists(root, root_names[SC_ROOT_SCHEMA]) <= 0)
		return fail(p, "not a scope profile (no schema attribute)");
	a = open_scalar_attr(root, root_names[SC_ROOT_SCHEMA]);
	if (a < 0 || attr_class(a) != H5T_INTEGER || H5Aread(a, H5T_NATIVE_INT64, &schema) < 0) {
		if (a >= 0)
			H5Aclose(a);
		return fail(p, "the schema attribute is not an integer");
	}
	H5Aclose(a);
	if (schema < SC_SCHEMA_OLDEST || schema > SC_SCHEMA)
		return SC_SCHEMA_OLDEST == SC_SCHEMA
			       ? fail(p,
				      "schema %lld is not supported (this scope reads schema %d)",
				      (long long)schema, SC_SCHEMA)
			       : fail(p,
				      "schema %lld is not supported (this scope reads schemas %d "
				      "to "
				      "%d)",
				      (long long)schema, SC_SCHEMA_OLDEST, SC_SCHEMA);
	unit = attr_string(root, root_names[SC_ROOT_TIME_UNIT]);
	if (!unit)
		return fail(p, "out of memory");
	rc = *unit && strcmp(unit, SC_TIME_UNIT) != 0
		     ? fail(p,
			    "time unit '%.32s' is not supported (this scope reads " SC_TIME_UNIT
			    ")",
			    unit)
		     : 0;
	free(unit);
	return rc;
}

/* /metadata, or the root group when there is none: its attributes read as absent. */
static hid_t open_meta(hid_t file)
{
	hid_t m;

	if (H5Lexists(file, SC_METADATA, H5P_DEFAULT) <= 0 ||
	    (m = H5Oopen(file, SC_METADATA, H5P_DEFAULT)) < 0)
		m = H5Gopen2(file, "/", H5P_DEFAULT);
	return m;
}

/* lost_records: 0 when absent (an older writer's file), negative or not a number. */
static uint64_t meta_lost(hid_t m)
{
	double lost = attr_double(m, meta_names[SC_META_LOST_RECORDS]);

	return lost > 0 ? (uint64_t)lost : 0;
}

static int read_meta(struct rd_profile *p)
{
	struct rd_meta *md = &p->meta;
	hid_t m = open_meta(p->h5->file);

	md->wall_seconds = attr_double(m, meta_names[SC_META_WALL_SECONDS]);
	md->cpu_seconds = attr_double(m, meta_names[SC_META_CPU_SECONDS]);
	md->peak_rss_bytes = attr_double(m, meta_names[SC_META_PEAK_RSS_BYTES]);
	md->lost_records = meta_lost(m);
	md->mpi_ranks = attr_int64(m, meta_names[SC_META_MPI_RANKS]);
	md->overhead_ns_per_call = attr_double(m, meta_names[SC_META_OVERHEAD_NS_PER_CALL]);
	if (!(md->overhead_ns_per_call > 0) || md->overhead_ns_per_call > 1e9)
		md->overhead_ns_per_call = 0;
	md->command_line = attr_string(m, meta_names[SC_META_COMMAND_LINE]);
	md->host = attr_string(m, meta_names[SC_META_HOST]);
	md->start_time_utc = attr_string(m, meta_names[SC_META_START_TIME_UTC]);
	md->clock_source = attr_string(m, meta_names[SC_META_CLOCK_SOURCE]);
	H5Oclose(m);
	if (!md->command_line || !md->host || !md->start_time_utc || !md->clock_source)
		return fail(p, "out of memory");
	return 0;
}

/* ---- Whole profile ------------------------------------------------------ */

/* Process i's task lanes, when the file has them (older ones do not). */
static int read_tasks(struct rd_profile *p, size_t i)
{
	char path[64];
	struct table t = {
		path, task_fields, task_columns, NCOLS(task_columns), sizeof(struct rd_task), NULL,
		0};

	snprintf(path, sizeof path, "/" SC_PROCESS_N "/" SC_LANES "/" SC_TASKS, i);
	if (H5Lexists(p->h5->file, path + 1, H5P_DEFAULT) <= 0)
		return 0;
	if (read_table(p, &t) != 0) {
		table_free(&t);
		return -1;
	}
	p->processes[i].tasks = t.rows;
	p->processes[i].ntasks = t.n;
	return 0;
}

static int read_lanes(struct rd_profile *p)
{
	for (size_t i = 0; i < p->nprocesses; i++) {
		char path[64];
		struct table t = {path,
				  thread_fields,
				  lane_columns,
				  NCOLS(lane_columns),
				  sizeof(struct rd_lane),
				  NULL,
				  0};
		snprintf(path, sizeof path, "/" SC_PROCESS_N "/" SC_LANES "/" SC_THREADS, i);
		if (read_table(p, &t) != 0) {
			table_free(&t);
			return -1;
		}
		p->processes[i].lanes = t.rows;
		p->processes[i].nlanes = t.n;
		if (read_tasks(p, i) != 0)
			return -1;
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

	if (H5Lexists(p->h5->file, SC_EVENTS, H5P_DEFAULT) <= 0)
		return 0; /* aggregate only */
	g = open_group(p, SC_EVENTS);
	if (g < 0)
		return -1;
	for (int i = 0; i < SC_NEV && rc == 0; i++) {
		const char *name = EVENT_NAME(i);
		char path[64];
		hid_t o;
		int64_t n;
		snprintf(path, sizeof path, "/" SC_EVENTS "/%s", name);
		if (event_fields[i].need == SC_OPTIONAL && H5Lexists(g, name, H5P_DEFAULT) <= 0)
			continue;
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
				  (long long)n, EVENT_NAME(0), (long long)n0);
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
	for (int i = 0; p->has_events && i < SC_NEV; i++) {
		char path[64];
		size_t bytes, slots;
		hid_t dapl, d;
		if (p->h5->events[i] < 0)
			continue;
		if (cache_size(p->h5->events[i], p->nevents, readers, &bytes, &slots) != 0)
			return fail(p, "/events/%s cannot be read", EVENT_NAME(i));
		if (!bytes)
			continue;
		snprintf(path, sizeof path, "/" SC_EVENTS "/%s", EVENT_NAME(i));
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

/* Whether every spec lists its fields in lib/schema.h's order, as the
 * lookups by id want: a list out of order fails every open at once. */
static int specs_in_order(void)
{
	static const struct {
		const struct column_spec *cols;
		size_t n;
	} specs[] = {{process_columns, SC_NPROC}, {region_columns, SC_NREG},
		     {pair_columns, SC_NPAIR},	  {lane_columns, SC_NTHR},
		     {module_columns, SC_NMOD},	  {sample_columns, SC_NSMP},
		     {task_columns, SC_NTASK},	  {heap_columns, SC_NHEAP},
		     {site_columns, SC_NSITE},	  {aggregate_columns, SC_NAGG}};
	for (size_t s = 0; s < sizeof specs / sizeof *specs; s++)
		for (size_t i = 0; i < specs[s].n; i++)
			if (specs[s].cols[i].id != (int)i)
				return 0;
	return 1;
}

static int load(struct rd_profile *p, const char *path, int brief)
{
	struct table processes = {"/" SC_PROCESSES,
				  process_fields,
				  process_columns,
				  NCOLS(process_columns),
				  sizeof(struct rd_process),
				  NULL,
				  0};
	struct table regions = {"/" SC_REGIONS,
				region_fields,
				region_columns,
				NCOLS(region_columns),
				sizeof(struct rd_region),
				NULL,
				0};
	struct table pairs = {"/" SC_PAIRS,
			      pair_fields,
			      pair_columns,
			      NCOLS(pair_columns),
			      sizeof(struct rd_pair),
			      NULL,
			      0};
	const char *why = rd_not_a_file(path);
	htri_t is;
	int rc;

	if (!specs_in_order())
		return fail(p, "the reader's column lists are not in lib/schema.h's order");
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
		p->has_bytes = rd_has(p, "/" SC_PAIRS "/bytes_sent") &&
			       rd_has(p, "/" SC_PAIRS "/bytes_received");
		/* An older writer's total_ns summed every call. */
		if (rc == 0 && !rd_has(p, "/" SC_PAIRS "/total_all_ns"))
			for (size_t i = 0; i < p->npairs; i++)
				p->pairs[i].total_all_ns = p->pairs[i].total_ns;
	}
	if (rc != 0)
		return -1;
	p->brief = brief;
	if ((!brief && read_lanes(p)) || read_meta(p) || open_events(p) || check_processes(p) ||
	    check_pairs(p))
		return -1;
	return 0;
}

static struct rd_profile *open_profile(const char *path, int brief, char *err, size_t errcap)
{
	struct rd_profile *p = calloc(1, sizeof *p);

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (!p || !(p->h5 = calloc(1, sizeof *p->h5))) {
		snprintf(err, errcap, "out of memory");
		free(p);
		return NULL;
	}
	p->h5->file = -1;
	for (int i = 0; i < SC_NEV; i++)
		p->h5->events[i] = p->h5->spaces[i] = -1;
	if (load(p, path, brief) != 0) {
		snprintf(err, errcap, "%s", p->err[0] ? p->err : "cannot be read");
		rd_close(p);
		return NULL;
	}
	return p;
}

struct rd_profile *rd_open(const char *path, char *err, size_t errcap)
{
	return open_profile(path, 0, err, errcap);
}

struct rd_profile *rd_open_brief(const char *path, char *err, size_t errcap)
{
	return open_profile(path, 1, err, errcap);
}

int rd_lost_records(const char *path, uint64_t *lost, char *err, size_t errcap)
{
	const char *why = rd_not_a_file(path);
	hid_t f = -1, m;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (!why && (f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
		why = "cannot be opened as HDF5";
	if (why) {
		snprintf(err, errcap, "%s", why);
		return -1;
	}
	m = open_meta(f);
	*lost = meta_lost(m);
	H5Oclose(m);
	H5Fclose(f);
	return 0;
}

static void free_rows(const struct field *fields, const struct column_spec *cols, size_t ncols,
		      size_t stride, void *rows, size_t n)
{
	struct table t = {"", fields, cols, ncols, stride, rows, n};
	table_free(&t);
}

void rd_close(struct rd_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; p->processes && i < p->nprocesses; i++) {
		free_rows(thread_fields, lane_columns, NCOLS(lane_columns), sizeof(struct rd_lane),
			  p->processes[i].lanes, p->processes[i].nlanes);
		free_rows(task_fields, task_columns, NCOLS(task_columns), sizeof(struct rd_task),
			  p->processes[i].tasks, p->processes[i].ntasks);
	}
	free_rows(process_fields, process_columns, NCOLS(process_columns),
		  sizeof(struct rd_process), p->processes, p->nprocesses);
	free_rows(region_fields, region_columns, NCOLS(region_columns), sizeof(struct rd_region),
		  p->regions, p->nregions);
	free(p->pairs);
	free(p->meta.command_line);
	free(p->meta.host);
	free(p->meta.start_time_utc);
	free(p->meta.clock_source);
	if (p->h5) {
		for (int i = 0; i < SC_NEV; i++) {
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
	if (p->brief)
		return fail(p, "opened without its lanes (rd_open_brief): its events are not read");
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
		return fail(p, "/events/%s rows [%llu, %llu) cannot be read", EVENT_NAME(i),
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
	progress_add(n);
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
	if (c->buf[SC_EV_START_DELTA]) {
		if (c->start > UINT64_MAX - c->buf[SC_EV_START_DELTA][i])
			return fail(c->p, "/events/%s row %llu: the start passes 2^64 ns",
				    EVENT_NAME(SC_EV_START_DELTA), (unsigned long long)row);
		c->start += c->buf[SC_EV_START_DELTA][i];
		e->start = c->start;
	}
	e->duration = c->buf[SC_EV_DURATION] ? c->buf[SC_EV_DURATION][i] : 0;
	e->thread = c->buf[SC_EV_THREAD] ? c->buf[SC_EV_THREAD][i] : 0;
	e->task = c->buf[SC_EV_TASK] ? c->buf[SC_EV_TASK][i] : 0;
	e->depth = c->buf[SC_EV_DEPTH] ? c->buf[SC_EV_DEPTH][i] : 0;
	e->flags = c->buf[SC_EV_FLAGS] ? (uint8_t)c->buf[SC_EV_FLAGS][i] : 0;
	if (c->buf[SC_EV_THREAD] && e->thread >= c->nlanes)
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

int rd_check_tables(struct rd_profile *p)
{
	for (size_t i = 0; i < p->nprocesses; i++) {
		struct rd_sample *s;
		struct rd_aggregate *agg;
		struct rd_heap h;
		size_t n;
		if (rd_samples(p, i, &s, &n) != 0)
			return -1;
		rd_samples_free(s, n);
		if (rd_aggregates(p, i, &agg, &n) != 0)
			return -1;
		free(agg);
		if (rd_heap(p, i, &h) < 0)
			return -1;
		rd_heap_free(&h);
	}
	return 0;
}

int rd_check(const char *path, char *err, size_t errcap)
{
	struct rd_profile *p = rd_open(path, err, errcap);
	int rc;

	if (!p)
		return -1;
	rc = rd_check_events(p, RD_ALL);
	if (rc == 0)
		rc = rd_check_tables(p);
	if (rc != 0)
		snprintf(err, errcap, "%s", p->err);
	rd_close(p);
	return rc;
}

/* ---- Raw access --------------------------------------------------------- */

const void *rd_process_field(const struct rd_process *r, int id)
{
	return (const char *)r + process_columns[id].offset;
}

const void *rd_pair_field(const struct rd_pair *r, int id)
{
	return (const char *)r + pair_columns[id].offset;
}

int rd_has(const struct rd_profile *p, const char *path)
{
	return H5Lexists(p->h5->file, path, H5P_DEFAULT) > 0;
}

/* Appends the rows of table t to *mods (t's rows are then *mods'). */
static int append_modules(struct rd_profile *p, struct table *t, struct rd_module **mods, size_t *n)
{
	struct rd_module *grown;

	if (t->n >= SIZE_MAX / sizeof *grown - *n - 1 ||
	    !(grown = realloc(*mods, (*n + t->n + 1) * sizeof *grown)))
		return fail(p, "out of memory reading %s", t->path);
	memcpy(grown + *n, t->rows, t->n * sizeof *grown);
	*mods = grown;
	*n += t->n;
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
	return 0;
}

int rd_modules(struct rd_profile *p, struct rd_module **mods, size_t *n)
{
	int rc = 0;

	*mods = NULL;
	*n = 0;
	for (size_t i = 0; i < p->nprocesses && rc == 0; i++) {
		char proc[32], path[64];
		struct table t = {path,
				  module_fields,
				  module_columns,
				  NCOLS(module_columns),
				  sizeof **mods,
				  NULL,
				  0};
		snprintf(proc, sizeof proc, SC_PROCESS_N, i);
		snprintf(path, sizeof path, "/%s/" SC_MODULES, proc);
		if (!rd_has(p, proc) || !rd_has(p, path + 1))
			continue; /* no table: nothing to add */
		rc = read_table(p, &t);
		if (rc == 0)
			rc = append_modules(p, &t, mods, n);
		table_free(&t);
	}
	if (rc != 0) {
		rd_modules_free(*mods, *n);
		*mods = NULL;
		*n = 0;
	}
	return rc;
}

int rd_samples(struct rd_profile *p, size_t process, struct rd_sample **out, size_t *n)
{
	char path[64];
	struct table t = {
		path, sample_fields, sample_columns, NCOLS(sample_columns), sizeof **out, NULL, 0};
	int rc;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof path, "/" SC_PROCESS_N "/" SC_SAMPLES, process);
	if (!rd_has(p, path + 1))
		return 0;
	rc = read_table(p, &t);
	for (size_t i = 0; rc == 0 && i < t.n; i++)
		((struct rd_sample *)t.rows)[i].process = process;
	if (rc == 0) {
		*out = t.rows;
		*n = t.n;
		t.rows = NULL;
		t.n = 0;
	}
	table_free(&t);
	return rc;
}

void rd_samples_free(struct rd_sample *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i].stack);
	free(s);
}

int rd_aggregates(struct rd_profile *p, size_t process, struct rd_aggregate **out, size_t *n)
{
	char path[64];
	struct table t = {path,
			  aggregate_fields,
			  aggregate_columns,
			  NCOLS(aggregate_columns),
			  sizeof **out,
			  NULL,
			  0};
	int rc;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof path, "/" SC_PROCESS_N "/" SC_AGGREGATES, process);
	if (!rd_has(p, path + 1))
		return 0;
	rc = read_table(p, &t);
	if (rc == 0) {
		*out = t.rows;
		*n = t.n;
		t.rows = NULL;
		t.n = 0;
	}
	table_free(&t);
	return rc;
}

/* A required integer attribute of the group at path: present, one value, an integer. */
static int heap_attr(struct rd_profile *p, hid_t g, const char *path, int id, int64_t *v)
{
	const char *name = heap_attr_names[id];
	hid_t a = open_scalar_attr(g, name);
	int ok = a >= 0 && attr_class(a) == H5T_INTEGER && H5Aread(a, H5T_NATIVE_INT64, v) >= 0;

	if (a >= 0)
		H5Aclose(a);
	return ok ? 0
		  : fail(p, "%s attribute %s is %s", path, name,
			 H5Aexists(g, name) > 0 ? "not one integer" : "missing");
}

/* Moves the rows of table t to *rows, *n. */
static void take_rows(struct table *t, void *rows, size_t *n)
{
	memcpy(rows, &t->rows, sizeof t->rows);
	*n = t->n;
	t->rows = NULL;
	t->n = 0;
}

int rd_heap(struct rd_profile *p, size_t process, struct rd_heap *h)
{
	char path[64], sites[64];
	struct table rows = {
		path, heap_fields, heap_columns, NCOLS(heap_columns), sizeof *h->rows, NULL, 0};
	struct table st = {
		sites, site_fields, site_columns, NCOLS(site_columns), sizeof *h->sites, NULL, 0};
	hid_t g;
	int rc = 0;

	memset(h, 0, sizeof *h);
	if (process >= p->nprocesses)
		return fail(p, "process %zu is out of range (%zu processes)", process,
			    p->nprocesses);
	snprintf(path, sizeof path, "/" SC_PROCESS_N "/" SC_HEAP, process);
	snprintf(sites, sizeof sites, "/" SC_PROCESS_N "/" SC_HEAP_SITES, process);
	if (!rd_has(p, path + 1) && !rd_has(p, sites + 1))
		return 0;
	if ((g = open_group(p, path + 1)) < 0)
		return -1;
	for (int id = 0; id < SC_NHEAPA && rc == 0; id++)
		rc = heap_attr(p, g, path, id, &h->attrs[id]);
	H5Oclose(g);
	if (rc == 0)
		rc = read_table(p, &rows);
	if (rc == 0)
		rc = read_table(p, &st);
	if (rc == 0) {
		take_rows(&rows, &h->rows, &h->nrows);
		take_rows(&st, &h->sites, &h->nsites);
	}
	table_free(&rows);
	table_free(&st);
	return rc == 0 ? 1 : -1;
}

void rd_heap_free(struct rd_heap *h)
{
	free_rows(heap_fields, heap_columns, NCOLS(heap_columns), sizeof *h->rows, h->rows,
		  h->nrows);
	free_rows(site_fields, site_columns, NCOLS(site_columns), sizeof *h->sites, h->sites,
		  h->nsites);
	memset(h, 0, sizeof *h);
}

void rd_modules_free(struct rd_module *mods, size_t n)
{
	for (size_t i = 0; mods && i < n; i++) {
		free(mods[i].path);
		free(mods[i].build_id);
	}
	free(mods);
}

int rd_event_width(const struct rd_profile *p, int col)
{
	return p->has_events && col >= 0 && col < SC_NEV ? (int)p->h5->width[col] : 0;
}

int rd_event_rows(struct rd_profile *p, int col, uint64_t off, uint64_t n, int width, void *to)
{
	struct rd_h5 *h = p->h5;
	hsize_t start = off, len = n;
	hid_t mem, type = width == 1   ? H5T_NATIVE_UINT8
			  : width == 2 ? H5T_NATIVE_UINT16
			  : width == 4 ? H5T_NATIVE_UINT32
				       : H5T_NATIVE_UINT64;
	int rc = 0;

	if (!rd_event_width(p, col))
		return fail(p, "/events/%s is missing",
			    col >= 0 && col < SC_NEV ? EVENT_NAME(col) : "?");
	if (n == 0)
		return 0;
	mem = H5Screate_simple(1, &len, NULL);
	if (mem < 0 ||
	    H5Sselect_hyperslab(h->spaces[col], H5S_SELECT_SET, &start, NULL, &len, NULL) < 0 ||
	    H5Dread(h->events[col], type, mem, h->spaces[col], H5P_DEFAULT, to) < 0)
		rc = fail(p, "/events/%s rows [%llu, %llu) cannot be read", EVENT_NAME(col),
			  (unsigned long long)off, (unsigned long long)(off + n));
	if (mem >= 0)
		H5Sclose(mem);
	if (rc == 0)
		progress_add(n);
	return rc;
}

_Static_assert(sizeof(hid_t) == sizeof(int64_t), "rd_copy takes a hid_t as int64_t");

int rd_copy(struct rd_profile *p, const char *name, int64_t to, const char *as,
	    struct linked_copies *seen)
{
	if (seen)
		return h5_copy_linked(p->h5->file, name, (hid_t)to, as, seen);
	return H5Ocopy(p->h5->file, name, (hid_t)to, as, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0;
}
